//! Walking libfabric's `dlist_entry` rings (`include/ofi_list.h`): a head
//! whose `next` leads through each element's link back to the head.
//! Bounded by [`Limits::max_list_len`](mpidd_read::Limits) and
//! cycle-checked: a ring that never comes back to its head is named by the
//! first link met twice.

use std::collections::HashSet;

use mpidd_read::ReadError;
use mpidd_types::TargetAddr;

use super::error::OfiError;
use super::layout::ListLayout;
use crate::target::{at, Ctx};

/// The links of the ring whose head is at `head` (a `dlist_entry`), in
/// order, the head excluded. `what` names the ring in errors; `record`
/// the type that holds the head.
pub(crate) fn links(
    ctx: &Ctx<'_>,
    ll: &ListLayout,
    head: TargetAddr,
    what: &'static str,
    record: &'static str,
) -> Result<Vec<TargetAddr>, OfiError> {
    let max = ctx.limits.max_list_len;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut link = next(ctx, ll, head)?;
    while link != head {
        if link.is_null() {
            return Err(OfiError::corrupt(
                record,
                head,
                format!("{what} reaches a NULL link after {} entries", out.len()),
            ));
        }
        if out.len() as u64 >= max {
            return Err(ReadError::LimitExceeded {
                what,
                addr: head,
                count: out.len() as u64,
                max,
                limit: "max_list_len",
            }
            .into());
        }
        if !seen.insert(link) {
            return Err(ReadError::Cycle { what, addr: link }.into());
        }
        out.push(link);
        link = next(ctx, ll, link)?;
    }
    Ok(out)
}

/// The `next` of the link at `link`.
fn next(ctx: &Ctx<'_>, ll: &ListLayout, link: TargetAddr) -> Result<TargetAddr, OfiError> {
    let rec = ctx.record_sized(link, ll.link_size, "dlist_entry")?;
    Ok(rec.ptr(ll.next)?)
}

/// The record whose member at `offset` is the link at `link`
/// (`container_of`).
pub(crate) fn container(link: TargetAddr, offset: u64) -> TargetAddr {
    TargetAddr(link.0.wrapping_sub(offset))
}

/// The `dlist_entry` at `offset` of the record at `base`.
pub(crate) fn head(base: TargetAddr, offset: u64) -> TargetAddr {
    at(base, offset)
}
