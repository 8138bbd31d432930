//! MPICH communicators (`MPIR_Comm`).
//!
//! The members read: `name`, `rank`, `local_size`, `remote_size`,
//! `comm_kind`, `local_group` and `remote_group` (made lazily: often NULL
//! until `MPI_Comm_group` asks), the CH3 device's virtual connection tables
//! (`dev.vcrt`, and `dev.local_vcrt` for an intercommunicator's local side)
//! for members' world ranks when there is no group, `errhandler`,
//! `attributes` (where the topology is), and the two context ids.

use mpidd_read::ReadError;
use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, CommDetails, CommKind, HandleKind, HandleRef, Topology};
use crate::mpich::resolver::Mpich;
use crate::mpich::{attr, group, pools, request};
use crate::target::{at, Ctx, Rec};

const C: &str = "MPIR_Comm";

pub(crate) fn decode(m: &Mpich<'_>, addr: TargetAddr) -> Result<CommDetails, HandleError> {
    let ctx = &m.ctx;
    let r = ctx.record(addr, C)?;
    let int = |path: &str| -> Availability<i64> {
        ctx.m(C, path)
            .map_err(HandleError::from)
            .and_then(|f| Ok(r.int(f)?))
            .into()
    };
    let kind = comm_kind(ctx, &r);
    let inter = matches!(kind.value(), Some(CommKind::Intercommunicator));
    let local_group = group_ref(m, &r, "local_group");
    let remote_group = if inter {
        group_ref(m, &r, "remote_group")
    } else {
        Availability::not_available("an intracommunicator has no remote group")
    };
    let local_world_ranks = world_ranks(
        ctx,
        &r,
        "local_size",
        "local_group",
        if inter { "dev.local_vcrt" } else { "dev.vcrt" },
    );
    let remote_world_ranks = if inter {
        world_ranks(ctx, &r, "remote_size", "remote_group", "dev.vcrt")
    } else {
        Availability::not_available("an intracommunicator has no remote group")
    };
    let attrs = ctx
        .m(C, "attributes")
        .map_err(HandleError::from)
        .and_then(|f| attr::attributes(ctx, r.ptr(f)?));
    let topology: Availability<Topology> = match &attrs {
        Ok(list) => attr::topology(ctx, list).into(),
        Err(e) => Availability::not_available(format!("its attributes: {e}")),
    };
    Ok(CommDetails {
        name: ctx
            .m(C, "name")
            .map_err(HandleError::from)
            .and_then(|f| Ok(r.chars(f)?))
            .into(),
        rank: int("rank").map(|v| v as i32),
        size: int("local_size").map(|v| v as i32),
        world_rank: world_rank(ctx).into(),
        remote_size: if inter {
            int("remote_size").map(|v| v as i32)
        } else {
            Availability::not_available("an intracommunicator has no remote group")
        },
        comm_kind: kind,
        local_world_ranks,
        remote_world_ranks,
        local_group,
        remote_group,
        topology,
        errhandler: errhandler_ref(m, &r, C, "errhandler"),
        attributes: attrs.into(),
        requests: request::referring_to(m, "comm", addr).into(),
        windows: Availability::not_available(
            "MPICH's windows keep a duplicate of the communicator they were created over, \
             with no link back to it",
        ),
        files: Availability::not_available(
            "ROMIO's files keep a duplicate of the communicator they were opened over, \
             with no link back to it",
        ),
        context_id: int("context_id"),
        recv_context_id: int("recvcontext_id"),
    })
}

/// The communicators, predefined or handed out and not freed, whose
/// `context_id` is `id`, as references. Bounded as
/// [`pools::live_objects`] is.
pub(crate) fn with_context_id(
    m: &Mpich<'_>,
    member: &str,
    id: i64,
) -> Result<Vec<(HandleRef, TargetAddr)>, HandleError> {
    let ctx = &m.ctx;
    let Some(spec) = pools::spec(HandleKind::Comm) else {
        return Ok(Vec::new());
    };
    let handle = ctx.m(C, "handle")?;
    let context = ctx.m(C, member)?;
    let mut out = Vec::new();
    let mut keep = |r: &Rec| -> Result<(), HandleError> {
        let h = r.int(handle)?;
        if h != 0 && r.int(context)? == id {
            out.push((m.reference(HandleKind::Comm, h as u32), r.base));
        }
        Ok(())
    };
    if let Some((array, _)) = spec.builtin {
        let size = ctx.size_of(C)?;
        let sym = ctx.symbol(array, "the predefined objects")?;
        let count = sym.size / size;
        let bytes = ctx.bytes(
            sym.addr,
            count.saturating_mul(size),
            "MPICH builtin objects",
        )?;
        for (i, chunk) in bytes.chunks_exact(size as usize).enumerate() {
            keep(&Rec {
                base: at(sym.addr, i as u64 * size),
                bytes: chunk.to_vec(),
                order: ctx.order(),
                what: C,
            })?;
        }
    }
    for r in pools::live_objects(ctx, &spec)? {
        keep(&r)?;
    }
    Ok(out)
}

fn comm_kind(ctx: &Ctx<'_>, r: &Rec) -> Availability<CommKind> {
    let read = || -> Result<CommKind, HandleError> {
        let v = r.int(ctx.m(C, "comm_kind")?)?;
        let kinds = ctx.layouts.member_enumerators(C, "comm_kind")?;
        let name = kinds
            .iter()
            .find(|(_, k)| *k == i128::from(v))
            .map(|(n, _)| n.as_str());
        Ok(match name {
            Some(n) if n.ends_with("INTRACOMM") => CommKind::Intracommunicator,
            Some(n) if n.ends_with("INTERCOMM") => CommKind::Intercommunicator,
            Some(n) => CommKind::Other(n.to_string()),
            None => CommKind::Other(v.to_string()),
        })
    };
    read().into()
}

/// A reference to the group at the pointer member `path`; `None` when
/// MPICH has not made it.
fn group_ref(m: &Mpich<'_>, r: &Rec, path: &str) -> Availability<Option<HandleRef>> {
    let read = || -> Result<Option<HandleRef>, HandleError> {
        let ptr = r.ptr(m.ctx.m(C, path)?)?;
        if ptr.is_null() {
            return Ok(None);
        }
        Ok(Some(m.reference_at(
            HandleKind::Group,
            ptr,
            "MPIR_Group",
        )?))
    };
    read().into()
}

/// A reference to the error handler at the pointer member `path` of
/// `object_type`; `None` when none was set.
pub(crate) fn errhandler_ref(
    m: &Mpich<'_>,
    r: &Rec,
    object_type: &'static str,
    path: &str,
) -> Availability<Option<HandleRef>> {
    let read = || -> Result<Option<HandleRef>, HandleError> {
        let ptr = r.ptr(m.ctx.m(object_type, path)?)?;
        if ptr.is_null() {
            return Ok(None);
        }
        Ok(Some(m.reference_at(
            HandleKind::Errhandler,
            ptr,
            "MPIR_Errhandler",
        )?))
    };
    read().into()
}

/// World ranks of a side of the communicator, whose size is the member
/// `size`: from its group when MPICH has made one, else from the CH3
/// device's connection table (or CH4's rank map, `mpich_ch4_map`).
///
/// Both must account for exactly that many processes. A group is the
/// side's own; a table may be longer, because CH3 lets a communicator
/// whose members are the first ones of its parent's, in order, share the
/// parent's table (`dup_vcrt` in `ch3u_comm.c`: the node communicator of
/// the node that holds world ranks 0 and 1 shares `MPI_COMM_WORLD`'s), and
/// then only its prefix is the communicator's.
fn world_ranks(
    ctx: &Ctx<'_>,
    r: &Rec,
    size: &str,
    group: &str,
    vcrt: &str,
) -> Availability<Vec<i64>> {
    let expected = match ctx
        .m(C, size)
        .map_err(HandleError::from)
        .and_then(|f| Ok(r.int(f)?))
    {
        Ok(n) => n,
        Err(e) => return Availability::not_available(format!("its {size}: {e}")),
    };
    let from_group = || -> Result<Option<Vec<i64>>, HandleError> {
        let ptr = r.ptr(ctx.m(C, group)?)?;
        if ptr.is_null() {
            return Ok(None);
        }
        let ranks = group::world_ranks(ctx, ptr)?;
        if ranks.len() as i64 != expected {
            return Err(HandleError::Inconsistent {
                addr: ptr,
                reason: format!(
                    "this MPIR_Group has {} members where the communicator's {size} is {expected}",
                    ranks.len()
                ),
            });
        }
        Ok(Some(ranks))
    };
    match from_group() {
        Ok(Some(ranks)) => return Availability::Value(ranks),
        Ok(None) => {}
        Err(e) => return Availability::not_available(format!("its {group}: {e}")),
    }
    let from_vcrt = || -> Result<Vec<i64>, HandleError> {
        let table = r.ptr(ctx.m(C, vcrt)?)?;
        if table.is_null() {
            return Err(HandleError::Unsupported(format!(
                "neither {group} nor {vcrt} is set"
            )));
        }
        let size_m = ctx.m("MPIDI_VCRT", "size")?;
        let entries = ctx.m("MPIDI_VCRT", "vcr_table")?;
        let lpid = ctx.m("MPIDI_VC", "lpid")?;
        let found = ctx.int(at(table, size_m.offset), size_m.size, "MPIDI_VCRT.size")?;
        if found < expected {
            return Err(HandleError::Inconsistent {
                addr: table,
                reason: format!(
                    "this MPIDI_VCRT ({vcrt}) has {found} entries where the communicator's \
                     {size} is {expected}"
                ),
            });
        }
        let vcs = ctx.ints(
            at(table, entries.offset),
            expected,
            ctx.word(),
            "MPIDI_VCRT.vcr_table",
        )?;
        vcs.into_iter()
            .map(|vc| {
                Ok(ctx.int(
                    at(TargetAddr(vc as u64 & mask(ctx.word())), lpid.offset),
                    lpid.size,
                    "MPIDI_VC.lpid",
                )?)
            })
            .collect()
    };
    // CH4 has no connection tables but a rank map per side.
    if ctx.m(C, vcrt).is_err() && ctx.m(C, "dev.ch4.map.mode").is_ok() {
        let map = if vcrt == "dev.local_vcrt" {
            "dev.ch4.local_map"
        } else {
            "dev.ch4.map"
        };
        return crate::mpich::ch4_map::world_ranks(ctx, r.base, map, expected).into();
    }
    from_vcrt().into()
}

/// Masks a sign-extended word back to an address.
fn mask(word: u64) -> u64 {
    if word >= 8 {
        u64::MAX
    } else {
        (1u64 << (word * 8)) - 1
    }
}

/// This process's `MPI_COMM_WORLD` rank: `MPIR_Process.rank`.
pub(crate) fn world_rank(ctx: &Ctx<'_>) -> Result<i32, HandleError> {
    let sym = ctx.symbol("MPIR_Process", "MPICH keeps the process's world rank there")?;
    let f = ctx.m("MPIR_Process_t", "rank")?;
    Ok(ctx.int(at(sym.addr, f.offset), f.size, "MPIR_Process.rank")? as i32)
}

/// Communicators whose pointer member `path` is `target`.
pub(crate) fn referring_to(
    m: &Mpich<'_>,
    paths: &[&str],
    target: TargetAddr,
) -> Result<Vec<HandleRef>, HandleError> {
    let ctx = &m.ctx;
    let Some(spec) = pools::spec(HandleKind::Comm) else {
        return Ok(Vec::new());
    };
    let members = paths
        .iter()
        .map(|p| ctx.m(C, p))
        .collect::<Result<Vec<_>, _>>()?;
    let handle = ctx.m(C, "handle")?;
    let mut out = Vec::new();
    for r in pools::live_objects(ctx, &spec)? {
        if members.iter().any(|f| r.ptr(*f).ok() == Some(target)) {
            out.push(m.reference(HandleKind::Comm, r.int(handle)? as u32));
        }
    }
    // The predefined communicators live in the builtin array.
    if let Some(sym) = ctx.symbols.lookup("MPIR_Comm_builtin") {
        let size = ctx.size_of(C)?;
        // The symbol's size comes from the target: bound the scan as the
        // pools' scans are bounded.
        let count = sym.size / size;
        if count > ctx.limits.max_table_entries {
            return Err(ReadError::LimitExceeded {
                what: "MPIR_Comm_builtin",
                addr: sym.addr,
                count,
                max: ctx.limits.max_table_entries,
                limit: "max_table_entries",
            }
            .into());
        }
        for i in 0..count {
            let Ok(r) = ctx.record(at(sym.addr, i * size), C) else {
                continue;
            };
            let h = r.int(handle)?;
            if h != 0 && members.iter().any(|f| r.ptr(*f).ok() == Some(target)) {
                out.push(m.reference(HandleKind::Comm, h as u32));
            }
        }
    }
    Ok(out)
}
