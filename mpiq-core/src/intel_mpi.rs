//! Intel MPI: an MPICH derivative (MPICH 3.4a2 with the CH4 device over
//! libfabric in the 2021 releases) whose library names its own release in
//! globals that MPICH has not (`I_MPI_Library_version`,
//! `I_MPI_Library_build`, both `char[32]` in `.data`, in `.symtab` only).
//! Told apart here so that a refusal names Intel MPI and its release,
//! never "MPICH 3.4a2" or "no MPI library".

use mpidd_read::{Limits, SymbolSource, TargetMemory};
use mpihandles::HandleKind;

use crate::decoder::{DecodeError, FoundLibrary, DECODED, IDENTIFY};

/// Intel MPI's release string (`2021.19.0`), a `char[32]` global.
const VERSION_SYMBOL: &str = "I_MPI_Library_version";
/// Its build date and id (`20260929 (id: 1821d9b)`), a `char[32]` global.
const BUILD_SYMBOL: &str = "I_MPI_Library_build";
/// The size of both globals: the longest string read from them.
const STRING_LEN: usize = 32;

/// What an Intel MPI process's object pools hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PoolCensus {
    /// Requests handed out and not freed (every request pool).
    pub(crate) requests: usize,
    /// Communicators: the builtin ones and those handed out.
    pub(crate) communicators: usize,
    /// The size of a request object.
    pub(crate) request_size: u64,
}

/// The Intel MPI release a process loaded, as its library says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IntelMpi {
    /// Its release, e.g. `2021.19.0`.
    pub(crate) version: String,
    /// Its build date and id, when the library keeps them.
    pub(crate) build: Option<String>,
    /// Its release was read from its symbol table's globals (else from
    /// the file's strings: the table was stripped).
    pub(crate) symbols_kept: bool,
}

impl IntelMpi {
    /// The release of the Intel MPI library among `symbols`, if one is
    /// loaded and its release string reads as printable text.
    pub(crate) fn find(
        memory: &dyn TargetMemory,
        symbols: &dyn SymbolSource,
        limits: &Limits,
    ) -> Option<IntelMpi> {
        let string = |name: &str| {
            let sym = symbols.lookup(name)?;
            let bytes = memory
                .read_c_string(sym.addr, STRING_LEN.min(limits.max_string_len))
                .ok()?;
            let text = String::from_utf8(bytes).ok()?;
            let printable =
                !text.is_empty() && text.chars().all(|c| c.is_ascii_graphic() || c == ' ');
            printable.then_some(text)
        };
        Some(IntelMpi {
            version: string(VERSION_SYMBOL)?,
            build: string(BUILD_SYMBOL),
            symbols_kept: true,
        })
    }

    /// The release the library file at `path` states in its strings, for
    /// a build stripped of the symbol table that names its globals.
    pub(crate) fn from_file(path: &str) -> Option<IntelMpi> {
        let path = std::path::Path::new(path);
        if !path.is_absolute() {
            return None;
        }
        Some(IntelMpi {
            version: crate::library_strings::intel_mpi_release(path)?,
            build: None,
            symbols_kept: false,
        })
    }

    /// How it is named to a person: `Intel MPI 2021.19.0`.
    pub(crate) fn label(&self) -> String {
        format!("Intel MPI {}", self.version)
    }

    /// What its memory shows of its queues without their layouts: the
    /// requests and communicators live in its object pools, counted
    /// through layouts derived from the process and checked on its own
    /// objects ([`mpihandles::derive_mpich_layouts`]). `None` when they
    /// cannot be derived or the pools cannot be walked.
    pub(crate) fn census(
        memory: &dyn TargetMemory,
        symbols: &dyn SymbolSource,
        limits: &Limits,
    ) -> Option<PoolCensus> {
        let derived = mpihandles::derive_mpich_layouts(memory, symbols).ok()?;
        let live = |kind| {
            mpihandles::live_mpich_objects(memory, symbols, &derived.table, *limits, kind)
                .ok()
                .map(|o| o.len())
        };
        let builtin = mpihandles::builtin_mpich_objects(
            memory,
            symbols,
            &derived.table,
            *limits,
            HandleKind::Comm,
        )
        .ok()?
        .len();
        Some(PoolCensus {
            requests: live(HandleKind::Request)?,
            communicators: builtin + live(HandleKind::Comm)?,
            request_size: mpidd_read::Layouts::size_of(&derived.table, "MPIR_Request").ok()?,
        })
    }

    /// Why no native decoder reads its queues: one line naming the
    /// release, the MPICH it derives from and its device, and what is
    /// missing (the layouts of the objects its queues are made of).
    pub(crate) fn refusal(
        &self,
        mpich_version: &str,
        device: &str,
        census: Option<PoolCensus>,
        library: Option<Box<FoundLibrary>>,
    ) -> DecodeError {
        let shown = match census {
            Some(c) => format!(
                "; its pools hold {} request object(s) not on a free list (MPICH's own \
                 preallocated ones among them) and {} communicator(s), but where a request \
                 keeps its kind, peer, tag and state in its {} bytes is not known",
                c.requests, c.communicators, c.request_size
            ),
            None => String::new(),
        };
        let build = self
            .build
            .as_deref()
            .map(|b| format!(", build {b}"))
            .unwrap_or_default();
        DecodeError::Unsupported {
            reason: format!(
                "{}: no layouts for its queues ({}, \
                 and no layout profile is for this build; MPICH {mpich_version} inside, \
                 device {device}{build}){shown}",
                self.label(),
                if self.symbols_kept {
                    "its library keeps its symbol table but no debug info"
                } else {
                    "its library is stripped of its symbol table and debug info, so its \
                     hidden globals cannot be found"
                }
            ),
            library: library.map(|mut l| {
                l.version = Some(self.label());
                l
            }),
            way_out: Some(format!(
                "{DECODED}. Intel MPI ships no message-queue library for `mpidd queues --dll`; \
                 `mpidd job` still tells where each rank waits from its stacks. {IDENTIFY}"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpidd_read::{SymbolTable, SyntheticMemory};
    use mpidd_types::{TargetAbi, TargetAddr};

    fn process(version: &[u8]) -> (SyntheticMemory, SymbolTable) {
        let mut memory = SyntheticMemory::new(TargetAbi::X86_64);
        let mut data = version.to_vec();
        data.resize(32, 0);
        data.extend_from_slice(b"20260929 (id: 1821d9b)\0");
        memory.map(TargetAddr(0x1000), data);
        let mut symbols = SymbolTable::new();
        symbols.insert("libmpi.so.12", VERSION_SYMBOL, TargetAddr(0x1000), 32);
        symbols.insert("libmpi.so.12", BUILD_SYMBOL, TargetAddr(0x1020), 32);
        (memory, symbols)
    }

    #[test]
    fn the_release_and_build_are_read_from_the_library() {
        let (memory, symbols) = process(b"2021.19.0");
        let found = IntelMpi::find(&memory, &symbols, &Limits::default()).unwrap();
        assert_eq!(found.version, "2021.19.0");
        assert_eq!(found.build.as_deref(), Some("20260929 (id: 1821d9b)"));
        let refusal = found.refusal("3.4a2", "ch4:ofi", None, None).to_string();
        assert!(refusal.contains("Intel MPI 2021.19.0"), "{refusal}");
        assert!(refusal.contains("MPICH 3.4a2"), "{refusal}");
    }

    #[test]
    fn without_its_globals_or_with_junk_in_them_it_is_not_intel_mpi() {
        let (memory, _) = process(b"2021.19.0");
        assert!(IntelMpi::find(&memory, &SymbolTable::new(), &Limits::default()).is_none());
        let (memory, symbols) = process(b"\x01\x02");
        assert!(IntelMpi::find(&memory, &symbols, &Limits::default()).is_none());
    }
}
