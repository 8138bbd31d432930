//! The job report as one self-contained HTML page: the verdict first, then
//! the wait-for graph, the findings, a table of the ranks and the merged
//! stack tree. The page loads nothing (its policy forbids it) and runs no
//! script (collapsing the tree is `<details>`), so it can be mailed,
//! attached to a ticket or opened from a cluster's shared disk as it is.
//!
//! Every string of the report may come from target memory, so every one is
//! escaped; the SVG is taken only from its `<svg` element on, so an XML
//! prolog or doctype cannot end up in the middle of the page.

use std::collections::HashSet;
use std::fmt::Write as _;

use crate::model::{
    Evidence, FindingKind, JobReport, Operation, OperationKind, RankReport, RankState, WayOut,
};
use crate::render_dot::{
    kind_name, leaving_word, state_colours, state_name, to_dot, CYCLE_COLOURS,
};
use crate::stack_tree::{rank_set, StackTree};

/// Pending operations listed per rank in the table; the rest are counted.
const MAX_OPERATIONS_SHOWN: usize = 8;

/// Tree levels drawn open; deeper ones start folded.
const OPEN_DEPTH: usize = 24;

/// Tree levels drawn at all: stacks from a corrupt target can be absurdly
/// deep, and the page must stay bounded.
const MAX_DEPTH: usize = 256;

/// The page for `report`, with `svg` (from
/// [`to_svg`](crate::render_svg::to_svg)) as its graph. Without an SVG,
/// the page says so and carries the graph's DOT text instead, so that it
/// can still be drawn elsewhere.
pub fn to_html(report: &JobReport, svg: Option<&str>) -> String {
    let cycle_ranks: HashSet<i64> = report.cycles.iter().flatten().copied().collect();
    let severity = severity(report);
    let headline = report
        .verdict
        .first()
        .map(String::as_str)
        .unwrap_or("No verdict.");

    let mut h = String::with_capacity(16 * 1024 + 512 * report.ranks.len());
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">\n",
    );
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(h, "<title>mpidd job: {}</title>", esc(headline));
    h.push_str("<style>\n");
    h.push_str(&css());
    h.push_str("</style>\n</head>\n<body>\n");

    // The verdict.
    let _ = writeln!(
        h,
        "<header class=\"verdict {}\">\n<div class=\"badge\">{}</div>\n<h1>{}</h1>",
        severity.class(),
        severity.label(),
        esc(headline)
    );
    if report.verdict.len() > 1 {
        h.push_str("<ul>\n");
        for line in &report.verdict[1..] {
            let _ = writeln!(h, "<li>{}</li>", esc(line));
        }
        h.push_str("</ul>\n");
    }
    let _ = writeln!(
        h,
        "<p class=\"counts\">{} ranks (queues read on {}, stacks on {}) · {} waits · {} cycle(s) · {} finding(s)</p>\n</header>",
        report.ranks.len(),
        report.basis.queues_read,
        report.basis.stacks_read,
        report.edges.len(),
        report.cycles.len(),
        report.findings.len()
    );
    h.push_str(
        "<nav><a href=\"#graph\">Graph</a> <a href=\"#findings\">Findings</a> \
         <a href=\"#ranks\">Ranks</a> <a href=\"#stacks\">Stacks</a></nav>\n<main>\n",
    );

    // The graph.
    h.push_str("<section id=\"graph\">\n<h2>Who waits for whom</h2>\n");
    match svg.and_then(|s| s.find("<svg").map(|i| &s[i..])) {
        Some(svg) => {
            h.push_str("<div class=\"graph\">\n");
            h.push_str(svg);
            h.push_str("\n</div>\n");
        }
        None => {
            h.push_str(
                "<p class=\"note\">The graph was not drawn: Graphviz's <code>dot</code> was not \
                 available (<code>apt-get install graphviz</code>). Its DOT text is below; \
                 <code>dot -Tsvg</code> draws it.</p>\n<details><summary>DOT</summary><pre>",
            );
            h.push_str(&esc(&to_dot(report)));
            h.push_str("</pre></details>\n");
        }
    }
    h.push_str("</section>\n");

    // The findings.
    let _ = writeln!(
        h,
        "<section id=\"findings\">\n<h2>Findings ({})</h2>",
        report.findings.len()
    );
    if report.findings.is_empty() {
        h.push_str("<p class=\"note\">Nothing found.</p>\n");
    } else {
        h.push_str("<ol class=\"findings\">\n");
        for f in &report.findings {
            let _ = write!(
                h,
                "<li class=\"{}\"><span class=\"kind\">{}</span> {}",
                finding_class(f.kind),
                finding_name(f.kind),
                esc(&f.summary)
            );
            if !f.ranks.is_empty() {
                let mut ranks: Vec<String> = f.ranks.iter().map(i64::to_string).collect();
                // Only a cycle's ranks are an order of waiting; the other
                // findings list ranks as a set.
                let joined = if f.kind == FindingKind::DeadlockCycle {
                    ranks.push(ranks[0].clone());
                    ranks.join(" → ")
                } else {
                    ranks.join(", ")
                };
                let _ = write!(h, " <span class=\"ranks\">ranks {}</span>", esc(&joined));
            }
            if !f.operations.is_empty() {
                h.push_str("<ul class=\"ops\">");
                for o in f.operations.iter().take(MAX_OPERATIONS_SHOWN) {
                    let _ = write!(
                        h,
                        "<li>rank {}: {}</li>",
                        o.rank,
                        esc(&operation(&o.operation))
                    );
                }
                if f.operations.len() > MAX_OPERATIONS_SHOWN {
                    let _ = write!(
                        h,
                        "<li>… {} more</li>",
                        f.operations.len() - MAX_OPERATIONS_SHOWN
                    );
                }
                h.push_str("</ul>");
            }
            h.push_str("</li>\n");
        }
        h.push_str("</ol>\n");
    }
    h.push_str("</section>\n");

    // The ranks.
    let _ = writeln!(
        h,
        "<section id=\"ranks\">\n<h2>Ranks ({})</h2>\n<table class=\"ranks\">\n\
         <thead><tr><th>rank</th><th>pid</th><th>host</th><th>state</th><th>MPI call</th>\
         <th>location</th><th>pending operations</th></tr></thead>\n<tbody>",
        report.ranks.len()
    );
    for r in &report.ranks {
        rank_row(&mut h, r, cycle_ranks.contains(&r.world_rank));
    }
    h.push_str("</tbody>\n</table>\n</section>\n");

    // The merged stacks.
    h.push_str(
        "<section id=\"stacks\">\n<h2>Merged stacks</h2>\n<p class=\"note\">Every thread of \
         every rank, merged from the outermost frame inwards; each frame shows the ranks whose \
         stacks pass through it. Ranks that stand apart are where to look.</p>\n",
    );
    if report.stack_tree.children.is_empty() {
        h.push_str("<p class=\"note\">No stacks were read.</p>\n");
    } else {
        h.push_str("<div class=\"tree\">\n");
        for c in &report.stack_tree.children {
            tree(&mut h, c, report.stack_tree.ranks.len(), 0);
        }
        h.push_str("</div>\n");
    }
    h.push_str("</section>\n</main>\n");
    let _ = writeln!(
        h,
        "<footer>mpidd-job report, schema {}</footer>\n</body>\n</html>",
        esc(&report.schema)
    );
    h
}

/// How bad the verdict is, for the headline's colour.
#[derive(Clone, Copy)]
enum Severity {
    Deadlock,
    Hung,
    Suspect,
    Fine,
}

impl Severity {
    fn class(self) -> &'static str {
        match self {
            Severity::Deadlock => "sev-deadlock",
            Severity::Hung => "sev-hung",
            Severity::Suspect => "sev-suspect",
            Severity::Fine => "sev-fine",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Severity::Deadlock => "deadlock",
            Severity::Hung => "hung or slow",
            Severity::Suspect => "suspect",
            Severity::Fine => "no wait found",
        }
    }
}

/// Taken from the findings rather than from the headline's wording, which
/// is for people and may change.
fn severity(report: &JobReport) -> Severity {
    let has = |k: FindingKind| report.findings.iter().any(|f| f.kind == k);
    if !report.cycles.is_empty()
        || has(FindingKind::DeadlockCycle)
        || has(FindingKind::GlobalDeadlock)
    {
        Severity::Deadlock
    } else if has(FindingKind::WaitsOnRankOutsideMpi)
        || has(FindingKind::WaitsOnRankInMpi)
        || has(FindingKind::WaitsOnDeadlock)
        || has(FindingKind::WaitsOnExitedRank)
        || has(FindingKind::WaitsOnLeavingRank)
        || has(FindingKind::BlockedWithoutPeer)
    {
        Severity::Hung
    } else if report
        .findings
        .iter()
        .any(|f| f.kind != FindingKind::UnreadableRanks)
    {
        Severity::Suspect
    } else {
        Severity::Fine
    }
}

fn finding_name(kind: FindingKind) -> &'static str {
    match kind {
        FindingKind::DeadlockCycle => "deadlock cycle",
        FindingKind::GlobalDeadlock => "every rank blocked",
        FindingKind::WaitsOnExitedRank => "waits on an exited rank",
        FindingKind::WaitsOnLeavingRank => "waits on a leaving rank",
        FindingKind::BlockedWithoutPeer => "blocked, peer unknown",
        FindingKind::WaitsOnRankOutsideMpi => "waits on a rank outside MPI",
        FindingKind::WaitsOnRankInMpi => "waits on a rank in MPI",
        FindingKind::WaitsOnDeadlock => "waits on a deadlock",
        FindingKind::UnmatchableReceive => "unmatchable receive",
        FindingKind::CollectiveMismatch => "collective mismatch",
        FindingKind::UnreceivedMessage => "unreceived message",
        FindingKind::UnreadableRanks => "unreadable ranks",
        FindingKind::MissingRanks => "ranks not read",
        FindingKind::MixedJobs => "ranks of several jobs",
    }
}

fn finding_class(kind: FindingKind) -> &'static str {
    match kind {
        FindingKind::DeadlockCycle | FindingKind::GlobalDeadlock => "f-deadlock",
        FindingKind::WaitsOnRankOutsideMpi
        | FindingKind::WaitsOnRankInMpi
        | FindingKind::WaitsOnDeadlock
        | FindingKind::WaitsOnExitedRank
        | FindingKind::WaitsOnLeavingRank
        | FindingKind::BlockedWithoutPeer => "f-hung",
        FindingKind::UnreadableRanks => "f-info",
        _ => "f-suspect",
    }
}

fn rank_row(h: &mut String, r: &RankReport, on_cycle: bool) {
    let opt = |s: &Option<String>| s.as_deref().map(esc).unwrap_or_default();
    let rank = if r.world_rank >= 0 {
        r.world_rank.to_string()
    } else {
        "?".to_string()
    };
    let state_class = match r.state {
        RankState::InMpi => "st-in-mpi",
        RankState::OutsideMpi => "st-outside",
        RankState::Unknown => "st-unknown",
        RankState::Unreadable | RankState::Exited => "st-unreadable",
    };
    let _ = write!(
        h,
        "<tr{}><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td>\
         <td><span class=\"state {state_class}\">{}</span>{}</td><td><code>{}</code></td><td>{}",
        if on_cycle { " class=\"cycle\"" } else { "" },
        rank,
        r.pid.map(|p| p.to_string()).unwrap_or_default(),
        opt(&r.host),
        state_name(Some(&r.state)),
        if on_cycle {
            " <span class=\"state st-cycle\">deadlocked</span>".to_string()
        } else {
            match r.way_out {
                Some(w) if w != WayOut::Exited => format!(
                    " <span class=\"state st-leaving\">{}</span>",
                    leaving_word(w)
                ),
                _ => String::new(),
            }
        },
        opt(&r.mpi_call),
        opt(&r.location),
    );
    let evidence = |e: &Evidence| match e {
        Evidence::Read { by, .. } => by.clone(),
        Evidence::NotRead { why } => format!("not read: {why}"),
    };
    let _ = write!(
        h,
        "<div class=\"basis\">queues: {} · stacks: {} · rank: {}</div>",
        esc(&evidence(&r.basis.queues)),
        esc(&evidence(&r.basis.stacks)),
        esc(r.basis.world_rank.as_deref().unwrap_or("not known"))
    );
    for e in &r.errors {
        let _ = write!(h, "<div class=\"error\">{}</div>", esc(e));
    }
    h.push_str("</td><td>");
    if !r.pending.is_empty() {
        h.push_str("<ul class=\"ops\">");
        for o in r.pending.iter().take(MAX_OPERATIONS_SHOWN) {
            let _ = write!(h, "<li>{}</li>", esc(&operation(o)));
        }
        if r.pending.len() > MAX_OPERATIONS_SHOWN {
            let _ = write!(
                h,
                "<li>… {} more</li>",
                r.pending.len() - MAX_OPERATIONS_SHOWN
            );
        }
        h.push_str("</ul>");
    }
    h.push_str("</td></tr>\n");
}

/// One operation in a line: `receive from 3, tag 0, MPI_COMM_WORLD, 64 B`.
fn operation(o: &Operation) -> String {
    let peer = if o.peer < 0 {
        "any".to_string()
    } else {
        o.peer.to_string()
    };
    let direction = match o.kind {
        OperationKind::Receive | OperationKind::Unexpected => "from",
        OperationKind::Send | OperationKind::InferredSend => "to",
        OperationKind::Collective => "waiting for",
    };
    let tag = o
        .tag
        .map(|t| t.to_string())
        .unwrap_or_else(|| "any".to_string());
    let mut s = format!(
        "{} {direction} {peer}, tag {tag}, {}, {}",
        kind_name(o.kind),
        o.communicator,
        bytes(o.length)
    );
    if let Some(p) = &o.protocol {
        let _ = write!(s, ", {p}");
    }
    if o.synchronous == Some(true) {
        s.push_str(", synchronous");
    }
    s
}

fn bytes(n: i64) -> String {
    const KIB: i64 = 1 << 10;
    const MIB: i64 = 1 << 20;
    const GIB: i64 = 1 << 30;
    match n {
        n if n < 0 => "? B".to_string(),
        n if n >= GIB && n % GIB == 0 => format!("{} GiB", n / GIB),
        n if n >= MIB && n % MIB == 0 => format!("{} MiB", n / MIB),
        n if n >= KIB && n % KIB == 0 => format!("{} KiB", n / KIB),
        n => format!("{n} B"),
    }
}

fn tree(h: &mut String, node: &StackTree, parent_ranks: usize, depth: usize) {
    if depth >= MAX_DEPTH {
        h.push_str("<div class=\"leaf note\">… deeper frames not shown</div>\n");
        return;
    }
    let set = if node.rank_set.is_empty() {
        rank_set(&node.ranks)
    } else {
        node.rank_set.clone()
    };
    // A branch that only some of its parent's ranks take is where ranks
    // part ways: that is what STAT-style trees are read for.
    let split = node.ranks.len() < parent_ranks;
    let summary = format!(
        "<span class=\"fn\">{}</span> <span class=\"rs{}\">[{}]</span> \
         <span class=\"count\">{} rank{} · {} thread{}</span>",
        esc(&node.function),
        if split { " split" } else { "" },
        esc(&set),
        node.ranks.len(),
        if node.ranks.len() == 1 { "" } else { "s" },
        node.threads,
        if node.threads == 1 { "" } else { "s" },
    );
    if node.children.is_empty() {
        let _ = writeln!(h, "<div class=\"leaf\">{summary}</div>");
    } else {
        let _ = writeln!(
            h,
            "<details{}><summary>{summary}</summary>",
            if depth < OPEN_DEPTH { " open" } else { "" }
        );
        for c in &node.children {
            tree(h, c, node.ranks.len(), depth + 1);
        }
        h.push_str("</details>\n");
    }
}

/// Text for HTML element content and attribute values alike.
fn esc(s: &str) -> String {
    let mut e = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => e.push_str("&amp;"),
            '<' => e.push_str("&lt;"),
            '>' => e.push_str("&gt;"),
            '"' => e.push_str("&quot;"),
            '\'' => e.push_str("&#39;"),
            // Control characters other than whitespace have no place in
            // names and some are not allowed in HTML at all.
            c if c.is_control() && c != '\n' && c != '\t' => e.push('\u{fffd}'),
            c => e.push(c),
        }
    }
    e
}

fn css() -> String {
    let state = |class: &str, s: Option<&RankState>| {
        let (fill, border) = state_colours(s);
        format!(".{class} {{ background: {fill}; border-color: {border}; }}\n")
    };
    let mut c = String::from(
        r#"* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #111827; background: #f9fafb; }
header.verdict { padding: 18px 28px 14px; border-bottom-width: 4px; border-bottom-style: solid; }
header.verdict h1 { margin: 4px 0 8px; font-size: 24px; line-height: 1.25; }
header.verdict ul { margin: 0 0 6px; padding-left: 20px; font-size: 15px; }
header.verdict .badge { display: inline-block; padding: 2px 10px; border-radius: 999px; color: #fff; font-weight: 700; font-size: 12px; letter-spacing: .06em; text-transform: uppercase; }
header.verdict .counts { margin: 6px 0 0; color: #4b5563; font-size: 13px; }
.sev-deadlock { background: #fef2f2; border-color: #dc2626; }
.sev-deadlock h1 { color: #991b1b; }
.sev-deadlock .badge { background: #dc2626; }
.sev-hung { background: #fff7ed; border-color: #ea580c; }
.sev-hung h1 { color: #9a3412; }
.sev-hung .badge { background: #ea580c; }
.sev-suspect { background: #fefce8; border-color: #ca8a04; }
.sev-suspect h1 { color: #854d0e; }
.sev-suspect .badge { background: #ca8a04; }
.sev-fine { background: #f0fdf4; border-color: #16a34a; }
.sev-fine h1 { color: #166534; }
.sev-fine .badge { background: #16a34a; }
nav { padding: 8px 28px; background: #fff; border-bottom: 1px solid #e5e7eb; }
nav a { margin-right: 18px; color: #1d4ed8; text-decoration: none; }
main { padding: 4px 28px 24px; }
section { margin-top: 18px; }
h2 { font-size: 18px; margin: 0 0 8px; }
.note { color: #4b5563; }
.graph { background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; padding: 12px; overflow: auto; text-align: center; }
.graph svg { max-width: 100%; height: auto; }
ol.findings { padding-left: 22px; }
ol.findings > li { margin: 6px 0; padding: 6px 10px; border-left: 4px solid #9ca3af; background: #fff; }
ol.findings .kind { font-weight: 700; margin-right: 6px; }
ol.findings .ranks { color: #4b5563; font-size: 13px; white-space: nowrap; }
.f-deadlock { border-left-color: #dc2626 !important; }
.f-deadlock .kind { color: #b91c1c; }
.f-hung { border-left-color: #ea580c !important; }
.f-hung .kind { color: #c2410c; }
.f-suspect { border-left-color: #ca8a04 !important; }
.f-suspect .kind { color: #a16207; }
ul.ops { margin: 2px 0; padding-left: 18px; font-size: 13px; }
table.ranks { border-collapse: collapse; width: 100%; background: #fff; font-size: 13px; }
table.ranks th, table.ranks td { border: 1px solid #e5e7eb; padding: 4px 8px; text-align: left; vertical-align: top; }
table.ranks th { background: #f3f4f6; position: sticky; top: 0; }
table.ranks td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.ranks tr.cycle td { background: #fff1f2; }
table.ranks tr.cycle td:first-child { border-left: 4px solid #dc2626; font-weight: 700; }
.state { display: inline-block; padding: 0 6px; border: 1px solid; border-radius: 4px; white-space: nowrap; }
.error { color: #b91c1c; font-size: 12px; }
.basis { color: #4b5563; font-size: 12px; }
code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 12.5px; }
.tree { background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; padding: 10px 14px; font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 13px; }
.tree details { margin-left: 18px; }
.tree > details, .tree > .leaf { margin-left: 0; }
.tree .leaf { margin-left: 34px; }
.tree summary { cursor: pointer; }
.tree .fn { font-weight: 600; }
.tree .rs { color: #1d4ed8; }
.tree .rs.split { color: #b91c1c; font-weight: 700; }
.tree .count { color: #6b7280; font-size: 12px; }
footer { padding: 10px 28px; color: #9ca3af; font-size: 12px; }
"#,
    );
    c.push_str(&state("st-in-mpi", Some(&RankState::InMpi)));
    c.push_str(&state("st-outside", Some(&RankState::OutsideMpi)));
    c.push_str(&state("st-unknown", Some(&RankState::Unknown)));
    c.push_str(&state("st-unreadable", Some(&RankState::Unreadable)));
    c.push_str(&state("st-leaving", Some(&RankState::Exited)));
    let _ = writeln!(
        c,
        ".st-cycle {{ background: {}; border-color: {}; color: #991b1b; font-weight: 700; }}",
        CYCLE_COLOURS.0, CYCLE_COLOURS.1
    );
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_attributes() {
        assert_eq!(
            esc("</script><a href='x'>&\"\u{0}"),
            "&lt;/script&gt;&lt;a href=&#39;x&#39;&gt;&amp;&quot;\u{fffd}"
        );
    }

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(bytes(8 << 20), "8 MiB");
        assert_eq!(bytes(64), "64 B");
        assert_eq!(bytes(1500), "1500 B");
        assert_eq!(bytes(-1), "? B");
    }
}
