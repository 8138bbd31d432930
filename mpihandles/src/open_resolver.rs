//! The handle resolver for a process, with its layouts chosen: which MPI
//! the process loaded (Open MPI or MPICH, by a symbol only each has), and
//! whether its layouts come from the library's DWARF or, when that lacks
//! an answer a resolver needs, from a shipped or user profile made for the
//! library's build-id.
//!
//! It stands on the resolvers of `mpich/` and `ompi/` and on
//! `mpidd-read`'s profile choice; neither implementation's folder imports
//! it.

use mpidd_read::{
    choose_loaded_layouts, LayoutError, LayoutOrigin, LayoutProfile, Layouts, Limits,
    LoadedObjects, NoLayouts, SymbolSource, TargetMemory,
};

use crate::error::HandleError;
use crate::handle_resolver::HandleResolver;
use crate::mpich::{mpich_missing_layouts, Mpich};
use crate::ompi::{ompi_missing_layouts, Ompi};

/// Open MPI's library, found by a symbol only it exports.
const OMPI_SYMBOL: &str = "ompi_comm_f_to_c_table";
/// Open MPI's version string, for matching a profile.
const OMPI_VERSION_SYMBOL: &str = "opal_version_string";

/// MPICH's library, found by a symbol every build of it has (in Debian's
/// stripped one only through its profile's symbols).
const MPICH_SYMBOL: &str = "MPIR_Comm_builtin";
/// MPICH's version string, for matching a profile.
const MPICH_VERSION_SYMBOL: &str = "MPII_Version_string";

/// The longest version string read to match a profile.
const VERSION_LEN: usize = 64;

/// Why no resolver could be made.
#[derive(Debug, thiserror::Error)]
pub enum OpenResolverError {
    /// Neither the MPI library's DWARF nor a layout profile answers what
    /// the resolver needs.
    #[error(transparent)]
    NoLayouts(#[from] NoLayouts),
    /// The resolver refused the process (e.g. a symbol it needs is
    /// missing).
    #[error(transparent)]
    Handle(#[from] HandleError),
    /// The profile made for the library's build did not read the
    /// process's predefined objects as what they are
    /// ([`check_layouts`](crate::check_layouts)), so it was not used.
    #[error("{0}")]
    ProfileRefused(String),
}

/// The resolver chosen for a process.
pub enum ChosenResolver<'a> {
    /// Open MPI's.
    Ompi(Box<Ompi<'a>>),
    /// MPICH's.
    Mpich(Box<Mpich<'a>>),
}

/// A process's handle resolver and what it was chosen with.
pub struct OpenedResolver<'a> {
    /// The resolver.
    pub resolver: ChosenResolver<'a>,
    /// The layouts it reads with (for other readers of the same library,
    /// e.g. the world rank).
    pub layouts: &'a dyn Layouts,
    /// When the layouts came from a profile, which.
    pub profile: Option<ProfileLayouts>,
}

/// Layouts taken from a profile rather than the library's DWARF.
#[derive(Clone, Debug)]
pub struct ProfileLayouts {
    /// The MPI library's name, as its symbols name it.
    pub library: String,
    /// The profile (a [`LayoutOrigin::Profile`], or a
    /// [`LayoutOrigin::Family`] when chosen by its release family).
    pub origin: LayoutOrigin,
}

impl OpenedResolver<'_> {
    /// The resolver, as every handle kind takes it.
    pub fn resolver(&self) -> &dyn HandleResolver {
        match &self.resolver {
            ChosenResolver::Ompi(r) => r.as_ref(),
            ChosenResolver::Mpich(r) => r.as_ref(),
        }
    }

    /// Whether the process's C handles are pointers (Open MPI's are, and
    /// those of a program built against the MPI-5 ABI on MPICH's
    /// `libmpi_abi`; MPICH's are ints, but for ROMIO's files).
    pub fn handles_are_pointers(&self) -> bool {
        match &self.resolver {
            ChosenResolver::Ompi(_) => true,
            ChosenResolver::Mpich(m) => m.holds_abi_handles(),
        }
    }
}

/// Makes the handle resolver for a process: Open MPI's when it exports
/// `ompi_comm_f_to_c_table`, else MPICH's. Its layouts are `dwarf` (the
/// loaded objects' DWARF, e.g. a `TypeOracle`, or any `Layouts`) when
/// that answers every question the resolver asks, else a profile from
/// `profiles` made for the MPI library's build-id; a process with neither
/// MPI's symbol is given MPICH's resolver on `dwarf`, which then names
/// what is missing.
pub fn open_resolver<'a>(
    memory: &'a dyn TargetMemory,
    symbols: &'a dyn SymbolSource,
    objects: &dyn LoadedObjects,
    dwarf: &'a dyn Layouts,
    profiles: &'a [LayoutProfile],
    limits: Limits,
) -> Result<OpenedResolver<'a>, OpenResolverError> {
    if symbols.lookup(OMPI_SYMBOL).is_some() {
        let (layouts, profile) = library_layouts(
            memory,
            symbols,
            objects,
            dwarf,
            profiles,
            &limits,
            (OMPI_SYMBOL, OMPI_VERSION_SYMBOL, "Open MPI"),
            &ompi_missing_layouts,
        )?;
        return Ok(OpenedResolver {
            resolver: ChosenResolver::Ompi(Box::new(Ompi::from_parts(
                memory, symbols, layouts, limits,
            )?)),
            layouts,
            profile,
        });
    }
    let (layouts, profile) = if symbols.lookup(MPICH_SYMBOL).is_some() {
        library_layouts(
            memory,
            symbols,
            objects,
            dwarf,
            profiles,
            &limits,
            (MPICH_SYMBOL, MPICH_VERSION_SYMBOL, "MPICH"),
            &mpich_missing_layouts,
        )?
    } else {
        (dwarf, None)
    };
    Ok(OpenedResolver {
        resolver: ChosenResolver::Mpich(Box::new(Mpich::from_parts(
            memory, symbols, layouts, limits,
        )?)),
        layouts,
        profile,
    })
}

/// The layouts of the library that defines `symbol`: `dwarf` when it has
/// every answer `missing` requires, else its build's profile.
#[allow(clippy::too_many_arguments)]
fn library_layouts<'a>(
    memory: &dyn TargetMemory,
    symbols: &dyn SymbolSource,
    objects: &dyn LoadedObjects,
    dwarf: &'a dyn Layouts,
    profiles: &'a [LayoutProfile],
    limits: &Limits,
    (symbol, version_symbol, implementation): (&str, &str, &str),
    missing: &dyn Fn(&dyn Layouts) -> Vec<LayoutError>,
) -> Result<(&'a dyn Layouts, Option<ProfileLayouts>), OpenResolverError> {
    let library = symbols.lookup(symbol).map(|s| s.object).unwrap_or_default();
    let stated_string = |name: &str| {
        symbols.lookup(name).and_then(|s| {
            let raw = memory
                .read_c_string(s.addr, VERSION_LEN.min(limits.max_string_len))
                .ok()?;
            Some(String::from_utf8_lossy(&raw).into_owned())
        })
    };
    let version = stated_string(version_symbol);
    // MPICH's device decides which of its families may hold the build.
    let device = if implementation == "MPICH" {
        stated_string("MPII_Version_device").filter(|d| !d.is_empty())
    } else {
        None
    };
    let (layouts, origin) = choose_loaded_layouts(
        dwarf,
        missing,
        &library,
        Some(implementation),
        version.as_deref(),
        device.as_deref(),
        objects,
        profiles,
    )?;
    let profile = origin
        .profile()
        .is_some()
        .then_some(ProfileLayouts { library, origin });
    // A profile is chosen by the build's key alone, or by the release
    // family the library states it is of; either way the objects every
    // MPI process knows must read as what they are through it before it
    // is used.
    if let Some(ProfileLayouts { origin, .. }) = &profile {
        if let Err(why) = crate::layout_check::check_layouts(memory, symbols, layouts.first(), limits) {
            return Err(OpenResolverError::ProfileRefused(format!(
                "{} was not used, because it does not read this process: {why}",
                origin.source_text()
            )));
        }
    }
    // The resolvers borrow one source for the process's lifetime; the
    // views read UCX only through `ucp_request_t`, which the shipped MPI
    // profiles describe themselves.
    Ok((layouts.first(), profile))
}

#[cfg(all(test, feature = "synthetic"))]
mod tests {
    use super::*;
    use crate::model::HandleKind;
    use crate::ompi::SyntheticOmpi;
    use mpidd_read::TypeOracle;
    use mpidd_types::TargetAbi;

    #[test]
    fn a_process_without_mpi_gets_mpich_which_refuses_it() {
        let memory = mpidd_read::SyntheticMemory::new(TargetAbi::X86_64);
        let symbols = mpidd_read::SymbolTable::new();
        let objects = mpidd_read::ElfSymbols::default();
        let dwarf = TypeOracle::from_symbols(&objects);
        let opened = open_resolver(&memory, &symbols, &objects, &dwarf, &[], Limits::default());
        match opened {
            Err(OpenResolverError::Handle(e)) => assert!(!e.to_string().is_empty()),
            Err(e) => panic!("expected MPICH's refusal, got {e}"),
            Ok(_) => panic!("an empty process has no MPICH"),
        }
    }

    #[test]
    fn open_mpi_symbols_choose_open_mpi_on_complete_layouts() {
        for abi in [TargetAbi::X86_64, TargetAbi::POWERPC] {
            let mut s = SyntheticOmpi::new(abi, SyntheticOmpi::layouts(abi.address_bytes() as u64));
            let world = s.world();
            let (memory, symbols, layouts) = s.finish();
            let objects = mpidd_read::ElfSymbols::default();
            let opened = open_resolver(
                &memory,
                &symbols,
                &objects,
                &layouts,
                &[],
                Limits::default(),
            )
            .unwrap_or_else(|e| panic!("{abi:?}: {e}"));
            assert!(opened.handles_are_pointers());
            assert!(opened.profile.is_none(), "complete layouts need no profile");
            let view = opened
                .resolver()
                .resolve(HandleKind::Comm, world.0 as i64)
                .unwrap();
            assert_eq!(view.predefined_name.as_deref(), Some("MPI_COMM_WORLD"));
        }
    }
}
