//! The operations CH4 handed to its UCX netmod, which no MPIDIG list or
//! send queue holds: found in the request pools (through `mpihandles`),
//! and read from UCX's own requests (`mpihandles::ucx_receive`,
//! `ucx_send`) when UCX's types are in the layouts. This is where reading
//! UCX's queues meets MPICH's; UCX's request reader itself stays in
//! `mpihandles`.

use std::collections::{HashMap, HashSet};

use mpidd_read::Limits;
use mpidd_types::TargetAddr;
use mpihandles::{HandleKind, Layouts};

use super::{int, uint, MpichCh4};
use crate::decoder::DecodeError;
use crate::model::{OperationStatus, PendingOperation};
use crate::mpich::common::CommInfo;
use crate::target_read::Record;
use mpidd_read::Target;
use mpidd_read::TargetMemory;

/// Each world rank by its UCX endpoint's address, read once per reading
/// when a send needs it, or why it could not be.
type Endpoints = std::cell::OnceCell<Result<HashMap<u64, i64>, String>>;

/// What the request pools add to the MPIDIG lists and the send queue.
#[derive(Default)]
pub(super) struct PoolFindings {
    /// Receives that went to the netmod, by communicator index.
    pub(super) receives: Vec<Vec<PendingOperation>>,
    /// Sends that went to the netmod and no send queue holds, by
    /// communicator index.
    pub(super) sends: Vec<Vec<PendingOperation>>,
    /// Operations whose communicator is unknown, described.
    pub(super) unplaced: Vec<String>,
    /// Whether every pending send of the pools was read with its
    /// communicator and tag: the pools were read, and UCX's types describe
    /// its send requests.
    pub(super) sends_readable: bool,
    /// Why the pools could not be read, if they could not.
    pub(super) error: Option<String>,
}

impl MpichCh4 {
    /// Receives that no MPIDIG list holds and sends that no send queue
    /// holds, from the request pools: those the netmod took.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn netmod_operations(
        &self,
        target: &dyn Target,
        mem: &dyn TargetMemory,
        types: &dyn Layouts,
        comms: &[CommInfo],
        limits: &Limits,
        seen: &HashSet<u64>,
    ) -> PoolFindings {
        let mut found = PoolFindings {
            receives: vec![Vec::new(); comms.len()],
            sends: vec![Vec::new(); comms.len()],
            unplaced: Vec::new(),
            sends_readable: false,
            error: None,
        };
        let objects = match mpihandles::live_mpich_objects(
            mem,
            target.symbols(),
            types,
            *limits,
            HandleKind::Request,
        ) {
            Ok(objects) => objects,
            Err(e) => {
                found.error = Some(format!(
                    "the request pools could not be read, so receives handed to the netmod are \
                     missing: {e}"
                ));
                return found;
            }
        };
        let ucx = match mpihandles::ucx_layouts_missing(types) {
            None => Ok(()),
            Some(e) => Err(e),
        };
        found.sends_readable = ucx.is_ok();
        // Read only when a send needs it; its failure is said there.
        let endpoints = Endpoints::default();
        let order = mem.abi().byte_order;
        let mut any = false;
        for object in objects {
            let r = Record {
                base: object.addr,
                start: 0,
                bytes: &object.bytes,
                order,
                what: "MPIR_Request",
            };
            match self.netmod_receive(mem, types, &r, comms, seen) {
                Ok(Some((Some(ci), op))) => {
                    any = true;
                    found.receives[ci].push(op)
                }
                Ok(Some((None, op))) => {
                    any = true;
                    found.unplaced.push(format!(
                    "a pending receive posted to UCX (MPIR_Request at {}) whose communicator is \
                     unknown: {}",
                    r.base,
                    op.extra_text.join("; ")
                ))
                }
                Ok(None) => {
                    match self.netmod_send(&r, comms, seen, &endpoints, (mem, types, limits)) {
                        Ok(Some((Some(ci), op))) => {
                            any = true;
                            found.sends[ci].push(op)
                        }
                        Ok(Some((None, op))) => {
                            any = true;
                            found.unplaced.push(format!(
                                "a pending send handed to UCX (MPIR_Request at {}) whose \
                             communicator is unknown: {}",
                                r.base,
                                op.extra_text.join("; ")
                            ))
                        }
                        Ok(None) => {}
                        Err(e) => {
                            found.error.get_or_insert_with(|| {
                                format!(
                                    "a request of the pools at {} could not be read: {e}",
                                    r.base
                                )
                            });
                        }
                    }
                }
                Err(e) => {
                    found.error.get_or_insert_with(|| {
                        format!(
                            "a request of the pools at {} could not be read: {e}",
                            r.base
                        )
                    });
                }
            }
        }
        if let (true, Err(e)) = (any, &ucx) {
            found.unplaced.push(format!("UCX's types: {e}"));
        }
        found
    }

    /// A request of the pools of kind `kind` that no list holds, that the
    /// netmod took and that has not completed: its status, the index of
    /// its communicator when the request names one, and MPICH's pointer to
    /// UCX's request. `None` for any other request.
    #[allow(clippy::type_complexity)]
    fn netmod_request(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        kind: i128,
        comms: &[CommInfo],
        seen: &HashSet<u64>,
    ) -> Result<Option<(OperationStatus, Option<usize>, TargetAddr)>, DecodeError> {
        let l = &self.layout;
        if seen.contains(&r.base.0) || i128::from(int(r, l.req_kind)?) != kind {
            return Ok(None);
        }
        // Requests of the shared-memory path are MPIDIG's: a matched one
        // is no longer pending for a debugger.
        if let Some(local) = l.req_is_local {
            if int(r, local)? != 0 {
                return Ok(None);
            }
        }
        // The netmod half of an MPI_ANY_SOURCE receive, whose shared-memory
        // half is the one the application holds (and is listed).
        let partner = match l.req_partner {
            Some(p) => uint(r, p)?,
            None => 0,
        };
        if partner != 0 && seen.contains(&partner) {
            return Ok(None);
        }
        let status = self.status(mem, r)?;
        if status == OperationStatus::Complete {
            return Ok(None);
        }
        let Some(ucp_member) = l.ucx_request else {
            return Ok(None);
        };
        let comm_addr = uint(r, l.req_comm)?;
        let ci = comms
            .iter()
            .position(|c| c.addr.0 == comm_addr && comm_addr != 0);
        Ok(Some((status, ci, TargetAddr(uint(r, ucp_member)?))))
    }

    /// A receive of the pools that no MPIDIG list holds and that has not
    /// completed, with the index of its communicator when known: MPICH
    /// 4.0.2's UCX netmod leaves `MPIR_Request.comm` NULL
    /// (`MPIR_Request_create_from_pool` in `MPIDI_UCX_recv`), so the
    /// communicator comes from the context id of UCX's tag.
    #[allow(clippy::type_complexity)]
    fn netmod_receive(
        &self,
        mem: &dyn TargetMemory,
        types: &dyn Layouts,
        r: &Record<'_>,
        comms: &[CommInfo],
        seen: &HashSet<u64>,
    ) -> Result<Option<(Option<usize>, PendingOperation)>, DecodeError> {
        let Some((status, mut ci, ucp)) =
            self.netmod_request(mem, r, self.layout.kind_recv, comms, seen)?
        else {
            return Ok(None);
        };
        let mut op = PendingOperation::unknown(status);
        if ucp.0 == 0 {
            op.extra_text
                .push("posted to UCX; its UCX request pointer is NULL".to_string());
            return Ok(Some((ci, op)));
        }
        let u = match mpihandles::ucx_receive(mem, types, ucp) {
            Ok(u) => u,
            Err(mpihandles::UcxError::Layouts(_)) => {
                op.extra_text.push(format!(
                    "posted to UCX: communicator, source, tag and buffer are in UCX's request at \
                     {ucp}, unreadable without UCX's types (ucp_request_t)"
                ));
                return Ok(Some((ci, op)));
            }
            Err(mpihandles::UcxError::Read(e)) => return Err(e.into()),
            Err(mpihandles::UcxError::Corrupt {
                record,
                addr,
                reason,
            }) => {
                return Err(DecodeError::Corrupt {
                    what: record,
                    addr,
                    reason,
                })
            }
        };
        op.buffer = u.buffer;
        op.desired_length = u.length as i64;
        if ci.is_none() {
            ci = comms.iter().position(|c| c.recvcontext_id == u.context_id);
        }
        let Some(index) = ci else {
            op.extra_text.push(format!(
                "posted to UCX with context id {}, which is no communicator's",
                u.context_id
            ));
            return Ok(Some((None, op)));
        };
        if let Some(rank) = u.rank {
            op.desired_local_rank = rank;
            op.desired_global_rank = comms[index].world_of(rank);
        }
        match u.tag {
            Some(tag) => op.desired_tag = tag,
            None => op.tag_wild = true,
        }
        op.extra_text.push("posted to UCX".to_string());
        Ok(Some((ci, op)))
    }

    /// A send of the pools that no send queue holds and that has not
    /// completed, with the index of its communicator when known. UCX's tag
    /// gives the communicator (the context id the send uses) and the tag;
    /// the destination is the rank whose endpoint the send uses, in CH4's
    /// address vector.
    #[allow(clippy::type_complexity)]
    fn netmod_send(
        &self,
        r: &Record<'_>,
        comms: &[CommInfo],
        seen: &HashSet<u64>,
        endpoints: &Endpoints,
        (mem, types, limits): (&dyn TargetMemory, &dyn Layouts, &Limits),
    ) -> Result<Option<(Option<usize>, PendingOperation)>, DecodeError> {
        let Some(kind_send) = self.layout.kind_send else {
            return Ok(None);
        };
        let Some((status, mut ci, ucp)) = self.netmod_request(mem, r, kind_send, comms, seen)?
        else {
            return Ok(None);
        };
        let mut op = PendingOperation::unknown(status);
        if ucp.0 == 0 {
            op.extra_text
                .push("sent through UCX; its UCX request pointer is NULL".to_string());
            return Ok(Some((ci, op)));
        }
        let u = match mpihandles::ucx_send(mem, types, ucp) {
            Ok(u) => u,
            Err(mpihandles::UcxError::Layouts(_)) => {
                op.extra_text.push(format!(
                    "sent through UCX: communicator, tag, buffer and length are in UCX's \
                     request at {ucp}, unreadable without UCX's types (ucp_request_t)"
                ));
                return Ok(Some((ci, op)));
            }
            Err(mpihandles::UcxError::Read(e)) => return Err(e.into()),
            Err(mpihandles::UcxError::Corrupt {
                record,
                addr,
                reason,
            }) => {
                return Err(DecodeError::Corrupt {
                    what: record,
                    addr,
                    reason,
                })
            }
        };
        op.buffer = u.buffer;
        op.desired_length = u.length as i64;
        op.actual_length = op.desired_length;
        op.desired_tag = u.tag.unwrap_or(-1);
        op.actual_tag = op.desired_tag;
        if ci.is_none() {
            ci = comms.iter().position(|c| c.context_id == u.context_id);
        }
        let Some(index) = ci else {
            op.extra_text.push(format!(
                "sent through UCX with context id {}, which is no communicator's",
                u.context_id
            ));
            return Ok(Some((None, op)));
        };
        let ep = u.endpoint.unwrap_or(0);
        let endpoints = endpoints.get_or_init(|| {
            mpihandles::ucx_world_ranks_by_endpoint(mem, types, *limits, self.globals.mpidi_global)
                .map_err(|e| e.to_string())
        });
        match endpoints {
            Ok(by_ep) => match by_ep.get(&ep) {
                Some(&world) => {
                    let local = comms[index]
                        .world
                        .as_ref()
                        .and_then(|w| w.iter().position(|&r| r == world))
                        .map_or(-1, |i| i as i64);
                    op.desired_global_rank = world;
                    op.desired_local_rank = local;
                    op.actual_global_rank = world;
                    op.actual_local_rank = local;
                    op.extra_text.push("sent through UCX".to_string());
                }
                None => op.extra_text.push(format!(
                    "sent through UCX to endpoint {ep:#x}, which is no world rank's"
                )),
            },
            Err(e) => op.extra_text.push(format!(
                "sent through UCX; its destination is the endpoint {ep:#x}, whose rank is \
                 unknown: {e}"
            )),
        }
        Ok(Some((ci, op)))
    }
}
