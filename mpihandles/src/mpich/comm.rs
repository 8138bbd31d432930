//! MPICH communicators (`MPIR_Comm`).
//!
//! The members read: `name`, `rank`, `local_size`, `remote_size`,
//! `comm_kind`, `local_group` and `remote_group` (made lazily: often NULL
//! until `MPI_Comm_group` asks), the CH3 device's virtual connection tables
//! (`dev.vcrt`, and `dev.local_vcrt` for an intercommunicator's local side)
//! for members' world ranks when there is no group, `errhandler`,
//! `attributes` (where the topology is), and the two context ids.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, CommDetails, CommKind, HandleKind, Topology};
use crate::mpich::resolver::Mpich;
use crate::mpich::{attr, ch4_map, group};
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
    let local_group = m.reference_in(&r, C, "local_group", HandleKind::Group);
    let remote_group = if inter {
        m.reference_in(&r, C, "remote_group", HandleKind::Group)
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
        errhandler: m.reference_in(&r, C, "errhandler", HandleKind::Errhandler),
        attributes: attrs.into(),
        requests: m.referring(HandleKind::Request, &["comm"], addr).into(),
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

fn comm_kind(ctx: &Ctx<'_>, r: &Rec) -> Availability<CommKind> {
    let read = || -> Result<CommKind, HandleError> {
        let v = r.int(ctx.m(C, "comm_kind")?)?;
        Ok(match ctx.enumerator(C, "comm_kind", v)?.as_deref() {
            Some(n) if n.ends_with("INTRACOMM") => CommKind::Intracommunicator,
            Some(n) if n.ends_with("INTERCOMM") => CommKind::Intercommunicator,
            Some(n) => CommKind::Other(n.to_string()),
            None => CommKind::Other(v.to_string()),
        })
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
            .map(|vc| Ok(ctx.int(at(ctx.address(vc), lpid.offset), lpid.size, "MPIDI_VC.lpid")?))
            .collect()
    };
    // CH4 has no connection tables but a rank map per side.
    if ctx.m(C, vcrt).is_err() && ctx.m(C, "dev.ch4.map.mode").is_ok() {
        let map = if vcrt == "dev.local_vcrt" {
            "dev.ch4.local_map"
        } else {
            "dev.ch4.map"
        };
        return ch4_map::world_ranks(ctx, r.base, map, expected).into();
    }
    from_vcrt().into()
}

/// This process's `MPI_COMM_WORLD` rank: `MPIR_Process.rank`.
pub(crate) fn world_rank(ctx: &Ctx<'_>) -> Result<i32, HandleError> {
    let sym = ctx.symbol("MPIR_Process", "MPICH keeps the process's world rank there")?;
    let f = ctx.m("MPIR_Process_t", "rank")?;
    Ok(ctx.int(at(sym.addr, f.offset), f.size, "MPIR_Process.rank")? as i32)
}
