//! The layouts of an MPICH build that keeps its symbol table but no debug
//! info (Intel MPI's `libmpi.so.12`, an MPICH 3.4a2 derivative), found on
//! the process itself and accepted only where objects whose contents MPICH
//! fixes decode to what they must:
//!
//! - the object allocators (`MPIR_Object_alloc_t`): one of MPICH's member
//!   orders (3.3 to 3.4a2's, and 3.4's on, which added two counters), laid
//!   out by C's rules for the target's word, is taken only if every pool's
//!   allocator points `direct` at its own `_direct` array, whose symbol
//!   size is `size` times `direct_size`, and its `kind` is the object kind
//!   that MPICH's handles of that kind carry in their bits;
//! - `MPIR_Comm`: its size is the allocator's; `handle` and `ref_count`
//!   lead, as in every MPICH object; `name` is where the builtin
//!   `MPI_COMM_WORLD` and `MPI_COMM_SELF` hold those names; `remote_size`,
//!   `rank`, `local_size` and the context ids are where MPICH's member
//!   order puts them, found by the one position at which the world and
//!   self communicators read as they must (sizes N and 1, ranks r < N and
//!   0, context ids 0 and equal ones);
//! - `MPIR_Group`'s `size` and `rank`, where `MPI_GROUP_EMPTY` reads as it
//!   must;
//! - the other kinds' sizes, from their allocators, and their `handle` and
//!   `ref_count`, checked on their builtin objects.
//!
//! What cannot be checked so (the communicator's group and attribute
//! pointers, the request's members, CH4's own structures) is left out, so
//! a view says it is not available rather than read a guess.

use mpidd_read::{LayoutTable, ReadError, SymbolSource, TargetMemory};
use mpidd_types::TargetAddr;

/// Layouts found on a process, with what each was checked against.
#[derive(Debug)]
pub struct DerivedLayouts {
    /// The layouts, for [`open_resolver`](crate::open_resolver) as its
    /// `dwarf` argument.
    pub table: LayoutTable,
    /// One line per check that held.
    pub checked: Vec<String>,
}

/// Why no layouts were accepted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeriveError {
    /// A symbol the derivation starts from is not in the process.
    #[error("{0} is not among the process's symbols")]
    NoSymbol(&'static str),
    /// Target memory could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A known object did not decode to what it must.
    #[error("{record} at {addr}: {reason}")]
    Refused {
        /// The record read.
        record: String,
        /// Its address.
        addr: TargetAddr,
        /// What does not hold.
        reason: String,
    },
}

/// A pool of one object kind: its type, its `MPII_Object_kind`
/// enumerator, its allocator and direct array, its builtin array and the
/// mask of a builtin handle's index, and the object kind its handles carry
/// (bits 26 to 29 of any of its handles, e.g. `MPI_COMM_WORLD` =
/// 0x44000000 is kind 1).
struct Pool {
    object_type: &'static str,
    enumerator: &'static str,
    mem: &'static str,
    direct: &'static str,
    builtin: Option<(&'static str, u32)>,
    kind: u32,
}

const POOLS: &[Pool] = &[
    pool(
        "MPIR_Comm",
        "MPIR_COMM",
        "MPIR_Comm_mem",
        "MPIR_Comm_direct",
        Some(("MPIR_Comm_builtin", 0x03ff_ffff)),
        1,
    ),
    pool(
        "MPIR_Group",
        "MPIR_GROUP",
        "MPIR_Group_mem",
        "MPIR_Group_direct",
        Some(("MPIR_Group_builtin", 0x03ff_ffff)),
        2,
    ),
    pool(
        "MPIR_Datatype",
        "MPIR_DATATYPE",
        "MPIR_Datatype_mem",
        "MPIR_Datatype_direct",
        Some(("MPIR_Datatype_builtin", 0xff)),
        3,
    ),
    pool(
        "MPIR_Errhandler",
        "MPIR_ERRHANDLER",
        "MPIR_Errhandler_mem",
        "MPIR_Errhandler_direct",
        Some(("MPIR_Errhandler_builtin", 0x3)),
        5,
    ),
    pool(
        "MPIR_Op",
        "MPIR_OP",
        "MPIR_Op_mem",
        "MPIR_Op_direct",
        Some(("MPIR_Op_builtin", 0xff)),
        6,
    ),
    pool(
        "MPIR_Info",
        "MPIR_INFO",
        "MPIR_Info_mem",
        "MPIR_Info_direct",
        Some(("MPIR_Info_builtin", 0x03ff_ffff)),
        7,
    ),
    pool(
        "MPIR_Win",
        "MPIR_WIN",
        "MPIR_Win_mem",
        "MPIR_Win_direct",
        None,
        8,
    ),
    pool(
        "MPIR_Request",
        "MPIR_REQUEST",
        "MPIR_Request_mem",
        "MPIR_Request_direct",
        None,
        11,
    ),
];

const fn pool(
    object_type: &'static str,
    enumerator: &'static str,
    mem: &'static str,
    direct: &'static str,
    builtin: Option<(&'static str, u32)>,
    kind: u32,
) -> Pool {
    Pool {
        object_type,
        enumerator,
        mem,
        direct,
        builtin,
        kind,
    }
}

/// An object type and its size.
type ObjectSize = (&'static str, u64);

/// A C member: its name and whether it is a pointer (else a 4-byte int).
type CMember = (&'static str, bool);

/// `MPIR_Object_alloc_t`'s leading members in MPICH 3.3 to 3.4a2, and in
/// 3.4 on (`num_allocated` and `num_avail` added); a mutex follows.
const ALLOC_ORDERS: [&[CMember]; 2] = [
    &[
        ("avail", true),
        ("initialized", false),
        ("indirect", true),
        ("indirect_size", false),
        ("kind", false),
        ("size", false),
        ("direct", true),
        ("direct_size", false),
    ],
    &[
        ("avail", true),
        ("initialized", false),
        ("indirect", true),
        ("indirect_size", false),
        ("num_allocated", false),
        ("num_avail", false),
        ("kind", false),
        ("size", false),
        ("direct", true),
        ("direct_size", false),
    ],
];

/// MPICH's `MPI_MAX_OBJECT_NAME`, the size of an object's `name`.
const MAX_OBJECT_NAME: u64 = 128;
/// The builtin communicators' handles.
const COMM_WORLD: u32 = 0x4400_0000;
const COMM_SELF: u32 = 0x4400_0001;
/// `MPI_GROUP_EMPTY`, the one builtin group.
const GROUP_EMPTY: u32 = 0x4800_0000;
/// MPICH's `MPI_UNDEFINED`.
const MPI_UNDEFINED: i64 = -32766;

/// Offsets of `members` laid out by C's rules: ints of 4 bytes, pointers
/// of `word` bytes, each aligned to its size.
fn c_offsets(members: &[CMember], word: u64) -> Vec<(&'static str, u64, u64)> {
    let mut at = 0u64;
    members
        .iter()
        .map(|&(name, pointer)| {
            let size = if pointer { word } else { 4 };
            at = at.next_multiple_of(size);
            let member = (name, at, size);
            at += size;
            member
        })
        .collect()
}

/// Reads the process's bytes and symbols for the derivation.
struct Reader<'a> {
    memory: &'a dyn TargetMemory,
    symbols: &'a dyn SymbolSource,
    word: u64,
}

impl Reader<'_> {
    fn symbol(&self, name: &'static str) -> Result<mpidd_read::Symbol, DeriveError> {
        self.symbols.lookup(name).ok_or(DeriveError::NoSymbol(name))
    }

    fn bytes(
        &self,
        addr: TargetAddr,
        len: u64,
        what: &'static str,
    ) -> Result<Vec<u8>, DeriveError> {
        // Every record read here is an allocator or one object: a few KiB.
        let len = usize::try_from(len.min(1 << 16)).unwrap_or(0);
        let mut buf = vec![0u8; len];
        self.memory.read_exact(addr, &mut buf, what)?;
        Ok(buf)
    }

    fn uint(&self, bytes: &[u8], offset: u64, size: u64) -> Option<u64> {
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(usize::try_from(size).ok()?)?;
        let order = self.memory.abi().byte_order;
        Some(mpidd_read::decode_uint(bytes.get(start..end)?, order))
    }

    fn int(&self, bytes: &[u8], offset: u64) -> Option<i64> {
        self.uint(bytes, offset, 4)
            .map(|v| i64::from(v as u32 as i32))
    }
}

/// Derives and checks the layouts of the MPICH library of a process from
/// the objects MPICH fixes: each pool's allocator and direct array, the
/// builtin objects, the predefined communicators
/// ([`DerivedLayouts::checked`] lists each check made). Reads a few KiB.
pub fn derive_mpich_layouts(
    memory: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
) -> Result<DerivedLayouts, DeriveError> {
    let word = memory.abi().address_bytes() as u64;
    let r = Reader {
        memory,
        symbols,
        word,
    };
    let mut table = LayoutTable::default();
    let mut checked = Vec::new();
    let sizes = allocators(&r, &mut table, &mut checked)?;
    let size_of = |t: &str| sizes.iter().find(|(n, _)| *n == t).map(|p| p.1);
    // Every MPICH object leads with its handle and reference count; the
    // free list links through the word after them.
    for p in POOLS {
        let Some(size) = size_of(p.object_type) else {
            continue;
        };
        table
            .add_type(p.object_type, size)
            .add_member(p.object_type, "handle", 0, 4)
            .add_member(p.object_type, "ref_count", 4, 4);
        if let Some((builtin, mask)) = p.builtin {
            check_builtins(&r, p, builtin, mask, size, &mut checked)?;
        }
    }
    table
        .add_type("MPIR_Handle_common", 8 + word)
        .add_member("MPIR_Handle_common", "handle", 0, 4)
        .add_member("MPIR_Handle_common", "ref_count", 4, 4)
        .add_member(
            "MPIR_Handle_common",
            "next",
            8u64.next_multiple_of(word),
            word,
        );
    if let Some(size) = size_of("MPIR_Comm") {
        communicator(&r, size, &mut table, &mut checked)?;
    }
    if size_of("MPIR_Group").is_some() {
        group(&r, &mut table, &mut checked)?;
    }
    Ok(DerivedLayouts { table, checked })
}

/// Finds the allocator layout every pool agrees with; adds it and the
/// object kinds to `table`; returns each pool's object size.
fn allocators(
    r: &Reader<'_>,
    table: &mut LayoutTable,
    checked: &mut Vec<String>,
) -> Result<Vec<ObjectSize>, DeriveError> {
    let comm_mem = r.symbol("MPIR_Comm_mem")?;
    // One allocator: the symbol's size is the type's.
    let alloc_size = comm_mem.size;
    let mut refusals = Vec::new();
    for order in ALLOC_ORDERS {
        let members = c_offsets(order, r.word);
        let end = members.last().map_or(0, |m| m.1 + m.2);
        if alloc_size < end {
            refusals.push(format!(
                "{} members end past its {alloc_size} bytes",
                order.len()
            ));
            continue;
        }
        match pools_agree(r, &members, alloc_size) {
            Ok((sizes, lines)) => {
                table.add_type("MPIR_Object_alloc_t", alloc_size);
                for (name, offset, size) in &members {
                    table.add_member("MPIR_Object_alloc_t", name, *offset, *size);
                }
                let kinds: Vec<(&str, i128)> = POOLS
                    .iter()
                    .map(|p| (p.enumerator, i128::from(p.kind)))
                    .collect();
                table.add_enum("MPII_Object_kind", &kinds);
                checked.extend(lines);
                return Ok(sizes);
            }
            Err(reason) => refusals.push(reason),
        }
    }
    Err(DeriveError::Refused {
        record: "MPIR_Object_alloc_t (MPIR_Comm_mem, ...)".to_string(),
        addr: comm_mem.addr,
        reason: format!("no MPICH member order fits: {}", refusals.join("; ")),
    })
}

/// Whether every pool's first allocator reads as it must under `members`;
/// each pool's object size and the checks made, else why not.
fn pools_agree(
    r: &Reader<'_>,
    members: &[(&'static str, u64, u64)],
    alloc_size: u64,
) -> Result<(Vec<ObjectSize>, Vec<String>), String> {
    let at = |name: &str| members.iter().find(|m| m.0 == name).map(|m| (m.1, m.2));
    let field = |bytes: &[u8], name: &str| at(name).and_then(|(o, s)| r.uint(bytes, o, s));
    let mut sizes = Vec::new();
    let mut lines = Vec::new();
    for p in POOLS {
        let (Some(mem), Some(direct)) = (r.symbols.lookup(p.mem), r.symbols.lookup(p.direct))
        else {
            continue;
        };
        let bytes = r
            .bytes(mem.addr, alloc_size, "MPIR_Object_alloc_t")
            .map_err(|e| e.to_string())?;
        let (Some(kind), Some(size), Some(dir), Some(count)) = (
            field(&bytes, "kind"),
            field(&bytes, "size"),
            field(&bytes, "direct"),
            field(&bytes, "direct_size"),
        ) else {
            return Err(format!("{} is shorter than its members", p.mem));
        };
        let pools = if mem.size > alloc_size {
            mem.size / alloc_size
        } else {
            1
        };
        // The direct symbol is the first pool's array (MPICH 4.0), or one
        // array per request pool (Intel MPI's, one per VCI).
        let one = size.checked_mul(count);
        let holds =
            one == Some(direct.size) || one.and_then(|n| n.checked_mul(pools)) == Some(direct.size);
        if kind != u64::from(p.kind) || dir != direct.addr.0 || !holds {
            return Err(format!(
                "{}: kind {kind}, direct {dir:#x}, {count} objects of {size} bytes, where \
                 kind {}, direct {:#x} ({} bytes in {pools} pool(s)) must be",
                p.mem, p.kind, direct.addr.0, direct.size
            ));
        }
        lines.push(format!(
            "{}: kind {kind} as its handles say, direct = &{} holding {count} x {size} bytes",
            p.mem, p.direct
        ));
        sizes.push((p.object_type, size));
    }
    if sizes.is_empty() {
        return Err("no pool's allocator and direct array are in the symbols".to_string());
    }
    Ok((sizes, lines))
}

/// Every builtin object of a pool that is set has its own handle: the
/// pool's kind, the builtin bits, its index.
fn check_builtins(
    r: &Reader<'_>,
    p: &Pool,
    builtin: &'static str,
    mask: u32,
    size: u64,
    checked: &mut Vec<String>,
) -> Result<(), DeriveError> {
    let Some(sym) = r.symbols.lookup(builtin) else {
        return Ok(());
    };
    if size == 0 || sym.size % size != 0 {
        return Err(DeriveError::Refused {
            record: builtin.to_string(),
            addr: sym.addr,
            reason: format!(
                "{} bytes is no whole number of {size}-byte objects",
                sym.size
            ),
        });
    }
    let bytes = r.bytes(sym.addr, sym.size, "builtin objects")?;
    let mut set = 0;
    for i in 0..sym.size / size {
        let handle = r.uint(&bytes, i * size, 4).unwrap_or(0) as u32;
        if handle == 0 {
            continue;
        }
        let ok =
            handle >> 30 == 1 && (handle >> 26) & 0xf == p.kind && u64::from(handle & mask) == i;
        if !ok {
            return Err(DeriveError::Refused {
                record: format!("{builtin}[{i}]"),
                addr: TargetAddr(sym.addr.0 + i * size),
                reason: format!("handle {handle:#x} is not builtin {} #{i}", p.enumerator),
            });
        }
        set += 1;
    }
    // MPICH leaves some builtin arrays empty (the predefined operations'):
    // nothing to check there, but the communicators must be set.
    if set == 0 {
        if p.kind == COMM_WORLD >> 26 & 0xf {
            return Err(DeriveError::Refused {
                record: builtin.to_string(),
                addr: sym.addr,
                reason: "no builtin communicator is set".to_string(),
            });
        }
        return Ok(());
    }
    checked.push(format!(
        "{builtin}: {set} object(s) of {size} bytes carry their own handles"
    ));
    Ok(())
}

/// `MPIR_Comm`'s name, sizes, rank and context ids, from the builtin
/// world and self communicators.
fn communicator(
    r: &Reader<'_>,
    size: u64,
    table: &mut LayoutTable,
    checked: &mut Vec<String>,
) -> Result<(), DeriveError> {
    const C: &str = "MPIR_Comm";
    let sym = r.symbol("MPIR_Comm_builtin")?;
    let world = r.bytes(sym.addr, size, "MPI_COMM_WORLD")?;
    let self_at = TargetAddr(sym.addr.0 + size);
    let me = r.bytes(self_at, size, "MPI_COMM_SELF")?;
    let refuse = |reason: String| DeriveError::Refused {
        record: "MPIR_Comm_builtin[0..2]".to_string(),
        addr: sym.addr,
        reason,
    };
    let handles = (r.uint(&world, 0, 4), r.uint(&me, 0, 4));
    if handles != (Some(u64::from(COMM_WORLD)), Some(u64::from(COMM_SELF))) {
        return Err(refuse(format!(
            "handles {handles:x?}, not MPI_COMM_WORLD's and MPI_COMM_SELF's"
        )));
    }
    let name = find(&world, b"MPI_COMM_WORLD\0")
        .filter(|&o| {
            me.get(o..)
                .is_some_and(|s| s.starts_with(b"MPI_COMM_SELF\0"))
        })
        .ok_or_else(|| refuse("no offset holds both names".to_string()))? as u64;
    let name_size = MAX_OBJECT_NAME.min(size - name);
    // remote_size, rank, attributes (a pointer), local_size.
    let layout = |o: u64| {
        let attributes = (o + 8).next_multiple_of(r.word);
        (o, o + 4, attributes, attributes + r.word)
    };
    let fits = |o: u64| {
        let (remote, rank, _, local) = layout(o);
        let n = r.int(&world, remote)?;
        let ok = n >= 1
            && r.int(&world, local)? == n
            && (0..n).contains(&r.int(&world, rank)?)
            && r.int(&me, remote)? == 1
            && r.int(&me, local)? == 1
            && r.int(&me, rank)? == 0;
        Some(ok)
    };
    let candidates: Vec<u64> = (8..name)
        .step_by(4)
        .filter(|&o| fits(o) == Some(true))
        .collect();
    let [o] = candidates[..] else {
        return Err(refuse(format!(
            "remote_size, rank and local_size fit at {} positions ({candidates:?}), not one",
            candidates.len()
        )));
    };
    let (remote, rank, _, local) = layout(o);
    table
        .add_member(C, "name", name, name_size)
        .add_member(C, "remote_size", remote, 4)
        .add_member(C, "rank", rank, 4)
        .add_member(C, "local_size", local, 4);
    checked.push(format!(
        "MPIR_Comm: name at {name}, remote_size {remote}, rank {rank}, local_size {local}: \
         the world has {} ranks and this is rank {}, self has 1 and rank 0",
        r.int(&world, local).unwrap_or(0),
        r.int(&world, rank).unwrap_or(0)
    ));
    // The context ids come just before: 32-bit with extended context bits
    // (Intel's), else 16-bit. The world's are 0; self's equal, not 0.
    for id in [4u64, 2] {
        let Some(first) = o.checked_sub(2 * id) else {
            continue;
        };
        let ids = |b: &[u8]| (r.uint(b, first, id), r.uint(b, first + id, id));
        let (w, s) = (ids(&world), ids(&me));
        if w == (Some(0), Some(0)) && s.0.is_some_and(|v| v != 0) && s.0 == s.1 {
            table.add_member(C, "context_id", first, id).add_member(
                C,
                "recvcontext_id",
                first + id,
                id,
            );
            checked.push(format!(
                "MPIR_Comm: context ids of {id} bytes at {first}: the world's 0, self's {}",
                s.0.unwrap_or(0)
            ));
            break;
        }
    }
    Ok(())
}

/// `MPIR_Group`'s `size` and `rank`, which MPICH puts right after the
/// header: taken when the builtin `MPI_GROUP_EMPTY` reads there as it
/// must (no members, rank `MPI_UNDEFINED`); else left out.
fn group(
    r: &Reader<'_>,
    table: &mut LayoutTable,
    checked: &mut Vec<String>,
) -> Result<(), DeriveError> {
    let Some(sym) = r.symbols.lookup("MPIR_Group_builtin") else {
        return Ok(());
    };
    let empty = r.bytes(sym.addr, 16, "MPI_GROUP_EMPTY")?;
    let read = (r.uint(&empty, 0, 4), r.int(&empty, 8), r.int(&empty, 12));
    if read == (Some(u64::from(GROUP_EMPTY)), Some(0), Some(MPI_UNDEFINED)) {
        table
            .add_member("MPIR_Group", "size", 8, 4)
            .add_member("MPIR_Group", "rank", 12, 4);
        checked.push(
            "MPIR_Group: size at 8 and rank at 12: MPI_GROUP_EMPTY has 0 members and rank \
             MPI_UNDEFINED"
                .to_string(),
        );
    }
    Ok(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_laid_out_by_cs_rules_for_the_word() {
        let lp64 = c_offsets(ALLOC_ORDERS[0], 8);
        let at = |l: &[(&str, u64, u64)], n: &str| l.iter().find(|m| m.0 == n).unwrap().1;
        assert_eq!(
            [
                at(&lp64, "kind"),
                at(&lp64, "size"),
                at(&lp64, "direct"),
                at(&lp64, "direct_size")
            ],
            [28, 32, 40, 48]
        );
        let ilp32 = c_offsets(ALLOC_ORDERS[0], 4);
        assert_eq!([at(&ilp32, "direct"), at(&ilp32, "direct_size")], [24, 28]);
        // MPICH 4.0.2's, as its debug info has them (its Debian profile).
        let v4 = c_offsets(ALLOC_ORDERS[1], 8);
        assert_eq!(
            [
                at(&v4, "kind"),
                at(&v4, "size"),
                at(&v4, "direct"),
                at(&v4, "direct_size")
            ],
            [36, 40, 48, 56]
        );
    }

    use mpidd_read::{Layouts, SymbolTable, SyntheticMemory};
    use mpidd_types::TargetAbi;

    const LIB: &str = "libmpi.so.12";

    /// An MPICH 3.4a2-style process (Intel MPI's layout) with only the
    /// communicator pool: its allocator, 8 direct and 3 builtin objects of
    /// 808 bytes, world (rank 2 of 4) and self set. `direct_at` is what
    /// the allocator says its direct array is, `world_name` the world's name.
    fn process(direct_at: u64, world_name: &'static [u8]) -> (SyntheticMemory, SymbolTable) {
        let (mem_at, direct, builtin) = (0x1000u64, 0x10_000u64, 0x20_000u64);
        let mut m = SyntheticMemory::new(TargetAbi::X86_64);
        let mut alloc = vec![0u8; 64];
        alloc[8..12].copy_from_slice(&1u32.to_le_bytes());
        alloc[28..32].copy_from_slice(&1u32.to_le_bytes());
        alloc[32..36].copy_from_slice(&808u32.to_le_bytes());
        alloc[40..48].copy_from_slice(&direct_at.to_le_bytes());
        alloc[48..52].copy_from_slice(&8u32.to_le_bytes());
        m.map(TargetAddr(mem_at), alloc);
        m.map(TargetAddr(direct), vec![0; 8 * 808]);
        let mut comms = vec![0u8; 3 * 808];
        for (i, (handle, ctx, size, rank, name)) in [
            (COMM_WORLD, 0u32, 4u32, 2u32, world_name),
            (COMM_SELF, 16, 1, 0, &b"MPI_COMM_SELF"[..]),
        ]
        .into_iter()
        .enumerate()
        {
            let c = &mut comms[i * 808..(i + 1) * 808];
            let put =
                |c: &mut [u8], at: usize, v: u32| c[at..at + 4].copy_from_slice(&v.to_le_bytes());
            put(c, 0, handle);
            put(c, 4, 1);
            put(c, 64, ctx);
            put(c, 68, ctx);
            put(c, 72, size);
            put(c, 76, rank);
            put(c, 88, size);
            c[156..156 + name.len()].copy_from_slice(name);
        }
        m.map(TargetAddr(builtin), comms);
        let mut s = SymbolTable::new();
        s.insert(LIB, "MPIR_Comm_mem", TargetAddr(mem_at), 64);
        s.insert(LIB, "MPIR_Comm_direct", TargetAddr(direct), 8 * 808);
        s.insert(LIB, "MPIR_Comm_builtin", TargetAddr(builtin), 3 * 808);
        (m, s)
    }

    #[test]
    fn the_layout_that_fits_the_known_objects_is_taken() {
        let (m, s) = process(0x10_000, b"MPI_COMM_WORLD");
        let d = derive_mpich_layouts(&m, &s).unwrap();
        let t = &d.table;
        assert_eq!(t.size_of("MPIR_Comm").unwrap(), 808);
        assert_eq!(
            t.member_offset("MPIR_Object_alloc_t", "direct").unwrap(),
            40
        );
        assert_eq!(t.member_offset("MPIR_Comm", "name").unwrap(), 156);
        assert_eq!(t.member_offset("MPIR_Comm", "rank").unwrap(), 76);
        assert_eq!(t.member_offset("MPIR_Comm", "local_size").unwrap(), 88);
        assert_eq!(t.member_offset("MPIR_Comm", "context_id").unwrap(), 64);
        assert_eq!(t.enum_value("MPII_Object_kind", "MPIR_COMM").unwrap(), 1);
        assert!(
            t.member("MPIR_Comm", "local_group").is_err(),
            "nothing unchecked"
        );
    }

    #[test]
    fn an_allocator_that_does_not_point_at_its_pool_is_refused() {
        let (m, s) = process(0x30_000, b"MPI_COMM_WORLD");
        let e = derive_mpich_layouts(&m, &s).unwrap_err().to_string();
        assert!(e.contains("no MPICH member order fits"), "{e}");
        assert!(e.contains("MPIR_Comm_mem"), "{e}");
    }

    #[test]
    fn communicators_without_their_names_are_refused() {
        let (m, s) = process(0x10_000, b"MPI_COMM_WRONG");
        let e = derive_mpich_layouts(&m, &s).unwrap_err().to_string();
        assert!(e.contains("no offset holds both names"), "{e}");
    }
}
