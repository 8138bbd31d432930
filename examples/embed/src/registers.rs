//! The registers of a stopped thread, read with `PTRACE_GETREGS`, and the
//! form the crates take them in: [`ThreadRegisters`] in the kernel's order
//! of `user_regs_struct`.

use nix::sys::ptrace;
use nix::unistd::Pid;

use mpidd_read::{StackArch, ThreadRegisters};

use crate::tracer::TraceError;

/// The general registers of stopped thread `tid`, as the kernel keeps them.
pub fn general(tid: i32) -> Result<nix::libc::user_regs_struct, TraceError> {
    ptrace::getregs(Pid::from_raw(tid)).map_err(|errno| TraceError::Ptrace {
        request: "GETREGS",
        tid,
        errno,
    })
}

/// Sets stopped thread `tid`'s program counter.
pub fn set_pc(tid: i32, pc: u64) -> Result<(), TraceError> {
    let mut regs = general(tid)?;
    regs.rip = pc;
    ptrace::setregs(Pid::from_raw(tid), regs).map_err(|errno| TraceError::Ptrace {
        request: "SETREGS",
        tid,
        errno,
    })
}

/// `regs` as the crates take them: the words of `user_regs_struct` in
/// their order (`r15` first, `gs` last), which is also NT_PRSTATUS's.
pub fn thread_registers(tid: i32, r: &nix::libc::user_regs_struct) -> ThreadRegisters {
    let general = vec![
        r.r15, r.r14, r.r13, r.r12, r.rbp, r.rbx, r.r11, r.r10, r.r9, r.r8, r.rax, r.rcx, r.rdx,
        r.rsi, r.rdi, r.orig_rax, r.rip, r.cs, r.eflags, r.rsp, r.ss, r.fs_base, r.gs_base, r.ds,
        r.es, r.fs, r.gs,
    ];
    // 27 words, as many as StackArch::X86_64 has: never None.
    ThreadRegisters::from_general(tid, StackArch::X86_64, general).unwrap_or(ThreadRegisters {
        tid,
        arch: StackArch::X86_64,
        pc: r.rip,
        sp: r.rsp,
        fp: r.rbp,
        lr: None,
        general: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crates_get_pc_sp_and_fp_from_the_kernels_order() {
        // SAFETY: user_regs_struct is plain integers; all zeros is a value.
        let mut r: nix::libc::user_regs_struct = unsafe { std::mem::zeroed() };
        r.rip = 0x401000;
        r.rsp = 0x7ffc_0000_1000;
        r.rbp = 0x7ffc_0000_2000;
        r.r15 = 1;
        r.gs = 27;
        let regs = thread_registers(7, &r);
        assert_eq!(
            (regs.tid, regs.pc, regs.sp, regs.fp),
            (7, r.rip, r.rsp, r.rbp)
        );
        assert_eq!(
            regs.general.len(),
            StackArch::X86_64.general_register_count()
        );
        assert_eq!((regs.general[0], regs.general[26]), (1, 27));
    }
}
