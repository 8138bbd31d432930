//! Open MPI's communicators, as every PML's decoder reads them: the
//! `ompi_mpi_communicators` table, each communicator's name, context id,
//! rank and PML state, the world ranks of its peers from their procs, and
//! the name of the PML the process selected.

use std::collections::HashMap;

use mpidd_read::{Limits, Member, Target};
use mpidd_types::TargetAddr;

use super::layout::{span_of, Asker, Field};
use crate::decoder::{required_symbol, DecodeError};
use crate::list_walk::{at, Span};
use crate::target_read::{checked_count, read_bytes, Record};
use mpidd_read::TargetMemory;

/// Every question of [`CommLayout::resolve`], which each Open MPI
/// decoder's list repeats.
#[cfg(test)]
pub(crate) const COMM_QUESTIONS: &[(&str, &str)] = &[
    ("opal_pointer_array_t", "size"),
    ("opal_pointer_array_t", "number_free"),
    ("opal_pointer_array_t", "addr"),
    ("ompi_communicator_t", "c_name"),
    ("ompi_communicator_t", "c_contextid"),
    ("ompi_communicator_t", "c_my_rank"),
    ("ompi_communicator_t", "c_flags"),
    ("ompi_communicator_t", "c_local_group"),
    ("ompi_communicator_t", "c_remote_group"),
    ("ompi_communicator_t", "c_pml_comm"),
    ("ompi_communicator_t", "c_index"),
    ("ompi_group_t", "grp_proc_count"),
    ("ompi_group_t", "grp_proc_pointers"),
    ("ompi_proc_t", "super.proc_name.vpid"),
    (
        "mca_pml_base_component_t",
        "pmlm_version.mca_component_name",
    ),
];

/// Where the communicator table, communicators, groups and procs keep
/// what the decoders read, and the selected component's name.
#[derive(Clone, Debug)]
pub(crate) struct CommLayout {
    pa_size: Field,
    pa_number_free: Field,
    pa_addr: Field,
    comm_name: Member,
    comm_contextid: Field,
    comm_my_rank: Field,
    comm_flags: Field,
    comm_local_group: Field,
    comm_remote_group: Field,
    comm_pml_comm: Field,
    /// Open MPI 5.0's `c_index`, the communicator's slot in the table and
    /// its local context id (4.1's `c_contextid` is both; 5.0's is an
    /// extended id of two 64-bit words that no message header carries).
    comm_index: Option<Field>,
    comm_span: Span,
    group_count: Field,
    group_procs: Field,
    proc_vpid: Field,
    component_name: Member,
}

impl CommLayout {
    /// The communicator layouts alone, for a caller that needs no PML's.
    pub(crate) fn of(
        src: &dyn mpidd_read::Layouts,
    ) -> Result<CommLayout, Vec<mpidd_read::LayoutError>> {
        // Every decoder's list holds these questions; UCX's is the shorter.
        let mut a = Asker::new(src, super::OMPI_UCX_LAYOUT);
        let l = Self::resolve(&mut a);
        a.finish(l)
    }

    /// Asks the questions of [`COMM_QUESTIONS`] through `a`.
    pub(crate) fn resolve(a: &mut Asker<'_>) -> CommLayout {
        let pa = "opal_pointer_array_t";
        let comm = "ompi_communicator_t";
        let comm_fields = [
            a.field(comm, "c_contextid"),
            a.field(comm, "c_my_rank"),
            a.field(comm, "c_flags"),
            a.field(comm, "c_local_group"),
            a.field(comm, "c_remote_group"),
            a.field(comm, "c_pml_comm"),
        ];
        let comm_name = a.member(comm, "c_name");
        let comm_index = a.optional_field(comm, "c_index");
        let mut comm_span = span_of(&comm_fields);
        if let Some(f) = comm_index {
            comm_span.start = comm_span.start.min(f.offset);
            comm_span.end = comm_span.end.max(f.end());
        }
        comm_span.start = comm_span.start.min(comm_name.offset);
        comm_span.end = comm_span
            .end
            .max(comm_name.offset.saturating_add(comm_name.size));
        CommLayout {
            pa_size: a.field(pa, "size"),
            pa_number_free: a.field(pa, "number_free"),
            pa_addr: a.field(pa, "addr"),
            comm_name,
            comm_contextid: comm_fields[0],
            comm_my_rank: comm_fields[1],
            comm_flags: comm_fields[2],
            comm_local_group: comm_fields[3],
            comm_remote_group: comm_fields[4],
            comm_pml_comm: comm_fields[5],
            comm_index,
            comm_span,
            group_count: a.field("ompi_group_t", "grp_proc_count"),
            group_procs: a.field("ompi_group_t", "grp_proc_pointers"),
            proc_vpid: a.field("ompi_proc_t", "super.proc_name.vpid"),
            component_name: a.member(
                "mca_pml_base_component_t",
                "pmlm_version.mca_component_name",
            ),
        }
    }
}

/// The name of the PML the process selected
/// (`mca_pml_base_selected_component.pmlm_version.mca_component_name`):
/// empty before `MPI_Init` has chosen one.
pub(crate) fn selected_pml(
    target: &dyn Target,
    layout: &CommLayout,
    limits: &Limits,
) -> Result<String, DecodeError> {
    let selected = required_symbol(target, "mca_pml_base_selected_component", LIBMPI)?;
    let len = layout.component_name.size.min(limits.max_string_len as u64);
    let raw = read_bytes(
        target.memory(),
        at(selected, layout.component_name.offset),
        len,
        "mca_pml_base_selected_component.pmlm_version.mca_component_name",
        limits,
    )?;
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    Ok(String::from_utf8_lossy(&raw[..end]).into_owned())
}

/// Why a symbol of libmpi's is needed, for [`required_symbol`].
pub(crate) const LIBMPI: &str = "Open MPI's libmpi.so exports it: no Open MPI library is loaded";

/// `OMPI_COMM_INTER` (`communicator.h`), the intercommunicator bit of
/// `c_flags`.
const OMPI_COMM_INTER: u64 = 0x1;

/// `OMPI_COMM_SENTINEL` (`communicator.h`, 5.0): a slot of the table held
/// while a context id is being agreed on, not a communicator.
const OMPI_COMM_SENTINEL: u64 = 0x1;

/// The most bytes of a communicator's name read through 5.0's `c_name`
/// pointer (`MPI_MAX_OBJECT_NAME`, as 4.1's array holds).
const MAX_OBJECT_NAME: usize = 64;

/// One communicator as read from the target.
#[derive(Clone, Debug)]
pub(crate) struct CommInfo {
    pub(crate) addr: TargetAddr,
    pub(crate) name: String,
    pub(crate) context_id: i64,
    pub(crate) rank: i64,
    pub(crate) size: i64,
    pub(crate) pml_comm: TargetAddr,
    /// The `ompi_proc_t` of each peer, in the order of `world` (0 where
    /// Open MPI left a sentinel instead of a proc).
    pub(crate) procs: Vec<TargetAddr>,
    /// `MPI_COMM_WORLD` rank of each peer (the remote group's, for an
    /// intercommunicator), when it could be read.
    pub(crate) world: Option<Vec<i64>>,
    pub(crate) world_error: Option<String>,
}

impl CommInfo {
    pub(crate) fn world_of(&self, rank: i64) -> i64 {
        usize::try_from(rank)
            .ok()
            .and_then(|i| self.world.as_ref()?.get(i).copied())
            .unwrap_or(-1)
    }
}

impl CommLayout {
    /// Every communicator of the table at `array`
    /// (`ompi_mpi_communicators`), and notes on the entries left out.
    pub(crate) fn read_communicators(
        &self,
        mem: &dyn TargetMemory,
        array: TargetAddr,
        limits: &Limits,
    ) -> Result<(Vec<CommInfo>, Vec<String>), DecodeError> {
        let l = self;
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
            if addr.0 == 0 || addr.0 == OMPI_COMM_SENTINEL {
                continue;
            }
            let comm = self.read_communicator(mem, addr, limits)?;
            if self.comm_index.is_some() && !(0..n as i64).contains(&comm.context_id) {
                return Err(DecodeError::Corrupt {
                    what: "ompi_communicator_t",
                    addr,
                    reason: format!(
                        "its c_index {} lies past the {n} slots of ompi_mpi_communicators \
                         (found in slot {i})",
                        comm.context_id
                    ),
                });
            }
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
        let l = self;
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
        let name = self.comm_name(mem, &r, limits)?;
        let flags = l.comm_flags.uint(&r)?;
        let inter = flags & OMPI_COMM_INTER != 0;
        let local_group = l.comm_local_group.addr(&r)?;
        let peers_group = if inter {
            l.comm_remote_group.addr(&r)?
        } else {
            local_group
        };
        let (size, world, procs, world_error) =
            match self.group_world_ranks(mem, peers_group, limits) {
                Ok(peers) => (
                    peers.len() as i64,
                    Some(peers.iter().map(|p| p.0).collect()),
                    peers.into_iter().map(|p| p.1).collect(),
                    None,
                ),
                Err(e) => (
                    -1,
                    None,
                    Vec::new(),
                    Some(format!(
                    "communicator `{name}` (ompi_communicator_t at {addr}): no world ranks: {e}"
                )),
                ),
            };
        Ok(CommInfo {
            addr,
            context_id: match l.comm_index {
                Some(index) => index.uint(&r)? as i64,
                None => l.comm_contextid.uint(&r)? as i64,
            },
            rank: l.comm_my_rank.int(&r)?,
            size,
            pml_comm: l.comm_pml_comm.addr(&r)?,
            name,
            world,
            procs,
            world_error,
        })
    }

    /// The communicator's name: 4.1 keeps it in an array, 5.0 points to it
    /// (an array's length is known; a pointer's is not).
    fn comm_name(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        limits: &Limits,
    ) -> Result<String, DecodeError> {
        let name = self.comm_name;
        if name.array_len.is_some() {
            let len = usize::try_from(name.size).unwrap_or(0);
            return Ok(r.chars(name.offset, len)?);
        }
        let word = mem.abi().address_bytes();
        let at_name = r.uint(name.offset, word)?;
        if at_name == 0 {
            return Ok(String::new());
        }
        let text = TargetMemory::read_c_string(
            mem,
            TargetAddr(at_name),
            MAX_OBJECT_NAME.min(limits.max_string_len),
        )?;
        Ok(String::from_utf8_lossy(&text).into_owned())
    }

    /// The world rank of each process of a group, from its procs'
    /// `proc_name.vpid` (or from the pointer itself when Open MPI left a
    /// sentinel encoding the name there instead of a proc), with its proc.
    fn group_world_ranks(
        &self,
        mem: &dyn TargetMemory,
        group: TargetAddr,
        limits: &Limits,
    ) -> Result<Vec<(i64, TargetAddr)>, DecodeError> {
        let l = self;
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
                    let vpid = if word == 8 { proc >> 32 } else { proc >> 1 };
                    return Ok((vpid as i64, TargetAddr(0)));
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
                Ok((l.proc_vpid.uint(&r)? as i64, TargetAddr(proc)))
            })
            .collect()
    }
}
