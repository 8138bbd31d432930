//! The layouts of Open MPI's handle objects the `ompi_handles` target
//! starts from and the fuzzer bends: the synthetic layout of
//! [`mpihandles::SyntheticOmpi::layouts`] for the process's pointer width
//! (every question of [`mpihandles::OMPI_HANDLE_LAYOUT`] answered), as a
//! list of entries (each type's size, each member's offset and width, each
//! enumerator's value) that the input changes or removes.

use std::sync::OnceLock;

use mpihandles::{LayoutTable, SyntheticOmpi};
use serde_json::Value;

use crate::bent::{encode_overrides, parse_overrides};
pub use crate::bent::{Values, MAX_OVERRIDES};
use crate::cursor::Cursor;

/// One entry of the layout: where it is in the table's JSON form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A type's size.
    Size(String),
    /// A member's offset and width.
    Member(String, String),
    /// The value of an enumeration's `n`th enumerator.
    Enumerator(String, usize),
}

/// The default table's JSON form for pointers of `word` bytes, made
/// once per width: every input starts from it.
fn json(word: u64) -> &'static Value {
    static FOUR: OnceLock<Value> = OnceLock::new();
    static EIGHT: OnceLock<Value> = OnceLock::new();
    let make =
        || serde_json::to_value(SyntheticOmpi::layouts(word)).expect("a table is plain data");
    if word == 4 {
        FOUR.get_or_init(make)
    } else {
        EIGHT.get_or_init(make)
    }
}

/// Every entry, in the table's order (the same for every width).
pub fn entries() -> &'static [Entry] {
    static ENTRIES: OnceLock<Vec<Entry>> = OnceLock::new();
    ENTRIES.get_or_init(make_entries)
}

fn make_entries() -> Vec<Entry> {
    let mut out = Vec::new();
    let Value::Object(types) = json(8) else {
        return out;
    };
    for (ty, t) in types {
        if t.get("size").is_some() {
            out.push(Entry::Size(ty.clone()));
        }
        if let Some(Value::Object(members)) = t.get("members") {
            for path in members.keys() {
                out.push(Entry::Member(ty.clone(), path.clone()));
            }
        }
        if let Some(Value::Array(list)) = t.get("enumerators") {
            for i in 0..list.len() {
                out.push(Entry::Enumerator(ty.clone(), i));
            }
        }
    }
    out
}

/// The values of `table`'s entries (`None` where it lacks one).
pub fn values_of(table: &LayoutTable) -> Values {
    let json = serde_json::to_value(table).expect("a table is plain data");
    entries()
        .iter()
        .map(|e| match e {
            Entry::Size(t) => Some((json[t]["size"].as_u64()?, 0)),
            Entry::Member(t, m) => {
                let m = &json[t]["members"][m];
                Some((m["offset"].as_u64()?, m["size"].as_u64()?))
            }
            Entry::Enumerator(t, i) => Some((json[t]["enumerators"][*i][1].as_i64()? as u64, 0)),
        })
        .collect()
}

/// The default values for pointers of `word` bytes.
pub fn defaults(word: u64) -> Values {
    static FOUR: OnceLock<Values> = OnceLock::new();
    static EIGHT: OnceLock<Values> = OnceLock::new();
    let make = || values_of(&SyntheticOmpi::layouts(word));
    if word == 4 {
        FOUR.get_or_init(make).clone()
    } else {
        EIGHT.get_or_init(make).clone()
    }
}

/// Reads the overrides to the defaults for pointers of `word` bytes, in
/// the format of the other bent layouts ([`parse_overrides`]; a type
/// without a size is removed with its members).
pub fn parse(c: &mut Cursor<'_>, word: u64) -> Values {
    parse_overrides(c, defaults(word))
}

/// The table of `values` (for pointers of `word` bytes).
pub fn table(values: &[Option<(u64, u64)>], word: u64) -> LayoutTable {
    let mut json = json(word).clone();
    for (e, v) in entries().iter().zip(values) {
        match (e, v) {
            (Entry::Size(t), None) => {
                if let Some(types) = json.as_object_mut() {
                    types.remove(t);
                }
            }
            (Entry::Size(t), Some((size, _))) => {
                if json.get(t).is_some() {
                    json[t]["size"] = (*size).into();
                }
            }
            (Entry::Member(t, m), None) => {
                if let Some(members) = json
                    .get_mut(t)
                    .and_then(|t| t.get_mut("members"))
                    .and_then(Value::as_object_mut)
                {
                    members.remove(m);
                }
            }
            (Entry::Member(t, m), Some((offset, size))) => {
                if json.get(t).is_some() {
                    json[t]["members"][m]["offset"] = (*offset).into();
                    json[t]["members"][m]["size"] = (*size).into();
                }
            }
            (Entry::Enumerator(t, i), v) => {
                if let Some(e) = json
                    .get_mut(t)
                    .and_then(|t| t.get_mut("enumerators"))
                    .and_then(|l| l.get_mut(*i))
                {
                    e[1] = match v {
                        Some((value, _)) => (*value as i64).into(),
                        // A removed enumerator keeps its name under a
                        // value no decoder looks for.
                        None => i64::MIN.into(),
                    };
                }
            }
        }
    }
    serde_json::from_value(json).unwrap_or_default()
}

/// Writes overrides that turn the defaults for `word` into `values`,
/// for seeds.
pub fn encode(values: &[Option<(u64, u64)>], word: u64, out: &mut Vec<u8>) {
    encode_overrides(&defaults(word), values, out)
}
