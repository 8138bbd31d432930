//! MPICH groups (`MPIR_Group`): `size`, `rank` (`MPI_UNDEFINED` when this
//! process is not a member) and `lrank_to_lpid`, an array of
//! `MPII_Group_pmap_t` whose `lpid` is each member's process id, which for
//! the processes of the job's own `MPI_COMM_WORLD` is their world rank.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, GroupDetails, HandleKind};
use crate::mpich::resolver::Mpich;
use crate::target::Ctx;

const G: &str = "MPIR_Group";

/// MPICH's `MPI_UNDEFINED` (`mpi.h`).
const MPI_UNDEFINED: i64 = -32766;

pub(crate) fn decode(m: &Mpich<'_>, addr: TargetAddr) -> Result<GroupDetails, HandleError> {
    let ctx = &m.ctx;
    let r = ctx.record(addr, G)?;
    let size = r.int(ctx.m(G, "size")?)?;
    let rank = r.int(ctx.m(G, "rank")?)?;
    Ok(GroupDetails {
        size: Availability::Value(size as i32),
        rank: Availability::Value((rank != MPI_UNDEFINED).then_some(rank as i32)),
        world_ranks: world_ranks(ctx, addr).into(),
        communicators: m
            .referring(HandleKind::Comm, &["local_group", "remote_group"], addr)
            .into(),
    })
}

/// The process ids of the group's members, by group rank.
pub(crate) fn world_ranks(ctx: &Ctx<'_>, addr: TargetAddr) -> Result<Vec<i64>, HandleError> {
    let r = ctx.record(addr, G)?;
    let size = r.int(ctx.m(G, "size")?)?;
    let map = r.ptr(ctx.m(G, "lrank_to_lpid")?)?;
    if size == 0 {
        return Ok(Vec::new());
    }
    if map.is_null() {
        return Err(HandleError::Unsupported(format!(
            "the group at {addr} has {size} members but no lrank_to_lpid map"
        )));
    }
    let entry = ctx.size_of("MPII_Group_pmap_t")?;
    let lpid = ctx.m("MPII_Group_pmap_t", "lpid")?;
    // The whole map in one read, its count checked like any table's.
    let count = ctx.count(size, map, "MPII_Group_pmap_t array")?;
    ctx.records(map, count, entry, "MPII_Group_pmap_t")?
        .iter()
        .map(|e| Ok(e.int(lpid)?))
        .collect()
}
