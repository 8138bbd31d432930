//! The Open MPI process a resolver reads, as every kind's view sees it:
//! its memory, symbols and the answers of its layouts, the
//! implementation's name, the objects of each kind (through their f2c
//! tables) and the references between objects, both ways (what a pointer
//! names, and the objects that point at one). Each kind's view gives back
//! a [`Decoded`]; the dispatch over kinds is
//! [`handle_view`](super::handle_view).

use mpidd_read::{Limits, Member, SymbolSource, Target, TargetMemory};
use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, CHandle, Details, HandleKind, HandleRef};
use crate::ompi::constants::{COMM_INTRINSIC, DT_PREDEFINED, GROUP_INTRINSIC, OP_INTRINSIC};
use crate::ompi::kinds::{kind_info, PREDEFINED};
use crate::ompi::layout::OmpiLayout;
use crate::ompi::comm::object_name;
use crate::ompi::opal::{class_chain, header, PointerArray};
use crate::target::{at, Ctx};
use mpidd_read::Layouts;

/// What a kind's decoder read of one object, for the parts of the view
/// common to every kind.
pub(crate) struct Decoded {
    pub(crate) details: Details,
    /// Whether Open MPI marks the object predefined.
    pub(crate) predefined: bool,
    /// The name the object carries, if it has one.
    pub(crate) name: Option<String>,
    /// The object's own Fortran index.
    pub(crate) f2c: Availability<i64>,
    pub(crate) freed_by_application: Availability<bool>,
    /// Why the implementation counts the object freed, if it does.
    pub(crate) freed: Option<String>,
    pub(crate) notes: Vec<String>,
}

/// Interprets Open MPI 4.1 handles (with the layouts of its private types
/// from its debug info or a layout profile) in one process.
///
/// ```no_run
/// use mpidd_read::{Limits, LiveTarget};
/// use mpihandles::{HandleKind, HandleResolver, Ompi};
///
/// let target = LiveTarget::open(4242)?;
/// let ompi = Ompi::new(&target, Limits::default())?;
/// // A communicator handle is a pointer, e.g. the value of MPI_COMM_WORLD.
/// let world = ompi.resolve(HandleKind::Comm, 0x7f00_1234_5000)?;
/// println!("{}", serde_json::to_string_pretty(&world)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Ompi<'a> {
    pub(crate) ctx: Ctx<'a>,
    pub(crate) l: OmpiLayout,
    pub(crate) implementation: String,
    /// The predefined objects found, by address.
    pub(crate) predefined: Vec<(TargetAddr, HandleKind, &'static str, bool)>,
    /// `ompi_mpi_comm_world`.
    pub(crate) world: Option<TargetAddr>,
    /// The selected PML's name (`ob1`), when MPI has selected one.
    pub(crate) pml: Option<String>,
}

impl<'a> Ompi<'a> {
    /// A resolver over a target's memory and symbols, with the layouts of
    /// Open MPI's private types from its layouts (the library's DWARF for a
    /// [`CoreTarget`](mpidd_read::CoreTarget); through a
    /// [`TargetParts`](mpidd_read::TargetParts), a layout profile). Fails
    /// when no Open MPI library is loaded, or when the layouts lack a
    /// required answer of [`OMPI_HANDLE_LAYOUT`](crate::OMPI_HANDLE_LAYOUT).
    pub fn new(target: &'a dyn Target, limits: Limits) -> Result<Ompi<'a>, HandleError> {
        Self::from_parts(target.memory(), target.symbols(), target.layouts(), limits)
    }

    /// [`Ompi::new`] over a memory, symbols and layouts kept apart (a
    /// layout profile for a stripped library, a debugger's own sources).
    pub fn from_parts(
        memory: &'a dyn TargetMemory,
        symbols: &'a dyn SymbolSource,
        layouts: &'a dyn Layouts,
        limits: Limits,
    ) -> Result<Ompi<'a>, HandleError> {
        let ctx = Ctx::new(memory, symbols, layouts, limits);
        ctx.symbol(
            "ompi_comm_f_to_c_table",
            "Open MPI's libmpi.so.40 exports it: no Open MPI library is loaded",
        )?;
        let l = OmpiLayout::resolve(layouts).map_err(|missing| {
            // Never empty: resolve fails only with what is missing.
            HandleError::Layout(missing.into_iter().next().unwrap_or_else(|| {
                mpidd_read::LayoutError::new("ompi_communicator_t", None, "not answered")
            }))
        })?;
        let predefined = PREDEFINED
            .iter()
            .filter_map(|&(kind, symbol, name, null)| {
                Some((symbols.lookup(symbol)?.addr, kind, name, null))
            })
            .collect();
        let pml = symbols
            .lookup("mca_pml_base_selected_component")
            .and_then(|s| {
                let m = l.pml.m.component_name;
                let r = ctx
                    .bytes(
                        at(s.addr, m.offset),
                        m.size.min(64),
                        "mca_pml_base_selected_component",
                    )
                    .ok()?;
                let end = r.iter().position(|&b| b == 0).unwrap_or(r.len());
                let name = String::from_utf8_lossy(&r[..end]).into_owned();
                (!name.is_empty()).then_some(name)
            });
        let version = symbols.lookup("opal_version_string").and_then(|s| {
            let raw = memory
                .read_c_string(s.addr, 64.min(limits.max_string_len))
                .ok()?;
            let v = String::from_utf8_lossy(&raw).into_owned();
            (!v.is_empty()).then_some(v)
        });
        let implementation = match (&version, &pml) {
            (Some(v), Some(p)) => format!("Open MPI {v} ({p})"),
            (Some(v), None) => format!("Open MPI {v}"),
            (None, Some(p)) => format!("Open MPI ({p})"),
            (None, None) => "Open MPI".to_string(),
        };
        Ok(Ompi {
            world: symbols.lookup("ompi_mpi_comm_world").map(|s| s.addr),
            ctx,
            l,
            implementation,
            predefined,
            pml,
        })
    }

    /// The implementation's description, e.g. `Open MPI 4.1.4 (ob1)`.
    pub fn implementation_name(&self) -> &str {
        &self.implementation
    }

    /// The pointer array of `kind`.
    pub(crate) fn table(&self, kind: HandleKind) -> Result<PointerArray, HandleError> {
        let (table, _) = kind_info(kind).ok_or_else(|| {
            HandleError::Unsupported(format!("{kind} has no Open MPI pointer array"))
        })?;
        let sym = self.ctx.symbol(
            table,
            "Open MPI's libmpi.so.40 exports it: its Fortran handles index it",
        )?;
        // The operations' array is allocated: the symbol is a pointer to it.
        let addr = if kind == HandleKind::Op {
            self.ctx.pointer(sym.addr, table)?
        } else {
            sym.addr
        };
        PointerArray::at(&self.ctx, &self.l, addr, table)
    }

    /// Every live object of `kind` (those in its pointer array).
    pub(crate) fn all(&self, kind: HandleKind) -> Result<Vec<TargetAddr>, HandleError> {
        let (table, _) = kind_info(kind).ok_or_else(|| {
            HandleError::Unsupported(format!("{kind} has no Open MPI pointer array"))
        })?;
        Ok(self
            .table(kind)?
            .all(&self.ctx, table)?
            .into_iter()
            .map(|(_, p)| p)
            .collect())
    }

    /// The name Open MPI's symbols give the predefined object `addr` of
    /// `kind`, and whether it is the null handle.
    pub(crate) fn predefined_symbol(
        &self,
        kind: HandleKind,
        addr: TargetAddr,
    ) -> Option<(&'static str, bool)> {
        self.predefined
            .iter()
            .find(|(a, k, _, _)| *a == addr && *k == kind)
            .map(|&(_, _, name, null)| (name, null))
    }

    /// Checks that `addr` points at an object of `kind`, by its class.
    pub(crate) fn check_class(
        &self,
        kind: HandleKind,
        addr: TargetAddr,
    ) -> Result<i64, HandleError> {
        let (_, class) = kind_info(kind)
            .ok_or_else(|| HandleError::Unsupported(format!("{kind} is not a handle")))?;
        let not = |reason: String| HandleError::NotAnObject { kind, addr, reason };
        let (class_ptr, refcount) =
            header(&self.ctx, &self.l, addr).map_err(|e| not(format!("it cannot be read: {e}")))?;
        let classes = class_chain(&self.ctx, &self.l, class_ptr).map_err(|e| {
            not(format!(
                "its class pointer {class_ptr} does not lead to an Open MPI class ({e}): the \
                 object was freed (Open MPI gave its memory back to malloc, which reuses its \
                 header), or this was never an {kind}"
            ))
        })?;
        if !classes.iter().any(|c| c == class) {
            return Err(not(format!(
                "its class is {}, not {class}",
                if classes.is_empty() {
                    "none".to_string()
                } else {
                    classes.join(" < ")
                }
            )));
        }
        Ok(refcount)
    }

    /// A short reference to the object `addr` of `kind`, with its names.
    /// A pointer that does not resolve is still referred to, by value.
    pub(crate) fn reference(&self, kind: HandleKind, addr: TargetAddr) -> HandleRef {
        let mut r = HandleRef {
            kind,
            c_handle: CHandle::Pointer(addr),
            predefined_name: self
                .predefined_symbol(kind, addr)
                .map(|(n, _)| n.to_string()),
            name: None,
        };
        if let Some((name, predefined)) = self.own_name(kind, addr) {
            if name.is_empty() {
                return r;
            }
            if r.predefined_name.is_none() && predefined {
                r.predefined_name = Some(name);
            } else if r.predefined_name.as_ref() != Some(&name) {
                r.name = Some(name);
            }
        }
        r
    }

    /// The name an object of the kinds that carry one has, and whether
    /// Open MPI marks the object predefined.
    fn own_name(&self, kind: HandleKind, addr: TargetAddr) -> Option<(String, bool)> {
        let l = &self.l;
        // (record size, type, name member, the flags member and its
        // predefined bit, for the kinds Open MPI predefines objects of).
        let (size, what, name, flags) = match kind {
            HandleKind::Comm => (
                l.comm.size,
                l.comm.name,
                l.comm.m.name,
                Some((l.comm.m.flags, COMM_INTRINSIC)),
            ),
            HandleKind::Datatype => (
                l.datatype.size,
                l.datatype.name,
                l.datatype.m.name,
                Some((l.datatype.m.flags, DT_PREDEFINED)),
            ),
            HandleKind::Op => (
                l.op.size,
                l.op.name,
                l.op.m.name,
                Some((l.op.m.flags, OP_INTRINSIC)),
            ),
            HandleKind::Win => (l.win.size, l.win.name, l.win.m.name, None),
            HandleKind::Group => {
                let r = self
                    .ctx
                    .record_sized(addr, l.group.size, l.group.name)
                    .ok()?;
                let f = r.uint(l.group.m.flags).ok()?;
                return Some((String::new(), f & GROUP_INTRINSIC != 0));
            }
            _ => return None,
        };
        self.check_class(kind, addr).ok()?;
        let r = self.ctx.record_sized(addr, size, what).ok()?;
        let predefined = match flags {
            Some((member, bit)) => r.uint(member).ok()? & bit != 0,
            None => false,
        };
        Some((object_name(&self.ctx, &r, name).ok()?, predefined))
    }

    /// The reference at pointer `p`, `None` when it is NULL.
    pub(crate) fn reference_opt(&self, kind: HandleKind, p: TargetAddr) -> Option<HandleRef> {
        (!p.is_null()).then(|| self.reference(kind, p))
    }

    /// The objects of `kind` (each in its f2c table) whose pointer member
    /// at one of `members` is `target`: what refers to the object at
    /// `target`.
    pub(crate) fn referring(
        &self,
        kind: HandleKind,
        members: &[Member],
        target: TargetAddr,
    ) -> Result<Vec<HandleRef>, HandleError> {
        let l = &self.l;
        let (size, name) = match kind {
            HandleKind::Comm => (l.comm.size, l.comm.name),
            HandleKind::Win => (l.win.size, l.win.name),
            HandleKind::File => (l.file.size, l.file.name),
            _ => {
                return Err(HandleError::Unsupported(format!(
                    "no Open MPI {kind} refers to other objects"
                )))
            }
        };
        let mut out = Vec::new();
        for object in self.all(kind)? {
            let r = self.ctx.record_sized(object, size, name)?;
            if members.iter().any(|&m| r.ptr(m).ok() == Some(target)) {
                out.push(self.reference(kind, object));
            }
        }
        Ok(out)
    }
}
