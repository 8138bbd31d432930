//! `mpidd identify`: which build an MPI library is, and what mpidd would
//! read it with (`mpiq_core::BuildIdentity`), for a library file, a core
//! or a live process. The command a person runs when the queues are
//! refused.

use std::io::Write;
use std::path::PathBuf;

use mpidd_read::{LayoutProfile, Limits, ProfileError, TargetReader, TypeOracle};
use mpiq_core::{BuildIdentity, CheckOutcome, DecoderChoice, Fit, IdentifyError, ReaderOutcome};

use crate::target_args::{read_target, OpenError, OpenTarget, TargetArgs};

/// The arguments of `mpidd identify`: a library, or a target as the other
/// commands name one (which --library makes unnecessary).
#[derive(clap::Args)]
#[command(mut_arg("core", |a| a.required_unless_present_any(["pid", "gdbserver", "library"])))]
pub struct IdentifyArgs {
    /// An MPI library file, read with no process: what it states, its
    /// build key and DWARF, and which profile or family would give its
    /// layouts.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["core", "pid", "gdbserver"])]
    library: Option<PathBuf>,
    /// Or the process whose MPI library to identify (also checks the
    /// layouts on it).
    #[command(flatten)]
    target: TargetArgs,
    /// A layout profile to consider besides the profiles mpidd ships.
    /// Repeatable.
    #[arg(long = "profile", value_name = "FILE")]
    profiles: Vec<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Failures of `mpidd identify`.
#[derive(Debug, thiserror::Error)]
pub enum IdentifyCliError {
    /// A profile given could not be read.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// The target could not be opened or stopped.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The build could not be identified.
    #[error(transparent)]
    Identify(#[from] IdentifyError),
    /// JSON output failed.
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Writing to standard output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

/// Runs `mpidd identify`.
pub fn run(args: IdentifyArgs) -> Result<(), IdentifyCliError> {
    let profiles = crate::profile::load_all(&args.profiles)?;
    // Identify reports on every profile: all are parsed.
    let profiles = profiles.all();
    let limits = Limits::default();
    let identity = match &args.library {
        Some(library) => BuildIdentity::of_library_file(library, profiles, &limits)?,
        // clap asks for a target when no library is named.
        None => read_target(
            args.target.source(&limits),
            true,
            args.target.verbose(),
            ProcessIdentity { profiles, limits },
        )?,
    };
    let mut out = std::io::stdout().lock();
    let printed = if args.json {
        serde_json::to_writer_pretty(&mut out, &identity)
            .map_err(IdentifyCliError::from)
            .and_then(|()| Ok(writeln!(out)?))
    } else {
        print_text(&mut out, &identity).map_err(IdentifyCliError::from)
    };
    match printed {
        Err(IdentifyCliError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Identifies the MPI library of an open target.
struct ProcessIdentity<'a> {
    profiles: &'a [LayoutProfile],
    limits: Limits,
}

impl TargetReader for ProcessIdentity<'_> {
    type Output = BuildIdentity;
    type Error = IdentifyCliError;
    fn read<T: OpenTarget>(self, t: &T) -> Result<BuildIdentity, IdentifyCliError> {
        let dwarf = TypeOracle::from_objects(t.elf_symbols());
        Ok(BuildIdentity::of_process(
            t,
            t,
            t.elf_symbols(),
            &dwarf,
            self.profiles,
            &self.limits,
        )?)
    }
}

/// The identity as lines of `name  value`.
fn print_text(out: &mut impl Write, id: &BuildIdentity) -> std::io::Result<()> {
    let line = |out: &mut dyn Write, name: &str, value: &str| writeln!(out, "{name:<10}{value}");
    line(out, "library", &id.library)?;
    if id.file.display().to_string() != id.library {
        line(out, "file", &id.file.display().to_string())?;
    }
    line(out, "arch", id.arch.as_deref().unwrap_or("not known"))?;
    match (&id.build_id, &id.code_digest) {
        (Some(b), _) => line(out, "build-id", b)?,
        (None, Some(d)) => line(out, "build-id", &format!("none; code digest {d}"))?,
        (None, None) => line(out, "build-id", "none, and no code to digest")?,
    }
    let s = &id.stated;
    let mut states = match (&s.implementation, &s.version) {
        (Some(i), Some(v)) => format!("{i} {v}"),
        (Some(i), None) => format!("{i}, no version found"),
        (None, _) => "no implementation or version found".to_string(),
    };
    if let Some(d) = &s.device {
        states.push_str(&format!(", device {d}"));
    }
    line(out, "states", &states)?;
    if let Some(v) = &s.vendor {
        line(out, "vendor", v)?;
    }
    if let Some(c) = &s.configure {
        line(out, "configure", c)?;
    }
    let mut dwarf = match (&id.dwarf.debug_file, id.dwarf.present) {
        (Some(f), _) => format!("in its debug file {}", f.display()),
        (None, true) => "in the file".to_string(),
        (None, false) => "none".to_string(),
    };
    match (id.dwarf.unanswered, &id.dwarf.first_unanswered) {
        (Some(0), _) => dwarf.push_str("; the DWARF answers every question the decoder asks"),
        (Some(n), Some(first)) => dwarf.push_str(&format!(
            "; {n} question(s) the decoder asks are not answered by DWARF (first: {first})"
        )),
        _ => {}
    }
    line(out, "DWARF", &dwarf)?;
    match &id.decoder {
        DecoderChoice::Chosen { name, checked_on } => {
            line(out, "decoder", &format!("{name} (checked on {checked_on})"))?
        }
        DecoderChoice::Refused { reason } => line(out, "decoder", &format!("none: {reason}"))?,
        _ => {}
    }
    writeln!(out, "profiles")?;
    for p in &id.profiles {
        let fit = match &p.fit {
            Fit::Build { object } => format!("made for this build (its {object})"),
            Fit::Family { family } => format!("its family {family} holds this build"),
            Fit::No { why } => format!("does not fit: {why}"),
            _ => String::new(),
        };
        writeln!(out, "  {}: {fit}", p.profile)?;
    }
    line(out, "layouts", &id.layouts.text)?;
    if let Some(p) = &id.process {
        let required = if p.check_required {
            ""
        } else {
            " (not required of DWARF)"
        };
        match &p.check {
            CheckOutcome::Passed => line(out, "check", &format!("passed{required}"))?,
            CheckOutcome::Refused { line: why } => {
                line(out, "check", &format!("refused{required}: {why}"))?
            }
            CheckOutcome::NotRun { why } => line(out, "check", &format!("not run: {why}"))?,
            _ => {}
        }
        match &p.reader {
            ReaderOutcome::Built { name } => line(out, "reader", name)?,
            ReaderOutcome::Refused { reason } => line(out, "reader", &format!("none: {reason}"))?,
            _ => {}
        }
    }
    out.flush()
}
