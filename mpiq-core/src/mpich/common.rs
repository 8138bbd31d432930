//! What MPICH keeps the same under every device, read the same way by
//! the CH3 and CH4 queue decoders: the communicator records and their
//! world ranks, the datatype sizes, the wildcards, and the shape of one
//! reading (retried while the communicator list changes, and turned into
//! the model the same way).

use std::collections::HashMap;
use std::sync::Mutex;

use mpidd_read::Limits;
use mpidd_types::TargetAddr;

use crate::decoder::DecodeError;
use crate::list_walk::{at, walk, ListShape, Span};
use crate::model::{Communicator, OperationStatus, PendingOperation, ProcessQueues, Queue};
use crate::target_read::{checked_count, read_bytes, read_int, read_pointer, Record};
use mpidd_read::TargetMemory;
use mpihandles::MpichConstants;

/// `MPI_MAX_OBJECT_NAME`: the size of `MPIR_Comm::name`.
pub(crate) const COMM_NAME_LEN: usize = 128;

/// A posted receive of `comm` as MPICH records it, from `rank` with `tag`
/// (the library's `MPI_ANY_SOURCE` and `MPI_ANY_TAG`, `wild`, for any)
/// into a buffer of `length`.
pub(crate) fn posted_receive(
    status: OperationStatus,
    comm: &CommInfo,
    (rank, tag): (i64, i64),
    length: i64,
    wild: MpichConstants,
) -> PendingOperation {
    PendingOperation::receive(
        status,
        (rank != wild.any_source).then(|| (rank, comm.world_of(rank))),
        (tag != wild.any_tag).then_some(tag),
        length,
    )
}

/// Walks the communicators MPICH chains for debuggers
/// (`MPIR_All_communicators`) from the head pointer at `head`, through
/// `MPIR_Comm.comm_next` (at `next`), handing `visit` each `MPIR_Comm`
/// whole (`size` bytes).
pub(crate) fn walk_communicators(
    mem: &dyn TargetMemory,
    head: TargetAddr,
    (next, size): (u64, u64),
    limits: &Limits,
    visit: impl FnMut(&Record<'_>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let first = read_pointer(mem, head, "MPIR_All_communicators.head")?;
    let shape = ListShape {
        next_offset: next,
        span: Span {
            start: 0,
            end: size,
        },
        what: "MPIR_Comm",
        end: TargetAddr(0),
    };
    walk(mem, first, shape, limits, visit)
}

/// An `MPIR_Request`'s status from its completion counter (`cc`), which
/// drops to 0 when the request completes.
pub(crate) fn request_status(cc: i64) -> OperationStatus {
    if cc == 0 {
        OperationStatus::Complete
    } else {
        OperationStatus::Pending
    }
}

/// How many times a changing communicator list is re-read.
pub(crate) const TRIES: u32 = 3;

/// Element sizes of datatypes by handle, for one queue read. Most
/// requests share a datatype, so the last answer is kept apart from the
/// map and answers without hashing.
#[derive(Default)]
pub(crate) struct TypeSizes {
    pub(crate) last: Option<(i64, Option<u64>)>,
    pub(crate) all: HashMap<i64, Option<u64>>,
}

/// Finds the communicator of a context id, remembering the last one
/// found: consecutive requests mostly belong to the same communicator.
#[derive(Default)]
pub(crate) struct CommFinder {
    pub(crate) last: Option<usize>,
}

impl CommFinder {
    /// The index in `comms` of the first communicator whose `key` is
    /// `context`.
    pub(crate) fn find(
        &mut self,
        comms: &[CommInfo],
        context: i64,
        key: impl Fn(&CommInfo) -> i64,
    ) -> Option<usize> {
        // `last` is always a first match, so the shortcut agrees with the
        // search even when corrupt memory gives two communicators one id.
        if let Some(i) = self.last {
            if comms.get(i).is_some_and(|c| key(c) == context) {
                return Some(i);
            }
        }
        let found = comms.iter().position(|c| key(c) == context);
        if found.is_some() {
            self.last = found;
        }
        found
    }
}

/// One communicator as read from the target.
#[derive(Clone, Debug)]
pub(crate) struct CommInfo {
    pub(crate) addr: TargetAddr,
    pub(crate) name: String,
    pub(crate) context_id: i64,
    pub(crate) recvcontext_id: i64,
    pub(crate) rank: i64,
    pub(crate) size: i64,
    /// `MPI_COMM_WORLD` rank of each peer (local rank for intracomms,
    /// remote rank for intercomms), when it could be read.
    pub(crate) world: Option<Vec<i64>>,
    /// Why `world` is `None`, for the diagnostics.
    pub(crate) world_error: Option<String>,
}

impl CommInfo {
    /// The world rank of the peer `rank`, or −1.
    pub(crate) fn world_of(&self, rank: i64) -> i64 {
        usize::try_from(rank)
            .ok()
            .and_then(|i| self.world.as_ref()?.get(i).copied())
            .unwrap_or(-1)
    }
}

/// A process's communicators as last read, by the sequence number of
/// `MPIR_All_communicators` they were read at: the list changes only when
/// a communicator is made or freed, so most readings reuse them.
#[derive(Default)]
pub(crate) struct CommCache(Mutex<Option<(i64, Vec<CommInfo>)>>);

impl CommCache {
    /// The communicators read at `seq`, from the cache, else by `read`
    /// (and then kept); read afresh every time without a sequence number,
    /// which could not tell a change.
    pub(crate) fn get_or_read(
        &self,
        seq: Option<i64>,
        read: impl FnOnce() -> Result<Vec<CommInfo>, DecodeError>,
    ) -> Result<Vec<CommInfo>, DecodeError> {
        let Some(seq) = seq else {
            return read();
        };
        let mut cache = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((cached, comms)) = cache.as_ref() {
            if *cached == seq {
                return Ok(comms.clone());
            }
        }
        let comms = read()?;
        *cache = Some((seq, comms.clone()));
        Ok(comms)
    }
}

/// Reads with `read` until the communicator list's sequence number
/// (`sequence`, `None` without the list) is the same after a reading as
/// before it, at most [`TRIES`] times: a running process that makes or
/// frees communicators meanwhile gives no consistent reading.
pub(crate) fn read_consistently<T>(
    sequence: impl Fn() -> Result<Option<i64>, DecodeError>,
    mut read: impl FnMut(Option<i64>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    let mut first = sequence()?;
    let mut last = first;
    for _ in 0..TRIES {
        let reading = read(first)?;
        last = sequence()?;
        if last == first {
            return Ok(reading);
        }
        first = last;
    }
    Err(DecodeError::KeptChanging {
        tries: TRIES,
        first: first.unwrap_or(-1),
        last: last.unwrap_or(-1),
    })
}

/// The operations of one queue kind, one list per communicator of a
/// reading, in the communicators' order.
pub(crate) type QueueLists = Vec<Vec<PendingOperation>>;

/// One reading of an MPICH process as the model has it: each
/// communicator with its posted receives, unexpected messages and pending
/// sends (`None` where the process records no sends); the world rank is
/// the rank in `MPI_COMM_WORLD` (receive context id 0), and the
/// diagnostics the communicators without world ranks, then `notes`.
pub(crate) fn process_queues(
    source: &str,
    comms: Vec<CommInfo>,
    (posted, unexpected, sends): (QueueLists, QueueLists, Option<QueueLists>),
    notes: Vec<String>,
) -> ProcessQueues {
    let global_rank = comms
        .iter()
        .find(|c| c.recvcontext_id == 0)
        .map_or(-1, |world| world.rank);
    let read = |operations| Queue::Read {
        operations,
        truncated: false,
    };
    let mut diagnostics: Vec<String> = comms.iter().filter_map(|c| c.world_error.clone()).collect();
    diagnostics.extend(notes);
    let mut sends = sends.map(Vec::into_iter);
    // Each queue's operations move in whole, never one by one.
    let communicators = comms
        .into_iter()
        .zip(posted.into_iter().zip(unexpected))
        .map(|(c, (posted, unexpected))| Communicator {
            name: c.name,
            size: c.size,
            local_rank: c.rank,
            unique_id: c.addr.0,
            context_id: Some(c.context_id),
            recv_context_id: Some(c.recvcontext_id),
            group: c.world.map(Into::into),
            pending_sends: match sends.as_mut().and_then(Iterator::next) {
                Some(ops) => read(ops),
                None => Queue::NoInformation,
            },
            pending_receives: read(posted),
            unexpected_messages: read(unexpected),
        })
        .collect();
    ProcessQueues {
        source: source.to_string(),
        global_rank,
        communicators,
        truncated: false,
        diagnostics,
    }
}

impl TypeSizes {
    /// Bytes per element of the datatype with this handle, when MPICH's
    /// handle encoding or its direct pool (`MPIR_Datatype_direct` at
    /// `direct`, whose records are `(sizeof MPIR_Datatype, offset of
    /// size)` as `layout` gives) tells it.
    pub(crate) fn size_of(
        &mut self,
        mem: &dyn TargetMemory,
        handle: i64,
        layout: Option<(u64, u64)>,
        direct: Option<TargetAddr>,
    ) -> Option<u64> {
        if let Some((last, size)) = self.last {
            if last == handle {
                return size;
            }
        }
        let size = *self.all.entry(handle).or_insert_with(|| {
            let h = handle as u32;
            // Handles: 2 bits kind (builtin, direct, indirect), 4 bits
            // object kind (3 is a datatype), then the payload.
            if (h >> 26) & 0xf != 3 {
                return None;
            }
            match h >> 30 {
                // A predefined type's size is in bits 8..16 of its handle.
                1 => Some(u64::from((h >> 8) & 0xff)),
                2 => {
                    let (size_of, size_off) = layout?;
                    let base = direct?;
                    let index = u64::from(h & 0x03ff_ffff);
                    let at = at(base, index.checked_mul(size_of)?.checked_add(size_off)?);
                    let word = mem.abi().address_bytes();
                    read_int(mem, at, word, "MPIR_Datatype.size")
                        .ok()
                        .and_then(|s| u64::try_from(s).ok())
                }
                _ => None,
            }
        });
        self.last = Some((handle, size));
        size
    }

    /// Bytes of `count` elements of the datatype `handle`, or the count
    /// when the datatype's size cannot be read ([`TypeSizes::size_of`]),
    /// with a line that says so.
    pub(crate) fn length(
        &mut self,
        mem: &dyn TargetMemory,
        count: i64,
        handle: i64,
        layout: Option<(u64, u64)>,
        direct: Option<TargetAddr>,
    ) -> (i64, Option<String>) {
        match self.size_of(mem, handle, layout, direct) {
            Some(size) => (count.saturating_mul(size as i64), None),
            None => (
                count,
                Some(format!(
                    "length in elements: datatype {handle:#x} has no readable size"
                )),
            ),
        }
    }
}

/// Where an `MPIR_Group` keeps its members' world ranks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupLayout {
    /// `MPIR_Group.size`.
    pub(crate) size: u64,
    /// `MPIR_Group.lrank_to_lpid`, a pointer to `size` pmap records.
    pub(crate) pmap: u64,
    /// `sizeof(MPII_Group_pmap_t)`.
    pub(crate) pmap_size: u64,
    /// `MPII_Group_pmap_t.lpid` (an `uint64_t` in MPICH 4.0).
    pub(crate) pmap_lpid: u64,
    /// From MPICH 5.0, `MPIR_Group.pmap` in place of the pmap records
    /// (`pmap` and the two above then unused).
    pub(crate) pmap5: Option<Pmap5Layout>,
}

/// `MPIR_Group.pmap` (`struct MPIR_Pmap`, MPICH 5.0 `mpir_group.h`): either
/// a map of `MPIR_Lpid`s (`use_map`), or an offset and a stride; an lpid
/// holds its world's index above bit 32 and the world rank below.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pmap5Layout {
    /// `pmap.use_map` (a `bool`).
    pub(crate) use_map: u64,
    /// `pmap.u.map`, a pointer to `size` `MPIR_Lpid`s (8 bytes each).
    pub(crate) map: u64,
    /// `pmap.u.stride.offset`.
    pub(crate) offset: u64,
    /// `pmap.u.stride.stride`.
    pub(crate) stride: u64,
}

/// The world rank of a 5.0 lpid of the job's own world (index 0); another
/// world's (a spawned job's) is left whole.
fn lpid_world_rank(lpid: i64) -> i64 {
    if lpid >> 32 == 0 {
        lpid & 0xffff_ffff
    } else {
        lpid
    }
}

impl GroupLayout {
    /// World ranks from the `MPIR_Group` at `group`, whose `size` must be
    /// the communicator's `expected` size.
    pub(crate) fn world_ranks(
        &self,
        mem: &dyn TargetMemory,
        group: TargetAddr,
        expected: i64,
        limits: &Limits,
    ) -> Result<Vec<i64>, DecodeError> {
        let found = read_int(mem, at(group, self.size), 4, "MPIR_Group.size")?;
        if found != expected {
            return Err(DecodeError::MemberCount {
                what: "MPIR_Group",
                addr: group,
                expected,
                found,
            });
        }
        if let Some(p) = self.pmap5 {
            let n = checked_count(found, "MPIR_Group.pmap", group, limits)?;
            let use_map = read_int(mem, at(group, p.use_map), 1, "MPIR_Group.pmap.use_map")?;
            if use_map == 0 {
                let offset = read_int(mem, at(group, p.offset), 8, "MPIR_Group.pmap.u.stride")?;
                let stride = read_int(mem, at(group, p.stride), 8, "MPIR_Group.pmap.u.stride")?;
                return Ok((0..n as i64)
                    .map(|i| lpid_world_rank(offset.wrapping_add(i.wrapping_mul(stride))))
                    .collect());
            }
            let map = read_pointer(mem, at(group, p.map), "MPIR_Group.pmap.u.map")?;
            let bytes = read_bytes(
                mem,
                map,
                n.saturating_mul(8),
                "MPIR_Group.pmap.u.map",
                limits,
            )?;
            let r = Record {
                base: map,
                start: 0,
                bytes: &bytes,
                order: mem.abi().byte_order,
                what: "MPIR_Lpid",
            };
            return (0..n)
                .map(|i| Ok(lpid_world_rank(r.int(i * 8, 8)?)))
                .collect();
        }
        let n = checked_count(found, "MPIR_Group.lrank_to_lpid", group, limits)?;
        let pmap = read_pointer(mem, at(group, self.pmap), "MPIR_Group.lrank_to_lpid")?;
        let bytes = read_bytes(
            mem,
            pmap,
            n.saturating_mul(self.pmap_size),
            "MPIR_Group.lrank_to_lpid",
            limits,
        )?;
        let r = Record {
            base: pmap,
            start: 0,
            bytes: &bytes,
            order: mem.abi().byte_order,
            what: "MPII_Group_pmap_t",
        };
        (0..n)
            .map(|i| Ok(r.int(i * self.pmap_size + self.pmap_lpid, 8)?))
            .collect()
    }
}
