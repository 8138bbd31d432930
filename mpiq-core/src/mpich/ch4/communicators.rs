//! CH4's communicators: `MPIR_All_communicators` walked where MPICH keeps
//! it, else the communicator pool read through `mpihandles`; and each
//! communicator's world ranks, from its group, else from CH4's rank map.

use mpidd_read::Limits;
use mpidd_types::TargetAddr;
use mpihandles::{HandleError, HandleKind, Layouts, LiveObject};

use super::{int, uint, MpichCh4};
use crate::decoder::DecodeError;
use crate::list_walk::at;
use crate::mpich::common::{walk_communicators, CommInfo, COMM_NAME_LEN};
use crate::target_read::Record;
use mpidd_read::Target;
use mpidd_read::TargetMemory;

impl MpichCh4 {
    pub(super) fn read_communicators(
        &self,
        target: &dyn Target,
        mem: &dyn TargetMemory,
        limits: &Limits,
    ) -> Result<Vec<CommInfo>, DecodeError> {
        let l = &self.layout;
        let types = target.layouts();
        let mut comms = Vec::new();
        match self.globals.all_communicators {
            Some((list, _, head)) => {
                walk_communicators(
                    mem,
                    at(list, head.offset),
                    (l.comm_next.offset, l.comm_size),
                    limits,
                    |r| {
                        comms.push(self.communicator(mem, types, limits, r)?);
                        Ok(())
                    },
                )?;
            }
            None => {
                let pool = |found: Result<Vec<LiveObject>, HandleError>, what: &str| {
                    found.map_err(|e| {
                        DecodeError::unsupported(format!("the communicator pool ({what}): {e}"))
                    })
                };
                let (symbols, comm) = (target.symbols(), HandleKind::Comm);
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
                    comms.push(self.communicator(mem, types, limits, &r)?);
                }
            }
        }
        comms.sort_by_key(|c| (c.recvcontext_id, c.addr.0));
        Ok(comms)
    }

    /// One communicator, with its world ranks when they can be read.
    fn communicator(
        &self,
        mem: &dyn TargetMemory,
        types: &dyn Layouts,
        limits: &Limits,
        r: &Record<'_>,
    ) -> Result<CommInfo, DecodeError> {
        let l = &self.layout;
        let word = mem.abi().address_bytes();
        let addr = r.base;
        let kind = int(r, l.comm_kind)?;
        let size = if kind == 0 {
            int(r, l.comm_local_size)?
        } else {
            int(r, l.comm_remote_size)?
        };
        let group = TargetAddr(r.uint(l.comm_local_group.offset, word)?);
        let name = r.chars(l.comm_name.offset, COMM_NAME_LEN)?;
        // An intercommunicator's peers are its remote side, which only the
        // map (`dev.ch4.map`) gives.
        let map = || {
            mpihandles::ch4_world_ranks(mem, types, *limits, addr, "dev.ch4.map", size)
                .map_err(|e| DecodeError::unsupported(format!("its rank map: {e}")))
        };
        let world = if kind == 0 && group.0 != 0 {
            l.group
                .world_ranks(mem, group, size, limits)
                .or_else(|_| map())
        } else {
            map()
        };
        let (world, world_error) = match world {
            Ok(w) => (Some(w), None),
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
            context_id: uint(r, l.comm_context_id)? as i64,
            recvcontext_id: uint(r, l.comm_recvcontext_id)? as i64,
            rank: int(r, l.comm_rank)?,
            size,
            world,
            world_error,
        })
    }
}
