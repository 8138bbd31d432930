//! `mpidd profile`: write a layout profile from a debug build's DWARF, and
//! check a profile against it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use mpidd_read::{
    ask_whole_type, build_id, build_id_hex, build_key, object_arch, parse_profile_symbols,
    profile_drift, shipped_profiles, so_stem, BuildKey, LayoutProfile, Layouts, ProfileError,
    ProfileIdentity, ProfileObject, ProfileSet, ProfileSymbol, StatedBuild, TypeOracle,
    WholeTypeLimits,
};
use mpiq_core::{ProfileDecoder as Decoder, ProfileDecoderError};

/// `mpidd profile ...`
#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// Write a profile: every size, offset and enumerator the named
    /// decoders read, answered from the DWARF of a debug build of the
    /// library, with the identity it is valid for.
    Write(WriteArgs),
    /// Check that a profile still equals what a debug build's DWARF says
    /// (exit status 1, with the differences, if not).
    Check {
        /// The profile.
        profile: PathBuf,
        /// The debug build's objects, as for `write`.
        #[arg(long = "object", value_name = "PATH", required = true)]
        objects: Vec<PathBuf>,
    },
    /// List the profiles mpidd ships, with the release families each
    /// declares.
    List,
    /// Print, as JSON, the layouts of the shipped release family that
    /// holds a build stating IMPLEMENTATION, VERSION and ARCH (what a
    /// library of that build would be offered, before the check on its
    /// process): to compare with what a compiler says of that release's
    /// headers (scripts/lib/layouts-in-c.py).
    FamilyLayouts {
        /// The implementation, as a library states it (`Open MPI`).
        implementation: String,
        /// The version it states (`4.1.0`).
        version: String,
        /// The architecture, as `mpidd identify` prints it (`x86_64`).
        arch: String,
        /// The device the build states (MPICH's: `ch3:nemesis`), which an
        /// MPICH family must be of.
        #[arg(long)]
        device: Option<String>,
    },
}

/// `mpidd profile write`
#[derive(Debug, Args)]
pub struct WriteArgs {
    /// The debug build's objects whose DWARF describes the types (the MPI
    /// library and any component it loads, e.g. libmpi.so.40 and
    /// mca_pml_ob1.so). Repeatable.
    #[arg(long = "object", value_name = "PATH", required = true)]
    objects: Vec<PathBuf>,
    /// The decoders to write the profile for (`mpich-ch3`, ...,
    /// `ompi-handles` for the Open MPI handle decoders, `ompi-msgq` for
    /// Open MPI's own message-queue library hosted by `mpidd queues
    /// --dll`). Repeatable; by default every decoder whose required
    /// questions the objects answer.
    #[arg(long = "decoder", value_name = "NAME")]
    decoders: Vec<String>,
    /// The implementation, e.g. "Open MPI".
    #[arg(long)]
    implementation: String,
    /// Its version, e.g. 4.1.4.
    #[arg(long = "impl-version")]
    version: String,
    /// Where the build came from and the configure options that change
    /// layouts (free text for a person).
    #[arg(long, default_value = "")]
    build: String,
    /// Stripped objects of the same source and options (a distribution's
    /// package) that the profile is for: their build-ids select it.
    /// Matched to --object by name up to `.so` (libmpi.so.40 matches libmpi.so.40.30.4). Repeatable.
    #[arg(long = "for-build", value_name = "PATH")]
    for_builds: Vec<PathBuf>,
    /// A type to describe whole: its size, every member path (nested
    /// structs and unions, anonymous ones included) and the enumerators of
    /// its enum members; or an enumeration's enumerators. For decoders
    /// that ask as they meet objects, such as MPICH's handle decoders.
    /// Repeatable.
    #[arg(long = "type", value_name = "NAME")]
    types: Vec<String>,
    /// Symbols the stripped build hides, one per line: `OBJECT NAME
    /// ADDRESS SIZE` (link-time address, in hex with 0x or decimal; `#`
    /// starts a comment). OBJECT is the loaded file name of an object the
    /// profile describes.
    #[arg(long, value_name = "FILE")]
    symbols: Option<PathBuf>,
    /// Where to write it (standard output by default).
    #[arg(long, short)]
    output: Option<PathBuf>,
}

/// Failures of `mpidd profile`.
#[derive(Debug, thiserror::Error)]
pub enum ProfileCliError {
    /// A profile could not be read or written.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// No decoder can read what the objects describe.
    #[error("the objects' debug info serves no decoder: {0}")]
    NoDecoder(String),
    /// A decoder name is unknown.
    #[error("no decoder is called `{0}`; the decoders are: {1}")]
    UnknownDecoder(String, String),
    /// An object could not be read.
    #[error("{0}: {1}")]
    Object(PathBuf, String),
    /// The profile differs from the DWARF.
    #[error("{0} differs from the DWARF of the objects given in {1} type(s): {2}")]
    Drift(PathBuf, usize, String),
    /// No shipped release family holds the build named.
    #[error("no release family mpidd ships holds {0}")]
    NoFamily(String),
    /// Writing failed.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// A line of the --symbols file is not `OBJECT NAME ADDRESS SIZE`, or
    /// names an object the profile does not describe.
    #[error("{0} line {1}: {2}")]
    SymbolLine(PathBuf, usize, String),
}

/// The profiles in `paths`, then the shipped ones.
pub fn load_all(paths: &[PathBuf]) -> Result<ProfileSet, ProfileError> {
    let given = paths
        .iter()
        .map(|p| LayoutProfile::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    // The user's first: a profile given on the command line wins. The
    // shipped ones are parsed only when a process needs them.
    Ok(ProfileSet::shipped_after(given))
}

/// Runs `mpidd profile ...`.
pub fn run(command: ProfileCommand) -> Result<(), ProfileCliError> {
    match command {
        ProfileCommand::Write(args) => write(args),
        ProfileCommand::Check { profile, objects } => check(&profile, &objects),
        ProfileCommand::List => {
            for p in shipped_profiles() {
                let objects: Vec<String> = p
                    .identity
                    .objects
                    .iter()
                    .map(|o| format!("{} ({} build-ids)", o.name, o.build_ids.len()))
                    .collect();
                println!(
                    "{} {} on {}: {}; {}",
                    p.identity.implementation,
                    p.identity.version,
                    p.identity.arch,
                    p.identity.build,
                    objects.join(", ")
                );
                for (family, _) in p.families() {
                    println!("  family {}", family.name());
                }
            }
            Ok(())
        }
        ProfileCommand::FamilyLayouts {
            implementation,
            version,
            arch,
            device,
        } => {
            let stated = StatedBuild {
                implementation: &implementation,
                version: &version,
                arch: &arch,
                device: device.as_deref(),
            };
            let profiles = shipped_profiles();
            let (_, layouts) = profiles
                .iter()
                .find_map(|p| p.family_holding(&stated))
                .ok_or_else(|| {
                    ProfileCliError::NoFamily(format!("{implementation} {version} on {arch}"))
                })?;
            let text = serde_json::to_string_pretty(layouts).expect("layouts are plain data");
            println!("{text}");
            Ok(())
        }
    }
}

/// The decoders named, or else every decoder whose required questions the
/// objects answer.
fn decoders(names: &[String], oracle: &TypeOracle) -> Result<Vec<Decoder>, ProfileCliError> {
    Decoder::choose(names, oracle).map_err(|e| match e {
        ProfileDecoderError::NoDecoder(gaps) => ProfileCliError::NoDecoder(gaps),
        ProfileDecoderError::UnknownDecoder { name, known } => {
            ProfileCliError::UnknownDecoder(name, known)
        }
    })
}

/// The name a loaded object goes by: the file name of what `path` resolves
/// to (`libmpi.so.40` is a link to `libmpi.so.40.30.4`, and the process
/// maps the latter).
fn file_name(path: &Path) -> String {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    real.file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| real.display().to_string())
}

fn oracle(objects: &[PathBuf]) -> Result<TypeOracle, ProfileCliError> {
    let mut oracle = TypeOracle::new();
    for path in objects {
        if !path.is_file() {
            return Err(ProfileCliError::Object(
                path.clone(),
                "no such file".to_string(),
            ));
        }
        oracle.add_object(&file_name(path), path, None);
    }
    Ok(oracle)
}

fn hex_id(path: &Path) -> Result<Option<String>, ProfileCliError> {
    build_id(path)
        .map(|id| id.map(|b| build_id_hex(&b)))
        .map_err(|e| ProfileCliError::Object(path.to_path_buf(), e.to_string()))
}

/// Every layout question of `kinds`.
fn ask(kinds: &[Decoder]) -> impl Fn(&dyn Layouts) + '_ {
    move |l: &dyn Layouts| {
        for k in kinds {
            k.ask_layouts(l);
        }
    }
}

fn write(args: WriteArgs) -> Result<(), ProfileCliError> {
    let oracle = oracle(&args.objects)?;
    let kinds = decoders(&args.decoders, &oracle)?;
    let mut objects = Vec::new();
    for path in &args.objects {
        let name = file_name(path);
        let mut build_ids = Vec::new();
        let mut code_digests = Vec::new();
        for stripped in args
            .for_builds
            .iter()
            .filter(|p| so_stem(&file_name(p)) == so_stem(&name))
        {
            // A build linked without a build-id is known by the digest of
            // its code instead.
            match build_key(stripped)
                .map_err(|e| ProfileCliError::Object(stripped.clone(), e.to_string()))?
            {
                Some(BuildKey::BuildId(id)) => build_ids.push(build_id_hex(&id)),
                Some(BuildKey::CodeDigest(digest)) => code_digests.push(build_id_hex(&digest)),
                None => {
                    return Err(ProfileCliError::Object(
                        stripped.clone(),
                        "has neither a build-id nor code, so no profile can be chosen for it"
                            .to_string(),
                    ))
                }
            }
        }
        objects.push(ProfileObject {
            name,
            source_build_id: hex_id(path)?,
            build_ids,
            code_digests,
        });
    }
    let identity = ProfileIdentity {
        implementation: args.implementation,
        version: args.version,
        build: args.build,
        arch: match args.objects.first() {
            Some(first) => object_arch(first)?,
            None => String::new(),
        },
        objects,
    };
    let required = |l: &dyn Layouts| kinds.iter().flat_map(|k| k.missing_layouts(l)).collect();
    let mut unknown = Vec::new();
    for name in &args.types {
        if let Err(e) = oracle.find_type(name) {
            unknown.push(e.to_string());
        }
    }
    if !unknown.is_empty() {
        return Err(ProfileCliError::NoDecoder(unknown.join("; ")));
    }
    let decoders_ask = ask(&kinds);
    let ask_all = |l: &dyn Layouts| {
        decoders_ask(l);
        for name in &args.types {
            // Known to the oracle (checked above).
            let _ = ask_whole_type(&oracle, l, name, WholeTypeLimits::default());
        }
    };
    let object_names: Vec<String> = identity.objects.iter().map(|o| o.name.clone()).collect();
    let mut profile = LayoutProfile::write(identity, &oracle, &ask_all, &required)?;
    if let Some(path) = &args.symbols {
        profile.symbols = read_symbols(path, &object_names)?;
    }
    let json = profile.to_json();
    match args.output {
        Some(path) => std::fs::write(&path, json).map_err(|e| ProfileCliError::Io(path, e)),
        None => {
            print!("{json}");
            Ok(())
        }
    }
}

/// The `--symbols` file: `OBJECT NAME ADDRESS SIZE` per line.
fn read_symbols(
    path: &Path,
    objects: &[String],
) -> Result<BTreeMap<String, ProfileSymbol>, ProfileCliError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| ProfileCliError::Io(path.to_path_buf(), e))?;
    parse_profile_symbols(&text, objects)
        .map_err(|e| ProfileCliError::SymbolLine(path.to_path_buf(), e.line, e.why))
}

fn check(path: &Path, objects: &[PathBuf]) -> Result<(), ProfileCliError> {
    let profile = LayoutProfile::load(path)?;
    let oracle = oracle(objects)?;
    let diffs = profile_drift(&profile, &oracle);
    if diffs.is_empty() {
        println!(
            "{}: equal to the DWARF of {} object(s)",
            path.display(),
            objects.len()
        );
        Ok(())
    } else {
        Err(ProfileCliError::Drift(
            path.to_path_buf(),
            diffs.len(),
            diffs.join(", "),
        ))
    }
}
