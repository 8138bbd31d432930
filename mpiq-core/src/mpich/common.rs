//! What MPICH keeps the same under every device, read the same way by
//! the CH3 and CH4 queue decoders: the communicator records, the lists
//! they walk (bounded and cycle-checked), and the small caches of one
//! queue read.

use std::collections::HashMap;

use mpidd_read::Limits;
use mpidd_types::TargetAddr;

use crate::decoder::DecodeError;
pub(crate) use crate::list_walk::{at, walk, ListShape, Span};
use crate::target_read::{read_bytes, read_int, read_pointer, Record};
use mpidd_read::Target;
use mpidd_read::TargetMemory;

/// MPICH's `MPI_ANY_SOURCE`.
pub(crate) const MPICH_ANY_SOURCE: i64 = -2;
/// MPICH's `MPI_ANY_TAG`.
pub(crate) const MPICH_ANY_TAG: i64 = -1;
/// `MPI_MAX_OBJECT_NAME`: the size of `MPIR_Comm::name`.
pub(crate) const COMM_NAME_LEN: usize = 128;

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

pub(crate) fn symbol(
    target: &dyn Target,
    name: &'static str,
    hint: &'static str,
) -> Result<TargetAddr, DecodeError> {
    target
        .symbols()
        .lookup(name)
        .map(|s| s.addr)
        .ok_or_else(|| DecodeError::MissingSymbol {
            name,
            searched: mpidd_read::searched_summary(target.symbols()),
            hint,
        })
}

pub(crate) fn checked_count(
    count: i64,
    what: &'static str,
    at: TargetAddr,
    limits: &Limits,
) -> Result<u64, DecodeError> {
    let n = u64::try_from(count).map_err(|_| mpidd_read::ReadError::NegativeCount {
        what,
        addr: at,
        count,
    })?;
    if n > limits.max_table_entries {
        return Err(mpidd_read::ReadError::LimitExceeded {
            what,
            addr: at,
            count: n,
            max: limits.max_table_entries,
            limit: "max_table_entries",
        }
        .into());
    }
    Ok(n)
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
