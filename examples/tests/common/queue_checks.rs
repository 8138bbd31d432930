//! What the queues of tests/mpich/queues.c must hold, as the vendor
//! library and as the native decoder report them.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::mpich_job::{mpidd, ref_mpich};

/// `mpidd queues ARGS --json`, through libtvmpich.so when `dll`.
pub fn queues_with(args: &[&str], dll: bool) -> Value {
    let mut cmd = mpidd();
    cmd.arg("queues").args(args).arg("--json");
    if dll {
        cmd.arg("--dll").arg(ref_mpich().join("lib/libtvmpich.so"));
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "mpidd queues {args:?} (dll: {dll}) failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// `libmpiq_mqs.so`, our message-queue library, which cargo builds with
/// mpidd (a dependency).
pub fn our_mqs_library() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_mpidd"))
        .parent()
        .unwrap()
        .to_path_buf();
    [bin.join("deps/libmpiq_mqs.so"), bin.join("libmpiq_mqs.so")]
        .into_iter()
        .find(|p| p.exists())
        .expect("libmpiq_mqs.so is built with mpidd (cargo build -p mpiq-mqs)")
}

pub fn queues(args: &[&str]) -> Value {
    queues_with(args, true)
}

pub fn native(args: &[&str]) -> Value {
    queues_with(args, false)
}

pub fn comm<'a>(q: &'a Value, name: &str) -> &'a Value {
    q["communicators"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no communicator {name} in {q:#}"))
}

pub fn ops<'a>(c: &'a Value, queue: &str) -> &'a Vec<Value> {
    assert_eq!(
        c[queue]["state"], "read",
        "{queue} of {}: {:#}",
        c["name"], c[queue]
    );
    c[queue]["operations"].as_array().unwrap()
}

pub fn total_operations(q: &Value) -> usize {
    q["communicators"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| ["pending_sends", "pending_receives", "unexpected_messages"].map(|k| &c[k]))
        .map(|queue| queue["operations"].as_array().map_or(0, Vec::len))
        .sum()
}

/// Checks one rank's queues against what tests/mpich/queues.c posted.
pub fn check_rank(rank: i64, q: &Value) {
    assert_eq!(q["global_rank"], rank, "rank read from MPIR_Process");
    let world = comm(q, "MPI_COMM_WORLD");
    assert_eq!(world["size"], 4);
    assert_eq!(world["local_rank"], rank);
    let dup = comm(q, "mpidd_dup");
    assert_eq!(
        (dup["size"].as_i64(), dup["local_rank"].as_i64()),
        (Some(4), Some(rank))
    );
    let split = comm(
        q,
        if rank % 2 == 0 {
            "mpidd_split_even"
        } else {
            "mpidd_split_odd"
        },
    );
    assert_eq!(
        (split["size"].as_i64(), split["local_rank"].as_i64()),
        (Some(2), Some(rank / 2))
    );
    match rank {
        // What MPICH's library gives: global ranks -1 (it does not
        // translate), lengths in elements for receives and sends, and no
        // length for unexpected messages.
        0 => {
            assert_eq!(total_operations(q), 5, "{q:#}");
            let r = ops(world, "pending_receives");
            assert_eq!(r.len(), 1);
            assert_eq!(r[0]["status"], "pending");
            assert_eq!(r[0]["desired_local_rank"], 1);
            assert_eq!(r[0]["tag_wild"], false);
            assert_eq!(r[0]["desired_tag"], 11);
            assert_eq!(r[0]["desired_length"], 10, "10 ints");
            let u = ops(world, "unexpected_messages");
            assert_eq!(u.len(), 1);
            assert_eq!(u[0]["actual_local_rank"], 1);
            assert_eq!(u[0]["actual_tag"], 99);
            let r = ops(dup, "pending_receives");
            assert_eq!(r.len(), 1);
            assert_eq!(r[0]["desired_local_rank"], -1, "MPI_ANY_SOURCE");
            assert_eq!(r[0]["desired_tag"], 22);
            assert_eq!(r[0]["tag_wild"], false);
            assert_eq!(r[0]["desired_length"], 20);
            let u = ops(dup, "unexpected_messages");
            assert_eq!(u.len(), 1);
            assert_eq!(u[0]["actual_local_rank"], 1);
            assert_eq!(u[0]["actual_tag"], 44);
            let r = ops(split, "pending_receives");
            assert_eq!(r.len(), 1);
            assert_eq!(
                r[0]["desired_local_rank"], 1,
                "world rank 2 is rank 1 of the even split"
            );
            assert_eq!(r[0]["tag_wild"], true, "MPI_ANY_TAG");
            assert_eq!(r[0]["desired_length"], 30);
        }
        1 => {
            assert_eq!(total_operations(q), 1, "{q:#}");
            let s = ops(dup, "pending_sends");
            assert_eq!(s.len(), 1);
            assert_eq!(s[0]["desired_local_rank"], 0);
            assert_eq!(s[0]["desired_tag"], 44);
            assert_eq!(s[0]["desired_length"], 3);
            assert_eq!(s[0]["extra_text"][0], "Non-blocking send");
        }
        2 => {
            assert_eq!(total_operations(q), 1, "{q:#}");
            let s = ops(world, "pending_sends");
            assert_eq!(s.len(), 1);
            assert_eq!(
                s[0]["status"], "pending",
                "too large to complete unreceived"
            );
            assert_eq!(s[0]["desired_local_rank"], 3);
            assert_eq!(s[0]["desired_tag"], 33);
            assert_eq!(s[0]["desired_length"], 1 << 18);
        }
        3 => {
            assert_eq!(total_operations(q), 1, "{q:#}");
            let u = ops(world, "unexpected_messages");
            assert_eq!(u.len(), 1);
            assert_eq!(u[0]["actual_local_rank"], 2);
            assert_eq!(u[0]["actual_tag"], 33);
        }
        _ => unreachable!(),
    }
}

/// Checks the native decoder's reading of one rank against what
/// tests/mpich/queues.c posted, with what it adds over the vendor library:
/// world ranks, MPI_ANY_SOURCE as -1, lengths in bytes (ints are 4 bytes)
/// with the element count alongside.
pub fn check_rank_native(rank: i64, q: &Value) {
    check_rank_ours(rank, q, true)
}

/// As [`check_rank_native`], for a reading through our message-queue
/// library, whose interface has no element counts.
pub fn check_rank_ours(rank: i64, q: &Value, with_counts: bool) {
    let count = |op: &Value, n: i64| {
        if with_counts {
            assert_eq!(op["desired_count"], n, "{op:#}");
        }
    };
    assert_eq!(q["global_rank"], rank);
    let world = comm(q, "MPI_COMM_WORLD");
    assert_eq!(
        (world["size"].as_i64(), world["local_rank"].as_i64()),
        (Some(4), Some(rank))
    );
    assert_eq!(world["group"], serde_json::json!([0, 1, 2, 3]));
    let dup = comm(q, "mpidd_dup");
    let split = comm(
        q,
        if rank % 2 == 0 {
            "mpidd_split_even"
        } else {
            "mpidd_split_odd"
        },
    );
    let members = if rank % 2 == 0 { [0, 2] } else { [1, 3] };
    assert_eq!(
        split["group"],
        serde_json::json!(members),
        "the split's world ranks"
    );
    match rank {
        0 => {
            assert_eq!(total_operations(q), 5, "{q:#}");
            let r = &ops(world, "pending_receives")[0];
            assert_eq!(
                (
                    r["desired_local_rank"].as_i64(),
                    r["desired_global_rank"].as_i64()
                ),
                (Some(1), Some(1))
            );
            assert_eq!(
                (r["desired_tag"].as_i64(), r["tag_wild"].as_bool()),
                (Some(11), Some(false))
            );
            assert_eq!(r["desired_length"], 40);
            count(r, 10);
            let u = &ops(world, "unexpected_messages")[0];
            assert_eq!(
                (
                    u["actual_local_rank"].as_i64(),
                    u["actual_global_rank"].as_i64()
                ),
                (Some(1), Some(1))
            );
            assert_eq!(
                (u["actual_tag"].as_i64(), u["actual_length"].as_i64()),
                (Some(99), Some(20))
            );
            assert_eq!(
                u["system_buffer"], true,
                "eager data waits in a library buffer"
            );
            let r = &ops(dup, "pending_receives")[0];
            assert_eq!(
                (
                    r["desired_local_rank"].as_i64(),
                    r["desired_global_rank"].as_i64()
                ),
                (Some(-1), Some(-1))
            );
            assert_eq!(
                (r["desired_tag"].as_i64(), r["desired_length"].as_i64()),
                (Some(22), Some(80))
            );
            let u = &ops(dup, "unexpected_messages")[0];
            assert_eq!(
                (u["actual_tag"].as_i64(), u["actual_length"].as_i64()),
                (Some(44), Some(12))
            );
            let r = &ops(split, "pending_receives")[0];
            assert_eq!(
                (
                    r["desired_local_rank"].as_i64(),
                    r["desired_global_rank"].as_i64()
                ),
                (Some(1), Some(2))
            );
            assert_eq!(
                (r["tag_wild"].as_bool(), r["desired_length"].as_i64()),
                (Some(true), Some(120))
            );
        }
        1 => {
            assert_eq!(total_operations(q), 1, "{q:#}");
            let s = &ops(dup, "pending_sends")[0];
            assert_eq!(
                (
                    s["desired_local_rank"].as_i64(),
                    s["desired_global_rank"].as_i64()
                ),
                (Some(0), Some(0))
            );
            assert_eq!(
                (s["desired_tag"].as_i64(), s["desired_length"].as_i64()),
                (Some(44), Some(12))
            );
        }
        2 => {
            assert_eq!(total_operations(q), 1, "{q:#}");
            let s = &ops(world, "pending_sends")[0];
            assert_eq!(s["status"], "pending");
            assert_eq!(
                (s["desired_global_rank"].as_i64(), s["desired_tag"].as_i64()),
                (Some(3), Some(33))
            );
            assert_eq!(s["desired_length"], 4 << 18);
            count(s, 1 << 18);
        }
        3 => {
            assert_eq!(total_operations(q), 1, "{q:#}");
            let u = &ops(world, "unexpected_messages")[0];
            assert_eq!(
                u["status"], "pending",
                "a rendezvous whose data has not come"
            );
            assert_eq!(
                (u["actual_global_rank"].as_i64(), u["actual_tag"].as_i64()),
                (Some(2), Some(33))
            );
            assert_eq!(u["actual_length"], 4 << 18, "the announced size in bytes");
            assert_eq!(u["system_buffer"], false);
        }
        _ => unreachable!(),
    }
}

/// The native decoder and the vendor library on the same process differ
/// only where the native one adds what the library leaves out.
pub fn check_comparison(args: &[&str]) {
    let dll = ref_mpich().join("lib/libtvmpich.so");
    let out = mpidd()
        .arg("queues")
        .args(args)
        .arg("--compare-dll")
        .arg(&dll)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_only_documented_differences(v["differences"].as_array().unwrap());
}

/// Two readings of the same process (the first from our decoders, the
/// second from libtvmpich.so) differ only in the documented ways.
pub fn check_against_libtvmpich(ours: &Value, theirs: &Value) {
    let left: mpiq_core::model::ProcessQueues = serde_json::from_value(ours.clone()).unwrap();
    let right: mpiq_core::model::ProcessQueues = serde_json::from_value(theirs.clone()).unwrap();
    let differences = serde_json::to_value(mpiq_core::compare::compare(&left, &right)).unwrap();
    assert_only_documented_differences(differences.as_array().unwrap());
}

/// Fails on any difference but those our decoders document over
/// libtvmpich.so.
pub fn assert_only_documented_differences(differences: &[Value]) {
    for d in differences {
        let field = d["field"].as_str().unwrap();
        let queue = d["queue"].as_str().unwrap_or("");
        let (left, right) = (d["left"].as_str().unwrap(), d["right"].as_str().unwrap());
        let documented = match field {
            // World ranks: the library leaves -1.
            "desired_global_rank" | "actual_global_rank" => right == "-1",
            // Bytes for the library's element counts (ints). For
            // unexpected messages the library reports the request's
            // user_count, which means nothing before a receive matches
            // (0, or 1 for a rendezvous), where the native decoder gives
            // the message's size.
            "desired_length" | "actual_length" => {
                let (l, r): (i64, i64) = (left.parse().unwrap(), right.parse().unwrap());
                l == r * 4 || queue == "unexpected_messages"
            }
            // Where unexpected eager data waits; the library gives none.
            "system_buffer" | "buffer" => queue == "unexpected_messages",
            // An unmatched receive has no actual peer or tag; the library
            // copies the desired ones (and MPICH's raw -2) there.
            "actual_local_rank" | "actual_tag" => queue == "pending_receives" && left == "-1",
            // The library names unnamed communicators "--unnamed--".
            "name" => left.is_empty() && right == "--unnamed--",
            _ => false,
        };
        assert!(documented, "an undocumented difference: {d:#}");
    }
}

/// The world rank, and the three communicators of tests/mpich/queues.c
/// (world, the dup, the rank's half of the split) with their sizes, local
/// ranks and world ranks, checked; returned in that order.
pub fn queues_communicators(rank: i64, q: &Value) -> [&Value; 3] {
    assert_eq!(q["global_rank"], rank);
    let world = comm(q, "MPI_COMM_WORLD");
    assert_eq!(
        (world["size"].as_i64(), world["local_rank"].as_i64()),
        (Some(4), Some(rank))
    );
    assert_eq!(world["group"], json!([0, 1, 2, 3]));
    let dup = comm(q, "mpidd_dup");
    assert_eq!(dup["group"], json!([0, 1, 2, 3]));
    let split = comm(
        q,
        if rank % 2 == 0 {
            "mpidd_split_even"
        } else {
            "mpidd_split_odd"
        },
    );
    let members = if rank % 2 == 0 { [0, 2] } else { [1, 3] };
    assert_eq!(
        (split["size"].as_i64(), split["local_rank"].as_i64()),
        (Some(2), Some(rank / 2))
    );
    assert_eq!(
        split["group"],
        json!(members),
        "the split's world ranks, from CH4's rank map"
    );
    [world, dup, split]
}

/// Who read a CH4 rank's queues for `mpidd queues`.
#[derive(Clone, Copy, Debug)]
pub enum Ch4Reader {
    /// The native decoder.
    Native,
    /// Our mqs library (libmpiq_mqs.so) under our host, which passes on
    /// the decoder's notes through `mqs_dprints`.
    OurLibrary,
}

/// What tests/mpich/queues.c posted, read from the reference CH4 build
/// (ch4:ucx on Debian's UCX, docs/ch4.md): its own DWARF for MPICH, the
/// profile of Debian's libucp for UCX, layered under it. Every receive and
/// send handed to UCX and every unexpected message in UCX's worker, as on
/// Debian's own MPICH ([`check_queues_ucx`]); the send-queue entries of
/// this build's debugger support give the sends.
pub fn check_rank_ch4(rank: i64, q: &Value, reader: Ch4Reader) {
    let (source, note_prefix) = match reader {
        Ch4Reader::Native => ("ch4:ucx", ""),
        Ch4Reader::OurLibrary => ("mpiq_mqs", "library says: mpiq_mqs: "),
    };
    assert!(
        q["source"].as_str().unwrap().contains(source),
        "{}",
        q["source"]
    );
    // The interface has no place for a message's protocol.
    let protocols = matches!(reader, Ch4Reader::Native);
    check_queues_ucx(rank, q, note_prefix, protocols);
}

/// What tests/mpich/queues.c posted, read from Debian's own stripped MPICH
/// through the shipped profiles, MPICH's and UCX's (docs/stock-mpich.md):
/// the communicators from their pool, and the operations as on the
/// reference CH4 build ([`check_queues_ucx`]), the sends from the request
/// pool.
pub fn check_rank_stock(rank: i64, q: &Value) {
    assert!(
        q["source"].as_str().unwrap().contains("ch4:ucx"),
        "{}",
        q["source"]
    );
    let diagnostics = q["diagnostics"].as_array().unwrap();
    let note = "MPIR_All_communicators is missing";
    assert!(
        diagnostics
            .iter()
            .any(|d| d.as_str().unwrap().starts_with(note)),
        "{diagnostics:#?}"
    );
    check_queues_ucx(rank, q, "", true);
}

/// What tests/mpich/queues.c leaves pending under ch4:ucx, where every
/// message goes through UCX: every receive and send handed to UCX, decoded
/// through UCX's request (a send's destination through its endpoint), and
/// the unexpected messages from UCX's worker (docs/ch4.md): rank 1's two
/// small ones at rank 0, eager, and rank 2's 1 MiB at rank 3, rendezvous.
/// `note_prefix` is what the reader puts before the decoder's notes;
/// `protocols` whether the reader gives each message's protocol (the mqs
/// interface has no place for it: it is then expected absent).
fn check_queues_ucx(rank: i64, q: &Value, note_prefix: &str, protocols: bool) {
    let [world, dup, split] = queues_communicators(rank, q);
    let diagnostics: Vec<&str> = q["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .filter_map(|d| d.strip_prefix(note_prefix))
        .collect();
    assert!(
        diagnostics
            .iter()
            .all(|d| !d.starts_with("a pending") && !d.starts_with("UCX's types")),
        "every operation placed, through UCX's request: {diagnostics:#?}"
    );
    assert!(
        diagnostics
            .iter()
            .all(|d| !d.starts_with("unexpected messages, which only UCX's worker keeps")),
        "UCX's worker read: {diagnostics:#?}"
    );
    // (communicator, source or -1, world source or -1, tag or -1 for any,
    // bytes) of each pending receive.
    let receives = |c: &Value| -> Vec<(i64, i64, i64, i64)> {
        ops(c, "pending_receives")
            .iter()
            .map(|o| {
                assert_eq!(o["status"], "pending", "{o:#}");
                let tag = if o["tag_wild"] == true {
                    -1
                } else {
                    o["desired_tag"].as_i64().unwrap()
                };
                (
                    o["desired_local_rank"].as_i64().unwrap(),
                    o["desired_global_rank"].as_i64().unwrap(),
                    tag,
                    o["desired_length"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    let sends = |c: &Value| -> Vec<(i64, i64)> {
        ops(c, "pending_sends")
            .iter()
            .map(|o| {
                assert_eq!(o["status"], "pending", "{o:#}");
                (
                    o["desired_tag"].as_i64().unwrap(),
                    o["desired_length"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    // (source, world source, tag, bytes, protocol) of each unexpected
    // message.
    let unexpected = |c: &Value| -> Vec<(i64, i64, i64, i64, String)> {
        ops(c, "unexpected_messages")
            .iter()
            .map(|o| {
                assert_eq!(o["tag_wild"], false, "{o:#}");
                (
                    o["desired_local_rank"].as_i64().unwrap(),
                    o["desired_global_rank"].as_i64().unwrap(),
                    o["desired_tag"].as_i64().unwrap(),
                    o["desired_length"].as_i64().unwrap(),
                    o["protocol"].as_str().unwrap_or("none").to_string(),
                )
            })
            .collect()
    };
    let ints = |n: i64| n * 4;
    let protocol = |p: &str| if protocols { p } else { "none" }.to_string();
    let eager = || protocol("eager");
    match rank {
        0 => {
            assert_eq!(receives(world), vec![(1, 1, 11, ints(10))]);
            assert_eq!(receives(dup), vec![(-1, -1, 22, ints(20))]);
            assert_eq!(receives(split), vec![(1, 2, -1, ints(30))]);
            // Rank 1's MPI_Send and MPI_Isend, which rank 0 probed.
            assert_eq!(unexpected(world), vec![(1, 1, 99, ints(5), eager())]);
            assert_eq!(unexpected(dup), vec![(1, 1, 44, ints(3), eager())]);
            assert_eq!(unexpected(split), vec![]);
            assert_eq!(total_operations(q), 5, "{q:#}");
        }
        1 => {
            // The eager MPI_Isend (tag 44 on the dup) may be done before
            // the stop; nothing else is pending.
            assert!(sends(dup).iter().all(|&s| s == (44, ints(3))), "{dup:#}");
            assert_eq!(total_operations(q), sends(dup).len(), "{q:#}");
        }
        2 => {
            let s = ops(world, "pending_sends");
            assert_eq!(sends(world), vec![(33, ints(1 << 18))], "{world:#}");
            assert_eq!(
                (
                    s[0]["desired_local_rank"].as_i64(),
                    s[0]["desired_global_rank"].as_i64()
                ),
                (Some(3), Some(3)),
                "the destination"
            );
            assert_eq!(total_operations(q), 1, "{q:#}");
        }
        3 => {
            // Rank 2's 1 MiB, too large for UCX's eager protocol: only its
            // request to send came.
            assert_eq!(
                unexpected(world),
                vec![(2, 2, 33, ints(1 << 18), protocol("rendezvous"))]
            );
            assert_eq!(total_operations(q), 1, "{q:#}");
        }
        _ => unreachable!("queues.c runs on 4 ranks"),
    }
}

/// `mpidd handle` on the two requests of tests/mpich/self_pending.c
/// (their handles are the READY line's last words): peer rank 0 and the
/// tags 5 and 6 come from CH4's self path, never from a UCX request they
/// do not have. `source` is `--pid P` or `--core C`.
pub fn check_self_pending_handles(source: &[&str], ready: &str) {
    let words: Vec<&str> = ready.split_whitespace().collect();
    for (handle, kind, tag) in [(words[5], "send", 5), (words[6], "receive", 6)] {
        let out = mpidd()
            .arg("handle")
            .args(source)
            .args(["--kind", "request", "--value", handle, "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "mpidd handle {handle}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let d = &v["details"];
        assert_eq!(d["request_kind"]["value"], kind, "{v:#}");
        assert_eq!(d["peer"]["value"], serde_json::json!({"rank": 0}), "{v:#}");
        assert_eq!(d["tag"]["value"], tag, "{v:#}");
        assert_eq!(
            d["communicator"]["value"]["predefined_name"], "MPI_COMM_WORLD",
            "{v:#}"
        );
    }
}

/// What tests/mpich/self_pending.c left pending, on CH4's self path: its
/// tag-5 send of 7 ints from `sendbuf` (pending, and the message waiting
/// at this same process), and its tag-6 receive of 9 ints into `recvbuf`,
/// all on MPI_COMM_WORLD of one rank, peer rank 0, read from MPICH's own
/// fields. The buffers' addresses are the program's READY line's.
pub fn check_self_pending(q: &Value, ready: &str) {
    let words: Vec<&str> = ready.split_whitespace().collect();
    let address = |w: &str| u64::from_str_radix(w.trim_start_matches("0x"), 16).unwrap();
    let (sendbuf, recvbuf) = (address(words[3]), address(words[4]));
    assert_eq!(q["global_rank"], 0);
    let world = comm(q, "MPI_COMM_WORLD");
    assert_eq!(world["size"], 1, "{world:#}");
    let envelope = |o: &Value| {
        assert_eq!(o["status"], "pending", "{o:#}");
        (
            o["desired_local_rank"].as_i64(),
            o["desired_global_rank"].as_i64(),
            o["desired_tag"].as_i64(),
            o["tag_wild"].as_bool(),
            o["desired_length"].as_i64(),
            o["buffer"].as_u64(),
        )
    };
    let sends = ops(world, "pending_sends");
    assert_eq!(sends.len(), 1, "{world:#}");
    assert_eq!(
        envelope(&sends[0]),
        (
            Some(0),
            Some(0),
            Some(5),
            Some(false),
            Some(7 * 4),
            Some(sendbuf)
        ),
        "{:#}",
        sends[0]
    );
    let receives = ops(world, "pending_receives");
    assert_eq!(receives.len(), 1, "{world:#}");
    assert_eq!(
        envelope(&receives[0]),
        (
            Some(0),
            Some(0),
            Some(6),
            Some(false),
            Some(9 * 4),
            Some(recvbuf)
        ),
        "{:#}",
        receives[0]
    );
    let unexpected = ops(world, "unexpected_messages");
    assert_eq!(unexpected.len(), 1, "{world:#}");
    assert_eq!(
        envelope(&unexpected[0]),
        (
            Some(0),
            Some(0),
            Some(5),
            Some(false),
            Some(7 * 4),
            Some(sendbuf)
        ),
        "the send, waiting for this process's own receive: {:#}",
        unexpected[0]
    );
    assert_eq!(
        unexpected[0]["protocol"], "self_send",
        "{:#}",
        unexpected[0]
    );
    assert_eq!(total_operations(q), 3, "{q:#}");
    let diagnostics = q["diagnostics"].as_array().unwrap();
    assert!(
        diagnostics
            .iter()
            .all(|d| !d.as_str().unwrap().starts_with("a pending")),
        "every request placed: {diagnostics:#?}"
    );
}

/// Checks one rank's queues against what tests/mpich/queues.c posted, as
/// read from an MPICH that records no pending sends (built without
/// debugger support: no `MPIR_Sendq_head`): every communicator's sends
/// are not read, and its receive queues are what [`check_rank_native`]
/// expects (ranks 1 and 2 posted only sends, so they have nothing).
pub fn check_rank_without_sends(rank: i64, q: &Value) {
    for c in q["communicators"].as_array().unwrap() {
        assert_ne!(
            c["pending_sends"]["state"], "read",
            "sends read where none are recorded: {c:#}"
        );
    }
    match rank {
        0 | 3 => check_rank_native(rank, q),
        _ => {
            assert_eq!(q["global_rank"], rank);
            let world = comm(q, "MPI_COMM_WORLD");
            assert_eq!(
                (world["size"].as_i64(), world["local_rank"].as_i64()),
                (Some(4), Some(rank))
            );
            assert_eq!(total_operations(q), 0, "{q:#}");
        }
    }
}
