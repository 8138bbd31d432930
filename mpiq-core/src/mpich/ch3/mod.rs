//! MPICH's message queues with the CH3 device, read natively.
//!
//! What MPICH keeps for debuggers:
//! - `MPIR_All_communicators`, an `MPIR_Comm_list` whose `sequence_number`
//!   changes whenever a communicator is created or freed, and whose `head`
//!   chains every `MPIR_Comm` through `comm_next`;
//! - `MPID_Recvq_posted_head_ptr` and `MPID_Recvq_unexpected_head_ptr`,
//!   pointers to the heads of the two receive queues of `MPIR_Request`s
//!   (chained through `next`), whose match fields sit in
//!   `dev.match.parts` (`tag`, `rank`, `context_id`);
//! - `MPIR_Sendq_head`, a list of `MPIR_Sendq` records for the nonblocking
//!   sends the application has not completed.
//!
//! A build without debugger support (no `--enable-debuginfo`, as Debian
//! 11's) has none of these: the communicators are then read from their
//! pool (`MPIR_Comm_builtin`, `_direct`, `_mem`) and the receive queues
//! from ch3u_recvq.c's file-local heads (`recvq_posted_head`,
//! `recvq_unexpected_head`), which a symbol table or a profile's symbols
//! place; its pending sends are recorded nowhere.
//!
//! Every offset comes from the library's own types through a
//! [`Layouts`]; a missing one stops the decoder before it reads
//! anything. Scalar widths are MPICH's declarations: `int` is 4 bytes,
//! context ids 2, ranks in a match 2, `MPI_Aint`, `intptr_t` and pointers
//! the target's address width.
//!
//! Beyond what MPICH's own `libtvmpich.so` reports, this decoder gives
//! `MPI_COMM_WORLD` ranks (from the communicator's group, or its virtual
//! connection table), reports MPICH's `MPI_ANY_SOURCE` (−2) as −1 and
//! `MPI_ANY_TAG` as `tag_wild`, and gives lengths in bytes wherever the
//! datatype's size can be read (predefined types and types in the direct
//! pool), with the element count alongside.
//!
//! The folder: `layout` (the members asked, and a request's state bits),
//! `communicators` (the list, and world ranks from the group or the
//! connection table) and `queues` (the two receive queues and the send
//! queue); this file holds the decoder and puts one reading together. It
//! stands on `mpich::common` and the decoder trait and error; only
//! `mpich` imports it, and nothing here imports CH4's decoder, Open MPI's,
//! `detect` or `mqs`.

mod communicators;
mod layout;
mod queues;

use mpidd_read::{Limits, SymbolSource};
use mpidd_types::TargetAddr;
use mpihandles::MpichConstants;

use crate::decoder::{required_symbol, DecodeError, QueueDecoder};
use crate::list_walk::at;
use crate::model::ProcessQueues;
use crate::mpich::common::{process_queues, read_consistently, CommCache, TypeSizes};
use crate::target_read::{read_int, Budgeted};
use layout::Layout;
use mpidd_read::Target;
use mpidd_read::TargetMemory;
use mpidd_read::{LayoutError, Layouts};

/// The globals without which there are no queues to read.
const REQUIRED_SYMBOLS: [&str; 3] = [
    "MPIR_All_communicators",
    "MPID_Recvq_posted_head_ptr",
    "MPID_Recvq_unexpected_head_ptr",
];

/// Where a receive queue's head is: the debugger's pointer to the head
/// variable (`MPID_Recvq_posted_head_ptr`), or, in a build without
/// debugger support, the file-local head variable itself
/// (`recvq_posted_head` in ch3u_recvq.c), which only a symbol table or a
/// profile's symbols place.
#[derive(Clone, Copy, Debug)]
pub(super) enum QueueHead {
    /// The address of a pointer to the head variable.
    Pointer(TargetAddr),
    /// The address of the head variable.
    Variable(TargetAddr),
}

/// Addresses of MPICH's debugger globals in this process.
#[derive(Clone, Copy, Debug)]
struct Globals {
    /// `MPIR_All_communicators`; `None` in a build without debugger
    /// support, whose communicators are read from their pool.
    all_communicators: Option<TargetAddr>,
    posted_head: QueueHead,
    unexpected_head: QueueHead,
    sendq_head: Option<TargetAddr>,
    datatype_direct: Option<TargetAddr>,
}

/// The head of one receive queue: the debugger's pointer `pointer`, else
/// the head variable `variable` (a build without debugger support), else
/// the error that names the pointer.
fn queue_head(
    target: &dyn Target,
    pointer: &'static str,
    variable: &str,
) -> Result<QueueHead, DecodeError> {
    const LOCAL: &str =
        "MPICH keeps it as a local symbol: the library's .symtab (or its debug file) is needed";
    let symbols = target.symbols();
    if let Some(s) = symbols.lookup(pointer) {
        return Ok(QueueHead::Pointer(s.addr));
    }
    if let Some(s) = symbols.lookup(variable) {
        return Ok(QueueHead::Variable(s.addr));
    }
    required_symbol(target, pointer, LOCAL).map(QueueHead::Pointer)
}

/// The MPICH CH3 decoder. An instance belongs to one process: it caches
/// that process's communicators by their sequence number.
pub struct MpichCh3 {
    name: String,
    /// The wildcards' values in the library's own code.
    constants: MpichConstants,
    layout: Layout,
    globals: Globals,
    cache: CommCache,
}

impl std::fmt::Debug for MpichCh3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpichCh3")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl MpichCh3 {
    /// A decoder for the MPICH in `target`, whose version string and
    /// device were read from it. Fails, naming what is missing, when a
    /// symbol or type the decoder needs is not there.
    pub fn new(target: &dyn Target, version: &str, device: &str) -> Result<Self, DecodeError> {
        let symbols = target.symbols();
        // Without debugger support there is no list of communicators; the
        // communicator pool has them all, when its symbols are known.
        let all_communicators = match symbols.lookup("MPIR_All_communicators") {
            Some(s) => Some(s.addr),
            None if symbols.lookup("MPIR_Comm_builtin").is_some() => None,
            None => Some(required_symbol(
                target,
                "MPIR_All_communicators",
                "MPICH built without debugger support (--enable-debuginfo)",
            )?),
        };
        let globals = Globals {
            all_communicators,
            posted_head: queue_head(target, "MPID_Recvq_posted_head_ptr", "recvq_posted_head")?,
            unexpected_head: queue_head(
                target,
                "MPID_Recvq_unexpected_head_ptr",
                "recvq_unexpected_head",
            )?,
            sendq_head: target.symbols().lookup("MPIR_Sendq_head").map(|s| s.addr),
            datatype_direct: target
                .symbols()
                .lookup("MPIR_Datatype_direct")
                .map(|s| s.addr),
        };
        let word = target.memory().abi().address_bytes() as u64;
        let constants = ["MPID_Recvq_posted_head_ptr", "MPIR_Comm_builtin"]
            .iter()
            .find_map(|name| symbols.lookup(name))
            .map_or(MpichConstants::MPICH, |s| {
                MpichConstants::of_library(&s.object)
            });
        Ok(MpichCh3 {
            name: format!("native MPICH {version} decoder ({device})"),
            constants,
            layout: Layout::resolve(target.layouts(), word).map_err(DecodeError::Layouts)?,
            globals,
            cache: CommCache::default(),
        })
    }

    /// Asks `layouts` every layout question this decoder asks, for a
    /// layout profile ([`DecoderKind::ask_layouts`](crate::DecoderKind)).
    pub fn ask_layouts(layouts: &dyn Layouts) {
        // The word size only places the request span; 8 is as good as any.
        let _ = Layout::resolve(layouts, 8);
    }

    /// The layouts this decoder cannot do without that `layouts` lacks.
    pub fn missing_layouts(layouts: &dyn Layouts) -> Vec<LayoutError> {
        Layout::resolve(layouts, 8).err().unwrap_or_default()
    }

    /// Everything this decoder needs that the image lacks: symbols, types
    /// and members, each named. Empty when the image has what it needs.
    /// Needs no process, so a debugger can ask before it attaches.
    pub fn missing(types: &dyn Layouts, symbols: &dyn SymbolSource) -> Vec<String> {
        let mut out: Vec<String> = REQUIRED_SYMBOLS
            .iter()
            .filter(|name| symbols.lookup(name).is_none())
            .map(|name| format!("the symbol `{name}`"))
            .collect();
        // The word size only places the request span; 8 is as good as any.
        if let Err(missing) = Layout::resolve(types, 8) {
            out.extend(missing.iter().map(|e| format!("the {e}")));
        }
        out
    }

    /// The communicator list's sequence number, which changes whenever a
    /// communicator is made or freed.
    /// `None` without the list (a build without debugger support).
    fn sequence(&self, mem: &dyn TargetMemory) -> Result<Option<i64>, DecodeError> {
        let (Some(list), Some((seq, _))) = (self.globals.all_communicators, self.layout.comm_list)
        else {
            return Ok(None);
        };
        Ok(Some(read_int(
            mem,
            at(list, seq),
            4,
            "MPIR_All_communicators.sequence_number",
        )?))
    }
}

impl QueueDecoder for MpichCh3 {
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
        let sequence = || self.sequence(mem);
        let (comms, queues) = read_consistently(sequence, |seq| {
            let comms = self
                .cache
                .get_or_read(seq, || self.read_communicators(target, mem, limits))?;
            let mut types = TypeSizes::default();
            let lists = || vec![Vec::new(); comms.len()];
            let (mut posted, mut unexpected) = (lists(), lists());
            self.receive_queue(
                mem,
                self.globals.posted_head,
                false,
                &comms,
                limits,
                &mut types,
                &mut posted,
            )?;
            self.receive_queue(
                mem,
                self.globals.unexpected_head,
                true,
                &comms,
                limits,
                &mut types,
                &mut unexpected,
            )?;
            let sends = match self.globals.sendq_head.filter(|_| self.layout.has_sendq) {
                Some(head) => {
                    let mut sends = lists();
                    self.send_queue(mem, head, &comms, limits, &mut types, &mut sends)?;
                    Some(sends)
                }
                None => None,
            };
            Ok((comms, (posted, unexpected, sends)))
        })?;
        let mut notes = Vec::new();
        if self.globals.sendq_head.is_none() || !self.layout.has_sendq {
            notes.push(
                "MPIR_Sendq_head is missing: this MPICH does not record pending sends".to_string(),
            );
        }
        Ok(process_queues(&self.name, comms, queues, notes))
    }
}
