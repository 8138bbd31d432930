//! `mpidd job`: every rank of a job at once, and the verdict on why it
//! hangs. The reading and the analysis are `mpidd-job`'s; this parses the
//! arguments and prints.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use mpidd_job::discover::Found;
use mpidd_job::job_sources::{JobSources, SourceError};
use mpidd_job::slurm::fanout::{step_source, FanoutError, FanoutOptions};
use mpidd_job::{analyze, JobReader, JobReport, RankReading, RankTarget, ReadOptions};
use mpidd_read::Limits;
use mpiq_core::{MqsError, MqsLibrary};

use crate::target_args::core_options;

/// The arguments of `mpidd job`.
#[derive(clap::Args)]
pub struct JobArgs {
    /// A rank, or a launcher whose ranks are read: one with an MPIR
    /// process table (Open MPI's mpirun, srun), or one without (Debian's
    /// mpiexec.hydra), whose descendants that have an MPI library loaded
    /// are the ranks (repeatable).
    #[arg(long, value_name = "PID")]
    pid: Vec<i32>,
    /// A core file of a rank (repeatable).
    #[arg(long, value_name = "FILE")]
    core: Vec<PathBuf>,
    /// A directory of rank cores: every file in it named core*.
    #[arg(long, value_name = "DIR")]
    core_dir: Option<PathBuf>,
    /// The launcher's core file, whose MPIR table gives the cores' hosts
    /// and world ranks.
    #[arg(long, value_name = "FILE")]
    launcher_core: Option<PathBuf>,
    /// The executable the cores came from (for cores without an NT_FILE
    /// note).
    #[arg(long)]
    exe: Option<PathBuf>,
    /// Look for the files the cores name under this directory.
    #[arg(long)]
    sysroot: Option<PathBuf>,
    /// Look for files the cores name by base name in this directory too
    /// (repeatable).
    #[arg(long = "search-path", value_name = "DIR")]
    search_path: Vec<PathBuf>,
    /// Look for separate debug files under this directory (repeatable).
    #[arg(long = "debug-dir", value_name = "DIR")]
    debug_dir: Vec<PathBuf>,
    /// Read queues through this vendor message-queue library where no
    /// native decoder knows the MPI.
    #[arg(long, value_name = "PATH")]
    dll: Option<PathBuf>,
    /// A layout profile for an MPI library without debug info (besides the
    /// shipped ones); chosen only for a library whose build-id (or code digest) it lists.
    /// Repeatable.
    #[arg(long = "profile", value_name = "FILE")]
    profiles: Vec<PathBuf>,
    /// Ranks read at once (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Do not take call stacks.
    #[arg(long)]
    no_stacks: bool,
    /// Do not read the Python frames of ranks that run CPython: their
    /// stacks show the interpreter's native frames only.
    #[arg(long)]
    no_python: bool,
    /// Do not read message queues: the verdict rests on the ranks' stacks
    /// alone (what it says when no decoder reads the ranks' MPI).
    #[arg(long)]
    no_queues: bool,
    /// Time each phase of every rank's reading (open, stop, queues, world
    /// rank, stacks, release) and show it with each rank, with the median
    /// over the ranks; in JSON, each rank's `timings`.
    #[arg(long)]
    timings: bool,
    /// Print the report as JSON (schema mpidd-job/2, docs/job-json.md).
    #[arg(long, conflicts_with_all = ["dot", "svg"])]
    json: bool,
    /// Print the wait-for graph in Graphviz DOT.
    #[arg(long, conflicts_with = "svg")]
    dot: bool,
    /// Print the wait-for graph as SVG (needs Graphviz's dot).
    #[arg(long)]
    svg: bool,
    /// A Slurm job or step whose ranks run on several nodes: an `mpidd
    /// agent` is started on each node through `srun --overlap`, and their
    /// readings are merged (docs/slurm.md). A `--pid` that is an srun is
    /// read this way too.
    #[arg(long, value_name = "JOBID[.STEPID]", conflicts_with_all = ["core", "core_dir"])]
    slurm: Option<mpidd_job::slurm_step::StepName>,
    /// With --slurm: how long to wait for the nodes' agents (seconds).
    #[arg(long, value_name = "SECS", default_value_t = 300.0)]
    timeout: f64,
    /// With --slurm: each agent gives up on a rank whose reading takes
    /// longer (seconds).
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    rank_timeout: f64,
    /// With --slurm: the mpidd the nodes run as `PROGRAM agent ...`
    /// (default: this one, which must then be at the same path on every
    /// node).
    #[arg(long, value_name = "PROGRAM")]
    agent: Option<PathBuf>,
    /// Also write one self-contained HTML page with the verdict, the
    /// graph, the ranks and the merged stacks to this file.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

/// Failures of `mpidd job` as a whole (a rank that cannot be read is not
/// one: it is reported with the others).
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The ranks could not be found.
    #[error(transparent)]
    Sources(#[from] SourceError),
    /// The vendor library could not be loaded.
    #[error(transparent)]
    Mqs(#[from] MqsError),
    /// A layout profile could not be read.
    #[error(transparent)]
    Profile(#[from] mpidd_read::ProfileError),
    /// The picture could not be drawn.
    #[error(transparent)]
    Render(#[from] mpidd_job::render_svg::RenderError),
    /// JSON output failed.
    #[error("cannot print JSON")]
    Json(#[from] serde_json::Error),
    /// Writing the output failed.
    #[error("cannot write the output")]
    Output(#[from] std::io::Error),
    /// The job's nodes could not be read through Slurm.
    #[error(transparent)]
    Slurm(#[from] FanoutError),
}

/// Reads the job and prints its report.
pub fn run(args: JobArgs, no_cache: bool) -> Result<(), JobError> {
    if let Some(source) = step_source(args.slurm.as_ref(), &args.pid) {
        let readings = crate::slurm::read_job(&source, &slurm_options(&args))?;
        return print(&analyze(&readings), &args);
    }
    let sources = JobSources {
        pids: args.pid.clone(),
        cores: args.core.clone(),
        core_dir: args.core_dir.clone(),
        launcher_core: args.launcher_core.clone(),
        core_options: core_options(
            args.exe.clone(),
            args.sysroot.clone(),
            args.search_path.clone(),
            args.debug_dir.clone(),
            &Limits::default(),
        ),
        pmix: crate::pmix_helper::options(mpidd_read::pmix::DEFAULT_TIMEOUT),
    };
    let found = sources.targets(&Limits::default())?;
    for p in &found.pids {
        match p.found {
            Found::Rank => {}
            Found::MpirTable => eprintln!(
                "mpidd: {} rank(s) from the MPIR table of launcher {}",
                p.ranks, p.pid
            ),
            Found::PmixTable => eprintln!(
                "mpidd: {} rank(s) from the process table of launcher {}, through its PMIx server",
                p.ranks, p.pid
            ),
            Found::Descendants => eprintln!(
                "mpidd: launcher {} has no MPIR table; its {} descendant(s) with an MPI \
                 library are the ranks",
                p.pid, p.ranks
            ),
        }
    }
    let mut options = ReadOptions {
        stacks: !args.no_stacks,
        queues: !args.no_queues,
        python: !args.no_python,
        profiles: crate::profile::load_all(&args.profiles)?,
        cache: crate::cache::layout_cache(no_cache),
        timings: args.timings,
        ..ReadOptions::default()
    };
    if let Some(n) = args.jobs {
        options.parallel = n.max(1);
    }
    let mut reader = JobReader::new(options);
    if let Some(dll) = &args.dll {
        reader = reader.with_library(MqsLibrary::load(dll)?);
    }
    let mut readings = read_with_progress(&reader, &found.targets);
    crate::cache::print_warnings(reader.take_cache_warnings());
    sources.apply_launcher_core(&mut readings)?;
    print(&analyze(&readings), &args)
}

/// How the nodes' agents are run: this program's reading options passed
/// on to them.
fn slurm_options(args: &JobArgs) -> FanoutOptions {
    let mut agent_args = Vec::new();
    if args.no_stacks {
        agent_args.push("--no-stacks".to_string());
    }
    if args.no_python {
        agent_args.push("--no-python".to_string());
    }
    if args.no_queues {
        agent_args.push("--no-queues".to_string());
    }
    if let Some(n) = args.jobs {
        agent_args.push(format!("--jobs={n}"));
    }
    for p in &args.profiles {
        agent_args.push(format!("--profile={}", p.display()));
    }
    if let Some(dll) = &args.dll {
        agent_args.push(format!("--dll={}", dll.display()));
    }
    let agent = args
        .agent
        .clone()
        .or_else(|| std::env::current_exe().ok())
        .unwrap_or_else(|| PathBuf::from("mpidd"));
    FanoutOptions {
        timeout: std::time::Duration::try_from_secs_f64(args.timeout)
            .unwrap_or(std::time::Duration::MAX),
        rank_timeout: std::time::Duration::try_from_secs_f64(args.rank_timeout)
            .unwrap_or(std::time::Duration::from_secs(60)),
        agent_args,
        ..FanoutOptions::new(agent)
    }
}

/// Reads the ranks with a progress bar on stderr when it is a terminal.
fn read_with_progress(reader: &JobReader, targets: &[RankTarget]) -> Vec<RankReading> {
    if !std::io::stderr().is_terminal() {
        return reader.read_all(targets, &|_, _| {});
    }
    let bar = indicatif::ProgressBar::new(targets.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} reading ranks {pos}/{len} {wide_bar}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let readings = reader.read_all(targets, &|done, _| bar.set_position(done as u64));
    bar.finish_and_clear();
    readings
}

fn print(report: &JobReport, args: &JobArgs) -> Result<(), JobError> {
    if let Some(path) = &args.html {
        let svg = match mpidd_job::render_svg::to_svg(report) {
            Ok(svg) => Some(svg),
            Err(e) => {
                eprintln!("mpidd: warning: the page has no graph: {e}");
                None
            }
        };
        std::fs::write(
            path,
            mpidd_job::render_html::to_html(report, svg.as_deref()),
        )?;
        eprintln!("mpidd: wrote {}", path.display());
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = if args.json {
        serde_json::to_writer_pretty(&mut out, report)?;
        writeln!(out).map_err(JobError::from)
    } else if args.dot {
        write!(out, "{}", mpidd_job::render_dot::to_dot(report)).map_err(JobError::from)
    } else if args.svg {
        let svg = mpidd_job::render_svg::to_svg(report)?;
        write!(out, "{svg}").map_err(JobError::from)
    } else {
        write!(out, "{}", mpidd_job::render_text::to_text(report)).map_err(JobError::from)
    };
    match written.and_then(|()| out.flush().map_err(JobError::from)) {
        Err(JobError::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
