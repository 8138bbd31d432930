//! The registers of a thread, where an unwinder starts: from a core's
//! NT_PRSTATUS notes, or from a stopped live thread through ptrace.
//!
//! Only x86_64 and aarch64 are decoded, the two CPUs the unwinder knows.
//! A core of another machine still opens; its threads just have no
//! registers, so no stacks.

use mpidd_types::{ByteOrder, TargetAbi};
use serde::{Deserialize, Serialize};

use crate::backend::memory::decode_unsigned;

/// The CPU whose register set a [`ThreadRegisters`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum StackArch {
    /// x86-64 (`EM_X86_64`).
    X86_64,
    /// 64-bit ARM (`EM_AARCH64`).
    Aarch64,
}

/// `EM_X86_64`.
const EM_X86_64: u16 = 62;
/// `EM_AARCH64`.
const EM_AARCH64: u16 = 183;

impl StackArch {
    /// The architecture of ELF machine `machine` with the given ABI, if
    /// registers of it can be decoded. A 32-bit ABI has none (an i386
    /// core is `EM_386`, but x32 cores say `EM_X86_64` with 32-bit words).
    pub fn from_elf_machine(machine: u16, abi: TargetAbi) -> Option<StackArch> {
        if abi.address_bytes() != 8 {
            return None;
        }
        match machine {
            EM_X86_64 => Some(StackArch::X86_64),
            EM_AARCH64 => Some(StackArch::Aarch64),
            _ => None,
        }
    }

    /// How many 8-byte words the kernel's general register set
    /// (`user_regs_struct`, NT_PRSTATUS's `pr_reg`) has.
    pub fn general_register_count(self) -> usize {
        match self {
            // r15 .. gs: 27 words.
            StackArch::X86_64 => 27,
            // x0 .. x30, sp, pc, pstate.
            StackArch::Aarch64 => 34,
        }
    }
}

/// The registers of one thread, as the kernel saved them when it stopped.
///
/// `pc`, `sp` and `fp` (and `lr` on aarch64) are what the unwinder
/// starts from; `general` keeps the whole general register set in the
/// kernel's order (x86_64: `r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx
/// rdx rsi rdi orig_rax rip cs eflags rsp ss fs_base gs_base ds es fs gs`;
/// aarch64: `x0 .. x30 sp pc pstate`) for callers that show registers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadRegisters {
    /// The thread id (the pid of NT_PRSTATUS, the tid of `/proc/PID/task`).
    pub tid: i32,
    /// Which CPU the registers are of.
    pub arch: StackArch,
    /// The program counter (`rip`, `pc`).
    pub pc: u64,
    /// The stack pointer (`rsp`, `sp`).
    pub sp: u64,
    /// The frame pointer (`rbp`, `x29`).
    pub fp: u64,
    /// The link register (`x30`) on aarch64; `None` on x86_64, which keeps
    /// return addresses on the stack.
    pub lr: Option<u64>,
    /// The whole general register set in the kernel's order (see above);
    /// empty when the source gave only the few registers above.
    pub general: Vec<u64>,
}

impl ThreadRegisters {
    /// Builds the registers of thread `tid` from its general register set
    /// in the kernel's order (see [`ThreadRegisters`]). `None` if `general`
    /// is shorter than [`StackArch::general_register_count`].
    pub fn from_general(tid: i32, arch: StackArch, general: Vec<u64>) -> Option<ThreadRegisters> {
        if general.len() < arch.general_register_count() {
            return None;
        }
        let (pc, sp, fp, lr) = match arch {
            StackArch::X86_64 => (general[16], general[19], general[4], None),
            StackArch::Aarch64 => (general[32], general[31], general[29], Some(general[30])),
        };
        Some(ThreadRegisters {
            tid,
            arch,
            pc,
            sp,
            fp,
            lr,
            general,
        })
    }
}

/// Where `pr_reg` starts in a 64-bit `struct elf_prstatus`: after the
/// 12-byte siginfo, the signal and its padding (4), two `unsigned long`
/// signal masks (16), four pids (16) and four `struct timeval`s (64).
const PR_REG_OFFSET_64: usize = 112;

/// The registers in the descriptor of one NT_PRSTATUS note, decoded in the
/// core's byte order; `None` for a machine without a decoder or a note too
/// short to hold them.
pub(crate) fn from_prstatus(
    machine: u16,
    abi: TargetAbi,
    tid: i32,
    desc: &[u8],
) -> Option<ThreadRegisters> {
    let arch = StackArch::from_elf_machine(machine, abi)?;
    let count = arch.general_register_count();
    let bytes = desc.get(PR_REG_OFFSET_64..PR_REG_OFFSET_64 + 8 * count)?;
    let general = words64(abi.byte_order, bytes);
    ThreadRegisters::from_general(tid, arch, general)
}

fn words64(order: ByteOrder, bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|w| decode_unsigned(order, w))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An NT_PRSTATUS descriptor whose `pr_reg` words are 1, 2, 3, ...
    fn prstatus(order: ByteOrder, words: usize) -> Vec<u8> {
        let mut desc = vec![0xee; PR_REG_OFFSET_64];
        for i in 1..=words as u64 {
            desc.extend(match order {
                ByteOrder::Little => i.to_le_bytes(),
                ByteOrder::Big => i.to_be_bytes(),
            });
        }
        desc.extend([0; 8]); // pr_fpvalid and padding
        desc
    }

    #[test]
    fn x86_64_takes_rip_rsp_rbp_by_kernel_order() {
        let regs = from_prstatus(
            EM_X86_64,
            TargetAbi::X86_64,
            7,
            &prstatus(ByteOrder::Little, 27),
        )
        .unwrap();
        assert_eq!((regs.pc, regs.sp, regs.fp, regs.lr), (17, 20, 5, None));
        assert_eq!(regs.general.len(), 27);
        assert_eq!(regs.tid, 7);
    }

    #[test]
    fn aarch64_big_endian_uses_the_cores_byte_order() {
        let abi = TargetAbi::new(ByteOrder::Big, mpidd_types::AddressWidth::W64);
        let regs = from_prstatus(EM_AARCH64, abi, 9, &prstatus(ByteOrder::Big, 34)).unwrap();
        assert_eq!((regs.pc, regs.sp, regs.fp, regs.lr), (33, 32, 30, Some(31)));
    }

    #[test]
    fn short_notes_and_other_machines_give_none() {
        let desc = prstatus(ByteOrder::Little, 27);
        assert!(from_prstatus(EM_X86_64, TargetAbi::X86_64, 1, &desc[..200]).is_none());
        assert!(from_prstatus(3, TargetAbi::I686, 1, &desc).is_none());
        assert!(from_prstatus(EM_X86_64, TargetAbi::I686, 1, &desc).is_none());
    }
}
