//! What a rank of tests/openmpi/queues.c run over Open MPI's UCX PML must
//! read as: every operation the rank wrote down, once, as UCX carries it
//! (examples/tests/ompi_ucx_queues.rs on Debian 12's Open MPI 4.1,
//! examples/tests/ompi5_ucx_queues.rs on Open MPI 5 and pip's wheels).

use std::collections::HashMap;

use serde_json::Value;

use super::mpich_job::mpidd;
use super::queue_checks::{comm, ops};

/// `mpidd queues ARGS --json`.
pub fn native(args: &[&str]) -> Value {
    let out = mpidd()
        .arg("queues")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpidd queues {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn num(s: &str) -> i64 {
    s.parse()
        .unwrap_or_else(|_| panic!("{s:?} is not a number"))
}

fn addr(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}

/// The protocol UCX uses for a message of `bytes` between two ranks of
/// one node: eager up to its rendezvous threshold on shared memory (some
/// kilobytes, so the 16, 20 and 2000 bytes of queues.c), rendezvous for
/// queues.c's 1 MiB. queues.c's own column is ob1's, whose thresholds
/// differ.
fn ucx_protocol(bytes: i64) -> &'static str {
    if bytes >= 64 * 1024 {
        "rendezvous"
    } else {
        "eager"
    }
}

/// One rank's reading against what the rank wrote down (`posted`).
pub fn check_rank(rank: i64, q: &Value, posted: &str) {
    let what = format!("rank {rank}");
    assert_eq!(q["global_rank"], rank, "{q:#}");
    assert!(
        q["source"].as_str().unwrap().contains("UCX PML"),
        "{what}: {}",
        q["source"]
    );
    assert_eq!(
        q["diagnostics"],
        serde_json::json!([]),
        "{what}: everything read"
    );
    for (name, size, members) in [
        ("MPI_COMM_WORLD", 4, vec![0, 1, 2, 3]),
        ("mpidd_dup", 4, vec![0, 1, 2, 3]),
    ] {
        let c = comm(q, name);
        assert_eq!(c["size"], size, "{what} {name}");
        assert_eq!(c["local_rank"], rank, "{what} {name}");
        assert_eq!(c["group"], serde_json::json!(members), "{what} {name}");
    }
    let split_name = if rank % 2 == 0 {
        "mpidd_split_even"
    } else {
        "mpidd_split_odd"
    };
    let split = comm(q, split_name);
    assert_eq!(
        (split["size"].as_i64(), split["local_rank"].as_i64()),
        (Some(2), Some(rank / 2))
    );
    let members = if rank % 2 == 0 { [0, 2] } else { [1, 3] };
    assert_eq!(split["group"], serde_json::json!(members));
    assert_eq!(comm(q, "MPI_COMM_SELF")["group"], serde_json::json!([rank]));

    // Every operation the rank wrote down is there, once; nothing else is.
    let mut expected: HashMap<(&str, &str), usize> = HashMap::new();
    for line in posted.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let c = comm(q, w[1]);
        let world_of = |local: i64| -> i64 {
            if local < 0 {
                -1
            } else {
                c["group"][local as usize].as_i64().unwrap()
            }
        };
        match w[0] {
            "recv" => {
                *expected.entry((w[1], "pending_receives")).or_default() += 1;
                let (src, tag, bytes, buf) = (num(w[2]), num(w[3]), num(w[4]), addr(w[5]));
                let found: Vec<&Value> = ops(c, "pending_receives")
                    .iter()
                    .filter(|op| op["buffer"].as_u64() == Some(buf))
                    .collect();
                assert_eq!(found.len(), 1, "{line} at {what}: {c:#}");
                let op = found[0];
                assert_eq!(op["status"], "pending", "{line}");
                assert_eq!(
                    op["desired_local_rank"], src,
                    "{line}: -1 is MPI_ANY_SOURCE"
                );
                assert_eq!(op["desired_global_rank"], world_of(src), "{line}");
                assert_eq!(op["tag_wild"], tag == -1, "{line}");
                assert_eq!(op["desired_tag"], tag, "{line}");
                assert_eq!(op["desired_length"], bytes, "{line}: bytes");
                // The user part of UCX's request is the MPI_Request.
                assert_eq!(
                    op["extra_text"][0],
                    format!("MPI request {:#x}", addr(w[6])),
                    "{line}: {op:#}"
                );
            }
            "send" => {
                let (dest, tag, bytes, buf) = (num(w[2]), num(w[3]), num(w[4]), addr(w[5]));
                let found: Vec<&Value> = ops(c, "pending_sends")
                    .iter()
                    .filter(|op| op["desired_tag"] == tag)
                    .collect();
                if w[7] == "complete" {
                    // A send UCX completes at once (the eager one of queues.c)
                    // leaves no request in UCX's pool: the PML gives the
                    // program its ready-made completed request
                    // (`mca_pml_ucx_isend`: `completed_send_req`).
                    assert!(found.is_empty(), "{line} at {what}: {c:#}");
                    continue;
                }
                *expected.entry((w[1], "pending_sends")).or_default() += 1;
                assert_eq!(found.len(), 1, "{line} at {what}: {c:#}");
                let op = found[0];
                assert_eq!(op["status"], "pending", "{line}");
                assert_eq!(op["desired_local_rank"], dest, "{line}: {op:#}");
                assert_eq!(op["desired_global_rank"], world_of(dest), "{line}");
                assert_eq!(op["desired_length"], bytes, "{line}");
                assert_eq!(op["buffer"].as_u64(), Some(buf), "{line}");
                assert_eq!(op["system_buffer"], false, "{line}");
                assert_eq!(op["synchronous"], w[9] == "yes", "{line}: {op:#}");
                assert_eq!(
                    op["extra_text"][0],
                    format!("MPI request {:#x}", addr(w[8])),
                    "{line}: {op:#}"
                );
            }
            "unexpected" => {
                *expected.entry((w[1], "unexpected_messages")).or_default() += 1;
                let (src, tag, bytes) = (num(w[2]), num(w[3]), num(w[4]));
                let found: Vec<&Value> = ops(c, "unexpected_messages")
                    .iter()
                    .filter(|op| op["actual_tag"] == tag)
                    .collect();
                assert_eq!(found.len(), 1, "{line} at {what}: {c:#}");
                let op = found[0];
                assert_eq!(op["actual_local_rank"], src, "{line}");
                assert_eq!(op["actual_global_rank"], world_of(src), "{line}");
                assert_eq!(op["actual_length"], bytes, "{line}");
                let protocol = ucx_protocol(bytes);
                assert_eq!(op["protocol"], protocol, "{line}: {op:#}");
                // UCX marks an eager message synchronous or not; its
                // rendezvous request does not say.
                match (protocol, w[6]) {
                    ("eager", sync) => {
                        assert_eq!(op["synchronous"], sync == "yes", "{line}: {op:#}")
                    }
                    _ => assert!(op.get("synchronous").is_none(), "{line}: {op:#}"),
                }
            }
            other => panic!("unknown line {other:?} in posted.{rank}"),
        }
    }
    for name in ["MPI_COMM_WORLD", "mpidd_dup", split_name] {
        let c = comm(q, name);
        for queue in ["pending_receives", "pending_sends", "unexpected_messages"] {
            assert_eq!(
                ops(c, queue).len(),
                expected.get(&(name, queue)).copied().unwrap_or(0),
                "{queue} of {name} at {what}: {c:#}"
            );
        }
    }
}
