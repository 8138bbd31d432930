//! The OFI reader on real libfabric endpoints: tests/ofi/endpoint_queues.c,
//! built against the installed libfabric (Debian 12's libfabric1 1.17.0,
//! stripped), opens two endpoints A and B of the provider `FI_PROVIDER`
//! names, posts three tagged receives at A, sends A four tagged messages
//! from B (three no receive matches, then a marker the third receive
//! takes), then waits. Its endpoints are read live (stopped under an
//! `AttachGuard`, let go afterwards) and from a core, with the layouts of
//! the profile mpidd ships for that libfabric, and every receive,
//! unexpected message and send in flight must be what the program made:
//! the expected values come from its source and from the addresses it
//! prints, not from the reader.
//!
//! Run over `shm` (its own receive context, its sends in flight) and over
//! `tcp`, which libfabric 1.17 layers under `ofi_rxm` for RDM endpoints.

mod common;

use common::{build_c_program, hex, shipped_profile, Program};
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mpidd_read::{AttachGuard, LayoutProfile, Limits, LiveProcess};
use mpidd_types::TargetAddr;
use mpihandles::{
    read_ofi_endpoint, read_ofi_info_provider, read_ofi_provider_name, OfiEndpointQueues,
    OfiProtocol, OfiProvider,
};

// From tests/ofi/endpoint_queues.c.
const TAG_EXACT: u64 = 0x0000_0001_0000_0007;
const TAG_MASKED: u64 = 0x0000_0002_0000_0000;
const IGNORE_MASKED: u64 = 0x0000_0000_ffff_ffff;
const TAG_SMALL: u64 = 0x0000_0003_0000_0001;
const TAG_MEDIUM: u64 = 0x0000_0003_0000_0002;
const TAG_LARGE: u64 = 0x0000_0003_0000_0003;
const SMALL: u64 = 64;
const MEDIUM: u64 = 3000;
const LARGE: u64 = 1 << 20;
/// Where each endpoint's address vector has the other endpoint.
const OTHER: Option<u64> = Some(1);

/// Debian 12's libfabric1 1.17.0-3 (amd64), which the shipped profile is
/// for.
const DEBIAN_LIBFABRIC_BUILD_ID: &str = "fe18b194102d71a0e42d7917af959ffa5d36152c";

/// The program, built once for every test here.
fn build() -> PathBuf {
    static EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        build_c_program(
            "tests/ofi/endpoint_queues.c",
            "ofi-endpoint-queues",
            &["-lfabric"],
            "libfabric-dev",
        )
    })
    .clone()
}

fn ofi_profile() -> LayoutProfile {
    shipped_profile("libfabric", "1.17.0")
}

/// What the program printed: each line's first word, and the rest.
struct Printed(HashMap<String, Vec<String>>);

impl Printed {
    fn word(&self, key: &str, i: usize) -> &str {
        let words = self
            .0
            .get(key)
            .unwrap_or_else(|| panic!("the program did not print {key} (it printed {:?})", self.0));
        &words[i]
    }

    fn at(&self, key: &str, i: usize) -> u64 {
        hex(self.word(key, i))
    }
}

#[test]
fn shm_endpoints_are_read_live_and_from_a_core() {
    run("shm", "shm");
}

#[test]
fn tcp_endpoints_through_rxm_are_read_live_and_from_a_core() {
    run("tcp", "tcp;ofi_rxm");
}

fn run(provider: &str, named: &str) {
    let exe = build();
    let mut child = Command::new(&exe)
        .env("FI_PROVIDER", provider)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the libfabric program");
    let stdout = child.stdout.take().unwrap();
    let program = Program(child);
    let pid = program.0.id() as i32;
    let mut printed = HashMap::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if line == "READY" {
            break;
        }
        let mut words = line.split_whitespace();
        let key = words.next().unwrap().to_string();
        printed.insert(key, words.map(str::to_string).collect::<Vec<_>>());
    }
    let printed = Printed(printed);
    assert_eq!(printed.word("provider", 0), named);

    // The profile is for the libfabric the program loaded.
    let profile = ofi_profile();
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let lib = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("/libfabric.so.1"))
        .expect("the program maps libfabric.so.1");
    let id = mpidd_read::build_id(Path::new(lib)).unwrap().unwrap();
    assert_eq!(
        mpidd_read::build_id_hex(&id),
        DEBIAN_LIBFABRIC_BUILD_ID,
        "{lib} is not Debian 12's libfabric1 1.17.0-3"
    );
    assert!(profile.describes(&id));
    let layouts = &profile.layouts;
    let a = TargetAddr(printed.at("ep_a", 0));
    let b = TargetAddr(printed.at("ep_b", 0));
    let limits = Limits::default();

    let (live_a, live_b) = {
        let guard = AttachGuard::attach(pid).expect("attach (ptrace) to the libfabric program");
        let memory = LiveProcess::open(pid).unwrap();
        // The provider as fi_getinfo named it, and as the endpoint's
        // domain does.
        let info = TargetAddr(printed.at("info", 0));
        let named_info = read_ofi_info_provider(&memory, layouts, info, &limits);
        let named_ep = read_ofi_provider_name(&memory, layouts, a, &limits);
        assert_eq!(named_info.unwrap(), named);
        let own = if provider == "shm" { "shm" } else { "ofi_rxm" };
        assert_eq!(named_ep.unwrap(), own);
        let qa = read_ofi_endpoint(&memory, layouts, a, &limits);
        let qb = read_ofi_endpoint(&memory, layouts, b, &limits);
        guard.detach().expect("let the program go");
        (qa.expect("read endpoint A"), qb.expect("read endpoint B"))
    };
    check(&live_a, &live_b, &printed, provider);

    // The same from a core gcore dumps of the process.
    let core = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ofi-endpoint-{provider}.core"));
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
    let core_a = read_ofi_endpoint(&target, layouts, a, &limits).expect("A from the core");
    let core_b = read_ofi_endpoint(&target, layouts, b, &limits).expect("B from the core");
    let _ = std::fs::remove_file(&core);
    assert_eq!(core_a, live_a);
    assert_eq!(core_b, live_b);
    drop(program);
}

/// What the program made, against what the reader found.
fn check(a: &OfiEndpointQueues, b: &OfiEndpointQueues, printed: &Printed, provider: &str) {
    let expected_provider = if provider == "shm" {
        OfiProvider::Shm
    } else {
        OfiProvider::Rxm
    };
    assert_eq!(a.provider, expected_provider);
    assert_eq!(b.provider, expected_provider);

    // A's receives still posted, in posting order (the marker's completed).
    let posted: Vec<_> = a
        .posted
        .iter()
        .map(|p| {
            (
                p.tagged,
                p.tag,
                p.ignore,
                p.source,
                p.buffer,
                p.length,
                p.context.0,
            )
        })
        .collect();
    assert_eq!(
        posted,
        vec![
            (
                true,
                TAG_EXACT,
                0,
                OTHER,
                printed.at("recv_exact", 1),
                100,
                printed.at("recv_exact", 0)
            ),
            (
                true,
                TAG_MASKED,
                IGNORE_MASKED,
                None,
                printed.at("recv_masked", 1),
                200,
                printed.at("recv_masked", 0)
            ),
        ],
        "{a:#?}"
    );

    // A's unexpected messages, in arrival order, all from B.
    let large = if provider == "shm" {
        // Across processes by CMA: the sender's buffer is read in place.
        OfiProtocol::Iov
    } else {
        OfiProtocol::Rendezvous
    };
    let (small, medium) = if provider == "shm" {
        (OfiProtocol::Inline, OfiProtocol::Inject)
    } else {
        (OfiProtocol::Eager, OfiProtocol::Eager)
    };
    let unexpected: Vec<_> = a
        .unexpected
        .iter()
        .map(|u| (u.tagged, u.tag, u.source, u.length, u.protocol))
        .collect();
    assert_eq!(
        unexpected,
        vec![
            (true, TAG_SMALL, OTHER, SMALL, small),
            (true, TAG_MEDIUM, OTHER, MEDIUM, medium),
            (true, TAG_LARGE, OTHER, LARGE, large),
        ],
        "{a:#?}"
    );

    // B posted nothing and has nothing unexpected; A sent nothing.
    assert!(b.posted.is_empty() && b.unexpected.is_empty(), "{b:#?}");
    assert!(a.sends.is_empty(), "{a:#?}");
    // B's large send waits for A to take its data; the small ones
    // completed at once. shm keeps the caller's buffer and the
    // destination; rxm's transmit buffer keeps neither.
    assert!(a.notes.is_empty() && b.notes.is_empty(), "{a:?} {b:?}");
    let (buffer, destination) = if provider == "shm" {
        (Some(printed.at("send_large", 1)), OTHER)
    } else {
        (None, None)
    };
    let sends: Vec<_> = b
        .sends
        .iter()
        .map(|s| {
            (
                s.tagged,
                s.tag,
                s.length,
                s.buffer,
                s.context.0,
                s.destination,
                s.protocol,
            )
        })
        .collect();
    assert_eq!(
        sends,
        vec![(
            true,
            TAG_LARGE,
            LARGE,
            buffer,
            printed.at("send_large", 0),
            destination,
            large
        )],
        "{b:#?}"
    );
}
