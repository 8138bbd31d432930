//! Open MPI's base classes as a debugger reads them (libopen-pal): an
//! object's class (`opal_object_t.obj_class`, an `opal_class_t` whose
//! `cls_name` is the C type's name and `cls_parent` its base class), the
//! pointer arrays the Fortran handles index (`opal_pointer_array_t`), lists
//! (`opal_list_t`), hash tables (`opal_hash_table_t`, where attributes
//! live) and info lists (`opal_info_t` of `opal_info_entry_t`).
//!
//! Every count from the target is checked against [`Limits`] before
//! anything is allocated, every list walk is bounded and cycle-checked,
//! and a class chain ends after [`MAX_CLASS_DEPTH`] classes.
//!
//! [`Limits`]: mpidd_read::Limits

use std::collections::HashSet;

use mpidd_read::ReadError;
use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Attribute, Availability, InfoEntry};
use crate::ompi::constants::LAST_PREDEFINED_KEY;
use crate::ompi::layout::OmpiLayout;
use crate::target::{at, Ctx, Rec};

/// Most classes followed from an object to `opal_object_t`: Open MPI's
/// deepest (a request of ob1) has five.
pub(crate) const MAX_CLASS_DEPTH: usize = 16;
/// Most bytes of a class name read: Open MPI's are C type names.
const MAX_CLASS_NAME: usize = 128;

/// The class pointer and reference count of the object at `addr`.
pub(crate) fn header(
    ctx: &Ctx<'_>,
    l: &OmpiLayout,
    addr: TargetAddr,
) -> Result<(TargetAddr, i64), HandleError> {
    let o = &l.object;
    let end = (o.class.offset + o.class.size).max(o.refcount.offset + o.refcount.size);
    let r = ctx.record_sized(addr, end, "opal_object_t")?;
    Ok((r.ptr(o.class)?, r.int(o.refcount)?))
}

/// The names of `class` and its ancestors.
pub(crate) fn class_chain(
    ctx: &Ctx<'_>,
    l: &OmpiLayout,
    class: TargetAddr,
) -> Result<Vec<String>, HandleError> {
    let o = &l.object;
    let mut names = Vec::new();
    let mut seen = HashSet::new();
    let mut next = class;
    while !next.is_null() {
        if names.len() >= MAX_CLASS_DEPTH {
            return Err(ReadError::LimitExceeded {
                what: "opal_class_t.cls_parent chain",
                addr: class,
                count: names.len() as u64,
                max: MAX_CLASS_DEPTH as u64,
                limit: "MAX_CLASS_DEPTH",
            }
            .into());
        }
        if !seen.insert(next) {
            return Err(ReadError::Cycle {
                what: "opal_class_t.cls_parent",
                addr: next,
            }
            .into());
        }
        let r = ctx.record_sized(next, o.class_size, "opal_class_t")?;
        let name_at = r.ptr(o.cls_name)?;
        let raw = ctx
            .mem
            .read_c_string(name_at, MAX_CLASS_NAME.min(ctx.limits.max_string_len))?;
        names.push(String::from_utf8_lossy(&raw).into_owned());
        next = r.ptr(o.cls_parent)?;
    }
    Ok(names)
}

/// An `opal_pointer_array_t`: its slots.
pub(crate) struct PointerArray {
    pub(crate) addr: TargetAddr,
    pub(crate) size: u64,
    pub(crate) slots: TargetAddr,
}

impl PointerArray {
    /// The array at `addr` (its header only).
    pub(crate) fn at(
        ctx: &Ctx<'_>,
        l: &OmpiLayout,
        addr: TargetAddr,
        what: &'static str,
    ) -> Result<PointerArray, HandleError> {
        let r = ctx.record_sized(addr, l.opal.pa_record, what)?;
        let size = ctx.count(r.int(l.opal.pa_size)?, addr, what)?;
        Ok(PointerArray {
            addr,
            size,
            slots: r.ptr(l.opal.pa_addr)?,
        })
    }

    /// Slot `index`, or an error saying it is out of range.
    pub(crate) fn get(
        &self,
        ctx: &Ctx<'_>,
        index: u64,
        what: &'static str,
    ) -> Result<TargetAddr, HandleError> {
        if index >= self.size {
            return Err(HandleError::Unsupported(format!(
                "index {index} is past the {} slots of {what} at {}",
                self.size, self.addr
            )));
        }
        let word = ctx.word();
        Ok(ctx.pointer(at(self.slots, index.wrapping_mul(word)), what)?)
    }

    /// Every non-NULL slot, with its index.
    pub(crate) fn all(
        &self,
        ctx: &Ctx<'_>,
        what: &'static str,
    ) -> Result<Vec<(u64, TargetAddr)>, HandleError> {
        let word = ctx.word();
        let len = self
            .size
            .checked_mul(word)
            .ok_or(ReadError::AddressOverflow {
                what,
                addr: self.slots,
                len: u64::MAX,
            })?;
        let raw = ctx.bytes(self.slots, len, what)?;
        Ok(raw
            .chunks_exact(word as usize)
            .enumerate()
            .filter_map(|(i, c)| {
                let p = crate::target::unsigned(c, ctx.order());
                (p != 0).then_some((i as u64, TargetAddr(p)))
            })
            .collect())
    }
}

/// The items of the `opal_list_t` at `list`, in order: bounded by
/// [`Limits::max_list_len`](mpidd_read::Limits::max_list_len), a loop is
/// an error.
pub(crate) fn list_items(
    ctx: &Ctx<'_>,
    l: &OmpiLayout,
    list: TargetAddr,
    what: &'static str,
) -> Result<Vec<TargetAddr>, HandleError> {
    let sentinel = at(list, l.opal.list_sentinel.offset);
    let next_of = |item: TargetAddr| ctx.pointer(at(item, l.opal.item_next.offset), what);
    let mut out = Vec::new();
    ctx.walk_list(next_of(sentinel)?, sentinel, what, what, |node| {
        out.push(node);
        Ok(next_of(node)?)
    })?;
    Ok(out)
}

/// The key=value pairs of the `opal_info_t` at `info`, in the order they
/// were set.
pub(crate) fn info_entries(
    ctx: &Ctx<'_>,
    l: &OmpiLayout,
    info: TargetAddr,
) -> Result<Vec<InfoEntry>, HandleError> {
    let o = &l.opal;
    list_items(ctx, l, at(info, o.info_list.offset), "opal_info_t entries")?
        .into_iter()
        .map(|item| {
            let r = ctx.record_sized(item, o.ie_size, "opal_info_entry_t")?;
            Ok(match o.cstring_text {
                Some(text) => InfoEntry {
                    key: ctx.string(at(r.ptr(o.ie_key)?, text))?,
                    value: ctx.string(at(r.ptr(o.ie_value)?, text))?,
                },
                None => InfoEntry {
                    key: r.chars(o.ie_key)?,
                    value: ctx.string(r.ptr(o.ie_value)?)?,
                },
            })
        })
        .collect()
}

/// The info pairs of an object that keeps an `opal_info_t *` (an
/// `opal_infosubscriber_t`'s `s_info`) in `member` of `r`: none when the
/// pointer is NULL.
pub(crate) fn subscriber_info(
    ctx: &Ctx<'_>,
    l: &OmpiLayout,
    r: &Rec,
    member: mpidd_read::Member,
) -> Availability<Vec<InfoEntry>> {
    (|| -> Result<Vec<InfoEntry>, HandleError> {
        let info = r.ptr(member)?;
        if info.is_null() {
            return Ok(Vec::new());
        }
        info_entries(ctx, l, info)
    })()
    .into()
}

/// The valid (key, value) pairs of the `opal_hash_table_t` at `table`
/// whose keys are 32-bit, in table order.
pub(crate) fn hash_u32(
    ctx: &Ctx<'_>,
    l: &OmpiLayout,
    table: TargetAddr,
) -> Result<Vec<(u32, TargetAddr)>, HandleError> {
    let o = &l.opal;
    let r = ctx.record_sized(table, o.ht_record, "opal_hash_table_t")?;
    let capacity = r.uint(o.ht_capacity)?;
    let capacity = ctx.count(
        i64::try_from(capacity).unwrap_or(i64::MAX),
        table,
        "opal_hash_table_t.ht_capacity",
    )?;
    let elements = r.ptr(o.ht_table)?;
    if capacity == 0 || elements.is_null() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for e in ctx.records(elements, capacity, o.he_size, "opal_hash_element_t")? {
        if e.int(o.he_valid)? != 0 {
            out.push((e.uint(o.he_key)? as u32, e.ptr(o.he_value)?));
        }
    }
    Ok(out)
}

/// The attributes in the hash table `keyhash` (NULL: none), by key.
pub(crate) fn attributes(
    ctx: &Ctx<'_>,
    l: &OmpiLayout,
    keyhash: TargetAddr,
) -> Result<Vec<Attribute>, HandleError> {
    if keyhash.is_null() {
        return Ok(Vec::new());
    }
    let a = &l.attr;
    let mut out = Vec::new();
    for (key, value) in hash_u32(ctx, l, keyhash)? {
        if value.is_null() {
            continue;
        }
        let r = ctx.record_sized(value, a.size, a.name)?;
        let set_from = r.int(a.m.set_from)?;
        let name = a.m.set_froms.name(set_from);
        // The union holds a pointer or an address-size integer, or an int
        // (C or Fortran) in its first bytes.
        let raw = match name.as_str() {
            "OMPI_ATTRIBUTE_INT" | "OMPI_ATTRIBUTE_FINT" => {
                let int = mpidd_read::Member {
                    size: 4.min(a.m.value.size),
                    ..a.m.value
                };
                r.int(int)? as u64
            }
            _ => {
                let word = mpidd_read::Member {
                    size: ctx.word().min(a.m.value.size),
                    ..a.m.value
                };
                r.uint(word)?
            }
        };
        let keyval = r.int(a.m.key)?;
        if keyval != i64::from(key as i32) {
            return Err(HandleError::Inconsistent {
                addr: value,
                reason: format!(
                    "the attribute under key {key} in the hash table at {keyhash} says it is for key {keyval}"
                ),
            });
        }
        out.push(Attribute {
            keyval: key as i32,
            value: raw,
            value_type: Availability::Value(name),
            internal: (0..=LAST_PREDEFINED_KEY).contains(&i64::from(key as i32)),
        });
    }
    out.sort_by_key(|a| a.keyval);
    Ok(out)
}

/// The value of the attribute `key` among `attrs`.
pub(crate) fn attribute(attrs: &[Attribute], key: i64) -> Option<&Attribute> {
    attrs.iter().find(|a| i64::from(a.keyval) == key)
}
