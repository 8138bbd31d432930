//! MPICH's three debugger lists, read as a source of their own: the
//! records an MPICH built with `--enable-debuginfo` (4.0.3 on) keeps for a
//! debugger in `MPIR_Sendq_head`, `MPIR_Recvq_head` and
//! `MPIR_Unexpq_head` (`src/include/mpir_debugger.h`).
//!
//! Each record is an `MPIR_Debugq`: the request, tag, rank, context id,
//! buffer and element count the device handed `MPII_Debugq_remember`,
//! chained through `next` (newest first, `DL_PREPEND`; `prev` of the head
//! points at the tail, so only `next` is followed, and NULL ends it). What
//! fills each list, in CH4 (`src/mpid/ch4/src`): `MPID_Isend` and
//! `MPID_Irsend` the send list, for blocking sends too (`MPID_Send` is
//! `MPID_Isend`); `MPID_Irecv` and `MPID_Imrecv` the receive list,
//! blocking receives too; the unexpected list only the active-message
//! path's unexpected messages (`mpidig_pt2pt_callbacks.c`) and the self
//! path's sends (`ch4_self.c`, whose rank is the destination). What a
//! netmod keeps in its own transport (UCX's unexpected messages) is in
//! none of them. A record leaves its list when the request is freed
//! (`MPIR_Request_free`), so a completed request not yet waited for stays:
//! its status comes from the request's completion counter. The records
//! carry the element count, not the datatype: lengths here are counts.
//!
//! Every record keeps the context id of the receiving side of its
//! communicator (`recvcontext_id`, sends included), so the three lists are
//! placed in communicators by it. This file knows MPICH's debugger types
//! and nothing of a device: the CH4 decoder reads the communicators and
//! hands them here. It stands on the bounded reads and walks
//! (`target_read`, `list_walk`) and `mpich::common`.

use mpidd_read::{LayoutError, Limits, SymbolSource, TargetMemory};
use mpidd_types::TargetAddr;
use mpihandles::{Layouts, Member, MpichConstants};

use crate::decoder::DecodeError;
use crate::list_walk::{at, walk, ListShape, Span};
use crate::model::PendingOperation;
use crate::mpich::common::{posted_receive, request_status, CommFinder, CommInfo, QueueLists};
use crate::target_read::{read_int, read_pointer, Record};

/// One of the three lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DebugList {
    /// `MPIR_Sendq_head`: sends.
    Sends,
    /// `MPIR_Recvq_head`: posted receives.
    Receives,
    /// `MPIR_Unexpq_head`: unexpected messages.
    Unexpected,
}

impl DebugList {
    /// The three, in the order a reading reports them.
    pub(crate) const ALL: [DebugList; 3] =
        [DebugList::Receives, DebugList::Unexpected, DebugList::Sends];

    /// The global that holds the list's head.
    pub(crate) fn head_symbol(self) -> &'static str {
        match self {
            DebugList::Sends => "MPIR_Sendq_head",
            DebugList::Receives => "MPIR_Recvq_head",
            DebugList::Unexpected => "MPIR_Unexpq_head",
        }
    }

    /// The list's records, as errors name them.
    fn what(self) -> &'static str {
        match self {
            DebugList::Sends => "MPIR_Debugq (MPIR_Sendq_head)",
            DebugList::Receives => "MPIR_Debugq (MPIR_Recvq_head)",
            DebugList::Unexpected => "MPIR_Debugq (MPIR_Unexpq_head)",
        }
    }
}

/// Where the three head pointers are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DebugHeads {
    pub(crate) sends: TargetAddr,
    pub(crate) receives: TargetAddr,
    pub(crate) unexpected: TargetAddr,
}

impl DebugHeads {
    /// The three globals, when the library defines them all (built with
    /// debugger support, 4.0.3 on: 4.0.2 and before keep only the send
    /// list, of another type); else the names missing.
    pub(crate) fn find(symbols: &dyn SymbolSource) -> Result<DebugHeads, Vec<&'static str>> {
        let find = |l: DebugList| symbols.lookup(l.head_symbol()).map(|s| s.addr);
        match (
            find(DebugList::Sends),
            find(DebugList::Receives),
            find(DebugList::Unexpected),
        ) {
            (Some(sends), Some(receives), Some(unexpected)) => Ok(DebugHeads {
                sends,
                receives,
                unexpected,
            }),
            _ => Err(DebugList::ALL
                .iter()
                .filter(|l| find(**l).is_none())
                .map(|l| l.head_symbol())
                .collect()),
        }
    }

    fn of(&self, list: DebugList) -> TargetAddr {
        match list {
            DebugList::Sends => self.sends,
            DebugList::Receives => self.receives,
            DebugList::Unexpected => self.unexpected,
        }
    }
}

/// `MPIR_Debugq`'s members, and the request's completion counter its
/// status comes from.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DebugqLayout {
    pub(crate) size: u64,
    pub(crate) req: Member,
    pub(crate) tag: Member,
    pub(crate) rank: Member,
    pub(crate) context: Member,
    pub(crate) buf: Member,
    pub(crate) count: Member,
    pub(crate) next: Member,
    /// `MPIR_Request.cc`.
    pub(crate) req_cc: Member,
    /// `MPIR_Request.cc_ptr`, which points at `cc` or at a counter shared
    /// with other requests.
    pub(crate) req_cc_ptr: Option<Member>,
}

impl DebugqLayout {
    /// Asks `t` for every member at once; all those missing are named.
    pub(crate) fn resolve(t: &dyn Layouts) -> Result<DebugqLayout, Vec<LayoutError>> {
        const Q: &str = "MPIR_Debugq";
        let mut missing = Vec::new();
        let mut need = |r: Result<Member, LayoutError>| match r {
            Ok(m) => Some(m),
            Err(e) => {
                missing.push(e);
                None
            }
        };
        let req = need(t.member(Q, "req"));
        let tag = need(t.member(Q, "tag"));
        let rank = need(t.member(Q, "rank"));
        let context = need(t.member(Q, "context_id"));
        let buf = need(t.member(Q, "buf"));
        let count = need(t.member(Q, "count"));
        let next = need(t.member(Q, "next"));
        let req_cc = need(t.member("MPIR_Request", "cc"));
        let size = match t.size_of(Q) {
            Ok(s) => Some(s),
            Err(e) => {
                missing.push(e);
                None
            }
        };
        match (size, req, tag, rank, context, buf, count, next, req_cc) {
            (
                Some(size),
                Some(req),
                Some(tag),
                Some(rank),
                Some(context),
                Some(buf),
                Some(count),
                Some(next),
                Some(req_cc),
            ) if missing.is_empty() => Ok(DebugqLayout {
                size,
                req,
                tag,
                rank,
                context,
                buf,
                count,
                next,
                req_cc,
                req_cc_ptr: t.member("MPIR_Request", "cc_ptr").ok(),
            }),
            _ => Err(missing),
        }
    }
}

/// One `MPIR_Debugq` record as read, with its request's completion
/// counter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DebugqRecord {
    pub(crate) addr: TargetAddr,
    pub(crate) req: TargetAddr,
    pub(crate) tag: i64,
    pub(crate) rank: i64,
    pub(crate) context_id: i64,
    pub(crate) buf: u64,
    pub(crate) count: i64,
    pub(crate) cc: i64,
}

fn int(r: &Record<'_>, m: Member) -> Result<i64, mpidd_read::ReadError> {
    r.int(m.offset, m.size.clamp(1, 8) as usize)
}

fn uint(r: &Record<'_>, m: Member) -> Result<u64, mpidd_read::ReadError> {
    r.uint(m.offset, m.size.clamp(1, 8) as usize)
}

/// The records of one list, newest first, bounded by
/// [`Limits::max_list_len`] and cycle-checked. A record whose request is
/// NULL (which `MPII_Debugq_remember` never writes) is corrupt.
pub(crate) fn read_list(
    mem: &dyn TargetMemory,
    heads: &DebugHeads,
    list: DebugList,
    l: &DebugqLayout,
    limits: &Limits,
) -> Result<Vec<DebugqRecord>, DecodeError> {
    let first = read_pointer(mem, heads.of(list), list.head_symbol())?;
    let mut out = Vec::new();
    let what = list.what();
    walk(
        mem,
        first,
        ListShape {
            next_offset: l.next.offset,
            span: Span {
                start: 0,
                end: l.size,
            },
            what,
            end: TargetAddr(0),
        },
        limits,
        |r| {
            let req = TargetAddr(uint(r, l.req)?);
            if req.0 == 0 {
                return Err(DecodeError::Corrupt {
                    what,
                    addr: r.base,
                    reason: "its request (req) is NULL".to_string(),
                });
            }
            out.push(DebugqRecord {
                addr: r.base,
                req,
                tag: int(r, l.tag)?,
                rank: int(r, l.rank)?,
                context_id: int(r, l.context)?,
                buf: uint(r, l.buf)?,
                count: int(r, l.count)?,
                cc: completion(mem, req, l)?,
            });
            Ok(())
        },
    )?;
    Ok(out)
}

/// The request's completion counter: `*cc_ptr` where it points away from
/// the request's own `cc` (a counter shared with other requests), else
/// `cc`.
fn completion(
    mem: &dyn TargetMemory,
    req: TargetAddr,
    l: &DebugqLayout,
) -> Result<i64, DecodeError> {
    const WHAT: &str = "MPIR_Debugq.req (MPIR_Request.cc)";
    let own = at(req, l.req_cc.offset);
    let counter = match l.req_cc_ptr {
        Some(m) => {
            let p = read_pointer(
                mem,
                at(req, m.offset),
                "MPIR_Debugq.req (MPIR_Request.cc_ptr)",
            )?;
            if p.0 == 0 {
                own
            } else {
                p
            }
        }
        None => own,
    };
    Ok(read_int(
        mem,
        counter,
        l.req_cc.size.clamp(1, 8) as usize,
        WHAT,
    )?)
}

/// The three lists placed in `comms` (one list per communicator, in their
/// order): posted receives, unexpected messages and sends, and notes on
/// what the lists cannot say and on records of no communicator read.
pub(crate) struct PlacedLists {
    pub(crate) posted: QueueLists,
    pub(crate) unexpected: QueueLists,
    pub(crate) sends: QueueLists,
    pub(crate) notes: Vec<String>,
}

/// Reads the three lists and places each record in the communicator whose
/// `recvcontext_id` it holds; `wild` gives the library's wildcards.
pub(crate) fn read_debugger_lists(
    mem: &dyn TargetMemory,
    heads: &DebugHeads,
    l: &DebugqLayout,
    comms: &[CommInfo],
    wild: MpichConstants,
    limits: &Limits,
) -> Result<PlacedLists, DecodeError> {
    let lists = || vec![Vec::new(); comms.len()];
    let mut placed = PlacedLists {
        posted: lists(),
        unexpected: lists(),
        sends: lists(),
        notes: vec![
            "read from MPICH's debugger lists (MPIR_Recvq_head, MPIR_Unexpq_head, \
             MPIR_Sendq_head): lengths are element counts (MPIR_Debugq keeps no datatype), \
             and an unexpected message's buffer and length are not recorded"
                .to_string(),
        ],
    };
    let mut finder = CommFinder::default();
    for list in DebugList::ALL {
        let mut stray: Vec<i64> = Vec::new();
        for rec in read_list(mem, heads, list, l, limits)? {
            let Some(ci) = finder.find(comms, rec.context_id, |c| c.recvcontext_id) else {
                stray.push(rec.context_id);
                continue;
            };
            let comm = &comms[ci];
            let status = request_status(rec.cc);
            let (out, op) = match list {
                DebugList::Receives => {
                    let op = PendingOperation {
                        buffer: rec.buf,
                        desired_count: Some(rec.count),
                        ..posted_receive(status, comm, (rec.rank, rec.tag), rec.count, wild)
                    };
                    (&mut placed.posted, op)
                }
                DebugList::Unexpected => {
                    let op = PendingOperation::message(
                        status,
                        (rec.rank, comm.world_of(rec.rank)),
                        rec.tag,
                        -1,
                    );
                    (&mut placed.unexpected, op)
                }
                DebugList::Sends => {
                    let op = PendingOperation {
                        buffer: rec.buf,
                        desired_count: Some(rec.count),
                        ..PendingOperation::message(
                            status,
                            (rec.rank, comm.world_of(rec.rank)),
                            rec.tag,
                            rec.count,
                        )
                    };
                    (&mut placed.sends, op)
                }
            };
            out[ci].push(op);
        }
        if !stray.is_empty() {
            stray.sort_unstable();
            stray.dedup();
            placed.notes.push(format!(
                "{} holds records of context ids no communicator read has ({}): not shown",
                list.head_symbol(),
                stray
                    .iter()
                    .map(i64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    Ok(placed)
}

#[cfg(test)]
mod tests;
