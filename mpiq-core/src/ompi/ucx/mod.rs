//! Open MPI's message queues with the UCX PML, read natively.
//!
//! The UCX PML (`ompi/mca/pml/ucx`) keeps no queue of its own: it hands
//! every point-to-point operation to the UCP worker it created
//! (`ompi_pml_ucx.ucp_worker`, exported by mca_pml_ucx.so), so
//! - posted receives are in the worker's expected queues, in posting
//!   order;
//! - messages that arrived before a receive matched them are in the
//!   worker's unexpected list, eager (the data came along), rendezvous
//!   (only the envelope) or synchronous (the sender waits for the match);
//! - sends in flight are requests of the worker's request pool.
//!
//! mpihandles' UCX worker reader walks those; this decoder turns what
//! UCX holds back into MPI: the PML packs the communicator's context id,
//! the sender's rank and the MPI tag into UCX's 64-bit tag (`tag`), a
//! send's destination is the endpoint (`ucp_ep_h`) the PML created for
//! that peer, kept in the peer's `ompi_proc_t.proc_endpoints`
//! (`mca_pml_ucx_add_procs`, `mca_pml_ucx_get_ep`), and the user part of
//! UCX's request (right after `ucp_request_t`) is the `ompi_request_t` an
//! application's `MPI_Request` points to (`mca_pml_ucx_request_init`), so
//! each operation names it. The communicators are read as for every PML
//! (`ompi::communicators`).
//!
//! Open MPI's own message-queue library shows nothing of this PML: it
//! walks the base request free lists, which UCX's requests never enter.
//!
//! The folder: `layout` (the questions of [`OMPI_UCX_LAYOUT`] and their
//! answers), `tag` (the PML's tag packing) and `queues` (UCX's operations
//! placed in their communicators' queues); this file holds the decoder,
//! its refusal of another PML, and puts one reading together. It stands
//! on the decoder trait and error, the bounded reads, the model and
//! mpihandles' UCX worker reader; only `ompi` imports it.

mod layout;
mod queues;
mod tag;

use mpidd_read::{LayoutError, LayoutNeed, Layouts, Limits, SymbolSource, Target, TargetMemory};
use mpidd_types::TargetAddr;

use crate::decoder::{required_symbol, DecodeError, QueueDecoder};
use crate::list_walk::at;
use crate::model::{Communicator, ProcessQueues, Queue};
use crate::ompi::communicators::{selected_pml, CommInfo, LIBMPI};
use crate::ompi::other_pml;
use crate::target_read::{read_pointer, Budgeted};
use layout::Layout;

pub use layout::{OMPI_UCX_LAYOUT, OMPI_UCX_SYMBOLS};

/// Addresses of the globals the decoder starts from.
#[derive(Clone, Copy, Debug)]
struct Globals {
    communicators: TargetAddr,
    /// `ompi_pml_ucx` (`mca_pml_ucx_module_t`).
    module: TargetAddr,
    /// `ompi_request_t_class`, the class of every MPI request.
    request_class: Option<TargetAddr>,
}

/// The native decoder of Open MPI's UCX PML.
pub struct OmpiUcx {
    name: String,
    layout: Layout,
    globals: Globals,
}

impl std::fmt::Debug for OmpiUcx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OmpiUcx")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl OmpiUcx {
    /// A decoder for the Open MPI in `target`. Fails, naming what is
    /// missing, when a symbol or layout of Open MPI's it needs is not
    /// there, and refuses a process whose selected PML is not ucx (saying
    /// which decoder reads it, if one does). UCX's own layouts are not
    /// needed here: without them the queues say why they are unread.
    pub fn new(target: &dyn Target, limits: &Limits) -> Result<Self, DecodeError> {
        let layout = Layout::resolve(target.layouts()).map_err(DecodeError::Layouts)?;
        let pml = selected_pml(target, &layout.comm, limits)?;
        if pml != "ucx" {
            return Err(other_pml(target, &pml, "ucx", limits));
        }
        Ok(OmpiUcx {
            name: "native Open MPI UCX PML decoder".to_string(),
            layout,
            globals: Globals {
                communicators: required_symbol(target, "ompi_mpi_communicators", LIBMPI)?,
                module: required_symbol(
                    target,
                    "ompi_pml_ucx",
                    "mca_pml_ucx.so exports it: the UCX PML is selected but its component \
                     is not loaded",
                )?,
                request_class: target
                    .symbols()
                    .lookup("ompi_request_t_class")
                    .map(|s| s.addr),
            },
        })
    }

    /// Asks `layouts` every layout question of [`OMPI_UCX_LAYOUT`], for a
    /// layout profile ([`DecoderKind::ask_layouts`](crate::DecoderKind)).
    pub fn ask_layouts(layouts: &dyn Layouts) {
        LayoutNeed::ask_all(OMPI_UCX_LAYOUT, layouts);
    }

    /// The layouts of Open MPI's this decoder cannot do without that
    /// `layouts` lacks (all of [`OMPI_UCX_LAYOUT`]'s questions are
    /// needed).
    pub fn missing_layouts(layouts: &dyn Layouts) -> Vec<LayoutError> {
        Layout::resolve(layouts).err().unwrap_or_default()
    }

    /// Everything of Open MPI's this decoder needs that the image lacks:
    /// symbols, types and members, each named. Needs no process.
    pub fn missing(types: &dyn Layouts, symbols: &dyn SymbolSource) -> Vec<String> {
        let mut out: Vec<String> = OMPI_UCX_SYMBOLS
            .iter()
            .filter(|(name, _)| symbols.lookup(name).is_none())
            .map(|(name, object)| format!("the symbol `{name}` (of {object})"))
            .collect();
        if let Err(missing) = Layout::resolve(types) {
            out.extend(missing.iter().map(|e| format!("the {e}")));
        }
        out
    }

    /// The UCP worker the PML created (`ompi_pml_ucx.ucp_worker`); `None`
    /// before `MPI_Init` made it or after `MPI_Finalize` destroyed it.
    fn worker(&self, mem: &dyn TargetMemory) -> Result<Option<TargetAddr>, DecodeError> {
        let w = read_pointer(
            mem,
            at(self.globals.module, self.layout.worker.offset),
            "ompi_pml_ucx.ucp_worker",
        )?;
        Ok((w.0 != 0).then_some(w))
    }
}

impl QueueDecoder for OmpiUcx {
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
        let global_rank = comms
            .iter()
            .find(|c| c.context_id == 0)
            .map_or(-1, |world| world.rank);
        let mut diagnostics = notes;
        diagnostics.extend(comms.iter().filter_map(|c| c.world_error.clone()));
        let placed = match self.worker(mem)? {
            None => Err(
                "the UCX PML has no UCP worker (ompi_pml_ucx.ucp_worker is NULL: before \
                 MPI_Init created it, or after MPI_Finalize)"
                    .to_string(),
            ),
            Some(worker) => self.worker_queues(mem, target.layouts(), worker, &comms, limits),
        };
        let mut placed = match placed {
            Ok((placed, notes)) => {
                diagnostics.extend(notes);
                Ok(placed)
            }
            Err(why) => {
                diagnostics.push(why.clone());
                Err(why)
            }
        };
        let out = comms
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (sends, posted, unexpected) = match &mut placed {
                    Ok(p) => {
                        let q = p.take(i);
                        (read(q.sends), read(q.posted), read(q.unexpected))
                    }
                    // The reason is one diagnostic; each queue points to it.
                    Err(_) => (failed(), failed(), failed()),
                };
                communicator(c, sends, posted, unexpected)
            })
            .collect();
        Ok(ProcessQueues {
            source: self.name.clone(),
            global_rank,
            communicators: out,
            truncated: false,
            diagnostics,
        })
    }
}

fn read(operations: Vec<crate::model::PendingOperation>) -> Queue {
    Queue::Read {
        operations,
        truncated: false,
    }
}

fn failed() -> Queue {
    Queue::Failed {
        operations: Vec::new(),
        error: "UCX's worker was not read (the diagnostics say why)".to_string(),
    }
}

fn communicator(c: &CommInfo, sends: Queue, posted: Queue, unexpected: Queue) -> Communicator {
    Communicator {
        name: c.name.clone(),
        size: c.size,
        local_rank: c.rank,
        // As ob1's decoder does: readings are paired by context id.
        unique_id: c.context_id as u64,
        context_id: Some(c.context_id),
        recv_context_id: Some(c.context_id),
        group: c.world.clone().map(Into::into),
        pending_sends: sends,
        pending_receives: posted,
        unexpected_messages: unexpected,
    }
}
