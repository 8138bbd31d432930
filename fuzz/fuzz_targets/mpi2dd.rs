//! The MPI-2 reader and walker over arbitrary synthetic processes: one to
//! eight processes (see `src/process.rs` for each one's format), each read
//! with both packings, then the whole job walked from the first. The connector
//! maps any pid to a process (pid modulo their number), so the tables can
//! point anywhere in the job, themselves included; negative pids fail to
//! connect.
//!
//! ```text
//! input := nproc:u8 process{1 + nproc % 8}
//! ```

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_fuzz::{assert_only_changed, limits, names::MPI2DD as NAMES, Cursor, Process};
use mpidd_read::mpi2dd::{self, Mpi2ddPeer, INFO_SYMBOL};
use mpidd_read::walk::{self, Connector};
use mpidd_read::{SymbolSource, TargetMemory};
use mpidd_types::{DebuggerFlags, Mpi2ddInfo, Packing, Record};

struct Job(Vec<Process>);

impl Connector for Job {
    type Target = Process;

    fn connect(
        &mut self,
        _host: &str,
        pid: i32,
        _executable: &str,
    ) -> Result<Process, Box<dyn std::error::Error + Send + Sync>> {
        let i = usize::try_from(pid).map_err(|_| "no such process")?;
        Ok(self.0[i % self.0.len()].clone())
    }
}

fuzz_target!(|data: &[u8]| {
    let mut c = Cursor::new(data);
    let n = 1 + usize::from(c.u8()) % 8;
    let procs: Vec<Process> = (0..n).map(|_| Process::parse(&mut c, NAMES)).collect();
    let limits = limits();
    for p in &procs {
        for packing in [Packing::Natural, Packing::Packed] {
            if let Ok(info) = mpi2dd::read_process(p, p, packing, &limits) {
                for table in [info.directory_table.len(), info.metadirectory_table.len()] {
                    assert!(table as u64 <= limits.max_table_entries);
                }
                assert!(info.proctable.len() as u64 <= limits.max_table_entries);
                let _ = serde_json::to_string(&info).expect("the process serializes");
            }
            let mut written = p.clone();
            let flags = DebuggerFlags::from_bits_retain(0x5a5a_5a5a);
            let done = mpi2dd::write_debugger_flags(&mut written.memory, p, packing, flags);
            if let Some(sym) = p.lookup(INFO_SYMBOL) {
                let abi = p.memory.abi().with_packing(packing);
                let offset = Mpi2ddInfo::layout(abi)
                    .field("debugger_flags")
                    .expect("MPI2DD_INFO has debugger_flags")
                    .offset as u64;
                let at = mpidd_types::TargetAddr(sym.addr.0.wrapping_add(offset));
                assert_only_changed(&p.memory, &written.memory, at, 4);
            } else {
                assert!(done.is_err(), "flags written without {INFO_SYMBOL}");
            }
        }
    }

    let start = Mpi2ddPeer {
        host_name: "h".into(),
        executable_name: "/fuzz/a.out".into(),
        pid: 0,
    };
    let mut job = Job(procs);
    for packing in [Packing::Natural, Packing::Packed] {
        if let Ok(tree) = walk::walk(&mut job, &start, packing, &limits) {
            assert!(tree.processes.len() + tree.failures.len() <= limits.max_walk_processes);
            assert!(tree
                .processes
                .iter()
                .all(|p| p.depth <= limits.max_walk_depth));
            let _ = serde_json::to_string(&tree).expect("the tree serializes");
        }
    }
});
