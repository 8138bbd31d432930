//! `mpidd profile`: write a layout profile from a debug build's DWARF, and
//! check a profile against it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use mpidd_read::LayoutError;
use mpidd_read::{
    ask_whole_type, build_id, build_id_hex, object_arch, shipped_profiles, so_stem, LayoutProfile,
    LayoutTable, Layouts, ProfileError, ProfileIdentity, ProfileObject, ProfileSymbol, TypeOracle,
    WholeTypeLimits,
};
use mpiq_core::DecoderKind;

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
    /// List the profiles mpidd ships.
    List,
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
    /// `ompi-handles` for the Open MPI handle decoders). Repeatable; by
    /// default every decoder whose required questions the objects answer.
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
    /// Writing failed.
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    /// A line of the --symbols file is not `OBJECT NAME ADDRESS SIZE`, or
    /// names an object the profile does not describe.
    #[error("{0} line {1}: {2}")]
    SymbolLine(PathBuf, usize, String),
}

/// The shipped profiles and those in `paths`.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<LayoutProfile>, ProfileError> {
    let mut all = paths
        .iter()
        .map(|p| LayoutProfile::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    // The user's first: a profile given on the command line wins.
    all.extend(shipped_profiles());
    Ok(all)
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
            }
            Ok(())
        }
    }
}

/// What a profile can be written for: a native queue decoder, or the
/// Open MPI handle decoders of `mpihandles`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Decoder {
    Queues(DecoderKind),
    OmpiHandles,
}

impl Decoder {
    fn all() -> impl Iterator<Item = Decoder> {
        DecoderKind::ALL
            .iter()
            .map(|&k| Decoder::Queues(k))
            .chain([Decoder::OmpiHandles])
    }

    fn name(self) -> &'static str {
        match self {
            Decoder::Queues(k) => k.name(),
            Decoder::OmpiHandles => "ompi-handles",
        }
    }

    fn ask_layouts(self, layouts: &dyn Layouts) {
        match self {
            Decoder::Queues(k) => k.ask_layouts(layouts),
            Decoder::OmpiHandles => mpihandles::ompi_ask_layouts(layouts),
        }
    }

    fn missing_layouts(self, layouts: &dyn Layouts) -> Vec<LayoutError> {
        match self {
            Decoder::Queues(k) => k.missing_layouts(layouts),
            Decoder::OmpiHandles => mpihandles::ompi_missing_layouts(layouts),
        }
    }
}

/// The decoders named, or else every decoder whose required questions the
/// objects answer (a CH3 build does not describe CH4's types).
fn decoders(names: &[String], oracle: &TypeOracle) -> Result<Vec<Decoder>, ProfileCliError> {
    if names.is_empty() {
        let mut gaps = Vec::new();
        let kinds: Vec<Decoder> = Decoder::all()
            .filter(|k| match k.missing_layouts(oracle).into_iter().next() {
                None => true,
                Some(first) => {
                    gaps.push(format!("{}: {first}", k.name()));
                    false
                }
            })
            .collect();
        if kinds.is_empty() {
            return Err(ProfileCliError::NoDecoder(gaps.join("; ")));
        }
        return Ok(kinds);
    }
    names
        .iter()
        .map(|n| {
            Decoder::all().find(|k| k.name() == n).ok_or_else(|| {
                let known: Vec<&str> = Decoder::all().map(|k| k.name()).collect();
                ProfileCliError::UnknownDecoder(n.clone(), known.join(", "))
            })
        })
        .collect()
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
        for stripped in args
            .for_builds
            .iter()
            .filter(|p| so_stem(&file_name(p)) == so_stem(&name))
        {
            match hex_id(stripped)? {
                Some(id) => build_ids.push(id),
                None => {
                    return Err(ProfileCliError::Object(
                        stripped.clone(),
                        "has no build-id, so no profile can be chosen for it".to_string(),
                    ))
                }
            }
        }
        objects.push(ProfileObject {
            name,
            source_build_id: hex_id(path)?,
            build_ids,
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
    let bad = |n: usize, why: String| ProfileCliError::SymbolLine(path.to_path_buf(), n + 1, why);
    let number = |s: &str| match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    };
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let [object, name, address, size] = line.split_whitespace().collect::<Vec<_>>()[..] else {
            return Err(bad(n, "expected OBJECT NAME ADDRESS SIZE".to_string()));
        };
        if !objects.iter().any(|o| o == object) {
            return Err(bad(
                n,
                format!(
                    "`{object}` is none of the profile's objects ({})",
                    objects.join(", ")
                ),
            ));
        }
        let (Some(address), Some(size)) = (number(address), number(size)) else {
            return Err(bad(n, "ADDRESS and SIZE must be numbers".to_string()));
        };
        let symbol = ProfileSymbol {
            object: object.to_string(),
            address,
            size,
        };
        if out.insert(name.to_string(), symbol).is_some() {
            return Err(bad(n, format!("`{name}` is given twice")));
        }
    }
    Ok(out)
}

fn check(path: &Path, objects: &[PathBuf]) -> Result<(), ProfileCliError> {
    let profile = LayoutProfile::load(path)?;
    let oracle = oracle(objects)?;
    // The profile's own questions are asked again of the DWARF; the
    // answers must be the same, and the DWARF must answer them all.
    let (fresh, unanswered) = LayoutTable::record(&oracle, &|l| profile.layouts.replay(l));
    let mut diffs = Vec::new();
    if let Some(e) = unanswered.first() {
        diffs.push(format!("the DWARF lacks {e}"));
    }
    let (stored, fresh) = (
        serde_json::to_value(&profile.layouts).unwrap_or_default(),
        serde_json::to_value(&fresh).unwrap_or_default(),
    );
    if let (Some(stored), Some(fresh)) = (stored.as_object(), fresh.as_object()) {
        for (name, value) in stored {
            if fresh.get(name) != Some(value) {
                diffs.push(name.clone());
            }
        }
    }
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
