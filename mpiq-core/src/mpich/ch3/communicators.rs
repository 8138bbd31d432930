//! CH3's communicators: `MPIR_All_communicators` walked, else the
//! communicator pool (a build without debugger support), and each
//! communicator's world ranks, from its group or from CH3's virtual
//! connection table.

use mpidd_read::{decode_int, Limits};
use mpidd_types::TargetAddr;

use super::MpichCh3;
use crate::decoder::DecodeError;
use crate::list_walk::at;
use crate::mpich::common::{walk_communicators, CommInfo, GroupLayout, COMM_NAME_LEN};
use crate::target_read::{checked_count, read_bytes, read_int, Record};
use mpidd_read::{Target, TargetMemory};
use mpihandles::{HandleError, HandleKind, LiveObject};

impl MpichCh3 {
    /// Every communicator: `MPIR_All_communicators` walked where MPICH
    /// keeps it, else (a build without debugger support) the communicator
    /// pool read through `mpihandles`, as CH4's decoder does.
    pub(super) fn read_communicators(
        &self,
        target: &dyn Target,
        mem: &dyn TargetMemory,
        limits: &Limits,
    ) -> Result<Vec<CommInfo>, DecodeError> {
        let l = &self.layout;
        let mut comms = Vec::new();
        match (self.globals.all_communicators, l.comm_list) {
            (Some(list), Some((_, head))) => {
                walk_communicators(
                    mem,
                    at(list, head),
                    (l.comm_next, l.comm_size),
                    limits,
                    |r| {
                        comms.push(self.communicator(mem, r, limits)?);
                        Ok(())
                    },
                )?;
            }
            _ => {
                let pool = |found: Result<Vec<LiveObject>, HandleError>, what: &str| {
                    found.map_err(|e| {
                        DecodeError::unsupported(format!("the communicator pool ({what}): {e}"))
                    })
                };
                let (symbols, types, comm) = (target.symbols(), target.layouts(), HandleKind::Comm);
                let builtin = pool(
                    mpihandles::builtin_mpich_objects(mem, symbols, types, *limits, comm),
                    "predefined",
                )?;
                let allocated = pool(
                    mpihandles::live_mpich_objects(mem, symbols, types, *limits, comm),
                    "allocated",
                )?;
                let order = mem.abi().byte_order;
                for object in builtin.iter().chain(&allocated) {
                    let r = Record {
                        base: object.addr,
                        start: 0,
                        bytes: &object.bytes,
                        order,
                        what: "MPIR_Comm",
                    };
                    comms.push(self.communicator(mem, &r, limits)?);
                }
            }
        }
        comms.sort_by_key(|c| (c.recvcontext_id, c.addr.0));
        Ok(comms)
    }

    /// One communicator, `r` its whole `MPIR_Comm`, with its world ranks
    /// when they can be read.
    fn communicator(
        &self,
        mem: &dyn TargetMemory,
        r: &Record<'_>,
        limits: &Limits,
    ) -> Result<CommInfo, DecodeError> {
        let l = &self.layout;
        let word = mem.abi().address_bytes();
        let addr = r.base;
        let kind = r.int(l.comm_kind, 4)?;
        let remote_size = r.int(l.comm_remote_size, 4)?;
        let size = if kind == 0 {
            r.int(l.comm_local_size, 4)?
        } else {
            remote_size
        };
        let group = TargetAddr(r.uint(l.comm_local_group, word)?);
        let vcrt = TargetAddr(r.uint(l.comm_vcrt, word)?);
        let name = r.chars(l.comm_name, COMM_NAME_LEN)?;
        let (world, world_error) = match self.world_ranks(mem, kind == 0, group, vcrt, size, limits)
        {
            Ok(world) => (Some(world), None),
            Err(e) => (
                None,
                Some(format!(
                    "communicator `{name}` (MPIR_Comm at {addr}): no world ranks: {e}"
                )),
            ),
        };
        Ok(CommInfo {
            addr,
            name,
            context_id: r.uint(l.comm_context_id, 2)? as i64,
            recvcontext_id: r.uint(l.comm_recvcontext_id, 2)? as i64,
            rank: r.int(l.comm_rank, 4)?,
            size,
            world,
            world_error,
        })
    }

    /// The `MPI_COMM_WORLD` rank of each of the `size` peers of a
    /// communicator (local ranks of an intracommunicator, remote ranks of
    /// an intercommunicator).
    ///
    /// An intracommunicator's `local_group` is made lazily (by
    /// `MPI_Comm_group`, or a communicator constructor), so it is used when
    /// it is there and the CH3 connection table (`dev.vcrt`) otherwise; an
    /// intercommunicator's peers are its remote side, which only the table
    /// maps. Either must account for exactly `size` peers: a list of
    /// another length is an error, never an answer.
    fn world_ranks(
        &self,
        mem: &dyn TargetMemory,
        intra: bool,
        group: TargetAddr,
        vcrt: TargetAddr,
        size: i64,
        limits: &Limits,
    ) -> Result<Vec<i64>, DecodeError> {
        if intra && group.0 != 0 {
            let from_group = self.group_world_ranks(mem, group, size, limits);
            if from_group.is_ok() {
                return from_group;
            }
            // The table may still answer; if it cannot either, the
            // group's failure is the one to report, being read first.
            return self
                .vcrt_world_ranks(mem, vcrt, size, limits)
                .or(from_group);
        }
        self.vcrt_world_ranks(mem, vcrt, size, limits)
    }

    /// World ranks from an `MPIR_Group`, whose `size` must be the
    /// communicator's `expected` size.
    fn group_world_ranks(
        &self,
        mem: &dyn TargetMemory,
        group: TargetAddr,
        expected: i64,
        limits: &Limits,
    ) -> Result<Vec<i64>, DecodeError> {
        let l = &self.layout;
        GroupLayout {
            size: l.group_size,
            pmap: l.group_pmap,
            pmap_size: l.pmap_size,
            pmap_lpid: l.pmap_lpid,
            pmap5: None,
        }
        .world_ranks(mem, group, expected, limits)
    }

    /// World ranks from the first `expected` entries of an `MPIDI_VCRT`.
    ///
    /// CH3 does not give every communicator a table of its own size: when
    /// a new communicator's members are the first ones of its parent, in
    /// order (`dup_vcrt` in `ch3u_comm.c`: an irregular map that is the
    /// identity, as for the node communicator of the node holding world
    /// ranks 0 and 1), it shares the parent's table, and only its prefix
    /// is the communicator's. So the table may be longer than the
    /// communicator, but never shorter.
    fn vcrt_world_ranks(
        &self,
        mem: &dyn TargetMemory,
        vcrt: TargetAddr,
        expected: i64,
        limits: &Limits,
    ) -> Result<Vec<i64>, DecodeError> {
        if vcrt.0 == 0 {
            return Err(mpidd_read::ReadError::ShortRead {
                what: "MPIDI_VCRT",
                addr: vcrt,
                wanted: 1,
                got: 0,
            }
            .into());
        }
        let l = &self.layout;
        let word = mem.abi().address_bytes() as u64;
        let found = read_int(mem, at(vcrt, l.vcrt_size), 4, "MPIDI_VCRT.size")?;
        if found < expected {
            return Err(DecodeError::MemberCount {
                what: "MPIDI_VCRT",
                addr: vcrt,
                expected,
                found,
            });
        }
        let n = checked_count(expected, "MPIDI_VCRT.vcr_table", vcrt, limits)?;
        let table = read_bytes(
            mem,
            at(vcrt, l.vcrt_table),
            n.saturating_mul(word),
            "MPIDI_VCRT.vcr_table",
            limits,
        )?;
        let r = Record {
            base: at(vcrt, l.vcrt_table),
            start: 0,
            bytes: &table,
            order: mem.abi().byte_order,
            what: "MPIDI_VCRT.vcr_table",
        };
        let ranks_at: Vec<TargetAddr> = (0..n)
            .map(|i| {
                Ok(at(
                    TargetAddr(r.uint(i * word, word as usize)?),
                    l.vc_pg_rank,
                ))
            })
            .collect::<Result<_, DecodeError>>()?;
        // Every connection's rank in one batch, not one read each: of a
        // live process, a read is a system call, and a communicator has
        // as many connections as ranks.
        let mut ranks = vec![[0u8; 4]; ranks_at.len()];
        let mut requests: Vec<(TargetAddr, &mut [u8])> = ranks_at
            .iter()
            .zip(ranks.iter_mut())
            .map(|(&addr, buf)| (addr, &mut buf[..]))
            .collect();
        let counts = mem.read_many(&mut requests);
        drop(requests);
        let order = mem.abi().byte_order;
        counts
            .into_iter()
            .zip(ranks_at.iter().zip(&ranks))
            .map(|(count, (&addr, bytes))| match count {
                Ok(4) => Ok(decode_int(bytes, order)),
                // A backend may answer a batch short or not at all (a
                // debugger's reader): that one rank is read alone, which
                // finds what is readable and says what is not.
                _ => Ok(read_int(mem, addr, 4, "MPIDI_VC.pg_rank")?),
            })
            .collect()
    }
}
