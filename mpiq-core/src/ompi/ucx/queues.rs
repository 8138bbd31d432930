//! UCX's operations placed in their communicators' queues: each tag's
//! envelope decoded (`tag`), its communicator found by context id, ranks
//! turned into world ranks through the communicator's group, and a
//! send's destination found from its endpoint among the peers' procs.

use std::collections::{HashMap, HashSet};

use mpidd_read::{Limits, TargetMemory};
use mpidd_types::TargetAddr;

use super::{tag, OmpiUcx};
use crate::decoder::DecodeError;
use crate::list_walk::at;
use crate::model::{OperationStatus, PendingOperation, Protocol};
use crate::ompi::communicators::CommInfo;
use crate::target_read::{read_bytes, Record};

/// A receive posted to UCX's expected queues.
#[derive(Clone, Copy, Debug)]
pub(super) struct Posted {
    /// The user part of UCX's request.
    pub(super) user: TargetAddr,
    pub(super) tag: u64,
    pub(super) tag_mask: u64,
    pub(super) buffer: u64,
    pub(super) length: u64,
    /// UCX's posting order across its expected queues.
    pub(super) sequence: u64,
}

/// A message in UCX's unexpected list.
#[derive(Clone, Copy, Debug)]
pub(super) struct Unexpected {
    /// Where UCX keeps it (its receive descriptor).
    pub(super) descriptor: TargetAddr,
    /// The sender's tag.
    pub(super) tag: u64,
    /// The message's length, when UCX's descriptor says it.
    pub(super) length: Option<u64>,
    pub(super) protocol: Option<Protocol>,
    pub(super) synchronous: Option<bool>,
}

/// A send request of UCX's pool that is in flight.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sent {
    pub(super) user: TargetAddr,
    pub(super) tag: u64,
    pub(super) buffer: u64,
    pub(super) length: u64,
    /// The `ucp_ep_h` it goes through.
    pub(super) endpoint: u64,
    pub(super) protocol: Option<Protocol>,
    pub(super) synchronous: Option<bool>,
}

/// The three queues of one communicator.
#[derive(Default, Debug)]
pub(super) struct CommQueues {
    pub(super) sends: Vec<PendingOperation>,
    pub(super) posted: Vec<PendingOperation>,
    pub(super) unexpected: Vec<PendingOperation>,
}

/// The queues of every communicator, in the order of the communicators.
#[derive(Debug)]
pub(super) struct Placed(Vec<CommQueues>);

impl Placed {
    /// The queues of the `i`th communicator (empty once taken).
    pub(super) fn take(&mut self, i: usize) -> CommQueues {
        self.0.get_mut(i).map(std::mem::take).unwrap_or_default()
    }
}

/// What the decoder knows of the process besides UCX's operations.
pub(super) struct Peers<'a> {
    pub(super) comms: &'a [CommInfo],
    /// The world rank of the peer behind each `ucp_ep_h`.
    pub(super) endpoints: &'a HashMap<u64, i64>,
}

impl Peers<'_> {
    /// The communicator whose context id the tag carries.
    fn comm(&self, context_id: u64) -> Option<usize> {
        self.comms
            .iter()
            .position(|c| tag::context_bits(c.context_id) == context_id)
    }
}

/// Places each operation in its communicator's queue, posted receives in
/// posting order; `request(user)` says whether the user part of a
/// request is an MPI request (a blocking call's is on its stack, never
/// initialised as one). Operations of no communicator are noted.
pub(super) fn place(
    peers: &Peers<'_>,
    mut posted: Vec<Posted>,
    unexpected: Vec<Unexpected>,
    sends: Vec<Sent>,
    request: &dyn Fn(TargetAddr) -> bool,
) -> (Placed, Vec<String>) {
    let mut out: Vec<CommQueues> = peers.comms.iter().map(|_| CommQueues::default()).collect();
    let mut notes = Vec::new();
    let mut stray = |what: &str, context_id: u64| {
        notes.push(format!(
            "{what} with context id {context_id} in its UCX tag, which is no communicator's: \
             left out"
        ))
    };
    let request_text = |user: TargetAddr| {
        if request(user) {
            format!("MPI request {user}")
        } else {
            "blocking call (no MPI request)".to_string()
        }
    };
    posted.sort_by_key(|p| p.sequence);
    for p in posted {
        let e = tag::receive(p.tag, p.tag_mask);
        let Some(ci) = peers.comm(e.context_id) else {
            stray(
                &format!("a posted receive ({})", request_text(p.user)),
                e.context_id,
            );
            continue;
        };
        let c = &peers.comms[ci];
        out[ci].posted.push(PendingOperation {
            buffer: p.buffer,
            extra_text: vec![request_text(p.user)],
            ..PendingOperation::receive(
                OperationStatus::Pending,
                e.source.map(|s| (s, c.world_of(s))),
                e.tag,
                i64::try_from(p.length).unwrap_or(i64::MAX),
            )
        });
    }
    for u in unexpected {
        let e = tag::message(u.tag);
        let Some(ci) = peers.comm(e.context_id) else {
            stray(
                &format!("an unexpected message (at {})", u.descriptor),
                e.context_id,
            );
            continue;
        };
        let c = &peers.comms[ci];
        let source = e.source.unwrap_or(-1);
        let length = u
            .length
            .map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
        let mut extra = vec![format!("UCX receive descriptor at {}", u.descriptor)];
        if u.length.is_none() {
            extra.push("length unknown: UCX's descriptor does not give it".to_string());
        }
        out[ci].unexpected.push(PendingOperation {
            system_buffer: true,
            extra_text: extra,
            protocol: u.protocol,
            synchronous: u.synchronous,
            ..PendingOperation::message(
                OperationStatus::Pending,
                (source, c.world_of(source)),
                e.tag.unwrap_or(-1),
                length,
            )
        });
    }
    for s in sends {
        let e = tag::message(s.tag);
        let Some(ci) = peers.comm(e.context_id) else {
            stray(&format!("a send ({})", request_text(s.user)), e.context_id);
            continue;
        };
        let c = &peers.comms[ci];
        let mut extra = vec![request_text(s.user)];
        let dest = match peers.endpoints.get(&s.endpoint) {
            Some(&world) => {
                let local = c
                    .world
                    .as_ref()
                    .and_then(|w| w.iter().position(|&r| r == world))
                    .map_or(-1, |i| i as i64);
                if local < 0 {
                    extra.push(format!(
                        "to world rank {world}, which is not in the communicator's group"
                    ));
                }
                (local, world)
            }
            None => {
                extra.push(format!(
                    "its endpoint {:#x} is no known peer's (no proc of the communicators has it)",
                    s.endpoint
                ));
                (-1, -1)
            }
        };
        out[ci].sends.push(PendingOperation {
            buffer: s.buffer,
            extra_text: extra,
            protocol: s.protocol,
            synchronous: s.synchronous,
            ..PendingOperation::message(
                OperationStatus::Pending,
                dest,
                e.tag.unwrap_or(-1),
                i64::try_from(s.length).unwrap_or(i64::MAX),
            )
        });
    }
    (Placed(out), notes)
}

impl OmpiUcx {
    /// The operations of UCX's worker at `worker`, placed in the
    /// communicators' queues, with notes; or why the worker was not read.
    pub(super) fn worker_queues(
        &self,
        mem: &dyn TargetMemory,
        layouts: &dyn mpidd_read::Layouts,
        worker: TargetAddr,
        comms: &[CommInfo],
        limits: &Limits,
    ) -> Result<(Placed, Vec<String>), String> {
        let w = mpihandles::read_ucx_worker(mem, layouts, worker, limits).map_err(|e| match e {
            mpihandles::UcxError::Layouts(e) => format!(
                "the UCX PML's operations are in UCX's worker at {worker}, unreadable without \
                 UCX's types: {e} (UCX's debug info, or a layout profile of this UCX build, \
                 gives them)"
            ),
            e => format!("UCX's worker at {worker}: {e}"),
        })?;
        let endpoints = self
            .endpoints(mem, comms, limits)
            .map_err(|e| format!("the peers' UCX endpoints: {e}"))?;
        let peers = Peers {
            comms,
            endpoints: &endpoints,
        };
        let posted = w
            .posted
            .iter()
            .map(|p| Posted {
                user: p.user,
                tag: p.tag,
                tag_mask: p.tag_mask,
                buffer: p.buffer,
                length: p.length,
                sequence: p.sequence,
            })
            .collect();
        let unexpected = w
            .unexpected
            .iter()
            .map(|u| {
                let (protocol, synchronous) = protocol(u.protocol);
                Unexpected {
                    descriptor: u.descriptor,
                    tag: u.tag,
                    length: u.length,
                    protocol,
                    synchronous,
                }
            })
            .collect();
        let sends = w
            .sends
            .iter()
            .map(|s| Sent {
                user: s.user,
                tag: s.tag,
                buffer: s.buffer,
                length: s.length,
                endpoint: s.endpoint,
                protocol: protocol(s.protocol).0,
                synchronous: Some(s.synchronous),
            })
            .collect();
        let (placed, mut notes) = place(&peers, posted, unexpected, sends, &|user| {
            self.is_request(mem, user)
        });
        notes.extend(w.notes);
        Ok((placed, notes))
    }

    /// The world rank behind each endpoint the PML created: every slot of
    /// `proc_endpoints` of every proc the communicators know. The PML's
    /// slot (`OMPI_PROC_ENDPOINT_TAG_PML`) is a configure-time index, so
    /// all are read; the others hold other frameworks' pointers (the
    /// BML's, unused when ob1 is not selected), never a `ucp_ep_h`.
    pub(super) fn endpoints(
        &self,
        mem: &dyn TargetMemory,
        comms: &[CommInfo],
        limits: &Limits,
    ) -> Result<HashMap<u64, i64>, DecodeError> {
        let slots = &self.layout.proc_endpoints;
        let word = mem.abi().address_bytes() as u64;
        let n = slots
            .array_len
            .unwrap_or_else(|| slots.size.checked_div(word).unwrap_or(0))
            .min(64);
        let mut seen: HashSet<u64> = HashSet::new();
        let mut out = HashMap::new();
        for c in comms {
            let Some(world) = &c.world else { continue };
            for (&rank, proc) in world.iter().zip(&c.procs) {
                if proc.0 == 0 || !seen.insert(proc.0) {
                    continue;
                }
                let bytes = read_bytes(
                    mem,
                    at(*proc, slots.offset),
                    n * word,
                    "ompi_proc_t.proc_endpoints",
                    limits,
                )?;
                let r = Record {
                    base: *proc,
                    start: slots.offset,
                    bytes: &bytes,
                    order: mem.abi().byte_order,
                    what: "ompi_proc_t.proc_endpoints",
                };
                for i in 0..n {
                    let ep = r.uint(slots.offset + i * word, word as usize)?;
                    if ep != 0 {
                        out.insert(ep, rank);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Whether the user part of a UCX request at `user` is an MPI request
    /// (`mca_pml_ucx_request_init` constructs one there), rather than the
    /// uninitialised one a blocking call allocates on its stack.
    pub(super) fn is_request(&self, mem: &dyn TargetMemory, user: TargetAddr) -> bool {
        let Some(class) = self.globals.request_class else {
            return false;
        };
        let f = self.layout.request_class;
        let mut buf = [0u8; 8];
        let n = f.size.clamp(1, 8);
        mem.read_exact(at(user, f.offset), &mut buf[..n], "ompi_request_t.super")
            .is_ok_and(|()| mpidd_read::decode_uint(&buf[..n], mem.abi().byte_order) == class.0)
    }
}

/// The model's protocol and synchronous flag for UCX's: an eager
/// synchronous message is eager, its sender waiting for the match; UCX's
/// rendezvous request does not say whether the send was synchronous.
fn protocol(p: mpihandles::UcxProtocol) -> (Option<Protocol>, Option<bool>) {
    match p {
        mpihandles::UcxProtocol::Eager => (Some(Protocol::Eager), Some(false)),
        mpihandles::UcxProtocol::EagerSync => (Some(Protocol::Eager), Some(true)),
        mpihandles::UcxProtocol::Rendezvous => (Some(Protocol::Rendezvous), None),
        _ => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comm(name: &str, cid: i64, rank: i64, world: Vec<i64>) -> CommInfo {
        CommInfo {
            addr: TargetAddr(0x1000 + cid as u64),
            name: name.to_string(),
            context_id: cid,
            rank,
            size: world.len() as i64,
            pml_comm: TargetAddr(0),
            procs: world.iter().map(|_| TargetAddr(0)).collect(),
            world: Some(world),
            world_error: None,
        }
    }

    /// pml_ucx_request.h's packing, written out.
    fn send_tag(tag: i64, rank: u64, cid: u64) -> u64 {
        ((tag as u64) << 40) | (rank << 20) | cid
    }

    #[test]
    fn operations_go_to_their_communicators_with_world_ranks() {
        // World, and an odd split holding world ranks 1 and 3.
        let comms = [
            comm("MPI_COMM_WORLD", 0, 3, vec![0, 1, 2, 3]),
            comm("split", 4, 1, vec![1, 3]),
        ];
        let endpoints = HashMap::from([(0xe1, 1), (0xe2, 2)]);
        let peers = Peers {
            comms: &comms,
            endpoints: &endpoints,
        };
        let posted = vec![
            Posted {
                user: TargetAddr(0x20),
                tag: (7 << 40) | 4,
                tag_mask: 0x8000_0000_000f_ffff | 0x7fff_ff00_0000_0000,
                buffer: 0xb1,
                length: 16,
                sequence: 2,
            },
            Posted {
                user: TargetAddr(0x10),
                tag: (1 << 20) | 4,
                tag_mask: 0x8000_00ff_ffff_ffff,
                buffer: 0xb0,
                length: 8,
                sequence: 1,
            },
        ];
        let unexpected = vec![Unexpected {
            descriptor: TargetAddr(0xd0),
            tag: send_tag(55, 0, 4),
            length: Some(16),
            protocol: Some(Protocol::Eager),
            synchronous: Some(true),
        }];
        let sends = vec![
            Sent {
                user: TargetAddr(0x30),
                tag: send_tag(33, 3, 0),
                buffer: 0xc0,
                length: 1 << 20,
                endpoint: 0xe2,
                protocol: Some(Protocol::Rendezvous),
                synchronous: Some(false),
            },
            Sent {
                user: TargetAddr(0x40),
                tag: send_tag(9, 3, 0),
                buffer: 0xc1,
                length: 4,
                endpoint: 0xee,
                protocol: None,
                synchronous: None,
            },
            Sent {
                user: TargetAddr(0x50),
                tag: send_tag(9, 3, 9),
                buffer: 0xc2,
                length: 4,
                endpoint: 0xe1,
                protocol: None,
                synchronous: None,
            },
        ];
        let (mut placed, notes) = place(&peers, posted, unexpected, sends, &|u| u.0 == 0x10);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("context id 9"), "{notes:?}");
        let split = placed.take(1);
        // Posting order: the specific receive (sequence 1) first.
        assert_eq!(split.posted.len(), 2);
        let r = &split.posted[0];
        assert_eq!((r.desired_local_rank, r.desired_global_rank), (1, 3));
        assert!(r.tag_wild);
        assert_eq!((r.buffer, r.desired_length), (0xb0, 8));
        assert_eq!(r.extra_text, ["MPI request 0x10"]);
        let r = &split.posted[1];
        assert_eq!((r.desired_local_rank, r.desired_global_rank), (-1, -1));
        assert_eq!((r.tag_wild, r.desired_tag), (false, 7));
        assert_eq!(r.extra_text, ["blocking call (no MPI request)"]);
        let u = &split.unexpected[0];
        assert_eq!((u.actual_local_rank, u.actual_global_rank), (0, 1));
        assert_eq!((u.actual_tag, u.actual_length), (55, 16));
        assert_eq!(
            (u.protocol, u.synchronous),
            (Some(Protocol::Eager), Some(true))
        );
        let world = placed.take(0);
        assert_eq!(world.sends.len(), 2);
        let s = &world.sends[0];
        assert_eq!((s.actual_local_rank, s.actual_global_rank), (2, 2));
        assert_eq!(
            (s.actual_tag, s.actual_length, s.buffer),
            (33, 1 << 20, 0xc0)
        );
        let s = &world.sends[1];
        assert_eq!(s.actual_global_rank, -1);
        assert!(s.extra_text[1].contains("0xee is no known peer's"), "{s:?}");
        assert!(placed.take(0).sends.is_empty(), "taken once");
    }
}
