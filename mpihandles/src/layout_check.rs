//! The check a layout profile passes before it is used on a process: a
//! few objects whose contents every initialised MPI process knows (the
//! predefined communicators) must read as what they are. A profile made
//! for another build, or chosen for a library that has no build-id only
//! by the digest of its code, reads them wrong and is refused with one
//! line that says which object read as what.
//!
//! What the layouts do not describe, or a process without the objects,
//! is not checked: only a contradiction refuses them.
//!
//! ```
//! use mpidd_read::{LayoutTable, SymbolTable, SyntheticMemory};
//! use mpidd_types::TargetAbi;
//!
//! // A process with no MPI symbol at all: nothing to check, nothing refused.
//! let memory = SyntheticMemory::new(TargetAbi::X86_64);
//! let checked = mpihandles::check_layouts(
//!     &memory,
//!     &SymbolTable::new(),
//!     &LayoutTable::default(),
//!     &mpihandles::Limits::default(),
//! );
//! assert!(checked.is_ok());
//! ```

use mpidd_read::{Layouts, Limits, SymbolSource, TargetMemory};
use mpidd_types::TargetAddr;

use crate::target::{at, Ctx};

/// MPICH's communicator handles: `MPI_COMM_WORLD`, `MPI_COMM_SELF`.
const MPICH_WORLD_HANDLE: i64 = 0x4400_0000;
const MPICH_SELF_HANDLE: i64 = 0x4400_0001;

/// Why a process's layouts were refused: the object that read wrong, its
/// address, and what it read as.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LayoutsRefused(pub String);

/// Checks `layouts` against the predefined communicators of the process:
/// Open MPI's `ompi_mpi_comm_world` and `ompi_mpi_comm_self` must be named
/// `MPI_COMM_WORLD` and `MPI_COMM_SELF`, with a rank of 0 in the latter;
/// MPICH's `MPIR_Comm_builtin[0]` and `[1]` must hold the handles of the
/// two and their names. A process before `MPI_Init` has no names yet and
/// is refused too, which the reason says. A check whose symbol or member
/// is not there is skipped.
pub fn check_layouts(
    memory: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
    layouts: &dyn Layouts,
    limits: &Limits,
) -> Result<(), LayoutsRefused> {
    let ctx = Ctx::new(memory, symbols, layouts, *limits);
    if let Some(world) = symbols.lookup("ompi_mpi_comm_world") {
        let self_comm = symbols.lookup("ompi_mpi_comm_self").ok_or_else(|| {
            LayoutsRefused("ompi_mpi_comm_world is there but not ompi_mpi_comm_self".into())
        })?;
        check_ompi_comm(
            &ctx,
            "ompi_mpi_comm_world",
            world.addr,
            "MPI_COMM_WORLD",
            None,
        )?;
        return check_ompi_comm(
            &ctx,
            "ompi_mpi_comm_self",
            self_comm.addr,
            "MPI_COMM_SELF",
            Some(0),
        );
    }
    if let Some(builtin) = symbols.lookup("MPIR_Comm_builtin") {
        let size = ctx
            .size_of("MPIR_Comm")
            .map_err(|e| LayoutsRefused(format!("MPIR_Comm: {e}")))?;
        check_mpich_comm(&ctx, builtin.addr, 0, MPICH_WORLD_HANDLE, "MPI_COMM_WORLD")?;
        return check_mpich_comm(
            &ctx,
            at(builtin.addr, size),
            1,
            MPICH_SELF_HANDLE,
            "MPI_COMM_SELF",
        );
    }
    // Nothing known to check the layouts on: they are not refused for it.
    Ok(())
}

/// An Open MPI communicator's name: a character array in 4.1, a pointer
/// to one in 5.0, told apart by the member's size.
fn ompi_name(
    ctx: &Ctx<'_>,
    comm: TargetAddr,
    symbol: &str,
) -> Result<Option<String>, LayoutsRefused> {
    let refused = |e: &dyn std::fmt::Display| LayoutsRefused(format!("{symbol}: {e}"));
    // A member the layouts do not describe is not checked.
    let Ok(m) = ctx.m("ompi_communicator_t", "c_name") else {
        return Ok(None);
    };
    let name_at = at(comm, m.offset);
    if m.size == ctx.word() {
        let pointer = ctx
            .int(name_at, m.size, "ompi_communicator_t.c_name")
            .map_err(|e| refused(&e))?;
        let target = ctx.address(pointer);
        ctx.string(target).map(Some).map_err(|e| refused(&e))
    } else {
        let raw = ctx
            .bytes(
                name_at,
                m.size.min(ctx.limits.max_string_len as u64),
                "ompi_communicator_t.c_name",
            )
            .map_err(|e| refused(&e))?;
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        Ok(Some(String::from_utf8_lossy(&raw[..end]).into_owned()))
    }
}

fn check_ompi_comm(
    ctx: &Ctx<'_>,
    symbol: &str,
    comm: TargetAddr,
    want: &str,
    rank: Option<i64>,
) -> Result<(), LayoutsRefused> {
    let Some(name) = ompi_name(ctx, comm, symbol)? else {
        return Ok(());
    };
    if name != want {
        return Err(LayoutsRefused(format!(
            "{symbol} at {comm} is named {name:?} through these layouts, not {want:?} \
             (a profile of another build, or a process before MPI_Init)"
        )));
    }
    if let Some(want_rank) = rank {
        let Ok(m) = ctx.m("ompi_communicator_t", "c_my_rank") else {
            return Ok(());
        };
        let got = ctx
            .int(at(comm, m.offset), m.size, "ompi_communicator_t.c_my_rank")
            .map_err(|e| LayoutsRefused(format!("{symbol}: {e}")))?;
        if got != want_rank {
            return Err(LayoutsRefused(format!(
                "{symbol} at {comm} has rank {got} through these layouts, not {want_rank}"
            )));
        }
    }
    Ok(())
}

fn check_mpich_comm(
    ctx: &Ctx<'_>,
    comm: TargetAddr,
    index: usize,
    want_handle: i64,
    want_name: &str,
) -> Result<(), LayoutsRefused> {
    let what = format!("MPIR_Comm_builtin[{index}] at {comm}");
    let refused = |e: &dyn std::fmt::Display| LayoutsRefused(format!("{what}: {e}"));
    // A member the layouts do not describe is not checked.
    let Ok(handle) = ctx.m("MPIR_Comm", "handle") else {
        return Ok(());
    };
    let got = ctx
        .int(at(comm, handle.offset), handle.size, "MPIR_Comm.handle")
        .map_err(|e| refused(&e))?;
    // The handle is an `int`: compared as its 32 bits.
    if got & 0xffff_ffff != want_handle {
        return Err(LayoutsRefused(format!(
            "{what} holds handle {:#x} through these layouts, not {want_handle:#x} ({want_name})",
            got & 0xffff_ffff
        )));
    }
    let Ok(name) = ctx.m("MPIR_Comm", "name") else {
        return Ok(());
    };
    let raw = ctx
        .bytes(
            at(comm, name.offset),
            name.size.min(ctx.limits.max_string_len as u64),
            "MPIR_Comm.name",
        )
        .map_err(|e| refused(&e))?;
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    let got_name = String::from_utf8_lossy(&raw[..end]);
    if got_name != want_name {
        return Err(LayoutsRefused(format!(
            "{what} is named {got_name:?} through these layouts, not {want_name:?} \
             (a profile of another build, or a process before MPI_Init)"
        )));
    }
    Ok(())
}

#[cfg(all(test, feature = "synthetic"))]
mod tests {
    use super::*;
    use crate::ompi::{CommSpec, SyntheticOmpi, SYNTHETIC_OBJECT};
    use mpidd_read::LayoutTable;
    use mpidd_types::TargetAbi;

    #[test]
    fn the_layouts_a_process_was_built_with_pass_and_shifted_ones_do_not() {
        for abi in [TargetAbi::X86_64, TargetAbi::POWERPC] {
            let word = abi.address_bytes() as u64;
            let mut s = SyntheticOmpi::new(abi, SyntheticOmpi::layouts(word));
            s.world();
            let self_comm = s.comm(&CommSpec {
                name: "MPI_COMM_SELF".to_string(),
                rank: 0,
                members: vec![1],
                ..CommSpec::default()
            });
            let (memory, mut symbols, layouts) = s.finish();
            symbols.insert(SYNTHETIC_OBJECT, "ompi_mpi_comm_self", self_comm, 0);
            check_layouts(&memory, &symbols, &layouts, &Limits::default())
                .unwrap_or_else(|e| panic!("{abi:?}: {e}"));

            // The same layouts with the name eight bytes further on: a
            // profile of a build with one more member before it.
            let mut shifted = LayoutTable::default();
            let name = layouts.member("ompi_communicator_t", "c_name").unwrap();
            shifted.add_type(
                "ompi_communicator_t",
                layouts.size_of("ompi_communicator_t").unwrap(),
            );
            shifted.add_member("ompi_communicator_t", "c_name", name.offset + 8, name.size);
            let refused = check_layouts(&memory, &symbols, &shifted, &Limits::default())
                .expect_err("a shifted name cannot read MPI_COMM_WORLD");
            assert!(refused.0.contains("ompi_mpi_comm_world"), "{refused}");
        }
    }
}
