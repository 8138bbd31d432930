//! Layout profiles: the answers a library's DWARF gives to every layout
//! question the decoders ask, kept in a small versioned file for the
//! stripped copies of that same library.
//!
//! A struct's layout depends on the source, the configure options that add
//! or remove members, and the ABI; not on `-g` or `-O`. So the layouts read
//! from a debug build of a package's source hold for the package's stripped
//! binaries, which is how a profile lets the decoders read a distribution's
//! MPI with no debug info installed. A profile names the identity it is
//! valid for and the build-ids of the stripped objects it was checked on;
//! it is chosen by those build-ids, never by a guess.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::layouts::layered_layouts::LayeredLayouts;
use crate::layouts::layout_error::LayoutError;
use crate::layouts::layout_family::{FamilyVariant, LayoutFamily, StatedBuild};
pub use crate::layouts::object_file_facts::object_arch;
use crate::layouts::{LayoutTable, Layouts};

/// The `format` every profile this crate writes and reads carries.
pub const PROFILE_FORMAT: &str = "mpidd-layout-profile/1";

/// What a profile is valid for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileIdentity {
    /// The MPI implementation, e.g. `Open MPI`.
    pub implementation: String,
    /// Its version, e.g. `4.1.4`.
    pub version: String,
    /// Where the build came from and the configure options that change
    /// layouts, as free text for a person (the build-ids below are what
    /// selects the profile).
    pub build: String,
    /// The target's architecture, e.g. `x86_64`.
    pub arch: String,
    /// The objects whose types the profile describes.
    pub objects: Vec<ProfileObject>,
}

/// One object a profile describes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileObject {
    /// Its file name as loaded, e.g. `libmpi.so.40`.
    pub name: String,
    /// The build-id (hex) of the debug build the layouts were read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_build_id: Option<String>,
    /// The build-ids (hex) of stripped builds this profile was checked on:
    /// the profile is used for an object with one of these.
    #[serde(default)]
    pub build_ids: Vec<String>,
    /// For builds linked without a build-id (pip's wheels): the digests
    /// of their code ([`BuildKey::CodeDigest`](crate::BuildKey), hex) the
    /// profile was made for. Such a build is also named by its
    /// `soname` and version text, for a person; the digest decides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub code_digests: Vec<String>,
}

impl ProfileIdentity {
    /// Whether one of its objects is the one loaded as `name` (matched by
    /// [`so_stem`]).
    pub fn mentions(&self, name: &str) -> bool {
        self.objects
            .iter()
            .any(|o| so_stem(&o.name) == so_stem(name))
    }
}

impl ProfileObject {
    /// Whether this object's profile was made for the build whose key
    /// (a build-id, or a code digest) is `key`.
    pub fn made_for(&self, key: &[u8]) -> bool {
        self.made_for_hex(&hex(key))
    }

    /// [`made_for`](Self::made_for), with the key already in hex.
    pub(crate) fn made_for_hex(&self, key: &str) -> bool {
        self.build_ids
            .iter()
            .chain(&self.code_digests)
            .any(|b| b.eq_ignore_ascii_case(key))
    }
}

/// A symbol a stripped object hides (not in `.dynsym`), by its link-time
/// address in that object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileSymbol {
    /// The object's file name (as in [`ProfileObject::name`]).
    pub object: String,
    /// Its link-time address.
    pub address: u64,
    /// Its size in bytes.
    pub size: u64,
}

/// Sizes, offsets and enumerators of one library build, with its identity.
///
/// ```
/// use mpidd_read::{LayoutNeed, LayoutProfile, LayoutTable, Layouts, ProfileIdentity};
///
/// let mut dwarf = LayoutTable::default();
/// dwarf.add_type("ompi_group_t", 64).add_member("ompi_group_t", "grp_proc_count", 8, 4);
/// let needs = [LayoutNeed::members("ompi_group_t", &["grp_proc_count"])];
/// let ask = |l: &dyn Layouts| LayoutNeed::ask_all(&needs, l);
/// let all = |l: &dyn Layouts| LayoutTable::answer(l, &needs).1;
/// let profile = LayoutProfile::write(ProfileIdentity::default(), &dwarf, &ask, &all).unwrap();
/// let again = LayoutProfile::from_json(&profile.to_json()).unwrap();
/// assert_eq!(again.layouts.member("ompi_group_t", "grp_proc_count").unwrap().offset, 8);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutProfile {
    /// Always [`PROFILE_FORMAT`].
    pub format: String,
    /// What the profile is valid for.
    pub identity: ProfileIdentity,
    /// The answers.
    pub layouts: LayoutTable,
    /// Symbols the stripped objects do not export, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub symbols: BTreeMap<String, ProfileSymbol>,
    /// The release family the layouts hold for beyond the builds the
    /// objects name, with the facts that back the claim; a library no
    /// profile names is offered the profile of its family
    /// ([`choose_layouts`]), to be checked on the process before use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<Box<LayoutFamily>>,
    /// Further release families the layouts hold for once a few types are
    /// laid out otherwise (the releases before [`family`](Self::family)
    /// whose OMPIO file lacked a member, say), each with its own facts;
    /// tried after `family`, and checked on the process the same way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub family_variants: Vec<FamilyVariant>,
}

/// A profile that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file is not a profile this version understands.
    #[error("{source_name}: not a layout profile: {reason}")]
    Malformed {
        /// The file (or `<embedded>`).
        source_name: String,
        /// What is wrong.
        reason: String,
    },
    /// The source of layouts could not answer every question.
    #[error("the layouts cannot answer {} question(s) the decoders ask; first: {}", .0.len(), .0.first().map(|e| e.to_string()).unwrap_or_default())]
    Unanswered(Vec<LayoutError>),
    /// Reading or writing the file failed.
    #[error("{path}: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why: shown in the message, so not also as `source()`.
        cause: std::io::Error,
    },
}

impl LayoutProfile {
    /// A profile of `identity` holding `source`'s answers to the questions
    /// `ask` asks (a decoder's own list of what it reads). Refused with
    /// every gap `required` finds in `source` (the questions a decoder
    /// cannot do without); questions `ask` adds for optional details may
    /// go unanswered, and are then absent from the profile as they are
    /// from the build.
    pub fn write(
        identity: ProfileIdentity,
        source: &dyn Layouts,
        ask: &dyn Fn(&dyn Layouts),
        required: &dyn Fn(&dyn Layouts) -> Vec<LayoutError>,
    ) -> Result<LayoutProfile, ProfileError> {
        let gaps = required(source);
        if !gaps.is_empty() {
            return Err(ProfileError::Unanswered(gaps));
        }
        let (layouts, _optional_gaps) = LayoutTable::record(source, ask);
        Ok(LayoutProfile {
            format: PROFILE_FORMAT.to_string(),
            identity,
            layouts,
            symbols: BTreeMap::new(),
            family: None,
            family_variants: Vec::new(),
        })
    }

    /// A profile of `identity` holding `layouts` as they are: what a
    /// cache keeps of the answers a build's DWARF gave (see
    /// [`LayoutCache`](crate::LayoutCache)).
    pub fn cached(identity: ProfileIdentity, layouts: LayoutTable) -> LayoutProfile {
        LayoutProfile {
            format: PROFILE_FORMAT.to_string(),
            identity,
            layouts,
            symbols: BTreeMap::new(),
            family: None,
            family_variants: Vec::new(),
        }
    }

    /// Parses a profile.
    pub fn from_json(text: &str) -> Result<LayoutProfile, ProfileError> {
        Self::parse(text, "<embedded>")
    }

    fn parse(text: &str, source_name: &str) -> Result<LayoutProfile, ProfileError> {
        let malformed = |reason: String| ProfileError::Malformed {
            source_name: source_name.to_string(),
            reason,
        };
        let mut profile: LayoutProfile =
            serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
        if profile.format != PROFILE_FORMAT {
            return Err(malformed(format!(
                "format `{}`, expected `{PROFILE_FORMAT}`",
                profile.format
            )));
        }
        for variant in &mut profile.family_variants {
            variant.lay_out(&profile.layouts);
        }
        Ok(profile)
    }

    /// Reads a profile file.
    pub fn load(path: &Path) -> Result<LayoutProfile, ProfileError> {
        let text = std::fs::read_to_string(path).map_err(|cause| ProfileError::Io {
            path: path.to_path_buf(),
            cause,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// The profile as indented JSON, types and members in name order, so
    /// that a regenerated profile diffs cleanly.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a profile is plain data");
        s.push('\n');
        s
    }

    /// Why this profile does not fit the loaded `companions` (names or
    /// paths, with build-ids): the first object it describes that is
    /// loaded (known by its name up to `.so`, whatever version suffix or
    /// directory it has) with a build-id it was not made for. `None` when
    /// all fit.
    pub fn companion_mismatch(&self, companions: &[(String, Option<Vec<u8>>)]) -> Option<String> {
        companions.iter().find_map(|(name, id)| {
            let object = self
                .identity
                .objects
                .iter()
                .find(|o| so_stem(&o.name) == so_stem(name))?;
            let fits = id.as_deref().is_some_and(|id| object.made_for(id));
            (!fits).then(|| {
                format!(
                    "the {} {} profile is for this library, but {name} is loaded with build-id {}, \
                     which it was not made for",
                    self.identity.implementation,
                    self.identity.version,
                    id.as_deref().map(hex).unwrap_or_else(|| "none".to_string())
                )
            })
        })
    }

    /// Whether the profile declares a release family, its own or a
    /// variant's.
    pub fn declares_family(&self) -> bool {
        self.family.is_some() || !self.family_variants.is_empty()
    }

    /// The families the profile declares, each with the layouts it reads
    /// with: its own [`family`](Self::family) with the profile's layouts,
    /// then each of [`family_variants`](Self::family_variants).
    pub fn families(&self) -> impl Iterator<Item = (&LayoutFamily, &LayoutTable)> {
        let own = self.family.as_deref().map(|f| (f, &self.layouts));
        own.into_iter().chain(
            self.family_variants
                .iter()
                .map(|v| (&v.family, v.layouts())),
        )
    }

    /// The first family of the profile ([`families`](Self::families))
    /// that holds what a library states, with its layouts.
    pub fn family_holding(&self, build: &StatedBuild<'_>) -> Option<(&LayoutFamily, &LayoutTable)> {
        self.families().find(|(f, _)| f.contains(build))
    }

    /// Whether this profile describes an object called `name` (a name or
    /// a path; compared up to `.so`), whatever its build.
    pub fn mentions(&self, name: &str) -> bool {
        self.identity.mentions(name)
    }

    /// Whether this profile was made for an object whose build key (its
    /// build-id, else its code digest: [`build_key`](crate::build_key))
    /// is `key`. The key alone decides: a library is often loaded under
    /// another name than the one it was built as (a copy, a link).
    pub fn describes(&self, key: &[u8]) -> bool {
        self.identity.objects.iter().any(|o| o.made_for(key))
    }
}

/// An object's name without directory and version, which profiles match
/// objects by: `libmpi` for `/usr/lib/libmpi.so.40.30.4`, `mca_pml_ob1`
/// for `mca_pml_ob1.so`.
///
/// ```
/// assert_eq!(mpidd_read::so_stem("/usr/lib/libmpi.so.40.30.4"), "libmpi");
/// ```
pub fn so_stem(name: &str) -> &str {
    let file = name.rsplit('/').next().unwrap_or(name);
    file.find(".so").map_or(file, |i| &file[..i])
}

/// Lower-case hex of a build-id, as profiles and `file(1)` write it.
pub fn hex(bytes: &[u8]) -> String {
    crate::symbols::debug_files::hex(bytes)
}

/// The library whose private types no source of layouts describes, with
/// what is missing; its `Display` is the paragraph a person reads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct NoLayouts {
    /// The library, as loaded.
    pub library: String,
    /// Its version, when the caller knows it.
    pub version: Option<String>,
    /// Its build-id (hex), when it has one; else, when
    /// `key_is_digest`, the digest of its code (hex): what a profile for
    /// it must list ([`ProfileObject::code_digests`]).
    pub build_id: Option<String>,
    /// The number of questions its DWARF could not answer.
    pub unanswered: usize,
    /// The first of them.
    pub first: Option<Box<LayoutError>>,
    /// How many profiles were tried.
    pub profiles_tried: u32,
    /// Whether `build_id` holds the digest of the code of a library
    /// linked without a build-id.
    pub key_is_digest: bool,
    /// A profile made for this library that was still refused, and why:
    /// another object it describes is loaded in a build it was not made
    /// for (a component of another package version).
    pub near_miss: Option<String>,
}

impl fmt::Display for NoLayouts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.library)?;
        if let Some(v) = &self.version {
            write!(f, " (version {v})")?;
        }
        match (&self.build_id, self.key_is_digest) {
            (Some(d), true) => write!(f, " with no build-id (code digest {d})")?,
            (Some(b), false) => write!(f, " build-id {b}")?,
            (None, _) => write!(f, " with no build-id")?,
        }
        write!(
            f,
            " has no debug info for {} of the layouts the decoders read",
            self.unanswered
        )?;
        if let Some(e) = &self.first {
            write!(f, " ({e})")?;
        }
        write!(
            f,
            ", and none of the {} known layout profiles is for this build \
             (`mpidd identify` says what was found of it and why each profile does \
             not fit). Ways out: install the library's debug info (its -dbgsym package, \
             or point --debug-dir at it); rebuild the library with -g; or build \
             the same source",
            self.profiles_tried
        )?;
        if let Some(v) = &self.version {
            write!(f, " (version {v})")?;
        }
        let file = self.library.rsplit('/').next().unwrap_or(&self.library);
        write!(
            f,
            " with the same configure options and -g, then write a profile from \
             it for this very library with `mpidd profile write --object \
             <the debug build's {file}> --for-build {}`",
            self.library
        )?;
        match (&self.build_id, self.key_is_digest) {
            (Some(d), true) => write!(f, ", which ties it to the digest of its code {d},")?,
            (Some(b), false) => write!(f, ", which ties it to build-id {b},")?,
            (None, _) => {}
        }
        write!(f, " and pass it with --profile.")?;
        if let Some(why) = &self.near_miss {
            write!(f, " (One was close: {why}.)")?;
        }
        Ok(())
    }
}

/// Where the layouts a decoder uses came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutOrigin {
    /// The target's own DWARF.
    Dwarf,
    /// A profile made for the library's build (its build-id or code
    /// digest), by its identity.
    Profile(ProfileIdentity),
    /// A profile whose release family contains the version the library
    /// states, though it names no build of it: a candidate that must pass
    /// the check on the process before use.
    Family(Box<FamilyOrigin>),
    /// An entry of the layout cache, by its file: layouts an earlier run
    /// resolved from the same build's DWARF.
    Cache(PathBuf),
    /// Types the caller handed in (a debugger's own DWARF reader, say),
    /// which answered every question the decoder asked.
    Caller,
}

/// A profile chosen by its release family: the profile, the family and
/// the fact that placed the library in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyOrigin {
    /// The profile's identity.
    pub identity: ProfileIdentity,
    /// The family it declares.
    pub family: LayoutFamily,
    /// The version the library states (Open MPI's `opal_version_string`).
    pub stated_version: String,
}

impl LayoutOrigin {
    /// The identity of the profile the layouts came from, whether it was
    /// chosen by the build's key or by its family: what must pass the
    /// check on the process before use.
    pub fn profile(&self) -> Option<&ProfileIdentity> {
        match self {
            LayoutOrigin::Profile(id) => Some(id),
            LayoutOrigin::Family(f) => Some(&f.identity),
            _ => None,
        }
    }

    /// Where the layouts came from, as a refusal or a note names it: `the
    /// Open MPI 4.1.4 layout profile made for this build`, or `the family
    /// Open MPI 5.0.7 up to 5.1 (...) of the profile of Open MPI 5.0.11
    /// (...), offered because the library states version 5.0.9`.
    pub fn source_text(&self) -> String {
        match self {
            LayoutOrigin::Dwarf => "the target's DWARF".to_string(),
            LayoutOrigin::Profile(id) => format!(
                "the {} {} layout profile made for this build",
                id.implementation, id.version
            ),
            LayoutOrigin::Family(f) => format!(
                "the family {} of the profile of {} {} ({}), offered because the library \
                 states version {}",
                f.family.name(),
                f.identity.implementation,
                f.identity.version,
                f.identity.build,
                f.stated_version
            ),
            LayoutOrigin::Cache(path) => format!("the layout cache entry {}", path.display()),
            LayoutOrigin::Caller => "the caller's types".to_string(),
        }
    }
}

/// Picks the layouts for decoding `library` (its loaded path and build-id):
/// `dwarf` when `missing` finds nothing the decoder needs missing from it
/// (questions it can do without may stay unanswered), else the first of
/// `profiles` that describes the library's build, else the first whose
/// [`family`](LayoutProfile::family) contains what the library states
/// (`stated`: its implementation, version and architecture) and that
/// describes an object of its name, else a [`NoLayouts`] saying what is
/// missing and the ways out. A profile chosen by its family comes as a
/// [`LayoutOrigin::Family`], which the caller must check on the process
/// before use, as it checks every profile.
///
/// `companions` are the other objects loaded beside the library, by file
/// name with their build-ids. A profile that also describes one of them
/// (types of a plugin, say) is chosen only if that object's build-id is
/// one it was made for: a component from another build may lay its types
/// out differently.
#[allow(clippy::too_many_arguments)]
pub fn choose_layouts<'a>(
    dwarf: &'a dyn Layouts,
    missing: &dyn Fn(&dyn Layouts) -> Vec<LayoutError>,
    library: &str,
    build_id: Option<&[u8]>,
    version: Option<&str>,
    profiles: &'a [LayoutProfile],
    companions: &[(String, Option<Vec<u8>>)],
    stated: Option<StatedBuild<'_>>,
) -> Result<(&'a dyn Layouts, LayoutOrigin), NoLayouts> {
    let unanswered = missing(dwarf);
    if unanswered.is_empty() {
        return Ok((dwarf, LayoutOrigin::Dwarf));
    }
    let mut near_miss = None;
    if let Some(id) = build_id {
        for p in profiles.iter().filter(|p| p.describes(id)) {
            match p.companion_mismatch(companions) {
                None => return Ok((&p.layouts, LayoutOrigin::Profile(p.identity.clone()))),
                Some(why) => near_miss = near_miss.or(Some(why)),
            }
        }
    }
    // The exact build won above; a family is the fallback. Its companion
    // objects are of other builds by construction, so their build keys
    // do not decide: the check on the process does.
    if let Some(build) = stated {
        let family_of = profiles.iter().find_map(|p| {
            let (family, layouts) = p.family_holding(&build)?;
            p.mentions(library).then_some((p, family, layouts))
        });
        if let Some((p, family, layouts)) = family_of {
            return Ok((
                layouts,
                LayoutOrigin::Family(Box::new(FamilyOrigin {
                    identity: p.identity.clone(),
                    family: LayoutFamily::clone(family),
                    stated_version: build.version.to_string(),
                })),
            ));
        }
    }
    Err(NoLayouts {
        library: library.to_string(),
        version: version.map(str::to_string),
        build_id: build_id.map(hex),
        key_is_digest: false,
        unanswered: unanswered.len(),
        first: unanswered.into_iter().next().map(Box::new),
        profiles_tried: u32::try_from(profiles.len()).unwrap_or(u32::MAX),
        near_miss,
    })
}

/// [`choose_layouts`] for a library loaded in a process or core, as
/// `objects` (its loaded objects) lists it: the library's build-id is read
/// from its file, and so are those of the other loaded objects a profile
/// describes (a process has dozens of others, which are not opened).
///
/// The layouts chosen come with the profiles of the libraries loaded
/// beside it ([`companion_profiles`](crate::companion_profiles): UCX's),
/// which answer what the library's own source does not, whichever that
/// source is.
///
/// `implementation` (`Open MPI`), with `version` and `device` (MPICH's),
/// is what the library states of itself; with the architecture read from
/// its file, it lets a profile's release family answer for a build no
/// profile names.
#[allow(clippy::too_many_arguments)]
pub fn choose_loaded_layouts<'a>(
    dwarf: &'a dyn Layouts,
    missing: &dyn Fn(&dyn Layouts) -> Vec<LayoutError>,
    library: &str,
    implementation: Option<&str>,
    version: Option<&str>,
    device: Option<&str>,
    objects: &dyn crate::symbols::loaded_objects::LoadedObjects,
    profiles: &'a [LayoutProfile],
) -> Result<(LayeredLayouts<'a>, LayoutOrigin), NoLayouts> {
    let listed = objects.loaded_objects();
    let path = listed
        .iter()
        .find(|o| o.name == library)
        .map(|o| o.path.clone());
    let key = path
        .as_ref()
        .and_then(|p| crate::symbols::debug_files::build_key(p).ok().flatten());
    // The architecture is read from the file only when a family could be
    // asked: most libraries are answered by their DWARF or build key.
    let arch = match (implementation, version, &path) {
        (Some(_), Some(_), Some(p)) if profiles.iter().any(LayoutProfile::declares_family) => {
            object_arch(p).ok()
        }
        _ => None,
    };
    let stated = match (implementation, version, arch.as_deref()) {
        (Some(implementation), Some(version), Some(arch)) => Some(StatedBuild {
            implementation,
            version,
            arch,
            device,
        }),
        _ => None,
    };
    let companions = crate::layouts::layered_layouts::loaded_keys(objects, |name| {
        name != library && profiles.iter().any(|p| p.mentions(name))
    });
    let (chosen, origin) = choose_layouts(
        dwarf,
        missing,
        library,
        key.as_ref().map(|k| k.bytes()),
        version,
        profiles,
        &companions,
        stated,
    )
    .map_err(|mut e| {
        e.key_is_digest = key.as_ref().is_some_and(|k| k.is_digest());
        e
    })?;
    let beside = crate::layouts::layered_layouts::companion_profiles(objects, library, profiles)
        .into_iter()
        .map(|p| &p.layouts)
        .collect();
    Ok((LayeredLayouts::new(chosen, beside), origin))
}
