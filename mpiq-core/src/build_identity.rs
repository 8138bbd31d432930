//! What a person needs to know when the queues of a process are refused:
//! which build its MPI library is, which facts about it were found, which
//! layout source and release family would be used for it and why the
//! other profiles would not, and, for a process, whether those layouts
//! pass the check on it. `mpidd identify` prints a [`BuildIdentity`].
//!
//! Nothing here decides anything of its own: the decoder is the one
//! [`identify`] picks, the layouts the ones [`decoder_layouts`] chooses
//! and the check [`mpihandles::check_layouts`]; this file gathers their
//! answers and the facts they rest on, and says for each profile why it
//! fits or not. A library file on its own is read as a process that has
//! just loaded it ([`ObjectImage`]), so the same code reads what it states.

use std::path::{Path, PathBuf};

use mpidd_read::{
    build_key, object_arch, so_stem, BuildKey, ElfSymbols, LayoutOrigin, LayoutProfile, Layouts,
    Limits, LoadedObjects, NoLayouts, ObjectImage, ObjectImageError, StatedBuild, SymbolError,
    SymbolSource, TargetMemory, TargetParts, TypeOracle,
};
use serde::Serialize;

use crate::decoder::DecodeError;
use crate::detect::{build_decoder, decoder_layouts, identify, Identified};
use crate::library_strings::{intel_mpi_release, mpich_build_strings};

/// Everything `mpidd identify` says about one MPI library: its build, the
/// facts found, the decoder, the profiles that fit or not, the layout
/// source that would be used, and, for a process, the check's result.
///
/// ```no_run
/// use mpidd_read::{shipped_profiles, Limits};
/// use mpiq_core::BuildIdentity;
/// use std::path::Path;
///
/// let library = Path::new("/usr/lib/x86_64-linux-gnu/libmpich.so.12");
/// let found = BuildIdentity::of_library_file(library, &shipped_profiles(), &Limits::default())?;
/// println!("{:?}: layouts from {}", found.build_id, found.layouts.text);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct BuildIdentity {
    /// The library as the process loaded it, or the file given.
    pub library: String,
    /// The file its facts were read from.
    pub file: PathBuf,
    /// Its architecture ([`object_arch`]), when the file says.
    pub arch: Option<String>,
    /// Its GNU build-id (hex), when it has one.
    pub build_id: Option<String>,
    /// For a library without a build-id, the SHA-256 of its code (hex):
    /// the key profiles list for such builds ([`BuildKey::CodeDigest`]).
    pub code_digest: Option<String>,
    /// What the library states about itself.
    pub stated: StatedFacts,
    /// Whether it has DWARF, and whether that DWARF answers the decoder.
    pub dwarf: DwarfFacts,
    /// The native decoder [`identify`] picks, or its refusal.
    pub decoder: DecoderChoice,
    /// Every profile considered, and whether it fits this build.
    pub profiles: Vec<ProfileFit>,
    /// The layout source that would be used, or what is missing.
    pub layouts: LayoutChoice,
    /// For a process: the check on it and the decoder built on the layouts.
    pub process: Option<ProcessFacts>,
}

/// What a library states about its build, from its own strings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StatedFacts {
    /// The implementation its symbols identify (`MPICH`, `Open MPI`).
    pub implementation: Option<String>,
    /// The version it states (MPICH's `MPII_Version_string`, Open MPI's
    /// `opal_version_string` or `ompi_version_string`).
    pub version: Option<String>,
    /// MPICH's device (`MPII_Version_device`, else the strings beside its
    /// configure line): `ch4:ucx`.
    pub device: Option<String>,
    /// MPICH's configure line (`MPII_Version_configure`).
    pub configure: Option<String>,
    /// The vendor release of an MPICH derivative (`Intel MPI 2021.19.0`).
    pub vendor: Option<String>,
}

/// Whether the library has DWARF, and how much of the decoder's
/// questions it answers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DwarfFacts {
    /// The library has DWARF, in itself or in its separate debug file.
    pub present: bool,
    /// The separate debug file found for it, if any.
    pub debug_file: Option<PathBuf>,
    /// How many of the layout questions the decoder cannot do without the
    /// DWARF of the process (or file) leaves unanswered; `None` when no
    /// decoder was picked.
    pub unanswered: Option<usize>,
    /// The first of them.
    pub first_unanswered: Option<String>,
}

/// The decoder [`identify`] picks for the library, or why none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[non_exhaustive]
pub enum DecoderChoice {
    /// A native decoder reads it.
    Chosen {
        /// Its name ([`DecoderKind::name`](crate::DecoderKind::name)).
        name: String,
        /// The builds it was checked on.
        checked_on: String,
    },
    /// No native decoder reads it: the refusal, as `mpidd queues` says it.
    Refused {
        /// The refusal.
        reason: String,
    },
}

/// How one profile fits the library's build.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ProfileFit {
    /// The profile, for a person: `Open MPI 5.0.11 on x86_64 (libmpi.so.40,
    /// libopen-pal.so.80)`.
    pub profile: String,
    /// How it fits.
    pub fit: Fit,
}

/// How a profile fits a build.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Fit {
    /// It was made for this very build (its build-id or code digest).
    Build {
        /// The object of the profile made for it.
        object: String,
    },
    /// Its release family holds what the library states.
    Family {
        /// The family ([`LayoutFamily::name`](mpidd_read::LayoutFamily::name)).
        family: String,
    },
    /// It does not fit.
    No {
        /// Why, for a person.
        why: String,
    },
}

/// Where the layouts would come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LayoutSource {
    /// The library's DWARF (or the process's).
    Dwarf,
    /// A profile made for this build.
    Profile,
    /// A profile's release family, checked on each process before use.
    Family,
    /// No source: the text says what is missing.
    None,
    /// Not chosen, since no decoder reads the library.
    NotChosen,
}

/// The layout source that would be used, as
/// [`decoder_layouts`] chooses it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LayoutChoice {
    /// Which kind of source.
    pub source: LayoutSource,
    /// The source for a person (`the Open MPI 4.1.4 layout profile made
    /// for this build`), or what is missing.
    pub text: String,
    /// Without a source: the refusal `mpidd queues` gives, with its ways
    /// out.
    pub refusal: Option<String>,
}

/// What was found in the process beyond the library's build.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ProcessFacts {
    /// The check of the chosen layouts on the process
    /// ([`mpihandles::check_layouts`]).
    pub check: CheckOutcome,
    /// Whether the check must pass before the layouts are used (a
    /// profile, by build or by family; DWARF is believed as it is).
    pub check_required: bool,
    /// The decoder built over the layouts: its name with the version and
    /// device it found, or why it could not be built.
    pub reader: ReaderOutcome,
}

/// The decoder built over the chosen layouts on a process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ReaderOutcome {
    /// Built: ready to read the queues.
    Built {
        /// What it decodes, with the version found (`MPICH 4.0.2
        /// (ch4:ucx)`).
        name: String,
    },
    /// Not built, and why: the refusal `mpidd queues` would give.
    Refused {
        /// Why.
        reason: String,
    },
}

/// The result of the check on a process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CheckOutcome {
    /// The objects every MPI process knows read as what they are.
    Passed,
    /// One did not: the one line that says which read as what.
    Refused {
        /// The line.
        line: String,
    },
    /// No layouts to check.
    NotRun {
        /// Why.
        why: String,
    },
}

/// Why a build could not be identified at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IdentifyError {
    /// The library file could not be read as an object.
    #[error(transparent)]
    Image(#[from] ObjectImageError),
    /// Its symbols could not be read.
    #[error(transparent)]
    Symbols(#[from] SymbolError),
    /// The process has no MPI library to identify: the decoders' refusal.
    #[error("{0}")]
    NoMpiLibrary(DecodeError),
}

impl BuildIdentity {
    /// The build of the MPI library file at `path`, with no process: what
    /// it states, its build key and DWARF, the decoder its symbols point
    /// to, and the layouts that would be used for it among `profiles`
    /// (the user's and the shipped ones). Open MPI's PML is a process's
    /// choice, so the decoder named for an Open MPI file is ob1's unless
    /// the file carries only UCX's PML.
    pub fn of_library_file(
        path: &Path,
        profiles: &[LayoutProfile],
        limits: &Limits,
    ) -> Result<BuildIdentity, IdentifyError> {
        // The refusals name the file by its absolute path, as a process
        // does, so that its build-id is read from it.
        let path = std::fs::canonicalize(path).map_err(|cause| SymbolError::Io {
            path: path.display().to_string(),
            cause,
        })?;
        let name = path.display().to_string();
        let image = ObjectImage::open(&path)?;
        let mut symbols = ElfSymbols::new();
        symbols.add_object(&path, &name, 0)?;
        let dwarf = TypeOracle::from_symbols(&symbols);
        let found = identify(&image, &symbols, limits);
        Ok(gather(
            Parts {
                memory: &image,
                symbols: &symbols,
                objects: &symbols,
                dwarf: &dwarf,
            },
            &name,
            found,
            profiles,
            limits,
            false,
        ))
    }

    /// The build of the MPI library a process (live or a core) loaded,
    /// with the decoder [`identify`] picks, the layouts
    /// [`decoder_layouts`] chooses over `dwarf` (the process's DWARF:
    /// [`TypeOracle::from_objects`] of `objects`) and `profiles`, the
    /// check of those layouts on the process and the decoder built on
    /// them. The layout cache is not consulted: it keeps only what a
    /// build's DWARF answered, and stands in for that DWARF.
    pub fn of_process(
        memory: &dyn TargetMemory,
        symbols: &dyn SymbolSource,
        objects: &dyn LoadedObjects,
        dwarf: &TypeOracle,
        profiles: &[LayoutProfile],
        limits: &Limits,
    ) -> Result<BuildIdentity, IdentifyError> {
        let (library, found) = match identify(memory, symbols, limits) {
            Ok(found) => (found.library.clone(), Ok(found)),
            Err(DecodeError::Unsupported {
                reason,
                library: Some(l),
                way_out,
            }) => (
                l.path.clone(),
                Err(DecodeError::Unsupported {
                    reason,
                    library: Some(l),
                    way_out,
                }),
            ),
            Err(e) => return Err(IdentifyError::NoMpiLibrary(e)),
        };
        if let Ok(found) = &found {
            // As the resolver does: the library's own types first.
            dwarf.search_first(&found.library);
        }
        Ok(gather(
            Parts {
                memory,
                symbols,
                objects,
                dwarf,
            },
            &library,
            found,
            profiles,
            limits,
            true,
        ))
    }
}

/// What one identification reads.
struct Parts<'a> {
    memory: &'a dyn TargetMemory,
    symbols: &'a dyn SymbolSource,
    objects: &'a dyn LoadedObjects,
    dwarf: &'a TypeOracle,
}

/// The identity of `library` (an object of `parts.objects`), as `found`
/// identified it; with the check and the decoder when `process`.
fn gather(
    parts: Parts<'_>,
    library: &str,
    found: Result<Identified, DecodeError>,
    profiles: &[LayoutProfile],
    limits: &Limits,
    process: bool,
) -> BuildIdentity {
    let listed = parts.objects.loaded_objects();
    let object = listed.iter().find(|o| o.name == library);
    let file = object
        .map(|o| o.path.clone())
        .unwrap_or_else(|| PathBuf::from(library));
    let key = build_key(&file).ok().flatten();
    let arch = object_arch(&file).ok();
    let stated = stated_facts(&parts, &file, found.as_ref().ok(), limits);
    let stated_build = match (&stated.implementation, &stated.version, &arch) {
        (Some(implementation), Some(version), Some(arch)) => Some(StatedBuild {
            implementation,
            version,
            arch,
            device: stated.device.as_deref(),
        }),
        _ => None,
    };
    let missing = found
        .as_ref()
        .ok()
        .map(|f| f.kind.missing_layouts(parts.dwarf));
    let dwarf = DwarfFacts {
        present: parts.dwarf.has_dwarf(library),
        debug_file: object.and_then(|o| o.debug_file.as_ref().map(|d| d.path.clone())),
        unanswered: missing.as_ref().map(Vec::len),
        first_unanswered: missing.and_then(|m| m.first().map(|e| e.to_string())),
    };
    let fits = profiles
        .iter()
        .map(|p| ProfileFit {
            profile: profile_name(p),
            fit: fit(p, key.as_ref(), library, stated_build.as_ref()),
        })
        .collect();
    let (layouts, process_facts) = match &found {
        Ok(found) => match decoder_layouts(found, parts.dwarf, parts.objects, profiles) {
            Ok((layouts, origin)) => {
                let facts = process.then(|| on_process(&parts, &layouts, &origin, limits));
                (chosen(&origin), facts)
            }
            Err(no) => {
                let facts = process.then(|| ProcessFacts {
                    check: CheckOutcome::NotRun {
                        why: "no layouts to check".to_string(),
                    },
                    check_required: false,
                    reader: ReaderOutcome::Refused {
                        reason: no.to_string(),
                    },
                });
                (none_fits(&no, stated_build.as_ref()), facts)
            }
        },
        Err(refusal) => {
            let facts = process.then(|| ProcessFacts {
                check: CheckOutcome::NotRun {
                    why: "no decoder reads the library".to_string(),
                },
                check_required: false,
                reader: ReaderOutcome::Refused {
                    reason: refusal.to_string(),
                },
            });
            let choice = LayoutChoice {
                source: LayoutSource::NotChosen,
                text: "not chosen: no native decoder reads this library".to_string(),
                refusal: None,
            };
            (choice, facts)
        }
    };
    BuildIdentity {
        library: library.to_string(),
        file,
        arch,
        build_id: key.as_ref().filter(|k| !k.is_digest()).map(BuildKey::hex),
        code_digest: key.as_ref().filter(|k| k.is_digest()).map(BuildKey::hex),
        stated,
        dwarf,
        decoder: match &found {
            Ok(f) => DecoderChoice::Chosen {
                name: f.kind.name().to_string(),
                checked_on: f.kind.checked_on().to_string(),
            },
            Err(e) => DecoderChoice::Refused {
                reason: e.to_string(),
            },
        },
        profiles: fits,
        layouts,
        process: process_facts,
    }
}

/// What the library states: what [`identify`] read, else MPICH's strings
/// beside its configure line; its configure line; a vendor's release.
fn stated_facts(
    parts: &Parts<'_>,
    file: &Path,
    found: Option<&Identified>,
    limits: &Limits,
) -> StatedFacts {
    let string = |name: &str| {
        let sym = parts.symbols.lookup(name)?;
        TargetMemory::read_string(parts.memory, sym.addr, limits.max_string_len)
            .ok()
            .filter(|s| !s.is_empty())
    };
    let strings = || mpich_build_strings(file);
    let (implementation, version, device) = match found {
        Some(f) => (
            Some(f.kind.implementation().to_string()),
            Some(f.version.clone()).filter(|v| !v.is_empty()),
            Some(f.device.clone()).filter(|d| !d.is_empty()),
        ),
        None => match strings() {
            Some((version, device)) => (Some("MPICH".to_string()), Some(version), device),
            None => (None, None, None),
        },
    };
    StatedFacts {
        implementation,
        version,
        device,
        configure: string("MPII_Version_configure"),
        vendor: intel_mpi_release(file).map(|r| format!("Intel MPI {r}")),
    }
}

/// A profile as a person tells it from the others.
fn profile_name(p: &LayoutProfile) -> String {
    let objects: Vec<&str> = p.identity.objects.iter().map(|o| o.name.as_str()).collect();
    format!(
        "{} {} on {} ({})",
        p.identity.implementation,
        p.identity.version,
        p.identity.arch,
        objects.join(", ")
    )
}

/// How `profile` fits the build of `library` keyed `key` that states
/// `stated`: by its key (as [`LayoutProfile::describes`]), else by its
/// family (an object of the library's name, and the family holding what
/// the library states, as the chooser asks), else why not.
fn fit(
    profile: &LayoutProfile,
    key: Option<&BuildKey>,
    library: &str,
    stated: Option<&StatedBuild<'_>>,
) -> Fit {
    if let Some(key) = key {
        if let Some(o) = profile
            .identity
            .objects
            .iter()
            .find(|o| o.made_for(key.bytes()))
        {
            return Fit::Build {
                object: o.name.clone(),
            };
        }
    }
    let stem = so_stem(library);
    if !profile.mentions(library) {
        return Fit::No {
            why: format!("it describes no object named {stem}"),
        };
    }
    let made_for: Vec<String> = profile
        .identity
        .objects
        .iter()
        .filter(|o| so_stem(&o.name) == stem)
        .flat_map(|o| {
            let ids = o.build_ids.iter().map(|b| format!("build-id {b}"));
            ids.chain(o.code_digests.iter().map(|d| format!("code digest {d}")))
        })
        .collect();
    let not_this = match key {
        Some(key) => format!(
            "it was made for {}, not this build ({key})",
            if made_for.is_empty() {
                "no build of it".to_string()
            } else {
                made_for.join(", ")
            }
        ),
        None => "the library has neither a build-id nor code to be known by".to_string(),
    };
    let names: Vec<String> = profile.families().map(|(f, _)| f.name()).collect();
    match stated {
        _ if names.is_empty() => Fit::No {
            why: format!("{not_this}, and it declares no release family"),
        },
        None => Fit::No {
            why: format!(
                "{not_this}, and the library does not state its implementation, version and \
                 architecture, which would place it in a family of {}",
                names.join(", ")
            ),
        },
        Some(stated) => match profile.family_holding(stated) {
            Some((family, _)) => Fit::Family {
                family: family.name(),
            },
            None => {
                let mut whys = profile
                    .families()
                    .filter_map(|(f, _)| Some((f.name(), f.mismatch(stated)?)));
                let why = match (whys.next(), names.len()) {
                    (Some((name, why)), 1) => {
                        format!("{not_this}, and its family {name} does not hold it: {why}")
                    }
                    (first, _) => {
                        let all: Vec<String> = first
                            .into_iter()
                            .chain(whys)
                            .map(|(name, why)| format!("{name}: {why}"))
                            .collect();
                        format!(
                            "{not_this}, and none of its families holds it ({})",
                            all.join("; ")
                        )
                    }
                };
                Fit::No { why }
            }
        },
    }
}

/// The layouts chosen, as a source.
fn chosen(origin: &LayoutOrigin) -> LayoutChoice {
    let source = match origin {
        LayoutOrigin::Profile(_) => LayoutSource::Profile,
        LayoutOrigin::Family(_) => LayoutSource::Family,
        _ => LayoutSource::Dwarf,
    };
    LayoutChoice {
        source,
        text: origin.source_text(),
        refusal: None,
    }
}

/// No source: the facts missing, each in a few words, then the refusal.
fn none_fits(no: &NoLayouts, stated: Option<&StatedBuild<'_>>) -> LayoutChoice {
    let mut missing = vec![match &no.first {
        Some(first) => format!(
            "its DWARF leaves {} of the decoder's layout questions unanswered (first: {first})",
            no.unanswered
        ),
        None => format!(
            "its DWARF leaves {} of the decoder's layout questions unanswered",
            no.unanswered
        ),
    }];
    missing.push(match (&no.build_id, no.key_is_digest) {
        (Some(d), true) => format!("no profile is made for its code digest {d}"),
        (Some(b), false) => format!("no profile is made for build-id {b}"),
        (None, _) => "it has no build key a profile could be made for".to_string(),
    });
    missing.push(match stated {
        Some(s) => format!(
            "no profile's release family holds {} {} on {}",
            s.implementation, s.version, s.arch
        ),
        None => "what it states does not place it in any release family".to_string(),
    });
    if let Some(near) = &no.near_miss {
        missing.push(format!("one was close: {near}"));
    }
    LayoutChoice {
        source: LayoutSource::None,
        text: format!("none: {}", missing.join("; ")),
        refusal: Some(no.to_string()),
    }
}

/// The check of `layouts` on the process, and the decoder built on them.
fn on_process(
    parts: &Parts<'_>,
    layouts: &dyn Layouts,
    origin: &LayoutOrigin,
    limits: &Limits,
) -> ProcessFacts {
    let check = match mpihandles::check_layouts(parts.memory, parts.symbols, layouts, limits) {
        Ok(()) => CheckOutcome::Passed,
        Err(why) => CheckOutcome::Refused { line: why.0 },
    };
    let target = TargetParts {
        memory: parts.memory,
        symbols: parts.symbols,
        layouts,
    };
    let required = origin.profile().is_some();
    // A profile that fails the check is never used, so no decoder is
    // built on it.
    let reader = match (&check, required) {
        (CheckOutcome::Refused { .. }, true) => ReaderOutcome::Refused {
            reason: format!(
                "{} was not used, because it does not read this process",
                origin.source_text()
            ),
        },
        _ => match build_decoder(&target, limits) {
            Ok(decoder) => ReaderOutcome::Built {
                name: decoder.name().to_string(),
            },
            Err(e) => ReaderOutcome::Refused {
                reason: e.to_string(),
            },
        },
    };
    ProcessFacts {
        check,
        check_required: required,
        reader,
    }
}
