//! A handle view in one line, for a debugger's `print` of a handle
//! variable: `MPI_COMM_WORLD size 4, rank 0`. The full view is the
//! crates' own text (`mpidd handle`'s); this line names the object and
//! the two or three facts a person looks for first, and says what was not
//! available rather than guess.

use mpihandles::{Availability, Details, HandleRef, HandleView, ObjectState, Peer, RequestKind};

/// The line for `view`.
pub fn summary(view: &HandleView) -> String {
    let name = view.predefined_name.clone().or_else(|| own_name(view));
    let mut line = match (&name, &view.details) {
        (Some(name), _) => name.clone(),
        (None, _) => format!("{} {}", view.kind.c_type(), c_handle_text(view)),
    };
    let facts = facts(view);
    if !facts.is_empty() {
        line.push(' ');
        line.push_str(&facts.join(", "));
    }
    match view.state.value() {
        Some(ObjectState::Live) | None => {}
        Some(state) => line.push_str(&format!(" ({})", state_text(state))),
    }
    if view.freed_by_application.value() == Some(&true) {
        line.push_str(" (freed by the application)");
    }
    line
}

/// The name the object carries, where its kind has one.
fn own_name(view: &HandleView) -> Option<String> {
    let name = match &view.details {
        Details::Comm(c) => c.name.value(),
        Details::Datatype(d) => d.name.value(),
        _ => None,
    }?;
    (!name.is_empty()).then(|| name.clone())
}

fn c_handle_text(view: &HandleView) -> String {
    match view.c_handle.value() {
        Some(mpihandles::CHandle::Int(v)) => format!("{:#x}", *v as u32),
        Some(mpihandles::CHandle::Pointer(a)) => format!("{a}"),
        None => "(value not available)".to_string(),
    }
}

fn state_text(state: &ObjectState) -> &'static str {
    match state {
        ObjectState::Live => "live",
        ObjectState::Freed => "freed by the implementation: stale",
    }
}

/// `what value`, or `what not available` when the implementation does not
/// keep it.
fn fact<T>(what: &str, value: &Availability<T>, show: impl Fn(&T) -> String) -> String {
    match value {
        Availability::Value(v) => format!("{what} {}", show(v)),
        Availability::NotAvailable { .. } => format!("{what} not available"),
    }
}

fn facts(view: &HandleView) -> Vec<String> {
    match &view.details {
        Details::Comm(c) => vec![
            fact("size", &c.size, |v| v.to_string()),
            fact("rank", &c.rank, |v| v.to_string()),
        ],
        Details::Group(g) => vec![
            fact("size", &g.size, |v| v.to_string()),
            fact("rank", &g.rank, |v| match v {
                Some(r) => r.to_string(),
                None => "none (not a member)".to_string(),
            }),
        ],
        Details::Datatype(d) => vec![
            fact("size", &d.size, |v| v.to_string()),
            fact("extent", &d.extent, |v| v.to_string()),
        ],
        Details::Op(o) => vec![fact("kind", &o.op_kind, |v| v.clone())],
        Details::Request(r) => {
            let mut out = vec![fact("", &r.request_kind, request_kind_text)
                .trim_start()
                .to_string()];
            if let Availability::Value(peer) = &r.peer {
                out.push(match peer {
                    Peer::AnySource => "peer MPI_ANY_SOURCE".to_string(),
                    Peer::ProcNull => "peer MPI_PROC_NULL".to_string(),
                    Peer::Rank(n) => format!("peer {n}"),
                });
            }
            if let Availability::Value(tag) = &r.tag {
                out.push(match tag {
                    Some(t) => format!("tag {t}"),
                    None => "tag MPI_ANY_TAG".to_string(),
                });
            }
            if let Availability::Value(Some(comm)) = &r.communicator {
                out.push(format!("on {}", ref_text(comm)));
            }
            if let Availability::Value(done) = &r.complete {
                out.push(if *done { "complete" } else { "pending" }.to_string());
            }
            out
        }
        Details::Undecoded { reason } => vec![format!("(not decoded: {reason})")],
        _ => Vec::new(),
    }
}

fn request_kind_text(kind: &RequestKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
        .unwrap_or_else(|| format!("{kind:?}"))
}

/// Another handle, by its names, else its value.
fn ref_text(r: &HandleRef) -> String {
    match (&r.predefined_name, &r.name) {
        (Some(p), _) => p.clone(),
        (None, Some(n)) => n.clone(),
        (None, None) => match r.c_handle {
            mpihandles::CHandle::Int(v) => format!("{:#x}", v as u32),
            mpihandles::CHandle::Pointer(a) => format!("{a}"),
        },
    }
}
