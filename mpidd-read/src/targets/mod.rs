//! One process or core as the decoders read it: its memory, the symbols
//! of what it has loaded and the C types of those objects, held together
//! so that every call takes the target once.
//!
//! This folder owns the composites: this module's [`Target`] and
//! [`TargetParts`], [`core_target`] (a core file with the objects it had
//! loaded), [`live_target`] (a running process) and [`gdb_remote_target`]
//! (a process behind gdbserver), and [`target_source`] (opening any of
//! the three by one name, reading it and letting a live one go). They pair a `backend` with `symbols`,
//! `dwarf` and `layouts`; nothing below them depends on this folder.

pub(crate) mod core_target;
pub(crate) mod gdb_remote_target;
#[cfg(all(feature = "live", target_os = "linux"))]
pub(crate) mod live_target;
pub(crate) mod target_source;

use crate::backend::memory::TargetMemory;
use crate::layouts::Layouts;
use crate::symbols::SymbolSource;

/// The memory, symbols and types of one process or core file.
///
/// [`CoreTarget`](crate::CoreTarget), [`LiveTarget`](crate::LiveTarget)
/// and [`GdbRemoteTarget`](crate::GdbRemoteTarget) are targets, with the
/// DWARF of their loaded objects (a [`TypeOracle`](crate::TypeOracle)
/// built on first use) as their layouts. [`TargetParts`] puts one together
/// from separate pieces: layouts from a profile or a table, a synthetic
/// memory, a debugger's own callbacks.
///
/// The MPIR table needs no types and takes anything that is both memory
/// and symbols ([`mpir::read_state`](crate::mpir::read_state)); the queue
/// and handle decoders above take a `&dyn Target`.
pub trait Target {
    /// Its memory.
    fn memory(&self) -> &dyn TargetMemory;
    /// Its symbols, local ones included.
    fn symbols(&self) -> &dyn SymbolSource;
    /// The sizes, member offsets and enumerators of the C types of its
    /// loaded objects (for a decoder: of its MPI library).
    fn layouts(&self) -> &dyn Layouts;
}

/// A [`Target`] made of borrowed parts.
///
/// ```
/// use mpidd_read::{LayoutTable, SymbolTable, SyntheticMemory, Target, TargetParts};
/// use mpidd_types::{TargetAbi, TargetAddr};
///
/// let memory = SyntheticMemory::new(TargetAbi::X86_64);
/// let mut symbols = SymbolTable::new();
/// symbols.insert("libmpi.so", "MPIR_Comm_builtin", TargetAddr(0x1000), 0);
/// let mut layouts = LayoutTable::default();
/// layouts.add_type("MPIR_Comm", 512);
/// let target = TargetParts { memory: &memory, symbols: &symbols, layouts: &layouts };
/// assert_eq!(target.layouts().size_of("MPIR_Comm")?, 512);
/// assert!(target.symbols().lookup("MPIR_Comm_builtin").is_some());
/// # Ok::<(), mpidd_read::LayoutError>(())
/// ```
///
/// Its parts are borrowed as trait objects, which promise no
/// thread-safety, so it is neither `Send` nor `Sync`. It costs nothing to
/// make: share the parts themselves (a [`CoreTarget`](crate::CoreTarget)
/// is `Send + Sync`) and make one in each thread.
#[derive(Clone, Copy)]
pub struct TargetParts<'a> {
    /// Its memory.
    pub memory: &'a dyn TargetMemory,
    /// Its symbols.
    pub symbols: &'a dyn SymbolSource,
    /// Its types.
    pub layouts: &'a dyn Layouts,
}

impl Target for TargetParts<'_> {
    fn memory(&self) -> &dyn TargetMemory {
        self.memory
    }

    fn symbols(&self) -> &dyn SymbolSource {
        self.symbols
    }

    fn layouts(&self) -> &dyn Layouts {
        self.layouts
    }
}

impl<T: Target + ?Sized> Target for &T {
    fn memory(&self) -> &dyn TargetMemory {
        (**self).memory()
    }

    fn symbols(&self) -> &dyn SymbolSource {
        (**self).symbols()
    }

    fn layouts(&self) -> &dyn Layouts {
        (**self).layouts()
    }
}
