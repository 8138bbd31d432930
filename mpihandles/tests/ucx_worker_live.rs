//! The UCX worker reader on a real UCP worker: tests/ucx/worker_queues.c,
//! built against the installed UCX (Debian 12's libucx0 1.13.1, stripped),
//! posts two receives and sends itself six messages no receive matches
//! (one with a request it allocated itself),
//! then waits. Its worker is read live (stopped under an `AttachGuard`,
//! let go afterwards) with the layouts of the profile mpidd ships for that
//! libucp, and every receive, unexpected message and pending send must be
//! what the program made: the expected values come from its source and
//! from the addresses it prints, not from the reader.

mod common;

use common::{build_c_program, hex, shipped_profile, Program};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mpidd_read::{AttachGuard, LayoutProfile, Layouts, Limits, LiveProcess, TargetMemory};
use mpidd_types::TargetAddr;
use mpihandles::{read_ucx_worker, UcxProtocol};

// From tests/ucx/worker_queues.c.
const TAG_EXACT: u64 = 0x0000_0001_0000_0007;
const TAG_MASKED: u64 = 0x0000_0002_0000_0000;
const MASK_MASKED: u64 = 0xffff_ffff_0000_0000;
const TAG_EAGER: u64 = 0x0000_0003_0000_0001;
const TAG_SYNC: u64 = 0x0000_0003_0000_0002;
const TAG_RNDV: u64 = 0x0000_0003_0000_0003;
const TAG_MULTI: u64 = 0x0000_0003_0000_0004;
const TAG_SYNC_MULTI: u64 = 0x0000_0003_0000_0005;
const TAG_OWN: u64 = 0x0000_0003_0000_0006;
const BIG: u64 = 1 << 20;
/// Above the self transport's 8 KiB segment (UCX_SELF_SEG_SIZE), below
/// the rendezvous threshold: sent eagerly in fragments.
const MEDIUM: u64 = 32768;
/// Below `BIG`, above the 64 and 8 bytes sent eagerly.
const RNDV_THRESH: &str = "65536";

/// The program, built once for every test here.
fn build() -> PathBuf {
    static EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        build_c_program(
            "tests/ucx/worker_queues.c",
            "ucx-worker-queues",
            &["-lucp", "-lucs"],
            "libucx-dev",
        )
    })
    .clone()
}

fn ucx_profile() -> LayoutProfile {
    shipped_profile("UCX", "1.13.1")
}

#[test]
fn a_real_worker_with_direct_ids_is_read_live_and_from_a_core() {
    run(false);
}

/// With indirect request ids (as with peer error handling), each endpoint
/// also lists its sends awaiting an answer, which finds the send whose
/// request the program allocated itself and tells rendezvous sends.
#[test]
fn a_real_worker_with_indirect_ids_is_read_live_and_from_a_core() {
    run(true);
}

fn run(indirect: bool) {
    let exe = build();
    let mut command = Command::new(&exe);
    command.env("UCX_RNDV_THRESH", RNDV_THRESH);
    if indirect {
        command.env("UCX_PROTO_INDIRECT_ID", "on");
    } else {
        // UCX's default for endpoints without peer error handling, as MPICH
        // and Open MPI create them.
        command.env_remove("UCX_PROTO_INDIRECT_ID");
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the UCX program");
    let stdout = child.stdout.take().unwrap();
    let program = Program(child);
    let pid = program.0.id() as i32;
    let mut printed = std::collections::HashMap::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if line == "READY" {
            break;
        }
        let mut words = line.split_whitespace();
        let key = words.next().unwrap().to_string();
        printed.insert(key, words.map(str::to_string).collect::<Vec<_>>());
    }
    let at = |key: &str, i: usize| -> u64 {
        let words = printed
            .get(key)
            .unwrap_or_else(|| panic!("the program did not print {key} (it printed {printed:?})"));
        match words[i].as_str() {
            "(nil)" => 0,
            w => hex(w),
        }
    };

    // The profile is for the libucp the program loaded.
    let profile = ucx_profile();
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let libucp = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.ends_with("/libucp.so.0.0.0"))
        .expect("the program maps libucp.so.0.0.0");
    let id = mpidd_read::build_id(Path::new(libucp)).unwrap().unwrap();
    assert!(
        profile.describes(&id),
        "{libucp} is not the Debian libucp build the shipped profile is for"
    );
    let layouts = &profile.layouts;
    let request_size = layouts.size_of("ucp_request_t").unwrap();

    let queues = {
        let guard = AttachGuard::attach(pid).expect("attach (ptrace) to the UCX program");
        let memory = LiveProcess::open(pid).unwrap();
        let q = read_ucx_worker(
            &memory,
            layouts,
            TargetAddr(at("worker", 0)),
            &Limits::default(),
        );
        guard.detach().expect("let the program go");
        q.expect("read the worker")
    };
    check(&queues, &at, request_size, indirect);

    // The same from a core gcore dumps of the process (gdb's gcore stops
    // it and lets it go).
    let core =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ucx-worker-queues-{indirect}.core"));
    let _ = std::fs::remove_file(&core);
    let out = Command::new("gcore")
        .arg("-o")
        .arg(&core)
        .arg(pid.to_string())
        .output()
        .expect("gcore (gdb) is needed: apt-get install gdb");
    assert!(
        out.status.success(),
        "gcore failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let core = core.with_extension(format!("core.{pid}"));
    let target = mpidd_read::CoreTarget::open(&core, Some(&exe), None).expect("open the core");
    let from_core = read_ucx_worker(
        &target,
        layouts,
        TargetAddr(at("worker", 0)),
        &Limits::default(),
    )
    .expect("read the worker from the core");
    assert_eq!(from_core, queues);
    // The sender a header names is the pending send's own request id
    // (`ucp_request_t.id`, which the sender put in the header): with direct
    // ids, the address of its request.
    let id = layouts.member("ucp_request_t", "id").unwrap();
    for u in &from_core.unexpected {
        let Some(sender) = u.sender else { continue };
        let request = match from_core.sends.iter().find(|s| s.tag == u.tag) {
            Some(send) => send.request.0,
            // In no pool: only the endpoints list it, with indirect ids.
            None if u.tag == TAG_OWN && !indirect => at("send_own", 0) - request_size,
            None => panic!(
                "no pending send for the unexpected message of tag {:#x}",
                u.tag
            ),
        };
        let mut word = [0u8; 8];
        target
            .read_exact(
                TargetAddr(request + id.offset),
                &mut word,
                "ucp_request_t.id",
            )
            .unwrap();
        assert_eq!(sender.req_id, u64::from_le_bytes(word), "tag {:#x}", u.tag);
        let direct = (!indirect).then_some(TargetAddr(request));
        assert_eq!(sender.request(), direct, "tag {:#x}", u.tag);
        // The endpoint id the sender wrote is the receiver's endpoint to it
        // (here, the process's endpoint to itself).
        let ep = (!indirect).then_some(TargetAddr(at("ep", 0)));
        assert_eq!(sender.endpoint(), ep, "tag {:#x}", u.tag);
    }
    let _ = std::fs::remove_file(&core);
    drop(program);
}

/// What the program made, against what the reader found.
fn check(
    queues: &mpihandles::UcxWorkerQueues,
    at: &dyn Fn(&str, usize) -> u64,
    request_size: u64,
    indirect: bool,
) {
    assert!(queues.notes.is_empty(), "{:?}", queues.notes);

    // Posted: the exact receive first (hashed queue), then the masked one
    // (wildcard queue), in posting order.
    let posted: Vec<(u64, u64, u64, u64, u64)> = queues
        .posted
        .iter()
        .map(|p| (p.user.0, p.tag, p.tag_mask, p.buffer, p.length))
        .collect();
    assert_eq!(
        posted,
        vec![
            (
                at("recv_exact", 0),
                TAG_EXACT,
                u64::MAX,
                at("recv_exact", 1),
                100
            ),
            (
                at("recv_masked", 0),
                TAG_MASKED,
                MASK_MASKED,
                at("recv_masked", 1),
                200
            ),
        ]
    );
    for p in &queues.posted {
        assert_eq!(p.request.0 + request_size, p.user.0);
    }
    assert!(queues.posted[0].sequence < queues.posted[1].sequence);

    // Unexpected, in arrival order: eager, eager-sync, rendezvous, and the
    // first fragments of the two fragmented eager messages.
    let unexpected: Vec<(u64, UcxProtocol, bool, Option<u64>, bool)> = queues
        .unexpected
        .iter()
        .map(|u| {
            (
                u.tag,
                u.protocol,
                u.first_of_several,
                u.length,
                u.sender.is_some(),
            )
        })
        .collect();
    assert_eq!(
        unexpected,
        vec![
            (TAG_EAGER, UcxProtocol::Eager, false, Some(64), false),
            (TAG_SYNC, UcxProtocol::EagerSync, false, Some(8), true),
            (TAG_RNDV, UcxProtocol::Rendezvous, false, Some(BIG), true),
            (TAG_MULTI, UcxProtocol::Eager, true, Some(MEDIUM), false),
            (TAG_OWN, UcxProtocol::Rendezvous, false, Some(BIG), true),
            (
                TAG_SYNC_MULTI,
                UcxProtocol::EagerSync,
                true,
                Some(MEDIUM),
                true
            ),
        ]
    );

    // Pending sends: the synchronous ones (waiting for a match) and the
    // rendezvous one; the eager ones completed at once (the program got no
    // request for them).
    assert_eq!(at("send_eager", 0), 0, "the eager send completed in place");
    assert_eq!(
        at("send_multi", 0),
        0,
        "the fragmented send completed in place"
    );
    let ep = at("ep", 0);
    let mut sends: Vec<(u64, u64, u64, u64, u64, bool)> = queues
        .sends
        .iter()
        .map(|s| {
            (
                s.user.0,
                s.tag,
                s.buffer,
                s.length,
                s.endpoint,
                s.synchronous,
            )
        })
        .collect();
    sends.sort_unstable();
    let mut expected = vec![
        (
            at("send_sync", 0),
            TAG_SYNC,
            at("send_sync", 1),
            8,
            ep,
            true,
        ),
        (
            at("send_rndv", 0),
            TAG_RNDV,
            at("send_rndv", 1),
            BIG,
            ep,
            false,
        ),
        (
            at("send_sync_multi", 0),
            TAG_SYNC_MULTI,
            at("send_sync_multi", 1),
            MEDIUM,
            ep,
            true,
        ),
    ];
    if indirect {
        // In no pool: found through its endpoint.
        expected.push((
            at("send_own", 0),
            TAG_OWN,
            at("send_own", 1),
            BIG,
            ep,
            false,
        ));
    }
    expected.sort_unstable();
    assert_eq!(sends, expected);

    // With indirect ids, the sends that are not synchronous yet await an
    // answer are the rendezvous ones; with direct ids nothing tells.
    for send in &queues.sends {
        let rendezvous = indirect && (send.tag == TAG_RNDV || send.tag == TAG_OWN);
        assert_eq!(
            send.protocol == UcxProtocol::Rendezvous,
            rendezvous,
            "tag {:#x}: {:?}",
            send.tag,
            send.protocol
        );
    }

    // The pool's receives are the two posted ones, both in the queues.
    let mut receives: Vec<(u64, bool)> = queues
        .receives
        .iter()
        .map(|r| (r.user.0, r.posted))
        .collect();
    receives.sort_unstable();
    let mut expected = vec![(at("recv_exact", 0), true), (at("recv_masked", 0), true)];
    expected.sort_unstable();
    assert_eq!(receives, expected);
}
