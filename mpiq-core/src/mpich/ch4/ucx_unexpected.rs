//! The unexpected messages of ch4:ucx, which only UCX keeps: MPICH makes
//! no request for a message until a receive matches it (an `MPI_Probe`
//! leaves it there too), so it waits in the unexpected list of the UCP
//! worker of its VCI (`ucp_worker_t.tm.unexpected`). MPICH's workers are
//! `MPIDI_UCX_global.ctx[vci].worker` ([`mpihandles::mpich_ucx_workers`]);
//! UCX's reader ([`mpihandles::read_ucx_worker`]) gives each message's
//! 64-bit tag, protocol and length, and this file puts them in MPICH's
//! terms: the context id in the tag gives the communicator (its receive
//! context id), the rank field the source in it, and the rest the MPI tag
//! (`MPIDI_UCX_init_tag`, [`mpihandles::mpich_ucx_tag`]). Messages of
//! collectives (their communicator's context id plus one) are left out,
//! as everywhere else in the decoder.

use mpidd_read::Limits;
use mpihandles::{Layouts, UcxProtocol, UcxUnexpected};

use super::netmod::collective;
use super::netmod_choice::ChosenNetmod;
use super::MpichCh4;
use crate::model::{OperationStatus, PendingOperation, Protocol};
use crate::mpich::common::CommInfo;
use mpidd_read::Target;
use mpidd_read::TargetMemory;

/// What UCX's workers add to the unexpected queues.
#[derive(Default)]
pub(super) struct UcxFindings {
    /// Unexpected messages, by communicator index.
    pub(super) unexpected: Vec<Vec<PendingOperation>>,
    /// What could not be read or placed, and why.
    pub(super) notes: Vec<String>,
}

impl MpichCh4 {
    /// The unexpected messages of every UCP worker MPICH uses, by
    /// communicator; what cannot be read is a note, never a failure of the
    /// whole reading, so the MPI-level queues stand.
    pub(super) fn ucx_unexpected(
        &self,
        target: &dyn Target,
        mem: &dyn TargetMemory,
        types: &dyn Layouts,
        comms: &[CommInfo],
        limits: &Limits,
    ) -> UcxFindings {
        let mut found = UcxFindings {
            unexpected: vec![Vec::new(); comms.len()],
            notes: Vec::new(),
        };
        let not_read = "unexpected messages, which only UCX's worker keeps, are not read";
        let Some(global) = target.symbols().lookup("MPIDI_UCX_global") else {
            found.notes.push(format!(
                "{not_read}: MPIDI_UCX_global, where MPICH keeps its UCX workers, is not among \
                 the library's symbols"
            ));
            return found;
        };
        if let Some(e) = mpihandles::ucx_worker_layouts_missing(types) {
            found
                .notes
                .push(format!("{not_read}: UCX's worker types are unknown: {e}"));
            return found;
        }
        let workers = match mpihandles::mpich_ucx_workers(mem, types, *limits, global.addr) {
            Ok(w) => w,
            Err(e) => {
                found.notes.push(format!(
                    "{not_read}: MPICH's UCX workers (MPIDI_UCX_global at {}): {e}",
                    global.addr
                ));
                return found;
            }
        };
        for worker in workers {
            let queues = match mpihandles::read_ucx_worker(mem, types, worker, limits) {
                Ok(q) => q,
                Err(e) => {
                    found
                        .notes
                        .push(format!("{not_read} from UCX's worker at {worker}: {e}"));
                    continue;
                }
            };
            found.notes.extend(
                queues
                    .notes
                    .iter()
                    .map(|n| format!("UCX's worker at {worker}: {n}")),
            );
            for m in &queues.unexpected {
                let env = mpihandles::mpich_ucx_tag(m.tag);
                if let Some(ci) = comms
                    .iter()
                    .position(|c| c.recvcontext_id == env.context_id)
                {
                    found.unexpected[ci].push(unexpected_message(m, env, &comms[ci]));
                } else if !collective(comms, env.context_id, |c| c.recvcontext_id) {
                    found.notes.push(format!(
                        "an unexpected message in UCX's worker at {worker} (descriptor at {}) \
                         with context id {}, which is no communicator's: from rank {}, tag {}",
                        m.descriptor, env.context_id, env.rank, env.tag
                    ));
                }
            }
        }
        found
    }
}

/// One unexpected message of UCX's worker, in MPICH's terms.
fn unexpected_message(
    m: &UcxUnexpected,
    env: mpihandles::MpichUcxTag,
    comm: &CommInfo,
) -> PendingOperation {
    let length = m.length.map_or(-1, |l| l as i64);
    // The interface carries five lines of 63 characters each.
    let (protocol, synchronous, how) = match m.protocol {
        UcxProtocol::Eager => (Some(Protocol::Eager), Some(false), "eager".to_string()),
        UcxProtocol::EagerSync => (
            Some(Protocol::Eager),
            Some(true),
            "eager and synchronous: its sender waits".to_string(),
        ),
        UcxProtocol::Rendezvous => (
            Some(Protocol::Rendezvous),
            None,
            "rendezvous: the data waits at the sender".to_string(),
        ),
        UcxProtocol::Unknown(flags) => (
            None,
            None,
            format!("protocol unknown: descriptor flags {flags:#x}"),
        ),
    };
    let eager = matches!(m.protocol, UcxProtocol::Eager | UcxProtocol::EagerSync);
    let mut extra = vec![
        format!("in UCX's worker: ucp_recv_desc_t at {}", m.descriptor),
        how,
    ];
    if m.length.is_none() {
        extra.push("its length is unknown (see the notes)".to_string());
    }
    PendingOperation {
        // An eager message's data is in UCX's descriptor, right after
        // its header.
        system_buffer: eager,
        buffer: if eager { m.descriptor.0 } else { 0 },
        protocol,
        synchronous,
        extra_text: extra,
        ..PendingOperation::message(
            OperationStatus::Pending,
            (env.rank, comm.world_of(env.rank)),
            env.tag,
            length,
        )
    }
}

/// What a rank whose build carries UCX but runs another netmod (OFI)
/// adds: no message, and one note saying where the network's unexpected
/// messages are instead. MPICH keeps no queue of what it hands to
/// libfabric, whose provider matches and holds them; the receives posted
/// to it are MPICH's requests, read with the rest.
pub(super) fn other_netmod_unexpected(netmod: &ChosenNetmod, comms: usize) -> UcxFindings {
    UcxFindings {
        unexpected: vec![Vec::new(); comms],
        notes: vec![format!(
            "unexpected messages that came over the network are held by the {} netmod's \
             transport (libfabric's provider for ofi), of which MPICH keeps no queue: not read; \
             those of the shared-memory path are",
            netmod.name
        )],
    }
}
