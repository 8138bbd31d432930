//! The MPI-2 reader and walker over synthetic processes whose bytes the
//! builder lays out without the decoders.

use std::collections::HashMap;

use mpidd_read::mpi2dd::{self, Mpi2ddError, Mpi2ddPeer, PackingChoice};
use mpidd_read::synthetic::{Mpi2ddSpec, PeerSpec, RankSpec};
use mpidd_read::walk::{self, WalkError};
use mpidd_read::{Connector, Limits, ReadError, SyntheticCoreOptions, SyntheticJob};
use mpidd_types::{AddressWidth, ByteOrder, DebuggerFlags, MpiFlags, Packing, TargetAbi};
use proptest::prelude::*;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Processes keyed by (host, pid).
struct Jobs(HashMap<(String, i32), SyntheticJob>);

impl Connector for Jobs {
    type Target = SyntheticJob;
    fn connect(&mut self, host: &str, pid: i32, _: &str) -> Result<SyntheticJob, BoxError> {
        self.0
            .get(&(host.to_string(), pid))
            .cloned()
            .ok_or_else(|| format!("no process {pid} on {host}").into())
    }
}

fn peer(host: &str, exe: &str, pid: i32) -> Mpi2ddPeer {
    Mpi2ddPeer {
        host_name: host.into(),
        executable_name: exe.into(),
        pid,
    }
}

const META: PeerSpec = PeerSpec {
    host: "login",
    exe: "/usr/bin/mpirun",
    pid: 100,
};
const DIR_A: PeerSpec = PeerSpec {
    host: "node-a",
    exe: "/usr/bin/orted",
    pid: 200,
};
const DIR_B: PeerSpec = PeerSpec {
    host: "node-b",
    exe: "/usr/bin/orted",
    pid: 300,
};

fn rank(host: &'static str, pid: i32, rank: i32, world: &'static str) -> RankSpec<'static> {
    RankSpec {
        host,
        exe: "/opt/ring",
        pid,
        rank,
        world,
        spawn: None,
    }
}

/// A metadirectory (also listing itself, which the walker must skip), two
/// directories with two ranks each, one of them spawned, and a rank process
/// that only knows its metadirectory.
fn job(abi: TargetAbi, packing: Packing) -> Jobs {
    let build = |spec: Mpi2ddSpec<'_>| {
        SyntheticJob::builder(abi)
            .mpi2dd(&Mpi2ddSpec { packing, ..spec })
            .build()
    };
    let a_ranks = [rank("node-a", 201, 0, "w0"), rank("node-a", 202, 1, "w0")];
    let b_ranks = [
        rank("node-b", 301, 2, "w0"),
        RankSpec {
            spawn: Some(("w0", 1, 0)),
            ..rank("node-b", 302, 0, "w1")
        },
    ];
    let mut m = HashMap::new();
    m.insert(
        ("login".to_string(), 100),
        build(Mpi2ddSpec {
            mpi_flags: 0x05,
            meta: Some(META),
            directories: &[DIR_A, DIR_B, META],
            metadirectories: &[],
            ..Mpi2ddSpec::default()
        }),
    );
    m.insert(
        ("node-a".to_string(), 200),
        build(Mpi2ddSpec {
            mpi_flags: 0x02,
            meta: Some(META),
            ranks: &a_ranks,
            ..Mpi2ddSpec::default()
        }),
    );
    m.insert(
        ("node-b".to_string(), 300),
        build(Mpi2ddSpec {
            mpi_flags: 0x02,
            meta: Some(META),
            ranks: &b_ranks,
            ..Mpi2ddSpec::default()
        }),
    );
    m.insert(
        ("node-a".to_string(), 201),
        build(Mpi2ddSpec {
            meta: Some(META),
            ..Mpi2ddSpec::default()
        }),
    );
    Jobs(m)
}

fn all_abis() -> Vec<TargetAbi> {
    let mut v = Vec::new();
    for o in [ByteOrder::Little, ByteOrder::Big] {
        for w in [AddressWidth::W32, AddressWidth::W64] {
            v.push(TargetAbi::new(o, w));
        }
    }
    v
}

#[test]
fn the_walk_from_a_rank_finds_every_rank_once() {
    for abi in all_abis() {
        for packing in [Packing::Packed, Packing::Natural] {
            let mut jobs = job(abi, packing);
            let start = peer("node-a", "/opt/ring", 201);
            let tree = walk::walk(&mut jobs, &start, packing, &Limits::default()).unwrap();
            let visited: Vec<i32> = tree.processes.iter().map(|p| p.peer.pid).collect();
            assert_eq!(visited, [201, 100, 200, 300], "{abi} {packing:?}");
            assert!(tree.failures.is_empty());
            assert_eq!(tree.truncated, None);
            let ranks: Vec<(String, i32, i32)> = tree
                .ranks
                .iter()
                .map(|r| (r.comm_world_id.clone(), r.rank, r.pid))
                .collect();
            assert_eq!(
                ranks,
                [
                    ("w0".into(), 0, 201),
                    ("w0".into(), 1, 202),
                    ("w0".into(), 2, 301),
                    ("w1".into(), 0, 302)
                ]
            );
            let spawned = tree.ranks[3].spawn_desc.as_ref().unwrap();
            assert_eq!(
                (
                    spawned.parent_comm_world_id.as_str(),
                    spawned.parent_rank,
                    spawned.sequence
                ),
                ("w0", 1, 0)
            );
            let meta = &tree.processes[1].info;
            assert_eq!(
                meta.mpi_flags,
                MpiFlags::I_AM_METADIR | MpiFlags::I_AM_STARTER
            );
            assert_eq!(meta.directory_table.len(), 3);
        }
    }
}

#[test]
fn a_wrong_packing_is_caught_by_the_tables_not_silently_accepted() {
    // An LP64 job laid out packed, read as natural: the directory entries
    // are 20 bytes apart, not 24, so the second entry decodes to garbage
    // pointers and reading its strings fails or names the wrong process.
    let mut jobs = job(TargetAbi::X86_64, Packing::Packed);
    let start = peer("login", "/usr/bin/mpirun", 100);
    let right = walk::walk(&mut jobs, &start, Packing::Packed, &Limits::default()).unwrap();
    let wrong = walk::walk(&mut jobs, &start, Packing::Natural, &Limits::default());
    match wrong {
        Err(_) => {}
        Ok(tree) => assert_ne!(tree.ranks, right.ranks),
    }
}

#[test]
fn unreachable_processes_are_reported_and_limits_hold() {
    let mut jobs = job(TargetAbi::S390X, Packing::Natural);
    jobs.0.remove(&("node-b".to_string(), 300));
    let start = peer("login", "/usr/bin/mpirun", 100);
    let tree = walk::walk(&mut jobs, &start, Packing::Natural, &Limits::default()).unwrap();
    assert_eq!(tree.failures.len(), 1);
    assert_eq!(tree.failures[0].peer.pid, 300);
    assert!(tree.failures[0].error.contains("no process 300"));
    assert_eq!(tree.ranks.len(), 2);

    let shallow = Limits {
        max_walk_depth: 0,
        ..Limits::default()
    };
    let tree = walk::walk(&mut jobs, &start, Packing::Natural, &shallow).unwrap();
    assert_eq!(tree.processes.len(), 1);
    assert!(tree.truncated.unwrap().contains("max_walk_depth"));

    let few = Limits {
        max_walk_processes: 2,
        ..Limits::default()
    };
    let tree = walk::walk(&mut jobs, &start, Packing::Natural, &few).unwrap();
    assert_eq!(tree.processes.len() + tree.failures.len(), 2);
    assert!(tree.truncated.unwrap().contains("max_walk_processes"));

    let err = walk::walk(
        &mut jobs,
        &peer("x", "y", 1),
        Packing::Natural,
        &Limits::default(),
    )
    .unwrap_err();
    assert!(matches!(err, WalkError::Connect { pid: 1, .. }), "{err}");
}

#[test]
fn invalid_info_blocks_are_refused_with_their_address() {
    let job = SyntheticJob::builder(TargetAbi::POWERPC)
        .mpir_starter(&[("a", "b", 1)])
        .build();
    let err = mpi2dd::read_process(&job, &job, Packing::Natural, &Limits::default()).unwrap_err();
    assert!(matches!(err, Mpi2ddError::NoInfo { .. }), "{err}");

    // Corrupt the magic of a real info block.
    let mut job = SyntheticJob::builder(TargetAbi::POWERPC)
        .mpi2dd(&Mpi2ddSpec::default())
        .build();
    let at = job
        .symbols
        .iter()
        .find(|s| s.name == "MPI2DD_info")
        .unwrap()
        .addr;
    mpidd_read::TargetMemoryMut::write_all(
        &mut job.memory,
        mpidd_types::TargetAddr(at.0 + 2),
        b"X",
    )
    .unwrap();
    let err = mpi2dd::read_process(&job, &job, Packing::Natural, &Limits::default()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains(&format!("MPI2DD_info at {at}")), "{msg}");
    assert!(msg.contains("magic[2]"), "{msg}");
}

#[test]
fn debugger_flags_are_the_only_bytes_written() {
    for packing in [Packing::Packed, Packing::Natural] {
        let mut job = SyntheticJob::builder(TargetAbi::S390X)
            .mpi2dd(&Mpi2ddSpec {
                packing,
                ranks: &[rank("n", 1, 0, "w")],
                ..Mpi2ddSpec::default()
            })
            .build();
        let before: Vec<Vec<u8>> = job.memory.segments().map(|(_, b)| b.to_vec()).collect();
        let flags = DebuggerFlags::GATE | DebuggerFlags::BEING_DEBUGGED;
        mpi2dd::write_debugger_flags(&mut job.memory, &job.symbols, packing, flags).unwrap();
        let after: Vec<Vec<u8>> = job.memory.segments().map(|(_, b)| b.to_vec()).collect();
        let changed: usize = before
            .iter()
            .zip(&after)
            .map(|(a, b)| a.iter().zip(b).filter(|(x, y)| x != y).count())
            .sum();
        assert_eq!(
            changed, 1,
            "big-endian 0x00000003 differs from 0 in one byte"
        );
        let p = mpi2dd::read_process(&job, &job, packing, &Limits::default()).unwrap();
        assert_eq!(p.debugger_flags, flags);
    }
}

#[test]
fn the_walk_works_over_real_core_files() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mpi2dd-cores");
    std::fs::create_dir_all(&dir).unwrap();
    for (abi, packing) in [
        (TargetAbi::S390X, Packing::Packed),
        (TargetAbi::I686, Packing::Natural),
    ] {
        let jobs = job(abi, packing);
        let mut from_cores = walk::CoreFiles::new();
        for ((host, pid), j) in &jobs.0 {
            let core = dir.join(format!("{host}-{pid}.core"));
            j.write_files(
                &core,
                &dir.join(format!("{host}-{pid}.exe")),
                SyntheticCoreOptions::default(),
            )
            .unwrap();
            from_cores.insert(host, *pid, &core, None);
        }
        let mut in_memory = jobs;
        let start = peer("node-b", "/usr/bin/orted", 300);
        let a = walk::walk(&mut from_cores, &start, packing, &Limits::default()).unwrap();
        let b = walk::walk(&mut in_memory, &start, packing, &Limits::default()).unwrap();
        assert_eq!(a.ranks, b.ranks);
        assert_eq!(a.ranks.len(), 4);
        // node-b, its metadirectory and node-a; the rank process 201 is in
        // no table, so only a walk that starts there sees it.
        assert_eq!(a.processes.len(), 3);
        let view = |t: &walk::JobTree| -> Vec<_> {
            t.processes
                .iter()
                .map(|p| (p.peer.clone(), p.depth, p.info.directory_table.clone()))
                .collect()
        };
        assert_eq!(view(&a), view(&b));
    }
}

/// Without a forced layout, each process of both LP64 layouts is read in
/// the one it was laid out in, and says so; the walk then finds the same
/// job as when told. On 32-bit ABIs, where nothing is padded, the records
/// read the same either way.
#[test]
fn the_layout_is_detected_without_a_flag() {
    for abi in all_abis() {
        for packing in [Packing::Packed, Packing::Natural] {
            let mut jobs = job(abi, packing);
            let meta = jobs.0[&("login".to_string(), 100)].clone();
            let p = mpi2dd::read_process(&meta, &meta, None, &Limits::default()).unwrap();
            let forced = mpi2dd::read_process(&meta, &meta, packing, &Limits::default()).unwrap();
            assert_eq!(
                p.directory_table, forced.directory_table,
                "{abi} {packing:?}"
            );
            assert_eq!(p.directory_table.len(), 3);
            assert_eq!(forced.packing.chosen, PackingChoice::Forced);
            let expected = match abi.address_width {
                AddressWidth::W64 => (packing, PackingChoice::Detected),
                AddressWidth::W32 => (Packing::Natural, PackingChoice::Either),
            };
            assert_eq!(
                (p.packing.packing, p.packing.chosen),
                expected,
                "{abi} {packing:?}"
            );
            // A directory with ranks only: its tables do not tell.
            let dir = jobs.0[&("node-a".to_string(), 200)].clone();
            let d = mpi2dd::read_process(&dir, &dir, None, &Limits::default()).unwrap();
            assert_eq!(d.packing.chosen, PackingChoice::Either, "{abi} {packing:?}");
            assert_eq!(d.proctable.len(), 2);

            let start = peer("node-b", "/usr/bin/orted", 300);
            let told = walk::walk(&mut jobs, &start, packing, &Limits::default()).unwrap();
            let found = walk::walk(&mut jobs, &start, None, &Limits::default()).unwrap();
            assert_eq!(found.ranks, told.ranks, "{abi} {packing:?}");
            assert_eq!(found.ranks.len(), 4);
        }
    }
}

/// Forcing the wrong layout still fails as before, and says which layout
/// it read with.
#[test]
fn a_forced_wrong_layout_is_not_overridden() {
    let jobs = job(TargetAbi::S390X, Packing::Packed);
    let meta = &jobs.0[&("login".to_string(), 100)];
    match mpi2dd::read_process(meta, meta, Packing::Natural, &Limits::default()) {
        Err(e) => assert!(e.to_string().contains("Natural"), "{e}"),
        Ok(p) => assert_ne!(
            p.directory_table.iter().map(|d| d.pid).collect::<Vec<_>>(),
            [200, 300, 100],
            "read right in the wrong layout"
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Detection picks the layout a job was built with whenever the two
    /// layouts give different records, and otherwise reads the same
    /// records as the right layout does.
    #[test]
    fn detection_reads_what_the_right_layout_reads(
        order in prop_oneof![Just(ByteOrder::Little), Just(ByteOrder::Big)],
        packing in prop_oneof![Just(Packing::Packed), Just(Packing::Natural)],
        dirs in proptest::collection::vec(("[a-z]{1,8}", "/[a-z]{1,8}", 1..i32::MAX), 0..6),
    ) {
        let abi = TargetAbi::new(order, AddressWidth::W64);
        let peers: Vec<PeerSpec> = dirs.iter().map(|(h, e, p)| PeerSpec { host: h, exe: e, pid: *p }).collect();
        let job = SyntheticJob::builder(abi)
            .mpi2dd(&Mpi2ddSpec { packing, directories: &peers, metadirectories: &peers[..peers.len() / 2], ..Mpi2ddSpec::default() })
            .build();
        let right = mpi2dd::read_process(&job, &job, packing, &Limits::default()).unwrap();
        let found = mpi2dd::read_process(&job, &job, None, &Limits::default()).unwrap();
        prop_assert_eq!(&found.directory_table, &right.directory_table);
        prop_assert_eq!(&found.metadirectory_table, &right.metadirectory_table);
        if found.packing.chosen == PackingChoice::Detected {
            prop_assert_eq!(found.packing.packing, packing);
        } else {
            prop_assert_eq!(found.packing.chosen, PackingChoice::Either);
        }
        if dirs.len() >= 2 {
            prop_assert_eq!(found.packing.chosen, PackingChoice::Detected);
        }
    }

    #[test]
    fn random_processes_read_back(
        order in prop_oneof![Just(ByteOrder::Little), Just(ByteOrder::Big)],
        width in prop_oneof![Just(AddressWidth::W32), Just(AddressWidth::W64)],
        packing in prop_oneof![Just(Packing::Packed), Just(Packing::Natural)],
        ranks in proptest::collection::vec(
            ("[a-z]{1,8}", any::<i32>(), any::<i32>(), "[a-z0-9]{1,6}",
             proptest::option::of(("[a-z0-9]{1,6}", any::<i32>(), any::<i32>()))), 0..20),
        dirs in proptest::collection::vec(("[a-z]{1,8}", "/[a-z]{1,8}", any::<i32>()), 0..6),
    ) {
        let abi = TargetAbi::new(order, width);
        let specs: Vec<RankSpec> = ranks.iter().map(|(h, pid, r, w, s)| RankSpec {
            host: h, exe: "/x", pid: *pid, rank: *r, world: w,
            spawn: s.as_ref().map(|(pw, pr, sq)| (pw.as_str(), *pr, *sq)),
        }).collect();
        let peers: Vec<PeerSpec> = dirs.iter().map(|(h, e, p)| PeerSpec { host: h, exe: e, pid: *p }).collect();
        let job = SyntheticJob::builder(abi)
            .mpi2dd(&Mpi2ddSpec { packing, ranks: &specs, directories: &peers, metadirectories: &peers[..peers.len() / 2], ..Mpi2ddSpec::default() })
            .build();
        let p = mpi2dd::read_process(&job, &job, packing, &Limits::default()).unwrap();
        prop_assert_eq!(p.proctable.len(), ranks.len());
        for (got, (h, pid, r, w, s)) in p.proctable.iter().zip(&ranks) {
            prop_assert_eq!(&got.host_name, h);
            prop_assert_eq!(got.pid, *pid);
            prop_assert_eq!(got.rank, *r);
            prop_assert_eq!(&got.comm_world_id, w);
            prop_assert_eq!(got.spawn_desc.as_ref().map(|d| (d.parent_comm_world_id.clone(), d.parent_rank, d.sequence)),
                            s.clone());
        }
        let got: Vec<_> = p.directory_table.iter().map(|d| (d.host_name.clone(), d.executable_name.clone(), d.pid)).collect();
        prop_assert_eq!(got, dirs.clone());
        prop_assert_eq!(p.metadirectory_table.len(), dirs.len() / 2);
    }

    /// Hostile sizes never allocate what they claim.
    #[test]
    fn hostile_counts_are_refused(count in prop_oneof![Just(i32::MAX), Just(-1), 1 << 20..i32::MAX]) {
        let mut job = SyntheticJob::builder(TargetAbi::X86_64)
            .mpi2dd(&Mpi2ddSpec { ranks: &[rank("n", 1, 0, "w")], ..Mpi2ddSpec::default() })
            .build();
        let at = job.symbols.iter().find(|s| s.name == "MPI2DD_info").unwrap().addr;
        // proctable_size sits at offset 80 on LP64 natural (after 8 addresses).
        mpidd_read::TargetMemoryMut::write_i32(&mut job.memory, mpidd_types::TargetAddr(at.0 + 80), count).unwrap();
        let limits = Limits { max_table_entries: 1 << 16, ..Limits::default() };
        let err = mpi2dd::read_process(&job, &job, Packing::Natural, &limits).unwrap_err();
        let ok = matches!(
            err,
            Mpi2ddError::Read {
                cause: ReadError::LimitExceeded { .. } | ReadError::NegativeCount { .. },
                ..
            }
        );
        prop_assert!(ok, "{}", err);
    }
}
