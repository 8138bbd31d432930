//! MPICH groups (`MPIR_Group`): `size`, `rank` (`MPI_UNDEFINED` when this
//! process is not a member) and `lrank_to_lpid`, an array of
//! `MPII_Group_pmap_t` whose `lpid` is each member's process id, which for
//! the processes of the job's own `MPI_COMM_WORLD` is their world rank;
//! from 5.0, `pmap`, a map of lpids or an offset and a stride.

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
    if let Ok(use_map) = ctx.m(G, "pmap.use_map") {
        return pmap_world_ranks(ctx, addr, size, r.int(use_map)? != 0);
    }
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

/// MPICH 5.0's `MPIR_Group.pmap` (`struct MPIR_Pmap`): a map of
/// `MPIR_Lpid`s when `use_map`, else an offset and a stride. An lpid of
/// the job's own world (index 0, above bit 32) is its world rank.
fn pmap_world_ranks(
    ctx: &Ctx<'_>,
    addr: TargetAddr,
    size: i64,
    use_map: bool,
) -> Result<Vec<i64>, HandleError> {
    let r = ctx.record(addr, G)?;
    let world = |lpid: i64| if lpid >> 32 == 0 { lpid & 0xffff_ffff } else { lpid };
    let count = ctx.count(size, addr, "MPIR_Group.size")?;
    if !use_map {
        let offset = r.int(ctx.m(G, "pmap.u.stride.offset")?)?;
        let stride = r.int(ctx.m(G, "pmap.u.stride.stride")?)?;
        return Ok((0..count as i64)
            .map(|i| world(offset.wrapping_add(i.wrapping_mul(stride))))
            .collect());
    }
    let map = r.ptr(ctx.m(G, "pmap.u.map")?)?;
    if count == 0 {
        return Ok(Vec::new());
    }
    if map.is_null() {
        return Err(HandleError::Unsupported(format!(
            "the group at {addr} has {size} members but no pmap.u.map"
        )));
    }
    let lpid = crate::Member {
        offset: 0,
        size: 8,
        array_len: None,
    };
    ctx.records(map, count, 8, "MPIR_Lpid")?
        .iter()
        .map(|e| Ok(world(e.int(lpid)?)))
        .collect()
}
