//! Seeds of the `core_file` target: real cores shrunk to their headers,
//! notes and small segments ([`core_input`], for `seed.sh`), and synthetic
//! jobs written as cores, with and without NT_FILE, and `link_map` images
//! ([`cores`]).

use std::path::{Path, PathBuf};

use mpidd_fuzz::{abi_selector, limits};
use mpidd_read::synthetic::Mpi2ddSpec;
use mpidd_read::{link_map, mpir, CoreTarget, SyntheticCoreOptions, SyntheticJob, SyntheticMemory};
use mpidd_types::{TargetAbi, TargetAddr};

use crate::common::{abi_name, check, distinct_abis, write, Result};
use crate::objects::Heap;

/// The core_file input format: abi, core length, core, executable.
fn core_file_input(abi: TargetAbi, core: &[u8], exe: &[u8]) -> Vec<u8> {
    let mut seed = vec![abi_selector(abi)];
    seed.extend_from_slice(&(core.len() as u32).to_le_bytes());
    seed.extend_from_slice(core);
    seed.extend_from_slice(exe);
    seed
}

/// PT_LOAD segments larger than this lose their bytes in a seed (the 8 MiB
/// stacks of qemu's guest cores); the headers, the notes and the small
/// segments (data, heap, the dynamic linker's) stay.
const MAX_SEED_SEGMENT: u64 = 160 << 10;

/// Writes to `out` the `core_file` input of the core at `core` (shrunk)
/// and the executable at `exe`, saying what the seed still reaches.
pub fn core_input(out: &Path, core: &Path, exe: Option<&Path>) -> Result<()> {
    let bytes = std::fs::read(core)?;
    let small = shrink_core(&bytes, MAX_SEED_SEGMENT)?;
    let exe_bytes = exe.map(std::fs::read).transpose()?.unwrap_or_default();
    // Say what the seed still reaches, so a seed that lost its point shows.
    let scratch = std::env::temp_dir().join(format!("mpidd-seed-core-{}", std::process::id()));
    std::fs::write(&scratch, &small)?;
    let reach = match CoreTarget::open(&scratch, exe, None) {
        Ok(t) => match mpir::read_state(&t, &limits()) {
            Ok(s) => format!("MPIR table of {}", s.proctable.len()),
            Err(e) => format!("no MPIR state ({e})"),
        },
        Err(e) => format!("no target ({e})"),
    };
    std::fs::remove_file(&scratch)?;
    eprintln!(
        "{}: {} of {} bytes kept, {reach}",
        out.display(),
        small.len(),
        bytes.len()
    );
    std::fs::write(out, core_file_input(TargetAbi::X86_64, &small, &exe_bytes))?;
    Ok(())
}

/// The core without the bytes of its PT_LOAD segments above `max` bytes
/// (their headers stay, with no file size) and without section headers,
/// segments packed one after another.
fn shrink_core(data: &[u8], max: u64) -> Result<Vec<u8>> {
    if data.len() < 52 || data[..4] != *b"\x7fELF" {
        return Err("not an ELF file".into());
    }
    let wide = data[4] == 2;
    let big = data[5] == 2;
    let get = |at: usize, n: usize| -> Result<u64> {
        let b = data.get(at..at + n).ok_or("ELF header cut short")?;
        let fold = |acc: u64, x: &u8| (acc << 8) | u64::from(*x);
        Ok(if big {
            b.iter().fold(0, fold)
        } else {
            b.iter().rev().fold(0, fold)
        })
    };
    let put = |out: &mut Vec<u8>, at: usize, n: usize, v: u64| {
        let mut b = v.to_le_bytes()[..n].to_vec();
        if big {
            b.reverse();
        }
        out[at..at + n].copy_from_slice(&b);
    };
    // (e_phoff, e_shoff, e_phentsize, e_phnum, e_shnum, header size) and
    // (p_offset, p_filesz) within a program header, by class.
    let (phoff, shoff, phentsize, phnum, shnum, ehsize, w) = if wide {
        (0x20, 0x28, 0x36, 0x38, 0x3c, 64, 8)
    } else {
        (0x1c, 0x20, 0x2a, 0x2c, 0x30, 52, 4)
    };
    let (p_offset, p_filesz) = if wide { (8, 32) } else { (4, 16) };
    let ph_at = get(phoff, w)? as usize;
    let ph_size = get(phentsize, 2)? as usize;
    let ph_count = get(phnum, 2)? as usize;
    let table = data
        .get(ph_at..ph_at + ph_size * ph_count)
        .ok_or("program headers cut short")?;
    let mut out = data[..ehsize].to_vec();
    put(&mut out, phoff, w, ehsize as u64);
    put(&mut out, shoff, w, 0);
    put(&mut out, shnum, 2, 0);
    put(&mut out, shnum + 2, 2, 0);
    let table_at = out.len();
    out.extend_from_slice(table);
    for i in 0..ph_count {
        let h = table_at + i * ph_size;
        let kind = get(ph_at + i * ph_size, 4)?;
        let offset = get(ph_at + i * ph_size + p_offset, w)? as usize;
        let size = get(ph_at + i * ph_size + p_filesz, w)?;
        // PT_NOTE (4) always stays; PT_LOAD (1) when small.
        let keep = kind == 4 || (kind == 1 && size <= max);
        let bytes = data.get(offset..offset + size as usize).filter(|_| keep);
        while !out.len().is_multiple_of(8) {
            out.push(0);
        }
        let at = out.len() as u64;
        match bytes {
            Some(b) => {
                out.extend_from_slice(b);
                put(&mut out, h + p_offset, w, at);
            }
            None => {
                put(&mut out, h + p_offset, w, 0);
                put(&mut out, h + p_filesz, w, 0);
            }
        }
    }
    Ok(out)
}

/// Words in the target's order.
fn words(abi: TargetAbi, ws: &[u64]) -> Vec<u8> {
    let mut h = Heap::new(abi, 0);
    let w = abi.address_bytes() as u64;
    h.alloc(w * ws.len() as u64);
    for (i, &v) in ws.iter().enumerate() {
        h.word(i as u64 * w, v);
    }
    h.bytes
}

/// Synthetic jobs written as real cores with their executables, with and
/// without NT_FILE; and `link_map` images for the synthetic walk (a
/// dynamic array at the image's start, then r_debug and two nodes).
pub fn cores(out: &Path) -> Result<()> {
    let tmp = std::env::temp_dir().join(format!("mpidd-seeds-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    for abi in distinct_abis() {
        let n = abi_name(abi);
        let job = SyntheticJob::builder(abi)
            .object("/opt/app/bin/mpirun")
            .mpir_starter(&[
                ("node1", "/opt/app/bin/ring", 7),
                ("node2", "/opt/app/bin/ring", 8),
            ])
            .mpi2dd(&Mpi2ddSpec::default())
            .build();
        for omit_nt_file in [false, true] {
            let (core, exe): (PathBuf, PathBuf) = (tmp.join("core"), tmp.join("mpirun"));
            job.write_files(&core, &exe, SyntheticCoreOptions { omit_nt_file })?;
            let seed = core_file_input(abi, &std::fs::read(&core)?, &std::fs::read(&exe)?);
            let target = CoreTarget::open(&core, Some(&exe), None)?;
            let state = mpir::read_state(&target, &limits())?;
            check(state.proctable.len() == 2, "the core seed has 2 ranks")?;
            let label = if omit_nt_file {
                "no-nt-file"
            } else {
                "nt-file"
            };
            write(out, "core_file", &format!("job-{label}-{n}"), &seed)?;
        }

        const BASE: u64 = 0x10000;
        let mut image = words(abi, &[1, 5, 21, BASE + 0x100, 0, 0]);
        image.resize(0x100, 0);
        image.extend(words(abi, &[1, BASE + 0x200]));
        image.resize(0x200, 0);
        image.extend(words(abi, &[0x40000, 0, BASE + 0x400, BASE + 0x240, 0]));
        image.resize(0x240, 0);
        image.extend(words(
            abi,
            &[0x7000, BASE + 0x300, BASE + 0x480, 0, BASE + 0x200],
        ));
        image.resize(0x300, 0);
        image.extend_from_slice(b"/lib/libc.so.6\0");
        let mut mem = SyntheticMemory::new(abi);
        mem.map(TargetAddr(BASE), image.clone());
        let r_debug = link_map::r_debug_address(&mem, TargetAddr(BASE), &limits())?;
        let list = link_map::read_link_map(&mem, r_debug.ok_or("no DT_DEBUG")?, &limits())?;
        check(
            list.len() == 2 && list[1].name == "/lib/libc.so.6",
            "a link map of 2",
        )?;
        let seed = core_file_input(abi, &[], &image);
        write(out, "core_file", &format!("link-map-{n}"), &seed)?;
    }
    std::fs::remove_dir_all(&tmp)?;
    Ok(())
}
