//! The posted receives of one communicator: its wildcard receives and
//! each peer's specific receives, in the order they were posted, beside
//! the fragments that wait for them (`fragments`).

use mpidd_read::Limits;
use mpidd_types::TargetAddr;

use super::{DatatypeSizes, OmpiOb1, REQUEST_COMPLETED};
use crate::decoder::DecodeError;
use crate::list_walk::at;
use crate::model::{OperationStatus, PendingOperation};
use crate::ompi::communicators::CommInfo;
use crate::target_read::{checked_count, read_bytes, read_pointer, Record};
use mpidd_read::TargetMemory;

/// Open MPI's `MPI_ANY_SOURCE` and `MPI_ANY_TAG` (`mpi.h`: both −1).
const OMPI_ANY_SOURCE: i64 = -1;
const OMPI_ANY_TAG: i64 = -1;

/// The operations of one queue of one communicator, at most
/// [`Limits::max_list_len`]: ob1 spreads a queue over several lists (the
/// wildcard receives and one list per peer, the out-of-order rings), and
/// the bound a list has holds for the queue they make.
pub(super) struct QueueOps<T> {
    pub(super) ops: Vec<T>,
    pub(super) limit: u64,
    pub(super) what: &'static str,
}

impl<T> QueueOps<T> {
    pub(super) fn new(limits: &Limits, what: &'static str) -> Self {
        QueueOps {
            ops: Vec::new(),
            limit: limits.max_list_len,
            what,
        }
    }

    /// Adds the operation read at `at`, unless the queue is full.
    pub(super) fn push(&mut self, op: T, at: TargetAddr) -> Result<(), DecodeError> {
        if self.ops.len() as u64 >= self.limit {
            return Err(DecodeError::TooLong {
                what: self.what,
                limit: self.limit,
                addr: at,
            });
        }
        self.ops.push(op);
        Ok(())
    }
}

/// Receives match in the order they were posted, which their sequence
/// numbers keep across the wildcard and per-peer lists.
pub(super) fn in_order(
    posted: QueueOps<(u64, PendingOperation)>,
    unexpected: QueueOps<PendingOperation>,
) -> (Vec<PendingOperation>, Vec<PendingOperation>) {
    let mut posted = posted.ops;
    // One list (the usual case) is in order already.
    if !posted.is_sorted_by_key(|(seq, _)| *seq) {
        posted.sort_by_key(|(seq, _)| *seq);
    }
    (
        posted.into_iter().map(|(_, op)| op).collect(),
        unexpected.ops,
    )
}

impl OmpiOb1 {
    /// A posted receive request of `comm`.
    fn posted_receive(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        comm: &CommInfo,
        types: &mut DatatypeSizes,
    ) -> Result<(u64, PendingOperation), DecodeError> {
        let f = &self.layout.recv;
        let peer = f.peer.int(r)?;
        let tag = f.tag.int(r)?;
        let count = f.count.int(r)?;
        let datatype = f.datatype.addr(r)?;
        let complete = f.complete.uint(r)? == REQUEST_COMPLETED;
        let any_source = peer == OMPI_ANY_SOURCE;
        let any_tag = tag == OMPI_ANY_TAG;
        let (length, extra) = match self.datatype_size(mem, datatype, types) {
            Some(size) => (count.saturating_mul(size as i64), Vec::new()),
            None => (
                count,
                vec![format!(
                    "length in elements: the datatype at {datatype} has no readable size"
                )],
            ),
        };
        let status = if complete {
            OperationStatus::Complete
        } else {
            OperationStatus::Pending
        };
        let op = PendingOperation {
            buffer: f.addr.uint(r)?,
            extra_text: extra,
            desired_count: Some(count),
            ..PendingOperation::receive(
                status,
                (!any_source).then(|| (peer, comm.world_of(peer))),
                (!any_tag).then_some(tag),
                length,
            )
        };
        Ok((f.sequence.uint(r)?, op))
    }

    /// The posted receives and unexpected messages of one communicator.
    pub(super) fn receive_queues(
        &self,
        mem: &dyn TargetMemory,
        comm: &CommInfo,
        limits: &Limits,
        types: &mut DatatypeSizes,
    ) -> Result<(Vec<PendingOperation>, Vec<PendingOperation>), DecodeError> {
        let l = &self.layout;
        let mut posted = QueueOps::new(limits, "posted receives of one communicator");
        let mut unexpected = QueueOps::new(limits, "unexpected messages of one communicator");
        if comm.pml_comm.0 == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        let pml = comm.pml_comm;
        self.walk_list(
            mem,
            at(pml, l.ob1_wild),
            l.recv_span,
            "wild_receives (mca_pml_ob1_recv_request_t)",
            limits,
            |r| posted.push(self.posted_receive(mem, r, comm, types)?, r.base),
        )?;
        let head_end = l.ob1_procs.end().max(l.ob1_num_procs.end());
        let head = read_bytes(mem, pml, head_end, "mca_pml_ob1_comm_t", limits)?;
        let order = mem.abi().byte_order;
        let word = mem.abi().address_bytes();
        let h = Record {
            base: pml,
            start: 0,
            bytes: &head,
            order,
            what: "mca_pml_ob1_comm_t",
        };
        let num_procs = l.ob1_num_procs.uint(&h)?;
        let n = checked_count(
            i64::try_from(num_procs).unwrap_or(i64::MAX),
            "mca_pml_ob1_comm_t.num_procs",
            pml,
            limits,
        )?;
        let procs = l.ob1_procs.addr(&h)?;
        if n == 0 || procs.0 == 0 {
            return Ok(in_order(posted, unexpected));
        }
        let table = read_bytes(
            mem,
            procs,
            n.saturating_mul(word as u64),
            "mca_pml_ob1_comm_t.procs",
            limits,
        )?;
        let t = Record {
            base: procs,
            start: 0,
            bytes: &table,
            order,
            what: "mca_pml_ob1_comm_t.procs",
        };
        for i in 0..n {
            // A peer gets its state on first contact (mca_pml_ob1_peer_lookup).
            let peer = TargetAddr(t.uint(i * word as u64, word)?);
            if peer.0 == 0 {
                continue;
            }
            self.walk_list(
                mem,
                at(peer, l.peer_specific),
                l.recv_span,
                "specific_receives (mca_pml_ob1_recv_request_t)",
                limits,
                |r| posted.push(self.posted_receive(mem, r, comm, types)?, r.base),
            )?;
            self.walk_list(
                mem,
                at(peer, l.peer_unexpected),
                l.frag_span,
                "unexpected_frags (mca_pml_ob1_recv_frag_t)",
                limits,
                |r| unexpected.push(self.fragment(mem, r, comm, limits, false)?, r.base),
            )?;
            let cant = read_pointer(
                mem,
                at(peer, l.peer_cant_match.offset),
                "mca_pml_ob1_comm_proc_t.frags_cant_match",
            )?;
            if cant.0 != 0 {
                self.cant_match(mem, cant, comm, limits, &mut unexpected)?;
            }
        }
        Ok(in_order(posted, unexpected))
    }
}
