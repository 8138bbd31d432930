//! What the typed reads do when a backend answers a read with fewer bytes
//! than asked: find how much of the range is really readable, for every
//! kind of backend the read contract of
//! [`TargetMemory::read_into`](crate::TargetMemory::read_into) allows.
//!
//! Backends differ in what a short count means. A core or a live process
//! stops at the first unreadable byte; a debugger's own reads are often
//! all or nothing (`Ok(0)` for a range with any unreadable byte in it);
//! a remote stub may cap every transfer. The first read is the fast path
//! and is left alone; only a short answer is followed up, with reads that
//! never cross a page boundary, then a one-byte probe, then halving, so a
//! string that ends a few bytes before an unmapped page is found on every
//! kind of backend. Every follow-up call either gains at least one byte or
//! halves the size tried, so the calls are bounded by the range's length
//! (and, where bytes are unreadable, by a few dozen per boundary).

use mpidd_types::TargetAddr;

use crate::backend::memory::TargetMemory;
use crate::error::ReadError;

/// Granularity at which memory is mapped on every target the crate reads
/// (4 KiB pages; larger pages are multiples of it): a range within one
/// such page is readable whole or not at all in a real process.
const PAGE: u64 = 4096;

/// One backend call, checked: the count is never more than asked (a
/// backend that claims more fails, naming `what`), and a backend failure
/// is named after `what` was being read, at the backend's address.
pub(crate) fn read_some<M: TargetMemory + ?Sized>(
    mem: &M,
    addr: TargetAddr,
    buf: &mut [u8],
    what: &'static str,
) -> Result<usize, ReadError> {
    let got = mem.read_into(addr, buf).map_err(|e| named(e, what))?;
    if got > buf.len() {
        return Err(ReadError::Backend {
            what,
            addr,
            cause: std::io::Error::other(format!(
                "the backend claimed {got} bytes of a {}-byte read",
                buf.len()
            )),
        });
    }
    Ok(got)
}

/// A backend's failure, renamed after what the typed read was reading
/// (`MPIR_proctable`, `string`), which says more to a user than the
/// backend's own name for its memory; the address and cause stay.
fn named(e: ReadError, what: &'static str) -> ReadError {
    match e {
        ReadError::Backend { addr, cause, .. } => ReadError::Backend { what, addr, cause },
        other => other,
    }
}

/// How many leading bytes of `[addr, addr + buf.len())` can be read,
/// with them in `buf`, given that a first read of the whole range gave
/// `first` bytes. Returns `first` at once when it is the whole range.
pub(crate) fn fill_prefix<M: TargetMemory + ?Sized>(
    mem: &M,
    addr: TargetAddr,
    buf: &mut [u8],
    first: usize,
    what: &'static str,
) -> Result<usize, ReadError> {
    let len = buf.len();
    let mut done = first.min(len);
    // A read at `addr + done` of this many bytes or more is known to come
    // back empty, so it is not asked again (all-or-nothing backends).
    let mut empty_from = if done == 0 { len } else { usize::MAX };
    while done < len {
        let Some(at) = addr.0.checked_add(done as u64) else {
            break;
        };
        let to_page = (PAGE - at % PAGE) as usize;
        let piece = (len - done).min(to_page);
        let slot = &mut buf[done..done + piece];
        let got = if piece < empty_from {
            read_some(mem, TargetAddr(at), slot, what)?
        } else {
            0
        };
        if got > 0 {
            done += got;
            empty_from = usize::MAX;
            continue;
        }
        let got = readable_start(mem, TargetAddr(at), slot, what)?;
        if got == 0 {
            break;
        }
        done += got;
        empty_from = usize::MAX;
    }
    Ok(done)
}

/// How many leading bytes of `buf.len()` at `at` can be read, given that
/// reading them all at once came back empty: a one-byte probe (no byte
/// readable: 0, as a backend that stops at the first unreadable byte
/// needs), then halving between what is known readable and what is not.
/// The bytes counted are in `buf` on return.
fn readable_start<M: TargetMemory + ?Sized>(
    mem: &M,
    at: TargetAddr,
    buf: &mut [u8],
    what: &'static str,
) -> Result<usize, ReadError> {
    if buf.len() <= 1 || read_some(mem, at, &mut buf[..1], what)? == 0 {
        return Ok(0);
    }
    // `good` bytes are known readable, `bad` are not (in one call).
    let (mut good, mut bad) = (1, buf.len());
    // Whether `buf[..good]` holds the bytes of the last read that counted:
    // a read that came back empty may have written into `buf` anyway.
    let mut held = true;
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        let got = read_some(mem, at, &mut buf[..mid], what)?;
        if got == 0 {
            bad = mid;
            held = false;
        } else if got < mid {
            // Not all or nothing after all (a capped transfer, or the
            // first unreadable byte): take what came; the caller goes on
            // from there.
            return Ok(got);
        } else {
            good = mid;
            held = true;
        }
    }
    if held {
        return Ok(good);
    }
    // One more read for the bytes themselves; a backend that now gives
    // fewer is taken at its word.
    read_some(mem, at, &mut buf[..good], what)
}
