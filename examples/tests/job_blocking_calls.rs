//! `mpidd job` on real 4-rank jobs that hang in every kind of blocking MPI
//! call: probes, completion calls over requests, mismatched nonblocking
//! collectives, `MPI_Sendrecv`, synchronous sends, a receive from the rank
//! itself, a collective against a receive, and `MPI_Finalize` against a
//! receive (tests/mpich/hang_*.c). Each program runs on the reference
//! MPICH, on Debian's own stripped MPICH and on Debian's own stripped Open
//! MPI, and each job is read four ways: live and from `gcore` cores, each
//! with its queues and with `--no-queues`, where the verdict rests on the
//! stacks alone. Each also runs on Debian's Open MPI over its UCX PML,
//! whose queues the native decoder reads from UCX's worker.
//!
//! What each report must say is worked out from the programs' sources:
//! every rank's MPI call, and a headline that names the deadlock (never
//! that no rank waits) and says what it rests on; for `MPI_Finalize`
//! against a receive read with queues, that the receiving rank waits on a
//! rank on its way out (HUNG), with the lines of the program's marker
//! comments. Where MPI lets an
//! implementation differ (whether a probe posts a receive the queues show,
//! whether a reduce's contribution leaves at once), both outcomes the
//! standard allows are accepted, and which one it was is asserted from the
//! report's own evidence.

mod common;

use serde_json::Value;

use common::hung_job::{HangMpi, HungJob};
use common::job_checks::{cycles, findings, job_json, mpi_prefix, one_at_a_time, ranks_of};

const ALL_MPIS: [HangMpi; 4] = [
    HangMpi::ReferenceMpich,
    HangMpi::DebianMpich,
    HangMpi::DebianOpenMpi,
    HangMpi::DebianOpenMpiUcx,
];

/// One reading of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    Live,
    Cores,
}

/// What a program's hang must give, whatever reads it.
struct Hang {
    program: &'static str,
    /// The MPI calls each rank may be in (more than one where the standard
    /// lets implementations differ).
    calls: [&'static [&'static str]; 4],
    /// Checks of a report whose queues were read.
    with_queues: fn(&Value, &str),
    /// How the headline of a report whose queues were read may start
    /// (`with_queues` tells which, where both may).
    queues_headline: &'static [&'static str],
}

/// The line of tests/mpich/PROGRAM.c that holds `marker`.
fn marker_line(program: &str, marker: &str) -> usize {
    let source = format!("{}/../tests/mpich/{program}.c", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&source)
        .unwrap_or_else(|e| panic!("read {source}: {e}"))
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("{source} has no {marker}"))
        + 1
}

fn world(report: &Value) -> Vec<Value> {
    report["ranks"].as_array().expect("ranks").clone()
}

fn kinds(report: &Value) -> Vec<String> {
    findings(report).into_iter().map(|(k, _)| k).collect()
}

fn finding<'a>(report: &'a Value, kind: &str) -> Option<&'a Value> {
    report["findings"]
        .as_array()?
        .iter()
        .find(|f| f["kind"] == kind)
}

/// A deadlock named either way: by cycles that hold these ranks, or by
/// every rank blocked with nothing in flight.
fn deadlock_over(report: &Value, ranks: &[i64], what: &str) {
    let on_cycles: std::collections::BTreeSet<i64> = cycles(report).into_iter().flatten().collect();
    let global = finding(report, "global_deadlock").map(|f| ranks_of(&f["ranks"]));
    assert!(
        ranks.iter().all(|r| on_cycles.contains(r)) || global.as_deref() == Some(&[0, 1, 2, 3]),
        "{what}: ranks {ranks:?} deadlocked by cycles or all blocked: cycles {:?}, findings {:?}",
        cycles(report),
        findings(report)
    );
}

fn hangs() -> Vec<Hang> {
    vec![
        Hang {
            program: "hang_probe",
            calls: [&["MPI_Probe"]; 4],
            // A probe that posts a receive (ob1) draws the pairs' cycles;
            // one that does not leaves every rank blocked with nothing in
            // flight.
            with_queues: |report, what| {
                let c = cycles(report);
                if c.is_empty() {
                    deadlock_over(report, &[0, 1, 2, 3], what);
                } else {
                    assert_eq!(c, vec![vec![0, 1], vec![2, 3]], "{what}");
                }
            },
            queues_headline: &["DEADLOCK:"],
        },
        Hang {
            program: "hang_icoll",
            calls: [
                &["MPI_Wait"],
                &["MPI_Wait", "MPI_Finalize"],
                &["MPI_Wait"],
                &["MPI_Wait", "MPI_Finalize"],
            ],
            // An odd rank whose reduce completed is in MPI_Finalize, and
            // the even rank of its pair waits in MPI_Wait for the
            // broadcast it will never send: that rank is on its way out.
            // Otherwise every rank is blocked in MPI_Wait.
            with_queues: |report, what| {
                let leaving: Vec<Vec<i64>> = findings(report)
                    .into_iter()
                    .filter(|(k, _)| k == "waits_on_leaving_rank")
                    .map(|(_, r)| r)
                    .collect();
                let headline = report["verdict"][0].as_str().unwrap();
                if leaving.is_empty() {
                    assert!(headline.starts_with("DEADLOCK:"), "{what}");
                    deadlock_over(report, &[0, 1, 2, 3], what);
                    return;
                }
                let first = format!("HUNG: rank {} is in MPI_Finalize", leaving[0][1]);
                assert!(headline.starts_with(&first), "{what}");
                for pair in &leaving {
                    let root = pair[1];
                    assert_eq!(pair, &vec![root - 1, root], "{what}");
                    assert_eq!(report["ranks"][root as usize]["mpi_call"], "MPI_Finalize");
                    assert_eq!(report["ranks"][root as usize]["way_out"], "finalize");
                    assert_eq!(report["ranks"][pair[0] as usize]["mpi_call"], "MPI_Wait");
                }
            },
            queues_headline: &["DEADLOCK:", "HUNG:"],
        },
        Hang {
            program: "hang_waitany",
            calls: [
                &["MPI_Waitany"],
                &["MPI_Waitany"],
                &["MPI_Waitall"],
                &["MPI_Waitall"],
            ],
            with_queues: |report, what| {
                deadlock_over(report, &[0, 1, 2, 3], what);
                // Every rank waits on both neighbours; MPI_Waitany needs
                // one request, MPI_Waitall both.
                for e in report["edges"].as_array().unwrap() {
                    let from = e["from"].as_i64().unwrap();
                    let to = e["to"].as_i64().unwrap();
                    assert!(to == (from + 1) % 4 || to == (from + 3) % 4, "{what}: {e}");
                    assert_eq!(e["any_of"], from < 2, "{what}: {e}");
                }
            },
            queues_headline: &["DEADLOCK:"],
        },
        Hang {
            program: "hang_sendrecv",
            calls: [&["MPI_Sendrecv"]; 4],
            with_queues: |report, what| {
                assert_eq!(cycles(report), vec![vec![0, 1, 2, 3]], "{what}");
            },
            queues_headline: &["DEADLOCK:"],
        },
        Hang {
            program: "hang_ssend",
            calls: [&["MPI_Ssend"], &["MPI_Ssend"], &["MPI_Recv"], &["MPI_Recv"]],
            with_queues: |report, what| deadlock_over(report, &[0, 1], what),
            queues_headline: &["DEADLOCK:"],
        },
        Hang {
            program: "hang_self",
            calls: [
                &["MPI_Recv"],
                &["MPI_Recv"],
                &["MPI_Barrier"],
                &["MPI_Barrier"],
            ],
            with_queues: |report, what| {
                assert_eq!(cycles(report)[0], vec![0], "{what}: a cycle of one");
                let first = &findings(report)[0];
                assert_eq!(
                    (first.0.as_str(), first.1.as_slice()),
                    ("deadlock_cycle", &[0][..]),
                    "{what}"
                );
                let waiting = finding(report, "waits_on_deadlock").expect("ranks wait on it");
                assert_eq!(ranks_of(&waiting["ranks"]), [1, 2, 3], "{what}");
            },
            queues_headline: &["DEADLOCK:"],
        },
        Hang {
            program: "hang_barrier",
            calls: [
                &["MPI_Barrier"],
                &["MPI_Recv"],
                &["MPI_Barrier"],
                &["MPI_Barrier"],
            ],
            with_queues: |report, what| {
                // 0 waits in the barrier for 1, 1 for 0's message.
                assert!(cycles(report).contains(&vec![0, 1]), "{what}");
                let summary = finding(report, "deadlock_cycle").unwrap()["summary"].to_string();
                assert!(summary.contains("rank 1 in MPI_Recv"), "{what}: {summary}");
            },
            queues_headline: &["DEADLOCK:"],
        },
        Hang {
            program: "hang_finalize",
            calls: [
                &["MPI_Finalize"],
                &["MPI_Recv"],
                &["MPI_Finalize"],
                &["MPI_Finalize"],
            ],
            // Rank 0 is in MPI_Finalize: it will never send what rank 1
            // waits for, so the chain ends at it rather than going round.
            with_queues: |report, what| {
                assert!(cycles(report).is_empty(), "{what}");
                assert_eq!(
                    findings(report)[0],
                    ("waits_on_leaving_rank".to_string(), vec![1, 2, 3, 0]),
                    "{what}"
                );
                let fin = marker_line("hang_finalize", "/* FINALIZE_LINE */");
                let expected = format!(
                    "rank 0 is in MPI_Finalize at hang_finalize.c:{fin} in main(), and will \
                     send nothing more; rank 1 waits for it in MPI_Recv (a receive from it, \
                     tag 51 on MPI_COMM_WORLD); rank(s) 2-3 wait on those in turn"
                );
                assert_eq!(report["findings"][0]["summary"], expected, "{what}");
                assert_eq!(report["ranks"][0]["way_out"], "finalize", "{what}");
                assert!(report["ranks"][1].get("way_out").is_none(), "{what}");
                let headline = report["verdict"][0].as_str().unwrap();
                assert_eq!(
                    headline,
                    "HUNG: rank 0 is in MPI_Finalize while rank(s) 1-3 wait for it (queues \
                     read on 4 of 4 ranks, stacks on 4).",
                    "{what}"
                );
                let recv = marker_line("hang_finalize", "/* RECV_LINE */");
                let mismatch = finding(report, "collective_mismatch").unwrap()["summary"]
                    .as_str()
                    .unwrap()
                    .to_string();
                assert_eq!(
                    mismatch,
                    format!(
                        "3 of 4 ranks of MPI_COMM_WORLD are in MPI_Finalize; rank 1 is in \
                         MPI_Recv at hang_finalize.c:{recv} in main(); ranks 0,2-3 are in \
                         MPI_Finalize at hang_finalize.c:{fin} in main()"
                    ),
                    "{what}"
                );
            },
            queues_headline: &["HUNG:"],
        },
    ]
}

/// What every report of every hang must say.
fn check_report(report: &Value, hang: &Hang, job: &HungJob, read: Read, queues: bool, what: &str) {
    let context = format!("{what}: verdict {:#}", report["verdict"]);
    assert_eq!(report["schema"], "mpidd-job/2", "{context}");
    let ranks = world(report);
    assert_eq!(ranks.len(), 4, "{context}");
    for (i, rank) in ranks.iter().enumerate() {
        let r = i as i64;
        assert_eq!(rank["world_rank"], r, "{context}");
        assert_eq!(rank["pid"].as_i64(), Some(job.pid(r) as i64), "{context}");
        let call = rank["mpi_call"].as_str().unwrap_or("(none)");
        assert!(
            hang.calls[i].contains(&call),
            "{context}\nrank {r} is in {call}, expected one of {:?}; its stack: {:#}",
            hang.calls[i],
            rank["threads"]
        );
        assert_eq!(rank["state"], "in_mpi", "{context}");
        // What its part rests on.
        let basis = &rank["basis"];
        assert_eq!(basis["stacks"]["status"], "read", "{context}");
        let source = basis["world_rank"].as_str().unwrap_or("");
        assert!(
            !source.is_empty(),
            "{context}: rank {r}'s world rank source"
        );
        // The rank comes from the process itself, never only from the
        // launcher's table: from the queue decoder, which reads it in the
        // library's memory, except in MPI_Finalize, where the reference
        // MPICH's decoder gives none (seen, not explained); then, as
        // without queues, from the launcher's variable in the rank's
        // environment.
        let from_library = source.starts_with("its MPI library");
        let from_environment = source.ends_with("in its environment");
        if queues && call != "MPI_Finalize" {
            assert_eq!(basis["queues"]["status"], "read", "{context}: {basis}");
            assert!(
                from_library,
                "{context}: rank {r}'s world rank from {source}"
            );
        } else {
            let status = if queues { "read" } else { "not_read" };
            assert_eq!(basis["queues"]["status"], status, "{context}");
            assert!(
                from_library || from_environment,
                "{context}: rank {r}'s world rank from {source}"
            );
        }
        if read == Read::Cores {
            let target = rank["target"].as_str().unwrap_or("");
            assert!(
                target.contains(&format!("core.{}", job.pid(r))),
                "{context}"
            );
        }
    }
    let headline = report["verdict"][0].as_str().expect("a verdict");
    let starts: &[&str] = if queues {
        hang.queues_headline
    } else {
        &["DEADLOCK:"]
    };
    assert!(starts.iter().any(|s| headline.starts_with(s)), "{context}");
    assert!(!headline.contains("No rank waits"), "{context}");
    if queues {
        assert!(
            headline.contains("queues read on 4 of 4 ranks, stacks on 4"),
            "{context}"
        );
        (hang.with_queues)(report, &context);
    } else {
        assert!(headline.contains("from stacks alone"), "{context}");
        assert_eq!(report["basis"]["stacks_alone"], true, "{context}");
        // No queue gives an edge: only collectives' waits, from stacks.
        for e in report["edges"].as_array().unwrap() {
            assert_eq!(e["kind"], "collective", "{context}: {e}");
        }
        // Every rank is blocked: a deadlock even without a cycle.
        let global = finding(report, "global_deadlock");
        if cycles(report).is_empty() {
            let global = global.unwrap_or_else(|| panic!("{context}: {:?}", kinds(report)));
            assert_eq!(ranks_of(&global["ranks"]), [0, 1, 2, 3], "{context}");
            let summary = global["summary"].as_str().unwrap();
            assert!(
                summary.contains("their queues were not read"),
                "{context}: {summary}"
            );
            // Each rank's call, at a line where the program blocks.
            let lines = hang_lines(job);
            let file = format!("{}.c:", hang.program);
            let said: Vec<usize> = summary
                .match_indices(&file)
                .filter_map(|(at, _)| {
                    let digits: String = summary[at + file.len()..]
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .collect();
                    digits.parse().ok()
                })
                .collect();
            assert!(!said.is_empty(), "{context}: no line in {summary}");
            assert!(
                said.iter().all(|l| lines.contains(l)),
                "{context}: lines {said:?} of {summary} are not among the blocking lines {lines:?}"
            );
        }
    }
}

/// The lines of the job's program marked as where a rank blocks.
fn hang_lines(job: &HungJob) -> Vec<usize> {
    std::fs::read_to_string(&job.source)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("/* HANG_LINE */"))
        .map(|(i, _)| i + 1)
        .collect()
}

fn run(mpi: HangMpi, hang: &Hang) {
    let _serial = one_at_a_time();
    let name = format!("blocking-{}{}", mpi_prefix(mpi), hang.program);
    let job = HungJob::start_on(mpi, &name, hang.program);
    let launcher = job.mpiexec_pid().to_string();
    for queues in [true, false] {
        let mut args = vec!["--pid", launcher.as_str()];
        if !queues {
            args.push("--no-queues");
        }
        let what = format!("{mpi:?} {} live, queues {queues}", hang.program);
        let read = queues;
        check_report(&job_json(&args), hang, &job, Read::Live, read, &what);
        job.assert_running(&format!("after {what}"));
    }
    let dir = job.gcore_all("cores");
    let dir = dir.to_str().unwrap();
    for queues in [true, false] {
        let mut args = vec!["--core-dir", dir];
        if !queues {
            args.push("--no-queues");
        }
        let what = format!("{mpi:?} {} from cores, queues {queues}", hang.program);
        let read = queues;
        check_report(&job_json(&args), hang, &job, Read::Cores, read, &what);
    }
}

fn hang(program: &str) -> Hang {
    hangs()
        .into_iter()
        .find(|h| h.program == program)
        .unwrap_or_else(|| panic!("no hang {program}"))
}

macro_rules! on_every_mpi {
    ($($test:ident => $program:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                let hang = hang($program);
                for mpi in ALL_MPIS {
                    run(mpi, &hang);
                }
            }
        )*
    };
}

on_every_mpi! {
    probe_against_probe => "hang_probe",
    mismatched_nonblocking_collectives => "hang_icoll",
    waitany_and_waitall_over_receives_that_never_match => "hang_waitany",
    sendrecv_in_a_ring => "hang_sendrecv",
    ssend_head_to_head => "hang_ssend",
    a_receive_from_the_rank_itself => "hang_self",
    a_barrier_against_a_receive_whose_send_follows_it => "hang_barrier",
    finalize_against_a_receive => "hang_finalize",
}

/// Open MPI over its UCX PML: its queues are UCX's worker's, and the
/// native decoder reads them. hang_ring.c's ranks each wait in `MPI_Recv`
/// for tag 0 from their left neighbour on `MPI_COMM_WORLD`, a receive
/// posted to UCX's expected queue from a blocking call (its request on the
/// call's stack), so the headline is a deadlock read from the queues: the
/// cycle 0 → 3 → 2 → 1 → 0, each rank at the program's blocking line.
#[test]
fn a_ring_over_open_mpi_s_ucx_pml_is_a_deadlock_read_from_its_queues() {
    let _serial = one_at_a_time();
    let job = HungJob::start_on(
        HangMpi::DebianOpenMpiUcx,
        "blocking-ompi-ucx-ring",
        "hang_ring",
    );
    let launcher = job.mpiexec_pid().to_string();
    let live = job_json(&["--pid", &launcher]);
    job.assert_running("after mpidd job");
    let dir = job.gcore_all("cores");
    let cores = job_json(&["--core-dir", dir.to_str().unwrap()]);
    for (report, what) in [(&live, "live"), (&cores, "from cores")] {
        let headline = report["verdict"][0].as_str().unwrap();
        assert!(headline.starts_with("DEADLOCK:"), "{what}: {headline}");
        assert!(
            headline.contains("queues read on 4 of 4 ranks, stacks on 4"),
            "{what}: {headline}"
        );
        assert!(!report["verdict"].to_string().contains("No rank waits"));
        assert_eq!(cycles(report), [vec![0, 3, 2, 1]], "{what}");
        for (r, rank) in world(report).iter().enumerate() {
            assert_eq!(rank["mpi_call"], "MPI_Recv", "{what}");
            assert_eq!(rank["basis"]["queues"]["status"], "read", "{what}");
            let recv = &rank["pending"].as_array().unwrap();
            let posted: Vec<&Value> = recv.iter().filter(|o| o["kind"] == "receive").collect();
            assert_eq!(posted.len(), 1, "{what}: rank {r}: {recv:?}");
            assert_eq!(posted[0]["peer"], (r as i64 + 3) % 4, "{what}");
            assert_eq!(posted[0]["tag"], 0, "{what}");
            assert_eq!(posted[0]["communicator"], "MPI_COMM_WORLD", "{what}");
        }
        let cycle = finding(report, "deadlock_cycle").expect("a deadlock cycle");
        assert!(
            cycle["summary"]
                .as_str()
                .unwrap()
                .contains("rank 0 in MPI_Recv waits on a receive from rank 3, tag 0"),
            "{what}: {cycle}"
        );
        // Each rank is where the program blocks.
        let line = job.source_line("/* HANG_LINE */");
        for (r, rank) in world(report).iter().enumerate() {
            let location = rank["location"].as_str().unwrap_or("");
            assert!(
                location.contains(&format!("hang_ring.c:{line}")),
                "{what}: rank {r} at {location}"
            );
        }
    }
}
