//! ELF core files from arbitrary bytes: the headers, the notes (NT_PRSTATUS,
//! NT_AUXV, NT_FILE with the target's word size), reads through the core
//! and through the files NT_FILE maps, and a whole `CoreTarget` with an
//! executable from the input (its symbols, its segments as the backing of
//! omitted pages, and the `link_map` walk of cores without NT_FILE), read
//! as an MPIR and MPI-2 target. The executable's bytes are also walked as
//! a `link_map` image in synthetic memory.
//!
//! ```text
//! input := abi:u8 core_len:u32 core{core_len} executable
//! ```
//!
//! `abi` is the synthetic image's when the core does not parse; otherwise
//! the image takes the core's.
//!
//! Readers only take paths, so both files go to tmpfs scratch files.
//! Recorded paths are looked for under a sysroot that does not exist (so a
//! fuzzed `../../` cannot reach host files) and in one scratch directory,
//! where every NT_FILE base name is a link to the executable.

#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::{abi_from, limits, scratch_dir, scratch_file, Cursor};
use mpidd_read::{
    link_map, mpi2dd, mpir, CoreFile, CoreTarget, CoreTargetOptions, DebugSearch, FileSearch,
    SyntheticMemory, TargetMemory,
};
use mpidd_types::{Packing, TargetAddr};

/// Where the executable's bytes sit in the synthetic `link_map` image.
const IMAGE_BASE: u64 = 0x10000;
/// Most NT_FILE entries and auxv values each input reads through.
const MAX_PROBES: usize = 16;

fn probe(core: &CoreFile) {
    let mut buf = [0u8; 64];
    let _ = (core.machine(), core.pids(), core.auxv(), core.path());
    let _ = core.auxv_value(9);
    for &(_, value) in core.auxv().iter().take(MAX_PROBES) {
        let _ = core.read_into(TargetAddr(value), &mut buf);
        let _ = core.read_dumped(TargetAddr(value), &mut buf);
    }
    for f in core.mapped_files().iter().take(MAX_PROBES) {
        let _ = core.resolve_path(&f.path);
        let _ = core.read_into(f.start, &mut buf);
        let _ = core.read_into(TargetAddr(f.end.0.wrapping_sub(1)), &mut buf);
        let _ = core.read_dumped(f.start, &mut buf);
        let _ = core.read_string(f.start, 128);
    }
}

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let mut abi = abi_from(c.u8());
    let core_len = c.u32() as usize;
    let core_bytes = c.take(core_len);
    let exe_bytes = c.rest();
    let core_path = scratch_file("core", core_bytes);
    let exe_path = scratch_file("exe", exe_bytes);
    let files = scratch_dir().join("files");
    let _ = std::fs::remove_dir_all(&files);
    std::fs::create_dir_all(&files).expect("scratch files directory");
    let search = FileSearch {
        sysroot: Some(scratch_dir().join("no-such-sysroot")),
        search_path: vec![files.clone()],
    };

    if let Ok(core) = CoreFile::open(&core_path) {
        abi = core.abi();
        // Every base name NT_FILE records now finds the executable's bytes.
        for f in core.mapped_files().iter().take(MAX_PROBES) {
            if let Some(base) = std::path::Path::new(&f.path).file_name() {
                let _ = std::fs::hard_link(&exe_path, files.join(base));
            }
        }
        let core = core.with_search(search.clone());
        probe(&core);
    }

    let limits = limits();
    for exe in [Some(exe_path.clone()), None::<PathBuf>] {
        let options = CoreTargetOptions {
            exe,
            search: search.clone(),
            debug: DebugSearch::new(Vec::<PathBuf>::new()),
            limits,
        };
        let Ok(target) = CoreTarget::open_with(&core_path, &options) else {
            continue;
        };
        let _ = target.problems().iter().map(|p| format!("{p:?}")).count();
        probe(target.core());
        let _ = mpir::read_state(&target, &limits);
        let _ = mpi2dd::read_process(&target, &target, Packing::Natural, &limits);
    }

    // The executable's bytes as memory: a dynamic array at its start, and
    // an r_debug there too.
    let mut mem = SyntheticMemory::new(abi);
    mem.map(TargetAddr(IMAGE_BASE), exe_bytes.to_vec());
    if let Ok(Some(r_debug)) = link_map::r_debug_address(&mem, TargetAddr(IMAGE_BASE), &limits) {
        let _ = link_map::read_link_map(&mem, r_debug, &limits);
    }
    let _ = link_map::read_link_map(&mem, TargetAddr(IMAGE_BASE), &limits);
});
