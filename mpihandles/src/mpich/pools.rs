//! Where MPICH keeps the object behind a handle.
//!
//! Each kind of object has up to three homes, all local symbols of the
//! library:
//!
//! - a builtin array of predefined objects (`MPIR_Comm_builtin`...),
//!   indexed by the handle's low bits;
//! - a preallocated direct array (`MPIR_Comm_direct`...);
//! - an object allocator (`MPIR_Comm_mem`, an `MPIR_Object_alloc_t`) whose
//!   `indirect` table points to blocks allocated as more objects are needed.
//!   Requests have an array of allocators, one per pool.
//!
//! The allocator keeps free objects on a list through
//! `MPIR_Handle_common.next` (starting at `avail`); an object on that list
//! has been freed by MPICH (or never handed out). Every object keeps its own
//! handle in its first member, which is how a slot is checked to hold the
//! handle asked about.

use std::collections::HashSet;

use mpidd_read::{ReadError, Symbol};
use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{HandleKind, ObjectState};
use crate::mpich::handle_bits::{MpichHandle, Storage};
use crate::mpich::predefined::predefined_name;
use crate::target::{at, Ctx, Rec};

/// The symbols and type of one kind's objects.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PoolSpec {
    pub(crate) kind: HandleKind,
    /// The object's C type.
    pub(crate) object_type: &'static str,
    /// `MPII_Object_kind`'s enumerator for it.
    pub(crate) object_kind: &'static str,
    /// The builtin array, and the mask of the handle bits that index it
    /// (MPICH's `MPIR_*_get_ptr` macros use different masks per kind).
    pub(crate) builtin: Option<(&'static str, u32)>,
    /// The direct array.
    pub(crate) direct: &'static str,
    /// The allocator, or the array of request pools' allocators.
    pub(crate) mem: &'static str,
}

/// The homes of each kind's objects; `None` for kinds that are not
/// MPICH objects (files are ROMIO's, statuses are user memory).
pub(crate) fn spec(kind: HandleKind) -> Option<PoolSpec> {
    let s = |object_type, object_kind, builtin, direct, mem| {
        Some(PoolSpec {
            kind,
            object_type,
            object_kind,
            builtin,
            direct,
            mem,
        })
    };
    match kind {
        HandleKind::Comm => s(
            "MPIR_Comm",
            "MPIR_COMM",
            Some(("MPIR_Comm_builtin", 0x03ff_ffff)),
            "MPIR_Comm_direct",
            "MPIR_Comm_mem",
        ),
        HandleKind::Group => s(
            "MPIR_Group",
            "MPIR_GROUP",
            Some(("MPIR_Group_builtin", 0x03ff_ffff)),
            "MPIR_Group_direct",
            "MPIR_Group_mem",
        ),
        HandleKind::Datatype => s(
            "MPIR_Datatype",
            "MPIR_DATATYPE",
            Some(("MPIR_Datatype_builtin", 0xff)),
            "MPIR_Datatype_direct",
            "MPIR_Datatype_mem",
        ),
        HandleKind::Errhandler => s(
            "MPIR_Errhandler",
            "MPIR_ERRHANDLER",
            Some(("MPIR_Errhandler_builtin", 0x3)),
            "MPIR_Errhandler_direct",
            "MPIR_Errhandler_mem",
        ),
        HandleKind::Op => s(
            "MPIR_Op",
            "MPIR_OP",
            Some(("MPIR_Op_builtin", 0xff)),
            "MPIR_Op_direct",
            "MPIR_Op_mem",
        ),
        HandleKind::Info => s(
            "MPIR_Info",
            "MPIR_INFO",
            Some(("MPIR_Info_builtin", 0x03ff_ffff)),
            "MPIR_Info_direct",
            "MPIR_Info_mem",
        ),
        HandleKind::Request => s(
            "MPIR_Request",
            "MPIR_REQUEST",
            Some(("MPIR_Request_builtins", 0x03ff_ffff)),
            "MPIR_Request_direct",
            "MPIR_Request_mem",
        ),
        HandleKind::Win => s(
            "MPIR_Win",
            "MPIR_WIN",
            None,
            "MPIR_Win_direct",
            "MPIR_Win_mem",
        ),
        HandleKind::File | HandleKind::Status => None,
    }
}

/// Where a handle's object is, and its state.
#[derive(Clone, Debug)]
pub(crate) struct Located {
    pub(crate) handle: MpichHandle,
    /// The object; `None` for a predefined handle whose builtin slot MPICH
    /// never fills (the predefined operations).
    pub(crate) addr: Option<TargetAddr>,
    pub(crate) state: ObjectState,
    pub(crate) ref_count: Option<i64>,
}

/// One allocator (`MPIR_Object_alloc_t`) as read.
#[derive(Clone, Debug)]
pub(crate) struct Allocator {
    pub(crate) addr: TargetAddr,
    pub(crate) avail: TargetAddr,
    pub(crate) initialized: bool,
    pub(crate) indirect: TargetAddr,
    pub(crate) indirect_size: i64,
    /// Objects the allocator made, direct and indirect (MPICH 3.4 on).
    pub(crate) num_allocated: Option<i64>,
    /// Objects on its free list (MPICH 3.4 on).
    pub(crate) num_avail: Option<i64>,
    pub(crate) object_size: i64,
    pub(crate) direct_size: i64,
}

/// Objects per indirect block where the allocator does not say (before
/// MPICH 3.4): MPICH's `HANDLE_NUM_INDICES`, which requests share.
const DEFAULT_PER_BLOCK: i64 = 1024;

impl Allocator {
    pub(crate) fn read(ctx: &Ctx<'_>, addr: TargetAddr) -> Result<Allocator, HandleError> {
        const T: &str = "MPIR_Object_alloc_t";
        let r = ctx.record(addr, T)?;
        let m = |path| ctx.m(T, path);
        let optional = |path| -> Result<Option<i64>, HandleError> {
            match m(path) {
                Ok(f) => Ok(Some(r.int(f)?)),
                Err(_) => Ok(None),
            }
        };
        Ok(Allocator {
            addr,
            avail: r.ptr(m("avail")?)?,
            initialized: r.int(m("initialized")?)? != 0,
            indirect: r.ptr(m("indirect")?)?,
            indirect_size: r.int(m("indirect_size")?)?,
            num_allocated: optional("num_allocated")?,
            num_avail: optional("num_avail")?,
            object_size: r.int(m("size")?)?,
            direct_size: r.int(m("direct_size")?)?,
        })
    }

    /// How many objects each indirect block holds. MPICH does not store it;
    /// every block has the same count, so it is what the blocks add to the
    /// total.
    pub(crate) fn per_block(&self) -> Option<i64> {
        if self.indirect_size <= 0 {
            return None;
        }
        let Some(total) = self.num_allocated else {
            return Some(DEFAULT_PER_BLOCK);
        };
        Some(total.checked_sub(self.direct_size)? / self.indirect_size).filter(|n| *n > 0)
    }

    /// The address of indirect block `block` (NULL if not allocated).
    pub(crate) fn block(&self, ctx: &Ctx<'_>, block: u64) -> Result<TargetAddr, ReadError> {
        ctx.pointer(
            at(self.indirect, block * ctx.word()),
            "MPIR_Object_alloc_t.indirect[block]",
        )
    }

    /// The free objects, by walking `avail`. The walk is bounded by the
    /// count the allocator claims and by [`Limits::max_list_len`], and a
    /// loop is an error.
    pub(crate) fn free_set(&self, ctx: &Ctx<'_>) -> Result<HashSet<TargetAddr>, HandleError> {
        self.free_set_over(ctx, &[])
    }

    /// [`free_set`](Self::free_set), taking each link from `read` (runs of
    /// this allocator's objects already read, each in address order) when
    /// it lies there, so that a pool read whole costs no read per free
    /// object; links elsewhere are read from the target.
    fn free_set_over(
        &self,
        ctx: &Ctx<'_>,
        read: &[Vec<Rec>],
    ) -> Result<HashSet<TargetAddr>, HandleError> {
        let next = ctx.m("MPIR_Handle_common", "next")?;
        let word = ctx.word();
        let link = |node: TargetAddr| -> Result<TargetAddr, ReadError> {
            let held = node
                .0
                .checked_add(next.offset)
                .and_then(|field| read_word(read, field, word));
            match held {
                Some(bytes) => Ok(TargetAddr(crate::target::unsigned(bytes, ctx.order()))),
                None => ctx.pointer(at(node, next.offset), "MPIR_Handle_common.next"),
            }
        };
        let max = ctx.limits.max_list_len;
        let claimed = self
            .num_avail
            .map_or(max, |n| u64::try_from(n.max(0)).unwrap_or(0));
        let bound = claimed.min(max);
        let mut seen = HashSet::new();
        let mut node = self.avail;
        while !node.is_null() {
            if seen.contains(&node) {
                return Err(ReadError::Cycle {
                    what: "MPIR_Handle_common.next",
                    addr: node,
                }
                .into());
            }
            if seen.len() as u64 >= bound {
                if bound == max {
                    return Err(ReadError::LimitExceeded {
                        what: "free list of an MPICH object allocator",
                        addr: self.avail,
                        count: seen.len() as u64,
                        max,
                        limit: "max_list_len",
                    }
                    .into());
                }
                return Err(HandleError::Inconsistent {
                    addr: self.addr,
                    reason: format!(
                        "the allocator's free list is longer than the {claimed} objects its \
                         num_avail counts"
                    ),
                });
            }
            seen.insert(node);
            node = link(node)?;
        }
        Ok(seen)
    }
}

/// The `word` bytes at `addr` when one record of `runs` holds them all.
/// Each run is a contiguous array of records of one size, in address
/// order, so the record is found by division, not by a search.
fn read_word(runs: &[Vec<Rec>], addr: u64, word: u64) -> Option<&[u8]> {
    runs.iter().find_map(|run| {
        let first = run.first()?;
        let size = first.bytes.len() as u64;
        let from_start = addr.checked_sub(first.base.0)?;
        let rec = run.get(usize::try_from(from_start / size.max(1)).ok()?)?;
        let start = usize::try_from(addr.checked_sub(rec.base.0)?).ok()?;
        rec.bytes
            .get(start..start.checked_add(usize::try_from(word).ok()?)?)
    })
}

/// The object-kind number `MPII_Object_kind` gives `spec`'s kind.
fn kind_number(ctx: &Ctx<'_>, spec: &PoolSpec) -> Result<u32, HandleError> {
    let v = ctx
        .layouts
        .enum_value("MPII_Object_kind", spec.object_kind)?;
    Ok(v as u32)
}

/// What the handle's kind bits name, for an error message.
fn kind_name(ctx: &Ctx<'_>, number: u32) -> String {
    match ctx
        .layouts
        .enum_name("MPII_Object_kind", i128::from(number))
    {
        Ok(Some(name)) => format!("{name} ({number})"),
        _ => format!("object kind {number}"),
    }
}

/// Checks a handle's kind and storage bits before any read.
pub(crate) fn decode_checked(
    ctx: &Ctx<'_>,
    spec: &PoolSpec,
    raw: u32,
) -> Result<MpichHandle, HandleError> {
    let h = if spec.kind == HandleKind::Request {
        MpichHandle::decode_request(raw)
    } else {
        MpichHandle::decode(raw)
    };
    let expected = kind_number(ctx, spec)?;
    if h.object_kind != expected {
        return Err(HandleError::WrongKind {
            expected: spec.kind,
            value: raw,
            found: kind_name(ctx, h.object_kind),
        });
    }
    if h.storage == Storage::Invalid {
        return Err(HandleError::Null {
            kind: spec.kind,
            value: raw,
            name: predefined_name(spec.kind, raw)
                .unwrap_or("an invalid handle")
                .to_string(),
        });
    }
    Ok(h)
}

/// Finds the object of handle `raw` of `spec`'s kind.
pub(crate) fn locate(ctx: &Ctx<'_>, spec: &PoolSpec, raw: u32) -> Result<Located, HandleError> {
    let h = decode_checked(ctx, spec, raw)?;
    let size = ctx.size_of(spec.object_type)?;
    // Element `index` of the array at the symbol `array`, whose length is
    // the symbol's size.
    let slot = |array: &'static str, why, what, index: u64| {
        let sym = ctx.symbol(array, why)?;
        let count = sym.size / size;
        if index >= count {
            return Err(HandleError::OutOfRange {
                value: raw,
                what,
                index,
                array: array.to_string(),
                limit: count,
            });
        }
        Ok(at(sym.addr, index * size))
    };
    let (addr, allocator) = match h.storage {
        Storage::Invalid => unreachable!("decode_checked refuses invalid handles"),
        Storage::Builtin => {
            let Some((array, mask)) = spec.builtin else {
                return Err(HandleError::Invalid {
                    kind: spec.kind,
                    value: raw,
                    reason: format!("MPICH predefines no {} objects", spec.kind),
                });
            };
            let index = u64::from(raw & mask);
            (
                slot(array, "the predefined objects", "builtin index", index)?,
                None,
            )
        }
        Storage::Direct => {
            if h.pool != 0 {
                return Err(HandleError::Invalid {
                    kind: spec.kind,
                    value: raw,
                    reason: format!(
                        "only request pool 0 has direct objects, not pool {}",
                        h.pool
                    ),
                });
            }
            let index = u64::from(h.index);
            let addr = slot(
                spec.direct,
                "the preallocated objects",
                "direct index",
                index,
            )?;
            (addr, Some(allocator_of(ctx, spec, 0)?))
        }
        Storage::Indirect => {
            let alloc = allocator_of(ctx, spec, h.pool)?;
            let block = u64::from(h.block);
            let blocks = u64::try_from(alloc.indirect_size.max(0)).unwrap_or(0);
            if block >= blocks || alloc.indirect.is_null() {
                return Err(HandleError::OutOfRange {
                    value: raw,
                    what: "indirect block",
                    index: block,
                    array: format!("{} at {}", spec.mem, alloc.addr),
                    limit: if alloc.indirect.is_null() { 0 } else { blocks },
                });
            }
            let per_block = alloc.per_block().unwrap_or(0);
            let index = u64::from(h.block_index);
            if index >= per_block as u64 {
                return Err(HandleError::OutOfRange {
                    value: raw,
                    what: "index in its indirect block",
                    index,
                    array: format!("each block of {}", spec.mem),
                    limit: per_block as u64,
                });
            }
            if alloc.object_size as u64 != size {
                return Err(HandleError::Invalid {
                    kind: spec.kind,
                    value: raw,
                    reason: format!(
                        "the allocator at {} holds objects of {} bytes, the debug info says {} is {size}",
                        alloc.addr, alloc.object_size, spec.object_type
                    ),
                });
            }
            let block_ptr = alloc.block(ctx, block)?;
            if block_ptr.is_null() {
                return Err(HandleError::OutOfRange {
                    value: raw,
                    what: "indirect block",
                    index: block,
                    array: format!("{} (the block is not allocated)", spec.mem),
                    limit: block,
                });
            }
            (at(block_ptr, index.wrapping_mul(size)), Some(alloc))
        }
    };
    let header = ctx.record_prefix(addr, spec.object_type)?;
    let found = header.handle as u32;
    if found != raw {
        if h.storage == Storage::Builtin && found == 0 {
            // MPICH leaves some builtin slots empty (the predefined
            // operations are never looked up as objects).
            return Ok(Located {
                handle: h,
                addr: None,
                state: ObjectState::Live,
                ref_count: None,
            });
        }
        return Err(HandleError::NeverAllocated {
            value: raw,
            addr,
            found,
            hint: if found == 0 {
                " (the allocator has not reached it, or MPI_Init has not run)"
            } else {
                ""
            },
        });
    }
    let state = match &allocator {
        None => ObjectState::Live,
        Some(alloc) => {
            if alloc.free_set(ctx)?.contains(&addr) {
                ObjectState::Freed
            } else {
                ObjectState::Live
            }
        }
    };
    Ok(Located {
        handle: h,
        addr: Some(addr),
        state,
        ref_count: Some(header.ref_count),
    })
}

/// Request pools a handle can name: its 6 pool bits
/// ([`MpichHandle::decode_request`]), MPICH's `REQUEST_POOL_MAX`, the
/// length of `MPIR_Request_mem`.
const REQUEST_POOLS: u64 = 64;

/// The allocators of one kind: one, or for requests one per pool, side
/// by side from the allocator symbol.
struct Allocators {
    first: TargetAddr,
    size: u64,
    count: u64,
}

impl Allocators {
    /// `spec`'s kind's: as many as the allocator symbol's size holds, or,
    /// when the symbol source does not give sizes, one per pool a handle
    /// can name.
    fn of(ctx: &Ctx<'_>, spec: &PoolSpec) -> Result<Allocators, HandleError> {
        let sym = ctx.symbol(spec.mem, "the object allocator")?;
        let size = ctx.size_of("MPIR_Object_alloc_t")?;
        let count = match (sym.size, spec.kind) {
            (0, HandleKind::Request) => REQUEST_POOLS,
            (n, _) => (n / size).max(1),
        };
        Ok(Allocators {
            first: sym.addr,
            size,
            count,
        })
    }

    /// The allocator of pool `pool`.
    fn read(&self, ctx: &Ctx<'_>, pool: u64) -> Result<Allocator, HandleError> {
        Allocator::read(ctx, at(self.first, pool * self.size))
    }
}

/// The allocator of `spec`'s kind (of request pool `pool`).
pub(crate) fn allocator_of(
    ctx: &Ctx<'_>,
    spec: &PoolSpec,
    pool: u32,
) -> Result<Allocator, HandleError> {
    let allocators = Allocators::of(ctx, spec)?;
    if u64::from(pool) >= allocators.count {
        return Err(HandleError::OutOfRange {
            value: pool,
            what: "request pool",
            index: u64::from(pool),
            array: spec.mem.to_string(),
            limit: allocators.count,
        });
    }
    allocators.read(ctx, u64::from(pool))
}

/// The two members every MPICH object starts with.
pub(crate) struct Header {
    pub(crate) handle: i64,
    pub(crate) ref_count: i64,
}

impl Ctx<'_> {
    /// Reads the `handle` and `ref_count` members of the object at `addr`.
    pub(crate) fn record_prefix(
        &self,
        addr: TargetAddr,
        object_type: &'static str,
    ) -> Result<Header, HandleError> {
        let handle = self.m(object_type, "handle")?;
        let refs = self.m(object_type, "ref_count")?;
        // Offsets and sizes come from the debug info: a sum past 2^64 is
        // a corrupt layout, refused before anything is read.
        let end = handle
            .offset
            .checked_add(handle.size)
            .zip(refs.offset.checked_add(refs.size))
            .map(|(a, b)| a.max(b))
            .ok_or(ReadError::AddressOverflow {
                what: object_type,
                addr,
                len: u64::MAX,
            })?;
        let r = self.record_sized(addr, end, object_type)?;
        Ok(Header {
            handle: r.int(handle)?,
            ref_count: r.int(refs)?,
        })
    }
}

/// Every object of `spec`'s kind that exists, with its record: the
/// predefined ones MPICH has set up (when the builtin array's symbol is
/// there), then those handed out and not freed ([`live_objects`]).
pub(crate) fn objects(ctx: &Ctx<'_>, spec: &PoolSpec) -> Result<Vec<Rec>, HandleError> {
    let mut out = match spec
        .builtin
        .and_then(|(array, _)| ctx.symbols.lookup(array))
    {
        Some(array) => builtin_objects(ctx, spec, &array)?,
        None => Vec::new(),
    };
    out.extend(live_objects(ctx, spec)?);
    Ok(out)
}

/// The objects of `spec`'s kind in its builtin array `array` (the symbol)
/// whose handle is set, in array order. The array's length is its
/// symbol's size (none when the symbol source gives no sizes), at most
/// [`Limits::max_table_entries`](mpidd_read::Limits::max_table_entries)
/// objects.
fn builtin_objects(
    ctx: &Ctx<'_>,
    spec: &PoolSpec,
    array: &Symbol,
) -> Result<Vec<Rec>, HandleError> {
    let size = ctx.size_of(spec.object_type)?;
    let handle = ctx.m(spec.object_type, "handle")?;
    let count = array.size / size;
    if count > ctx.limits.max_table_entries {
        return Err(ReadError::LimitExceeded {
            what: spec.builtin.map_or(spec.object_type, |(name, _)| name),
            addr: array.addr,
            count,
            max: ctx.limits.max_table_entries,
            limit: "max_table_entries",
        }
        .into());
    }
    let mut out = ctx.records(array.addr, count, size, spec.object_type)?;
    out.retain(|r| r.int(handle).unwrap_or(0) != 0);
    Ok(out)
}

/// Every object of `spec`'s kind that MPICH has handed out and not freed,
/// with its record: the direct array, then each pool's blocks in order.
/// At most [`Limits::max_table_entries`] objects are visited.
///
/// [`Limits::max_table_entries`]: mpidd_read::Limits::max_table_entries
pub(crate) fn live_objects(ctx: &Ctx<'_>, spec: &PoolSpec) -> Result<Vec<Rec>, HandleError> {
    let size = ctx.size_of(spec.object_type)?;
    let handle = ctx.m(spec.object_type, "handle")?;
    let allocators = Allocators::of(ctx, spec)?;
    let mut out = Vec::new();
    let mut visited = 0u64;
    // Reads a run of `n` objects at `addr` in one piece, after counting
    // them against the limit.
    let mut run = |addr: TargetAddr, n: u64, what| {
        visited += n;
        if visited > ctx.limits.max_table_entries {
            return Err(HandleError::from(ReadError::LimitExceeded {
                what: "MPICH objects scanned",
                addr,
                count: visited,
                max: ctx.limits.max_table_entries,
                limit: "max_table_entries",
            }));
        }
        Ok(ctx.records(addr, n, size, what)?)
    };
    for pool in 0..allocators.count {
        let alloc = allocators.read(ctx, pool)?;
        if !alloc.initialized {
            continue;
        }
        // The pool's objects are read first, so that its free list, which
        // runs through them, is walked in the bytes read. A failure there
        // is the pool's answer only after the free list's own: the order
        // in which they were met when the list was read first.
        let mut runs = Vec::new();
        let mut failed = None;
        let mut step = |r: Result<Vec<Rec>, HandleError>| match r {
            Ok(records) => {
                runs.push(records);
                true
            }
            Err(e) => {
                failed = Some(e);
                false
            }
        };
        let mut going = true;
        if pool == 0 {
            going = step(
                ctx.symbol(spec.direct, "the preallocated objects")
                    .and_then(|direct| {
                        // A symbol source that knows addresses only (a
                        // debugger's `mqs_find_symbol`) leaves the array's
                        // length to the allocator, which records it for
                        // MPICH's own use.
                        let count = match direct.size {
                            0 => u64::try_from(alloc.direct_size.max(0)).unwrap_or(0),
                            n => n / size,
                        };
                        run(direct.addr, count, "MPICH direct objects")
                    }),
            );
        }
        if let (true, Some(per_block), false) = (going, alloc.per_block(), alloc.indirect.is_null())
        {
            for block in 0..u64::try_from(alloc.indirect_size).unwrap_or(0) {
                let read = alloc
                    .block(ctx, block)
                    .map_err(HandleError::from)
                    .and_then(|ptr| match ptr.is_null() {
                        true => Ok(Vec::new()),
                        false => run(ptr, per_block as u64, "MPICH indirect block"),
                    });
                if !step(read) {
                    break;
                }
            }
        }
        let free = alloc.free_set_over(ctx, &runs)?;
        if let Some(e) = failed {
            return Err(e);
        }
        out.extend(
            runs.into_iter()
                .flatten()
                .filter(|r| r.int(handle).unwrap_or(0) != 0 && !free.contains(&r.base)),
        );
    }
    Ok(out)
}

/// One object MPICH has handed out and not freed, as read from a pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveObject {
    /// Where the object is.
    pub addr: TargetAddr,
    /// Its bytes: `sizeof` its type, in the target's byte order.
    pub bytes: Vec<u8>,
}

impl From<Rec> for LiveObject {
    fn from(r: Rec) -> LiveObject {
        LiveObject {
            addr: r.base,
            bytes: r.bytes,
        }
    }
}

/// The predefined objects of `kind` that MPICH has set up, from its
/// `_builtin` array (`MPI_COMM_WORLD` and `MPI_COMM_SELF` for
/// communicators): the entries whose handle is set, in array order. The
/// array's length comes from its symbol's size; kinds with no such array
/// give none. Bounded by [`Limits::max_table_entries`].
///
/// With [`live_mpich_objects`], this is every object of the kind that
/// exists: how the queue decoder finds communicators in an MPICH built
/// without debugger support, which keeps no list of them.
///
/// [`Limits::max_table_entries`]: mpidd_read::Limits::max_table_entries
pub fn builtin_mpich_objects(
    mem: &dyn mpidd_read::TargetMemory,
    symbols: &dyn mpidd_read::SymbolSource,
    layouts: &dyn mpidd_read::Layouts,
    limits: mpidd_read::Limits,
    kind: HandleKind,
) -> Result<Vec<LiveObject>, HandleError> {
    let Some((spec, builtin)) = spec(kind).and_then(|s| Some((s, s.builtin?.0))) else {
        return Ok(Vec::new());
    };
    let ctx = Ctx::new(mem, symbols, layouts, limits);
    let array = ctx.symbol(builtin, "the predefined objects")?;
    if array.size == 0 {
        return Err(HandleError::Invalid {
            kind,
            value: 0,
            reason: format!("the size of `{builtin}` is unknown, so its number of objects is too"),
        });
    }
    Ok(builtin_objects(&ctx, &spec, &array)?
        .into_iter()
        .map(LiveObject::from)
        .collect())
}

/// Every object of `kind` that MPICH has handed out and not freed, from
/// its direct array and every pool's indirect blocks (for requests, every
/// request pool), in that order; objects on an allocator's free list are
/// left out. Bounded by [`Limits::max_table_entries`] objects visited, and
/// the free lists by [`Limits::max_list_len`] with cycle checks.
///
/// This is the walk the handle decoders use to find what refers to an
/// object; the queue decoders use it to find requests that no queue holds
/// (MPICH's CH4 device hands some straight to its network module).
///
/// [`Limits::max_table_entries`]: mpidd_read::Limits::max_table_entries
/// [`Limits::max_list_len`]: mpidd_read::Limits::max_list_len
pub fn live_mpich_objects(
    mem: &dyn mpidd_read::TargetMemory,
    symbols: &dyn mpidd_read::SymbolSource,
    layouts: &dyn mpidd_read::Layouts,
    limits: mpidd_read::Limits,
    kind: HandleKind,
) -> Result<Vec<LiveObject>, HandleError> {
    let Some(spec) = spec(kind) else {
        return Err(HandleError::Invalid {
            kind,
            value: 0,
            reason: format!("{kind} objects are not kept in MPICH's object pools"),
        });
    };
    let ctx = Ctx::new(mem, symbols, layouts, limits);
    Ok(live_objects(&ctx, &spec)?
        .into_iter()
        .map(LiveObject::from)
        .collect())
}
