//! The layouts of an MPI library together with those of the libraries it
//! runs on: UCX under MPICH's `ch4:ucx` and Open MPI's UCX PML keeps the
//! pending operations in its own types, and its build is not the MPI
//! library's. Each library's answers come from its own source: the MPI
//! library's DWARF, cache entry or profile first, then the profiles made
//! for the very builds of the other libraries loaded beside it (found by
//! their build-ids, as the MPI library's profile is).
//!
//! What the MPI library's own source answers always wins, so a debug build
//! of UCX, whose DWARF the MPI library's oracle already reads, needs no
//! profile. The companions are kept apart from the first source so that a
//! caller which keeps the MPI library's answers per build (the layout
//! cache) keeps only those, never another library's.

use std::path::PathBuf;

use crate::layouts::layout_error::LayoutError;
use crate::layouts::layout_family::StatedBuild;
use crate::layouts::layout_profile::{object_arch, so_stem, FamilyOrigin, LayoutProfile};
use crate::layouts::ucx_version::{ucx_assertions, ucx_stated_version};
use crate::layouts::{LayoutTable, Layouts, Member};
use crate::symbols::loaded_objects::LoadedObjects;

/// One library's layouts (the first source) over the profiles of the
/// libraries loaded beside it, asked in that order.
///
/// ```
/// use mpidd_read::{LayeredLayouts, LayoutTable, Layouts};
///
/// let mut mpi = LayoutTable::default();
/// mpi.add_type("MPIR_Request", 400);
/// let mut ucx = LayoutTable::default();
/// ucx.add_type("ucp_request_t", 216);
/// let both = LayeredLayouts::new(&mpi, vec![&ucx]);
/// assert_eq!(both.size_of("MPIR_Request").unwrap(), 400);
/// assert_eq!(both.size_of("ucp_request_t").unwrap(), 216);
/// // Unknown to both: the first source's error.
/// assert!(both.size_of("ucp_worker_t").is_err());
/// ```
///
/// It borrows its first source as `&dyn Layouts`, which promises no
/// thread-safety, so it is neither `Send` nor `Sync`: it is built per
/// process, on the thread that reads it; share the sources themselves
/// ([`LoadedLayouts`](crate::LoadedLayouts), [`LayoutTable`]), which are.
#[derive(Clone)]
pub struct LayeredLayouts<'a> {
    first: &'a dyn Layouts,
    then: Vec<&'a LayoutTable>,
}

impl std::fmt::Debug for LayeredLayouts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LayeredLayouts")
            .field("companions", &self.then.len())
            .finish_non_exhaustive()
    }
}

impl<'a> LayeredLayouts<'a> {
    /// `first`'s answers, else the first of `then` that answers.
    pub fn new(first: &'a dyn Layouts, then: Vec<&'a LayoutTable>) -> Self {
        LayeredLayouts { first, then }
    }

    /// `first` alone, with no companion.
    pub fn alone(first: &'a dyn Layouts) -> Self {
        LayeredLayouts {
            first,
            then: Vec::new(),
        }
    }

    /// The first source alone: what a cache keeps for the MPI library's
    /// build.
    pub fn first(&self) -> &'a dyn Layouts {
        self.first
    }

    /// The same companions over another first source.
    pub fn over<'b>(&self, first: &'b dyn Layouts) -> LayeredLayouts<'b>
    where
        'a: 'b,
    {
        LayeredLayouts {
            first,
            then: self.then.clone(),
        }
    }

    fn answer<T>(
        &self,
        ask: impl Fn(&dyn Layouts) -> Result<T, LayoutError>,
    ) -> Result<T, LayoutError> {
        ask(self.first).or_else(|e| self.then.iter().find_map(|t| ask(*t).ok()).ok_or(e))
    }
}

impl Layouts for LayeredLayouts<'_> {
    /// The MPI library's own source's; the companions beneath are named
    /// apart by whoever chose them.
    fn origin(&self) -> Option<crate::LayoutOrigin> {
        self.first.origin()
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

/// The shipped profiles made for a build loaded in the process `objects`
/// describes, by build-id, and fitting every other loaded object they
/// describe. Only objects a shipped profile names are opened for their
/// build-ids, and only the profiles made for one of them are parsed.
pub(crate) fn shipped_profiles_for_loaded_builds(
    objects: &dyn LoadedObjects,
) -> Vec<&'static LayoutProfile> {
    let identities = crate::layouts::profile_set::shipped_identities();
    let loaded = loaded_keys(objects, |name| {
        identities.iter().any(|(_, i)| i.mentions(name))
    });
    let keys: Vec<String> = loaded
        .iter()
        .filter_map(|(_, id)| id.as_deref().map(crate::layouts::layout_profile::hex))
        .collect();
    identities
        .iter()
        .filter(|(_, i)| {
            i.objects
                .iter()
                .any(|o| keys.iter().any(|k| o.made_for_hex(k)))
        })
        .filter_map(|(index, _)| crate::layouts::shipped_profiles::shipped_profile(*index))
        .filter(|p| made_for_loaded(p, &loaded))
        .collect()
}

/// Each loaded object some profile names, with its build-id.
fn loaded_build_ids<'a>(
    objects: &dyn LoadedObjects,
    profiles: impl IntoIterator<Item = &'a LayoutProfile> + Clone,
) -> Vec<(String, Option<Vec<u8>>)> {
    loaded_keys(objects, |name| {
        profiles.clone().into_iter().any(|p| p.mentions(name))
    })
}

/// Each object `objects` lists whose name `wanted` takes, with its build
/// key (build-id, else code digest) when it has one: what profiles are
/// chosen by. Only those objects are opened.
pub(crate) fn loaded_keys(
    objects: &dyn LoadedObjects,
    wanted: impl Fn(&str) -> bool,
) -> Vec<(String, Option<Vec<u8>>)> {
    objects
        .loaded_objects()
        .into_iter()
        .filter(|o| wanted(&o.name))
        .map(|o| {
            (
                o.name.clone(),
                crate::symbols::debug_files::build_key(&o.path)
                    .ok()
                    .flatten()
                    .map(|k| k.bytes().to_vec()),
            )
        })
        .collect()
}

/// Whether `profile` describes one of the `loaded` builds and fits every
/// other loaded object it describes.
fn made_for_loaded(profile: &LayoutProfile, loaded: &[(String, Option<Vec<u8>>)]) -> bool {
    let describes_one = loaded
        .iter()
        .any(|(_, id)| id.as_deref().is_some_and(|id| profile.describes(id)));
    describes_one && profile.companion_mismatch(loaded).is_none()
}

/// The profiles of the libraries loaded beside `library` (a loaded
/// object's name), in a process whose loaded objects are `objects`: see
/// [`companion_profiles_of`]; then, for a library loaded beside that no
/// profile names by its build, the profile whose release family holds the
/// version it states ([`family_companion_profiles`]).
pub fn companion_profiles<'a>(
    objects: &dyn LoadedObjects,
    library: &str,
    profiles: &'a [LayoutProfile],
) -> Vec<&'a LayoutProfile> {
    let loaded = loaded_build_ids(objects, profiles.iter());
    let mut chosen = companion_profiles_of(&loaded, library, profiles);
    let listed = objects.loaded_objects();
    let paths: Vec<(String, PathBuf, Option<Vec<u8>>)> = loaded
        .into_iter()
        .filter_map(|(name, id)| {
            let path = listed.iter().find(|o| o.name == name)?.path.clone();
            Some((name, path, id))
        })
        .collect();
    chosen.extend(
        family_companion_profiles(&paths, library, profiles)
            .into_iter()
            .map(|(p, _)| p),
    );
    chosen
}

/// The profiles of libraries loaded beside `library` that no profile
/// names by build key, chosen by the release family that holds the
/// version each states, with the fact that placed it there. `loaded` are
/// the loaded objects by name, with their files and build keys.
///
/// Only a UCX library states a version this way today (its
/// `ucp_get_version_string`, [`ucx_stated_version`]), so only profiles
/// whose family is `UCX` are offered; a family that declares whether its
/// builds have assertions takes only a library that has them or not
/// alike ([`ucx_assertions`]), since they move the worker's members. Such a profile is a candidate, as
/// every family's is: the UCX readers check it on the worker before they
/// read anything through it (its request pool must read as UCX names it).
pub fn family_companion_profiles<'a>(
    loaded: &[(String, PathBuf, Option<Vec<u8>>)],
    library: &str,
    profiles: &'a [LayoutProfile],
) -> Vec<(&'a LayoutProfile, FamilyOrigin)> {
    let mut chosen: Vec<(&'a LayoutProfile, FamilyOrigin)> = Vec::new();
    for (name, path, id) in loaded {
        if so_stem(name) == so_stem(library) || so_stem(name) != UCX_LIBRARY_STEM {
            continue;
        }
        // A build a profile names is that profile's, never a family's.
        if id
            .as_deref()
            .is_some_and(|id| profiles.iter().any(|p| p.describes(id)))
        {
            continue;
        }
        let candidates = || {
            profiles.iter().filter(|p| {
                p.family
                    .as_ref()
                    .is_some_and(|f| f.implementation == UCX_IMPLEMENTATION)
                    && p.identity
                        .objects
                        .first()
                        .is_some_and(|own| so_stem(&own.name) == so_stem(name))
                    && !p.mentions(library)
            })
        };
        if candidates().next().is_none() {
            continue;
        }
        let (Ok(Some(version)), Ok(arch)) = (ucx_stated_version(path), object_arch(path)) else {
            continue;
        };
        let stated = StatedBuild {
            implementation: UCX_IMPLEMENTATION,
            version: &version,
            arch: &arch,
            device: None,
        };
        // Read only when a family declares it.
        let mut assertions = None;
        let found = candidates().find_map(|p| {
            let family = p.family.as_deref()?;
            let same_assertions = match family.assertions {
                None => true,
                Some(want) => {
                    let has =
                        *assertions.get_or_insert_with(|| ucx_assertions(path).ok().flatten());
                    has == Some(want)
                }
            };
            (family.contains(&stated) && same_assertions).then(|| {
                (
                    p,
                    FamilyOrigin {
                        identity: p.identity.clone(),
                        family: family.clone(),
                        stated_version: version.clone(),
                    },
                )
            })
        });
        if let Some((p, origin)) = found {
            if !chosen.iter().any(|(q, _)| std::ptr::eq(*q, p)) {
                chosen.push((p, origin));
            }
        }
    }
    chosen
}

/// The implementation UCX's profiles and families name.
pub const UCX_IMPLEMENTATION: &str = "UCX";

/// The [`so_stem`] of UCX's library (`libucp.so.0`), whose stated version
/// a UCX family is matched on.
pub const UCX_LIBRARY_STEM: &str = "libucp";

/// The profiles of the libraries loaded beside `library`, given the
/// `loaded` objects by name with their build-ids (a debugger's view of the
/// process, say): each profile whose own library (the first object it
/// names) is loaded, is not `library`, and is a build the profile was made
/// for, with every other loaded object it describes fitting too.
/// `library`'s own profile (or DWARF) is chosen apart. For Debian's UCX
/// under any MPI library, this is UCX's profile; an MPI library's profile
/// that also describes UCX's request is not UCX's.
pub fn companion_profiles_of<'a>(
    loaded: &[(String, Option<Vec<u8>>)],
    library: &str,
    profiles: &'a [LayoutProfile],
) -> Vec<&'a LayoutProfile> {
    profiles
        .iter()
        .filter(|p| {
            let own_loaded_as_made = p.identity.objects.first().is_some_and(|own| {
                loaded.iter().any(|(name, id)| {
                    so_stem(name) == so_stem(&own.name)
                        && id.as_deref().is_some_and(|id| p.describes(id))
                })
            });
            own_loaded_as_made && !p.mentions(library) && made_for_loaded(p, loaded)
        })
        .collect()
}
