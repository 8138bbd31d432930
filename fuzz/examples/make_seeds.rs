//! Writes the synthetic seeds of the fuzz targets, in each target's input
//! format (see `src/lib.rs` and the targets' doc comments). `seed.sh` runs
//! it and adds the seeds made from real files.
//!
//! ```text
//! make_seeds synthetic OUT              every synthetic seed, in OUT/<target>/
//! make_seeds core-input OUT CORE [EXE]  a core_file input from real files
//! make_seeds mpich-real OUT LIB         mpich_queues and handles seeds laid
//!                                       out with the offsets LIB's DWARF gives
//! make_seeds ompi-real OUT PREFIX       ompi_ob1_queues and ompi_handles seeds
//!                                       laid out with the offsets the DWARF
//!                                       of the Open MPI in PREFIX gives
//! ```

use std::collections::BTreeMap;
use std::error::Error;
use std::path::{Path, PathBuf};

use mpidd_fuzz::bent::{LayoutSpec, Values};
use mpidd_fuzz::{
    abi_selector, handles, limits, mpich, names, ob1, ompi_handles, Cursor, Process,
    HANDLE_SYMBOLS, OBJECT, PRESETS,
};
use mpidd_read::mpi2dd::Mpi2ddPeer;
use mpidd_read::synthetic::{Mpi2ddSpec, PeerSpec, RankSpec};
use mpidd_read::walk::{self, Connector, JobTree};
use mpidd_read::TargetParts;
use mpidd_read::{
    link_map, mpir, CoreTarget, ReadError, SymbolTable, SyntheticCoreOptions, SyntheticJob,
    SyntheticMemory, TypeOracle,
};
use mpidd_types::{AddressWidth, ByteOrder, Packing, TargetAbi, TargetAddr};
use mpihandles::{
    Availability, Details, HandleError, HandleKind, Mpich, ObjectState, RequestKind, Topology,
};
use mpiq_core::model::{OperationStatus, Protocol, Queue};
use mpiq_core::{DecodeError, Layouts, MpichCh3, OmpiOb1, QueueDecoder};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["synthetic", out] => synthetic(Path::new(out)),
        ["core-input", out, core] => core_input(Path::new(out), Path::new(core), None),
        ["core-input", out, core, exe] => {
            core_input(Path::new(out), Path::new(core), Some(Path::new(exe)))
        }
        ["mpich-real", out, lib] => {
            mpich_real(Path::new(out), Path::new(lib))?;
            handles_real(Path::new(out), Path::new(lib))
        }
        ["ompi-real", out, prefix] => {
            let prefix = Path::new(prefix);
            ob1_real(Path::new(out), prefix)?;
            ompi_handles_real(Path::new(out), prefix)
        }
        _ => Err(
            "usage: make_seeds synthetic OUT | core-input OUT CORE [EXE] \
                  | mpich-real OUT LIB | ompi-real OUT PREFIX"
                .into(),
        ),
    }
}

/// Fails with `what` unless `ok`: every seed must reach what it was made
/// for, or it seeds nothing.
fn check(ok: bool, what: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(format!("a seed does not decode as intended: {what}").into())
    }
}

/// Walks `job` from its first process.
fn walk_job(job: &mut [Process], packing: Packing) -> Result<JobTree> {
    struct Job<'a>(&'a [Process]);
    impl Connector for Job<'_> {
        type Target = Process;
        fn connect(
            &mut self,
            _: &str,
            pid: i32,
            _: &str,
        ) -> std::result::Result<Process, Box<dyn Error + Send + Sync>> {
            let i = usize::try_from(pid).map_err(|_| "no such process")?;
            Ok(self.0[i % self.0.len()].clone())
        }
    }
    let start = Mpi2ddPeer {
        host_name: "node".into(),
        executable_name: String::new(),
        pid: 0,
    };
    Ok(walk::walk(&mut Job(job), &start, packing, &limits())?)
}

fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) -> Result<()> {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join(name), bytes)?;
    Ok(())
}

fn abi_name(abi: TargetAbi) -> String {
    let order = match abi.byte_order {
        ByteOrder::Little => "le",
        ByteOrder::Big => "be",
    };
    let packing = match abi.packing {
        Packing::Natural => "natural",
        Packing::Packed => "packed",
    };
    format!("{order}{}-{packing}", abi.address_bytes() * 8)
}

/// The four distinct (byte order, width) pairs among the presets.
fn distinct_abis() -> Vec<TargetAbi> {
    let mut out: Vec<TargetAbi> = Vec::new();
    for abi in PRESETS {
        if !out.contains(&abi) {
            out.push(abi);
        }
    }
    out
}

fn process_of(job: &SyntheticJob) -> Process {
    Process {
        memory: job.memory.clone(),
        symbols: job.symbols.clone(),
    }
}

fn encoded(p: &Process, names: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    p.encode(names, &mut out);
    out
}

fn synthetic(out: &Path) -> Result<()> {
    records(out)?;
    mpir(out)?;
    mpi2dd(out)?;
    mpich_synthetic(out)?;
    handles_synthetic(out)?;
    ompi_handles_synthetic(out)?;
    ob1_synthetic(out)?;
    cores(out)?;
    Ok(())
}

/// Records as the synthetic job builder lays them out (with its own code,
/// not the decoders'): each segment of a job, after the re-encoding ABI's
/// selector byte.
fn records(out: &Path) -> Result<()> {
    for abi in distinct_abis() {
        for packing in [Packing::Natural, Packing::Packed] {
            let job = SyntheticJob::builder(abi)
                .mpir_starter(&[("node1", "/bin/ring", 101), ("node2", "/bin/ring", -1)])
                .mpi2dd(&Mpi2ddSpec {
                    packing,
                    ranks: &[RankSpec {
                        host: "n1",
                        exe: "/bin/a",
                        pid: 7,
                        rank: 0,
                        world: "w0",
                        spawn: Some(("w-1", 3, 0)),
                    }],
                    directories: &[PeerSpec {
                        host: "d",
                        exe: "/bin/d",
                        pid: 1,
                    }],
                    ..Mpi2ddSpec::default()
                })
                .build();
            for (i, (_, bytes)) in job.memory.segments().enumerate() {
                let mut seed = vec![abi_selector(TargetAbi::I686)];
                seed.extend_from_slice(&bytes[..bytes.len().min(1024)]);
                let name = format!("job-{}-{i}", abi_name(abi.with_packing(packing)));
                write(out, "records", &name, &seed)?;
            }
        }
    }
    // A 64-bit value that does not fit a 32-bit target when re-encoded.
    let mut wide = vec![abi_selector(TargetAbi::POWERPC)];
    wide.extend((0..600u32).map(|i| (i * 37 % 251) as u8 | 0x80));
    write(out, "records", "wide-values", &wide)?;
    Ok(())
}

fn mpir(out: &Path) -> Result<()> {
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

fn mpi2dd_job(abi: TargetAbi, packing: Packing, me: i32, spec: &Mpi2ddSpec<'_>) -> Process {
    let spec = Mpi2ddSpec { packing, ..*spec };
    process_of(&SyntheticJob::builder(abi).pid(me).mpi2dd(&spec).build())
}

fn mpi2dd(out: &Path) -> Result<()> {
    let names = names::MPI2DD;
    let peer = |pid| PeerSpec {
        host: "node",
        exe: "/usr/bin/mpi-directory",
        pid,
    };
    let rank = |pid, rank, spawn| RankSpec {
        host: "node",
        exe: "/opt/app/a.out",
        pid,
        rank,
        world: if spawn { "world-1" } else { "world-0" },
        spawn: spawn.then_some(("world-0", 0, 0)),
    };
    for abi in distinct_abis() {
        for packing in [Packing::Natural, Packing::Packed] {
            let n = abi_name(abi.with_packing(packing));
            // A metadirectory (pid 0) over two directories (1 and 2), each
            // with ranks, one of them spawned; directory 2 also names the
            // metadirectory, closing a cycle.
            let meta = mpi2dd_job(
                abi,
                packing,
                0,
                &Mpi2ddSpec {
                    mpi_flags: 1,
                    directories: &[peer(1), peer(2)],
                    dll_name: Some("/usr/lib/libmpi2dd_msgq.so"),
                    ..Mpi2ddSpec::default()
                },
            );
            let dir1 = mpi2dd_job(
                abi,
                packing,
                1,
                &Mpi2ddSpec {
                    meta: Some(peer(0)),
                    ranks: &[rank(100, 0, false), rank(101, 1, false)],
                    ..Mpi2ddSpec::default()
                },
            );
            let dir2 = mpi2dd_job(
                abi,
                packing,
                2,
                &Mpi2ddSpec {
                    meta: Some(peer(0)),
                    ranks: &[rank(200, 0, true)],
                    metadirectories: &[peer(0)],
                    abort: Some("job aborted"),
                    ..Mpi2ddSpec::default()
                },
            );
            let mut seed = vec![3];
            for p in [&meta, &dir1, &dir2] {
                p.encode(names, &mut seed);
            }
            let mut c = Cursor::new(&seed[1..]);
            let mut job: Vec<Process> = (0..3).map(|_| Process::parse(&mut c, names)).collect();
            let tree = walk_job(&mut job, packing)?;
            check(
                tree.processes.len() == 3 && tree.ranks.len() == 3,
                "the tree seed walks to 3 processes and 3 ranks",
            )?;
            write(out, "mpi2dd", &format!("tree-{n}"), &seed)?;

            // One directory that lists itself, and a peer that cannot be
            // connected to (a negative pid).
            let alone = mpi2dd_job(
                abi,
                packing,
                0,
                &Mpi2ddSpec {
                    ranks: &[rank(10, 0, false)],
                    directories: &[peer(0), peer(-1)],
                    ..Mpi2ddSpec::default()
                },
            );
            let mut seed = vec![1];
            alone.encode(names, &mut seed);
            write(out, "mpi2dd", &format!("self-{n}"), &seed)?;
        }
    }
    Ok(())
}

/// Offsets and sizes by (type, member), as the mpich layout format lists
/// them.
type Offsets = BTreeMap<(&'static str, Option<&'static str>), u64>;

fn default_offsets() -> Offsets {
    mpich::DEFAULT
        .iter()
        .map(|&(t, m, v)| ((t, m), v))
        .collect()
}

/// Bytes laid out in one region at a base address, written field by field
/// in the target's order with this file's own code (not the decoder's).
struct Heap {
    abi: TargetAbi,
    base: u64,
    bytes: Vec<u8>,
}

impl Heap {
    fn new(abi: TargetAbi, base: u64) -> Self {
        Heap {
            abi,
            base,
            bytes: Vec::new(),
        }
    }

    fn alloc(&mut self, len: u64) -> u64 {
        while !self.bytes.len().is_multiple_of(16) {
            self.bytes.push(0);
        }
        let at = self.base + self.bytes.len() as u64;
        self.bytes.resize(self.bytes.len() + len as usize, 0);
        at
    }

    fn put(&mut self, at: u64, value: u64, width: usize) {
        let mut b = value.to_le_bytes()[..width].to_vec();
        if self.abi.byte_order == ByteOrder::Big {
            b.reverse();
        }
        let i = (at - self.base) as usize;
        self.bytes[i..i + width].copy_from_slice(&b);
    }

    fn word(&mut self, at: u64, value: u64) {
        self.put(at, value, self.abi.address_bytes());
    }

    fn text(&mut self, s: &str) -> u64 {
        let at = self.alloc(s.len() as u64 + 1);
        let i = (at - self.base) as usize;
        self.bytes[i..i + s.len()].copy_from_slice(s.as_bytes());
        at
    }
}

/// What a synthetic MPICH process holds besides its communicators.
#[derive(Clone, Copy)]
enum Scenario {
    WellFormed,
    LoopingPosted,
    UnmappedHead,
    LongList,
    NoSendQueue,
}

/// An MPICH CH3 process laid out with `o`: two communicators (the world,
/// with its world ranks in the connection table, and a duplicate with a
/// group), posted and unexpected receives, and two pending sends, one of a
/// builtin datatype and one of a datatype in the direct pool.
fn mpich_process(abi: TargetAbi, o: &Offsets, scenario: Scenario) -> Process {
    let w = abi.address_bytes() as u64;
    let off = |t: &'static str, m: &'static str| o[&(t, Some(m))];
    let size = |t: &'static str| o[&(t, None)];
    let (globals_base, heap_base) = if w == 4 {
        (0x0804_0000, 0x0900_0000)
    } else {
        (0x5555_0000_0000, 0x7f00_0000_0000)
    };
    let mut g = Heap::new(abi, globals_base);
    let mut h = Heap::new(abi, heap_base);

    let list = g.alloc(size("MPIR_Comm_list"));
    let posted_ptr = g.alloc(w);
    let posted_head = g.alloc(w);
    let unexpected_ptr = g.alloc(w);
    let unexpected_head = g.alloc(w);
    let sendq_head = g.alloc(w);
    let version = g.text("4.0.2");
    let device = g.text("ch3:nemesis");
    let datatype_direct = g.alloc(4 * size("MPIR_Datatype"));
    // Direct datatype 1: a pair of doubles, 16 bytes.
    g.put(
        datatype_direct + size("MPIR_Datatype") + off("MPIR_Datatype", "size"),
        16,
        w as usize,
    );
    g.word(posted_ptr, posted_head);
    g.word(unexpected_ptr, unexpected_head);
    g.put(list + off("MPIR_Comm_list", "sequence_number"), 7, 4);

    // World ranks 5 and 9, so a wrong translation cannot pass by luck.
    let vcs = h.alloc(2 * size("MPIDI_VC"));
    h.put(vcs + off("MPIDI_VC", "pg_rank"), 5, 4);
    h.put(vcs + size("MPIDI_VC") + off("MPIDI_VC", "pg_rank"), 9, 4);
    let vcrt = h.alloc(off("MPIDI_VCRT", "vcr_table") + 2 * w);
    h.put(vcrt + off("MPIDI_VCRT", "size"), 2, 4);
    h.word(vcrt + off("MPIDI_VCRT", "vcr_table"), vcs);
    h.word(
        vcrt + off("MPIDI_VCRT", "vcr_table") + w,
        vcs + size("MPIDI_VC"),
    );
    let pmap = h.alloc(2 * size("MPII_Group_pmap_t"));
    h.put(pmap + off("MPII_Group_pmap_t", "lpid"), 9, 8);
    h.put(
        pmap + size("MPII_Group_pmap_t") + off("MPII_Group_pmap_t", "lpid"),
        5,
        8,
    );
    let group = h.alloc(size("MPIR_Group"));
    h.put(group + off("MPIR_Group", "size"), 2, 4);
    h.word(group + off("MPIR_Group", "lrank_to_lpid"), pmap);

    let comm_vcrt = off("MPIR_Comm", "dev") + off("MPIDI_CH3I_comm_t", "vcrt");
    let comms: Vec<u64> = (0..2).map(|_| h.alloc(size("MPIR_Comm"))).collect();
    for (i, (&c, name)) in comms.iter().zip(["MPI_COMM_WORLD", "dup"]).enumerate() {
        let at = (c + off("MPIR_Comm", "name") - h.base) as usize;
        h.bytes[at..at + name.len()].copy_from_slice(name.as_bytes());
        let context = 4 * i as u64;
        h.put(c + off("MPIR_Comm", "context_id"), context, 2);
        h.put(c + off("MPIR_Comm", "recvcontext_id"), context, 2);
        h.put(c + off("MPIR_Comm", "remote_size"), 2, 4);
        h.put(c + off("MPIR_Comm", "rank"), 1, 4);
        h.put(c + off("MPIR_Comm", "local_size"), 2, 4);
        h.put(c + off("MPIR_Comm", "comm_kind"), 0, 4);
        h.word(c + comm_vcrt, vcrt);
        if i == 1 {
            h.word(c + off("MPIR_Comm", "local_group"), group);
        }
        let next = comms.get(i + 1).copied().unwrap_or(0);
        h.word(c + off("MPIR_Comm", "comm_next"), next);
    }
    g.word(list + off("MPIR_Comm_list", "head"), comms[0]);

    let req_size = size("MPIR_Request");
    let dev = off("MPIR_Request", "dev");
    let parts = dev + off("MPIDI_Request", "match") + off("MPIDI_Message_match", "parts");
    let part = |m| parts + off("MPIDI_Message_match_parts_t", m);
    let mpi_int = 0x4c00_0405;
    let request = |h: &mut Heap, tag: i64, rank: i64, context: u64, eager: u64, dtype: u64| {
        let r = h.alloc(req_size);
        h.put(r + off("MPIR_Request", "cc"), u64::from(eager == 0), 4);
        h.put(r + part("tag"), tag as u64, 4);
        h.put(r + part("rank"), rank as u64, 2);
        h.put(r + part("context_id"), context, 2);
        h.word(r + dev + off("MPIDI_Request", "user_buf"), 0xb0f0);
        h.word(r + dev + off("MPIDI_Request", "user_count"), 10);
        h.put(r + dev + off("MPIDI_Request", "datatype"), dtype, 4);
        h.word(r + dev + off("MPIDI_Request", "recv_data_sz"), eager);
        h.word(
            r + dev + off("MPIDI_Request", "tmpbuf"),
            if eager > 0 { 0xda7a } else { 0 },
        );
        // MPIDI_REQUEST_EAGER_MSG (1) or _RNDV_MSG (2) in dev.state.
        h.put(
            r + dev + off("MPIDI_Request", "state"),
            if eager > 0 { 1 } else { 2 },
            4,
        );
        r
    };
    let chain = |h: &mut Heap, reqs: &[u64], looping: bool| {
        for (i, &r) in reqs.iter().enumerate() {
            let next = match reqs.get(i + 1) {
                Some(&n) => n,
                None if looping => reqs[0],
                None => 0,
            };
            h.word(r + off("MPIR_Request", "next"), next);
        }
        reqs.first().copied().unwrap_or(0)
    };
    let posted_count = if matches!(scenario, Scenario::LongList) {
        12
    } else {
        2
    };
    let posted: Vec<u64> = (0..posted_count)
        .map(|i| match i {
            // MPICH's MPI_ANY_SOURCE is -2, its MPI_ANY_TAG -1.
            1 => request(&mut h, -1, -2, 0, 0, mpi_int),
            _ => request(&mut h, 11 + i, 0, 4 * (i as u64 % 2), 0, mpi_int),
        })
        .collect();
    let looping = matches!(scenario, Scenario::LoopingPosted);
    let first = chain(&mut h, &posted, looping);
    g.word(posted_head, first);
    let unexpected = [request(&mut h, 99, 0, 0, 20, mpi_int)];
    let first = chain(&mut h, &unexpected, false);
    let head = if matches!(scenario, Scenario::UnmappedHead) {
        0xdead_0000
    } else {
        first
    };
    g.word(unexpected_head, head);

    let sendq_size = size("MPIR_Sendq");
    let sends: Vec<u64> = [(44, mpi_int), (45, 0x8c00_0001)]
        .iter()
        .map(|&(tag, dtype)| {
            let sreq = request(&mut h, tag, 0, 0, 0, dtype);
            let s = h.alloc(sendq_size);
            h.word(s + off("MPIR_Sendq", "sreq"), sreq);
            h.put(s + off("MPIR_Sendq", "tag"), tag as u64, 4);
            h.put(s + off("MPIR_Sendq", "rank"), 0, 4);
            h.put(s + off("MPIR_Sendq", "context_id"), 0, 4);
            s
        })
        .collect();
    h.word(sends[0] + off("MPIR_Sendq", "next"), sends[1]);
    g.word(sendq_head, sends[0]);

    let mut memory = SyntheticMemory::new(abi);
    memory.map(TargetAddr(g.base), g.bytes);
    memory.map(TargetAddr(h.base), h.bytes);
    let mut symbols = SymbolTable::new();
    let object = "/synthetic/libmpi.so.12";
    let mut globals = vec![
        ("MPIR_All_communicators", list),
        ("MPID_Recvq_posted_head_ptr", posted_ptr),
        ("MPID_Recvq_unexpected_head_ptr", unexpected_ptr),
        ("MPIR_Datatype_direct", datatype_direct),
        ("MPII_Version_string", version),
        ("MPII_Version_device", device),
    ];
    if !matches!(scenario, Scenario::NoSendQueue) {
        globals.push(("MPIR_Sendq_head", sendq_head));
    }
    for (name, addr) in globals {
        symbols.insert(object, name, TargetAddr(addr), w);
    }
    Process { memory, symbols }
}

fn mpich_seed(abi: TargetAbi, o: &Offsets, scenario: Scenario) -> Result<Vec<u8>> {
    let p = mpich_process(abi, o, scenario);
    let mut seed = encoded(&p, names::MPICH);
    let values: Vec<Option<u64>> = mpich::DEFAULT
        .iter()
        .map(|&(t, m, _)| o.get(&(t, m)).copied())
        .collect();
    mpich::encode(&values, &mut seed);

    // The seed must reach what it was made for.
    let mut c = Cursor::new(&seed);
    let back = Process::parse(&mut c, names::MPICH);
    let types = mpich::parse(&mut c);
    let target = TargetParts {
        memory: &back,
        symbols: &back,
        layouts: &types,
    };
    let read = MpichCh3::new(&target, "4.0.2", "ch3:nemesis")?.read_queues(&target, &limits());
    match (scenario, read) {
        (Scenario::LoopingPosted, Err(DecodeError::Cycle { .. })) => {}
        (Scenario::UnmappedHead, Err(DecodeError::Read(_))) => {}
        (Scenario::WellFormed | Scenario::LongList | Scenario::NoSendQueue, Ok(q)) => {
            let world = &q.communicators[0];
            check(
                q.communicators.len() == 2,
                "the MPICH seed has 2 communicators",
            )?;
            check(
                world.group.as_deref() == Some(&[5, 9][..]),
                "world ranks from the VCRT",
            )?;
            check(
                q.communicators[1].group.as_deref() == Some(&[9, 5][..]),
                "world ranks from the group",
            )?;
            check(
                !world.pending_receives.operations().is_empty(),
                "posted receives",
            )?;
            check(
                world.unexpected_messages.operations().len() == 1,
                "an unexpected message",
            )?;
            let sends = world.pending_sends.operations();
            match scenario {
                Scenario::NoSendQueue => check(sends.is_empty(), "no send queue")?,
                _ => check(
                    sends.len() == 2 && sends[1].desired_length == 160,
                    "two sends, the second 10 direct-pool datatypes of 16 bytes",
                )?,
            }
        }
        (_, other) => return Err(format!("an MPICH seed read as {other:?}").into()),
    }
    Ok(seed)
}

const SCENARIOS: [(&str, Scenario); 5] = [
    ("well-formed", Scenario::WellFormed),
    ("looping-posted", Scenario::LoopingPosted),
    ("unmapped-head", Scenario::UnmappedHead),
    ("long-list", Scenario::LongList),
    ("no-send-queue", Scenario::NoSendQueue),
];

fn mpich_synthetic(out: &Path) -> Result<()> {
    let o = default_offsets();
    for abi in distinct_abis() {
        for (label, scenario) in SCENARIOS {
            let seed = mpich_seed(abi, &o, scenario)?;
            write(
                out,
                "mpich_queues",
                &format!("{label}-{}", abi_name(abi)),
                &seed,
            )?;
        }
    }
    Ok(())
}

/// The same processes, laid out with the offsets of a real MPICH (the
/// x86_64 reference build), read from its DWARF with the type oracle.
fn mpich_real(out: &Path, lib: &Path) -> Result<()> {
    let mut oracle = TypeOracle::new();
    oracle.add_object("libmpi", lib, None);
    let mut o = Offsets::new();
    for &(t, m, _) in mpich::DEFAULT {
        let v = match m {
            Some(m) => oracle.member_offset(t, m),
            None => oracle.size_of(t),
        };
        o.insert(
            (t, m),
            v.map_err(|e| format!("{} has no {t}/{m:?}: {e}", lib.display()))?,
        );
    }
    for (label, scenario) in SCENARIOS {
        let seed = mpich_seed(TargetAbi::X86_64, &o, scenario)?;
        write(out, "mpich_queues", &format!("real-{label}"), &seed)?;
    }
    Ok(())
}

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

fn core_input(out: &Path, core: &Path, exe: Option<&Path>) -> Result<()> {
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
fn cores(out: &Path) -> Result<()> {
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

/// Offsets, widths and enumerator values of a bent layout (MPICH's handle
/// objects, Open MPI's ob1 structures), one per entry of its spec.
struct SpecLayout {
    spec: &'static LayoutSpec,
    values: Values,
}

impl SpecLayout {
    fn synthetic(spec: &'static LayoutSpec, word: u64) -> Self {
        SpecLayout {
            spec,
            values: spec.defaults(word),
        }
    }

    fn entry(&self, ty: &str, member: Option<&str>) -> Option<(u64, u64)> {
        let i = self
            .spec
            .default
            .iter()
            .position(|e| e.0 == ty && e.1 == member)
            .unwrap_or_else(|| panic!("no layout entry {ty}/{member:?}"));
        self.values[i]
    }

    fn size(&self, ty: &str) -> u64 {
        self.entry(ty, None)
            .unwrap_or_else(|| panic!("the layout has no type {ty}"))
            .0
    }

    fn en(&self, name: &str) -> u64 {
        let i = self
            .spec
            .enumerators
            .iter()
            .position(|e| e.1 == name)
            .unwrap_or_else(|| panic!("no enumerator {name}"));
        self.values[self.spec.default.len() + i].map_or(0, |v| v.0)
    }

    /// The values `oracle` gives for every entry of `spec` (sizes, member
    /// offsets and widths, enumerators), and the entries it lacks.
    fn from_oracle(spec: &'static LayoutSpec, oracle: &TypeOracle) -> (Self, Vec<String>) {
        let mut values = Vec::new();
        let mut missing = Vec::new();
        for &(t, m, _, _) in spec.default {
            let v = match m {
                Some(m) => oracle
                    .offset_of(t, m)
                    .ok()
                    .and_then(|f| Some((f.offset, f.size?))),
                None => oracle.find_type(t).ok().map(|l| (l.size, 0)),
            };
            if v.is_none() {
                missing.push(format!("{t}/{}", m.unwrap_or("(size)")));
            }
            values.push(v);
        }
        for &(e, n, _) in spec.enumerators {
            let v = oracle.find_type(e).ok().and_then(|l| {
                l.enumerators
                    .iter()
                    .find(|x| x.name == n)
                    .map(|x| (x.value as u64, 0))
            });
            if v.is_none() {
                missing.push(format!("{e}::{n}"));
            }
            values.push(v);
        }
        (SpecLayout { spec, values }, missing)
    }
}

/// A synthetic process's objects written through a [`SpecLayout`].
struct Objects<'a> {
    l: &'a SpecLayout,
    h: Heap,
    symbols: SymbolTable,
}

impl Objects<'_> {
    fn set(&mut self, obj: u64, ty: &str, member: &str, value: u64) {
        if let Some((off, width)) = self.l.entry(ty, Some(member)) {
            self.h.put(obj + off, value, width.min(8) as usize);
        }
    }

    fn chars(&mut self, obj: u64, ty: &str, member: &str, s: &str) {
        if let Some((off, width)) = self.l.entry(ty, Some(member)) {
            let i = (obj + off - self.h.base) as usize;
            let n = s.len().min(width as usize - 1);
            self.h.bytes[i..i + n].copy_from_slice(&s.as_bytes()[..n]);
        }
    }

    fn symbol(&mut self, name: &str, at: u64, size: u64) {
        self.symbols.insert(OBJECT, name, TargetAddr(at), size);
    }

    /// An array of `n` objects of `ty` under the symbol `name`.
    fn array(&mut self, name: &str, ty: &str, n: u64) -> u64 {
        let size = self.l.size(ty) * n;
        let at = self.h.alloc(size.max(1));
        self.symbol(name, at, size);
        at
    }

    /// The `i`th object of the array at `base`, given its handle.
    fn object(&mut self, base: u64, ty: &str, i: u64, handle: u32) -> u64 {
        let at = base + i * self.l.size(ty);
        self.set(at, ty, "handle", u64::from(handle));
        self.set(at, ty, "ref_count", 1);
        at
    }

    /// An initialized allocator under `name` for `direct` objects of `ty`.
    fn allocator(&mut self, name: &str, ty: &str, direct: u64) -> u64 {
        const A: &str = "MPIR_Object_alloc_t";
        let at = self.array(name, A, 1);
        self.set(at, A, "initialized", 1);
        self.set(at, A, "size", self.l.size(ty));
        self.set(at, A, "direct_size", direct);
        self.set(at, A, "num_allocated", direct);
        at
    }

    /// Links `free` (objects) on the allocator's free list.
    fn free_list(&mut self, alloc: u64, free: &[u64]) {
        const A: &str = "MPIR_Object_alloc_t";
        self.set(alloc, A, "avail", free.first().copied().unwrap_or(0));
        self.set(alloc, A, "num_avail", free.len() as u64);
        for (i, &obj) in free.iter().enumerate() {
            let next = free.get(i + 1).copied().unwrap_or(0);
            self.set(obj, "MPIR_Handle_common", "next", next);
        }
    }

    fn text(&mut self, s: &str) -> u64 {
        self.h.text(s)
    }

    fn words(&mut self, ws: &[u64]) -> u64 {
        let w = self.h.abi.address_bytes() as u64;
        let at = self.h.alloc(w * ws.len() as u64);
        for (i, &v) in ws.iter().enumerate() {
            self.h.word(at + i as u64 * w, v);
        }
        at
    }

    fn ints(&mut self, vs: &[i32]) -> u64 {
        let at = self.h.alloc(4 * vs.len() as u64);
        for (i, &v) in vs.iter().enumerate() {
            self.h.put(at + i as u64 * 4, v as u32 as u64, 4);
        }
        at
    }
}

/// What a synthetic MPICH handle process holds besides its well-formed
/// objects.
#[derive(Clone, Copy, PartialEq, Eq)]
enum HandleScenario {
    WellFormed,
    LoopingFreeList,
    LoopingInfo,
    HugeGroup,
    WildVcrt,
}

const HANDLE_SCENARIOS: [(&str, HandleScenario); 5] = [
    ("well-formed", HandleScenario::WellFormed),
    ("looping-free-list", HandleScenario::LoopingFreeList),
    ("looping-info", HandleScenario::LoopingInfo),
    ("huge-group", HandleScenario::HugeGroup),
    ("wild-vcrt", HandleScenario::WildVcrt),
];

/// The addresses a seed's queries name.
struct HandleAddrs {
    file: u64,
    status: u64,
}

const WORLD: u32 = 0x4400_0000;
const DUP: u32 = 0x8400_0000;
const FREED_COMM: u32 = 0x8400_0001;
const GROUP: u32 = 0x8800_0000;
const GROUP_INDIRECT: u32 = 0xc800_0001;
const MPI_INT: u32 = 0x4c00_0405;
const CONTIG: u32 = 0x8c00_0005;
const USER_ERRHANDLER: u32 = 0x9400_0000;
const USER_OP: u32 = 0x9800_0000;
const INFO: u32 = 0x9c00_0000;
const RECV: u32 = 0xac00_0000;
const SEND: u32 = 0xac00_0001;
const GREQ: u32 = 0xac00_0002;
const WIN: u32 = 0xa000_0000;
const TOPO_KEYVAL: u32 = 0x6400_0001;

/// An MPICH process with objects of every kind, laid out with `l`: the
/// world (world ranks through the connection table) and a duplicate with a
/// group and a Cartesian topology, a freed communicator, a group in an
/// indirect block, MPI_INT and a contiguous type of it, a user error
/// handler and operation, an info with two keys, a receive, a completed
/// send and a generalized request, a window, a ROMIO file with a Fortran
/// index, and a status.
fn handle_process(
    abi: TargetAbi,
    l: &SpecLayout,
    scenario: HandleScenario,
) -> (Process, HandleAddrs) {
    let w = abi.address_bytes() as u64;
    let base = if w == 4 {
        0x0804_0000
    } else {
        0x5555_0000_0000
    };
    let mut o = Objects {
        l,
        h: Heap::new(abi, base),
        symbols: SymbolTable::new(),
    };
    o.symbols.add_object(OBJECT);
    let version = o.text("4.0.2");
    o.symbol("MPII_Version_string", version, 6);
    let device = o.text("ch3:nemesis");
    o.symbol("MPII_Version_device", device, 12);
    let process = o.array("MPIR_Process", "MPIR_Process_t", 1);
    o.set(process, "MPIR_Process_t", "rank", 1);
    let keyval_sym = o.h.alloc(4);
    o.h.put(keyval_sym, u64::from(TOPO_KEYVAL), 4);
    o.symbol("MPIR_Topology_keyval", keyval_sym, 4);

    // Error handlers: the four builtins, one user handler.
    const E: &str = "MPIR_Errhandler";
    let eh_builtin = o.array("MPIR_Errhandler_builtin", E, 4);
    let fatal = o.object(eh_builtin, E, 0, 0x5400_0000);
    for i in 1..4 {
        o.object(eh_builtin, E, i, 0x5400_0000 | i as u32);
    }
    let eh_direct = o.array("MPIR_Errhandler_direct", E, 2);
    o.allocator("MPIR_Errhandler_mem", E, 2);
    let user_eh = o.object(eh_direct, E, 0, USER_ERRHANDLER);
    o.set(user_eh, E, "language", l.en("MPIR_LANG__C"));
    o.set(user_eh, E, "kind", l.en("MPIR_COMM"));
    o.set(user_eh, E, "errfn", 0x4000);

    // Groups: MPI_GROUP_EMPTY, a direct group, an indirect block of 4.
    const G: &str = "MPIR_Group";
    let g_builtin = o.array("MPIR_Group_builtin", G, 1);
    let empty = o.object(g_builtin, G, 0, 0x4800_0000);
    o.set(empty, G, "rank", (-32766i32) as u32 as u64);
    let g_direct = o.array("MPIR_Group_direct", G, 4);
    let g_alloc = o.allocator("MPIR_Group_mem", G, 4);
    let group = o.object(g_direct, G, 0, GROUP);
    let pmap = l.size("MPII_Group_pmap_t");
    let map = o.h.alloc(2 * pmap);
    for (i, lpid) in [9u64, 5].into_iter().enumerate() {
        o.set(map + i as u64 * pmap, "MPII_Group_pmap_t", "lpid", lpid);
    }
    let group_size = if scenario == HandleScenario::HugeGroup {
        0x7fff_ffff
    } else {
        2
    };
    o.set(group, G, "size", group_size);
    o.set(group, G, "rank", 0);
    o.set(group, G, "lrank_to_lpid", map);
    let block = o.h.alloc(4 * l.size(G));
    let indirect = o.words(&[block]);
    o.set(g_alloc, "MPIR_Object_alloc_t", "indirect", indirect);
    o.set(g_alloc, "MPIR_Object_alloc_t", "indirect_size", 1);
    o.set(g_alloc, "MPIR_Object_alloc_t", "num_allocated", 8);
    let ig = o.object(block, G, 1, GROUP_INDIRECT);
    let map1 = o.h.alloc(pmap);
    o.set(map1, "MPII_Group_pmap_t", "lpid", 9);
    o.set(ig, G, "size", 1);
    o.set(ig, G, "rank", 0);
    o.set(ig, G, "lrank_to_lpid", map1);

    // Communicators: the world through the VCRT, a duplicate with the
    // group and a Cartesian topology, and a freed one.
    const C: &str = "MPIR_Comm";
    let c_builtin = o.array("MPIR_Comm_builtin", C, 3);
    let world = o.object(c_builtin, C, 0, WORLD);
    o.chars(world, C, "name", "MPI_COMM_WORLD");
    o.set(world, C, "rank", 1);
    o.set(world, C, "local_size", 2);
    o.set(world, C, "comm_kind", l.en("MPIR_COMM_KIND__INTRACOMM"));
    o.set(world, C, "errhandler", fatal);
    let vc_size = l.size("MPIDI_VC");
    let vcs = o.h.alloc(2 * vc_size);
    o.set(vcs, "MPIDI_VC", "lpid", 5);
    o.set(vcs + vc_size, "MPIDI_VC", "lpid", 9);
    let vcrt = o.h.alloc(l.size("MPIDI_VCRT") + 2 * w);
    o.set(vcrt, "MPIDI_VCRT", "size", 2);
    if let Some((off, _)) = l.entry("MPIDI_VCRT", Some("vcr_table")) {
        o.h.word(vcrt + off, vcs);
        o.h.word(vcrt + off + w, vcs + vc_size);
    }
    let vcrt_ptr = if scenario == HandleScenario::WildVcrt {
        0xdead_0000
    } else {
        vcrt
    };
    o.set(world, C, "dev.vcrt", vcrt_ptr);
    let c_direct = o.array("MPIR_Comm_direct", C, 4);
    let c_alloc = o.allocator("MPIR_Comm_mem", C, 4);
    let dup = o.object(c_direct, C, 0, DUP);
    o.chars(dup, C, "name", "dup of world");
    o.set(dup, C, "context_id", 4);
    o.set(dup, C, "recvcontext_id", 4);
    o.set(dup, C, "local_size", 2);
    o.set(dup, C, "comm_kind", l.en("MPIR_COMM_KIND__INTRACOMM"));
    o.set(dup, C, "local_group", group);
    o.set(dup, C, "errhandler", user_eh);
    const T: &str = "MPIR_Topology";
    let topo = o.h.alloc(l.size(T));
    o.set(topo, T, "kind", l.en("MPI_CART"));
    o.set(topo, T, "topo.cart.ndims", 2);
    let dims = o.ints(&[2, 1]);
    let periodic = o.ints(&[1, 0]);
    let position = o.ints(&[0, 0]);
    o.set(topo, T, "topo.cart.dims", dims);
    o.set(topo, T, "topo.cart.periodic", periodic);
    o.set(topo, T, "topo.cart.position", position);
    let keyval = o.h.alloc(l.size("MPII_Keyval"));
    o.set(keyval, "MPII_Keyval", "handle", u64::from(TOPO_KEYVAL));
    const A: &str = "MPIR_Attribute";
    let attr = o.h.alloc(l.size(A));
    o.set(attr, A, "keyval", keyval);
    o.set(attr, A, "attrType", l.en("MPIR_ATTR_PTR"));
    o.set(attr, A, "value", topo);
    o.set(dup, C, "attributes", attr);
    let freed = o.object(c_direct, C, 1, FREED_COMM);
    let free = if scenario == HandleScenario::LoopingFreeList {
        vec![freed, freed + l.size(C)]
    } else {
        vec![freed]
    };
    o.free_list(c_alloc, &free);
    if scenario == HandleScenario::LoopingFreeList {
        // The list's end, made a loop: 1 -> 2 -> 1.
        o.set(freed + l.size(C), "MPIR_Handle_common", "next", freed);
        o.set(c_alloc, "MPIR_Object_alloc_t", "num_avail", 8);
    }

    // Datatypes: MPI_INT, and a contiguous type of 4 of them.
    const D: &str = "MPIR_Datatype";
    let d_builtin = o.array("MPIR_Datatype_builtin", D, 8);
    let int = o.object(d_builtin, D, 5, MPI_INT);
    for m in ["size", "extent", "ub", "true_ub"] {
        o.set(int, D, m, 4);
    }
    o.set(int, D, "is_committed", 1);
    o.set(int, D, "is_contig", 1);
    o.chars(int, D, "name", "MPI_INT");
    let d_direct = o.array("MPIR_Datatype_direct", D, 8);
    o.allocator("MPIR_Datatype_mem", D, 8);
    let contig = o.object(d_direct, D, 5, CONTIG);
    for m in ["size", "extent", "ub", "true_ub"] {
        o.set(contig, D, m, 16);
    }
    o.set(contig, D, "is_committed", 1);
    o.set(contig, D, "is_contig", 1);
    const DC: &str = "MPIR_Datatype_contents";
    let header = l.size(DC);
    let types_at = header.div_ceil(16) * 16;
    let contents = o.h.alloc(types_at + 32);
    o.set(contents, DC, "combiner", l.en("MPI_COMBINER_CONTIGUOUS"));
    o.set(contents, DC, "nr_types", 1);
    o.set(contents, DC, "nr_ints", 1);
    o.h.put(contents + types_at, u64::from(MPI_INT), 4);
    o.h.put(contents + types_at + 16, 4, 4);
    o.set(contig, D, "contents", contents);

    // Operations: the builtins' empty slots, one user operation.
    const OP: &str = "MPIR_Op";
    o.array("MPIR_Op_builtin", OP, 16);
    let op_direct = o.array("MPIR_Op_direct", OP, 2);
    o.allocator("MPIR_Op_mem", OP, 2);
    let op = o.object(op_direct, OP, 0, USER_OP);
    o.set(op, OP, "kind", l.en("MPIR_OP_KIND__USER"));
    o.set(op, OP, "language", l.en("MPIR_LANG__C"));
    o.set(op, OP, "function", 0x4100);

    // Info: a head and two entries.
    const I: &str = "MPIR_Info";
    let i_builtin = o.array("MPIR_Info_builtin", I, 2);
    o.object(i_builtin, I, 1, 0x5c00_0001);
    let i_direct = o.array("MPIR_Info_direct", I, 4);
    o.allocator("MPIR_Info_mem", I, 4);
    let head = o.object(i_direct, I, 0, INFO);
    let e1 = o.object(i_direct, I, 1, INFO + 1);
    let e2 = o.object(i_direct, I, 2, INFO + 2);
    o.set(head, I, "next", e1);
    o.set(e1, I, "next", e2);
    if scenario == HandleScenario::LoopingInfo {
        o.set(e2, I, "next", e1);
    }
    for (e, k, v) in [(e1, "host", "node0"), (e2, "wdir", "/tmp")] {
        let k = o.text(k);
        let v = o.text(v);
        o.set(e, I, "key", k);
        o.set(e, I, "value", v);
    }

    // Requests: a receive on the world, a completed send, a generalized
    // request.
    const R: &str = "MPIR_Request";
    o.array("MPIR_Request_builtins", R, 0);
    let r_direct = o.array("MPIR_Request_direct", R, 4);
    o.allocator("MPIR_Request_mem", R, 4);
    let recv = o.object(r_direct, R, 0, RECV);
    o.set(recv, R, "kind", l.en("MPIR_REQUEST_KIND__RECV"));
    if let Some((cc, _)) = l.entry(R, Some("cc")) {
        o.set(recv, R, "cc_ptr", recv + cc);
    }
    o.set(recv, R, "cc", 1);
    o.set(recv, R, "comm", world);
    o.set(recv, R, "dev.match.parts.tag", 7);
    o.set(recv, R, "dev.match.parts.rank", 0);
    let send = o.object(r_direct, R, 1, SEND);
    o.set(send, R, "kind", l.en("MPIR_REQUEST_KIND__SEND"));
    if let Some((cc, _)) = l.entry(R, Some("cc")) {
        o.set(send, R, "cc_ptr", send + cc);
    }
    o.set(send, R, "comm", dup);
    o.set(send, R, "dev.match.parts.tag", 3);
    o.set(send, R, "dev.match.parts.rank", 1);
    if let Some((status, _)) = l.entry(R, Some("status")) {
        let s = send + status;
        o.set(s, "MPI_Status", "count_lo", 16);
        o.set(s, "MPI_Status", "MPI_SOURCE", 1);
        o.set(s, "MPI_Status", "MPI_TAG", 3);
    }
    let greq = o.object(r_direct, R, 2, GREQ);
    o.set(greq, R, "kind", l.en("MPIR_REQUEST_KIND__GREQUEST"));
    if let Some((cc, _)) = l.entry(R, Some("cc")) {
        o.set(greq, R, "cc_ptr", greq + cc);
    }
    o.set(greq, R, "cc", 1);
    const F: &str = "MPIR_Grequest_fns";
    let fns = o.h.alloc(l.size(F));
    o.set(fns, F, "U.C.query_fn", 0x4200);
    o.set(fns, F, "U.C.free_fn", 0x4210);
    o.set(fns, F, "U.C.cancel_fn", 0x4220);
    o.set(fns, F, "greq_lang", l.en("MPIR_LANG__C"));
    o.set(greq, R, "u.ureq.greq_fns", fns);

    // A window over the duplicate.
    const W: &str = "MPIR_Win";
    let w_direct = o.array("MPIR_Win_direct", W, 2);
    o.allocator("MPIR_Win_mem", W, 2);
    let win = o.object(w_direct, W, 0, WIN);
    o.chars(win, W, "name", "win0");
    o.set(win, W, "base", 0x7000);
    o.set(win, W, "size", 64);
    o.set(win, W, "disp_unit", 4);
    o.set(win, W, "comm_ptr", dup);
    o.set(win, W, "create_flavor", l.en("MPI_WIN_FLAVOR_CREATE"));

    // A ROMIO file, Fortran index 1.
    const FD: &str = "ADIOI_FileD";
    let file = o.h.alloc(l.size(FD));
    let name = o.text("/tmp/data");
    o.set(file, FD, "cookie", 2_487_376);
    o.set(file, FD, "comm", u64::from(DUP));
    o.set(file, FD, "filename", name);
    o.set(file, FD, "orig_access_mode", 1 | 8);
    o.set(file, FD, "info", u64::from(INFO));
    o.set(file, FD, "err_handler", 0x5400_0001);
    o.set(file, FD, "fortran_handle", 1);
    let table = o.words(&[0, file]);
    let table_sym = o.words(&[table]);
    o.symbol("ADIOI_Ftable", table_sym, w);
    let last = o.h.alloc(4);
    o.h.put(last, 1, 4);
    o.symbol("ADIOI_Ftable_ptr", last, 4);

    // A status in user memory: 16 bytes from rank 1, tag 3.
    let status = o.h.alloc(l.size("MPI_Status"));
    o.set(status, "MPI_Status", "count_lo", 16);
    o.set(status, "MPI_Status", "MPI_SOURCE", 1);
    o.set(status, "MPI_Status", "MPI_TAG", 3);

    assert!(
        o.h.bytes.len() <= mpidd_fuzz::MAX_SEGMENT_LEN,
        "a seed too big"
    );
    let mut memory = SyntheticMemory::new(abi);
    memory.map(TargetAddr(base), o.h.bytes);
    (
        Process {
            memory,
            symbols: o.symbols,
        },
        HandleAddrs { file, status },
    )
}

/// One query of the `handles` format.
fn query(kind: HandleKind, call: u8, value: u64, datatype: u32, out: &mut Vec<u8>) {
    let k = HandleKind::ALL.iter().position(|&x| x == kind).unwrap_or(0) as u8;
    out.push(k + 10 * call);
    out.extend_from_slice(&value.to_le_bytes());
    out.extend_from_slice(&datatype.to_le_bytes());
}

fn handle_seed(
    abi: TargetAbi,
    l: &SpecLayout,
    scenario: HandleScenario,
    real: bool,
) -> Result<Vec<u8>> {
    let (p, a) = handle_process(abi, l, scenario);
    let mut seed = encoded(&p, HANDLE_SYMBOLS);
    let word = abi.address_bytes() as u64;
    handles::encode(&l.values, word, &mut seed);
    use HandleKind as K;
    let queries: Vec<(K, u8, u64, u32)> = vec![
        (K::Comm, 1, u64::from(WORLD), 0),
        (K::Comm, 1, u64::from(DUP), 0),
        (K::Comm, 1, u64::from(FREED_COMM), 0),
        (K::Comm, 1, 0x0400_0000, 0),
        (K::Comm, 0, u64::from(GROUP), 0),
        (K::Group, 1, u64::from(GROUP), 0),
        (K::Group, 2, u64::from(GROUP_INDIRECT), 0),
        (K::Group, 1, 0x4800_0000, 0),
        (K::Datatype, 1, u64::from(CONTIG), 0),
        (K::Datatype, 0, u64::from(MPI_INT), 0),
        (K::Errhandler, 1, u64::from(USER_ERRHANDLER), 0),
        (K::Errhandler, 1, 0x5400_0000, 0),
        (K::Op, 1, u64::from(USER_OP), 0),
        (K::Op, 1, 0x5800_0003, 0),
        (K::Info, 1, u64::from(INFO), 0),
        (K::Info, 1, 0x5c00_0001, 0),
        (K::Request, 1, u64::from(RECV), 0),
        (K::Request, 1, u64::from(SEND), 0),
        (K::Request, 1, u64::from(GREQ), 0),
        (K::Win, 1, u64::from(WIN), 0),
        (K::File, 0, a.file, 0),
        (K::File, 2, 1, 0),
        (K::Status, 3, a.status, 0),
        (K::Datatype, 3, a.status, MPI_INT),
    ];
    seed.push(queries.len() as u8);
    for &(k, call, v, dt) in &queries {
        query(k, call, v, dt, &mut seed);
    }

    // The seed must reach what it was made for.
    let mut c = Cursor::new(&seed);
    let back = Process::parse(&mut c, HANDLE_SYMBOLS);
    let types = handles::table(&handles::parse(&mut c, word));
    let mpich = Mpich::from_parts(&back, &back, &types, limits())?;
    check(
        mpich.implementation_name() == "MPICH 4.0.2 (ch3:nemesis)",
        "the version strings",
    )?;
    let resolve = |k: K, v: u32| mpich.resolve(k, i64::from(v as i32));
    let comm = |v: u32| -> Result<mpihandles::CommDetails> {
        match resolve(K::Comm, v)?.details {
            Details::Comm(c) => Ok(c),
            other => Err(format!("{v:#x} is not a communicator: {other:?}").into()),
        }
    };
    match scenario {
        HandleScenario::LoopingFreeList => {
            let e = resolve(K::Comm, DUP).err();
            check(
                matches!(e, Some(HandleError::Read(ReadError::Cycle { .. }))),
                "a looping free list is a cycle error",
            )?;
            return Ok(seed);
        }
        HandleScenario::LoopingInfo => {
            let e = resolve(K::Info, INFO).err();
            check(
                matches!(e, Some(HandleError::Read(ReadError::Cycle { .. }))),
                "a looping info list is a cycle error",
            )?;
            return Ok(seed);
        }
        HandleScenario::HugeGroup => {
            let v = resolve(K::Group, GROUP)?;
            let Details::Group(g) = &v.details else {
                return Err("not a group".into());
            };
            check(
                g.world_ranks
                    .reason()
                    .is_some_and(|r| r.contains("max_table_entries")),
                "a huge group's ranks are refused",
            )?;
            return Ok(seed);
        }
        HandleScenario::WildVcrt => {
            let world = comm(WORLD)?;
            check(
                world.local_world_ranks.reason().is_some(),
                "an unmapped VCRT gives no world ranks",
            )?;
            check(
                world.name.value().map(String::as_str) == Some("MPI_COMM_WORLD"),
                "the world's name, whatever its VCRT",
            )?;
            return Ok(seed);
        }
        HandleScenario::WellFormed => {}
    }
    let world = comm(WORLD)?;
    check(
        world.name.value().map(String::as_str) == Some("MPI_COMM_WORLD"),
        "the world's name",
    )?;
    check(
        world.local_world_ranks == Availability::Value(vec![5, 9]),
        "world ranks from the VCRT",
    )?;
    check(world.rank == Availability::Value(1), "the world rank")?;
    let dup = comm(DUP)?;
    check(
        dup.local_world_ranks == Availability::Value(vec![9, 5]),
        "world ranks from the group",
    )?;
    let freed = resolve(K::Comm, FREED_COMM)?;
    check(
        freed.state == Availability::Value(ObjectState::Freed),
        "a freed communicator",
    )?;
    let ig = resolve(K::Group, GROUP_INDIRECT)?;
    check(
        matches!(&ig.details, Details::Group(g) if g.world_ranks == Availability::Value(vec![9])),
        "a group in an indirect block",
    )?;
    let info = resolve(K::Info, INFO)?;
    check(
        matches!(&info.details, Details::Info(i) if i.entries.value().map(Vec::len) == Some(2)),
        "an info with two keys",
    )?;
    let status = mpich.status(TargetAddr(a.status), Some(i64::from(MPI_INT as i32)))?;
    check(
        status.source == 1 && status.elements == Availability::Value(4),
        "a status of 4 MPI_INTs from rank 1",
    )?;
    if real {
        // The real MPICH's members beyond these may differ from the
        // synthetic ones; what matters is that its offsets reach objects.
        return Ok(seed);
    }
    check(
        matches!(dup.topology, Availability::Value(Topology::Cartesian { ref dims, .. }) if dims == &[2, 1]),
        "a Cartesian topology",
    )?;
    let contig = resolve(K::Datatype, CONTIG)?;
    check(
        matches!(&contig.details, Details::Datatype(d)
            if d.constructor.value().is_some_and(|c| c.combiner == "MPI_COMBINER_CONTIGUOUS")),
        "a contiguous datatype",
    )?;
    let recv = resolve(K::Request, RECV)?;
    check(
        matches!(&recv.details, Details::Request(r)
            if r.request_kind == Availability::Value(RequestKind::Receive)
                && r.complete == Availability::Value(false)),
        "a pending receive",
    )?;
    let send = resolve(K::Request, SEND)?;
    check(
        matches!(&send.details, Details::Request(r)
            if r.status.value().is_some_and(|s| s.tag == 3)),
        "a completed send with its status",
    )?;
    let greq = resolve(K::Request, GREQ)?;
    check(
        matches!(&greq.details, Details::Request(r) if r.generalized.value().is_some()),
        "a generalized request",
    )?;
    let win = resolve(K::Win, WIN)?;
    check(
        matches!(&win.details, Details::Win(w) if w.name.value().map(String::as_str) == Some("win0")),
        "a window",
    )?;
    let file = mpich.resolve_fortran(K::File, 1)?;
    check(
        matches!(&file.details, Details::File(f) if f.filename.value().map(String::as_str) == Some("/tmp/data")),
        "a file by its Fortran index",
    )?;
    let op = resolve(K::Op, USER_OP)?;
    check(
        matches!(&op.details, Details::Op(o) if o.commutative == Availability::Value(true)),
        "a user operation",
    )?;
    let eh = resolve(K::Errhandler, USER_ERRHANDLER)?;
    check(
        matches!(&eh.details, Details::Errhandler(e) if e.user_function.value().is_some_and(Option::is_some)),
        "a user error handler",
    )?;
    Ok(seed)
}

fn handles_synthetic(out: &Path) -> Result<()> {
    for abi in distinct_abis() {
        let l = SpecLayout::synthetic(&handles::SPEC, abi.address_bytes() as u64);
        for (label, scenario) in HANDLE_SCENARIOS {
            let seed = handle_seed(abi, &l, scenario, false)?;
            write(out, "handles", &format!("{label}-{}", abi_name(abi)), &seed)?;
        }
    }
    Ok(())
}

/// The handle seeds laid out with the x86_64 reference MPICH's own
/// offsets, widths and enumerator values, read from its DWARF; entries it
/// lacks are removed.
fn handles_real(out: &Path, lib: &Path) -> Result<()> {
    let mut oracle = TypeOracle::new();
    oracle.add_object("libmpi", lib, None);
    let (l, missing) = SpecLayout::from_oracle(&handles::SPEC, &oracle);
    if !missing.is_empty() {
        eprintln!(
            "   handles: the reference MPICH lacks {} of the synthetic entries: {}",
            missing.len(),
            missing.join(", ")
        );
    }
    for (label, scenario) in HANDLE_SCENARIOS {
        let seed = handle_seed(TargetAbi::X86_64, &l, scenario, true)?;
        write(out, "handles", &format!("real-{label}"), &seed)?;
    }
    Ok(())
}

/// What an `ompi_handles` seed is made of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OmpiScenario {
    /// Well formed.
    Sound,
    /// A class that is its own parent and an info list that loops.
    Loops,
}

/// An `ompi_handles` seed: a synthetic Open MPI process laid out by
/// `values` (for `abi`'s pointer width) with an object of most kinds, and
/// queries that resolve each by pointer and by Fortran INTEGER.
fn ompi_seed(
    abi: TargetAbi,
    values: &ompi_handles::Values,
    scenario: OmpiScenario,
) -> Result<Vec<u8>> {
    use mpihandles::{CommSpec, HandleKind as K, Ompi, SyntheticOmpi, OMPI_SYMBOLS};
    let word = abi.address_bytes() as u64;
    let layouts = ompi_handles::table(values, word);
    let mut s = SyntheticOmpi::new(abi, layouts.clone());
    let world = s.world();
    let cart = s.comm(&CommSpec {
        name: "cart".to_string(),
        rank: 1,
        members: vec![3, 2, 1, 0],
        cart: Some((vec![2, 2], vec![1, 1], vec![0, 1])),
        attributes: vec![(21, 0x1234)],
        ..CommSpec::default()
    });
    let inter = s.comm(&CommSpec {
        name: "inter".to_string(),
        members: vec![1, 3],
        remote: Some(vec![0, 2]),
        ..CommSpec::default()
    });
    let int = s.predefined_type("MPI_INT", 4);
    // MPI_Type_contiguous(3, MPI_INT): MPI_COMBINER_CONTIGUOUS is 2.
    let contig = s.derived_type("contig", 2, &[3], &[], &[int], (12, 0, 12));
    let info = s.info(&[("key", "value"), ("other", "2")]);
    let recv = s.receive(cart, 2, 5);
    if scenario == OmpiScenario::Loops {
        let cyclic = s.class("cyclic_t", &[]);
        s.put(cyclic, "opal_class_t", "cls_parent", cyclic.0);
        let next = |t: &mpidd_read::LayoutTable, ty: &str, m: &str| {
            mpidd_read::Layouts::member(t, ty, m).map_or(0, |m| m.offset)
        };
        let sentinel = info.0
            + next(&layouts, "ompi_info_t", "super")
            + next(&layouts, "opal_info_t", "super")
            + next(&layouts, "opal_list_t", "opal_list_sentinel");
        // The sentinel's next is the first entry: point it at the sentinel's
        // own next field's owner, a loop of one.
        let item_next = next(&layouts, "opal_list_item_t", "opal_list_next");
        let first = s.alloc(64);
        s.put(
            TargetAddr(sentinel),
            "opal_list_item_t",
            "opal_list_next",
            first.0,
        );
        s.int_at(TargetAddr(first.0 + item_next), word, first.0);
    }
    let (memory, symbols, _) = s.finish();
    let p = Process { memory, symbols };
    let mut seed = encoded(&p, OMPI_SYMBOLS);
    ompi_handles::encode(values, word, &mut seed);
    let queries: Vec<(K, u8, u64, u64)> = vec![
        (K::Comm, 0, world.0, 0),
        (K::Comm, 0, cart.0, 0),
        (K::Comm, 0, inter.0, 0),
        (K::Comm, 1, 1, 0),
        (K::Group, 1, 0, 0),
        (K::Datatype, 0, contig.0, 0),
        (K::Datatype, 1, 0, 0),
        (K::Info, 0, info.0, 0),
        (K::Request, 0, recv.0, 0),
        (K::Group, 0, cart.0, 0),
        (K::Datatype, 2, recv.0, int.0),
        (K::Status, 2, recv.0, 0),
    ];
    seed.push(queries.len() as u8);
    for &(k, call, v, dt) in &queries {
        let op = HandleKind::ALL.iter().position(|&x| x == k).unwrap_or(0) as u8;
        seed.push(op + 10 * call);
        seed.extend_from_slice(&v.to_le_bytes());
        seed.extend_from_slice(&dt.to_le_bytes());
    }

    // The seed must reach what it was made for.
    let mut c = Cursor::new(&seed);
    let back = Process::parse(&mut c, OMPI_SYMBOLS);
    let types = ompi_handles::table(&ompi_handles::parse(&mut c, word), word);
    let ompi = Ompi::from_parts(&back, &back, &types, limits())?;
    check(
        ompi.implementation_name() == "Open MPI 4.1.4 (ob1)",
        "the version string and the PML",
    )?;
    let v = ompi.resolve(K::Comm, cart.0 as i64)?;
    check(
        matches!(&v.details, Details::Comm(d) if matches!(d.topology.value(), Some(Topology::Cartesian { .. }))),
        "a Cartesian communicator",
    )?;
    let v = ompi.resolve(K::Datatype, contig.0 as i64)?;
    check(
        matches!(&v.details, Details::Datatype(d) if d.type_map.value().is_some()),
        "a contiguous datatype's type map",
    )?;
    let v = ompi.resolve(K::Info, info.0 as i64)?;
    let entries = match &v.details {
        Details::Info(d) => d.entries.clone(),
        _ => Availability::not_available("not an info"),
    };
    match scenario {
        OmpiScenario::Sound => check(
            entries.value().is_some_and(|e| e.len() == 2),
            "two info pairs",
        )?,
        OmpiScenario::Loops => check(entries.value().is_none(), "a looping info list")?,
    }
    Ok(seed)
}

fn ompi_handles_synthetic(out: &Path) -> Result<()> {
    for abi in distinct_abis() {
        let values = ompi_handles::defaults(abi.address_bytes() as u64);
        for (label, scenario) in [
            ("sound", OmpiScenario::Sound),
            ("loops", OmpiScenario::Loops),
        ] {
            let seed = ompi_seed(abi, &values, scenario)?;
            write(
                out,
                "ompi_handles",
                &format!("{label}-{}", abi_name(abi)),
                &seed,
            )?;
        }
    }
    Ok(())
}

/// What a synthetic Open MPI ob1 process holds besides its well-formed
/// queues.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ob1Scenario {
    WellFormed,
    /// The world's wildcard receives loop back without reaching their
    /// list's sentinel.
    LoopingWild,
    /// Peer 1 has 200 receives posted for it, above the fuzz limit.
    LongSpecific,
    /// The send requests' free list names an unmapped chunk.
    UnmappedChunk,
}

const OB1_SCENARIOS: [(&str, Ob1Scenario); 4] = [
    ("well-formed", Ob1Scenario::WellFormed),
    ("looping-wild", Ob1Scenario::LoopingWild),
    ("long-specific", Ob1Scenario::LongSpecific),
    ("unmapped-chunk", Ob1Scenario::UnmappedChunk),
];

/// ob1's first-fragment header types (`pml_ob1_hdr.h`).
const HDR_MATCH: u64 = 0x41;
const HDR_RNDV: u64 = 0x42;
/// The class pointer every send request of the free list carries.
const SEND_CLASS: u64 = 0x0777_0000;

impl Objects<'_> {
    /// Links `items` into the `opal_list_t` at `list`, a ring through its
    /// sentinel.
    fn opal_list(&mut self, list: u64, items: &[u64]) {
        let (sentinel, _) = self
            .l
            .entry("opal_list_t", Some("opal_list_sentinel"))
            .expect("opal_list_t has its sentinel");
        let sentinel = list + sentinel;
        let mut ring = vec![sentinel];
        ring.extend_from_slice(items);
        for (i, &node) in ring.iter().enumerate() {
            let next = ring[(i + 1) % ring.len()];
            let prev = ring[(i + ring.len() - 1) % ring.len()];
            self.set(node, "opal_list_item_t", "opal_list_next", next);
            self.set(node, "opal_list_item_t", "opal_list_prev", prev);
        }
    }

    /// A posted receive of `count` ints.
    #[allow(clippy::too_many_arguments)]
    fn ob1_recv(&mut self, peer: i64, tag: i64, count: u64, seq: u64, int: u64) -> u64 {
        const R: &str = "mca_pml_ob1_recv_request_t";
        let at = self.h.alloc(self.l.size(R));
        let buffer = self.h.alloc(4 * count);
        self.set(
            at,
            R,
            "req_recv.req_base.req_ompi.req_state",
            self.l.en("OMPI_REQUEST_ACTIVE"),
        );
        self.set(at, R, "req_recv.req_base.req_datatype", int);
        self.set(at, R, "req_recv.req_base.req_addr", buffer);
        self.set(at, R, "req_recv.req_base.req_count", count);
        self.set(at, R, "req_recv.req_base.req_peer", peer as u64);
        self.set(at, R, "req_recv.req_base.req_tag", tag as u64);
        self.set(at, R, "req_recv.req_base.req_sequence", seq);
        at
    }

    /// A first fragment from `src` with one segment of `seg_len` bytes
    /// (headers included).
    fn ob1_frag(&mut self, hdr: u64, src: u64, tag: u64, seg_len: u64, msg_length: u64) -> u64 {
        const F: &str = "mca_pml_ob1_recv_frag_t";
        const S: &str = "mca_btl_base_segment_t";
        let at = self.h.alloc(self.l.size(F));
        let data = self.h.alloc(seg_len);
        self.set(at, F, "hdr.hdr_common.hdr_type", hdr);
        self.set(at, F, "hdr.hdr_match.hdr_src", src);
        self.set(at, F, "hdr.hdr_match.hdr_tag", tag);
        self.set(at, F, "hdr.hdr_match.hdr_seq", 1);
        if hdr == HDR_RNDV {
            self.set(at, F, "hdr.hdr_rndv.hdr_msg_length", msg_length);
        }
        self.set(at, F, "num_segments", 1);
        let (segments, _) = self.l.entry(F, Some("segments")).expect("segments");
        self.set(at + segments, S, "seg_addr", data);
        self.set(at + segments, S, "seg_len", seg_len);
        at
    }

    /// A communicator in `table` slot `slot`.
    #[allow(clippy::too_many_arguments)]
    fn ob1_comm(
        &mut self,
        table: u64,
        slot: u64,
        name: &str,
        context: u64,
        rank: u64,
        group: u64,
        pml: u64,
    ) -> u64 {
        const C: &str = "ompi_communicator_t";
        let at = self.h.alloc(self.l.size(C));
        self.chars(at, C, "c_name", name);
        self.set(at, C, "c_contextid", context);
        self.set(at, C, "c_my_rank", rank);
        self.set(at, C, "c_local_group", group);
        self.set(at, C, "c_pml_comm", pml);
        let w = self.h.abi.address_bytes() as u64;
        self.h.word(table + slot * w, at);
        at
    }

    /// An ompi_group_t of the procs at `procs` (pointers, or sentinels).
    fn ob1_group(&mut self, procs: &[u64]) -> u64 {
        const G: &str = "ompi_group_t";
        let at = self.h.alloc(self.l.size(G));
        let table = self.words(procs);
        self.set(at, G, "grp_proc_count", procs.len() as u64);
        self.set(at, G, "grp_proc_pointers", table);
        at
    }

    /// ob1's state of a communicator: its wildcard receives and its peers.
    fn ob1_pml_comm(&mut self, wild: &[u64], peers: &[u64]) -> u64 {
        const P: &str = "mca_pml_ob1_comm_t";
        let at = self.h.alloc(self.l.size(P));
        let (wild_at, _) = self.l.entry(P, Some("wild_receives")).expect("wild");
        self.opal_list(at + wild_at, wild);
        let table = self.words(peers);
        self.set(at, P, "procs", table);
        self.set(at, P, "num_procs", peers.len() as u64);
        at
    }

    /// One peer's state: receives posted for it, its unexpected
    /// fragments, and the head of its out-of-order ring.
    fn ob1_peer(&mut self, specific: &[u64], unexpected: &[u64], cant_match: u64) -> u64 {
        const P: &str = "mca_pml_ob1_comm_proc_t";
        let at = self.h.alloc(self.l.size(P));
        let (s, _) = self
            .l
            .entry(P, Some("specific_receives"))
            .expect("specific");
        let (u, _) = self
            .l
            .entry(P, Some("unexpected_frags"))
            .expect("unexpected");
        self.opal_list(at + s, specific);
        self.opal_list(at + u, unexpected);
        self.set(at, P, "frags_cant_match", cant_match);
        at
    }
}

/// An Open MPI process with the ob1 PML laid out with `l`: it is world
/// rank 1 of 4, with MPI_COMM_WORLD, MPI_COMM_SELF, a duplicate and a
/// split in a table with empty slots; posted receives (a wildcard one and
/// one for a peer on the world, one with MPI_ANY_TAG on the duplicate),
/// unexpected fragments (eager, rendezvous, and two out of order), and a
/// chunk of three send requests (one free, one eager send complete but not
/// waited for, one rendezvous pending).
fn ob1_process(abi: TargetAbi, l: &SpecLayout, scenario: Ob1Scenario) -> Process {
    let w = abi.address_bytes() as u64;
    let base = if w == 4 {
        0x0900_0000
    } else {
        0x7f00_1000_0000
    };
    let mut o = Objects {
        l,
        h: Heap::new(abi, base),
        symbols: SymbolTable::new(),
    };
    o.symbols.add_object(OBJECT);
    let version = o.text("4.1.4");
    o.symbol("opal_version_string", version, 6);
    const PC: &str = "mca_pml_base_component_t";
    let component = o.array("mca_pml_base_selected_component", PC, 1);
    o.chars(component, PC, "pmlm_version.mca_component_name", "ob1");

    const DT: &str = "ompi_datatype_t";
    let int = o.h.alloc(l.size(DT));
    o.set(int, DT, "super.size", 4);

    // Procs 0 to 2 are ompi_proc_t; proc 3 was never contacted, so the
    // group holds its name as a sentinel (proc.h).
    const PR: &str = "ompi_proc_t";
    let mut procs = Vec::new();
    for vpid in 0..3 {
        let p = o.h.alloc(l.size(PR));
        o.set(p, PR, "super.proc_name.vpid", vpid);
        procs.push(p);
    }
    procs.push(if w == 8 { (3 << 32) | 1 } else { (3 << 1) | 1 });
    let world_group = o.ob1_group(&procs);
    let self_group = o.ob1_group(&procs[1..2]);
    let split_group = o.ob1_group(&[procs[1], procs[3]]);

    // MPI_COMM_WORLD's queues.
    let specific = o.ob1_recv(0, 11, 10, 1, int);
    let wild = o.ob1_recv(-1, 7, 3, 2, int);
    let eager = o.ob1_frag(HDR_MATCH, 0, 99, 14 + 20, 0);
    let rndv_hdr = l.size("mca_pml_ob1_rendezvous_hdr_t");
    let rndv = o.ob1_frag(HDR_RNDV, 2, 33, rndv_hdr, 1 << 20);
    // Out of order from peer 2: a ring of one head, whose range is a ring
    // of one more fragment.
    let head = o.ob1_frag(HDR_MATCH, 2, 50, 14 + 8, 0);
    let next_in_range = o.ob1_frag(HDR_MATCH, 2, 51, 14 + 8, 0);
    const F: &str = "mca_pml_ob1_recv_frag_t";
    o.set(head, F, "super.super.opal_list_next", head);
    o.set(head, F, "super.super.opal_list_prev", head);
    o.set(head, F, "range", next_in_range);
    o.set(
        next_in_range,
        F,
        "super.super.opal_list_next",
        next_in_range,
    );
    o.set(
        next_in_range,
        F,
        "super.super.opal_list_prev",
        next_in_range,
    );
    let mut wild_list = vec![wild];
    if scenario == Ob1Scenario::LoopingWild {
        let second = o.ob1_recv(-1, 8, 1, 3, int);
        wild_list.push(second);
    }
    let mut specific_1 = Vec::new();
    if scenario == Ob1Scenario::LongSpecific {
        for i in 0..200 {
            specific_1.push(o.ob1_recv(1, 1000 + i, 1, 10 + i as u64, int));
        }
    }
    let peer0 = o.ob1_peer(&[specific], &[eager], 0);
    let peer1 = o.ob1_peer(&specific_1, &[], 0);
    let peer2 = o.ob1_peer(&[], &[rndv], head);
    let world_pml = o.ob1_pml_comm(&wild_list, &[peer0, peer1, peer2, 0]);
    if scenario == Ob1Scenario::LoopingWild {
        // The second receive leads back to the first, not to the sentinel.
        o.set(wild_list[1], "opal_list_item_t", "opal_list_next", wild);
    }
    // The duplicate's: a receive from peer 3 with MPI_ANY_TAG.
    let any_tag = o.ob1_recv(3, -1, 5, 1, int);
    let dup_peer3 = o.ob1_peer(&[any_tag], &[], 0);
    let dup_pml = o.ob1_pml_comm(&[], &[0, 0, 0, dup_peer3]);
    let self_pml = o.ob1_pml_comm(&[], &[0]);
    let split_pml = o.ob1_pml_comm(&[], &[0, 0]);

    const PA: &str = "opal_pointer_array_t";
    let comms = o.array("ompi_mpi_communicators", PA, 1);
    let table = o.h.alloc(6 * w);
    o.set(comms, PA, "size", 6);
    o.set(comms, PA, "addr", table);
    let world = o.ob1_comm(table, 0, "MPI_COMM_WORLD", 0, 1, world_group, world_pml);
    o.ob1_comm(table, 1, "MPI_COMM_SELF", 1, 0, self_group, self_pml);
    let dup = o.ob1_comm(table, 3, "mpidd_dup", 3, 1, world_group, dup_pml);
    o.ob1_comm(table, 4, "mpidd_split_odd", 4, 0, split_group, split_pml);

    // The eager BTL to every peer: 4096 bytes, less ob1's header.
    const BTL: &str = "mca_btl_base_module_t";
    let btl = o.h.alloc(l.size(BTL));
    o.set(btl, BTL, "btl_eager_limit", 4096);
    const BB: &str = "mca_bml_base_btl_t";
    let bml_btl = o.h.alloc(l.size(BB));
    o.set(bml_btl, BB, "btl", btl);
    const EP: &str = "mca_bml_base_endpoint_t";
    let endpoint = o.h.alloc(l.size(EP));
    let (eager_at, _) = l.entry(EP, Some("btl_eager")).expect("btl_eager");
    const BA: &str = "mca_bml_base_btl_array_t";
    o.set(endpoint + eager_at, BA, "arr_size", 1);
    o.set(endpoint + eager_at, BA, "bml_btls", bml_btl);

    // The send requests' free list: one chunk of three.
    const FL: &str = "opal_free_list_t";
    const SR: &str = "mca_pml_ob1_send_request_t";
    let fl = o.array("mca_pml_base_send_requests", FL, 1);
    let stride = l.size(SR).div_ceil(8) * 8;
    let item = l.size("opal_free_list_item_t");
    let chunk = o.h.alloc(item.div_ceil(8) * 8 + 3 * stride);
    let (allocations, _) = l.entry(FL, Some("fl_allocations")).expect("allocations");
    if scenario == Ob1Scenario::UnmappedChunk {
        let (sentinel, _) = l
            .entry("opal_list_t", Some("opal_list_sentinel"))
            .expect("sentinel");
        o.opal_list(fl + allocations, &[]);
        o.set(
            fl + allocations + sentinel,
            "opal_list_item_t",
            "opal_list_next",
            0xdead_0000,
        );
    } else {
        o.opal_list(fl + allocations, &[chunk]);
    }
    o.set(fl, FL, "fl_num_allocated", 3);
    o.set(fl, FL, "fl_num_per_alloc", 3);
    o.set(fl, FL, "fl_frag_size", l.size(SR));
    o.set(fl, FL, "fl_frag_alignment", 8);
    o.set(fl, FL, "fl_frag_class", SEND_CLASS);
    let first = chunk + item.div_ceil(8) * 8;
    let sends: Vec<u64> = (0..3).map(|i| first + i * stride).collect();
    for &s in &sends {
        o.set(s, "opal_object_t", "obj_class", SEND_CLASS);
        o.set(
            s,
            SR,
            "req_send.req_base.req_ompi.req_state",
            l.en("OMPI_REQUEST_INVALID"),
        );
    }
    let send = |o: &mut Objects<'_>, s: u64, comm: u64, peer: u64, tag: u64, bytes: u64| {
        let buffer = o.h.alloc(16);
        o.set(
            s,
            SR,
            "req_send.req_base.req_ompi.req_state",
            l.en("OMPI_REQUEST_ACTIVE"),
        );
        o.set(
            s,
            SR,
            "req_send.req_base.req_ompi.req_type",
            l.en("OMPI_REQUEST_PML"),
        );
        o.set(
            s,
            SR,
            "req_send.req_base.req_type",
            l.en("MCA_PML_REQUEST_SEND"),
        );
        o.set(s, SR, "req_send.req_base.req_comm", comm);
        o.set(s, SR, "req_send.req_base.req_datatype", int);
        o.set(s, SR, "req_send.req_base.req_addr", buffer);
        o.set(s, SR, "req_send.req_addr", buffer);
        o.set(s, SR, "req_send.req_base.req_count", bytes / 4);
        o.set(s, SR, "req_send.req_base.req_peer", peer);
        o.set(s, SR, "req_send.req_base.req_tag", tag);
        o.set(s, SR, "req_send.req_bytes_packed", bytes);
        o.set(
            s,
            SR,
            "req_send.req_send_mode",
            l.en("MCA_PML_BASE_SEND_STANDARD"),
        );
        o.set(s, SR, "req_endpoint", endpoint);
    };
    send(&mut o, sends[1], dup, 2, 44, 2000);
    o.set(sends[1], SR, "req_send.req_base.req_ompi.req_complete", 1);
    o.set(sends[1], SR, "req_send.req_base.req_pml_complete", 1);
    send(&mut o, sends[2], world, 3, 33, 1 << 20);

    assert!(
        o.h.bytes.len() <= mpidd_fuzz::MAX_SEGMENT_LEN,
        "an ob1 seed too big: {} bytes",
        o.h.bytes.len()
    );
    let mut memory = SyntheticMemory::new(abi);
    memory.map(TargetAddr(base), o.h.bytes);
    Process {
        memory,
        symbols: o.symbols,
    }
}

fn ob1_seed(abi: TargetAbi, l: &SpecLayout, scenario: Ob1Scenario) -> Result<Vec<u8>> {
    let p = ob1_process(abi, l, scenario);
    let mut seed = encoded(&p, names::OB1);
    let word = abi.address_bytes() as u64;
    l.spec.encode(&l.values, word, &mut seed);

    // The seed must reach what it was made for.
    let mut c = Cursor::new(&seed);
    let back = Process::parse(&mut c, names::OB1);
    let types = ob1::table(&ob1::parse(&mut c, word));
    let target = TargetParts {
        memory: &back,
        symbols: &back,
        layouts: &types,
    };
    let read = OmpiOb1::new(&target, &limits())?.read_queues(&target, &limits());
    let q = match (scenario, read) {
        (Ob1Scenario::UnmappedChunk, Err(DecodeError::Read(_))) => return Ok(seed),
        (Ob1Scenario::UnmappedChunk, other) => {
            return Err(format!("an unmapped chunk read as {other:?}").into())
        }
        (_, read) => read?,
    };
    let comm = |name: &str| {
        q.communicators
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("no communicator {name}"))
    };
    check(q.communicators.len() == 4, "4 communicators")?;
    check(q.global_rank == 1, "world rank 1")?;
    let world = comm("MPI_COMM_WORLD")?;
    check(
        world.group.as_deref() == Some(&[0, 1, 2, 3][..]),
        "world ranks from the procs and a sentinel",
    )?;
    check(
        comm("mpidd_split_odd")?.group.as_deref() == Some(&[1, 3][..]),
        "the split's world ranks",
    )?;
    let failed = |queue: &Queue, what: &str| match queue {
        Queue::Failed { error, .. } if error.contains(what) => Ok(()),
        other => Err(format!(
            "the world's receives are {other:?}, not failed with {what:?}"
        )),
    };
    match scenario {
        Ob1Scenario::LoopingWild => failed(&world.pending_receives, "loops")?,
        Ob1Scenario::LongSpecific => failed(&world.pending_receives, "longer than")?,
        _ => {
            let posted = world.pending_receives.operations();
            check(
                posted.len() == 2
                    && posted[0].desired_tag == 11
                    && posted[0].desired_length == 40
                    && posted[1].desired_local_rank == -1,
                "two posted receives in sequence order, in bytes",
            )?;
            let unexpected = world.unexpected_messages.operations();
            check(
                unexpected.len() == 4
                    && unexpected
                        .iter()
                        .any(|u| u.actual_tag == 99 && u.actual_length == 20)
                    && unexpected
                        .iter()
                        .any(|u| u.actual_tag == 33 && u.actual_length == 1 << 20),
                "eager, rendezvous and two out-of-order fragments",
            )?;
        }
    }
    let dup = comm("mpidd_dup")?;
    check(
        matches!(dup.pending_receives.operations(), [r] if r.tag_wild),
        "an MPI_ANY_TAG receive on the duplicate",
    )?;
    let sent = dup.pending_sends.operations();
    check(
        matches!(sent, [s] if s.status == OperationStatus::Complete
            && s.protocol == Some(Protocol::Eager) && s.desired_length == 2000),
        "an eager send complete but not waited for",
    )?;
    let sent = world.pending_sends.operations();
    check(
        matches!(sent, [s] if s.status == OperationStatus::Pending
            && s.protocol == Some(Protocol::Rendezvous)),
        "a rendezvous send pending",
    )?;
    Ok(seed)
}

fn ob1_synthetic(out: &Path) -> Result<()> {
    for abi in distinct_abis() {
        let l = SpecLayout::synthetic(&ob1::SPEC, abi.address_bytes() as u64);
        for (label, scenario) in OB1_SCENARIOS {
            let seed = ob1_seed(abi, &l, scenario)?;
            write(
                out,
                "ompi_ob1_queues",
                &format!("{label}-{}", abi_name(abi)),
                &seed,
            )?;
        }
    }
    Ok(())
}

/// The `ompi_handles` seeds laid out with the reference Open MPI's own
/// sizes, offsets and widths (x86_64), read from the objects' DWARF.
fn ompi_handles_real(out: &Path, prefix: &Path) -> Result<()> {
    let mut oracle = TypeOracle::new();
    for (name, path) in [
        ("libmpi", "lib/libmpi.so.40"),
        ("libopen-pal", "lib/libopen-pal.so.40"),
        ("mca_io_ompio", "lib/openmpi/mca_io_ompio.so"),
    ] {
        oracle.add_object(name, &prefix.join(path), None);
    }
    let (table, unanswered) =
        mpidd_read::LayoutTable::record(&oracle, &|l| mpihandles::ompi_ask_layouts(l));
    if !unanswered.is_empty() {
        return Err(format!(
            "the objects' DWARF lacks {} of the Open MPI handle layouts; first: {}",
            unanswered.len(),
            unanswered[0]
        )
        .into());
    }
    let mut values = ompi_handles::values_of(&table);
    // Enumerators are kept as the synthetic layout numbers them.
    for (v, d) in values.iter_mut().zip(ompi_handles::defaults(8)) {
        if v.is_none() {
            *v = d;
        }
    }
    for (label, scenario) in [
        ("sound", OmpiScenario::Sound),
        ("loops", OmpiScenario::Loops),
    ] {
        let seed = ompi_seed(TargetAbi::X86_64, &values, scenario)?;
        write(out, "ompi_handles", &format!("real-{label}"), &seed)?;
    }
    Ok(())
}

/// The ob1 seeds laid out with the x86_64 reference Open MPI's own
/// offsets, widths and enumerator values, read from the DWARF of its
/// libmpi, libopen-pal and mca_pml_ob1.so.
fn ob1_real(out: &Path, prefix: &Path) -> Result<()> {
    let mut oracle = TypeOracle::new();
    for (name, path) in [
        ("libmpi", "lib/libmpi.so"),
        ("libopen-pal", "lib/libopen-pal.so"),
        ("mca_pml_ob1", "lib/openmpi/mca_pml_ob1.so"),
    ] {
        oracle.add_object(name, &prefix.join(path), None);
    }
    let (l, missing) = SpecLayout::from_oracle(&ob1::SPEC, &oracle);
    // Every question of the decoder is answered by a real build; the
    // enumerators beyond them are this file's, and must be there too.
    if !missing.is_empty() {
        return Err(format!(
            "the reference Open MPI lacks {}: {}",
            missing.len(),
            missing.join(", ")
        )
        .into());
    }
    // 200 real receive requests (about 0.6 KB each) do not fit one seed
    // segment; the synthetic layouts carry that scenario.
    for (label, scenario) in OB1_SCENARIOS
        .into_iter()
        .filter(|&(_, s)| s != Ob1Scenario::LongSpecific)
    {
        let seed = ob1_seed(TargetAbi::X86_64, &l, scenario)?;
        write(out, "ompi_ob1_queues", &format!("real-{label}"), &seed)?;
    }
    Ok(())
}
