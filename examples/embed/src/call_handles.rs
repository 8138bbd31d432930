//! What the handles of the MPI call the rank stopped in mean: at
//! `MPI_Recv`'s entry, its communicator and datatype arguments, taken from
//! the registers the tracer holds and resolved through `mpihandles` over
//! the tracer's own memory reader, objects and types.

use mpidd_read::{Layouts, Limits, TargetParts};
use mpihandles::{
    open_resolver, Availability, Details, HandleKind, HandleView, OpenResolverError,
    OpenedResolver, ProfileLayouts,
};
use serde::Serialize;

use crate::memory::PtraceMemory;
use crate::reading::{HandleLayouts, RankReader};

/// The functions whose handles are shown, with the x86_64 SysV argument
/// registers of their communicator and datatype:
/// `MPI_Recv(buf, count, datatype, source, tag, comm, status)` has the
/// datatype third (rdx) and the communicator sixth (r9).
const CALLS: &[&str] = &["MPI_Recv", "PMPI_Recv"];

/// One argument handle as shown: the value the call got and what it means,
/// or why it could not be resolved.
#[derive(Clone, Debug, Serialize)]
pub struct ArgumentView {
    /// The handle's value as the resolver takes it: an MPICH int handle
    /// sign-extended, an Open MPI pointer as is (the register's whole
    /// word when no resolver could be made).
    pub value: i64,
    /// Its view, as `mpidd handle --json` prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub view: Option<HandleView>,
    /// Why it could not be resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The call the rank stopped at, and what its handles mean.
#[derive(Clone, Debug, Serialize)]
pub struct CallView {
    /// The function, as the breakpoint names it.
    pub function: String,
    /// Its communicator argument.
    pub comm: ArgumentView,
    /// Its datatype argument.
    pub datatype: ArgumentView,
}

/// The raw argument registers of a stop at a function's entry.
#[derive(Clone, Copy, Debug)]
pub struct CallRegisters {
    /// The third argument (rdx): `MPI_Recv`'s datatype.
    pub rdx: u64,
    /// The sixth argument (r9): `MPI_Recv`'s communicator.
    pub r9: u64,
}

/// The handles of `function`'s call, when it is one whose handles are
/// known; `None` for any other function. A resolver that cannot be made
/// shows its reason on both arguments.
pub fn call_view(
    reader: &RankReader,
    memory: &PtraceMemory,
    function: &str,
    regs: CallRegisters,
) -> Option<CallView> {
    if !CALLS.contains(&function) {
        return None;
    }
    let opened = open_with_kept_layouts(reader, memory);
    let (comm, datatype) = match opened {
        Ok(opened) => {
            let value = |word: u64| handle_value(opened.handles_are_pointers(), word);
            (
                argument(&opened, memory, reader, HandleKind::Comm, value(regs.r9)),
                argument(
                    &opened,
                    memory,
                    reader,
                    HandleKind::Datatype,
                    value(regs.rdx),
                ),
            )
        }
        Err(e) => {
            let failed = |word: u64| ArgumentView {
                value: word as i64,
                view: None,
                error: Some(crate::stop_loop::error_chain(&e)),
            };
            (failed(regs.r9), failed(regs.rdx))
        }
    };
    Some(CallView {
        function: function.to_string(),
        comm,
        datatype,
    })
}

/// The process's resolver, on the layouts an earlier stop chose when there
/// was one (handed in as the only source, so nothing is chosen again);
/// else chosen now (the DWARF when it answers, else the profile of the
/// library's build) and the choice kept.
fn open_with_kept_layouts<'a>(
    reader: &'a RankReader,
    memory: &'a PtraceMemory,
) -> Result<OpenedResolver<'a>, OpenResolverError> {
    let limits = Limits::default();
    let kept: Option<&dyn Layouts> = match reader.handle_layouts() {
        Some(HandleLayouts::Dwarf) => Some(reader.dwarf()),
        Some(HandleLayouts::Profile(i)) => reader.profiles().get(i).map(|p| &p.layouts as _),
        None => None,
    };
    if let Some(layouts) = kept {
        if let Ok(opened) = open_resolver(
            memory,
            reader.objects(),
            reader.objects(),
            layouts,
            &[],
            limits,
        ) {
            return Ok(opened);
        }
    }
    let opened = open_resolver(
        memory,
        reader.objects(),
        reader.objects(),
        reader.dwarf(),
        reader.profiles(),
        limits,
    )?;
    let chosen = match &opened.profile {
        Some(ProfileLayouts { origin, .. }) if origin.profile().is_some() => reader
            .profiles()
            .iter()
            .position(|p| Some(&p.identity) == origin.profile())
            .map(HandleLayouts::Profile),
        _ => Some(HandleLayouts::Dwarf),
    };
    if let Some(chosen) = chosen {
        reader.keep_handle_layouts(chosen);
    }
    Ok(opened)
}

/// A register's word as a handle value: Open MPI's handles are pointers,
/// MPICH's are C ints, passed in the register's low 32 bits (the upper
/// ones are not defined by the ABI).
fn handle_value(pointers: bool, word: u64) -> i64 {
    if pointers {
        word as i64
    } else {
        i64::from(word as u32 as i32)
    }
}

/// One handle resolved; a communicator whose resolver could not read its
/// world rank gets it from the process as `mpidd handle` does.
fn argument(
    opened: &OpenedResolver<'_>,
    memory: &PtraceMemory,
    reader: &RankReader,
    kind: HandleKind,
    value: i64,
) -> ArgumentView {
    match opened.resolver().resolve(kind, value) {
        Ok(mut view) => {
            if let Details::Comm(comm) = &mut view.details {
                fill_world_rank(&mut comm.world_rank, memory, reader, opened.layouts);
            }
            ArgumentView {
                value,
                view: Some(view),
                error: None,
            }
        }
        Err(e) => ArgumentView {
            value,
            view: None,
            error: Some(crate::stop_loop::error_chain(&e)),
        },
    }
}

/// The world rank by the other ways `mpiq_core::world_rank` knows (the MPI
/// library's globals, the launcher's environment), when the communicator's
/// decoder could not read it.
fn fill_world_rank(
    field: &mut Availability<i32>,
    memory: &PtraceMemory,
    reader: &RankReader,
    layouts: &dyn Layouts,
) {
    if let Availability::NotAvailable { reason } = field {
        let parts = TargetParts {
            memory,
            symbols: reader.objects(),
            layouts,
        };
        *field = match mpiq_core::world_rank(&parts, &Limits::default()) {
            Ok(found) => Availability::Value(found.rank),
            Err(e) => Availability::not_available(format!("{reason}; {e}")),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_int_handle_is_the_registers_low_half_and_a_pointer_the_whole_word() {
        // MPICH's communicator handles have the top bit set: negative ints,
        // whatever the register's upper half holds.
        assert_eq!(handle_value(false, 0xdead_beef_8400_0004), -0x7bff_fffc);
        assert_eq!(handle_value(false, 0x4c00_0101), 0x4c00_0101);
        assert_eq!(
            handle_value(true, 0x0000_5651_3d33_f2c0),
            0x5651_3d33_f2c0_i64
        );
    }
}
