//! The Open MPI handle resolver: from a handle (a pointer, or a Fortran
//! INTEGER through the kind's pointer array) to its object, and from the
//! object to a [`HandleView`].
//!
//! Open MPI's C handles are pointers to its objects. Every object begins
//! with an `opal_object_t` whose class (`opal_class_t`) names the C type,
//! so a pointer is checked to be an object of the kind asked before
//! anything else is read. A Fortran INTEGER indexes the kind's
//! `opal_pointer_array_t`, exported by `libmpi.so.40` (the windows' is
//! `ompi_mpi_windows`), and each object keeps its own index.
//!
//! Open MPI frees an object with `free()` once its last reference goes:
//! its memory then belongs to the allocator, which overwrites the header,
//! so a stale handle to it does not point at an object any more and is
//! refused as such. Requests are the exception: ob1's come from free
//! lists and go back to them, marked `OMPI_REQUEST_INVALID`, and are shown
//! as freed.

use mpidd_read::{Limits, SymbolSource, Target, TargetMemory};
use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{
    Availability, CHandle, Details, HandleKind, HandleRef, HandleView, ObjectState, StatusView,
};
use crate::ompi::layout::{
    OmpiLayout, COMM_INTRINSIC, DT_PREDEFINED, GROUP_INTRINSIC, MPI_UNDEFINED, OP_INTRINSIC,
};
use crate::ompi::opal::{class_chain, header, PointerArray};
use crate::ompi::{comm, datatype, errhandler, file, info, op, request, win};
use crate::target::Ctx;
use crate::HandleResolver;
use mpidd_read::Layouts;

/// The objects Open MPI predefines under exported symbols, as
/// (kind, symbol, MPI name, whether it is the kind's null handle). The
/// predefined datatypes and operations carry their MPI names themselves.
const PREDEFINED: &[(HandleKind, &str, &str, bool)] = &[
    (
        HandleKind::Comm,
        "ompi_mpi_comm_world",
        "MPI_COMM_WORLD",
        false,
    ),
    (
        HandleKind::Comm,
        "ompi_mpi_comm_self",
        "MPI_COMM_SELF",
        false,
    ),
    (
        HandleKind::Comm,
        "ompi_mpi_comm_null",
        "MPI_COMM_NULL",
        true,
    ),
    (
        HandleKind::Group,
        "ompi_mpi_group_empty",
        "MPI_GROUP_EMPTY",
        false,
    ),
    (
        HandleKind::Group,
        "ompi_mpi_group_null",
        "MPI_GROUP_NULL",
        true,
    ),
    (
        HandleKind::Datatype,
        "ompi_mpi_datatype_null",
        "MPI_DATATYPE_NULL",
        true,
    ),
    (
        HandleKind::Errhandler,
        "ompi_mpi_errhandler_null",
        "MPI_ERRHANDLER_NULL",
        true,
    ),
    (
        HandleKind::Errhandler,
        "ompi_mpi_errors_are_fatal",
        "MPI_ERRORS_ARE_FATAL",
        false,
    ),
    (
        HandleKind::Errhandler,
        "ompi_mpi_errors_return",
        "MPI_ERRORS_RETURN",
        false,
    ),
    (
        HandleKind::Errhandler,
        "ompi_mpi_errors_throw_exceptions",
        "MPI::ERRORS_THROW_EXCEPTIONS",
        false,
    ),
    (HandleKind::Op, "ompi_mpi_op_null", "MPI_OP_NULL", true),
    (
        HandleKind::Info,
        "ompi_mpi_info_null",
        "MPI_INFO_NULL",
        true,
    ),
    (HandleKind::Info, "ompi_mpi_info_env", "MPI_INFO_ENV", false),
    (
        HandleKind::Request,
        "ompi_request_null",
        "MPI_REQUEST_NULL",
        true,
    ),
    // The completed request Open MPI hands out for an operation that
    // finished at once (ob1's inline sends): no MPI name.
    (
        HandleKind::Request,
        "ompi_request_empty",
        "ompi_request_empty",
        false,
    ),
    (HandleKind::Win, "ompi_mpi_win_null", "MPI_WIN_NULL", true),
    (
        HandleKind::File,
        "ompi_mpi_file_null",
        "MPI_FILE_NULL",
        true,
    ),
];

/// The pointer array each kind's Fortran INTEGERs index (the operations'
/// symbol points to theirs), and the class
/// every object of the kind derives from. Predefined datatypes are
/// initialized statically with the class of their base,
/// `opal_datatype_t`.
fn kind_info(kind: HandleKind) -> Option<(&'static str, &'static str)> {
    Some(match kind {
        HandleKind::Comm => ("ompi_comm_f_to_c_table", "ompi_communicator_t"),
        HandleKind::Group => ("ompi_group_f_to_c_table", "ompi_group_t"),
        HandleKind::Datatype => ("ompi_datatype_f_to_c_table", "opal_datatype_t"),
        HandleKind::Errhandler => ("ompi_errhandler_f_to_c_table", "ompi_errhandler_t"),
        HandleKind::Op => ("ompi_op_f_to_c_table", "ompi_op_t"),
        HandleKind::Info => ("ompi_info_f_to_c_table", "ompi_info_t"),
        HandleKind::Request => ("ompi_request_f_to_c_table", "ompi_request_t"),
        HandleKind::Win => ("ompi_mpi_windows", "ompi_win_t"),
        HandleKind::File => ("ompi_file_f_to_c_table", "ompi_file_t"),
        HandleKind::Status => return None,
    })
}

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
    implementation: String,
    /// The predefined objects found, by address.
    predefined: Vec<(TargetAddr, HandleKind, &'static str, bool)>,
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
        let mem = memory;
        let ctx = Ctx {
            mem,
            symbols,
            layouts,
            limits,
        };
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
                        crate::target::at(s.addr, m.offset),
                        m.size.min(64),
                        "mca_pml_base_selected_component",
                    )
                    .ok()?;
                let end = r.iter().position(|&b| b == 0).unwrap_or(r.len());
                let name = String::from_utf8_lossy(&r[..end]).into_owned();
                (!name.is_empty()).then_some(name)
            });
        let version = symbols.lookup("opal_version_string").and_then(|s| {
            let raw = mem
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

    /// A view of the handle of `kind` whose C value is `value`: a pointer
    /// to an Open MPI object.
    pub fn resolve(&self, kind: HandleKind, value: i64) -> Result<HandleView, HandleError> {
        if kind == HandleKind::Status {
            return Err(HandleError::Unsupported(
                "an MPI_Status is not a handle: read it at its address".to_string(),
            ));
        }
        // A pointer of a 32-bit target may be given sign-extended.
        let addr = match u64::try_from(value) {
            Ok(a) => a,
            Err(_) if self.ctx.word() == 4 && value >= i64::from(i32::MIN) => value as u32 as u64,
            Err(_) => {
                return Err(HandleError::BadValue {
                    kind,
                    value,
                    reason: "Open MPI's handles are pointers, never negative".to_string(),
                })
            }
        };
        self.view(kind, TargetAddr(addr))
    }

    /// A view of the handle whose Fortran INTEGER is `value`: the object
    /// at that index of the kind's pointer array.
    pub fn resolve_fortran(&self, kind: HandleKind, value: i32) -> Result<HandleView, HandleError> {
        let addr = self.object_of_fortran(kind, value)?;
        self.view(kind, addr)
    }

    /// The object whose Fortran INTEGER of `kind` is `value`.
    pub(crate) fn object_of_fortran(
        &self,
        kind: HandleKind,
        value: i32,
    ) -> Result<TargetAddr, HandleError> {
        let fail = |reason: String| HandleError::Fortran {
            kind,
            value,
            reason,
        };
        let (table, _) = kind_info(kind)
            .ok_or_else(|| fail("a status has no Fortran handle: read it at its address".into()))?;
        let index =
            u64::try_from(value).map_err(|_| fail("Fortran handles are never negative".into()))?;
        let array = self.table(kind)?;
        let slot = array
            .get(&self.ctx, index, table)
            .map_err(|e| fail(e.to_string()))?;
        if slot.is_null() {
            return Err(fail(format!(
                "slot {index} of {table} is empty: no object has this index (it was freed, or \
                 never made)"
            )));
        }
        Ok(slot)
    }

    /// The `MPI_Status` at `addr`; with a datatype handle, its element
    /// count too.
    pub fn status(
        &self,
        addr: TargetAddr,
        datatype: Option<i64>,
    ) -> Result<StatusView, HandleError> {
        request::status(self, addr, datatype)
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
    fn predefined_symbol(
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

    /// The view of the object `addr` of `kind`.
    fn view(&self, kind: HandleKind, addr: TargetAddr) -> Result<HandleView, HandleError> {
        let symbol = self.predefined_symbol(kind, addr);
        if let Some((name, true)) = symbol {
            return Err(HandleError::NullObject {
                kind,
                addr,
                name: name.to_string(),
            });
        }
        let refcount = self.check_class(kind, addr)?;
        let d = match kind {
            HandleKind::Comm => comm::decode(self, addr)?,
            HandleKind::Group => comm::decode_group(self, addr)?,
            HandleKind::Datatype => datatype::decode(self, addr)?,
            HandleKind::Errhandler => errhandler::decode(self, addr)?,
            HandleKind::Op => op::decode(self, addr)?,
            HandleKind::Info => info::decode(self, addr)?,
            HandleKind::Request => request::decode(self, addr)?,
            HandleKind::Win => win::decode(self, addr)?,
            HandleKind::File => file::decode(self, addr)?,
            HandleKind::Status => unreachable!("refused by resolve"),
        };
        let predefined = d.predefined || symbol.is_some();
        let predefined_name = symbol
            .map(|(n, _)| n.to_string())
            .or_else(|| d.name.clone().filter(|_| predefined));
        let state = if d.freed.is_some() {
            ObjectState::Freed
        } else {
            ObjectState::Live
        };
        let mut notes = d.notes;
        if let Some(why) = &d.freed {
            notes.push(why.clone());
        }
        Ok(HandleView {
            implementation: self.implementation.clone(),
            kind,
            c_handle: Availability::Value(CHandle::Pointer(addr)),
            fortran_index: self.fortran_index(kind, addr, d.f2c),
            predefined,
            predefined_name,
            object_address: Availability::Value(addr),
            state: Availability::Value(state),
            freed_by_application: if predefined {
                Availability::Value(false)
            } else {
                d.freed_by_application
            },
            freed_by_implementation: Availability::Value(state == ObjectState::Freed),
            reference_count: Availability::Value(refcount),
            encoding: None,
            details: d.details,
            notes,
        })
    }

    /// The Fortran INTEGER of the object `addr`, from its own index, when
    /// the kind's pointer array holds it there.
    fn fortran_index(
        &self,
        kind: HandleKind,
        addr: TargetAddr,
        own: Availability<i64>,
    ) -> Availability<i32> {
        let Some(index) = own.value().copied() else {
            return Availability::NotAvailable {
                reason: own.reason().unwrap_or_default().to_string(),
            };
        };
        if kind == HandleKind::Request && index == MPI_UNDEFINED {
            return Availability::not_available(
                "Open MPI gives a request a Fortran INTEGER only when MPI_Request_c2f asks for one, \
                 and none was asked",
            );
        }
        let (table, _) = kind_info(kind).unwrap_or(("?", "?"));
        let found = u64::try_from(index)
            .map_err(|_| HandleError::Unsupported(format!("its index {index} is negative")))
            .and_then(|i| self.table(kind)?.get(&self.ctx, i, table));
        match found {
            Ok(p) if p == addr => match i32::try_from(index) {
                Ok(i) => Availability::Value(i),
                Err(_) => {
                    Availability::not_available(format!("its index {index} is not an INTEGER"))
                }
            },
            Ok(p) => Availability::not_available(format!(
                "its index {index} in {table} holds {p}, not this object"
            )),
            Err(e) => Availability::not_available(format!("its index {index}: {e}")),
        }
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
        Some((r.chars(name).ok()?, predefined))
    }

    /// The reference at pointer `p`, `None` when it is NULL.
    pub(crate) fn reference_opt(&self, kind: HandleKind, p: TargetAddr) -> Option<HandleRef> {
        (!p.is_null()).then(|| self.reference(kind, p))
    }
}

impl HandleResolver for Ompi<'_> {
    fn implementation(&self) -> &str {
        &self.implementation
    }

    fn resolve(&self, kind: HandleKind, value: i64) -> Result<HandleView, HandleError> {
        Ompi::resolve(self, kind, value)
    }

    fn resolve_fortran(&self, kind: HandleKind, value: i32) -> Result<HandleView, HandleError> {
        Ompi::resolve_fortran(self, kind, value)
    }

    fn status(&self, addr: TargetAddr, datatype: Option<i64>) -> Result<StatusView, HandleError> {
        Ompi::status(self, addr, datatype)
    }
}
