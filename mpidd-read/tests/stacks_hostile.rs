//! Stacks whose memory lies or fails: every walk ends, bounded, with what
//! it found and why it stopped, and never panics.
//!
//! No object is loaded, so framehop falls back to frame pointers: the
//! synthetic stacks below are frame-pointer chains (`[rbp]` the caller's
//! `rbp`, `[rbp + 8]` the return address).

use mpidd_read::{
    ElfSymbols, ReadError, StackArch, StackLimits, StackUnwinder, SyntheticMemory, TargetMemory,
    ThreadRegisters, ThreadStack,
};
use mpidd_types::{TargetAbi, TargetAddr};

const STACK: u64 = 0x7fff_0000;
const STACK_LEN: usize = 0x10000;
const CODE: u64 = 0x40_1000;

fn regs(pc: u64, sp: u64, fp: u64) -> ThreadRegisters {
    ThreadRegisters {
        tid: 42,
        arch: StackArch::X86_64,
        pc,
        sp,
        fp,
        lr: None,
        general: Vec::new(),
    }
}

/// A stack whose frame-pointer chain is `links`: (offset of a frame
/// record from [`STACK`], offset of the caller's record, return address).
fn chain(links: &[(u64, u64, u64)]) -> SyntheticMemory {
    let mut bytes = vec![0u8; STACK_LEN];
    for &(at, next, ret) in links {
        let at = at as usize;
        bytes[at..at + 8].copy_from_slice(&(STACK + next).to_le_bytes());
        bytes[at + 8..at + 16].copy_from_slice(&ret.to_le_bytes());
    }
    let mut mem = SyntheticMemory::new(TargetAbi::X86_64);
    mem.map(TargetAddr(STACK), bytes);
    mem
}

fn unwind(limits: StackLimits, memory: &dyn TargetMemory, regs: &ThreadRegisters) -> ThreadStack {
    StackUnwinder::new(limits).unwind(memory, &ElfSymbols::new(), regs)
}

/// A source whose every read fails.
struct Unreadable;

impl TargetMemory for Unreadable {
    fn abi(&self) -> TargetAbi {
        TargetAbi::X86_64
    }

    fn read_into(&self, _addr: TargetAddr, _buf: &mut [u8]) -> Result<usize, ReadError> {
        Ok(0)
    }
}

#[test]
fn unreadable_stack_gives_the_first_frame_and_the_read_error() {
    let stack = unwind(
        StackLimits::default(),
        &Unreadable,
        &regs(CODE, STACK + 0x100, STACK + 0x200),
    );
    assert_eq!(stack.tid, 42);
    assert_eq!(stack.frames.len(), 1);
    assert_eq!(stack.frames[0].pc, CODE);
    // An address in no object has no name.
    assert_eq!(stack.frames[0].function, None);
    assert_eq!(stack.frames[0].object, None);
    assert!(!stack.truncated);
    let error = stack.error.expect("an error");
    assert!(error.contains("stack"), "{error}");
    assert!(
        error.contains("0x7fff0200"),
        "the frame pointer's address: {error}"
    );
}

#[test]
fn a_frame_pointer_chain_that_loops_stops_with_an_error() {
    // The record at 0x100 names itself as its caller's.
    let mem = chain(&[(0x100, 0x100, CODE + 0x10)]);
    let stack = unwind(
        StackLimits::default(),
        &mem,
        &regs(CODE, STACK + 0x80, STACK + 0x100),
    );
    assert!(stack.frames.len() <= 3, "{stack:?}");
    assert!(stack.error.is_some(), "{stack:?}");
    assert!(!stack.truncated);
}

#[test]
fn a_chain_that_goes_down_the_stack_stops_with_an_error() {
    // 0x200 -> 0x100: the caller's frame below its callee's.
    let mem = chain(&[(0x200, 0x100, CODE + 0x10), (0x100, 0x300, CODE + 0x20)]);
    let stack = unwind(
        StackLimits::default(),
        &mem,
        &regs(CODE, STACK + 0x180, STACK + 0x200),
    );
    assert!(stack.frames.len() <= 3, "{stack:?}");
    assert!(stack.error.is_some(), "{stack:?}");
}

/// A well-formed chain of `n` frame records, 0x40 bytes apart.
fn long_chain(n: u64) -> Vec<(u64, u64, u64)> {
    (0..n)
        .map(|i| (0x100 + 0x40 * i, 0x100 + 0x40 * (i + 1), CODE + 0x100 + i))
        .collect()
}

#[test]
fn a_deep_stack_is_cut_at_max_frames() {
    let mem = chain(&long_chain(300));
    let limits = StackLimits {
        max_frames: 50,
        ..StackLimits::default()
    };
    let stack = unwind(limits, &mem, &regs(CODE, STACK + 0x80, STACK + 0x100));
    assert_eq!(stack.frames.len(), 50);
    assert!(stack.truncated);
    assert_eq!(stack.error, None);
    // The return addresses are the chain's, in order.
    let pcs: Vec<u64> = stack.frames.iter().map(|f| f.pc).collect();
    assert_eq!(pcs[1..4], [CODE + 0x100, CODE + 0x101, CODE + 0x102]);
}

#[test]
fn reads_past_max_stack_bytes_are_refused() {
    let mem = chain(&long_chain(300));
    let limits = StackLimits {
        max_frames: 1000,
        max_stack_bytes: 0x400,
    };
    let stack = unwind(limits, &mem, &regs(CODE, STACK + 0x80, STACK + 0x100));
    // Records up to 0x80 + 0x400 are within reach: about 0x400 / 0x40.
    assert!(
        (10..=20).contains(&stack.frames.len()),
        "{}",
        stack.frames.len()
    );
    assert!(!stack.truncated);
    let error = stack.error.expect("an error");
    assert!(error.contains("max_stack_bytes"), "{error}");
}

#[test]
fn a_chain_into_unmapped_memory_ends_with_the_read_error() {
    // The last record points past the mapped stack.
    let mut links = long_chain(5);
    links.push((0x100 + 0x40 * 5, STACK_LEN as u64 + 0x1000, CODE + 0x999));
    let mem = chain(&links);
    let stack = unwind(
        StackLimits::default(),
        &mem,
        &regs(CODE, STACK + 0x80, STACK + 0x100),
    );
    // The pc, five return addresses, and the last record's.
    assert_eq!(stack.frames.len(), 7, "{stack:?}");
    assert_eq!(stack.frames[6].pc, CODE + 0x999);
    let error = stack.error.expect("an error");
    assert!(
        error.contains("0x80001000"),
        "the unmapped caller's record: {error}"
    );
}

#[test]
fn stacks_round_trip_through_json() {
    let mem = chain(&long_chain(3));
    let stack = unwind(
        StackLimits::default(),
        &mem,
        &regs(CODE, STACK + 0x80, STACK + 0x100),
    );
    let json = serde_json::to_string(&stack).unwrap();
    let back: ThreadStack = serde_json::from_str(&json).unwrap();
    assert_eq!(back, stack);
}
