//! `mpidd handle`: what one MPI handle of a process means.

use std::io::Write;
use std::path::PathBuf;

use mpidd_read::{
    LayoutOrigin, LayoutProfile, Layouts, Limits, NoLayouts, ProfileError, ProfileSet,
    SymbolSource, TargetMemory, TargetParts, TargetReader, TypeOracle,
};
use mpidd_types::TargetAddr;
use mpihandles::{
    derive_mpich_layouts, open_resolver, Availability, ChosenResolver, DeriveError, Details,
    HandleError, HandleKind, HandleView, OpenResolverError, ProfileLayouts, StatusView,
};
use mpiq_core::world_rank;

use crate::target_args::{read_target, OpenError, OpenTarget, TargetArgs};

/// The arguments of `mpidd handle`.
#[derive(clap::Args)]
pub struct HandleArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Read a live process without stopping it. Otherwise it is stopped
    /// while it is read (every thread, through ptrace) and always let go;
    /// a process that was already stopped stays stopped.
    #[arg(long, requires = "pid")]
    no_stop: bool,
    /// The kind of handle: comm, group, datatype, errhandler, op, info,
    /// request, win, file, or status.
    #[arg(long, value_parser = parse_kind)]
    kind: HandleKind,
    /// The handle's value: decimal (MPICH's handles are negative ints for
    /// most user objects) or 0x-prefixed hex; for a file, ROMIO's pointer.
    /// Open MPI's handles are pointers.
    #[arg(long, value_parser = parse_number, allow_hyphen_values = true,
          required_unless_present_any = ["var", "address"], conflicts_with_all = ["var", "address"])]
    value: Option<i64>,
    /// Read the handle from this global variable of the program (for a
    /// status: the status variable itself).
    #[arg(long, conflicts_with = "address")]
    var: Option<String>,
    /// For a status: its address in the process.
    #[arg(long, value_parser = parse_number)]
    address: Option<i64>,
    /// The value (or the variable) is a Fortran INTEGER handle
    /// (`MPI_*_c2f`'s result; under the MPI-5 ABI, `MPI_*_toint`'s).
    #[arg(long)]
    fortran: bool,
    /// The value (or the variable) is a handle of the MPI-5 standard ABI
    /// (a program built with MPICH's `mpicc_abi`): a predefined constant,
    /// or the address of MPICH's object; with `--fortran`, what
    /// `MPI_*_toint` gave. Taken without it when the process loaded
    /// MPICH's `libmpi_abi.so`.
    #[arg(long)]
    abi: bool,
    /// For a status: the datatype it was received with, to count elements.
    #[arg(long, value_parser = parse_number, allow_hyphen_values = true)]
    datatype: Option<i64>,
    /// Most entries read from one target table, list or type map.
    #[arg(long, default_value_t = Limits::default().max_table_entries)]
    max_table_entries: u64,
    /// A layout profile to use when the MPI library has no debug info
    /// (besides the profiles mpidd ships); chosen only for a library whose
    /// build-id it lists. Repeatable.
    #[arg(long = "profile", value_name = "FILE")]
    profiles: Vec<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

fn parse_kind(s: &str) -> Result<HandleKind, String> {
    HandleKind::from_short_name(s).ok_or_else(|| {
        let names: Vec<&str> = HandleKind::ALL.iter().map(|k| k.short_name()).collect();
        format!("unknown kind {s:?}: one of {}", names.join(", "))
    })
}

fn parse_number(s: &str) -> Result<i64, String> {
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let magnitude = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => digits.parse::<u64>(),
    }
    .map_err(|e| format!("{s:?} is not a number: {e}"))?;
    let v = i64::try_from(magnitude).map_err(|_| format!("{s:?} is too large"))?;
    Ok(if negative { -v } else { v })
}

/// Failures of `mpidd handle`.
#[derive(Debug, thiserror::Error)]
pub enum HandleCliError {
    /// The target could not be opened or stopped.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The handle could not be interpreted.
    #[error(transparent)]
    Handle(#[from] HandleError),
    /// Neither the MPI library's debug info nor a layout profile describes
    /// it.
    #[error(transparent)]
    NoLayouts(#[from] NoLayouts),
    /// No handle resolver could be made for the process.
    #[error(transparent)]
    Resolver(#[from] OpenResolverError),
    /// Neither debug info nor a profile describes the MPI library, and
    /// layouts derived from the process did not check out.
    #[error("{missing}. Nor could its layouts be derived from the process: {derived}")]
    NotDerived {
        /// What the debug info and profiles lack.
        missing: Box<NoLayouts>,
        /// Why the derived layouts were refused.
        derived: Box<DeriveError>,
    },
    /// A layout profile could not be read.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// The variable is not in the program.
    #[error("{0}")]
    Variable(String),
    /// The arguments do not fit together.
    #[error("{0}")]
    Usage(String),
    /// JSON output failed.
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Writing to standard output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

/// Reads and prints one handle.
pub fn run(args: HandleArgs) -> Result<(), HandleCliError> {
    if args.kind == HandleKind::Status && args.value.is_some() {
        return Err(HandleCliError::Usage(
            "a status is read at an address: use --address or --var".to_string(),
        ));
    }
    if args.address.is_some() && args.kind != HandleKind::Status {
        return Err(HandleCliError::Usage(
            "--address is for --kind status; give other handles with --value or --var".to_string(),
        ));
    }
    let limits = Limits {
        max_table_entries: args.max_table_entries,
        ..Limits::default()
    };
    let profiles = crate::profile::load_all(&args.profiles)?;
    let source = args.target.source(&Limits::default());
    let value = read_target(
        source,
        !args.no_stop,
        args.target.verbose(),
        HandleReader {
            args: &args,
            limits,
            profiles: &profiles,
        },
    )?;
    match print(&value, args.json) {
        Err(HandleCliError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Reads one handle from an open target.
struct HandleReader<'a> {
    args: &'a HandleArgs,
    limits: Limits,
    profiles: &'a ProfileSet,
}

impl TargetReader for HandleReader<'_> {
    type Output = Shown;
    type Error = HandleCliError;
    fn read<T: OpenTarget>(self, t: &T) -> Result<Shown, HandleCliError> {
        // The profiles of the objects this process loads, not every one.
        let profiles = self.profiles.for_objects(t.elf_symbols());
        read(t, self.args, self.limits, &profiles)
    }
}

fn read<T: OpenTarget>(
    t: &T,
    args: &HandleArgs,
    limits: Limits,
    profiles: &[LayoutProfile],
) -> Result<Shown, HandleCliError> {
    let oracle = TypeOracle::from_symbols(t.elf_symbols());
    let derived;
    let opened = match open_resolver(t, t, t.elf_symbols(), &oracle, profiles, limits) {
        // A library that keeps its symbols but no debug info (Intel MPI's):
        // layouts found on the process, checked on objects MPICH fixes.
        Err(OpenResolverError::NoLayouts(missing)) => {
            derived = derive_mpich_layouts(t, t).map_err(|derived| HandleCliError::NotDerived {
                missing: Box::new(missing),
                derived: Box::new(derived),
            })?;
            eprintln!(
                "mpidd: no debug info or profile describes the MPI library; its layouts were \
                 derived from the process and checked on its own objects:\n  {}",
                derived.checked.join("\n  ")
            );
            open_resolver(t, t, t.elf_symbols(), &derived.table, profiles, limits)?
        }
        other => other?,
    };
    match &opened.profile {
        Some(ProfileLayouts {
            library,
            origin: LayoutOrigin::Profile(id),
        }) => eprintln!(
            "mpidd: the layouts of {library} come from the profile of {} {} ({})",
            id.implementation, id.version, id.build
        ),
        Some(ProfileLayouts {
            library,
            origin: origin @ LayoutOrigin::Family(_),
        }) => eprintln!(
            "mpidd: the layouts of {library} come from {}; checked on the process",
            origin.source_text()
        ),
        _ => {}
    }
    let resolver = opened.resolver();
    let layouts = opened.layouts;
    // Open MPI's handles are all pointers; MPICH's are ints, but for
    // ROMIO's files.
    let pointers = opened.handles_are_pointers();
    if args.kind == HandleKind::Status {
        let addr = match (&args.var, args.address) {
            (Some(var), _) => variable(t, var, None)?.0,
            (None, Some(a)) => TargetAddr(a as u64),
            (None, None) => unreachable!("clap requires --value, --var or --address"),
        };
        return Ok(Shown::Status(resolver.status(addr, args.datatype)?));
    }
    // A program built against the standard ABI holds pointer-wide
    // handles, which MPICH's ABI layer gives its own meaning.
    let abi_mpich = match &opened.resolver {
        ChosenResolver::Mpich(mpich) if args.abi || loads_abi_library(t.elf_symbols()) => {
            Some(mpich.as_ref())
        }
        _ => None,
    };
    let value = match (&args.var, args.value) {
        (Some(var), _) => {
            let width = if (pointers || abi_mpich.is_some() || args.kind == HandleKind::File)
                && !args.fortran
            {
                t.abi().address_bytes() as u64
            } else {
                4
            };
            variable(t, var, Some(width))?.1
        }
        (None, Some(v)) => v,
        (None, None) => unreachable!("clap requires --value, --var or --address"),
    };
    let mut view = if args.fortran {
        let v = i32::try_from(value)
            .map_err(|_| HandleCliError::Usage(format!("{value} is not a Fortran INTEGER")))?;
        match abi_mpich {
            Some(mpich) => mpich.resolve_abi_int(args.kind, v)?,
            None => resolver.resolve_fortran(args.kind, v)?,
        }
    } else if let Some(mpich) = abi_mpich {
        mpich.resolve_abi(args.kind, value as u64)?
    } else {
        resolver.resolve(args.kind, value)?
    };
    if let Details::Comm(comm) = &mut view.details {
        fill_world_rank(&mut comm.world_rank, t, layouts, &limits);
    }
    Ok(Shown::View(Box::new(view)))
}

/// A communicator's `world_rank` that its decoder could not read comes
/// from the process by the other ways ([`world_rank`]: the MPI library's
/// own globals, or the launcher's environment, which needs no debug info).
fn fill_world_rank<T: OpenTarget>(
    field: &mut Availability<i32>,
    t: &T,
    layouts: &dyn Layouts,
    limits: &Limits,
) {
    if let Availability::NotAvailable { reason } = field {
        let parts = TargetParts {
            memory: t,
            symbols: t,
            layouts,
        };
        *field = match world_rank(&parts, limits) {
            Ok(found) => Availability::Value(found.rank),
            Err(e) => Availability::not_available(format!("{reason}; {e}")),
        };
    }
}

/// The address of the global `name`, and with `width`, the integer of that
/// many bytes it holds (a pointer is zero-extended, an int sign-extended).
fn variable<T: TargetMemory + SymbolSource>(
    t: &T,
    name: &str,
    width: Option<u64>,
) -> Result<(TargetAddr, i64), HandleCliError> {
    let sym = t.lookup(name).ok_or_else(|| {
        HandleCliError::Variable(format!(
            "no global variable {name} in {}",
            mpidd_read::searched_summary(t)
        ))
    })?;
    let Some(width) = width else {
        return Ok((sym.addr, 0));
    };
    if sym.size != 0 && sym.size != width {
        return Err(HandleCliError::Variable(format!(
            "{name} is {} bytes, not a {width}-byte handle",
            sym.size
        )));
    }
    let value = if width == 4 {
        i64::from(
            t.read_i32(sym.addr, "handle variable")
                .map_err(HandleError::from)?,
        )
    } else {
        t.read_pointer(sym.addr, "handle variable")
            .map_err(HandleError::from)?
            .0 as i64
    };
    Ok((sym.addr, value))
}

/// What `mpidd handle` shows: a handle's view, or a status.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Shown {
    View(Box<HandleView>),
    Status(StatusView),
}

/// Prints JSON, or the text the library's `Display` gives.
fn print(shown: &Shown, json: bool) -> Result<(), HandleCliError> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if json {
        serde_json::to_writer_pretty(&mut out, shown)?;
        writeln!(out)?;
    } else {
        match shown {
            Shown::View(view) => write!(out, "{view}")?,
            Shown::Status(status) => write!(out, "{status}")?,
        }
    }
    out.flush()?;
    Ok(())
}

/// Whether the process loaded MPICH's library of the MPI-5 standard ABI
/// (`libmpi_abi.so`), whose programs' handles are the standard's.
fn loads_abi_library(objects: &dyn mpidd_read::LoadedObjects) -> bool {
    objects
        .loaded_objects()
        .iter()
        .any(|o| mpidd_read::so_stem(&o.name) == "libmpi_abi")
}
