//! The MPIDIG lists of every VCI: the posted receives and unexpected
//! messages of CH4's active-message path (a shared-memory module, or a
//! netmod's active messages), matched in `dev.ch4.am.u.recv`.

use std::collections::HashSet;

use mpidd_read::Limits;
use mpidd_types::TargetAddr;

use super::{int, uint, MpichCh4};
use crate::decoder::DecodeError;
use crate::list_walk::{at, walk, ListShape, Span};
use crate::model::{PendingOperation, Protocol};
use crate::mpich::common::{posted_receive, CommFinder, CommInfo, TypeSizes};
use crate::target_read::{read_int, read_pointer, Record};
use mpidd_read::TargetMemory;

/// `MPIDIG_REQ_PEER_SSEND` (`ch4/include/mpidpre.h`): the sender of an
/// unexpected message waits for its match (`MPI_Ssend`, `MPI_Issend`).
const MPIDIG_REQ_PEER_SSEND: u64 = 1 << 1;
/// `MPIDIG_REQ_RTS`: only a request to send came; the data waits at the
/// sender.
const MPIDIG_REQ_RTS: u64 = 1 << 7;

impl MpichCh4 {
    /// The posted and unexpected lists of every VCI, appended to `posted`
    /// and `unexpected` by communicator; every request met is added to
    /// `seen`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mpidig_lists(
        &self,
        mem: &dyn TargetMemory,
        comms: &[CommInfo],
        limits: &Limits,
        types: &mut TypeSizes,
        seen: &mut HashSet<u64>,
        posted: &mut [Vec<PendingOperation>],
        unexpected: &mut [Vec<PendingOperation>],
    ) -> Result<(), DecodeError> {
        let l = &self.layout;
        let g = self.globals.mpidi_global;
        let n_vcis = read_int(mem, at(g, l.n_vcis.offset), 4, "MPIDI_global.n_vcis")?;
        // `per_vci` is an array of MPIDI_CH4_MAX_VCIS entries; `n_vcis`
        // of them are in use.
        let max = l
            .per_vci
            .array_len
            .unwrap_or(l.per_vci.size / l.per_vci_size.max(1));
        let n = u64::try_from(n_vcis).unwrap_or(0).min(max);
        for vci in 0..n {
            let base = at(g, l.per_vci.offset + vci * l.per_vci_size);
            for (unexp, list, out) in [
                (false, l.vci_posted, &mut *posted),
                (true, l.vci_unexp, &mut *unexpected),
            ] {
                let first = read_pointer(mem, at(base, list.offset), "MPIDI_per_vci_t list head")?;
                let mut finder = CommFinder::default();
                walk(
                    mem,
                    first,
                    ListShape {
                        next_offset: l.req_next.offset,
                        span: Span {
                            start: 0,
                            end: l.req_size,
                        },
                        what: if unexp {
                            "MPIDIG unexpected list (MPIR_Request)"
                        } else {
                            "MPIDIG posted list (MPIR_Request)"
                        },
                        end: TargetAddr(0),
                    },
                    limits,
                    |r| {
                        seen.insert(r.base.0);
                        let context = uint(r, l.am_context)? as i64;
                        let Some(ci) = finder.find(comms, context, |c| c.recvcontext_id) else {
                            return Ok(());
                        };
                        let op = self.mpidig_operation(mem, r, &comms[ci], unexp, types)?;
                        out[ci].push(op);
                        Ok(())
                    },
                )?;
            }
        }
        Ok(())
    }

    fn mpidig_operation(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        comm: &CommInfo,
        unexpected: bool,
        types: &mut TypeSizes,
    ) -> Result<PendingOperation, DecodeError> {
        let l = &self.layout;
        let status = self.status(mem, r)?;
        let rank = int(r, l.am_source)?;
        let tag = int(r, l.am_tag)?;
        let buffer = uint(r, l.am_buffer)?;
        let count = int(r, l.am_count)?;
        if unexpected {
            // An unexpected message is received as bytes: `count` is its
            // size and `datatype` MPI_BYTE (`create_unexp_rreq`).
            let ext = TargetAddr(uint(r, l.am_req)?);
            let flags = if ext.0 == 0 {
                None
            } else {
                Some(read_int(
                    mem,
                    at(ext, l.ext_status.offset),
                    l.ext_status.size.clamp(1, 8) as usize,
                    "MPIDIG_req_ext_t.status",
                )? as u64)
            };
            return Ok(PendingOperation {
                system_buffer: buffer != 0,
                buffer,
                protocol: flags.map(|f| {
                    if f & MPIDIG_REQ_RTS != 0 {
                        Protocol::Rendezvous
                    } else {
                        Protocol::Eager
                    }
                }),
                synchronous: flags.map(|f| f & MPIDIG_REQ_PEER_SSEND != 0),
                ..PendingOperation::message(status, (rank, comm.world_of(rank)), tag, count)
            });
        }
        let datatype = int(r, l.am_datatype)?;
        let (length, extra) = types.length(
            mem,
            count,
            datatype,
            l.datatype_size,
            self.globals.datatype_direct,
        );
        Ok(PendingOperation {
            buffer,
            extra_text: extra.into_iter().collect(),
            desired_count: Some(count),
            ..posted_receive(status, comm, (rank, tag), length, self.constants)
        })
    }
}
