//! The text form of a handle view or a status, as `mpidd handle` prints
//! it: what a debugger shows when it has no view of its own.
//!
//! It is drawn from the view's serde form, the same one the JSON output
//! has, so a field added to the model shows up in both: one `key: value`
//! line per field in the model's order, with underscores in keys as
//! spaces and nested records indented by two spaces. A field the
//! implementation does not keep reads `not available: REASON`; target
//! addresses are in hex; a C handle reads `0x44000000 (1140850688)` for an
//! int and in hex for a pointer; a reference to another handle is its
//! value and its names; a list of plain values, and a record of at most
//! four plain values, fit on one line; longer lists have one `- ` item a
//! line.

use std::fmt::{self, Write};

use serde::Serialize;
use serde_json::Value;

use crate::model::{HandleView, StatusView};

/// The text form of a view: see the module's description.
///
/// ```
/// use mpihandles::{Availability, Details, HandleKind, HandleView, ObjectState};
/// use mpihandles::{CHandle, GroupDetails};
/// use mpidd_types::TargetAddr;
///
/// let view = HandleView {
///     implementation: "MPICH 4.0.2".into(),
///     kind: HandleKind::Group,
///     c_handle: Availability::Value(CHandle::Int(0x4800_0000)),
///     fortran_index: Availability::Value(0x4800_0000),
///     predefined: true,
///     predefined_name: Some("MPI_GROUP_EMPTY".into()),
///     object_address: Availability::Value(TargetAddr(0x1000)),
///     state: Availability::Value(ObjectState::Live),
///     freed_by_application: Availability::not_available("not kept"),
///     freed_by_implementation: Availability::Value(false),
///     reference_count: Availability::Value(1),
///     encoding: None,
///     details: Details::Group(GroupDetails {
///         size: Availability::Value(0),
///         rank: Availability::Value(None),
///         world_ranks: Availability::Value(vec![]),
///         communicators: Availability::Value(vec![]),
///     }),
///     notes: vec![],
/// };
/// assert_eq!(
///     view.to_string(),
///     "implementation: MPICH 4.0.2\n\
///      kind: group\n\
///      c handle: 0x48000000 (1207959552)\n\
///      fortran index: 1207959552\n\
///      predefined: true\n\
///      predefined name: MPI_GROUP_EMPTY\n\
///      object address: 0x1000\n\
///      state: live\n\
///      freed by application: not available: not kept\n\
///      freed by implementation: false\n\
///      reference count: 1\n\
///      details:\n\
///      \x20 kind: group\n\
///      \x20 size: 0\n\
///      \x20 rank: none\n\
///      \x20 world ranks: []\n\
///      \x20 communicators: []\n"
/// );
/// ```
impl fmt::Display for HandleView {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        render_serialized(out, self)
    }
}

/// The text form of a status, as a view's: see the module's description.
///
/// ```
/// use mpihandles::{Availability, StatusView};
/// use mpidd_types::TargetAddr;
///
/// let status = StatusView {
///     address: Some(TargetAddr(0x5000)),
///     source: 2,
///     tag: 57,
///     error: 0,
///     count_bytes: Availability::Value(12),
///     cancelled: Availability::Value(false),
///     elements: Availability::not_available("no datatype given"),
/// };
/// assert_eq!(
///     status.to_string(),
///     "address: 0x5000\nsource: 2\ntag: 57\nerror: 0\ncount bytes: 12\n\
///      cancelled: false\nelements: not available: no datatype given\n"
/// );
/// ```
impl fmt::Display for StatusView {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        render_serialized(out, self)
    }
}

/// Renders any model value through its serde form. The model's types
/// always serialize (string keys, no failing `Serialize`), so an error here
/// is only the formatter's.
fn render_serialized(out: &mut impl Write, shown: &impl Serialize) -> fmt::Result {
    let value = serde_json::to_value(shown).map_err(|_| fmt::Error)?;
    render(out, &value, 0)
}

/// One `key: value` line per field, nested fields indented.
fn render(s: &mut impl Write, value: &Value, depth: usize) -> fmt::Result {
    let Value::Object(map) = value else {
        return writeln!(s, "{}{}", "  ".repeat(depth), scalar(value));
    };
    for (key, v) in map {
        let label = key.replace('_', " ");
        let pad = "  ".repeat(depth);
        if ADDRESSES.contains(&key.as_str()) {
            if let Some(a) = unwrap_value(v).as_u64() {
                writeln!(s, "{pad}{label}: {a:#x}")?;
                continue;
            }
        }
        if let Some(text) = inline(v) {
            writeln!(s, "{pad}{label}: {text}")?;
            continue;
        }
        let v = unwrap_value(v);
        writeln!(s, "{pad}{label}:")?;
        match v {
            Value::Array(items) => {
                for item in items {
                    match inline(item) {
                        Some(text) => writeln!(s, "{pad}  - {text}")?,
                        None => {
                            writeln!(s, "{pad}  -")?;
                            render(s, unwrap_value(item), depth + 2)?;
                        }
                    }
                }
            }
            _ => render(s, v, depth + 1)?,
        }
    }
    Ok(())
}

/// Fields that hold target addresses, shown in hex.
const ADDRESSES: &[&str] = &[
    "object_address",
    "address",
    "base",
    "user_function",
    "query_fn",
    "free_fn",
    "cancel_fn",
    "extra_state",
];

/// `{"value": x}` is x.
fn unwrap_value(v: &Value) -> &Value {
    match v {
        Value::Object(m) if m.len() == 1 && m.contains_key("value") => &m["value"],
        _ => v,
    }
}

/// A one-line form, when the value has one.
fn inline(v: &Value) -> Option<String> {
    if let Value::Object(m) = v {
        if let Some(reason) = m.get("not_available").and_then(|n| n.get("reason")) {
            return Some(format!("not available: {}", scalar(reason)));
        }
        if m.len() == 1 && m.contains_key("value") {
            return inline(&m["value"]);
        }
        // A handle reference: its value, then its names.
        if m.contains_key("c_handle") && m.contains_key("kind") && !m.contains_key("details") {
            let handle = inline(&m["c_handle"]).unwrap_or_default();
            let names: Vec<String> = ["predefined_name", "name"]
                .iter()
                .filter_map(|k| m.get(*k).map(scalar))
                .collect();
            return Some(if names.is_empty() {
                handle
            } else {
                format!("{handle} ({})", names.join(", "))
            });
        }
        // A C handle: {"int": n} or {"pointer": p}.
        if m.len() == 1 {
            if let Some(n) = m.get("int").and_then(Value::as_i64) {
                return Some(format!("{:#010x} ({n})", n as u32));
            }
            if let Some(p) = m.get("pointer").and_then(Value::as_u64) {
                return Some(format!("{p:#x}"));
            }
        }
        // A small record of plain values (a key=value pair, a type-map
        // run, a hole, an attribute) fits on one line.
        if m.values().all(|v| inline(v).is_some()) && m.len() <= 4 {
            if let (Some(k), Some(v), 2) = (m.get("key"), m.get("value"), m.len()) {
                return Some(format!("{}={}", scalar(k), scalar(v)));
            }
            // An attribute's key is a handle and its value, for the C
            // binding, a pointer.
            let attribute = m.contains_key("keyval");
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| {
                    let text = match (attribute, k.as_str(), v.as_i64()) {
                        (true, "keyval", Some(n)) => format!("{:#010x}", n as u32),
                        (true, "value", Some(n)) => format!("{:#x}", n as u64),
                        _ => inline(v).unwrap_or_default(),
                    };
                    format!("{}: {text}", k.replace('_', " "))
                })
                .collect();
            return Some(format!("{{{}}}", parts.join(", ")));
        }
        return None;
    }
    if let Value::Array(items) = v {
        if items.iter().all(|i| !i.is_object() && !i.is_array()) {
            let parts: Vec<String> = items.iter().map(scalar).collect();
            return Some(format!("[{}]", parts.join(", ")));
        }
        if items.is_empty() {
            return Some("[]".to_string());
        }
        return None;
    }
    Some(scalar(v))
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "none".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use mpidd_types::TargetAddr;
    use serde_json::json;

    use super::render;
    use crate::model::{
        Attribute, Availability, CHandle, CommDetails, CommKind, Details, HandleEncoding,
        HandleKind, HandleRef, HandleView, ObjectState, Topology,
    };

    fn na<T>(reason: &str) -> Availability<T> {
        Availability::not_available(reason)
    }

    fn cart() -> HandleView {
        HandleView {
            implementation: "Open MPI 4.1.4 (ob1)".into(),
            kind: HandleKind::Comm,
            c_handle: Availability::Value(CHandle::Pointer(TargetAddr(0x55d0))),
            fortran_index: Availability::Value(3),
            predefined: false,
            predefined_name: None,
            object_address: Availability::Value(TargetAddr(0x55d0)),
            state: Availability::Value(ObjectState::Freed),
            freed_by_application: Availability::Value(true),
            freed_by_implementation: na("no such mark"),
            reference_count: Availability::Value(2),
            encoding: Some(HandleEncoding {
                storage: "direct".into(),
                object_kind: "MPIR_COMM".into(),
                index: Some(3),
                pool: None,
                block: None,
                block_index: None,
            }),
            details: Details::Comm(CommDetails {
                name: Availability::Value("mpidd_cart".into()),
                rank: Availability::Value(1),
                size: Availability::Value(4),
                world_rank: Availability::Value(2),
                comm_kind: Availability::Value(CommKind::Intracommunicator),
                remote_size: na("intra"),
                local_world_ranks: Availability::Value(vec![3, 2, 1, 0]),
                remote_world_ranks: na("intra"),
                local_group: Availability::Value(Some(HandleRef {
                    kind: HandleKind::Group,
                    c_handle: CHandle::Int(-2013265920),
                    predefined_name: None,
                    name: None,
                })),
                remote_group: Availability::Value(None),
                topology: Availability::Value(Topology::Cartesian {
                    ndims: 2,
                    dims: vec![2, 2],
                    periods: vec![true, false],
                    coords: vec![0, 1],
                }),
                errhandler: Availability::Value(Some(HandleRef {
                    kind: HandleKind::Errhandler,
                    c_handle: CHandle::Pointer(TargetAddr(0x10)),
                    predefined_name: Some("MPI_ERRORS_ARE_FATAL".into()),
                    name: Some("fatal".into()),
                })),
                attributes: Availability::Value(vec![Attribute {
                    keyval: -1811939328,
                    value: 0x7fff,
                    value_type: Availability::Value("pointer".into()),
                    internal: false,
                }]),
                requests: Availability::Value(vec![]),
                windows: Availability::Value(vec![]),
                files: na("no files"),
                context_id: Availability::Value(16),
                recv_context_id: Availability::Value(17),
            }),
            notes: vec!["read from a core".into(), "stale".into()],
        }
    }

    #[test]
    fn a_communicator_view_shows_every_field_in_model_order() {
        let expected = "\
implementation: Open MPI 4.1.4 (ob1)
kind: comm
c handle: 0x55d0
fortran index: 3
predefined: false
object address: 0x55d0
state: freed
freed by application: true
freed by implementation: not available: no such mark
reference count: 2
encoding: {storage: direct, object kind: MPIR_COMM, index: 3}
details:
  kind: comm
  name: mpidd_cart
  rank: 1
  size: 4
  world rank: 2
  comm kind: intracommunicator
  remote size: not available: intra
  local world ranks: [3, 2, 1, 0]
  remote world ranks: not available: intra
  local group: 0x88000000 (-2013265920)
  remote group: none
  topology:
    type: cartesian
    ndims: 2
    dims: [2, 2]
    periods: [true, false]
    coords: [0, 1]
  errhandler: 0x10 (MPI_ERRORS_ARE_FATAL, fatal)
  attributes:
    - {keyval: 0x94000000, value: 0x7fff, value type: pointer, internal: false}
  requests: []
  windows: []
  files: not available: no files
  context id: 16
  recv context id: 17
notes: [read from a core, stale]
";
        assert_eq!(cart().to_string(), expected);
    }

    #[test]
    fn long_records_in_lists_are_indented_under_a_dash() {
        let value = json!({
            "entries": [
                {"a": 1, "b": "x", "c": null, "d": true, "e": -5},
                {"key": "cb_buffer_size", "value": "65536"},
            ],
            "base": {"value": 4096},
            "size": {"value": 64},
        });
        let mut text = String::new();
        render(&mut text, &value, 0).unwrap();
        assert_eq!(
            text,
            "entries:\n  -\n    a: 1\n    b: x\n    c: none\n    d: true\n    e: -5\n  \
             - cb_buffer_size=65536\nbase: 0x1000\nsize: 64\n"
        );
    }
}
