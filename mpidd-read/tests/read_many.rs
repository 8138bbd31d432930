//! Batched reads agree with one-by-one reads: `read_many` with
//! `read_into`, and `read_c_strings` with `read_c_string`, on synthetic
//! memory and on this test's own live process.

use mpidd_read::{LiveProcess, ReadError, SyntheticMemory, TargetMemory};
use mpidd_types::{TargetAbi, TargetAddr};
use proptest::prelude::*;

/// Errors compare by what they say; synthetic memory has no OS errors.
fn same(a: &Result<Vec<u8>, ReadError>, b: &Result<Vec<u8>, ReadError>) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

/// Segments of mostly non-NUL bytes, so strings run long, into gaps and
/// past the cap.
fn memory() -> impl Strategy<Value = (bool, Vec<(u64, Vec<u8>)>)> {
    let byte = prop_oneof![9 => 1u8..=255, 1 => Just(0u8)];
    let segment = (0u64..16, proptest::collection::vec(byte, 0..700));
    (any::<bool>(), proptest::collection::vec(segment, 1..5))
}

fn build(wide: bool, segments: &[(u64, Vec<u8>)]) -> (SyntheticMemory, Vec<u64>) {
    let abi = if wide {
        TargetAbi::X86_64
    } else {
        TargetAbi::I686
    };
    let mut mem = SyntheticMemory::new(abi);
    let mut ends = Vec::new();
    for (slot, bytes) in segments {
        // Slot 15 is the top of the 32-bit address space, where a string
        // read runs out of addresses.
        let start = if *slot == 15 {
            u64::from(u32::MAX) + 1 - bytes.len() as u64
        } else {
            0x1_0000 * (slot + 1)
        };
        ends.push(start);
        ends.push(start + bytes.len() as u64);
        mem.map(TargetAddr(start), bytes.clone());
    }
    (mem, ends)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn batched_strings_agree_with_one_by_one(
        (wide, segments) in memory(),
        picks in proptest::collection::vec((0usize..64, -300i64..800), 0..80),
        max_len in prop_oneof![0usize..40, 200usize..300, Just(4096usize)],
    ) {
        let (mem, anchors) = build(wide, &segments);
        // Addresses near segment starts and ends (in, before, past), some
        // repeated, and a few nowhere.
        let addrs: Vec<TargetAddr> = picks
            .iter()
            .map(|&(k, off)| {
                let base = anchors.get(k % (anchors.len() + 1)).copied().unwrap_or(0x9_0000);
                TargetAddr(base.saturating_add_signed(off))
            })
            .collect();
        let batched = mem.read_c_strings(&addrs, max_len);
        prop_assert_eq!(batched.len(), addrs.len());
        for (a, got) in addrs.iter().zip(&batched) {
            let want = mem.read_c_string(*a, max_len);
            prop_assert!(same(got, &want), "at {a}: batched {got:?}, one by one {want:?}");
        }
    }

    #[test]
    fn read_many_agrees_with_read_into(
        (wide, segments) in memory(),
        picks in proptest::collection::vec((0usize..64, -300i64..800, 0usize..600), 0..40),
    ) {
        let (mem, anchors) = build(wide, &segments);
        let mut bufs: Vec<(TargetAddr, Vec<u8>)> = picks
            .iter()
            .map(|&(k, off, len)| {
                let base = anchors.get(k % (anchors.len() + 1)).copied().unwrap_or(0x9_0000);
                (TargetAddr(base.saturating_add_signed(off)), vec![0u8; len])
            })
            .collect();
        let mut requests: Vec<(TargetAddr, &mut [u8])> =
            bufs.iter_mut().map(|(a, b)| (*a, &mut b[..])).collect();
        let counts = mem.read_many(&mut requests);
        for ((addr, buf), count) in bufs.iter().zip(counts) {
            let mut one = vec![0u8; buf.len()];
            let n = mem.read_into(*addr, &mut one).unwrap();
            prop_assert_eq!(count.unwrap(), n);
            prop_assert_eq!(&buf[..n], &one[..n]);
        }
    }
}

/// Where a mapping of this process ends with no mapping right after it.
fn mapping_end_before_gap() -> u64 {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("read /proc/self/maps");
    // (start, end, readable by an ordinary read)
    let ranges: Vec<(u64, u64, bool)> = maps
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (s, e) = f.next()?.split_once('-')?;
            let readable = f.next()?.starts_with('r')
                && !l.ends_with("[vvar]")
                && !l.ends_with("[vsyscall]")
                && !l.ends_with("[vvar_vclock]");
            Some((
                u64::from_str_radix(s, 16).ok()?,
                u64::from_str_radix(e, 16).ok()?,
                readable,
            ))
        })
        .collect();
    ranges
        .windows(2)
        .find(|w| w[0].2 && w[0].1 < w[1].0 && w[0].1 - w[0].0 >= 0x1000)
        .map(|w| w[0].1)
        .expect("a mapping followed by a gap in /proc/self/maps")
}

#[test]
fn live_read_many_agrees_with_read_into_across_batches_and_faults() {
    let me = LiveProcess::open(std::process::id() as i32).expect("open own process");
    let data: Vec<u8> = (0..64 * 1024).map(|i| (i * 7 % 251) as u8).collect();
    let base = data.as_ptr() as u64;
    let edge = mapping_end_before_gap();
    // More ranges than one process_vm_readv takes, with ranges that fault
    // in the middle: unmapped, straddling the end of a mapping, and empty.
    let mut specs: Vec<(u64, usize)> = Vec::new();
    for i in 0..2500u64 {
        specs.push(match i % 97 {
            13 => (8, 16),
            29 => (edge - 10, 40),
            41 => (base + i, 0),
            _ => (base + (i * 13) % 60_000, 1 + (i % 300) as usize),
        });
    }
    let mut bufs: Vec<Vec<u8>> = specs.iter().map(|&(_, l)| vec![0u8; l]).collect();
    let mut requests: Vec<(TargetAddr, &mut [u8])> = specs
        .iter()
        .zip(bufs.iter_mut())
        .map(|(&(a, _), b)| (TargetAddr(a), &mut b[..]))
        .collect();
    let counts = me.read_many(&mut requests);
    assert_eq!(counts.len(), specs.len());
    for ((&(addr, len), buf), count) in specs.iter().zip(&bufs).zip(counts) {
        let mut one = vec![0u8; len];
        let n = me.read_into(TargetAddr(addr), &mut one).unwrap();
        let count = count.unwrap();
        assert_eq!(count, n, "count at {addr:#x} len {len}");
        assert_eq!(&buf[..n], &one[..n], "bytes at {addr:#x}");
        let expect = if addr == 8 {
            0
        } else if addr == edge - 10 {
            10
        } else {
            len
        };
        assert_eq!(count, expect, "at {addr:#x}");
    }
}

#[test]
fn live_strings_agree_with_one_by_one() {
    let me = LiveProcess::open(std::process::id() as i32).expect("open own process");
    let mut text = Vec::new();
    let mut addrs = Vec::new();
    for i in 0..1500 {
        text.push(format!("/opt/app/rank-{i}{}\0", "x".repeat(i % 400)));
    }
    for (i, t) in text.iter().enumerate() {
        addrs.push(TargetAddr(t.as_ptr() as u64));
        if i % 3 == 0 {
            addrs.push(TargetAddr(text[0].as_ptr() as u64));
        }
    }
    addrs.push(TargetAddr(8));
    addrs.push(TargetAddr(mapping_end_before_gap() - 3));
    let batched = me.read_c_strings(&addrs, 300);
    for (a, got) in addrs.iter().zip(&batched) {
        let want = me.read_c_string(*a, 300);
        assert!(same(got, &want), "at {a}: {got:?} vs {want:?}");
    }
    assert_eq!(batched[0].as_deref().unwrap(), b"/opt/app/rank-0");
}
