//! Open MPI communicators (`ompi_communicator_t`).
//!
//! A communicator keeps its name (`c_name`: Open MPI names every
//! communicator it makes, e.g. `MPI COMMUNICATOR 3 DUP FROM 0`), its
//! context id, this process's rank, flags (intercommunicator, predefined,
//! topology), its local and remote groups (the same group for an
//! intracommunicator), its attributes (`c_keyhash`), its topology module
//! (`c_topo`, whose `mtc` holds the arguments of `MPI_Cart_create`,
//! `MPI_Graph_create` or `MPI_Dist_graph_create`) and its error handler.
//!

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, CommDetails, CommKind, Details, HandleKind, Topology};
use crate::ompi::constants::{
    COMM_CART, COMM_DIST_GRAPH, COMM_GRAPH, COMM_INTER, COMM_INTRINSIC, COMM_ISFREED,
};
use crate::ompi::group::{group, Group};
use crate::ompi::opal::{attributes, header};
use crate::ompi::resolver::{Decoded, Ompi};
use crate::target::{at, Ctx, Rec};
use mpidd_read::{Member, ReadError};

const INTRA: &str = "an intracommunicator has no remote group";

/// An object's name kept in the array `name` of `r`, or pointed to by it
/// (Open MPI 5.0's `c_name`): an array's length is known, a pointer's not.
pub(crate) fn object_name(ctx: &Ctx<'_>, r: &Rec, name: Member) -> Result<String, ReadError> {
    if name.array_len.is_some() {
        return r.chars(name);
    }
    match r.ptr(name)? {
        TargetAddr(0) => Ok(String::new()),
        text => ctx.string(text),
    }
}

pub(crate) fn decode(o: &Ompi<'_>, addr: TargetAddr) -> Result<Decoded, HandleError> {
    let ctx = &o.ctx;
    let l = &o.l.comm;
    let m = &l.m;
    let r = ctx.record_sized(addr, l.size, l.name)?;
    let flags = r.uint(m.flags)?;
    let inter = flags & COMM_INTER != 0;
    let local = r.ptr(m.local_group)?;
    let remote = r.ptr(m.remote_group)?;
    let local_group = group(o, local);
    let remote_group = inter.then(|| group(o, remote));
    let name = object_name(ctx, &r, m.name)?;
    let context_id = match m.index {
        Some(index) => r.uint(index)? as i64,
        None => r.uint(m.contextid)? as i64,
    };
    let topology = topology(o, &r, flags).into();
    let attrs = r
        .ptr(m.keyhash)
        .map_err(HandleError::from)
        .and_then(|k| attributes(ctx, &o.l, k));
    let details = CommDetails {
        name: Availability::Value(name.clone()),
        rank: Availability::Value(r.int(m.my_rank)? as i32),
        size: local_group.as_ref().map(|g| g.count as i32).into_avail(),
        world_rank: world_rank(o).into(),
        comm_kind: Availability::Value(if inter {
            CommKind::Intercommunicator
        } else {
            CommKind::Intracommunicator
        }),
        remote_size: match &remote_group {
            Some(g) => g.as_ref().map(|g| g.count as i32).into_avail(),
            None => Availability::not_available(INTRA),
        },
        local_world_ranks: world_of(&local_group),
        remote_world_ranks: match &remote_group {
            Some(g) => world_of(g),
            None => Availability::not_available(INTRA),
        },
        local_group: Availability::Value(o.reference_opt(HandleKind::Group, local)),
        remote_group: if inter {
            Availability::Value(o.reference_opt(HandleKind::Group, remote))
        } else {
            Availability::not_available(INTRA)
        },
        topology,
        errhandler: Availability::Value(
            o.reference_opt(HandleKind::Errhandler, r.ptr(m.errhandler)?),
        ),
        attributes: attrs.into(),
        requests: Availability::not_available(
            "Open MPI keeps no list of a communicator's requests",
        ),
        windows: Availability::not_available(
            "Open MPI's windows keep the communicator's group, and their one-sided component \
             a duplicate of the communicator, with no link back to it",
        ),
        files: o
            .referring(HandleKind::File, &[o.l.file.m.comm], addr)
            .into(),
        context_id: Availability::Value(context_id),
        recv_context_id: Availability::Value(context_id),
    };
    Ok(Decoded {
        details: Details::Comm(details),
        predefined: flags & COMM_INTRINSIC != 0,
        name: Some(name),
        f2c: Availability::Value(r.int(m.f2c)?),
        freed_by_application: if flags & COMM_ISFREED != 0 {
            Availability::Value(true)
        } else {
            Availability::not_available(format!(
                "Open MPI (4.1 and 5.0) defines a freed flag (OMPI_COMM_ISFREED) but MPI_Comm_free never \
                 sets it: freeing drops a reference, and the object lives while pending \
                 operations hold it (it has {} now)",
                header(ctx, &o.l, addr)
                    .map(|(_, n)| n.to_string())
                    .unwrap_or_else(|_| "?".to_string())
            ))
        },
        freed: None,
        notes: Vec::new(),
    })
}

/// `Result<T, HandleError>` as an [`Availability`].
trait IntoAvail<T> {
    fn into_avail(self) -> Availability<T>;
}

impl<T> IntoAvail<T> for Result<T, &HandleError> {
    fn into_avail(self) -> Availability<T> {
        match self {
            Ok(v) => Availability::Value(v),
            Err(e) => Availability::not_available(e.to_string()),
        }
    }
}

fn world_of(g: &Result<Group, HandleError>) -> Availability<Vec<i64>> {
    match g {
        Ok(g) => match &g.world {
            Ok(w) => Availability::Value(w.clone()),
            Err(e) => Availability::not_available(e.to_string()),
        },
        Err(e) => Availability::not_available(e.to_string()),
    }
}

/// This process's rank in `MPI_COMM_WORLD`.
pub(crate) fn world_rank(o: &Ompi<'_>) -> Result<i32, HandleError> {
    let world = o.world.ok_or_else(|| HandleError::NoSymbol {
        symbol: "ompi_mpi_comm_world".to_string(),
        searched: o.ctx.symbols.searched_objects().join(", "),
        why: "Open MPI's libmpi.so.40 exports it: the world rank is its c_my_rank",
    })?;
    let m = o.l.comm.m.my_rank;
    Ok(o.ctx
        .int(at(world, m.offset), m.size, "ompi_mpi_comm_world.c_my_rank")? as i32)
}

/// The topology the flags name, from `c_topo`'s cached arguments.
fn topology(o: &Ompi<'_>, r: &Rec, flags: u64) -> Result<Topology, HandleError> {
    let ctx = &o.ctx;
    let t = &o.l.topo;
    let kind = flags & (COMM_CART | COMM_GRAPH | COMM_DIST_GRAPH);
    if kind == 0 {
        return Ok(Topology::None);
    }
    let module = r.ptr(o.l.comm.m.topo)?;
    if module.is_null() {
        return Err(HandleError::Inconsistent {
            addr: r.base,
            reason: format!("its flags {flags:#x} name a topology, but it has no topology module"),
        });
    }
    let mr = ctx.record_sized(module, t.size, t.name)?;
    // The module's type is the flag its communicator carries.
    let module_kind = mr.uint(t.m.topo_type)?;
    if module_kind != kind {
        return Err(HandleError::Inconsistent {
            addr: module,
            reason: format!(
                "the topology module's type {module_kind:#x} is not the topology its \
                 communicator's flags {flags:#x} name"
            ),
        });
    }
    let args = mr.ptr(t.m.mtc)?;
    if args.is_null() {
        return Err(HandleError::Inconsistent {
            addr: module,
            reason: "the topology module caches no arguments".to_string(),
        });
    }
    let ints = |ptr: TargetAddr, n: i64, what| -> Result<Vec<i32>, HandleError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        Ok(ctx
            .ints(ptr, n, 4, what)?
            .into_iter()
            .map(|v| v as i32)
            .collect())
    };
    match kind {
        COMM_CART => {
            let c = &t.m.cart;
            let a = ctx.record_sized(args, c.size, c.name)?;
            let [ndims, dims, periods, coords] = c.m;
            let n = a.int(ndims)?;
            Ok(Topology::Cartesian {
                ndims: n as i32,
                dims: ints(a.ptr(dims)?, n, "cart dims")?,
                periods: ints(a.ptr(periods)?, n, "cart periods")?
                    .into_iter()
                    .map(|p| p != 0)
                    .collect(),
                coords: ints(a.ptr(coords)?, n, "cart coords")?,
            })
        }
        COMM_GRAPH => {
            let g = &t.m.graph;
            let a = ctx.record_sized(args, g.size, g.name)?;
            let [nnodes, index, edges] = g.m;
            let n = a.int(nnodes)?;
            let index = ints(a.ptr(index)?, n, "graph index")?;
            let total = index.last().copied().unwrap_or(0);
            Ok(Topology::Graph {
                nnodes: n as i32,
                edges: ints(a.ptr(edges)?, i64::from(total), "graph edges")?,
                index,
            })
        }
        COMM_DIST_GRAPH => {
            let d = &t.m.dist;
            let a = ctx.record_sized(args, d.size, d.name)?;
            let [sources, destinations, indegree, outdegree, weighted] = d.m;
            Ok(Topology::DistGraph {
                sources: ints(a.ptr(sources)?, a.int(indegree)?, "dist graph in")?,
                destinations: ints(a.ptr(destinations)?, a.int(outdegree)?, "dist graph out")?,
                weighted: a.uint(weighted)? != 0,
            })
        }
        _ => Err(HandleError::Inconsistent {
            addr: r.base,
            reason: format!("its flags {flags:#x} name more than one topology"),
        }),
    }
}
