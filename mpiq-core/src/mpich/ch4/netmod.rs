//! The pending operations of the request pools that no MPIDIG list or
//! send queue holds (through `mpihandles`): those CH4 handed to its UCX
//! netmod, read from UCX's own requests (`mpihandles::ucx_receive`,
//! `ucx_send`) when UCX's types are in the layouts; those handed to its
//! OFI netmod, said with what MPICH keeps of them (`ofi_requests`); those
//! of CH4's self path, read from MPICH's own fields (`self_messages`); and
//! any other, listed by address only. This is where reading
//! UCX's queues meets MPICH's; UCX's request reader itself stays in
//! `mpihandles`.

use std::collections::{BTreeMap, HashMap, HashSet};

use mpidd_read::Limits;
use mpidd_types::TargetAddr;
use mpihandles::{HandleKind, Layouts};

use super::self_messages::Ch4Path;
use super::shm_sends_34::ShmSend34;
use super::{int, uint, MpichCh4};
use crate::decoder::DecodeError;
use crate::model::{OperationStatus, PendingOperation};
use crate::mpich::common::{CommInfo, TypeSizes};
use crate::read_ahead::ReadAhead;
use crate::target_read::Record;
use mpidd_read::Target;
use mpidd_read::TargetMemory;

/// Each world rank by its UCX endpoint's address, read once per reading
/// when a send needs it, or why it could not be.
type Endpoints = std::cell::OnceCell<Result<HashMap<u64, i64>, String>>;

/// What one reading knows of the netmod the rank runs, found once.
struct NetmodReading {
    /// Whether it is UCX, whose requests can be read; under another
    /// (OFI) they are only described.
    ucx_runs: bool,
    /// UCX's request layout, when UCX runs and the layouts describe it.
    ucx: Option<mpihandles::UcxRequestReader>,
    endpoints: Endpoints,
}

/// What the request pools add to the MPIDIG lists and the send queue.
#[derive(Default)]
pub(super) struct PoolFindings {
    /// Receives that went to the netmod, by communicator index.
    pub(super) receives: Vec<Vec<PendingOperation>>,
    /// Sends that went to the netmod or CH4's self path and no send queue
    /// holds, by communicator index.
    pub(super) sends: Vec<Vec<PendingOperation>>,
    /// Messages this process sent itself that wait for its own receive
    /// (CH4's self path), by communicator index.
    pub(super) unexpected: Vec<Vec<PendingOperation>>,
    /// Operations whose communicator is unknown, described.
    pub(super) unplaced: Vec<String>,
    /// Whether every pending send of the pools was read with its
    /// communicator and tag: the pools were read, and UCX's types describe
    /// its send requests.
    pub(super) sends_readable: bool,
    /// Why the pools could not be read, if they could not.
    pub(super) error: Option<String>,
    /// UCX's requests behind the netmod's, as read in one batch (by
    /// start address): the UCX worker's expected queues link the same
    /// requests, which are then not read again.
    pub(super) ucx_requests: BTreeMap<u64, Vec<u8>>,
}

impl MpichCh4 {
    /// Receives that no MPIDIG list holds and sends that no send queue
    /// holds, from the request pools: those the netmod took. `ucx_runs`
    /// says whether the rank's netmod is UCX, whose requests can be read;
    /// under another (OFI) they are only described.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn netmod_operations(
        &self,
        ucx_runs: bool,
        target: &dyn Target,
        mem: &dyn TargetMemory,
        types: &dyn Layouts,
        comms: &[CommInfo],
        limits: &Limits,
        seen: &HashSet<u64>,
        sizes: &mut TypeSizes,
    ) -> PoolFindings {
        let mut found = PoolFindings {
            receives: vec![Vec::new(); comms.len()],
            sends: vec![Vec::new(); comms.len()],
            unexpected: vec![Vec::new(); comms.len()],
            unplaced: Vec::new(),
            sends_readable: false,
            error: None,
            ucx_requests: BTreeMap::new(),
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
        // Under OFI every pending send is either MPICH's own (listed) or
        // the netmod's (a note each).
        found.sends_readable = !ucx_runs || ucx.is_ok();
        let net = NetmodReading {
            ucx_runs,
            ucx: if ucx_runs {
                mpihandles::UcxRequestReader::new(types).ok()
            } else {
                None
            },
            // Read only when a send needs it; its failure is said there.
            endpoints: Endpoints::default(),
        };
        let order = mem.abi().byte_order;
        // UCX's requests behind the netmod's, read in one batch: each is
        // then decoded from there as it would be from the target.
        let ranges = if ucx_runs {
            self.netmod_ucx_requests(&objects, seen, types, order)
        } else {
            Vec::new()
        };
        let ahead = ReadAhead::new(mem, &ranges, limits.max_record_bytes);
        let mem: &dyn TargetMemory = &ahead;
        let mut any = false;
        for object in objects {
            let r = Record {
                base: object.addr,
                start: 0,
                bytes: &object.bytes,
                order,
                what: "MPIR_Request",
            };
            let read = self.pool_request(
                &r,
                comms,
                seen,
                &mut found,
                &net,
                (mem, types, limits, &mut *sizes),
            );
            match read {
                Ok(netmod) => any |= netmod,
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
        found.ucx_requests = ahead.into_held();
        found
    }

    /// One request of the pools, put where it belongs: a pending receive or
    /// send of CH4's self path from its own fields, one the netmod took
    /// from UCX's request, one of neither by address. Whether it was the
    /// netmod's.
    #[allow(clippy::type_complexity)]
    fn pool_request(
        &self,
        r: &Record<'_>,
        comms: &[CommInfo],
        seen: &HashSet<u64>,
        found: &mut PoolFindings,
        net: &NetmodReading,
        (mem, types, limits, sizes): (&dyn TargetMemory, &dyn Layouts, &Limits, &mut TypeSizes),
    ) -> Result<bool, DecodeError> {
        let l = &self.layout;
        let kind = i128::from(int(r, l.req_kind)?);
        let receive = kind == l.kind_recv;
        if !receive && Some(kind) != l.kind_send {
            return Ok(false);
        }
        let status = self.status(mem, r)?;
        if status == OperationStatus::Complete {
            return Ok(false);
        }
        let what = if receive { "receive" } else { "send" };
        match self.request_path(mem, r)? {
            Ch4Path::SelfQueue(comm) => {
                let m = self.self_message(mem, r, comm, comms, sizes)?;
                let Some(ci) = m.comm else {
                    found.unplaced.push(format!(
                        "a pending {what} on CH4's self path (MPIR_Request at {}) whose \
                         communicator (MPIR_Comm at {comm}, context id {}) is not among those \
                         read",
                        r.base, m.context
                    ));
                    return Ok(false);
                };
                if receive {
                    if !seen.contains(&r.base.0) {
                        found.receives[ci].push(m.receive(status, &comms[ci], self.constants));
                    }
                } else {
                    // A send the send queue holds is listed from there; the
                    // message waits for this process all the same.
                    if !seen.contains(&r.base.0) {
                        found.sends[ci].push(m.send(status, &comms[ci]));
                    }
                    found.unexpected[ci].push(m.unexpected(status, &comms[ci], r.base));
                }
                Ok(false)
            }
            Ch4Path::Unknown(comm) => {
                // Before 4.1 a request's communicator does not tell the
                // paths apart: MPIDIG's shared-memory sends and OFI's
                // requests both keep it.
                if self.shm_or_ofi(r, comms, seen, found, net, (status, receive), (mem, sizes))? {
                    return Ok(false);
                }
                let name = comms.iter().find(|c| c.addr == comm).map_or_else(
                    || format!("MPIR_Comm at {comm}"),
                    |c| format!("`{}`", c.name),
                );
                found.unplaced.push(format!(
                    "a pending {what} (MPIR_Request at {}) on communicator {name}, which is \
                         neither the UCX netmod's (its comm is set) nor CH4's self path's (not a \
                         communicator of one rank): its kind cannot be told, and its peer, tag \
                         and length are not read",
                    r.base
                ));
                Ok(false)
            }
            Ch4Path::Netmod => {
                if self.shm_or_ofi(r, comms, seen, found, net, (status, receive), (mem, sizes))? {
                    return Ok(false);
                }
                let Some(ucp) = self.netmod_request(r, seen)? else {
                    return Ok(false);
                };
                let op = if receive {
                    self.netmod_receive(mem, types, net, status, ucp, comms)?
                } else {
                    self.netmod_send(status, ucp, comms, net, (mem, types, limits))?
                };
                match op {
                    None => {}
                    Some((Some(ci), op)) if receive => found.receives[ci].push(op),
                    Some((Some(ci), op)) => found.sends[ci].push(op),
                    Some((None, op)) => found.unplaced.push(format!(
                        "a pending {what} {} UCX (MPIR_Request at {}) whose communicator is \
                         unknown: {}",
                        if receive { "posted to" } else { "handed to" },
                        r.base,
                        op.extra_text.join("; ")
                    )),
                }
                Ok(true)
            }
        }
    }

    /// Where UCX's request lies for each request of `objects` the loop of
    /// [`netmod_operations`](Self::netmod_operations) will read one of:
    /// a receive or a send the netmod took (its `comm` NULL) that no list
    /// holds, with a pointer to UCX's request. Requests that turn out to be
    /// complete are among them; nothing is read to tell.
    fn netmod_ucx_requests(
        &self,
        objects: &[mpihandles::LiveObject],
        seen: &HashSet<u64>,
        types: &dyn Layouts,
        order: mpidd_types::ByteOrder,
    ) -> Vec<(TargetAddr, u64)> {
        let l = &self.layout;
        let Ok(size) = types.size_of("ucp_request_t") else {
            return Vec::new();
        };
        objects
            .iter()
            .filter_map(|object| {
                let r = Record {
                    base: object.addr,
                    start: 0,
                    bytes: &object.bytes,
                    order,
                    what: "MPIR_Request",
                };
                let kind = i128::from(int(&r, l.req_kind).ok()?);
                let netmod = kind == l.kind_recv || Some(kind) == l.kind_send;
                let comm_set = uint(&r, l.req_comm).ok()? != 0;
                if !netmod || (comm_set && !l.netmod_keeps_comm) || seen.contains(&r.base.0) {
                    return None;
                }
                let ucp = self.netmod_request(&r, seen).ok()??;
                (ucp.0 != 0).then(|| (TargetAddr(ucp.0.wrapping_sub(size)), size))
            })
            .collect()
    }

    /// A pending send of the shared-memory path (`dev.is_local`), from
    /// its MPIDIG part (`MPIDIG_isend_impl`): destination, buffer, count
    /// and datatype; MPICH keeps its tag only in the header it sent. Its
    /// communicator is the request's `comm`, which MPIDIG sets; `None` for
    /// any other request.
    fn shm_send(
        &self,
        r: &Record<'_>,
        comms: &[CommInfo],
        status: OperationStatus,
        (mem, sizes): (&dyn TargetMemory, &mut TypeSizes),
    ) -> Result<Option<(usize, PendingOperation)>, DecodeError> {
        let l = &self.layout;
        let (Some(local), Some(dest)) = (l.req_is_local, l.am_send_dest) else {
            return Ok(None);
        };
        if int(r, local)? == 0 {
            return Ok(None);
        }
        let comm = TargetAddr(uint(r, l.req_comm)?);
        let Some(ci) = comms.iter().position(|c| c.addr == comm) else {
            return Ok(None);
        };
        let rank = int(r, dest)?;
        let count = int(r, l.am_count)?;
        let datatype = int(r, l.am_datatype)?;
        let (length, more) = sizes.length(
            mem,
            count,
            datatype,
            l.datatype_size,
            self.globals.datatype_direct,
        );
        let mut op =
            PendingOperation::message(status, (rank, comms[ci].world_of(rank)), -1, length);
        op.buffer = uint(r, l.am_buffer)?;
        op.desired_count = Some(count);
        op.extra_text.push(
            "on the shared-memory path: MPICH keeps its tag only in the header it sent".into(),
        );
        op.extra_text.extend(more);
        Ok(Some((ci, op)))
    }

    /// MPICH's pointer to UCX's request, for a pending request the netmod
    /// took that no list holds; `None` for one of the shared-memory path
    /// (in a build that has one), or when the netmod is not UCX.
    fn netmod_request(
        &self,
        r: &Record<'_>,
        seen: &HashSet<u64>,
    ) -> Result<Option<TargetAddr>, DecodeError> {
        let l = &self.layout;
        if self.shm_request(r)? {
            return Ok(None);
        }
        if self.partner_listed(r, seen)? {
            return Ok(None);
        }
        let Some(ucp_member) = l.ucx_request else {
            return Ok(None);
        };
        Ok(Some(TargetAddr(uint(r, ucp_member)?)))
    }

    /// Puts a pending request outside CH4's self path where it belongs
    /// when it is not UCX's: already listed, a send of MPIDIG's shared
    /// memory, or (when UCX does not run) one the OFI netmod took, said
    /// in a note. Whether it was one of those.
    #[allow(clippy::too_many_arguments)]
    fn shm_or_ofi(
        &self,
        r: &Record<'_>,
        comms: &[CommInfo],
        seen: &HashSet<u64>,
        found: &mut PoolFindings,
        net: &NetmodReading,
        (status, receive): (OperationStatus, bool),
        (mem, sizes): (&dyn TargetMemory, &mut TypeSizes),
    ) -> Result<bool, DecodeError> {
        if seen.contains(&r.base.0) {
            return Ok(true);
        }
        if !receive {
            if let Some((ci, op)) = self.shm_send(r, comms, status, (mem, sizes))? {
                found.sends[ci].push(op);
                return Ok(true);
            }
            match self.shm_send_34(r, comms, status, (mem, sizes))? {
                None => {}
                Some(ShmSend34::Listed(ci, op)) => {
                    found.sends[ci].push(op);
                    return Ok(true);
                }
                Some(ShmSend34::Note(note)) => {
                    found.unplaced.push(note);
                    return Ok(true);
                }
                Some(ShmSend34::Collective) => return Ok(true),
            }
        }
        if net.ucx_runs {
            return Ok(false);
        }
        if !self.shm_request(r)? && !self.partner_listed(r, seen)? {
            let note = self.ofi_request(r, comms, (status, receive), (mem, sizes))?;
            found.unplaced.extend(note);
        }
        Ok(true)
    }

    /// Whether `r` is a request of the shared-memory path, which is
    /// MPIDIG's: a matched one is no longer pending for a debugger.
    fn shm_request(&self, r: &Record<'_>) -> Result<bool, DecodeError> {
        match self.layout.req_is_local {
            Some(local) => Ok(int(r, local)? != 0),
            None => Ok(false),
        }
    }

    /// Whether `r` is the netmod half of an MPI_ANY_SOURCE receive whose
    /// shared-memory half, the one the application holds, is listed.
    fn partner_listed(&self, r: &Record<'_>, seen: &HashSet<u64>) -> Result<bool, DecodeError> {
        let partner = match self.layout.req_partner {
            Some(p) => uint(r, p)?,
            None => 0,
        };
        Ok(partner != 0 && seen.contains(&partner))
    }

    /// A receive the netmod took, with the index of its communicator when
    /// known (`None` for a receive of a collective's, like CH3's decoder
    /// leaves them out): MPICH 4.0.2's UCX netmod leaves `MPIR_Request.comm` NULL
    /// (`MPIR_Request_create_from_pool` in `MPIDI_UCX_recv`), so the
    /// communicator comes from the context id of UCX's tag.
    fn netmod_receive(
        &self,
        mem: &dyn TargetMemory,
        types: &dyn Layouts,
        net: &NetmodReading,
        status: OperationStatus,
        ucp: TargetAddr,
        comms: &[CommInfo],
    ) -> Result<Option<(Option<usize>, PendingOperation)>, DecodeError> {
        let mut op = PendingOperation::unknown(status);
        if ucp.0 == 0 {
            op.extra_text
                .push("posted to UCX; its UCX request pointer is NULL".to_string());
            return Ok(Some((None, op)));
        }
        let read = match &net.ucx {
            Some(reader) => mpihandles::ucx_receive_with(reader, mem, types, ucp),
            None => mpihandles::ucx_receive(mem, types, ucp),
        };
        let u = match read {
            Ok(u) => u,
            Err(mpihandles::UcxError::Layouts(_)) => {
                op.extra_text.push(format!(
                    "posted to UCX: communicator, source, tag and buffer are in UCX's request at \
                     {ucp}, unreadable without UCX's types (ucp_request_t)"
                ));
                return Ok(Some((None, op)));
            }
            Err(e) => return Err(ucx_failure(e)),
        };
        op.buffer = u.buffer;
        op.desired_length = u.length as i64;
        let Some(index) = comms.iter().position(|c| c.recvcontext_id == u.context_id) else {
            if collective(comms, u.context_id, |c| c.recvcontext_id) {
                return Ok(None);
            }
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
        Ok(Some((Some(index), op)))
    }

    /// A send the netmod took, with the index of its communicator when
    /// known (`None` for a send of a collective's). UCX's tag gives the communicator (the context id the send
    /// uses) and the tag; the destination is the rank whose endpoint the
    /// send uses, in CH4's address vector.
    fn netmod_send(
        &self,
        status: OperationStatus,
        ucp: TargetAddr,
        comms: &[CommInfo],
        net: &NetmodReading,
        (mem, types, limits): (&dyn TargetMemory, &dyn Layouts, &Limits),
    ) -> Result<Option<(Option<usize>, PendingOperation)>, DecodeError> {
        let mut op = PendingOperation::unknown(status);
        if ucp.0 == 0 {
            op.extra_text
                .push("sent through UCX; its UCX request pointer is NULL".to_string());
            return Ok(Some((None, op)));
        }
        let read = match &net.ucx {
            Some(reader) => mpihandles::ucx_send_with(reader, mem, types, ucp),
            None => mpihandles::ucx_send(mem, types, ucp),
        };
        let u = match read {
            Ok(u) => u,
            Err(mpihandles::UcxError::Layouts(_)) => {
                op.extra_text.push(format!(
                    "sent through UCX: communicator, tag, buffer and length are in UCX's \
                     request at {ucp}, unreadable without UCX's types (ucp_request_t)"
                ));
                return Ok(Some((None, op)));
            }
            Err(e) => return Err(ucx_failure(e)),
        };
        op.buffer = u.buffer;
        op.desired_length = u.length as i64;
        op.actual_length = op.desired_length;
        op.desired_tag = u.tag.unwrap_or(-1);
        op.actual_tag = op.desired_tag;
        let Some(index) = comms.iter().position(|c| c.context_id == u.context_id) else {
            if collective(comms, u.context_id, |c| c.context_id) {
                return Ok(None);
            }
            op.extra_text.push(format!(
                "sent through UCX with context id {}, which is no communicator's",
                u.context_id
            ));
            return Ok(Some((None, op)));
        };
        let ep = u.endpoint.unwrap_or(0);
        let endpoints = net.endpoints.get_or_init(|| {
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
        Ok(Some((Some(index), op)))
    }
}

/// A failure to read UCX's request, other than its types missing (which
/// each caller says in its own terms).
pub(super) fn ucx_failure(e: mpihandles::UcxError) -> DecodeError {
    match e {
        mpihandles::UcxError::Read(e) => e.into(),
        mpihandles::UcxError::Corrupt {
            record,
            addr,
            reason,
        } => DecodeError::Corrupt {
            what: record,
            addr,
            reason,
        },
        e => DecodeError::unsupported(format!("UCX's request: {e}")),
    }
}

/// Whether `context` is that of a communicator's collectives: MPICH sends
/// them with the context id plus `MPIR_CONTEXT_INTRA_COLL` (1,
/// `src/include/mpir_contextid.h`), point-to-point messages plus 0. The
/// queues a debugger shows are the application's point-to-point ones, as
/// CH3's decoder shows them.
pub(super) fn collective(comms: &[CommInfo], context: i64, id: impl Fn(&CommInfo) -> i64) -> bool {
    comms
        .iter()
        .any(|c| id(c).checked_add(CONTEXT_COLL_OFFSET) == Some(context))
}

/// `MPIR_CONTEXT_INTRA_COLL` and `MPIR_CONTEXT_INTER_COLL`
/// (`src/include/mpir_contextid.h`).
const CONTEXT_COLL_OFFSET: i64 = 1;
