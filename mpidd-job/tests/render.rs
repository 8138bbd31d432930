//! The pictures of a job: the DOT text is parsed back and compared with the
//! graph it should show, hostile names from target memory stay inert in
//! DOT and HTML, and Graphviz draws one node per rank and one edge per
//! wait.

mod common;

use std::collections::BTreeSet;
use std::time::Instant;

use mpidd_job::render_dot::to_dot;
use mpidd_job::render_html::to_html;
use mpidd_job::render_svg::{dot_to_svg, to_svg, RenderError};
use mpidd_job::synthetic::SyntheticRank;
use mpidd_job::{analyze, JobReport};

use common::{blocked_in, in_call, receiving, WORLD};

fn ring() -> JobReport {
    analyze(&common::ring(4))
}

fn head_to_head() -> JobReport {
    analyze(&common::head_to_head(4))
}

/// Names as a corrupt or malicious target could hold them.
const EVIL: &str = "e\"vil</script><b>\\N\n&lt;x";

/// A two-rank deadlock on a communicator and host with hostile names, and
/// a third rank that computes in a function and file with hostile names.
fn hostile() -> JobReport {
    let comm = format!("comm{EVIL}");
    let place = format!("f{EVIL}.c:7@fn{EVIL}");
    let mut readings = vec![
        SyntheticRank::new(0, 3)
            .comm(&comm, &[0, 1])
            .receive(&comm, 1, None)
            .stack(&["main", "MPI_Recv", "poll"])
            .reading(),
        SyntheticRank::new(1, 3)
            .comm(&comm, &[0, 1])
            .receive(&comm, 0, Some(1))
            .stack(&["main", "MPI_Recv", "poll"])
            .reading(),
        SyntheticRank::new(2, 3).stack(&["main", &place]).reading(),
    ];
    readings[0].host = Some(format!("host{EVIL}"));
    readings[1].host = Some("node2".to_string());
    readings[2].host = Some("node2".to_string());
    analyze(&readings)
}

/// One node or edge statement of the DOT text, as `to_dot` writes them:
/// one statement a line.
#[derive(Debug)]
struct Statement {
    /// `n3`, or `n3 -> n0`.
    head: String,
    /// The attribute list, with quoted values unescaped.
    attrs: Vec<(String, String)>,
}

impl Statement {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Reads back the node and edge statements, checking on the way that no
/// quoted string runs past the end of its line (a newline or quote from
/// the target would make it).
fn statements(dot: &str) -> (Vec<Statement>, Vec<Statement>) {
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    for line in dot.lines() {
        let line = line.trim();
        let Some(open) = line.find(" [") else {
            continue;
        };
        let head = &line[..open];
        if !(head.starts_with('n') && head[1..2].chars().all(|c| c.is_ascii_digit())) {
            continue;
        }
        assert!(line.ends_with("];"), "unterminated statement: {line}");
        let attrs = parse_attrs(&line[open + 2..line.len() - 2]);
        let s = Statement {
            head: head.to_string(),
            attrs,
        };
        if head.contains("->") {
            edges.push(s);
        } else {
            nodes.push(s);
        }
    }
    (nodes, edges)
}

/// `a=b, c="d, \"e\""` into pairs, unescaping DOT's `\"` and `\\`.
fn parse_attrs(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == ',') {
            chars.next();
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' {
                break;
            }
            key.push(c);
            chars.next();
        }
        if key.is_empty() {
            break;
        }
        assert_eq!(chars.next(), Some('='), "attribute without value: {s}");
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('\\') => match chars.next() {
                        Some('"') => value.push('"'),
                        Some('\\') => value.push('\\'),
                        Some('n') => value.push('\n'),
                        other => panic!("unexpected escape \\{other:?} in {s}"),
                    },
                    Some('"') => break,
                    Some(c) => value.push(c),
                    None => panic!("quoted string runs past its line: {s}"),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' {
                    break;
                }
                value.push(c);
                chars.next();
            }
        }
        out.push((key.trim().to_string(), value));
    }
    out
}

fn is_red(e: &Statement) -> bool {
    e.attr("color") == Some("#dc2626") && e.attr("penwidth") == Some("3")
}

#[test]
fn the_ring_is_four_red_edges_between_four_ranks() {
    let dot = to_dot(&ring());
    let (nodes, edges) = statements(&dot);
    let labels: Vec<&str> = nodes.iter().map(|n| n.attr("label").unwrap()).collect();
    assert_eq!(
        labels,
        [
            "rank 0\nMPI_Recv",
            "rank 1\nMPI_Recv",
            "rank 2\nMPI_Recv",
            "rank 3\nMPI_Recv"
        ]
    );
    assert_eq!(dot.matches("->").count(), 4, "{dot}");
    let heads: BTreeSet<&str> = edges.iter().map(|e| e.head.as_str()).collect();
    assert_eq!(
        heads,
        BTreeSet::from(["n0 -> n3", "n1 -> n0", "n2 -> n1", "n3 -> n2"])
    );
    for e in &edges {
        assert!(is_red(e), "{e:?}");
        assert_eq!(e.attr("label"), Some("receive, tag 0\nMPI_COMM_WORLD"));
    }
    // Deadlocked ranks are filled as such, whatever their state.
    assert!(nodes.iter().all(|n| n.attr("fillcolor") == Some("#fee2e2")));
    assert!(dot.contains("deadlocked"), "legend: {dot}");
}

#[test]
fn head_to_head_has_a_red_pair_and_two_waiters() {
    let dot = to_dot(&head_to_head());
    let (nodes, edges) = statements(&dot);
    assert_eq!(nodes.len(), 4);
    assert_eq!(nodes[0].attr("label"), Some("rank 0\nMPI_Ssend"));
    assert_eq!(nodes[2].attr("label"), Some("rank 2\nMPI_Recv"));
    assert_eq!(dot.matches("->").count(), 4);
    let by_head = |h: &str| edges.iter().find(|e| e.head == h).unwrap();
    for h in ["n0 -> n1", "n1 -> n0"] {
        let e = by_head(h);
        assert!(is_red(e), "{e:?}");
        assert_eq!(
            e.attr("label"),
            Some("inferred send, tag 5\nMPI_COMM_WORLD")
        );
    }
    for h in ["n2 -> n0", "n3 -> n0"] {
        let e = by_head(h);
        assert!(!is_red(e), "{e:?}");
        assert_eq!(e.attr("label"), Some("receive, tag 9\nMPI_COMM_WORLD"));
    }
    // 0 and 1 are deadlocked, 2 and 3 only wait.
    assert_eq!(nodes[1].attr("fillcolor"), Some("#fee2e2"));
    assert_eq!(nodes[3].attr("fillcolor"), Some("#dbeafe"));
}

#[test]
fn any_source_edges_are_dashed_and_untagged_receives_say_any() {
    let report = analyze(&[
        receiving(0, 3, -1, None),
        SyntheticRank::new(1, 3)
            .stack(&["main", "busy.c:42@compute"])
            .reading(),
        SyntheticRank::new(2, 3)
            .stack(&["main", "busy.c:42@compute"])
            .reading(),
    ]);
    let (nodes, edges) = statements(&to_dot(&report));
    assert_eq!(nodes[1].attr("label"), Some("rank 1\ncompute at busy.c:42"));
    assert_eq!(edges.len(), 2);
    for e in &edges {
        assert_eq!(e.attr("style"), Some("dashed"));
        assert_eq!(
            e.attr("label"),
            Some("receive (any source), tag any\nMPI_COMM_WORLD")
        );
    }
}

#[test]
fn hostile_names_stay_inside_their_strings() {
    let report = hostile();
    let dot = to_dot(&report);
    let (nodes, edges) = statements(&dot);
    assert_eq!(nodes.len(), 3, "{dot}");
    assert_eq!(edges.len(), 2, "{dot}");
    // Read back, the label says what the target said, bar the newline
    // (a name cannot add lines) and `&`, which Graphviz would decode.
    let cleaned = EVIL.replace('\n', " ").replace('&', "&amp;");
    let node = |h: &str| nodes.iter().find(|n| n.head == h).unwrap();
    assert!(node("n2")
        .attr("label")
        .unwrap()
        .starts_with(&format!("rank 2\nfn{cleaned} at ")));
    assert!(edges.iter().any(|e| e
        .attr("label")
        .unwrap()
        .ends_with(&format!("comm{cleaned}"))));
    // Two hosts: boxed by host, the hostile one named in a quoted string.
    assert_eq!(dot.matches("subgraph \"cluster_").count(), 2, "{dot}");
    assert!(dot.contains(r#"label="host host"#));
    // Graphviz takes it, and draws every rank.
    let svg = to_svg(&report).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(svg.matches("class=\"node\"").count(), 3);
    assert!(!svg.contains("</script>"));

    for svg in [None, Some(svg.as_str())] {
        let html = to_html(&report, svg);
        assert!(!html.contains("</script>"), "raw </script> in the page");
        assert!(!html.contains("<script"), "the page runs no script");
        assert!(!html.contains("<b>"), "raw markup from the target");
        assert!(!html.contains("e\"vil"), "raw quote from the target");
        assert!(html.contains("e&quot;vil&lt;/script&gt;&lt;b&gt;\\N\n&amp;lt;x"));
        assert!(html.contains("<td>hoste&quot;vil&lt;/script&gt;"));
    }
}

#[test]
fn graphviz_draws_one_node_per_rank_and_one_edge_per_wait() {
    for report in [ring(), head_to_head(), hostile()] {
        let svg = to_svg(&report).unwrap_or_else(|e| panic!("{e}"));
        assert!(svg.contains("<svg"), "{svg}");
        assert_eq!(
            svg.matches("class=\"node\"").count(),
            report.ranks.len(),
            "{svg}"
        );
        assert_eq!(
            svg.matches("class=\"edge\"").count(),
            report.edges.len(),
            "{svg}"
        );
    }
}

#[test]
fn a_missing_graphviz_says_how_to_install_it() {
    let err = dot_to_svg(
        "/nonexistent/dot",
        "digraph {}",
        std::time::Duration::from_secs(5),
    )
    .unwrap_err();
    assert!(matches!(err, RenderError::GraphvizMissing { .. }), "{err}");
    assert!(
        err.to_string().contains("apt-get install graphviz"),
        "{err}"
    );
}

#[test]
fn a_stuck_layout_is_killed_at_its_deadline() {
    // A stand-in for a dot that never finishes.
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let stuck = dir.path().join("stuck-dot");
    std::fs::write(&stuck, "#!/bin/sh\nexec sleep 30\n").unwrap();
    std::fs::set_permissions(&stuck, std::fs::Permissions::from_mode(0o755)).unwrap();
    let start = Instant::now();
    let err = dot_to_svg(
        stuck.to_str().unwrap(),
        "digraph {}",
        std::time::Duration::from_millis(500),
    )
    .unwrap_err();
    assert!(matches!(err, RenderError::Timeout { .. }), "{err}");
    assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
}

#[test]
fn the_page_has_verdict_graph_findings_table_and_tree() {
    let report = head_to_head();
    let svg = to_svg(&report).unwrap_or_else(|e| panic!("{e}"));
    let html = to_html(&report, Some(&svg));
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<?xml"), "the SVG's prolog is dropped");
    assert!(html.contains("class=\"verdict sev-deadlock\""));
    assert!(html.contains(&format!("<h1>{}</h1>", report.verdict[0])));
    assert!(html.find("<h1>").unwrap() < html.find("<svg").unwrap());
    assert!(html.contains("deadlock cycle"));
    assert_eq!(html.matches("<tr class=\"cycle\">").count(), 2);
    assert!(html.contains("inferred send to 1, tag 5, MPI_COMM_WORLD, 8 MiB"));
    assert!(
        html.contains("<span class=\"fn\">MPI_Ssend</span> <span class=\"rs split\">[0-1]</span>")
    );
    // No resource is loaded from anywhere.
    for bad in ["src=", "href=\"http", "url(", "@import"] {
        assert!(!html.contains(bad), "{bad}");
    }
}

#[test]
fn big_jobs_collapse_into_a_small_graph() {
    // 3000 ranks: 0 and 1 deadlock, 2..=999 wait on 0, the rest are in
    // a barrier.
    let n = 3000;
    let readings: Vec<_> = (0..n)
        .map(|r| match r {
            0 | 1 => receiving(r, n, 1 - r, Some(0)),
            2..=999 => receiving(r, n, 0, Some(4)),
            _ => blocked_in(r, n, "MPI_Barrier"),
        })
        .collect();
    let report = analyze(&readings);
    let start = Instant::now();
    let dot = to_dot(&report);
    assert!(start.elapsed().as_secs() < 2, "{:?}", start.elapsed());
    let (nodes, edges) = statements(&dot);
    let labels: Vec<&str> = nodes.iter().map(|n| n.attr("label").unwrap()).collect();
    assert_eq!(
        labels,
        [
            "rank 0\nMPI_Recv",
            "rank 1\nMPI_Recv",
            "ranks 2-999 (998)\nMPI_Recv",
            "ranks 1000-2999 (2000)\nMPI_Barrier"
        ]
    );
    let labels: Vec<&str> = edges.iter().map(|e| e.attr("label").unwrap()).collect();
    assert_eq!(edges.len(), 3, "{labels:?}");
    assert!(labels.contains(&"998× receive, tag 4\nMPI_COMM_WORLD"));
    let svg = to_svg(&report).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(svg.matches("class=\"node\"").count(), 4);
    // The page stays linear: a row per rank, and not much more.
    let html = to_html(&report, Some(&svg));
    assert_eq!(html.matches("<tr").count(), n as usize + 1);
    assert!(html.len() < 400 * n as usize, "{}", html.len());
}

#[test]
fn a_huge_ring_is_bounded() {
    // A ring of 5000 ranks cannot be collapsed (every rank is on the
    // cycle); the drawing keeps MAX_NODES of them and says so.
    let n = 5000;
    let readings: Vec<_> = (0..n)
        .map(|r| {
            SyntheticRank::new(r, n)
                .receive(WORLD, (r + n - 1) % n, Some(0))
                .reading()
        })
        .collect();
    let report = analyze(&readings);
    let start = Instant::now();
    let dot = to_dot(&report);
    assert!(start.elapsed().as_secs() < 2, "{:?}", start.elapsed());
    let (nodes, edges) = statements(&dot);
    assert!(nodes.len() <= mpidd_job::render_dot::MAX_NODES);
    assert!(edges.len() <= mpidd_job::render_dot::MAX_EDGES);
    assert!(dot.contains("Not drawn"), "the legend says what is missing");
}

#[test]
fn many_hosts_get_one_box_each() {
    let mut readings = common::ring(40);
    for (r, reading) in readings.iter_mut().enumerate() {
        reading.host = Some(format!("node{}", r / 10));
    }
    let dot = to_dot(&analyze(&readings));
    for h in 0..4 {
        assert!(
            dot.contains(&format!("subgraph \"cluster_node{h}\"")),
            "{dot}"
        );
    }
}

#[test]
fn every_form_says_what_the_verdict_rests_on() {
    // A ring whose queues no decoder reads: the deadlock is from stacks.
    let readings: Vec<_> = (0..4)
        .map(|r| {
            SyntheticRank::new(r, 4)
                .queues_unread(
                    "queues: no native message-queue decoder for this target: a test MPI",
                )
                .stack(&in_call("MPI_Recv"))
                .reading()
        })
        .collect();
    let report = analyze(&readings);
    let text = mpidd_job::render_text::to_text(&report);
    assert!(
        text.starts_with("DEADLOCK: every rank is blocked in MPI")
            && text.lines().next().unwrap().contains("from stacks alone"),
        "{text}"
    );
    assert_eq!(
        text.matches("rests on: queues not read (queues: no native message-queue decoder")
            .count(),
        4,
        "{text}"
    );
    let dot = to_dot(&report);
    assert!(
        dot.contains("Rests on: stacks alone (queues read on 0 of 4 ranks, stacks on 4)."),
        "{dot}"
    );
    let svg = to_svg(&report).unwrap_or_else(|e| panic!("{e}"));
    assert!(svg.contains("Rests on: stacks alone"), "the SVG's legend");
    let html = to_html(&report, Some(&svg));
    assert!(
        html.contains("4 ranks (queues read on 0, stacks on 4)"),
        "the HTML's counts"
    );
    assert_eq!(
        html.matches("<div class=\"basis\">queues: not read: queues: no native")
            .count(),
        4
    );
}
