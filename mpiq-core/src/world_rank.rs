//! Which `MPI_COMM_WORLD` rank a process is, read from the process itself
//! (the vendor message-queue libraries ask the debugger for it, and a
//! person wants to see it):
//! - MPICH keeps it in the global `MPIR_Process` (an `MPIR_Process_t`) as
//!   the member `rank`;
//! - Open MPI in its world communicator, the exported
//!   `ompi_mpi_comm_world`, as `c_my_rank` (its offset from the layouts);
//! - and the launcher tells every rank in its environment: Open MPI's
//!   `mpirun` sets `OMPI_COMM_WORLD_RANK`, PMIx `PMIX_RANK`, MPICH's Hydra
//!   `PMI_RANK`, Slurm's `srun` `SLURM_PROCID`. Read through libc's
//!   `environ`, that needs no layouts at all, so a stripped MPI library
//!   (Debian's) is no obstacle.
//!
//! [`job_identity`](crate::job_identity()) reads the rest of a rank's
//! place in its job the same way.

use mpidd_read::{Limits, SymbolSource, Target, TargetMemory, TypeOracle};
use mpidd_types::TargetAddr;
use serde::Serialize;

/// Why the rank could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorldRankError {
    /// The process has no `MPIR_Process`: not MPICH, or stripped of local
    /// symbols.
    #[error("no symbol MPIR_Process in {searched}: not an MPICH process, or its library lost its local symbols")]
    NoSymbol {
        /// The objects searched, told short.
        searched: String,
    },
    /// The type of `MPIR_Process` is not in the debug info.
    #[error(transparent)]
    Type(#[from] mpidd_read::TypeError),
    /// The member could not be read.
    #[error(transparent)]
    Read(#[from] mpidd_read::ReadError),
    /// The process has no `environ` (libc's), so its environment cannot
    /// be found.
    #[error("no symbol environ (libc's) to find its environment")]
    NoEnvironment,
    /// Its environment's vector could not be read.
    #[error("its environment: {0}")]
    Environment(#[source] mpidd_read::ReadError),
    /// No way of finding the rank worked; each way tried and why not.
    #[error("its world rank is not in the process: {}", .tried.join("; "))]
    NotFound {
        /// One short reason per way tried.
        tried: Vec<String>,
    },
}

/// Where a world rank was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum RankSource {
    /// MPICH's `MPIR_Process.rank`.
    MpichProcess,
    /// Open MPI's `ompi_mpi_comm_world.c_my_rank`.
    OmpiCommWorld,
    /// The launcher's environment variable of this name.
    Environment(&'static str),
    /// The PMIx client library's record of its own id: `myid` of
    /// libpmix's exported `pmix_globals` (see [`job_identity`](crate::job_identity())).
    PmixGlobals,
}

impl std::fmt::Display for RankSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RankSource::MpichProcess => f.write_str("MPIR_Process.rank"),
            RankSource::OmpiCommWorld => f.write_str("ompi_mpi_comm_world.c_my_rank"),
            RankSource::Environment(var) => write!(f, "{var} in its environment"),
            RankSource::PmixGlobals => f.write_str("libpmix's pmix_globals.myid"),
        }
    }
}

/// A process's `MPI_COMM_WORLD` rank and where it was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorldRank {
    /// The rank.
    pub rank: i32,
    /// Where it was read.
    pub source: RankSource,
}

/// The launchers' variables, in the order they are believed: the MPI
/// implementation's own before the process manager's.
///
/// `SLURM_PROCID` comes last: it is the task's rank in its Slurm job step,
/// which is the world rank when `srun` starts the ranks itself (`srun
/// --mpi=pmi2` or `pmix` also sets `PMI_RANK` or `PMIX_RANK`, believed
/// first), but not for a process that `mpirun` started inside a step.
///
/// Not here: `MPI_LOCALRANKID` (Intel MPI's and MPICH's Hydra, also
/// `OMPI_COMM_WORLD_LOCAL_RANK`, `SLURM_LOCALID`) is the rank among the
/// ranks of one node, 0 on every node; it gives the world rank only added
/// to the world rank of the node's first process, and no launcher puts
/// that in the environment. Hydra sets `PMI_RANK` beside it anyway.
pub(crate) const RANK_VARIABLES: [&str; 4] = [
    "OMPI_COMM_WORLD_RANK",
    "PMIX_RANK",
    "PMI_RANK",
    "SLURM_PROCID",
];
/// Most environment entries looked at: far above any real environment,
/// while a corrupt `environ` cannot keep the reader going.
const MAX_ENVIRONMENT: u64 = 1 << 16;

/// Reads `MPIR_Process.rank`, with the member's offset from the debug
/// info of the library that defines it.
pub fn mpich_world_rank<M, S>(
    memory: &M,
    symbols: &S,
    types: &TypeOracle,
) -> Result<i32, WorldRankError>
where
    M: TargetMemory + ?Sized,
    S: SymbolSource + ?Sized,
{
    let sym = symbols
        .lookup("MPIR_Process")
        .ok_or_else(|| WorldRankError::NoSymbol {
            searched: mpidd_read::searched_summary(symbols),
        })?;
    let field = types.offset_of("MPIR_Process_t", "rank")?;
    let addr = TargetAddr(sym.addr.0.wrapping_add(field.offset));
    Ok(memory.read_i32(addr, "MPIR_Process.rank")?)
}

/// The process's world rank, from the first way that gives one: MPICH's
/// `MPIR_Process.rank` or Open MPI's `ompi_mpi_comm_world.c_my_rank`
/// (with offsets from `layouts`), else the launcher's environment
/// variable (which needs no layouts). Fails naming why each way failed.
pub fn world_rank(target: &dyn Target, limits: &Limits) -> Result<WorldRank, WorldRankError> {
    let (memory, symbols, layouts) = (target.memory(), target.symbols(), target.layouts());
    let mut tried = Vec::new();
    let in_memory = [
        (
            "MPIR_Process",
            "MPIR_Process_t",
            "rank",
            RankSource::MpichProcess,
        ),
        (
            "ompi_mpi_comm_world",
            "ompi_communicator_t",
            "c_my_rank",
            RankSource::OmpiCommWorld,
        ),
    ];
    for (symbol, type_name, member, source) in in_memory {
        let Some(sym) = symbols.lookup(symbol) else {
            continue;
        };
        // Open MPI's ompi_mpi_comm_world is an ompi_predefined_communicator_t
        // whose first member is the communicator itself.
        match layouts.member(type_name, member) {
            Ok(m) if m.size == 4 => {
                let addr = TargetAddr(sym.addr.0.wrapping_add(m.offset));
                match memory.read_i32(addr, "the world rank") {
                    Ok(rank) => return Ok(WorldRank { rank, source }),
                    Err(e) => tried.push(format!("{symbol}: {e}")),
                }
            }
            Ok(m) => tried.push(format!(
                "{type_name}.{member} is {} bytes, not an int",
                m.size
            )),
            // The layout source's reason may list every object searched;
            // the short form is enough here.
            Err(_) => tried.push(format!(
                "{symbol} is there but no debug info or profile gives {type_name}.{member}"
            )),
        }
    }
    match environment_rank(memory, symbols, limits) {
        Ok(found) => Ok(found),
        Err(why) => {
            tried.push(why);
            Err(WorldRankError::NotFound { tried })
        }
    }
}

/// The rank the launcher put in the process's environment alone: no
/// layouts needed, so it costs a few reads where [`world_rank`] may first
/// index the MPI library's debug info. Fails with one short reason.
pub fn environment_world_rank(target: &dyn Target, limits: &Limits) -> Result<WorldRank, String> {
    environment_rank(target.memory(), target.symbols(), limits)
}

/// The rank the launcher put in the process's environment.
fn environment_rank<M, S>(memory: &M, symbols: &S, limits: &Limits) -> Result<WorldRank, String>
where
    M: TargetMemory + ?Sized,
    S: SymbolSource + ?Sized,
{
    let not_found = || {
        let (last, others) = RANK_VARIABLES.split_last().expect("rank variables");
        format!("no {} or {last} in its environment", others.join(", "))
    };
    let mut best: Option<(usize, i32)> = None;
    scan_environment(memory, symbols, limits, |text| {
        for (preference, var) in RANK_VARIABLES.iter().enumerate() {
            let value = value_of(text, var)
                .and_then(|v| std::str::from_utf8(v).ok())
                .and_then(|v| v.parse::<i32>().ok());
            if let Some(rank) = value.filter(|&r| r >= 0) {
                if best.is_none_or(|(p, _)| preference < p) {
                    best = Some((preference, rank));
                }
            }
        }
    })
    .map_err(|e| e.to_string())?;
    best.map(|(p, rank)| WorldRank {
        rank,
        source: RankSource::Environment(RANK_VARIABLES[p]),
    })
    .ok_or_else(not_found)
}

/// `VALUE` when `entry` is `VAR=VALUE`.
pub(crate) fn value_of<'a>(entry: &'a [u8], var: &str) -> Option<&'a [u8]> {
    entry.strip_prefix(var.as_bytes())?.strip_prefix(b"=")
}

/// Calls `each` with every entry (`NAME=VALUE`) of the process's
/// environment, in order, up to the bounds of `limits`. An entry whose
/// string cannot be read is passed over: the rest may still say.
pub(crate) fn scan_environment<M, S>(
    memory: &M,
    symbols: &S,
    limits: &Limits,
    mut each: impl FnMut(&[u8]),
) -> Result<(), WorldRankError>
where
    M: TargetMemory + ?Sized,
    S: SymbolSource + ?Sized,
{
    // The executable's copy first (a program that uses environ gets its
    // own, by a copy relocation), as the symbol search goes.
    let sym = symbols
        .lookup("environ")
        .or_else(|| symbols.lookup("__environ"))
        .ok_or(WorldRankError::NoEnvironment)?;
    let word = memory.abi().address_bytes() as u64;
    let what = "environ";
    let vector = memory
        .read_pointer(sym.addr, what)
        .map_err(WorldRankError::Environment)?;
    let max = limits.max_table_entries.min(MAX_ENVIRONMENT);
    for i in 0..max {
        let at = TargetAddr(vector.0.wrapping_add(i.wrapping_mul(word)));
        let entry = memory
            .read_pointer(at, what)
            .map_err(WorldRankError::Environment)?;
        if entry.0 == 0 {
            break;
        }
        if let Ok(text) = memory.read_c_string(entry, limits.max_string_len) {
            each(&text);
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use mpidd_read::{LayoutTable, SymbolTable, SyntheticMemory, TargetParts};
    use mpidd_types::TargetAbi;

    /// A process whose `environ` lists `vars`, for `abi`.
    pub(crate) fn with_environment(
        abi: TargetAbi,
        vars: &[&str],
    ) -> (SyntheticMemory, SymbolTable) {
        let word = abi.address_bytes() as u64;
        let mut bytes = vec![0u8; 0x1000];
        let base = 0x10_0000u64;
        let vector = 0x100u64;
        let mut text = 0x400u64;
        let put = |bytes: &mut Vec<u8>, at: u64, v: u64| {
            let b = if abi.byte_order == mpidd_types::ByteOrder::Big {
                v.to_be_bytes()[8 - word as usize..].to_vec()
            } else {
                v.to_le_bytes()[..word as usize].to_vec()
            };
            bytes[at as usize..(at + word) as usize].copy_from_slice(&b);
        };
        put(&mut bytes, 0, base + vector);
        for (i, v) in vars.iter().enumerate() {
            put(&mut bytes, vector + i as u64 * word, base + text);
            bytes[text as usize..text as usize + v.len()].copy_from_slice(v.as_bytes());
            text += v.len() as u64 + 1;
        }
        let mut memory = SyntheticMemory::new(abi);
        memory.map(TargetAddr(base), bytes);
        let mut symbols = SymbolTable::new();
        symbols.insert("/lib/libc.so.6", "environ", TargetAddr(base), word);
        (memory, symbols)
    }

    #[test]
    fn the_launchers_variable_gives_the_rank() {
        for abi in [TargetAbi::X86_64, TargetAbi::POWERPC] {
            let (m, s) = with_environment(
                abi,
                &[
                    "HOME=/root",
                    "PMIX_RANK=7",
                    "OMPI_COMM_WORLD_RANK=3",
                    "PMI_RANK=9",
                ],
            );
            let r = world_rank(
                &TargetParts {
                    memory: &m,
                    symbols: &s,
                    layouts: &LayoutTable::default(),
                },
                &Limits::default(),
            )
            .unwrap();
            assert_eq!(
                r,
                WorldRank {
                    rank: 3,
                    source: RankSource::Environment("OMPI_COMM_WORLD_RANK")
                }
            );
        }
    }

    /// The rank `environment_rank` reads from `vars`, and its variable.
    fn rank_from(vars: &[&str]) -> Result<(i32, RankSource), String> {
        let (m, s) = with_environment(TargetAbi::X86_64, vars);
        environment_rank(&m, &s, &Limits::default()).map(|r| (r.rank, r.source))
    }

    #[test]
    fn slurm_s_task_rank_is_believed_last() {
        // srun alone: its task rank.
        assert_eq!(
            rank_from(&["SLURM_LOCALID=0", "SLURM_PROCID=12", "SLURM_NODEID=3"]),
            Ok((12, RankSource::Environment("SLURM_PROCID")))
        );
        // srun --mpi=pmi2 sets PMI_RANK too, and any PMI's variable wins,
        // wherever it is in the environment.
        assert_eq!(
            rank_from(&["SLURM_PROCID=12", "PMI_RANK=5"]),
            Ok((5, RankSource::Environment("PMI_RANK")))
        );
        assert_eq!(
            rank_from(&["PMIX_RANK=6", "SLURM_PROCID=12"]),
            Ok((6, RankSource::Environment("PMIX_RANK")))
        );
        // A negative or garbled value says nothing.
        assert!(rank_from(&["SLURM_PROCID=-1", "SLURM_PROCIDX=4"]).is_err());
    }

    #[test]
    fn a_rank_on_its_node_is_not_a_world_rank() {
        // Hydra's and Intel MPI's MPI_LOCALRANKID (and Open MPI's and
        // Slurm's local ranks) are 0 on every node: never a world rank.
        let e = rank_from(&[
            "MPI_LOCALRANKID=1",
            "MPI_LOCALNRANKS=4",
            "OMPI_COMM_WORLD_LOCAL_RANK=1",
            "SLURM_LOCALID=1",
        ])
        .unwrap_err();
        assert!(e.contains("SLURM_PROCID in its environment"), "{e}");
        // Beside it, Hydra's PMI_RANK gives the world rank.
        assert_eq!(
            rank_from(&["MPI_LOCALRANKID=1", "PMI_RANK=9"]),
            Ok((9, RankSource::Environment("PMI_RANK")))
        );
    }

    #[test]
    fn open_mpi_s_world_communicator_comes_first() {
        let (mut m, mut s) = with_environment(TargetAbi::X86_64, &["OMPI_COMM_WORLD_RANK=3"]);
        m.map(
            TargetAddr(0x20_0000),
            vec![0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0],
        );
        s.insert(
            "/lib/libmpi.so.40",
            "ompi_mpi_comm_world",
            TargetAddr(0x20_0000),
            512,
        );
        let mut layouts = LayoutTable::default();
        layouts.add_type("ompi_communicator_t", 16).add_member(
            "ompi_communicator_t",
            "c_my_rank",
            8,
            4,
        );
        let r = world_rank(
            &TargetParts {
                memory: &m,
                symbols: &s,
                layouts: &layouts,
            },
            &Limits::default(),
        )
        .unwrap();
        assert_eq!((r.rank, r.source), (2, RankSource::OmpiCommWorld));
        // Without its layout, the environment says.
        let r = world_rank(
            &TargetParts {
                memory: &m,
                symbols: &s,
                layouts: &LayoutTable::default(),
            },
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(r.rank, 3);
    }

    #[test]
    fn nothing_found_says_why_each_way_failed() {
        let (m, mut s) = with_environment(TargetAbi::X86_64, &["HOME=/root", "PMI_RANK=x"]);
        s.insert(
            "/lib/libmpi.so.40",
            "ompi_mpi_comm_world",
            TargetAddr(0x20_0000),
            512,
        );
        let e = world_rank(
            &TargetParts {
                memory: &m,
                symbols: &s,
                layouts: &LayoutTable::default(),
            },
            &Limits::default(),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "its world rank is not in the process: ompi_mpi_comm_world is there but no \
             debug info or profile gives ompi_communicator_t.c_my_rank; no \
             OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID in its \
             environment"
        );
    }

    #[test]
    fn a_looping_environment_is_bounded() {
        // environ points at itself: every entry is the same non-NULL
        // pointer, read until the bound.
        let mut memory = SyntheticMemory::new(TargetAbi::X86_64);
        memory.map(TargetAddr(0x1000), 0x1000u64.to_le_bytes().repeat(512));
        let mut symbols = SymbolTable::new();
        symbols.insert("/lib/libc.so.6", "environ", TargetAddr(0x1000), 8);
        let limits = Limits {
            max_table_entries: 100,
            ..Limits::default()
        };
        let e = world_rank(
            &TargetParts {
                memory: &memory,
                symbols: &symbols,
                layouts: &LayoutTable::default(),
            },
            &limits,
        )
        .unwrap_err();
        assert!(e.to_string().contains("in its environment"), "{e}");
    }
}
