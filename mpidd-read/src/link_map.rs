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

use crate::error::ReadError;
use crate::limits::Limits;
use crate::memory::TargetMemory;
use crate::read_budget::ReadBudget;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic_memory::SyntheticMemory;
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
