//! [`GdbRemoteTarget`]: a process behind gdbserver with the symbols and
//! types of its executable and libraries, read from this machine's disk;
//! the session and its requests are [`crate::backend::gdb_remote`].

use std::path::{Path, PathBuf};

use mpidd_types::{TargetAbi, TargetAddr};

use crate::backend::core_file::map_file;
use crate::backend::gdb_remote_packet::RemoteLibrary;
use crate::backend::memory::TargetMemory;
use crate::error::ReadError;
use crate::limits::Limits;
use crate::symbols::debug_files::build_id_in_headers;
use crate::symbols::elf_symbols::{elf_placement, ElfPlacement, ElfSymbols};
use crate::symbols::link_map;
use crate::symbols::{Symbol, SymbolSource};
use crate::targets::core_target::ObjectProblem;

use crate::backend::elf_ident::elf_abi;
use crate::backend::gdb_remote::{GdbRemote, GdbRemoteError, GdbRemoteOptions, MERGE_MAX};

use crate::backend::core_file::AT_SYSINFO_EHDR;

/// `AT_ENTRY` in the auxiliary vector.
const AT_ENTRY: u64 = 9;
/// The smallest page any Linux CPU has: where a shared object's headers
/// are found in memory.
const PAGE_MASK: u64 = 0xfff;
/// Ranges of [`TargetMemory::read_many`] closer than this are read as one.
const MERGE_GAP: u64 = 512;

/// A process behind gdbserver, with the symbols of its executable and
/// libraries: what [`crate::LiveTarget`] is for a local process.
///
/// Opening it stops nothing that the server has not stopped already
/// (`gdbserver --attach` stops the process); dropping it, or
/// [`GdbRemoteTarget::detach`], lets the process run again.
///
/// ```no_run
/// use mpidd_read::{mpir, GdbRemoteOptions, GdbRemoteTarget, Limits};
///
/// // gdbserver --attach 127.0.0.1:2345 PID
/// let t = GdbRemoteTarget::connect("127.0.0.1:2345", &GdbRemoteOptions::default())?;
/// let state = mpir::read_state(&t, &Limits::default())?;
/// println!("{} ranks", state.proctable.len());
/// t.detach()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct GdbRemoteTarget {
    remote: GdbRemote,
    abi: TargetAbi,
    executable: PathBuf,
    symbols: ElfSymbols,
    types: std::sync::OnceLock<crate::layouts::loaded_layouts::LoadedLayouts>,
    problems: Vec<ObjectProblem>,
}

impl GdbRemoteTarget {
    /// Connects to the gdbserver at `addr` (`HOST:PORT`) and loads the
    /// symbols of the process's executable and libraries from this
    /// machine's disk.
    pub fn connect(
        addr: &str,
        options: &GdbRemoteOptions,
    ) -> Result<GdbRemoteTarget, GdbRemoteError> {
        let remote = GdbRemote::connect(addr, options)?;
        let recorded = remote.exec_file()?;
        let on_disk = |p: &str| match &options.sysroot {
            Some(root) => root.join(p.trim_start_matches('/')),
            None => PathBuf::from(p),
        };
        let executable = on_disk(&recorded);
        let exe_err = |reason: String| GdbRemoteError::Executable {
            recorded: recorded.clone(),
            path: executable.clone(),
            reason,
        };
        let data = map_file(&executable).map_err(|e| exe_err(e.to_string()))?;
        let abi = elf_abi(&data).map_err(exe_err)?;
        drop(data);
        let placement = elf_placement(&executable).map_err(|e| exe_err(e.to_string()))?;
        let mut t = GdbRemoteTarget {
            remote,
            abi,
            executable: executable.clone(),
            symbols: ElfSymbols::new(),
            types: std::sync::OnceLock::new(),
            problems: Vec::new(),
        };
        let bias = if placement.relocatable {
            t.executable_bias(&placement)?.ok_or_else(|| {
                exe_err(
                    "position-independent, and gdbserver gives no auxiliary vector to place it"
                        .into(),
                )
            })?
        } else {
            0
        };
        if let Err(e) = t.symbols.add_object(&executable, &recorded, bias) {
            return Err(exe_err(e.to_string()));
        }
        let libraries = match t.remote.libraries()? {
            Some(list) => list,
            None => t.link_map_libraries(&placement, bias, &options.limits),
        };
        for lib in libraries {
            // The vDSO's name is not a file.
            if lib.name.is_empty() || !lib.name.contains('/') {
                continue;
            }
            t.add_library(&lib, &on_disk(&lib.name));
        }
        // The vDSO is read through memory by the stack unwinder; a server
        // that cannot give the vector leaves it to frame pointers.
        let vdso = t.auxv_value(AT_SYSINFO_EHDR).ok().flatten();
        t.symbols.set_vdso(vdso);
        Ok(t)
    }

    /// The bias of a position-independent executable: `AT_ENTRY` less its
    /// entry point.
    fn executable_bias(&self, p: &ElfPlacement) -> Result<Option<u64>, GdbRemoteError> {
        Ok(self
            .auxv_value(AT_ENTRY)?
            .map(|entry| entry.wrapping_sub(p.entry)))
    }

    /// The value of `key` in the process's auxiliary vector, `None` when
    /// the server gives no vector or the key is not in it.
    fn auxv_value(&self, key: u64) -> Result<Option<u64>, GdbRemoteError> {
        let Some(auxv) = self.remote.auxv()? else {
            return Ok(None);
        };
        Ok(crate::backend::core_file::auxv_pairs(self.abi, &auxv)
            .into_iter()
            .find(|&(k, _)| k == key)
            .map(|(_, value)| value))
    }

    /// The libraries of the dynamic linker's list, read through memory,
    /// for servers without `qXfer:libraries-svr4:read`.
    fn link_map_libraries(
        &mut self,
        exe: &ElfPlacement,
        bias: u64,
        limits: &Limits,
    ) -> Vec<RemoteLibrary> {
        let Some(dynamic) = exe.dynamic else {
            return Vec::new();
        };
        let list = link_map::r_debug_address(self, TargetAddr(bias.wrapping_add(dynamic)), limits)
            .and_then(|r| match r {
                Some(r) => link_map::read_link_map(self, r, limits),
                None => Ok(Vec::new()),
            });
        match list {
            Ok(list) => list
                .into_iter()
                .map(|e| RemoteLibrary {
                    name: e.name,
                    bias: e.bias,
                })
                .collect(),
            Err(e) => {
                self.problems.push(ObjectProblem::LinkMap {
                    reason: e.to_string(),
                });
                Vec::new()
            }
        }
    }

    /// Adds a library's symbols if its file here is the build the target
    /// loaded.
    fn add_library(&mut self, lib: &RemoteLibrary, path: &Path) {
        if !path.is_file() {
            self.symbols.note_searched(&lib.name);
            self.problems.push(ObjectProblem::NotFound {
                recorded: lib.name.clone(),
                tried: vec![path.to_path_buf()],
            });
            return;
        }
        let placement = match elf_placement(path) {
            Ok(p) => p,
            Err(e) => {
                self.symbols.note_searched(&lib.name);
                self.problems.push(ObjectProblem::Unreadable {
                    recorded: lib.name.clone(),
                    reason: e.to_string(),
                });
                return;
            }
        };
        if let Some(in_file) = &placement.build_id {
            let first_page = lib
                .bias
                .wrapping_add(placement.first_load_vaddr & !PAGE_MASK);
            let mut page = vec![0u8; PAGE_MASK as usize + 1];
            let n = self
                .read_prefix(TargetAddr(first_page), &mut page, "ELF headers")
                .unwrap_or(0);
            if let Some(in_memory) = build_id_in_headers(&page[..n]) {
                if in_memory != *in_file {
                    self.symbols.note_searched(&lib.name);
                    self.problems.push(ObjectProblem::BuildIdMismatch {
                        recorded: lib.name.clone(),
                        file: path.to_path_buf(),
                        in_core: crate::layouts::layout_profile::hex(&in_memory),
                        in_file: crate::layouts::layout_profile::hex(in_file),
                    });
                    return;
                }
            }
        }
        if let Err(e) = self.symbols.add_object(path, &lib.name, lib.bias) {
            self.problems.push(ObjectProblem::Unreadable {
                recorded: lib.name.clone(),
                reason: e.to_string(),
            });
        }
    }

    /// The session with the server.
    pub fn remote(&self) -> &GdbRemote {
        &self.remote
    }

    /// The executable, as found on this machine.
    pub fn executable(&self) -> &Path {
        &self.executable
    }

    /// The symbols of the executable and libraries.
    pub fn symbols(&self) -> &ElfSymbols {
        &self.symbols
    }

    /// The C types of its loaded objects, from their DWARF (or their
    /// debug files'), read on first use.
    pub fn types(&self) -> &crate::dwarf::type_oracle::TypeOracle {
        self.loaded_layouts().dwarf()
    }

    /// Its layouts as a [`Target`](crate::Target): the DWARF of
    /// [`types`](Self::types), and for what that lacks, the shipped
    /// profiles made for the builds it has loaded.
    pub fn loaded_layouts(&self) -> &crate::layouts::loaded_layouts::LoadedLayouts {
        self.types
            .get_or_init(|| crate::layouts::loaded_layouts::LoadedLayouts::new(&self.symbols))
    }

    /// Libraries that were left out, and why.
    pub fn problems(&self) -> &[ObjectProblem] {
        &self.problems
    }

    /// Detaches from the process, which runs on.
    pub fn detach(self) -> Result<(), GdbRemoteError> {
        self.remote.detach()
    }
}

impl TargetMemory for GdbRemoteTarget {
    fn abi(&self) -> TargetAbi {
        self.abi
    }

    /// A server's `E nn` for memory it cannot read is a short read, as
    /// the trait wants; a failing connection is a
    /// [`ReadError::Backend`] naming the address.
    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        if buf.is_empty() {
            return Ok(0);
        }
        match self.remote.read_memory(addr, buf.len()) {
            Ok(bytes) => {
                buf[..bytes.len()].copy_from_slice(&bytes);
                Ok(bytes.len())
            }
            Err(GdbRemoteError::Memory { .. }) => Ok(0),
            Err(e) => Err(ReadError::Backend {
                what: "remote memory",
                addr,
                cause: std::io::Error::other(e.to_string()),
            }),
        }
    }

    /// Merges ranges that lie close together into one read each (a
    /// process table's strings sit side by side), so a thousand strings
    /// cost a few requests, not a thousand.
    fn read_many(&self, requests: &mut [(TargetAddr, &mut [u8])]) -> Vec<Result<usize, ReadError>> {
        let mut order: Vec<usize> = (0..requests.len())
            .filter(|&i| !requests[i].1.is_empty())
            .collect();
        order.sort_by_key(|&i| requests[i].0 .0);
        let mut results: Vec<Option<Result<usize, ReadError>>> =
            requests.iter().map(|_| None).collect();
        let mut k = 0;
        while k < order.len() {
            let start = requests[order[k]].0 .0;
            let mut end = start.saturating_add(requests[order[k]].1.len() as u64);
            let mut last = k + 1;
            while last < order.len() {
                let (a, b) = (&requests[order[last]].0, &requests[order[last]].1);
                let b_end = a.0.saturating_add(b.len() as u64);
                if a.0 > end.saturating_add(MERGE_GAP) || b_end.max(end) - start > MERGE_MAX {
                    break;
                }
                end = end.max(b_end);
                last += 1;
            }
            let group = &order[k..last];
            let mut merged = vec![0u8; (end - start) as usize];
            match self.read_into(TargetAddr(start), &mut merged) {
                Ok(got) => {
                    let got_end = start + got as u64;
                    for &i in group {
                        let (a, buf) = &mut requests[i];
                        let req_end = a.0 + buf.len() as u64;
                        if got_end >= req_end {
                            let off = (a.0 - start) as usize;
                            buf.copy_from_slice(&merged[off..off + buf.len()]);
                            results[i] = Some(Ok(buf.len()));
                        }
                        // Otherwise the merged read stopped before this
                        // range's end, perhaps in a gap between ranges:
                        // it is read alone below.
                    }
                }
                Err(e) => {
                    for &i in group {
                        results[i] = Some(Err(e.duplicate()));
                    }
                }
            }
            k = last;
        }
        requests
            .iter_mut()
            .zip(results)
            .map(|((addr, buf), r)| r.unwrap_or_else(|| self.read_into(*addr, buf)))
            .collect()
    }
}

impl SymbolSource for GdbRemoteTarget {
    fn lookup(&self, name: &str) -> Option<Symbol> {
        self.symbols.lookup(name)
    }

    fn searched_objects(&self) -> Vec<String> {
        self.symbols.searched_objects()
    }
}

impl crate::targets::Target for GdbRemoteTarget {
    fn memory(&self) -> &dyn TargetMemory {
        self
    }

    fn symbols(&self) -> &dyn SymbolSource {
        self
    }

    fn layouts(&self) -> &dyn crate::layouts::Layouts {
        self.loaded_layouts()
    }
}
