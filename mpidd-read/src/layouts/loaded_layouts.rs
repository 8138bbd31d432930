//! The layouts a process or core gives as a [`Target`](crate::Target): the
//! DWARF of its loaded objects, and, for the types that DWARF lacks, the
//! shipped profiles made for the very builds it has loaded. So a stripped
//! distribution library that mpidd ships a profile for (Debian's Open MPI
//! and MPICH) reads through the plain `detect(&target)` path, as its
//! debug build does.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::dwarf::type_oracle::TypeOracle;
use crate::layouts::layered_layouts::shipped_profiles_for_loaded_builds;
use crate::layouts::layout_error::LayoutError;
use crate::layouts::layout_profile::{LayoutOrigin, LayoutProfile};
use crate::layouts::{Layouts, Member};
use crate::symbols::elf_symbols::ElfSymbols;

/// A loaded process's types: its DWARF first, then the shipped profiles
/// that describe its loaded builds (chosen by build key: the build-id,
/// else the digest of the code; with every other object a profile
/// describes loaded in the build it was made for).
pub struct LoadedLayouts {
    dwarf: TypeOracle,
    profiles: Vec<&'static LayoutProfile>,
    /// Which source answered so far, for [`Layouts::origin`]: the DWARF,
    /// and the index of the first profile that answered, plus one.
    dwarf_answered: AtomicBool,
    profile_answered: AtomicUsize,
}

impl std::fmt::Debug for LoadedLayouts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedLayouts")
            .field(
                "profiles",
                &self
                    .profiles
                    .iter()
                    .map(|p| &p.identity.build)
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl LoadedLayouts {
    /// The layouts of the objects `symbols` lists: their DWARF (read on
    /// first question), and the shipped profiles for the builds loaded.
    /// Only objects a shipped profile names are opened for their
    /// build-ids.
    pub fn new(symbols: &ElfSymbols) -> LoadedLayouts {
        Self::of_objects(symbols)
    }

    /// The layouts of `objects` (a debugger's own list, say): their DWARF,
    /// and the shipped profiles for the builds loaded.
    pub fn of_objects(
        objects: &dyn crate::symbols::loaded_objects::LoadedObjects,
    ) -> LoadedLayouts {
        let profiles = shipped_profiles_for_loaded_builds(objects);
        LoadedLayouts {
            dwarf: TypeOracle::from_objects(objects),
            profiles,
            dwarf_answered: AtomicBool::new(false),
            profile_answered: AtomicUsize::new(0),
        }
    }

    /// The DWARF part alone.
    pub fn dwarf(&self) -> &TypeOracle {
        &self.dwarf
    }

    /// The shipped profiles that answer what the DWARF does not.
    pub fn profiles(&self) -> impl Iterator<Item = &LayoutProfile> {
        self.profiles.iter().copied()
    }

    /// The DWARF's answer, else the first profile's, else the DWARF's
    /// error.
    fn answer<T>(
        &self,
        ask: impl Fn(&dyn Layouts) -> Result<T, LayoutError>,
    ) -> Result<T, LayoutError> {
        match ask(&self.dwarf) {
            Ok(answer) => {
                self.dwarf_answered.store(true, Ordering::Relaxed);
                Ok(answer)
            }
            Err(e) => {
                let (i, answer) = self
                    .profiles
                    .iter()
                    .enumerate()
                    .find_map(|(i, p)| Some((i, ask(&p.layouts).ok()?)))
                    .ok_or(e)?;
                let _ = self.profile_answered.compare_exchange(
                    0,
                    i + 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                Ok(answer)
            }
        }
    }
}

impl Layouts for LoadedLayouts {
    /// The first shipped profile that answered a question, if any did
    /// (the build is stripped, or its DWARF lacks what the profile has);
    /// else the DWARF, if it answered; else `None`.
    fn origin(&self) -> Option<LayoutOrigin> {
        match self.profile_answered.load(Ordering::Relaxed) {
            0 => self
                .dwarf_answered
                .load(Ordering::Relaxed)
                .then_some(LayoutOrigin::Dwarf),
            i => Some(LayoutOrigin::Profile(self.profiles[i - 1].identity.clone())),
        }
    }

    fn size_of(&self, type_name: &str) -> Result<u64, LayoutError> {
        self.answer(|l| l.size_of(type_name))
    }

    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        self.answer(|l| l.member(type_name, path))
    }

    fn member_offset(&self, type_name: &str, path: &str) -> Result<u64, LayoutError> {
        self.answer(|l| l.member_offset(type_name, path))
    }

    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
        self.answer(|l| l.enumerators(type_name))
    }

    fn member_enumerators(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, i128)>, LayoutError> {
        self.answer(|l| l.member_enumerators(type_name, path))
    }

    fn member_fields(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, Member)>, LayoutError> {
        self.answer(|l| l.member_fields(type_name, path))
    }
}
