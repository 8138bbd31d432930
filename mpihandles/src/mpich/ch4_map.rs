//! World ranks of a communicator under MPICH's CH4 device, from its rank
//! map (`MPIR_Comm.dev.ch4.map`, an `MPIDI_rank_map_t`; `local_map` for an
//! intercommunicator's local side).
//!
//! A map turns a communicator rank into an index into an address-vector
//! table, the way `MPIDIU_comm_rank_to_pid` (`ch4/src/ch4_proc.h`) does:
//! directly, by an offset, by a stride (of blocks), through a table of
//! indices (`LUT`), or through a table of (table, index) pairs (`MLUT`).
//! Table 0 holds the processes of `MPI_COMM_WORLD`, so an index into it is
//! a world rank. The modes are named by their enumerators in the debug
//! info, never by their numbers.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::target::{at, Ctx};
use mpidd_read::Layouts;

const C: &str = "MPIR_Comm";

/// The world rank of each of the `size` ranks the map at `map` (a dotted
/// path in `MPIR_Comm`, e.g. `dev.ch4.map`) of the communicator at `comm`
/// covers. A rank whose process is in another table (a spawned or
/// connected job) is −1.
pub fn ch4_world_ranks(
    mem: &dyn mpidd_read::TargetMemory,
    layouts: &dyn Layouts,
    limits: mpidd_read::Limits,
    comm: TargetAddr,
    map: &str,
    size: i64,
) -> Result<Vec<i64>, HandleError> {
    let ctx = Ctx::without_symbols(mem, layouts, limits);
    world_ranks(&ctx, comm, map, size)
}

/// Asks `layouts` every question [`ch4_world_ranks`] may ask of the map
/// at `map` in `MPIR_Comm`, whichever mode a communicator's map is in, so
/// that a table recorded from them reads every map as the DWARF would.
pub fn ask_ch4_map_layouts(layouts: &dyn Layouts, map: &str) {
    for f in [
        "mode",
        "avtid",
        "size",
        "reg.offset",
        "reg.stride.offset",
        "reg.stride.stride",
        "reg.stride.blocksize",
        "irreg.lut.lpid",
        "irreg.mlut.gpid",
    ] {
        let _ = layouts.member(C, &format!("{map}.{f}"));
    }
    let _ = layouts.member_enumerators(C, &format!("{map}.mode"));
    let _ = layouts.size_of("MPIDI_gpid_t");
    let _ = layouts.member("MPIDI_gpid_t", "avtid");
    let _ = layouts.member("MPIDI_gpid_t", "lpid");
}

pub(crate) fn world_ranks(
    ctx: &Ctx<'_>,
    comm: TargetAddr,
    map: &str,
    size: i64,
) -> Result<Vec<i64>, HandleError> {
    let member = |f: &str| ctx.m(C, &format!("{map}.{f}"));
    let field = |f: &str| -> Result<i64, HandleError> {
        let m = member(f)?;
        Ok(ctx.int(at(comm, m.offset), m.size, "MPIDI_rank_map_t")?)
    };
    let n = ctx.count(size, comm, "MPIDI_rank_map_t.size")?;
    let mode = field("mode")?;
    let modes = ctx.layouts.member_enumerators(C, &format!("{map}.mode"))?;
    let name = modes
        .iter()
        .find(|(_, v)| *v == i128::from(mode))
        .map(|(n, _)| n.trim_start_matches("MPIDI_RANK_MAP_").to_string())
        .ok_or_else(|| HandleError::Inconsistent {
            addr: comm,
            reason: format!("its rank map's mode {mode} is none of MPIDI_rank_map_mode's"),
        })?;
    let base = name.trim_end_matches("_INTRA");
    // A mode without _INTRA names its table in `avtid`; MLUT names one per
    // rank.
    if base != "MLUT" && !name.ends_with("_INTRA") {
        let avtid = field("avtid")?;
        if avtid != 0 {
            return Ok(vec![-1; n as usize]);
        }
    }
    let count = n as i64;
    Ok(match base {
        "DIRECT" => (0..count).collect(),
        "OFFSET" => {
            let off = field("reg.offset")?;
            (0..count).map(|i| i.saturating_add(off)).collect()
        }
        "STRIDE" => {
            let (off, stride) = (field("reg.stride.offset")?, field("reg.stride.stride")?);
            (0..count)
                .map(|i| i.saturating_mul(stride).saturating_add(off))
                .collect()
        }
        "STRIDE_BLOCK" => {
            let off = field("reg.stride.offset")?;
            let stride = field("reg.stride.stride")?;
            let block = field("reg.stride.blocksize")?;
            if block <= 0 {
                return Err(HandleError::Inconsistent {
                    addr: comm,
                    reason: format!("its rank map has blocks of {block}"),
                });
            }
            (0..count)
                .map(|i| {
                    (i / block)
                        .saturating_mul(stride.saturating_sub(block))
                        .saturating_add(i)
                        .saturating_add(off)
                })
                .collect()
        }
        "LUT" => {
            let m = member("irreg.lut.lpid")?;
            let table = ctx.pointer(at(comm, m.offset), "MPIDI_rank_map_t.irreg.lut.lpid")?;
            // MPIDI_lpid_t is an int.
            ctx.ints(table, count, 4, "MPIDI_lpid_t[]")?
        }
        "MLUT" => {
            let m = member("irreg.mlut.gpid")?;
            let table = ctx.pointer(at(comm, m.offset), "MPIDI_rank_map_t.irreg.mlut.gpid")?;
            let size = ctx.size_of("MPIDI_gpid_t")?;
            let avtid = ctx.m("MPIDI_gpid_t", "avtid")?;
            let lpid = ctx.m("MPIDI_gpid_t", "lpid")?;
            ctx.records(table, n, size, "MPIDI_gpid_t[]")?
                .iter()
                .map(|rec| {
                    Ok(if rec.int(avtid)? == 0 {
                        rec.int(lpid)?
                    } else {
                        -1
                    })
                })
                .collect::<Result<_, HandleError>>()?
        }
        other => {
            return Err(HandleError::Unsupported(format!(
                "its rank map has mode {other}, which maps no rank"
            )))
        }
    })
}
