//! Walking a linked list in target memory: bounded by
//! [`Limits::max_list_len`], cycle-checked, each node decoded as it is
//! read. Shared by the native decoders.

use std::collections::HashSet;

use mpidd_read::Limits;
use mpidd_types::TargetAddr;

use crate::decoder::DecodeError;
use crate::target_read::{read_pointer, Record};
use mpidd_read::TargetMemory;

/// `base + offset` in the target's address space (wrapping, as the
/// target's own arithmetic would; a wild address fails at the read).
pub(crate) fn at(base: TargetAddr, offset: u64) -> TargetAddr {
    TargetAddr(base.0.wrapping_add(offset))
}

/// Bytes `[start, end)` of a record: the smallest window that holds the
/// fields one queue decodes, so a request is read (or borrowed) once and
/// no more of it than that.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Span {
    pub(crate) start: u64,
    pub(crate) end: u64,
}

/// How to walk one kind of target list: where each node's next pointer
/// is, which bytes of each node to read, and what to call it in errors.
#[derive(Clone, Copy)]
pub(crate) struct ListShape {
    pub(crate) next_offset: u64,
    pub(crate) span: Span,
    pub(crate) what: &'static str,
    /// The address that ends the list besides NULL: an `opal_list_t`'s
    /// sentinel, or the first node of a ring.
    pub(crate) end: TargetAddr,
}

/// Walks a target list from `first`, following the pointer at
/// `next_offset` of each node and handing `visit` each node's span;
/// cycles and overlong lists are errors.
pub(crate) fn walk(
    mem: &dyn TargetMemory,
    first: TargetAddr,
    shape: ListShape,
    limits: &Limits,
    mut visit: impl FnMut(&Record<'_>) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let ListShape {
        next_offset,
        span,
        what,
        end,
    } = shape;
    if first.0 == 0 || first == end {
        return Ok(());
    }
    let len = span.end.saturating_sub(span.start);
    limits.check_record_bytes(what, first, len)?;
    // One buffer for the whole walk, used only where the source cannot
    // lend its own bytes: a 100,000-request queue would otherwise
    // allocate 100,000 times.
    let mut buf = vec![0u8; len as usize];
    let abi = mem.abi();
    let (order, word) = (abi.byte_order, abi.address_bytes());
    // Brent's cycle detection: the node last saved is compared with
    // each one walked, and saved anew after 1, 2, 4, ... steps, so a
    // loop is caught within twice its length, with no memory and no
    // hashing per node. An alarm (a repeat or the length limit) walks
    // the list again to name the exact entry, as an error path may.
    let mut saved = TargetAddr(0);
    let mut power = 1u64;
    let mut since = 0u64;
    let mut walked = 0u64;
    let mut node = first;
    // Each node is decoded as it is read, so a queue of 100,000
    // requests never holds 100,000 raw copies.
    while node.0 != 0 && node != end {
        if node == saved || walked >= limits.max_list_len {
            return Err(list_error(mem, first, shape, limits, node, walked));
        }
        let bytes = mem.view(at(node, span.start), &mut buf, what)?;
        let rec = Record {
            base: node,
            start: span.start,
            bytes,
            order,
            what,
        };
        let next = TargetAddr(rec.uint(next_offset, word)?);
        visit(&rec)?;
        walked += 1;
        since += 1;
        if since == power {
            saved = node;
            power = power.saturating_mul(2);
            since = 0;
        }
        node = next;
    }
    Ok(())
}

/// The error of a list walk that met a node twice, or reached
/// [`Limits::max_list_len`] at `stopped` after `walked` nodes: the
/// list is walked again remembering every node, so a cycle is named by
/// its first repeated entry and the count before it, and a list that is
/// merely long by where the limit stopped it. A target that changed
/// between the walks gets the first walk's finding.
fn list_error(
    mem: &dyn TargetMemory,
    first: TargetAddr,
    shape: ListShape,
    limits: &Limits,
    stopped: TargetAddr,
    walked: u64,
) -> DecodeError {
    let what = shape.what;
    let mut seen = HashSet::new();
    let mut node = first;
    while node.0 != 0 && node != shape.end {
        let len = seen.len() as u64;
        if !seen.insert(node.0) {
            return DecodeError::Cycle {
                what,
                addr: node,
                len,
            };
        }
        if len >= limits.max_list_len {
            return DecodeError::TooLong {
                what,
                limit: limits.max_list_len,
                addr: node,
            };
        }
        node = match read_pointer(mem, at(node, shape.next_offset), what) {
            Ok(next) => next,
            Err(e) => return e.into(),
        };
    }
    if walked >= limits.max_list_len {
        DecodeError::TooLong {
            what,
            limit: limits.max_list_len,
            addr: stopped,
        }
    } else {
        DecodeError::Cycle {
            what,
            addr: stopped,
            len: walked,
        }
    }
}
