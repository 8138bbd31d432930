//! The byte sources: how a target's memory is read, whatever holds it.
//!
//! This folder owns [`memory`] (the `TargetMemory` trait and its typed
//! reads, with [`read_budget`], [`int_decode`] and [`short_reads`], which
//! finds what is readable when a backend answers short), and the backends that
//! implement it: [`core_file`] (an ELF core, with the pages it omits read
//! from the mapped files), [`live_process`] (a running Linux process, with
//! [`attach_guard`] to stop it) and [`gdb_remote`] (a gdbserver session,
//! over [`gdb_remote_packet`]). [`thread_registers`] decodes the registers
//! a core's notes or a stopped process give, [`file_identity`] says
//! which host file a path names (the only use of `std::os` for files), and
//! [`file_maps`] finds and maps each file once for all the targets of a
//! run, [`section_bytes`] holds one section of a mapped file, and
//! [`object_image`] reads an object file on disk as the memory of a process
//! that loaded it at its link-time addresses.
//!
//! It is the ground floor of the crate: it must not depend on symbols,
//! DWARF, layouts or any decoder. What pairs a backend with those is in
//! `targets`.

#[cfg(all(feature = "live", target_os = "linux"))]
pub(crate) mod attach_guard;
pub(crate) mod core_file;
pub(crate) mod elf_ident;
pub(crate) mod file_identity;
pub(crate) mod file_maps;
pub(crate) mod gdb_remote;
pub mod gdb_remote_packet;
pub(crate) mod int_decode;
#[cfg(all(feature = "live", target_os = "linux"))]
pub(crate) mod live_process;
pub(crate) mod memory;
pub(crate) mod object_image;
pub(crate) mod read_budget;
pub(crate) mod section_bytes;
pub(crate) mod short_reads;
pub(crate) mod thread_registers;
