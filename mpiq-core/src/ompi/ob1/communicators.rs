//! Open MPI's communicators: the `ompi_mpi_communicators` table, each
//! communicator's name, context id, rank and ob1 state, and the world
//! ranks of its peers from their procs.

use std::collections::HashMap;

use mpidd_read::Limits;
use mpidd_types::TargetAddr;

use super::layout::span_of;
use super::OmpiOb1;
use crate::decoder::DecodeError;
use crate::list_walk::at;
use crate::target_read::{checked_count, read_bytes, Record};
use mpidd_read::TargetMemory;

/// `OMPI_COMM_INTER` (`communicator.h`), the intercommunicator bit of
/// `c_flags`.
const OMPI_COMM_INTER: u64 = 0x1;

/// One communicator as read from the target.
#[derive(Clone, Debug)]
pub(super) struct CommInfo {
    pub(super) addr: TargetAddr,
    pub(super) name: String,
    pub(super) context_id: i64,
    pub(super) rank: i64,
    pub(super) size: i64,
    pub(super) pml_comm: TargetAddr,
    /// `MPI_COMM_WORLD` rank of each peer (the remote group's, for an
    /// intercommunicator), when it could be read.
    pub(super) world: Option<Vec<i64>>,
    pub(super) world_error: Option<String>,
}

impl CommInfo {
    pub(super) fn world_of(&self, rank: i64) -> i64 {
        usize::try_from(rank)
            .ok()
            .and_then(|i| self.world.as_ref()?.get(i).copied())
            .unwrap_or(-1)
    }
}

impl OmpiOb1 {
    /// Every communicator of the table, and notes on the entries left out.
    pub(super) fn read_communicators(
        &self,
        mem: &dyn TargetMemory,
        limits: &Limits,
    ) -> Result<(Vec<CommInfo>, Vec<String>), DecodeError> {
        let l = &self.layout;
        let array = self.globals.communicators;
        let word = mem.abi().address_bytes();
        let head = read_bytes(
            mem,
            array,
            [l.pa_size, l.pa_number_free, l.pa_addr]
                .iter()
                .map(|f| f.end())
                .max()
                .unwrap_or(0),
            "ompi_mpi_communicators (opal_pointer_array_t)",
            limits,
        )?;
        let r = Record {
            base: array,
            start: 0,
            bytes: &head,
            order: mem.abi().byte_order,
            what: "ompi_mpi_communicators (opal_pointer_array_t)",
        };
        let size = l.pa_size.int(&r)?;
        let n = checked_count(size, "ompi_mpi_communicators.size", array, limits)?;
        let table = l.pa_addr.addr(&r)?;
        let ptrs = read_bytes(
            mem,
            table,
            n.saturating_mul(word as u64),
            "ompi_mpi_communicators.addr",
            limits,
        )?;
        let t = Record {
            base: table,
            start: 0,
            bytes: &ptrs,
            order: mem.abi().byte_order,
            what: "ompi_mpi_communicators.addr",
        };
        let mut comms: Vec<CommInfo> = Vec::new();
        let mut notes = Vec::new();
        let mut seen: HashMap<i64, TargetAddr> = HashMap::new();
        for i in 0..n {
            let addr = TargetAddr(t.uint(i * word as u64, word)?);
            if addr.0 == 0 {
                continue;
            }
            let comm = self.read_communicator(mem, addr, limits)?;
            // A context id names one communicator (it is its index in this
            // table), and readings are paired by it: a second one with the
            // same id is a corrupt entry, not a second communicator.
            if let Some(first) = seen.insert(comm.context_id, addr) {
                seen.insert(comm.context_id, first);
                notes.push(format!(
                    "ompi_mpi_communicators[{i}] (ompi_communicator_t at {addr}) repeats the \
                     context id {} of the communicator at {first}: left out",
                    comm.context_id
                ));
                continue;
            }
            comms.push(comm);
        }
        Ok((comms, notes))
    }

    fn read_communicator(
        &self,
        mem: &dyn TargetMemory,
        addr: TargetAddr,
        limits: &Limits,
    ) -> Result<CommInfo, DecodeError> {
        let l = &self.layout;
        let span = l.comm_span;
        let bytes = read_bytes(
            mem,
            at(addr, span.start),
            span.end.saturating_sub(span.start),
            "ompi_communicator_t",
            limits,
        )?;
        let r = Record {
            base: addr,
            start: span.start,
            bytes: &bytes,
            order: mem.abi().byte_order,
            what: "ompi_communicator_t",
        };
        let name_len = usize::try_from(l.comm_name.size).unwrap_or(0);
        let name = r.chars(l.comm_name.offset, name_len)?;
        let flags = l.comm_flags.uint(&r)?;
        let inter = flags & OMPI_COMM_INTER != 0;
        let local_group = l.comm_local_group.addr(&r)?;
        let peers_group = if inter {
            l.comm_remote_group.addr(&r)?
        } else {
            local_group
        };
        let (size, world, world_error) = match self.group_world_ranks(mem, peers_group, limits) {
            Ok(world) => (world.len() as i64, Some(world), None),
            Err(e) => (
                -1,
                None,
                Some(format!(
                    "communicator `{name}` (ompi_communicator_t at {addr}): no world ranks: {e}"
                )),
            ),
        };
        Ok(CommInfo {
            addr,
            context_id: l.comm_contextid.uint(&r)? as i64,
            rank: l.comm_my_rank.int(&r)?,
            size,
            pml_comm: l.comm_pml_comm.addr(&r)?,
            name,
            world,
            world_error,
        })
    }

    /// The world rank of each process of a group, from its procs'
    /// `proc_name.vpid` (or from the pointer itself when Open MPI left a
    /// sentinel encoding the name there instead of a proc).
    fn group_world_ranks(
        &self,
        mem: &dyn TargetMemory,
        group: TargetAddr,
        limits: &Limits,
    ) -> Result<Vec<i64>, DecodeError> {
        let l = &self.layout;
        let end = l.group_count.end().max(l.group_procs.end());
        let bytes = read_bytes(mem, group, end, "ompi_group_t", limits)?;
        let abi = mem.abi();
        let word = abi.address_bytes();
        let r = Record {
            base: group,
            start: 0,
            bytes: &bytes,
            order: abi.byte_order,
            what: "ompi_group_t",
        };
        let count = l.group_count.int(&r)?;
        let n = checked_count(count, "ompi_group_t.grp_proc_count", group, limits)?;
        if n == 0 {
            // MPI_GROUP_EMPTY's, and MPI_COMM_NULL's, have no proc table.
            return Ok(Vec::new());
        }
        let procs = l.group_procs.addr(&r)?;
        let ptrs = read_bytes(
            mem,
            procs,
            n.saturating_mul(word as u64),
            "ompi_group_t.grp_proc_pointers",
            limits,
        )?;
        let p = Record {
            base: procs,
            start: 0,
            bytes: &ptrs,
            order: abi.byte_order,
            what: "ompi_group_t.grp_proc_pointers",
        };
        let vpid_span = span_of(&[l.proc_vpid]);
        (0..n)
            .map(|i| {
                let proc = p.uint(i * word as u64, word)?;
                if proc & 1 == 1 {
                    // `ompi_proc_sentinel_to_name` (proc.h): the vpid is
                    // the top 32 bits of a 64-bit sentinel, the bits above
                    // the flag of a 32-bit one.
                    return Ok(if word == 8 { proc >> 32 } else { proc >> 1 } as i64);
                }
                let v = read_bytes(
                    mem,
                    at(TargetAddr(proc), vpid_span.start),
                    vpid_span.end - vpid_span.start,
                    "ompi_proc_t.super.proc_name.vpid",
                    limits,
                )?;
                let r = Record {
                    base: TargetAddr(proc),
                    start: vpid_span.start,
                    bytes: &v,
                    order: abi.byte_order,
                    what: "ompi_proc_t",
                };
                Ok(l.proc_vpid.uint(&r)? as i64)
            })
            .collect()
    }
}
