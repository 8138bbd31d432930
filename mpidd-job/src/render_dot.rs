//! The wait-for graph of a [`JobReport`] as Graphviz DOT, for a person to
//! look at: who waits for whom, which ranks deadlock, and where the chains
//! of waiting ranks end.
//!
//! Every string in a report may come from target memory (function names,
//! communicator names, host names), so every one is escaped and truncated
//! before it reaches the DOT text; node and cluster identifiers are made up
//! here and never taken from the target.
//!
//! A job of thousands of ranks must still give a graph that Graphviz lays
//! out in seconds and a person can read. Above [`COLLAPSE_ABOVE`] ranks,
//! ranks that are interchangeable in the picture (same host, state and
//! call, same edges in and out, not on a cycle) are drawn as one node such
//! as `ranks 4-999` / `MPI_Barrier`. Whatever still exceeds [`MAX_NODES`]
//! or [`MAX_EDGES`] is left out, cycles first kept, and the legend says how
//! much was left out. All of it is linear in the size of the report, up to
//! a sort.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use crate::model::{Edge, JobReport, OperationKind, RankState, WayOut};
use crate::stack_tree::rank_set;

/// Jobs with more ranks than this have their interchangeable ranks drawn
/// as one node. Below it every rank gets its own node, so a small job's
/// picture names each rank.
pub const COLLAPSE_ABOVE: usize = 32;

/// At most this many nodes are drawn: Graphviz's `dot` layout grows much
/// faster than linearly, and a picture of more is no longer read anyway.
pub const MAX_NODES: usize = 1500;

/// At most this many edges are drawn, for the same reason.
pub const MAX_EDGES: usize = 3000;

/// Longest text (in characters) taken from the target into one label line.
const MAX_TEXT: usize = 60;

/// The colours of the states, shared with the HTML page so that the table
/// and the graph say the same thing the same way: (fill, border).
pub(crate) fn state_colours(state: Option<&RankState>) -> (&'static str, &'static str) {
    match state {
        Some(RankState::InMpi) => ("#dbeafe", "#1d4ed8"),
        Some(RankState::OutsideMpi) => ("#fef3c7", "#b45309"),
        Some(RankState::Unknown) => ("#e5e7eb", "#4b5563"),
        Some(RankState::Unreadable) => ("#f3f4f6", "#9ca3af"),
        Some(RankState::Exited) => ("#f5f5f4", "#57534e"),
        None => ("#ffffff", "#9ca3af"),
    }
}

/// Fill and border of a rank on a deadlock cycle: it overrides the state's
/// colour because that is what the picture is for.
pub(crate) const CYCLE_COLOURS: (&str, &str) = ("#fee2e2", "#dc2626");

/// How a way out of the job is named on a rank's node and in tables.
pub(crate) fn leaving_word(way: WayOut) -> &'static str {
    match way {
        WayOut::Exited => "exited",
        WayOut::Abort => "aborting",
        WayOut::Finalize => "leaving: finalize",
        WayOut::ProcessExit => "leaving: exit",
        WayOut::PythonException => "leaving: Python exception",
    }
}

/// How a state is named in legends and tables.
pub(crate) fn state_name(state: Option<&RankState>) -> &'static str {
    match state {
        Some(RankState::InMpi) => "in MPI",
        Some(RankState::OutsideMpi) => "outside MPI",
        Some(RankState::Unknown) => "unknown",
        Some(RankState::Unreadable) => "unreadable",
        Some(RankState::Exited) => "exited",
        None => "not read",
    }
}

/// How an operation kind is named on edges and in tables.
pub(crate) fn kind_name(kind: OperationKind) -> &'static str {
    match kind {
        OperationKind::Receive => "receive",
        OperationKind::Send => "send",
        OperationKind::Unexpected => "unexpected",
        OperationKind::InferredSend => "inferred send",
        OperationKind::Collective => "collective",
    }
}

/// The wait-for graph in Graphviz DOT: one node per rank (labelled
/// `rank N` and its MPI call or location, filled by state), one edge per
/// wait (`from` waits for `to`, labelled with the operation kind, tag and
/// communicator), edges and ranks of deadlock cycles in red, any-source
/// receives dashed, ranks boxed by host when the job spans several hosts,
/// and a legend. Feed it to `dot -Tsvg` (or [`to_svg`](crate::render_svg::to_svg)).
pub fn to_dot(report: &JobReport) -> String {
    let graph = Graph::build(report);
    graph.emit()
}

/// A vertex before collapsing: a rank of the report, or a world rank that
/// an edge names but that is not in the report.
struct Vertex {
    world: i64,
    label_rank: String,
    state: Option<RankState>,
    what: String,
    host: Option<String>,
    on_cycle: bool,
}

/// A drawn node: one vertex, or several interchangeable ones.
struct Node {
    ranks: Vec<i64>,
    /// Members without a world rank (unreadable ranks), by their label.
    unnamed: Vec<String>,
    state: Option<RankState>,
    what: String,
    host: Option<String>,
    on_cycle: bool,
    has_edges: bool,
}

/// A drawn edge, between nodes.
struct DrawnEdge {
    from: usize,
    to: usize,
    kind: OperationKind,
    communicator: String,
    tag: Option<i64>,
    any_source: bool,
    on_cycle: bool,
    /// How many edges of the report it stands for.
    count: usize,
}

struct Graph {
    nodes: Vec<Node>,
    edges: Vec<DrawnEdge>,
    cluster_by_host: bool,
    ranks_collapsed: usize,
    nodes_left_out: usize,
    edges_left_out: usize,
    /// What the verdict rests on, in the legend: counts only, no text
    /// from the target.
    rests_on: String,
}

/// What makes two vertices interchangeable in the picture.
type Signature<'a> = (
    Option<&'a str>,
    u8,
    &'a str,
    Vec<EdgeKey<'a>>,
    Vec<EdgeKey<'a>>,
);

/// An edge seen from one end: the other end and what the edge says.
/// (The model's enums are neither `Hash` nor `Ord`, hence the codes.)
type EdgeKey<'a> = (i64, u8, &'a str, Option<i64>, bool);

/// What makes two edges between the same two nodes one drawn edge:
/// (from node, to node, kind, communicator, tag, any source).
type DrawnEdgeKey<'a> = (usize, usize, u8, &'a str, Option<i64>, bool);

fn kind_code(kind: OperationKind) -> u8 {
    match kind {
        OperationKind::Receive => 0,
        OperationKind::Send => 1,
        OperationKind::Unexpected => 2,
        OperationKind::InferredSend => 3,
        OperationKind::Collective => 4,
    }
}

fn state_code(state: Option<&RankState>) -> u8 {
    match state {
        Some(RankState::InMpi) => 0,
        Some(RankState::OutsideMpi) => 1,
        Some(RankState::Unknown) => 2,
        Some(RankState::Unreadable) => 3,
        Some(RankState::Exited) => 5,
        None => 4,
    }
}

impl Graph {
    fn build(report: &JobReport) -> Graph {
        let cycle_ranks: HashSet<i64> = report.cycles.iter().flatten().copied().collect();
        let cycle_pairs: HashSet<(i64, i64)> = report
            .cycles
            .iter()
            .flat_map(|c| {
                c.iter()
                    .zip(c.iter().cycle().skip(1))
                    .map(|(&a, &b)| (a, b))
            })
            .collect();

        // The vertices: the report's ranks, in its order, then world ranks
        // that only edges name.
        let mut vertices: Vec<Vertex> = Vec::with_capacity(report.ranks.len());
        let mut by_world: HashMap<i64, usize> = HashMap::new();
        for r in &report.ranks {
            let what = match r.state {
                RankState::InMpi => r
                    .mpi_call
                    .as_deref()
                    .map(clean)
                    .unwrap_or_else(|| "in MPI".to_string()),
                RankState::OutsideMpi => r
                    .location
                    .as_deref()
                    .map(clean)
                    .unwrap_or_else(|| "outside MPI".to_string()),
                RankState::Unknown => "(no stack)".to_string(),
                RankState::Unreadable => "unreadable".to_string(),
                RankState::Exited => "exited".to_string(),
            };
            // A rank on its way out says so: that is why others wait.
            let what = match r.way_out {
                Some(w) if w != WayOut::Exited => {
                    format!("{what} ({})", leaving_word(w))
                }
                _ => what,
            };
            let label_rank = if r.world_rank >= 0 {
                format!("rank {}", r.world_rank)
            } else if let Some(pid) = r.pid {
                format!("rank ? (pid {pid})")
            } else {
                format!("rank ? ({})", clean(&r.target))
            };
            if r.world_rank >= 0 {
                by_world.entry(r.world_rank).or_insert(vertices.len());
            }
            vertices.push(Vertex {
                world: r.world_rank,
                label_rank,
                state: Some(r.state.clone()),
                what,
                host: r.host.as_deref().map(clean),
                on_cycle: r.world_rank >= 0 && cycle_ranks.contains(&r.world_rank),
            });
        }
        for e in &report.edges {
            for w in [e.from, e.to] {
                by_world.entry(w).or_insert_with(|| {
                    vertices.push(Vertex {
                        world: w,
                        label_rank: format!("rank {w}"),
                        state: None,
                        what: "not read".to_string(),
                        host: None,
                        on_cycle: cycle_ranks.contains(&w),
                    });
                    vertices.len() - 1
                });
            }
        }

        let hosts: HashSet<&str> = vertices.iter().filter_map(|v| v.host.as_deref()).collect();
        let cluster_by_host = hosts.len() > 1;

        // Which node each vertex is drawn as.
        let mut node_of: Vec<usize> = Vec::with_capacity(vertices.len());
        let mut nodes: Vec<Node> = Vec::new();
        let collapse = vertices.len() > COLLAPSE_ABOVE;
        let mut outs: Vec<Vec<EdgeKey<'_>>> = vec![Vec::new(); vertices.len()];
        let mut ins: Vec<Vec<EdgeKey<'_>>> = vec![Vec::new(); vertices.len()];
        for e in &report.edges {
            let (f, t) = (by_world[&e.from], by_world[&e.to]);
            outs[f].push((
                e.to,
                kind_code(e.kind),
                &e.communicator,
                e.tag,
                e.any_source,
            ));
            ins[t].push((
                e.from,
                kind_code(e.kind),
                &e.communicator,
                e.tag,
                e.any_source,
            ));
        }
        let mut groups: HashMap<Signature<'_>, usize> = HashMap::new();
        for (i, v) in vertices.iter().enumerate() {
            let has_edges = !outs[i].is_empty() || !ins[i].is_empty();
            let group = if collapse && !v.on_cycle {
                let mut o = std::mem::take(&mut outs[i]);
                let mut n = std::mem::take(&mut ins[i]);
                o.sort_unstable();
                n.sort_unstable();
                let host = if cluster_by_host {
                    v.host.as_deref()
                } else {
                    None
                };
                let sig = (host, state_code(v.state.as_ref()), v.what.as_str(), o, n);
                match groups.get(&sig) {
                    Some(&g) => Some(g),
                    None => {
                        groups.insert(sig, nodes.len());
                        None
                    }
                }
            } else {
                None
            };
            let g = match group {
                Some(g) => g,
                None => {
                    nodes.push(Node {
                        ranks: Vec::new(),
                        unnamed: Vec::new(),
                        state: v.state.clone(),
                        what: v.what.clone(),
                        host: v.host.clone(),
                        on_cycle: v.on_cycle,
                        has_edges,
                    });
                    nodes.len() - 1
                }
            };
            if v.world >= 0 {
                nodes[g].ranks.push(v.world);
            } else {
                nodes[g].unnamed.push(v.label_rank.clone());
            }
            node_of.push(g);
        }
        let ranks_collapsed = vertices.len() - nodes.len();
        for n in &mut nodes {
            n.ranks.sort_unstable();
            n.ranks.dedup();
        }

        // Edges between nodes; the edges of collapsed ranks fold into one,
        // which says how many it stands for.
        let mut edges: Vec<DrawnEdge> = Vec::new();
        let mut edge_index: HashMap<DrawnEdgeKey<'_>, usize> = HashMap::new();
        for e in &report.edges {
            let (from, to) = (node_of[by_world[&e.from]], node_of[by_world[&e.to]]);
            let on_cycle = cycle_pairs.contains(&(e.from, e.to));
            let key = (
                from,
                to,
                kind_code(e.kind),
                e.communicator.as_str(),
                e.tag,
                e.any_source,
            );
            match edge_index.get(&key) {
                Some(&i) => {
                    edges[i].count += 1;
                    edges[i].on_cycle |= on_cycle;
                }
                None => {
                    edge_index.insert(key, edges.len());
                    edges.push(drawn(e, from, to, on_cycle));
                }
            }
        }

        let mut graph = Graph {
            nodes,
            edges,
            cluster_by_host,
            ranks_collapsed,
            nodes_left_out: 0,
            edges_left_out: 0,
            rests_on: rests_on(&report.basis),
        };
        graph.bound();
        graph
    }

    /// Leaves out what exceeds [`MAX_NODES`] and [`MAX_EDGES`]: the ranks
    /// and edges of cycles last, then those of chains, then lone ranks.
    fn bound(&mut self) {
        if self.nodes.len() > MAX_NODES {
            let mut order: Vec<usize> = (0..self.nodes.len()).collect();
            order.sort_by_key(|&i| {
                let n = &self.nodes[i];
                (!n.on_cycle, !n.has_edges, i)
            });
            let mut keep = vec![false; self.nodes.len()];
            for &i in order.iter().take(MAX_NODES) {
                keep[i] = true;
            }
            let mut new_index = vec![usize::MAX; self.nodes.len()];
            let mut kept = Vec::with_capacity(MAX_NODES);
            for (i, n) in std::mem::take(&mut self.nodes).into_iter().enumerate() {
                if keep[i] {
                    new_index[i] = kept.len();
                    kept.push(n);
                } else {
                    self.nodes_left_out += 1;
                }
            }
            self.nodes = kept;
            let before = self.edges.len();
            self.edges.retain_mut(|e| {
                e.from = new_index[e.from];
                e.to = new_index[e.to];
                e.from != usize::MAX && e.to != usize::MAX
            });
            self.edges_left_out += before - self.edges.len();
        }
        if self.edges.len() > MAX_EDGES {
            // Stable, so the report's order is kept within each class.
            self.edges.sort_by_key(|e| !e.on_cycle);
            self.edges_left_out += self.edges.len() - MAX_EDGES;
            self.edges.truncate(MAX_EDGES);
        }
    }

    fn emit(&self) -> String {
        let mut out = String::with_capacity(256 + 160 * (self.nodes.len() + self.edges.len()));
        out.push_str("digraph \"wait-for\" {\n");
        out.push_str(
            "  graph [fontname=\"Helvetica\", fontsize=12, nodesep=0.4, ranksep=0.7, \
             labelloc=b, labeljust=l, newrank=true];\n",
        );
        out.push_str(
            "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", \
             fontsize=14, margin=\"0.15,0.08\"];\n",
        );
        out.push_str("  edge [fontname=\"Helvetica\", fontsize=11, color=\"#4b5563\", fontcolor=\"#374151\"];\n");
        let _ = writeln!(out, "  label={};", self.legend());

        if self.cluster_by_host {
            let mut by_host: BTreeMap<Option<&str>, Vec<usize>> = BTreeMap::new();
            for (i, n) in self.nodes.iter().enumerate() {
                by_host.entry(n.host.as_deref()).or_default().push(i);
            }
            for (host, members) in &by_host {
                let indent = match host {
                    Some(h) => {
                        let _ = writeln!(
                            out,
                            "  subgraph {} {{\n    label={}; style=\"rounded,dashed\"; \
                             color=\"#9ca3af\"; fontcolor=\"#4b5563\";",
                            quote(&format!("cluster_{h}")),
                            quote(&format!("host {h}"))
                        );
                        "    "
                    }
                    None => "  ",
                };
                // Graphviz (2.43 at least) lays out the nodes of a cluster
                // right to left in the order they come; given backwards,
                // they read in rank order.
                let mut order = members.clone();
                if host.is_some() {
                    order.reverse();
                }
                for i in order {
                    self.emit_node(&mut out, indent, i);
                }
                if host.is_some() {
                    out.push_str("  }\n");
                }
            }
        } else {
            for i in 0..self.nodes.len() {
                self.emit_node(&mut out, "  ", i);
            }
        }

        for e in &self.edges {
            self.emit_edge(&mut out, e);
        }
        out.push_str("}\n");
        out
    }

    fn emit_node(&self, out: &mut String, indent: &str, i: usize) {
        let n = &self.nodes[i];
        let count = n.ranks.len() + n.unnamed.len();
        let head = if count == 1 {
            match n.ranks.first() {
                Some(r) => format!("rank {r}"),
                None => n.unnamed[0].clone(),
            }
        } else {
            let mut set = rank_set(&n.ranks);
            if set.chars().count() > MAX_TEXT {
                set = truncate(&set, MAX_TEXT);
            }
            if n.unnamed.is_empty() {
                format!("ranks {set} ({count})")
            } else if n.ranks.is_empty() {
                format!("{count} ranks")
            } else {
                format!("ranks {set} and {} more ({count})", n.unnamed.len())
            }
        };
        let label = format!("{head}\n{}", n.what);
        let (fill, border) = if n.on_cycle {
            CYCLE_COLOURS
        } else {
            state_colours(n.state.as_ref())
        };
        let mut style = "rounded,filled";
        let mut extra = String::new();
        if n.on_cycle {
            extra.push_str(", penwidth=3, fontname=\"Helvetica-Bold\"");
        } else {
            match n.state {
                Some(RankState::OutsideMpi) => extra.push_str(", penwidth=2"),
                Some(RankState::Unreadable) => {
                    style = "rounded,filled,dashed";
                    extra.push_str(", fontcolor=\"#6b7280\"");
                }
                None => style = "rounded,dotted",
                _ => {}
            }
        }
        if count > 1 {
            // A stack of pages: several ranks behind one box.
            extra.push_str(", peripheries=2");
        }
        let _ = writeln!(
            out,
            "{indent}n{i} [label={}, fillcolor=\"{fill}\", color=\"{border}\", style=\"{style}\"{extra}];",
            quote(&label)
        );
    }

    fn emit_edge(&self, out: &mut String, e: &DrawnEdge) {
        let tag = match e.tag {
            Some(t) => t.to_string(),
            None => "any".to_string(),
        };
        let mut label = String::new();
        if e.count > 1 {
            let _ = write!(label, "{}× ", e.count);
        }
        label.push_str(kind_name(e.kind));
        if e.any_source {
            label.push_str(" (any source)");
        }
        if e.kind == OperationKind::Collective {
            // A collective's wait has no tag, and its communicator was not
            // read: the kind says it all.
            label.push_str(" (from the stack)");
        } else {
            let _ = write!(label, ", tag {tag}\n{}", clean(&e.communicator));
        }
        let mut attrs = format!("label={}", quote(&label));
        if e.on_cycle {
            attrs.push_str(
                ", color=\"#dc2626\", fontcolor=\"#b91c1c\", penwidth=3, arrowsize=1.2, \
                 style=bold, fontname=\"Helvetica-Bold\"",
            );
        } else if e.any_source {
            attrs.push_str(", style=dashed");
        }
        if e.on_cycle && e.any_source {
            attrs.push_str(", style=\"bold,dashed\"");
        }
        let _ = writeln!(out, "  n{} -> n{} [{attrs}];", e.from, e.to);
    }

    /// The legend, as a Graphviz HTML-like label of the whole graph (so it
    /// is no node of the graph: the nodes stay one per rank). Its text is
    /// all written here; nothing from the target goes in.
    fn legend(&self) -> String {
        let cell = |fill: &str, border: &str, text: &str| {
            format!("<td bgcolor=\"{fill}\" color=\"{border}\">{text}</td>")
        };
        // One column of rows, each its own table, so that the long lines
        // of text do not stretch the colour swatches.
        let mut l = String::from(
            "<<table border=\"0\" cellborder=\"0\" cellspacing=\"2\" cellpadding=\"0\">\
             <tr><td align=\"left\"><table border=\"0\" cellborder=\"1\" cellspacing=\"4\" \
             cellpadding=\"4\"><tr>",
        );
        l.push_str(&cell(
            CYCLE_COLOURS.0,
            CYCLE_COLOURS.1,
            "<b>deadlocked, on a cycle</b>",
        ));
        for s in [
            RankState::InMpi,
            RankState::OutsideMpi,
            RankState::Unknown,
            RankState::Unreadable,
            RankState::Exited,
        ] {
            let (fill, border) = state_colours(Some(&s));
            l.push_str(&cell(fill, border, state_name(Some(&s))));
        }
        l.push_str("</tr></table></td></tr>");
        let mut lines = vec![
            "A → B: rank A waits for rank B.".to_string(),
            format!("Rests on: {}.", self.rests_on),
            "<font color=\"#dc2626\"><b>Red, bold</b></font>: an edge of a deadlock cycle. \
             Dashed: a receive from any source (it waits for any one of them)."
                .to_string(),
        ];
        if self.ranks_collapsed > 0 {
            lines.push(format!(
                "A double box stands for several ranks alike ({} ranks merged).",
                self.ranks_collapsed
            ));
        }
        if self.nodes_left_out > 0 || self.edges_left_out > 0 {
            lines.push(format!(
                "Not drawn, to keep the graph readable: {} nodes and {} edges.",
                self.nodes_left_out, self.edges_left_out
            ));
        }
        for line in lines {
            let _ = write!(l, "<tr><td align=\"left\">{line}</td></tr>");
        }
        l.push_str("</table>>");
        l
    }
}

fn drawn(e: &Edge, from: usize, to: usize, on_cycle: bool) -> DrawnEdge {
    DrawnEdge {
        from,
        to,
        kind: e.kind,
        communicator: e.communicator.clone(),
        tag: e.tag,
        any_source: e.any_source,
        on_cycle,
        count: 1,
    }
}

/// `queues read on 3 of 4 ranks, stacks on 4`, or the same said to be
/// from stacks alone.
fn rests_on(b: &crate::model::JobBasis) -> String {
    let said = format!(
        "queues read on {} of {} ranks, stacks on {}",
        b.queues_read, b.ranks, b.stacks_read
    );
    if b.stacks_alone {
        format!("stacks alone ({said})")
    } else {
        said
    }
}

/// Text from the target made fit for one label line: control characters
/// (newlines included) become spaces, so a name cannot fake extra lines,
/// and long names are cut, so one cannot blow up the layout.
fn clean(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    truncate(&s, MAX_TEXT)
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// A DOT double-quoted string that shows `s` as it is. Backslashes and
/// quotes are escaped for the DOT lexer and for Graphviz's label escapes
/// (`\N`, `\G`, `\l`...); `&` becomes `&amp;` because Graphviz decodes HTML
/// entities in plain labels too; newlines become `\n`, a line break.
pub(crate) fn quote(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '\\' => q.push_str("\\\\"),
            '"' => q.push_str("\\\""),
            '&' => q.push_str("&amp;"),
            '\n' => q.push_str("\\n"),
            c if c.is_control() => q.push(' '),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_hostile_text_inside_the_string() {
        assert_eq!(quote(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(quote("x\ny\r"), "\"x\\ny \"");
        assert_eq!(quote("&lt;"), "\"&amp;lt;\"");
        assert_eq!(clean("f\n\"g"), "f \"g");
        assert_eq!(clean(&"x".repeat(100)).chars().count(), MAX_TEXT);
    }
}
