//! Open MPI groups (`ompi_group_t`).
//!
//! A group keeps one `ompi_proc_t` pointer per member, whose process name
//! carries the `MPI_COMM_WORLD` rank (`vpid`); a member Open MPI has not
//! met yet is a sentinel that encodes the name in the pointer itself.
//! Sparse group storage (`mpi_use_sparse_group_storage`, off by default)
//! keeps no such table and is not decoded.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, Details, GroupDetails, HandleKind};
use crate::ompi::constants::{GROUP_INTRINSIC, GROUP_SPARSE, MPI_UNDEFINED};
use crate::ompi::resolver::{Decoded, Ompi};
use crate::target::{at, unsigned};

/// One group as read.
pub(crate) struct Group {
    pub(crate) count: i64,
    pub(crate) my_rank: i64,
    pub(crate) flags: u64,
    pub(crate) f2c: i64,
    pub(crate) world: Result<Vec<i64>, HandleError>,
}

/// The group at `addr`.
pub(crate) fn group(o: &Ompi<'_>, addr: TargetAddr) -> Result<Group, HandleError> {
    let ctx = &o.ctx;
    let l = &o.l.group;
    let m = &l.m;
    if addr.is_null() {
        return Err(HandleError::Inconsistent {
            addr,
            reason: "a communicator's group pointer is NULL".to_string(),
        });
    }
    let r = ctx.record_sized(addr, l.size, l.name)?;
    let count = r.int(m.count)?;
    let flags = r.uint(m.flags)?;
    let world = (|| {
        let n = ctx.count(count, addr, "ompi_group_t.grp_proc_count")?;
        if n == 0 {
            return Ok(Vec::new());
        }
        if flags & GROUP_SPARSE != 0 {
            return Err(HandleError::Unsupported(format!(
                "the group at {addr} is kept in sparse storage (mpi_use_sparse_group_storage), \
                 which this decoder does not read"
            )));
        }
        let procs = r.ptr(m.procs)?;
        let word = ctx.word();
        let raw = ctx.bytes(
            procs,
            n.saturating_mul(word),
            "ompi_group_t.grp_proc_pointers",
        )?;
        let vpid = o.l.opal.proc_vpid;
        raw.chunks_exact(word as usize)
            .map(|c| {
                let p = unsigned(c, ctx.order());
                if p & 1 == 1 {
                    // A sentinel (proc.h): the vpid is the top 32 bits of
                    // a 64-bit one, the bits above the flag of a 32-bit one.
                    return Ok(if word == 8 { p >> 32 } else { p >> 1 } as i64);
                }
                Ok(ctx.int(
                    at(TargetAddr(p), vpid.offset),
                    vpid.size,
                    "ompi_proc_t.super.proc_name.vpid",
                )? & 0xffff_ffff)
            })
            .collect()
    })();
    Ok(Group {
        count,
        my_rank: r.int(m.my_rank)?,
        flags,
        f2c: r.int(m.f2c)?,
        world,
    })
}

/// The view of a group.
pub(crate) fn decode(o: &Ompi<'_>, addr: TargetAddr) -> Result<Decoded, HandleError> {
    let g = group(o, addr)?;
    let details = GroupDetails {
        size: Availability::Value(g.count as i32),
        rank: Availability::Value((g.my_rank != MPI_UNDEFINED).then_some(g.my_rank as i32)),
        world_ranks: match g.world {
            Ok(w) => Availability::Value(w),
            Err(e) => Availability::not_available(e.to_string()),
        },
        communicators: o
            .referring(
                HandleKind::Comm,
                &[o.l.comm.m.local_group, o.l.comm.m.remote_group],
                addr,
            )
            .into(),
    };
    Ok(Decoded {
        details: Details::Group(details),
        predefined: g.flags & GROUP_INTRINSIC != 0,
        name: None,
        f2c: Availability::Value(g.f2c),
        freed_by_application: Availability::not_available(
            "Open MPI keeps no mark of MPI_Group_free: freeing drops a reference, and the group \
             lives while communicators hold it",
        ),
        freed: None,
        notes: Vec::new(),
    })
}
