//! A libfabric endpoint's queues, read from a live process: its posted
//! receives, unexpected messages and sends in flight, with the layouts of
//! the profile mpidd ships for the libfabric the process loaded (Debian
//! 12's libfabric 1.17.0), chosen by that library's build-id.
//!
//!     ofi_endpoint PID ENDPOINT
//!
//! ENDPOINT is a `struct fid_ep *` of the process, in hex (as
//! tests/ofi/endpoint_queues.c prints its `ep_a`); the process is stopped
//! while it is read and let go afterwards.
use mpidd_read::{AttachGuard, Limits, LiveProcess};
use mpidd_types::TargetAddr;
use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: ofi_endpoint PID ENDPOINT";
    let pid: i32 = args.next().ok_or(usage)?.parse()?;
    let ep = args.next().ok_or(usage)?;
    let ep = TargetAddr(u64::from_str_radix(ep.trim_start_matches("0x"), 16)?);
    // The libfabric the process loaded, and the shipped profile of its build.
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))?;
    let lib = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("/libfabric.so"))
        .ok_or("the process has not loaded libfabric")?;
    let id = mpidd_read::build_id(Path::new(lib))?.ok_or("libfabric has no build-id")?;
    let profile = mpidd_read::shipped_profiles()
        .into_iter()
        .find(|p| p.describes(&id))
        .ok_or_else(|| format!("mpidd ships no profile of {lib}'s build"))?;
    let guard = AttachGuard::attach(pid)?;
    let memory = LiveProcess::open(pid)?;
    let read = mpihandles::read_ofi_endpoint(&memory, &profile.layouts, ep, &Limits::default());
    guard.detach()?;
    let q = read?;
    println!("{} endpoint {}", q.provider.name(), q.endpoint);
    for p in &q.posted {
        let source = p.source.map_or("any".to_string(), |s| s.to_string());
        println!(
            "  posted      tag {:#018x} ignore {:#018x} from {source:>3}, {} bytes at {:#x}",
            p.tag, p.ignore, p.length, p.buffer
        );
    }
    for u in &q.unexpected {
        let source = u.source.map_or("?".to_string(), |s| s.to_string());
        println!(
            "  unexpected  tag {:#018x} from {source:>3}, {} bytes ({:?})",
            u.tag, u.length, u.protocol
        );
    }
    for s in &q.sends {
        let to = s.destination.map_or("?".to_string(), |d| d.to_string());
        let at = s.buffer.map_or(String::new(), |b| format!(" at {b:#x}"));
        println!(
            "  sending     tag {:#018x} to {to:>3}, {} bytes{at} ({:?})",
            s.tag, s.length, s.protocol
        );
    }
    for note in &q.notes {
        println!("  note: {note}");
    }
    Ok(())
}
