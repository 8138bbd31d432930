//! The layouts of an Open MPI process seen through a debugger.
//!
//! The message-queue interface gives a library a type's size and a named
//! member's offset, nothing about member widths or enumerators, and on
//! Debian's stripped Open MPI not even those. What it does give is the
//! target's memory and symbols, and that is enough to tell which build of
//! Open MPI a process runs: the dynamic linker's list (`_r_debug`) names
//! every loaded object and where it sits, and each object's mapped
//! headers carry its build-id. The layout profile made for that build
//! (one that mpidd ships, or one named in [`PROFILES_VAR`]) then answers
//! every question the ob1 decoder asks.

use mpidd_read::link_map::{loaded_build_ids, r_debug_address};
use mpidd_read::{
    choose_layouts, shipped_profiles, so_stem, LayoutProfile, LayoutTable, Layouts, Limits,
    SymbolSource, TargetMemory,
};
use mpidd_types::TargetAddr;
use mpiq_core::DecoderKind;

/// The environment variable naming more profiles for the library to read
/// besides the ones it ships: files written by `mpidd profile write`,
/// separated by colons. A debugger's user sets it before the debugger
/// loads the library.
pub(crate) const PROFILES_VAR: &str = "MPIDD_PROFILES";

/// The library whose build-id picks the profile.
const LIBRARY_STEM: &str = "libmpi";

/// The shipped profiles and those [`PROFILES_VAR`] names.
fn profiles() -> Result<Vec<LayoutProfile>, String> {
    let mut all = shipped_profiles();
    if let Some(paths) = std::env::var_os(PROFILES_VAR) {
        for path in std::env::split_paths(&paths).filter(|p| !p.as_os_str().is_empty()) {
            all.push(
                LayoutProfile::load(&path)
                    .map_err(|e| format!("{PROFILES_VAR} names {}: {e}", path.display()))?,
            );
        }
    }
    Ok(all)
}

/// Where `struct r_debug` is: ld.so's exported `_r_debug`, or through the
/// executable's `_DYNAMIC` when the debugger's symbol lookup does not reach
/// ld.so.
fn r_debug<M: TargetMemory + ?Sized>(
    memory: &M,
    symbols: &dyn SymbolSource,
    limits: &Limits,
) -> Result<TargetAddr, String> {
    if let Some(s) = symbols.lookup("_r_debug") {
        return Ok(s.addr);
    }
    let dynamic = symbols.lookup("_DYNAMIC").ok_or(
        "the debugger's mqs_find_symbol finds neither _r_debug (the dynamic linker's) nor \
         _DYNAMIC (the executable's), so the loaded objects and their build-ids, which pick \
         the layout profile of a build without debug info, cannot be found",
    )?;
    r_debug_address(memory, dynamic.addr, limits)
        .map_err(|e| format!("reading the executable's dynamic section: {e}"))?
        .ok_or_else(|| "the executable's DT_DEBUG is empty: no dynamic linker list".to_string())
}

/// The profile that describes the Open MPI of this process, chosen as the
/// native commands choose one: the build-id of the loaded `libmpi` picks
/// it, and the other objects it describes must be the builds it was made
/// for.
///
/// The debugger's types are not asked: the interface cannot say what an
/// ob1 member's width or an enumerator's value is, and this library holds
/// no declarations of Open MPI's to complete them with, as it does for
/// MPICH's CH4. A build no shipped profile describes gets one written by
/// `mpidd profile write` and named in [`PROFILES_VAR`].
pub(crate) fn ompi_profile<M: TargetMemory + ?Sized>(
    memory: &M,
    symbols: &dyn SymbolSource,
    version: &str,
    limits: &Limits,
) -> Result<LayoutProfile, String> {
    let missing = |l: &dyn Layouts| DecoderKind::OmpiOb1.missing_layouts(l);
    let profiles = profiles()?;
    let at = r_debug(memory, symbols, limits)?;
    let wanted =
        |name: &str| so_stem(name) == LIBRARY_STEM || profiles.iter().any(|p| p.mentions(name));
    let loaded = loaded_build_ids(memory, at, &wanted, limits)
        .map_err(|e| format!("reading the dynamic linker's list of loaded objects: {e}"))?;
    let library = loaded
        .iter()
        .find(|(e, _)| so_stem(&e.name) == LIBRARY_STEM)
        .ok_or("the dynamic linker's list has no libmpi")?;
    let build_id = match &library.1 {
        Ok(id) => id.clone(),
        Err(e) => return Err(format!("the build-id of {}: {e}", library.0.name)),
    };
    let companions: Vec<(String, Option<Vec<u8>>)> = loaded
        .iter()
        .filter(|(e, _)| so_stem(&e.name) != LIBRARY_STEM)
        .map(|(e, id)| (e.name.clone(), id.as_ref().ok().cloned().flatten()))
        .collect();
    let version = (!version.is_empty()).then_some(version);
    choose_layouts(
        &LayoutTable::default(),
        &missing,
        &library.0.name,
        build_id.as_deref(),
        version,
        &profiles,
        &companions,
    )
    .map_err(|e| {
        format!(
            "{e} Under a debugger there is no --profile: name the profile file in \
             {PROFILES_VAR} before the debugger loads this library."
        )
    })?;
    // choose_layouts took the first profile that fits; the same again,
    // owned, for the process to keep.
    let id = build_id.unwrap_or_default();
    profiles
        .into_iter()
        .find(|p| p.describes(&id) && p.companion_mismatch(&companions).is_none())
        .ok_or_else(|| "no profile fits, though one was chosen".to_string())
}
