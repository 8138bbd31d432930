//! Seeds of the `mpir` target: a starter with every MPIR variable for each
//! ABI, hostile process tables, and a process without MPIR.

use std::path::Path;

use mpidd_fuzz::{limits, names, Cursor, Process};
use mpidd_read::{mpir, SymbolTable, SyntheticJob, SyntheticMemory};
use mpidd_types::{AddressWidth, TargetAbi, TargetAddr};

use crate::common::{abi_name, check, distinct_abis, encoded, process_of, write, Result};

/// Every `mpir` seed.
pub fn mpir(out: &Path) -> Result<()> {
    let names = names::MPIR;
    for abi in distinct_abis() {
        let n = abi_name(abi);
        let job = SyntheticJob::builder(abi)
            .mpir_starter(&[
                ("node1", "/opt/app/ring", 4001),
                ("node2", "/opt/app/ring", 4002),
                ("node1", "/opt/app/ring", -1),
            ])
            .mpir_dll_name("/usr/lib/libtvmpich.so")
            .mpir_abort("rank 2 called MPI_Abort")
            .mpir_executable_path("/opt/app/ring", 256)
            .presence("MPIR_partial_attach_ok")
            .presence("MPIR_force_to_main")
            .build();
        let mut p = process_of(&job);
        // Server arguments and the attach fifo, which the builder does not
        // lay out: NUL-separated strings ending in an empty one.
        let extra = if abi.address_width == AddressWidth::W32 {
            0x0c00_0000
        } else {
            0x7f00_2000_0000
        };
        let mut bytes = b"--host\0n1\0--verbose\0\0".to_vec();
        let fifo = bytes.len() as u64;
        bytes.extend_from_slice(b"/tmp/attach.fifo\0");
        bytes.resize(64, 0);
        p.memory.map(TargetAddr(extra), bytes);
        let object = "/synthetic/mpirun";
        p.symbols
            .insert(object, "MPIR_server_arguments", TargetAddr(extra), fifo);
        p.symbols
            .insert(object, "MPIR_attach_fifo", TargetAddr(extra + fifo), 0);
        let seed = encoded(&p, names);
        let back = Process::parse(&mut Cursor::new(&seed), names);
        let state = mpir::read_state(&back, &limits())?;
        check(state.proctable.len() == 3, "the starter seed has 3 ranks")?;
        check(
            state.server_arguments.as_deref()
                == Some(&["--host", "n1", "--verbose"].map(String::from)[..]),
            "the starter seed has server arguments",
        )?;
        check(
            state.attach_fifo.as_deref() == Some("/tmp/attach.fifo"),
            "the starter seed has a fifo",
        )?;
        write(out, "mpir", &format!("starter-{n}"), &seed)?;

        // Hostile tables: negative and absurd sizes, a wild pointer.
        for (label, table, size) in [
            ("negative", 0x1000, -5),
            ("huge", 0x1000, i32::MAX),
            ("wild", 0xdead_0000, 3),
        ] {
            let job = SyntheticJob::builder(abi)
                .mpir_raw(TargetAddr(table), size, 1)
                .build();
            let seed = encoded(&process_of(&job), names);
            write(out, "mpir", &format!("raw-{label}-{n}"), &seed)?;
        }
    }
    // A process with no MPIR symbols at all.
    let empty = Process {
        memory: SyntheticMemory::new(TargetAbi::X86_64),
        symbols: SymbolTable::new(),
    };
    write(out, "mpir", "empty", &encoded(&empty, names))?;
    Ok(())
}
