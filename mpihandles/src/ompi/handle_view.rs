//! From an Open MPI handle (a pointer, or a Fortran INTEGER through the
//! kind's pointer array) to its object, and from the object to a
//! [`HandleView`]: the fields every kind shares, and the dispatch to the
//! view of the handle's kind for the rest.
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

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::handle_resolver::HandleResolver;
use crate::model::{Availability, CHandle, HandleKind, HandleView, ObjectState, StatusView};
use crate::ompi::constants::MPI_UNDEFINED;
use crate::ompi::kinds::kind_info;
use crate::ompi::resolver::Ompi;
use crate::ompi::{comm, datatype, errhandler, file, group, info, op, request, status, win};

impl Ompi<'_> {
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
        status::read(self, addr, datatype)
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
            HandleKind::Group => group::decode(self, addr)?,
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
