//! The rest of a rank's place in its job, read as its world rank is
//! (`world_rank.rs`): its PMIx namespace and rank and its job's size from
//! the launcher's variables in its environment, cross-checked against the
//! PMIx client library's own record of its id where the process maps
//! libpmix. Works on cores and stripped libraries alike.

use mpidd_read::{Limits, SymbolSource, Target, TargetMemory};
use mpidd_types::TargetAddr;
use serde::Serialize;

use crate::world_rank::{scan_environment, value_of, RankSource, WorldRankError};

/// The launchers' variables that give the job's size (its number of
/// ranks), believed in this order, as
/// [`RANK_VARIABLES`](crate::world_rank::RANK_VARIABLES): Open MPI's
/// `mpirun` (4.1's `orterun`, 5's `prterun`) sets `OMPI_COMM_WORLD_SIZE`,
/// MPICH's Hydra `PMI_SIZE`, Slurm's `srun` `SLURM_NTASKS` (the tasks of
/// its step). PMIx puts no size in the environment.
///
/// Not here: `OMPI_UNIVERSE_SIZE` is the slots the job could use (2 on a
/// 2-core machine running 4 ranks oversubscribed), and `MPI_LOCALNRANKS`,
/// `OMPI_COMM_WORLD_LOCAL_SIZE` count one node's ranks.
const SIZE_VARIABLES: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"];
/// The PMIx namespace a launcher's PMIx server gave the process (Open
/// MPI 4.1's `orterun`, 5's `prterun`, `srun --mpi=pmix`).
const NAMESPACE_VARIABLE: &str = "PMIX_NAMESPACE";
/// The PMIx rank in that namespace.
const PMIX_RANK_VARIABLE: &str = "PMIX_RANK";
/// PMIx's `PMIX_MAX_NSLEN`: a namespace is at most this many bytes, and
/// `pmix_proc_t` holds it in that many plus its terminator.
const MAX_NAMESPACE: usize = 255;
/// Largest job size or rank believed: MPI numbers ranks with C ints.
const MAX_RANK: u64 = i32::MAX as u64;
/// Most notes a reading keeps: a hostile environment may repeat a
/// variable without end.
const MAX_NOTES: usize = 8;
/// Most bytes of a rejected value a note quotes.
const QUOTED: usize = 40;

/// Where OpenPMIx keeps a client's id: `pmix_globals_t` begins with `int
/// init_cntr` then `pmix_proc_t myid`, which is `char
/// nspace[PMIX_MAX_NSLEN + 1]` then `uint32_t rank`. Offsets as a C
/// compiler gives them for the headers of OpenPMIx 4.2.2 (Debian 12) and
/// 5.0.7 (Debian 13), and as read in pip's Open MPI 5.0.11 ranks (PMIx
/// 5.0.11): the same on every ABI, since `int` is 4 bytes and the name is
/// an array of bytes.
const PMIX_INIT_CNTR: u64 = 0;
const PMIX_NSPACE: u64 = 4;
const PMIX_RANK: u64 = PMIX_NSPACE + MAX_NAMESPACE as u64 + 1;
/// The bytes of `pmix_globals` read: through `myid.rank`.
const PMIX_ID_BYTES: usize = PMIX_RANK as usize + 4;

/// A value and where it was read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Where it was read.
    pub source: RankSource,
}

/// A rank's place in its job beyond its world rank ([`world_rank`](crate::world_rank())): its
/// PMIx identity (namespace and rank), which tells two jobs' ranks apart,
/// and the job's size, which tells whether every rank is there. Each
/// part is `None` when nothing in the process gives it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct JobIdentity {
    /// Its PMIx namespace: the job's name to its PMIx server
    /// (`prterun-host-1234@1`, Open MPI 4.1's `1521090561`).
    pub namespace: Option<Sourced<String>>,
    /// Its rank in that namespace.
    pub pmix_rank: Option<Sourced<u32>>,
    /// How many ranks its job has.
    pub job_size: Option<Sourced<u32>>,
    /// What was passed over and why (a value that is no count, a name too
    /// long), and where the PMIx library's record of the id disagrees with
    /// the environment; at most a few, each short.
    pub notes: Vec<String>,
}

impl JobIdentity {
    fn note(&mut self, note: String) {
        if self.notes.len() < MAX_NOTES {
            self.notes.push(note);
        }
    }
}

/// A rank's PMIx namespace and rank and its job's size, from the
/// launcher's variables in its environment (`PMIX_NAMESPACE`,
/// `PMIX_RANK`, and the first of `OMPI_COMM_WORLD_SIZE`, `PMI_SIZE`,
/// `SLURM_NTASKS`), which need no layouts. Where the process maps libpmix,
/// its exported `pmix_globals` gives the client's own id: it stands in
/// for the environment's when that has none, and a difference between
/// the two is noted, the environment's kept.
///
/// A variable whose value is not usable (no number, out of range, not
/// UTF-8, too long) is passed over with a note. Fails only when neither
/// the environment nor the library can be read at all.
pub fn job_identity(target: &dyn Target, limits: &Limits) -> Result<JobIdentity, WorldRankError> {
    let (memory, symbols) = (target.memory(), target.symbols());
    let mut id = JobIdentity::default();
    let mut size: Option<(usize, u32)> = None;
    let mut notes = Vec::new();
    let mut note = |n: String| {
        if notes.len() < MAX_NOTES {
            notes.push(n);
        }
    };
    let scanned = scan_environment(memory, symbols, limits, |text| {
        // The first entry of a name is the one getenv returns.
        if id.namespace.is_none() {
            if let Some(v) = value_of(text, NAMESPACE_VARIABLE) {
                match namespace(v) {
                    Ok(ns) => {
                        id.namespace = Some(Sourced {
                            value: ns,
                            source: RankSource::Environment(NAMESPACE_VARIABLE),
                        })
                    }
                    Err(why) => note(format!("{NAMESPACE_VARIABLE}={} {why}", quote(v))),
                }
            }
        }
        if id.pmix_rank.is_none() {
            if let Some(v) = value_of(text, PMIX_RANK_VARIABLE) {
                match count(v, 0) {
                    Some(rank) => {
                        id.pmix_rank = Some(Sourced {
                            value: rank,
                            source: RankSource::Environment(PMIX_RANK_VARIABLE),
                        })
                    }
                    None => note(format!(
                        "{PMIX_RANK_VARIABLE}={} is not a rank (0 to {MAX_RANK})",
                        quote(v)
                    )),
                }
            }
        }
        for (preference, var) in SIZE_VARIABLES.iter().enumerate() {
            let Some(v) = value_of(text, var) else {
                continue;
            };
            if size.is_some_and(|(p, _)| p <= preference) {
                continue;
            }
            match count(v, 1) {
                Some(n) => size = Some((preference, n)),
                None => note(format!(
                    "{var}={} is not a job size (1 to {MAX_RANK})",
                    quote(v)
                )),
            }
        }
    });
    id.notes = notes;
    id.job_size = size.map(|(p, n)| Sourced {
        value: n,
        source: RankSource::Environment(SIZE_VARIABLES[p]),
    });
    match pmix_library_id(memory, symbols) {
        Ok(None) => {}
        Ok(Some((ns, rank))) => {
            let said = |what: &str, env: &dyn std::fmt::Display, lib: &dyn std::fmt::Display| {
                format!(
                    "its {what} is {env} by its environment, but {lib} by {}",
                    RankSource::PmixGlobals
                )
            };
            match &id.namespace {
                Some(env) if env.value != ns => {
                    let n = said("PMIx namespace", &env.value, &ns);
                    id.note(n);
                }
                Some(_) => {}
                None => {
                    id.namespace = Some(Sourced {
                        value: ns,
                        source: RankSource::PmixGlobals,
                    })
                }
            }
            match &id.pmix_rank {
                Some(env) if env.value != rank => {
                    let n = said("PMIx rank", &env.value, &rank);
                    id.note(n);
                }
                Some(_) => {}
                None => {
                    id.pmix_rank = Some(Sourced {
                        value: rank,
                        source: RankSource::PmixGlobals,
                    })
                }
            }
        }
        Err(why) => id.note(why),
    }
    match scanned {
        Err(e) if id.namespace.is_none() => Err(e),
        Err(e) => {
            id.note(e.to_string());
            Ok(id)
        }
        Ok(()) => Ok(id),
    }
}

/// A PMIx namespace from its bytes, or why not.
fn namespace(v: &[u8]) -> Result<String, &'static str> {
    if v.is_empty() {
        return Err("is empty");
    }
    if v.len() > MAX_NAMESPACE {
        return Err("is longer than a PMIx namespace can be (255 bytes)");
    }
    match std::str::from_utf8(v) {
        Ok(s) if s.chars().all(|c| !c.is_control()) => Ok(s.to_string()),
        _ => Err("is not a PMIx namespace (not printable UTF-8)"),
    }
}

/// A decimal count from `min` to [`MAX_RANK`].
fn count(v: &[u8], min: u32) -> Option<u32> {
    let n: u64 = std::str::from_utf8(v).ok()?.parse().ok()?;
    u32::try_from(n)
        .ok()
        .filter(|&n| n >= min && u64::from(n) <= MAX_RANK)
}

/// A value as a note quotes it: its first bytes, escaped.
fn quote(v: &[u8]) -> String {
    let head = &v[..v.len().min(QUOTED)];
    let more = if v.len() > QUOTED { "…" } else { "" };
    format!("{:?}{more}", String::from_utf8_lossy(head))
}

/// The PMIx client library's record of its id, when the process maps a
/// libpmix that exports `pmix_globals`: `None` when none does, an error
/// (one short reason) when its record cannot be believed.
fn pmix_library_id<M, S>(memory: &M, symbols: &S) -> Result<Option<(String, u32)>, String>
where
    M: TargetMemory + ?Sized,
    S: SymbolSource + ?Sized,
{
    let Some(sym) = symbols.lookup("pmix_globals") else {
        return Ok(None);
    };
    let at = |off: u64| TargetAddr(sym.addr.0.wrapping_add(off));
    if sym.size != 0 && sym.size < PMIX_ID_BYTES as u64 {
        return Err(format!(
            "pmix_globals in {} is {} bytes, too small for the PMIx id it should begin with: \
             not the OpenPMIx this reader knows",
            sym.object, sym.size
        ));
    }
    let mut bytes = [0u8; PMIX_ID_BYTES];
    memory
        .read_exact(sym.addr, &mut bytes, "pmix_globals.myid")
        .map_err(|e| format!("libpmix's id: {e}"))?;
    // The counter and the rank through the reader's own ABI-aware reads.
    let init = memory
        .read_i32(at(PMIX_INIT_CNTR), "pmix_globals.init_cntr")
        .map_err(|e| format!("libpmix's id: {e}"))?;
    if init <= 0 {
        // Before PMIx_Init or after its PMIx_Finalize: no id yet, or none
        // any more.
        return Ok(None);
    }
    let name = &bytes[PMIX_NSPACE as usize..PMIX_RANK as usize];
    let Some(end) = name.iter().position(|&b| b == 0) else {
        return Err(format!(
            "libpmix's id at {}: its namespace has no terminator in {} bytes",
            at(PMIX_NSPACE),
            MAX_NAMESPACE + 1
        ));
    };
    let ns = namespace(&name[..end])
        .map_err(|why| format!("libpmix's id at {}: its namespace {why}", at(PMIX_NSPACE)))?;
    let rank = memory
        .read_u32(at(PMIX_RANK), "pmix_globals.myid.rank")
        .map_err(|e| format!("libpmix's id: {e}"))?;
    if u64::from(rank) > MAX_RANK {
        return Err(format!(
            "libpmix's id at {}: its rank {rank} is no process's (a PMIx wildcard, or not an id)",
            at(PMIX_NSPACE)
        ));
    }
    Ok(Some((ns, rank)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world_rank::tests::with_environment;
    use mpidd_read::{LayoutTable, SymbolTable, SyntheticMemory, TargetParts};
    use mpidd_types::TargetAbi;

    /// The identity `job_identity` reads from a process with `vars` in its
    /// environment (and whatever `extra` adds to its memory).
    fn identity_of(
        vars: &[&str],
        extra: impl FnOnce(&mut SyntheticMemory, &mut SymbolTable),
    ) -> Result<JobIdentity, WorldRankError> {
        let (mut m, mut s) = with_environment(TargetAbi::X86_64, vars);
        extra(&mut m, &mut s);
        job_identity(
            &TargetParts {
                memory: &m,
                symbols: &s,
                layouts: &LayoutTable::default(),
            },
            &Limits::default(),
        )
    }

    fn env(var: &'static str) -> RankSource {
        RankSource::Environment(var)
    }

    #[test]
    fn the_launchers_variables_give_the_pmix_identity_and_the_size() {
        // As prterun (Open MPI 5.0.11) sets them, OMPI_UNIVERSE_SIZE
        // (the slots) beside them.
        let id = identity_of(
            &[
                "OMPI_UNIVERSE_SIZE=2",
                "OMPI_COMM_WORLD_SIZE=4",
                "PMIX_NAMESPACE=prterun-vm-10880@1",
                "PMIX_RANK=2",
            ],
            |_, _| {},
        )
        .unwrap();
        assert_eq!(
            id.namespace,
            Some(Sourced {
                value: "prterun-vm-10880@1".to_string(),
                source: env("PMIX_NAMESPACE")
            })
        );
        assert_eq!(
            id.pmix_rank,
            Some(Sourced {
                value: 2,
                source: env("PMIX_RANK")
            })
        );
        assert_eq!(
            id.job_size,
            Some(Sourced {
                value: 4,
                source: env("OMPI_COMM_WORLD_SIZE")
            })
        );
        assert!(id.notes.is_empty(), "{:?}", id.notes);
        // Hydra: PMI_SIZE, and no PMIx at all. srun: SLURM_NTASKS, believed
        // after any MPI's own, wherever it is.
        let id = identity_of(&["SLURM_NTASKS=8", "PMI_SIZE=4", "PMI_RANK=1"], |_, _| {}).unwrap();
        assert_eq!(id.namespace, None);
        assert_eq!(id.pmix_rank, None);
        assert_eq!(
            id.job_size.map(|s| (s.value, s.source)),
            Some((4, env("PMI_SIZE")))
        );
        // The first of two entries of one name is getenv's.
        let id = identity_of(&["PMIX_NAMESPACE=a", "PMIX_NAMESPACE=b"], |_, _| {}).unwrap();
        assert_eq!(id.namespace.unwrap().value, "a");
    }

    #[test]
    fn unusable_values_are_passed_over_with_a_note() {
        let long = format!("PMIX_NAMESPACE={}", "n".repeat(300));
        let huge = format!("PMI_SIZE={}", "9".repeat(50));
        let id = identity_of(
            &[
                "OMPI_COMM_WORLD_SIZE=four",
                &huge,
                "SLURM_NTASKS=0",
                "PMIX_RANK=-3",
                &long,
                "PMIX_NAMESPACE=bad\u{7}name",
            ],
            |_, _| {},
        )
        .unwrap();
        assert_eq!(id.job_size, None);
        assert_eq!(id.pmix_rank, None);
        assert_eq!(id.namespace, None);
        let notes = id.notes.join("\n");
        for want in [
            "OMPI_COMM_WORLD_SIZE=\"four\" is not a job size (1 to 2147483647)",
            "PMI_SIZE=\"9999999999999999999999999999999999999999\"… is not a job size",
            "SLURM_NTASKS=\"0\" is not a job size",
            "PMIX_RANK=\"-3\" is not a rank",
            "is longer than a PMIx namespace can be",
            "is not a PMIx namespace (not printable UTF-8)",
        ] {
            assert!(notes.contains(want), "{want:?} not in {notes}");
        }
        // A size just past an int is no MPI job's; the largest int is.
        let id = identity_of(&["PMI_SIZE=2147483648"], |_, _| {}).unwrap();
        assert_eq!(id.job_size, None);
        let id = identity_of(&["PMI_SIZE=2147483647"], |_, _| {}).unwrap();
        assert_eq!(id.job_size.unwrap().value, 2147483647);
        // However often a bad value comes, the notes stay few.
        let many = vec!["PMI_SIZE=x"; 200];
        let id = identity_of(&many, |_, _| {}).unwrap();
        assert_eq!(id.notes.len(), MAX_NOTES);
    }

    #[test]
    fn an_entry_without_its_terminator_is_passed_over() {
        // The last string runs to the end of the mapped memory.
        let id = identity_of(&["PMIX_RANK=1", "PMI_SIZE=4"], |m, _| {
            let tail = format!("PMIX_NAMESPACE={}", "x".repeat(0x1000 - 15));
            m.map(TargetAddr(0x10_0000 + 0x1000), tail.into_bytes());
        })
        .unwrap();
        assert_eq!(id.namespace, None);
        assert_eq!(id.pmix_rank.unwrap().value, 1);
        assert_eq!(id.job_size.unwrap().value, 4);
        // An environment that cannot be read at all is a typed error.
        let (m, _) = with_environment(TargetAbi::X86_64, &[]);
        let e = job_identity(
            &TargetParts {
                memory: &m,
                symbols: &SymbolTable::new(),
                layouts: &LayoutTable::default(),
            },
            &Limits::default(),
        )
        .unwrap_err();
        assert!(matches!(e, WorldRankError::NoEnvironment), "{e}");
    }

    /// What a test adds to a process's memory and symbols.
    type Extra = dyn FnOnce(&mut SyntheticMemory, &mut SymbolTable);

    /// Maps libpmix's `pmix_globals` at 0x30_0000 with this id, its
    /// `init_cntr` and its symbol's size.
    fn pmix_globals(
        name: &[u8],
        rank: u32,
        init: i32,
        size: u64,
    ) -> impl FnOnce(&mut SyntheticMemory, &mut SymbolTable) {
        let name = name.to_vec();
        move |m: &mut SyntheticMemory, s: &mut SymbolTable| {
            let mut bytes = vec![0u8; 1024];
            bytes[0..4].copy_from_slice(&init.to_le_bytes());
            bytes[4..4 + name.len()].copy_from_slice(&name);
            bytes[260..264].copy_from_slice(&rank.to_le_bytes());
            m.map(TargetAddr(0x30_0000), bytes);
            s.insert(
                "/usr/lib/libpmix.so.2",
                "pmix_globals",
                TargetAddr(0x30_0000),
                size,
            );
        }
    }

    #[test]
    fn the_pmix_library_s_record_stands_in_and_is_checked() {
        // No PMIx variables: the library's id stands in.
        let id = identity_of(
            &["PMI_SIZE=4"],
            pmix_globals(b"singleton.42@0", 3, 1, 0x400),
        )
        .unwrap();
        assert_eq!(
            id.namespace,
            Some(Sourced {
                value: "singleton.42@0".to_string(),
                source: RankSource::PmixGlobals
            })
        );
        assert_eq!(id.pmix_rank.unwrap().value, 3);
        // Both agree: nothing to say.
        let vars = ["PMIX_NAMESPACE=job@1", "PMIX_RANK=3"];
        let id = identity_of(&vars, pmix_globals(b"job@1", 3, 1, 0x400)).unwrap();
        assert!(id.notes.is_empty(), "{:?}", id.notes);
        // They differ: the environment's is kept, the difference said.
        let id = identity_of(&vars, pmix_globals(b"other@2", 0, 1, 0x400)).unwrap();
        assert_eq!(id.namespace.unwrap().value, "job@1");
        assert_eq!(
            id.notes,
            [
                "its PMIx namespace is job@1 by its environment, but other@2 by libpmix's \
                 pmix_globals.myid",
                "its PMIx rank is 3 by its environment, but 0 by libpmix's pmix_globals.myid"
            ]
        );
        // Not initialized (or finalized): no id to check.
        let id = identity_of(&[], pmix_globals(b"stale@1", 1, 0, 0x400)).unwrap();
        assert_eq!(id.namespace, None);
        assert!(id.notes.is_empty(), "{:?}", id.notes);
    }

    #[test]
    fn a_pmix_record_that_cannot_be_one_is_refused() {
        let refused = |f: Box<Extra>| {
            let id = identity_of(&[], f).unwrap();
            assert_eq!(id.namespace, None);
            assert_eq!(id.pmix_rank, None);
            id.notes.join("; ")
        };
        let n = refused(Box::new(pmix_globals(&[b'x'; 256], 1, 1, 0x400)));
        assert!(
            n.contains("its namespace has no terminator in 256 bytes"),
            "{n}"
        );
        let n = refused(Box::new(pmix_globals(b"job@1", u32::MAX - 1, 1, 0x400)));
        assert!(n.contains("its rank 4294967294 is no process's"), "{n}");
        let n = refused(Box::new(pmix_globals(b"job@1", 1, 1, 16)));
        assert!(n.contains("is 16 bytes, too small"), "{n}");
        let n = refused(Box::new(pmix_globals(b"\x01\x02", 1, 1, 0x400)));
        assert!(n.contains("not printable"), "{n}");
        // Its symbol where nothing is mapped.
        let n = refused(Box::new(|_: &mut SyntheticMemory, s: &mut SymbolTable| {
            s.insert(
                "/lib/libpmix.so.2",
                "pmix_globals",
                TargetAddr(0x90_0000),
                0,
            );
        }));
        assert!(n.starts_with("libpmix's id: "), "{n}");
    }
}
