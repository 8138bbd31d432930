//! What the tracer hands the crates at a stop, and what it gets back: the
//! rank's queues from its own memory reader, the loaded objects' symbols
//! and the layouts the crates choose for them; each thread's stack from
//! the registers it read itself.
//!
//! These are the calls a debugger embedding the crates makes; the rest of
//! the example is the debugger.

use mpidd_read::{
    shipped_profiles, ElfSymbols, LayoutProfile, LoadedLayouts, StackUnwinder, Target, TargetParts,
    ThreadRegisters, ThreadStack, TypeOracle,
};
use mpiq_core::{DecodeError, Session, SessionReading};
use std::cell::Cell;

use crate::memory::PtraceMemory;
use crate::objects::{loaded_objects, ObjectsError};

/// What the tracer keeps for one traced process across its stops: its
/// loaded objects and their types (the DWARF of the loaded objects, else
/// the shipped profiles made for their builds, as `mpidd queues` takes
/// them); and what the crates keep: a [`Session`] with the decoder's
/// layouts per library build, an unwinder whose per-object tables
/// outlive a stop, and the shipped layout profiles the handle resolver
/// chooses from (parsed once) with the choice it made.
pub struct RankReader {
    pid: i32,
    maps: String,
    objects: ElfSymbols,
    layouts: LoadedLayouts,
    session: Session,
    unwinder: StackUnwinder,
    profiles: Vec<LayoutProfile>,
    handle_layouts: Cell<Option<HandleLayouts>>,
}

/// Which layouts the handle resolver chose for the process's MPI library,
/// kept so that later stops do not choose again (for a stripped library,
/// choosing reads build-ids and asks the DWARF it lacks: tens of
/// milliseconds a stop, against well under one for the resolving).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandleLayouts {
    /// The loaded objects' DWARF.
    Dwarf,
    /// The profile at this index of [`RankReader::profiles`].
    Profile(usize),
}

impl RankReader {
    /// The reader of process `pid` as it is mapped now.
    pub fn new(pid: i32) -> Result<RankReader, ObjectsError> {
        let maps = read_maps(pid)?;
        let objects = loaded_objects(pid)?;
        let layouts = LoadedLayouts::new(&objects);
        Ok(RankReader {
            pid,
            maps,
            objects,
            layouts,
            session: Session::new(),
            unwinder: StackUnwinder::default(),
            profiles: shipped_profiles(),
            handle_layouts: Cell::new(None),
        })
    }

    /// Takes the loaded objects again if the process mapped or unmapped
    /// files since (a debugger does so at its shared-library events).
    pub fn refresh(&mut self) -> Result<(), ObjectsError> {
        let maps = read_maps(self.pid)?;
        if maps != self.maps {
            self.objects = loaded_objects(self.pid)?;
            self.layouts = LoadedLayouts::new(&self.objects);
            self.handle_layouts.set(None);
            self.maps = maps;
        }
        Ok(())
    }

    /// The loaded objects.
    pub fn objects(&self) -> &ElfSymbols {
        &self.objects
    }

    /// The loaded objects' DWARF (read on first question, kept across
    /// stops): the handle resolver's first choice of layouts.
    pub fn dwarf(&self) -> &TypeOracle {
        self.layouts.dwarf()
    }

    /// The layout profiles for builds without DWARF: those mpidd ships.
    pub fn profiles(&self) -> &[LayoutProfile] {
        &self.profiles
    }

    /// The handle resolver's layouts, once chosen for the objects now
    /// loaded.
    pub fn handle_layouts(&self) -> Option<HandleLayouts> {
        self.handle_layouts.get()
    }

    /// Keeps the handle resolver's choice until the objects change.
    pub fn keep_handle_layouts(&self, chosen: HandleLayouts) {
        self.handle_layouts.set(Some(chosen));
    }

    /// The process as the crates take it: the tracer's memory reader, the
    /// loaded objects' symbols, their types.
    pub fn target<'a>(&'a self, memory: &'a PtraceMemory) -> impl Target + 'a {
        TargetParts {
            memory,
            symbols: &self.objects,
            layouts: &self.layouts,
        }
    }

    /// The rank's queues, read through `memory`, and what they rest on.
    pub fn queues(&self, memory: &PtraceMemory) -> Result<SessionReading, DecodeError> {
        self.session
            .read_queues(&self.target(memory), &self.objects)
    }

    /// The stack of one thread, from the registers the tracer read.
    pub fn stack(&self, memory: &PtraceMemory, regs: &ThreadRegisters) -> ThreadStack {
        self.unwinder.unwind(memory, &self.objects, regs)
    }
}

fn read_maps(pid: i32) -> Result<String, ObjectsError> {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .map_err(|cause| ObjectsError { pid, cause })
}
