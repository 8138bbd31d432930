//! Open MPI's message queues with the ob1 PML, read natively.
//!
//! Where Open MPI 4.1 keeps what a debugger wants:
//! - `ompi_mpi_communicators` (libmpi), an `opal_pointer_array_t` of every
//!   `ompi_communicator_t`; each has its groups (`ompi_group_t`, whose
//!   `ompi_proc_t`s carry the world rank as `proc_name.vpid`) and ob1's
//!   per-communicator state in `c_pml_comm` (`mca_pml_ob1_comm_t`);
//! - in that state: `wild_receives`, the receives posted for
//!   `MPI_ANY_SOURCE`, and one `mca_pml_ob1_comm_proc_t` per peer with the
//!   receives posted for that peer (`specific_receives`), the fragments
//!   that arrived before a receive matched them (`unexpected_frags`), and
//!   those that arrived out of order (`frags_cant_match`, a ring of rings);
//! - `mca_pml_base_send_requests` (libmpi), the `opal_free_list_t` every
//!   ob1 send request comes from. There is no list of pending sends: the
//!   free list's allocation chunks are walked element by element, and the
//!   requests that are in use (not `OMPI_REQUEST_INVALID`) are the sends
//!   the program has started and not yet completed by a wait or a test,
//!   including eager sends that ob1 finished long ago.
//!
//! Every size, offset and enumerator comes from the [`Layouts`], and
//! the decoder asks only the questions of [`OB1_LAYOUT`], so a layout
//! profile made for exactly those answers the stripped library too. The
//! few values that are preprocessor constants in Open MPI's source (and so
//! in no debug info) are named where they are used.
//!
//! What Open MPI's own `libompi_dbg_msgq.so` does not show and this does:
//! unexpected messages (it has no code for them), the protocol and length
//! of each, out-of-order fragments, and signed ranks and tags.
//!
//! The folder: `layout` (the questions of [`OB1_LAYOUT`] and their
//! answers), `receives` (posted receives, in posting order), `fragments` (unexpected
//! and out-of-order messages) and `sends` (the send requests in use, from
//! the free list); this file holds the decoder, its refusal of another PML,
//! and puts one reading together. The communicator table, and world ranks
//! from the procs, are read as for every PML (`ompi::communicators`). It stands on the decoder trait and
//! error, the bounded reads and walks and the model; only `ompi` imports
//! it, and nothing here imports MPICH's decoders, `detect` or `mqs`.

mod fragments;
mod layout;
mod receives;
mod sends;

use std::collections::HashMap;

use mpidd_read::{Limits, SymbolSource};
use mpidd_types::TargetAddr;

use crate::decoder::{required_symbol, DecodeError, QueueDecoder};
use crate::list_walk::{at, walk, ListShape, Span};
use crate::model::{Communicator, ProcessQueues, Queue};
use crate::ompi::communicators::{selected_pml, LIBMPI};
use crate::ompi::other_pml;
use crate::target_read::{read_pointer, Budgeted, Record};
use layout::Layout;
use mpidd_read::Target;
use mpidd_read::TargetMemory;
use mpidd_read::{LayoutError, LayoutNeed, Layouts};

pub use layout::{OB1_LAYOUT, OB1_SYMBOLS};

/// `REQUEST_COMPLETED` (`request.h`): `req_complete` holds this value once
/// the request is complete for MPI (0 is pending; anything else is the
/// synchronisation object of a thread waiting for it).
pub(super) const REQUEST_COMPLETED: u64 = 1;

/// Addresses of the globals the decoder starts from.
#[derive(Clone, Copy, Debug)]
struct Globals {
    communicators: TargetAddr,
    send_requests: TargetAddr,
}

/// The native decoder of Open MPI's ob1 PML.
pub struct OmpiOb1 {
    name: String,
    layout: Layout,
    globals: Globals,
}

impl std::fmt::Debug for OmpiOb1 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OmpiOb1")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl OmpiOb1 {
    /// A decoder for the Open MPI in `target`. Fails, naming what is
    /// missing, when a symbol or layout it needs is not there, and refuses
    /// a process whose selected PML is not ob1 (saying which decoder reads
    /// it, if one does).
    pub fn new(target: &dyn Target, limits: &Limits) -> Result<Self, DecodeError> {
        let layout = Layout::resolve(target.layouts()).map_err(DecodeError::Layouts)?;
        let pml = selected_pml(target, &layout.comm, limits)?;
        if pml != "ob1" {
            return Err(other_pml(target, &pml, "ob1", limits));
        }
        Ok(OmpiOb1 {
            name: "native Open MPI ob1 decoder".to_string(),
            layout,
            globals: Globals {
                communicators: required_symbol(target, "ompi_mpi_communicators", LIBMPI)?,
                send_requests: required_symbol(target, "mca_pml_base_send_requests", LIBMPI)?,
            },
        })
    }

    /// Asks `layouts` every layout question of [`OB1_LAYOUT`], for a
    /// layout profile ([`DecoderKind::ask_layouts`](crate::DecoderKind)).
    pub fn ask_layouts(layouts: &dyn Layouts) {
        LayoutNeed::ask_all(OB1_LAYOUT, layouts);
    }

    /// The layouts this decoder cannot do without that `layouts` lacks
    /// (all of [`OB1_LAYOUT`]'s questions are needed).
    pub fn missing_layouts(layouts: &dyn Layouts) -> Vec<LayoutError> {
        Layout::resolve(layouts).err().unwrap_or_default()
    }

    /// Everything this decoder needs that the image lacks: symbols, types,
    /// members and enumerators, each named. Needs no process.
    pub fn missing(types: &dyn Layouts, symbols: &dyn SymbolSource) -> Vec<String> {
        let mut out: Vec<String> = OB1_SYMBOLS
            .iter()
            .filter(|(name, _)| symbols.lookup(name).is_none())
            .map(|(name, object)| format!("the symbol `{name}` (of {object})"))
            .collect();
        if let Err(missing) = Layout::resolve(types) {
            out.extend(missing.iter().map(|e| format!("the {e}")));
        }
        out
    }

    /// The bytes per element of a datatype (`opal_datatype_t.size`).
    pub(super) fn datatype_size(
        &self,
        mem: &dyn TargetMemory,
        datatype: TargetAddr,
        cache: &mut DatatypeSizes,
    ) -> Option<u64> {
        if let Some((addr, size)) = cache.last {
            if addr == datatype.0 {
                return size;
            }
        }
        let size = *cache.all.entry(datatype.0).or_insert_with(|| {
            let f = self.layout.datatype_size;
            let mut buf = [0u8; 8];
            let n = f.size.clamp(1, 8);
            mem.read_exact(
                at(datatype, f.offset),
                &mut buf[..n],
                "ompi_datatype_t.super.size",
            )
            .ok()?;
            Some(mpidd_read::decode_uint(&buf[..n], mem.abi().byte_order))
        });
        cache.last = Some((datatype.0, size));
        size
    }

    /// Walks an `opal_list_t` at `list`, visiting each item's span.
    pub(super) fn walk_list(
        &self,
        mem: &dyn TargetMemory,
        list: TargetAddr,
        span: Span,
        what: &'static str,
        limits: &Limits,
        visit: impl FnMut(&Record<'_>) -> Result<(), DecodeError>,
    ) -> Result<(), DecodeError> {
        let l = &self.layout;
        let sentinel = at(list, l.list_sentinel);
        let first = read_pointer(mem, at(sentinel, l.item_next.offset), what)?;
        walk(
            mem,
            first,
            ListShape {
                next_offset: l.item_next.offset,
                span,
                what,
                end: sentinel,
            },
            limits,
            visit,
        )
    }
}

/// The sizes of the datatypes operations name, each read once. A queue's
/// operations mostly name one datatype, so the last one asked is kept
/// apart from the table, which hashing would otherwise dominate.
#[derive(Default)]
pub(super) struct DatatypeSizes {
    last: Option<(u64, Option<u64>)>,
    all: HashMap<u64, Option<u64>>,
}

impl QueueDecoder for OmpiOb1 {
    fn name(&self) -> &str {
        &self.name
    }

    fn read_queues(
        &self,
        target: &dyn Target,
        limits: &Limits,
    ) -> Result<ProcessQueues, DecodeError> {
        let budget = Budgeted::new(target.memory(), limits);
        let mem: &dyn TargetMemory = &budget;
        let (comms, notes) =
            self.layout
                .comm
                .read_communicators(mem, self.globals.communicators, limits)?;
        let mut types = DatatypeSizes::default();
        let mut sends = self.pending_sends(mem, &comms, limits, &mut types)?;
        let global_rank = comms
            .iter()
            .find(|c| c.context_id == 0)
            .map_or(-1, |world| world.rank);
        let mut diagnostics = notes;
        diagnostics.extend(comms.iter().filter_map(|c| c.world_error.clone()));
        let read = |operations| Queue::Read {
            operations,
            truncated: false,
        };
        let mut out = Vec::with_capacity(comms.len());
        for c in &comms {
            let (posted, unexpected) = match self.receive_queues(mem, c, limits, &mut types) {
                Ok(q) => (read(q.0), read(q.1)),
                Err(e) => {
                    let failed = || Queue::Failed {
                        operations: Vec::new(),
                        error: e.to_string(),
                    };
                    diagnostics.push(format!("communicator `{}`: {e}", c.name));
                    (failed(), failed())
                }
            };
            let sent = sends
                .remove(&c.addr.0)
                .unwrap_or_default()
                .into_iter()
                .map(|(_, op)| op)
                .collect();
            out.push(Communicator {
                name: c.name.clone(),
                size: c.size,
                local_rank: c.rank,
                // Open MPI's own library identifies communicators by
                // context id; so does this, to pair the two readings.
                unique_id: c.context_id as u64,
                context_id: Some(c.context_id),
                recv_context_id: Some(c.context_id),
                group: c.world.clone().map(Into::into),
                pending_sends: read(sent),
                pending_receives: posted,
                unexpected_messages: unexpected,
            });
        }
        Ok(ProcessQueues {
            source: self.name.clone(),
            global_rank,
            communicators: out,
            truncated: false,
            diagnostics,
        })
    }
}
