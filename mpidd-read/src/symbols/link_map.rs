//! The dynamic linker's list of loaded objects, read from target memory.
//!
//! A core without NT_FILE (qemu-user writes such cores) does not say which
//! shared libraries were loaded or where. The dynamic linker keeps that list
//! in the target itself: the executable's `DT_DEBUG` dynamic entry points
//! at `struct r_debug`, whose `r_map` heads a doubly linked list of
//! `struct link_map {l_addr, l_name, l_ld, l_next, l_prev}`, all words of
//! the target's width. glibc and musl lay the public part out the same way.

use std::collections::HashSet;

use mpidd_types::TargetAddr;
use serde::Serialize;

use crate::backend::memory::TargetMemory;
use crate::backend::read_budget::ReadBudget;
use crate::error::ReadError;
use crate::limits::Limits;

/// `DT_NULL`: the end of the dynamic array.
const DT_NULL: u64 = 0;
/// `DT_DEBUG`: the dynamic linker stores `&r_debug` in its value.
const DT_DEBUG: u64 = 21;

/// One object in the dynamic linker's list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkMapEntry {
    /// Where the `link_map` node itself is.
    pub node: TargetAddr,
    /// `l_addr`: run-time minus link-time address of the object.
    pub bias: u64,
    /// `l_name`: the path the target opened, empty for the executable.
    pub name: String,
    /// `l_ld`: the run-time address of the object's dynamic section.
    pub dynamic: TargetAddr,
}

/// Reads the dynamic array at `dynamic` (the executable's `PT_DYNAMIC` plus
/// its bias) and returns the value of `DT_DEBUG`: the address of `r_debug`,
/// or `None` when the entry is absent or still 0 (a static executable, or a
/// process that died before the dynamic linker ran).
pub fn r_debug_address<M: TargetMemory + ?Sized>(
    mem: &M,
    dynamic: TargetAddr,
    limits: &Limits,
) -> Result<Option<TargetAddr>, ReadError> {
    let word = mem.abi().address_bytes() as u64;
    for i in 0..limits.max_list_len {
        let at = TargetAddr(dynamic.0.wrapping_add(i * 2 * word));
        let tag = mem.read_pointer(at, "Elf_Dyn.d_tag")?.0;
        if tag == DT_NULL {
            return Ok(None);
        }
        if tag == DT_DEBUG {
            let value = mem.read_pointer(TargetAddr(at.0.wrapping_add(word)), "Elf_Dyn.d_val")?;
            return Ok((value.0 != 0).then_some(value));
        }
    }
    Err(ReadError::LimitExceeded {
        what: "dynamic section",
        addr: dynamic,
        count: limits.max_list_len,
        max: limits.max_list_len,
        limit: "max_list_len",
    })
}

/// Walks `r_debug.r_map` at `r_debug` to the end of the list. A list that
/// loops back on itself or runs past [`Limits::max_list_len`] is an error,
/// never an endless walk.
pub fn read_link_map<M: TargetMemory + ?Sized>(
    mem: &M,
    r_debug: TargetAddr,
    limits: &Limits,
) -> Result<Vec<LinkMapEntry>, ReadError> {
    let budget = ReadBudget::new(mem, limits);
    let mem = &budget;
    let word = mem.abi().address_bytes() as u64;
    // r_version is an int, padded to a word before r_map on every ABI here.
    let mut node = mem.read_pointer(TargetAddr(r_debug.0.wrapping_add(word)), "r_debug.r_map")?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    while node.0 != 0 {
        if !seen.insert(node.0) {
            return Err(ReadError::Cycle {
                what: "link_map.l_next",
                addr: node,
            });
        }
        if out.len() as u64 >= limits.max_list_len {
            return Err(ReadError::LimitExceeded {
                what: "link_map list",
                addr: r_debug,
                count: out.len() as u64 + 1,
                max: limits.max_list_len,
                limit: "max_list_len",
            });
        }
        let field = |i: u64| TargetAddr(node.0.wrapping_add(i * word));
        let bias = mem.read_pointer(field(0), "link_map.l_addr")?.0;
        let name_ptr = mem.read_pointer(field(1), "link_map.l_name")?;
        let dynamic = mem.read_pointer(field(2), "link_map.l_ld")?;
        let next = mem.read_pointer(field(3), "link_map.l_next")?;
        let name = if name_ptr.0 == 0 {
            String::new()
        } else {
            mem.read_string(name_ptr, limits.max_string_len)?
        };
        out.push(LinkMapEntry {
            node,
            bias,
            name,
            dynamic,
        });
        node = next;
    }
    Ok(out)
}

/// How much of an object's first page is read for its headers and notes:
/// the smallest page any Linux CPU has.
const HEADER_BYTES: usize = 4096;
/// The smallest ELF header (ELF32's).
const MIN_ELF_HEADER: usize = 52;

/// The GNU build-id of the shared object the dynamic linker placed at
/// `bias` (its [`LinkMapEntry::bias`]), read from the object's headers as
/// they are mapped in the target: a shared object's first segment starts
/// at address 0 and file offset 0, so its ELF header, program headers and
/// notes sit at `bias` on. `None` when no ELF header is there (a
/// prelinked object, the executable) or the headers hold no build-id.
/// This is how a reader that sees only the target (a message-queue library
/// under a debugger, a core without its files) tells which build of a
/// library a process runs.
pub fn mapped_build_id<M: TargetMemory + ?Sized>(
    mem: &M,
    bias: u64,
) -> Result<Option<Vec<u8>>, ReadError> {
    let mut page = vec![0u8; HEADER_BYTES];
    let at = TargetAddr(bias);
    let n = mem.read_prefix(at, &mut page, "ELF header of a loaded object")?;
    if n < MIN_ELF_HEADER {
        return Err(ReadError::ShortRead {
            what: "ELF header of a loaded object",
            addr: at,
            wanted: HEADER_BYTES,
            got: n,
        });
    }
    Ok(crate::symbols::debug_files::build_id_in_headers(&page[..n]))
}

/// The objects of the dynamic linker's list (at `r_debug`) whose names
/// `wanted` accepts, each with its [`mapped_build_id`] or the error that
/// reading it met. Only the objects asked for are read: a process maps
/// dozens.
pub fn loaded_build_ids<M: TargetMemory + ?Sized>(
    mem: &M,
    r_debug: TargetAddr,
    wanted: &dyn Fn(&str) -> bool,
    limits: &Limits,
) -> Result<LoadedBuildIds, ReadError> {
    Ok(read_link_map(mem, r_debug, limits)?
        .into_iter()
        .filter(|e| !e.name.is_empty() && wanted(&e.name))
        .map(|e| {
            let id = mapped_build_id(mem, e.bias);
            (e, id)
        })
        .collect())
}

/// What [`loaded_build_ids`] finds: each object and its build-id.
pub type LoadedBuildIds = Vec<(LinkMapEntry, Result<Option<Vec<u8>>, ReadError>)>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::synthetic_memory::SyntheticMemory;
    use mpidd_types::TargetAbi;

    fn words(abi: TargetAbi, ws: &[u64]) -> Vec<u8> {
        let mut out = Vec::new();
        for &w in ws {
            let b = w.to_be_bytes();
            let b = &b[8 - abi.address_bytes()..];
            match abi.byte_order {
                mpidd_types::ByteOrder::Big => out.extend_from_slice(b),
                mpidd_types::ByteOrder::Little => out.extend(b.iter().rev()),
            }
        }
        out
    }

    fn target(abi: TargetAbi, nodes: &[(u64, &str, u64)]) -> SyntheticMemory {
        // Dynamic array at 0x1000, r_debug at 0x2000, nodes from 0x3000 on,
        // each 0x100 apart, names at 0x8000 on.
        let mut mem = SyntheticMemory::new(abi);
        mem.map(TargetAddr(0x1000), words(abi, &[1, 5, 21, 0x2000, 0, 0]));
        let head = if nodes.is_empty() { 0 } else { 0x3000 };
        mem.map(TargetAddr(0x2000), words(abi, &[1, head]));
        for (i, &(bias, name, next)) in nodes.iter().enumerate() {
            let name_at = 0x8000 + 0x100 * i as u64;
            let mut n = name.as_bytes().to_vec();
            n.push(0);
            mem.map(TargetAddr(name_at), n);
            mem.map(
                TargetAddr(0x3000 + 0x100 * i as u64),
                words(abi, &[bias, name_at, 0x4000, next, 0]),
            );
        }
        mem
    }

    #[test]
    fn walks_the_list_on_every_width_and_order() {
        for abi in [
            TargetAbi::X86_64,
            TargetAbi::S390X,
            TargetAbi::POWERPC,
            TargetAbi::ARMHF,
        ] {
            let mem = target(abi, &[(0x40000, "", 0x3100), (0x7000, "/lib/libc.so.6", 0)]);
            let limits = Limits::default();
            let r = r_debug_address(&mem, TargetAddr(0x1000), &limits).unwrap();
            assert_eq!(r, Some(TargetAddr(0x2000)));
            let list = read_link_map(&mem, r.unwrap(), &limits).unwrap();
            assert_eq!(list.len(), 2, "{abi:?}");
            assert_eq!(list[0].bias, 0x40000);
            assert_eq!(list[1].name, "/lib/libc.so.6");
            assert_eq!(list[1].bias, 0x7000);
            assert_eq!(list[1].dynamic, TargetAddr(0x4000));
        }
    }

    #[test]
    fn a_cycle_is_an_error_naming_the_node() {
        let abi = TargetAbi::X86_64;
        let mem = target(abi, &[(0, "", 0x3100), (0, "a", 0x3000)]);
        let err = read_link_map(&mem, TargetAddr(0x2000), &Limits::default()).unwrap_err();
        assert!(
            matches!(
                err,
                ReadError::Cycle {
                    addr: TargetAddr(0x3000),
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_long_list_stops_at_the_limit() {
        let abi = TargetAbi::X86_64;
        let mem = target(abi, &[(0, "", 0x3100), (0, "a", 0x3200), (0, "b", 0)]);
        let limits = Limits {
            max_list_len: 2,
            ..Limits::default()
        };
        let err = read_link_map(&mem, TargetAddr(0x2000), &limits).unwrap_err();
        assert!(matches!(
            err,
            ReadError::LimitExceeded {
                limit: "max_list_len",
                ..
            }
        ));
    }

    /// The first bytes of a shared object as the dynamic linker maps
    /// them: an ELF header for `abi`, one PT_NOTE program header and a GNU
    /// build-id note `id`, laid out by hand (the reader parses with the
    /// object crate).
    fn mapped_headers(abi: TargetAbi, id: &[u8]) -> Vec<u8> {
        let wide = abi.address_bytes() == 8;
        let be = abi.byte_order == mpidd_types::ByteOrder::Big;
        let u16b = |v: u16| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let u32b = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let word = |v: u64| -> Vec<u8> {
            if wide {
                (if be { v.to_be_bytes() } else { v.to_le_bytes() }).to_vec()
            } else {
                u32b(v as u32).to_vec()
            }
        };
        let (ehsize, phentsize) = if wide { (64u64, 56u64) } else { (52, 32) };
        let note_at = ehsize + phentsize;
        let mut note = Vec::new();
        note.extend(u32b(4));
        note.extend(u32b(id.len() as u32));
        note.extend(u32b(3)); // NT_GNU_BUILD_ID
        note.extend(b"GNU\0");
        note.extend(id);
        while note.len() % 4 != 0 {
            note.push(0);
        }
        let mut h = vec![0x7f, b'E', b'L', b'F', if wide { 2 } else { 1 }];
        h.push(if be { 2 } else { 1 });
        h.push(1);
        h.resize(16, 0);
        h.extend(u16b(3)); // ET_DYN
        h.extend(u16b(if wide { 62 } else { 3 }));
        h.extend(u32b(1));
        h.extend(word(0)); // e_entry
        h.extend(word(ehsize)); // e_phoff
        h.extend(word(0)); // e_shoff
        h.extend(u32b(0));
        h.extend(u16b(ehsize as u16));
        h.extend(u16b(phentsize as u16));
        h.extend(u16b(1));
        h.extend(u16b(0));
        h.extend(u16b(0));
        h.extend(u16b(0));
        assert_eq!(h.len() as u64, ehsize);
        h.extend(u32b(4)); // PT_NOTE
        if wide {
            h.extend(u32b(4)); // p_flags
            h.extend(word(note_at));
            h.extend(word(note_at));
            h.extend(word(note_at));
            h.extend(word(note.len() as u64));
            h.extend(word(note.len() as u64));
            h.extend(word(4));
        } else {
            h.extend(word(note_at));
            h.extend(word(note_at));
            h.extend(word(note_at));
            h.extend(word(note.len() as u64));
            h.extend(word(note.len() as u64));
            h.extend(u32b(4)); // p_flags
            h.extend(word(4));
        }
        h.extend(note);
        h
    }

    #[test]
    fn build_ids_of_listed_objects_come_from_their_mapped_headers() {
        for abi in [TargetAbi::X86_64, TargetAbi::S390X, TargetAbi::I686] {
            let mut mem = target(
                abi,
                &[
                    (0x40000, "", 0x3100),
                    (0x70000, "/usr/lib/libmpi.so.40", 0x3200),
                    (0x90000, "/lib/libc.so.6", 0x3300),
                    (0xa0000, "/usr/lib/libopen-pal.so.40", 0),
                ],
            );
            let id = [0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4];
            mem.map(TargetAddr(0x70000), mapped_headers(abi, &id));
            // libc is wanted by no one; libopen-pal's headers are not mapped.
            let wanted = |n: &str| n.contains("libmpi") || n.contains("libopen-pal");
            let found =
                loaded_build_ids(&mem, TargetAddr(0x2000), &wanted, &Limits::default()).unwrap();
            assert_eq!(found.len(), 2, "{abi:?}");
            assert_eq!(found[0].0.name, "/usr/lib/libmpi.so.40");
            assert_eq!(found[0].1.as_ref().unwrap().as_deref(), Some(&id[..]));
            let err = found[1].1.as_ref().unwrap_err();
            assert!(
                err.to_string().contains("0xa0000")
                    && err.to_string().contains("ELF header of a loaded object"),
                "{err}"
            );
        }
    }

    #[test]
    fn bytes_that_are_not_an_elf_header_have_no_build_id() {
        let abi = TargetAbi::X86_64;
        let mut mem = SyntheticMemory::new(abi);
        mem.map(TargetAddr(0x5000), vec![0x55; 4096]);
        assert_eq!(mapped_build_id(&mem, 0x5000).unwrap(), None);
        mem.map(TargetAddr(0x9000), vec![0x7f; 8]);
        assert!(mapped_build_id(&mem, 0x9000).is_err());
    }

    #[test]
    fn unmapped_nodes_and_missing_dt_debug_are_reported() {
        let abi = TargetAbi::I686;
        let mut mem = SyntheticMemory::new(abi);
        mem.map(TargetAddr(0x1000), words(abi, &[1, 5, 0, 0]));
        assert_eq!(
            r_debug_address(&mem, TargetAddr(0x1000), &Limits::default()).unwrap(),
            None
        );
        mem.map(TargetAddr(0x2000), words(abi, &[1, 0xdead0000]));
        let err = read_link_map(&mem, TargetAddr(0x2000), &Limits::default()).unwrap_err();
        assert!(err.to_string().contains("link_map.l_addr"), "{err}");
    }
}
