//! The report as text for a terminal: the verdict first, then the graph's
//! cycles and edges, each rank, and the merged stacks.

use std::fmt::Write;

use crate::model::WayOut;
use crate::model::{
    Evidence, JobReport, Operation, OperationKind, RankBasis, RankReport, RankState,
};
use crate::read_timings::ReadTimings;
use crate::stack_tree::StackTree;
use crate::way_out::{describe_exception, short_name};

/// Deeper stack-tree levels than this are left out of the text (the JSON
/// and the HTML page have them all).
const MAX_TREE_DEPTH: usize = 24;

/// The whole report as text.
pub fn to_text(report: &JobReport) -> String {
    let mut s = String::new();
    for line in &report.verdict {
        let _ = writeln!(s, "{line}");
    }
    let _ = writeln!(s);
    if !report.cycles.is_empty() {
        let _ = writeln!(s, "cycles:");
        for c in &report.cycles {
            let path: Vec<String> = c.iter().chain(c.first()).map(i64::to_string).collect();
            let _ = writeln!(s, "  {}", path.join(" → "));
        }
    }
    if !report.edges.is_empty() {
        let _ = writeln!(s, "waits (from → to):");
        for e in &report.edges {
            let tag = e.tag.map_or("any tag".to_string(), |t| format!("tag {t}"));
            let any = if e.any_source { ", any source" } else { "" };
            let _ = writeln!(
                s,
                "  {} → {}: {} on {}, {tag}{any}",
                e.from,
                e.to,
                kind(e.kind),
                e.communicator
            );
        }
    }
    let _ = writeln!(s, "ranks:");
    for r in &report.ranks {
        let state = match r.state {
            RankState::InMpi => format!("in {}", r.mpi_call.as_deref().unwrap_or("MPI")),
            RankState::OutsideMpi => "outside MPI".to_string(),
            RankState::Unknown => "state unknown (no stacks)".to_string(),
            RankState::Unreadable => "unreadable".to_string(),
            RankState::Exited => "exited".to_string(),
        };
        let state = match r.way_out {
            Some(w) if w != WayOut::Exited => format!("{state} ({})", short_name(w)),
            _ => state,
        };
        let place = r
            .location
            .as_ref()
            .map(|l| format!(", at {l}"))
            .unwrap_or_default();
        let pid = r.pid.map(|p| format!(" pid {p}")).unwrap_or_default();
        let host = r
            .host
            .as_ref()
            .map(|h| format!(" on {h}"))
            .unwrap_or_default();
        let _ = writeln!(s, "  rank {}{pid}{host}: {state}{place}", r.world_rank);
        match (&r.python_call, &r.python_statement) {
            (Some(call), Some(line)) => {
                let _ = writeln!(s, "    python: {call}, in: {line}");
            }
            (Some(one), None) | (None, Some(one)) => {
                let _ = writeln!(s, "    python: {one}");
            }
            (None, None) => {}
        }
        if let Some(job) = job_identity(r) {
            let _ = writeln!(s, "    job: {job}");
        }
        let _ = writeln!(s, "    rests on: {}", basis(&r.basis));
        for op in &r.pending {
            let _ = writeln!(s, "    {}", operation(op));
        }
        if let Some(e) = &r.python_exception {
            let _ = writeln!(s, "    raised: {}", describe_exception(e));
        }
        for e in &r.errors {
            let _ = writeln!(s, "    error: {e}");
        }
        if let Some(t) = &r.timings {
            let _ = writeln!(s, "    read in: {}", timings(t));
        }
    }
    let timed: Vec<&ReadTimings> = report
        .ranks
        .iter()
        .filter_map(|r| r.timings.as_ref())
        .collect();
    if !timed.is_empty() {
        let _ = writeln!(
            s,
            "read times, median of {} rank(s): {}",
            timed.len(),
            timings(&median(&timed))
        );
    }
    if !report.stack_tree.children.is_empty() {
        let _ = writeln!(s, "stacks (merged, outermost first; [ranks]):");
        for child in &report.stack_tree.children {
            tree(&mut s, child, 1);
        }
    }
    s
}

/// `PMIx namespace prterun-vm-10880@1, PMIx rank 2, of 4 ranks`: what
/// its launcher told it of its job, when anything.
pub fn job_identity(r: &RankReport) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(ns) = &r.pmix_namespace {
        parts.push(format!("PMIx namespace {ns}"));
    }
    if let Some(rank) = r.pmix_rank {
        parts.push(format!("PMIx rank {rank}"));
    }
    if let Some(n) = r.job_size {
        parts.push(format!("of {n} ranks"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// `queues by DECODER; stacks: 2 thread(s) unwound; world rank from X`.
fn basis(b: &RankBasis) -> String {
    let evidence = |e: &Evidence| match e {
        Evidence::Read { by, .. } => format!("read ({by})"),
        Evidence::NotRead { why } => format!("not read ({why})"),
    };
    format!(
        "queues {}; stacks {}; world rank from {}",
        evidence(&b.queues),
        evidence(&b.stacks),
        b.world_rank.as_deref().unwrap_or("nowhere (not known)")
    )
}

fn kind(k: OperationKind) -> &'static str {
    match k {
        OperationKind::Receive => "receive",
        OperationKind::Send => "send",
        OperationKind::Unexpected => "unexpected message",
        OperationKind::InferredSend => "blocked send (inferred)",
        OperationKind::Collective => "collective",
    }
}

fn operation(op: &Operation) -> String {
    let peer = if op.peer < 0 && op.peer_local < 0 {
        "any source".to_string()
    } else if op.peer < 0 {
        format!("local rank {}", op.peer_local)
    } else {
        format!("rank {}", op.peer)
    };
    let dir = match op.kind {
        OperationKind::Receive | OperationKind::Unexpected => "from",
        OperationKind::Send | OperationKind::InferredSend => "to",
        OperationKind::Collective => "waiting for",
    };
    let tag = op.tag.map_or("any tag".to_string(), |t| format!("tag {t}"));
    let how = match (&op.protocol, op.synchronous) {
        (Some(p), Some(true)) => format!(", {p}, synchronous"),
        (Some(p), _) => format!(", {p}"),
        (None, Some(true)) => ", synchronous".to_string(),
        _ => String::new(),
    };
    format!(
        "{} {dir} {peer}, {tag}, {} bytes on {}{how}",
        kind(op.kind),
        op.length,
        op.communicator
    )
}

fn tree(s: &mut String, node: &StackTree, depth: usize) {
    if depth > MAX_TREE_DEPTH {
        let _ = writeln!(s, "{}...", "  ".repeat(depth));
        return;
    }
    let _ = writeln!(
        s,
        "{}{} [{}]",
        "  ".repeat(depth),
        node.function,
        node.rank_set
    );
    for c in &node.children {
        tree(s, c, depth + 1);
    }
}

/// `3.10 ms: open 1.00, stop 0.20, ...`, in milliseconds.
fn timings(t: &ReadTimings) -> String {
    let ms = |s: f64| s * 1e3;
    format!(
        "{:.2} ms: open {:.2}, stop {:.2}, queues {:.2}, world rank {:.2}, stacks {:.2}, \
         release {:.2} ({} thread(s) stopped)",
        ms(t.total),
        ms(t.open),
        ms(t.stop),
        ms(t.queues),
        ms(t.world_rank),
        ms(t.stacks),
        ms(t.release),
        t.threads_stopped
    )
}

/// Each phase's median over the ranks (the upper one of an even count).
fn median(all: &[&ReadTimings]) -> ReadTimings {
    let of = |f: fn(&ReadTimings) -> f64| {
        let mut v: Vec<f64> = all.iter().map(|t| f(t)).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let mut threads: Vec<usize> = all.iter().map(|t| t.threads_stopped).collect();
    threads.sort_unstable();
    ReadTimings {
        open: of(|t| t.open),
        stop: of(|t| t.stop),
        queues: of(|t| t.queues),
        world_rank: of(|t| t.world_rank),
        stacks: of(|t| t.stacks),
        release: of(|t| t.release),
        total: of(|t| t.total),
        threads_stopped: threads.get(threads.len() / 2).copied().unwrap_or(0),
    }
}
