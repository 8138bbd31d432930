//! Attributes cached on MPICH objects, and the topology MPICH keeps among
//! them.
//!
//! An object's `attributes` member heads a list of `MPIR_Attribute`s
//! chained through `next`; each points to its key (`MPII_Keyval`, whose
//! first member is the keyval handle) and holds the value. MPICH stores a
//! communicator's virtual topology as one of these attributes, under a
//! keyval of its own that it keeps in the library's local variable
//! `MPIR_Topology_keyval`; the value points to an `MPIR_Topology`.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Attribute, Availability, Topology};
use crate::target::{at, Ctx};

/// MPICH's `MPI_KEYVAL_INVALID` (`mpi.h`): the topology keyval before any
/// topology was made.
const KEYVAL_INVALID: i64 = 0x2400_0000;

/// Walks the attribute list at `head`, bounded by
/// [`Limits::max_list_len`](mpidd_read::Limits::max_list_len), a loop being
/// an error.
pub(crate) fn attributes(ctx: &Ctx<'_>, head: TargetAddr) -> Result<Vec<Attribute>, HandleError> {
    const A: &str = "MPIR_Attribute";
    let keyval_m = ctx.m(A, "keyval")?;
    let next_m = ctx.m(A, "next")?;
    let type_m = ctx.m(A, "attrType")?;
    let value_m = ctx.m(A, "value")?;
    let types = ctx.layouts.member_enumerators(A, "attrType");
    let key_handle = ctx.m("MPII_Keyval", "handle")?;
    let topology_keyval = topology_keyval(ctx);
    let mut out = Vec::new();
    ctx.walk_list(
        head,
        TargetAddr::NULL,
        "attribute list",
        "MPIR_Attribute.next",
        |node| {
            let r = ctx.record(node, A)?;
            let keyval_ptr = r.ptr(keyval_m)?;
            let keyval = ctx.int(
                at(keyval_ptr, key_handle.offset),
                key_handle.size,
                "MPII_Keyval.handle",
            )?;
            let raw_type = r.int(type_m)?;
            let value_type = match &types {
                Ok(list) => match list.iter().find(|(_, v)| *v == i128::from(raw_type)) {
                    Some((name, _)) => Availability::Value(name.clone()),
                    None => Availability::not_available(format!(
                        "value type {raw_type} is not an enumerator of MPIR_Attr_type"
                    )),
                },
                Err(e) => Availability::not_available(e.to_string()),
            };
            out.push(Attribute {
                keyval: keyval as i32,
                value: r.uint(value_m)?,
                value_type,
                internal: topology_keyval == Some(keyval),
            });
            Ok(r.ptr(next_m)?)
        },
    )?;
    Ok(out)
}

/// The keyval MPICH keeps topologies under, if it has made one.
fn topology_keyval(ctx: &Ctx<'_>) -> Option<i64> {
    let sym = ctx.symbols.lookup("MPIR_Topology_keyval")?;
    ctx.int(sym.addr, 4, "MPIR_Topology_keyval").ok()
}

/// The topology among `attrs`, a communicator's attributes.
pub(crate) fn topology(ctx: &Ctx<'_>, attrs: &[Attribute]) -> Result<Topology, HandleError> {
    let Some(sym) = ctx.symbols.lookup("MPIR_Topology_keyval") else {
        return Err(HandleError::NoSymbol {
            symbol: "MPIR_Topology_keyval".to_string(),
            searched: mpidd_read::searched_summary(ctx.symbols),
            why: "MPICH keeps topologies under this keyval",
        });
    };
    let keyval = ctx.int(sym.addr, 4, "MPIR_Topology_keyval")?;
    if keyval == KEYVAL_INVALID {
        return Ok(Topology::None);
    }
    let Some(attr) = attrs.iter().find(|a| i64::from(a.keyval) == keyval) else {
        return Ok(Topology::None);
    };
    read_topology(ctx, TargetAddr(attr.value))
}

fn read_topology(ctx: &Ctx<'_>, addr: TargetAddr) -> Result<Topology, HandleError> {
    const T: &str = "MPIR_Topology";
    let r = ctx.record(addr, T)?;
    let kind = r.int(ctx.m(T, "kind")?)?;
    // `MPIR_Topo_type kind` up to 4.0; from 4.1 a plain `int` that holds
    // mpi.h's `MPIR_Topo_type` values (MPI_CART, ...).
    let kinds = ctx
        .layouts
        .member_enumerators(T, "kind")
        .or_else(|e| ctx.layouts.enumerators("MPIR_Topo_type").map_err(|_| e))?;
    let name = kinds
        .iter()
        .find(|(_, v)| *v == i128::from(kind))
        .map(|(n, _)| n.as_str());
    let int = |path: &str| -> Result<i64, HandleError> { Ok(r.int(ctx.m(T, path)?)?) };
    let array = |path: &str, count: i64, what: &'static str| -> Result<Vec<i32>, HandleError> {
        let ptr = r.ptr(ctx.m(T, path)?)?;
        if count == 0 {
            return Ok(Vec::new());
        }
        Ok(ctx
            .ints(ptr, count, 4, what)?
            .into_iter()
            .map(|v| v as i32)
            .collect())
    };
    Ok(match name {
        Some("MPI_CART") => {
            let ndims = int("topo.cart.ndims")?;
            Topology::Cartesian {
                ndims: ndims as i32,
                dims: array("topo.cart.dims", ndims, "cartesian dims")?,
                periods: array("topo.cart.periodic", ndims, "cartesian periods")?
                    .into_iter()
                    .map(|p| p != 0)
                    .collect(),
                coords: array("topo.cart.position", ndims, "cartesian position")?,
            }
        }
        Some("MPI_GRAPH") => {
            let nnodes = int("topo.graph.nnodes")?;
            let nedges = int("topo.graph.nedges")?;
            Topology::Graph {
                nnodes: nnodes as i32,
                index: array("topo.graph.index", nnodes, "graph index")?,
                edges: array("topo.graph.edges", nedges, "graph edges")?,
            }
        }
        Some("MPI_DIST_GRAPH") => {
            let indegree = int("topo.dist_graph.indegree")?;
            let outdegree = int("topo.dist_graph.outdegree")?;
            Topology::DistGraph {
                sources: array("topo.dist_graph.in", indegree, "distributed graph sources")?,
                destinations: array(
                    "topo.dist_graph.out",
                    outdegree,
                    "distributed graph destinations",
                )?,
                weighted: int("topo.dist_graph.is_weighted")? != 0,
            }
        }
        Some(other) => Topology::Other {
            kind: other.to_string(),
        },
        None => Topology::Other {
            kind: kind.to_string(),
        },
    })
}
