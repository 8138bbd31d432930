//! MPIDIG's lists, every VCI's (4.0 on) or every communicator's (3.4):
//! the posted receives and unexpected messages of CH4's active-message
//! path (a shared-memory module, or a netmod's active messages), matched
//! in `dev.ch4.am.u.recv` (4.0), the request's status (4.1 on) or
//! `dev.ch4.am` itself (3.4).

use std::collections::HashSet;

use mpidd_read::Limits;
use mpidd_types::TargetAddr;
use mpihandles::Member;

use super::layout::MpidigQueues;
use super::{int, uint, MpichCh4};
use crate::decoder::DecodeError;
use crate::list_walk::{at, walk, ListShape, Span};
use crate::model::{PendingOperation, Protocol};
use crate::mpich::common::{posted_receive, CommFinder, CommInfo, TypeSizes};
use crate::target_read::{read_bytes, read_int, read_pointer, Record};
use mpidd_read::TargetMemory;

/// `MPIDIG_REQ_PEER_SSEND` (`ch4/include/mpidpre.h`): the sender of an
/// unexpected message waits for its match (`MPI_Ssend`, `MPI_Issend`).
const MPIDIG_REQ_PEER_SSEND: u64 = 1 << 1;
/// `MPIDIG_REQ_RTS`: only a request to send came; the data waits at the
/// sender.
const MPIDIG_REQ_RTS: u64 = 1 << 7;

/// Where the requests of the lists go.
struct Placed<'a> {
    comms: &'a [CommInfo],
    types: &'a mut TypeSizes,
    seen: &'a mut HashSet<u64>,
    posted: &'a mut [Vec<PendingOperation>],
    unexpected: &'a mut [Vec<PendingOperation>],
}

impl MpichCh4 {
    /// MPIDIG's posted and unexpected lists (every VCI's from 4.0, every
    /// communicator's in 3.4), appended to `posted` and `unexpected` by
    /// communicator; every request met is added to `seen`.
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
        let mut out = Placed {
            comms,
            types,
            seen,
            posted,
            unexpected,
        };
        match l.queues {
            MpidigQueues::PerVci {
                req_next,
                n_vcis,
                per_vci,
                per_vci_size,
                posted,
                unexp,
            } => {
                let g = self.globals.mpidi_global;
                let n_vcis = read_int(mem, at(g, n_vcis.offset), 4, "MPIDI_global.n_vcis")?;
                // `per_vci` is an array of MPIDI_CH4_MAX_VCIS entries;
                // `n_vcis` of them are in use.
                let max = per_vci
                    .array_len
                    .unwrap_or(per_vci.size / per_vci_size.max(1));
                let n = u64::try_from(n_vcis).unwrap_or(0).min(max);
                for vci in 0..n {
                    let base = at(g, per_vci.offset + vci * per_vci_size);
                    for (unexp, list) in [(false, posted), (true, unexp)] {
                        let first =
                            read_pointer(mem, at(base, list.offset), "MPIDI_per_vci_t list head")?;
                        self.request_list(mem, (first, req_next), unexp, limits, &mut out)?;
                    }
                }
            }
            MpidigQueues::PerComm {
                posted,
                unexp,
                rreq_size,
                rreq_next,
                rreq_request,
            } => {
                // A message is queued on the communicator its context id
                // leads to (`MPIDIG_context_id_to_comm`), which is among
                // those read; the context id of each request places it.
                for comm in comms {
                    for (unexp, list) in [(false, posted), (true, unexp)] {
                        let first = read_pointer(
                            mem,
                            at(comm.addr, list.offset),
                            "MPIR_Comm.dev.ch4.am list head",
                        )?;
                        let mut requests = Vec::new();
                        walk(
                            mem,
                            first,
                            ListShape {
                                next_offset: rreq_next.offset,
                                span: Span {
                                    start: 0,
                                    end: rreq_size,
                                },
                                what: if unexp {
                                    "MPIDIG unexpected list (MPIDIG_rreq_t)"
                                } else {
                                    "MPIDIG posted list (MPIDIG_rreq_t)"
                                },
                                end: TargetAddr(0),
                            },
                            limits,
                            |r| {
                                requests.push(TargetAddr(uint(r, rreq_request)?));
                                Ok(())
                            },
                        )?;
                        for request in requests {
                            let what = if unexp {
                                "MPIDIG_rreq_t.request (unexpected)"
                            } else {
                                "MPIDIG_rreq_t.request (posted)"
                            };
                            let bytes = read_bytes(mem, request, l.req_size, what, limits)?;
                            let r = Record {
                                base: request,
                                start: 0,
                                bytes: &bytes,
                                order: mem.abi().byte_order,
                                what,
                            };
                            self.place(mem, &r, unexp, &mut CommFinder::default(), &mut out)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// One list of `MPIR_Request`s chained through `next` (4.0 on).
    fn request_list(
        &self,
        mem: &dyn TargetMemory,
        (first, next): (TargetAddr, Member),
        unexp: bool,
        limits: &Limits,
        out: &mut Placed<'_>,
    ) -> Result<(), DecodeError> {
        let l = &self.layout;
        let mut finder = CommFinder::default();
        walk(
            mem,
            first,
            ListShape {
                next_offset: next.offset,
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
            |r| self.place(mem, r, unexp, &mut finder, out),
        )
    }

    /// A request of an MPIDIG list, put in its communicator's list by its
    /// context id.
    fn place(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        unexp: bool,
        finder: &mut CommFinder,
        out: &mut Placed<'_>,
    ) -> Result<(), DecodeError> {
        out.seen.insert(r.base.0);
        let context = uint(r, self.layout.am_context)? as i64;
        let Some(ci) = finder.find(out.comms, context, |c| c.recvcontext_id) else {
            return Ok(());
        };
        let op = self.mpidig_operation(mem, r, &out.comms[ci], unexp, out.types)?;
        if unexp {
            out.unexpected[ci].push(op);
        } else {
            out.posted[ci].push(op);
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
