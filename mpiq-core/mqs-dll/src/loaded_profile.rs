//! The layout profile of the MPI build a process runs, seen through a
//! debugger.
//!
//! The message-queue interface gives a library a type's size and a named
//! member's offset, nothing about member widths or enumerators, and on a
//! distribution's stripped MPI (Debian's Open MPI and MPICH) not even
//! those; Debian's MPICH also hides the globals the decoders start from.
//! What the interface does give is the target's memory and symbols, and
//! that is enough to tell which build a process runs: the dynamic linker's
//! list (`_r_debug`) names every loaded object and where it sits, and each
//! object's mapped headers carry its build-id. The layout profile made for
//! that build (one that mpidd ships, or one named in [`PROFILES_VAR`])
//! then answers every question the decoder asks, and its symbols, placed
//! at the library's load bias, stand in for the hidden ones.

use std::collections::HashMap;

use mpidd_read::link_map::{loaded_build_ids, r_debug_address};
use mpidd_read::{
    choose_layouts, companion_profiles_of, object_arch, shipped_profiles, so_stem, LayoutOrigin,
    LayoutProfile, LayoutTable, Layouts, Limits, StatedBuild, Symbol, SymbolSource, TargetMemory,
};
use mpidd_types::TargetAddr;
use mpiq_core::DecoderKind;

/// The environment variable naming more profiles for the library to read
/// besides the ones it ships: files written by `mpidd profile write`,
/// separated by colons. A debugger's user sets it before the debugger
/// loads the library.
pub(crate) const PROFILES_VAR: &str = "MPIDD_PROFILES";

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

/// The profile chosen for a process, with the symbols it gives.
pub(crate) struct LoadedProfile {
    pub(crate) profile: LayoutProfile,
    /// The profile's symbols of the library, at their run-time addresses.
    pub(crate) symbols: HashMap<String, Symbol>,
    /// How it was chosen: by the build, or by its release family.
    pub(crate) origin: LayoutOrigin,
}

/// The profile that describes the MPI of this process, chosen as the
/// native commands choose one: the build-id of the loaded library (the
/// first loaded object whose name is one of `stems` up to `.so`) picks
/// it, and the other objects it describes must be the builds it was made
/// for. `kind`'s decoder must find every layout it needs there.
///
/// The debugger's types are not asked: the interface cannot say what a
/// member's width or an enumerator's value is. A build no shipped profile
/// describes gets one written by `mpidd profile write` and named in
/// [`PROFILES_VAR`].
pub(crate) fn loaded_profile<M: TargetMemory + ?Sized>(
    memory: &M,
    symbols: &dyn SymbolSource,
    kind: DecoderKind,
    stems: &[&str],
    version: &str,
    limits: &Limits,
) -> Result<LoadedProfile, String> {
    let missing = |l: &dyn Layouts| kind.missing_layouts(l);
    let profiles = profiles()?;
    let LoadedObjects {
        library,
        build_id,
        companions,
    } = loaded_objects(memory, symbols, stems, &profiles, limits)?;
    let build_id = build_id?;
    let version = (!version.is_empty()).then_some(version);
    // A release family is matched on the library's architecture, read
    // from its file when the debugger's machine has it at the path the
    // process loaded, as its code digest is.
    let arch = library
        .name
        .starts_with('/')
        .then(|| object_arch(std::path::Path::new(&library.name)).ok())
        .flatten();
    let stated = match (version, arch.as_deref()) {
        (Some(version), Some(arch)) => Some(StatedBuild {
            implementation: kind.implementation(),
            version,
            arch,
            // The debugger's image gives the version, not the device:
            // the check on the process tells the devices apart.
            device: None,
        }),
        _ => None,
    };
    let (_, origin) = choose_layouts(
        &LayoutTable::default(),
        &missing,
        &library.name,
        build_id.as_deref(),
        version,
        &profiles,
        &companions,
        stated,
    )
    .map_err(|e| {
        format!(
            "{e} Under a debugger there is no --profile: name the profile file in \
             {PROFILES_VAR} before the debugger loads this library."
        )
    })?;
    // choose_layouts took the first profile that fits (by the build, else
    // by its family); the same again, owned, for the process to keep.
    let id = build_id.unwrap_or_default();
    let chosen = match &origin {
        LayoutOrigin::Family(f) => profiles
            .iter()
            .position(|p| p.declares_family() && p.identity == f.identity),
        _ => profiles
            .iter()
            .position(|p| p.describes(&id) && p.companion_mismatch(&companions).is_none()),
    }
    .ok_or_else(|| "no profile fits, though one was chosen".to_string())?;
    let mut profile = profiles[chosen].clone();
    // A family may be one of the profile's variants, whose layouts are
    // not the profile's own.
    if let (LayoutOrigin::Family(f), Some(stated)) = (&origin, stated) {
        if let Some((_, layouts)) = profiles[chosen]
            .families()
            .find(|(family, _)| **family == f.family && family.contains(&stated))
        {
            profile.layouts = layouts.clone();
        }
    }
    // The profiles of the libraries under the MPI library (UCX's), each
    // made for the very build loaded: their types join the process's one
    // table, where the MPI library's own answers stay first.
    for other in companion_profiles_of(&companions, &library.name, &profiles) {
        profile.layouts.fill_from(&other.layouts);
    }
    // The profile names the library by the file it was made for; the
    // link map by the path the process opened (a soname's link).
    let described: Vec<&str> = profile
        .identity
        .objects
        .iter()
        .filter(|o| o.made_for(&id))
        .map(|o| o.name.as_str())
        .collect();
    let symbols = profile
        .symbols
        .iter()
        .filter(|(_, s)| described.contains(&s.object.as_str()))
        .map(|(name, s)| {
            let symbol = Symbol {
                name: name.clone(),
                addr: TargetAddr(s.address.wrapping_add(library.bias)),
                size: s.size,
                object: library.name.clone(),
            };
            (name.clone(), symbol)
        })
        .collect();
    Ok(LoadedProfile {
        profile,
        symbols,
        origin,
    })
}

/// The MPI library and the objects loaded beside it, from the dynamic
/// linker's list.
struct LoadedObjects {
    library: mpidd_read::link_map::LinkMapEntry,
    /// The library's build-id, or why it could not be read.
    build_id: Result<Option<Vec<u8>>, String>,
    /// Every other loaded object a profile names, with its build-id.
    companions: Vec<(String, Option<Vec<u8>>)>,
}

/// The MPI library (the first loaded object whose name is one of `stems`
/// up to `.so`) and the loaded objects `profiles` name.
fn loaded_objects<M: TargetMemory + ?Sized>(
    memory: &M,
    symbols: &dyn SymbolSource,
    stems: &[&str],
    profiles: &[LayoutProfile],
    limits: &Limits,
) -> Result<LoadedObjects, String> {
    let at = r_debug(memory, symbols, limits)?;
    let is_library = |name: &str| stems.contains(&so_stem(name));
    let wanted = |name: &str| is_library(name) || profiles.iter().any(|p| p.mentions(name));
    let mut loaded = loaded_build_ids(memory, at, &wanted, limits)
        .map_err(|e| format!("reading the dynamic linker's list of loaded objects: {e}"))?;
    // An object linked without a build-id (pip's MPI wheels) is known by
    // the digest of its code, read from the file the process loaded when
    // the debugger's machine has it at that path: the profile chosen by it
    // is then checked on the process before use.
    for (entry, id) in &mut loaded {
        if matches!(id, Ok(None)) && entry.name.starts_with('/') {
            if let Ok(Some(key)) = mpidd_read::build_key(std::path::Path::new(&entry.name)) {
                *id = Ok(Some(key.bytes().to_vec()));
            }
        }
    }
    let library = loaded
        .iter()
        .find(|(e, _)| is_library(&e.name))
        .ok_or_else(|| format!("the dynamic linker's list has no {}", stems.join(" or ")))?;
    let build_id = match &library.1 {
        Ok(id) => Ok(id.clone()),
        Err(e) => Err(format!("the build-id of {}: {e}", library.0.name)),
    };
    let companions = loaded
        .iter()
        .filter(|(e, _)| e.node != library.0.node)
        .map(|(e, id)| (e.name.clone(), id.as_ref().ok().cloned().flatten()))
        .collect();
    Ok(LoadedObjects {
        library: library.0.clone(),
        build_id,
        companions,
    })
}

/// For an MPI library whose own layouts come from the debugger (a debug
/// build), the layouts of the libraries loaded beside it (UCX's), from the
/// profiles made for their very builds, in one table.
pub(crate) fn companion_layouts<M: TargetMemory + ?Sized>(
    memory: &M,
    symbols: &dyn SymbolSource,
    stems: &[&str],
    limits: &Limits,
) -> Result<LayoutTable, String> {
    let profiles = profiles()?;
    let loaded = loaded_objects(memory, symbols, stems, &profiles, limits)?;
    let mut table = LayoutTable::default();
    for p in companion_profiles_of(&loaded.companions, &loaded.library.name, &profiles) {
        table.fill_from(&p.layouts);
    }
    Ok(table)
}

/// The symbols a profile gives for the globals a stripped library hides,
/// then the debugger's. The profile's come first: they carry the sizes the
/// interface's `mqs_find_symbol` cannot give (a pool's length is its
/// array's size), and they were made for this very build.
pub(crate) struct WithProfileSymbols<'a> {
    pub(crate) debugger: &'a dyn SymbolSource,
    pub(crate) profile: &'a HashMap<String, Symbol>,
}

impl SymbolSource for WithProfileSymbols<'_> {
    fn lookup(&self, name: &str) -> Option<Symbol> {
        self.profile
            .get(name)
            .cloned()
            .or_else(|| self.debugger.lookup(name))
    }

    fn searched_objects(&self) -> Vec<String> {
        self.debugger.searched_objects()
    }
}
