//! From an MPICH handle to its [`HandleView`]: the fields every kind
//! shares (where the object is, its state, whether it was freed, its
//! references, how the handle's bits break down), and the dispatch to the
//! view of the handle's kind for the rest.

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::handle_resolver::HandleResolver;
use crate::model::{
    Availability, CHandle, Details, HandleEncoding, HandleKind, HandleView, ObjectState, StatusView,
};
use crate::mpich::abi::{AbiHandle, ABI_BUILTIN_LIMIT};
use crate::mpich::handle_bits::{int_handle, Storage};
use crate::mpich::pools::{locate, spec, Located, PoolSpec};
use crate::mpich::predefined::{predefined_name, predefined_pair};
use crate::mpich::resolver::Mpich;
use crate::mpich::{comm, datatype, errhandler, file, group, info, op, request, status, win};
use crate::target::{at, Ctx};

impl Mpich<'_> {
    /// A view of the handle of `kind` with C value `value` (for `MPI_File`,
    /// ROMIO's pointer). MPICH's int handles may be given as the int
    /// (negative for direct and indirect objects) or as its unsigned
    /// 32-bit pattern.
    pub fn resolve(&self, kind: HandleKind, value: i64) -> Result<HandleView, HandleError> {
        match kind {
            HandleKind::Status => Err(HandleError::Unsupported(
                "an MPI_Status is not a handle: read it at its address".to_string(),
            )),
            HandleKind::File => {
                let addr = u64::try_from(value).map_err(|_| HandleError::BadValue {
                    kind,
                    value,
                    reason: "a ROMIO MPI_File is a pointer, never negative".to_string(),
                })?;
                file::view(self, TargetAddr(addr))
            }
            _ => {
                let raw = int_handle(kind, value)?;
                self.int_view(kind, raw)
            }
        }
    }

    /// A view of the handle whose Fortran INTEGER is `value`. MPICH's
    /// Fortran handles are its C handles; ROMIO's files go through its
    /// table of `MPI_File`s.
    pub fn resolve_fortran(&self, kind: HandleKind, value: i32) -> Result<HandleView, HandleError> {
        match kind {
            HandleKind::File => {
                let addr = file::from_fortran(self, value)?;
                file::view(self, addr)
            }
            _ => self.resolve(kind, i64::from(value)),
        }
    }

    /// The `MPI_Status` at `addr` in user memory; with `datatype`, also
    /// the count of its elements.
    pub fn status(
        &self,
        addr: TargetAddr,
        datatype: Option<i64>,
    ) -> Result<StatusView, HandleError> {
        status::read(self, addr, datatype)
    }

    /// The view of an int handle.
    fn int_view(&self, kind: HandleKind, raw: u32) -> Result<HandleView, HandleError> {
        let spec = spec(kind).ok_or_else(|| {
            HandleError::Unsupported(format!("{kind} is not an MPICH int handle"))
        })?;
        let located = locate(&self.ctx, &spec, raw)?;
        let table_name = predefined_name(kind, raw);
        let predefined =
            located.handle.storage == Storage::Builtin || predefined_pair(kind, raw).is_some();
        let mut notes = Vec::new();
        let details = match (located.addr, located.state) {
            (Some(addr), ObjectState::Live) => self.details(kind, addr, raw, &located)?,
            // MPICH links a freed object into the free list through the
            // bytes after its header and hands the memory to the next
            // object of the kind: what it holds now is not the old object.
            (Some(_), ObjectState::Freed) => Details::Undecoded {
                reason: "MPICH returned the object to its allocator: the handle is stale, and \
                         the memory now holds the free list's link and whatever a newer object \
                         wrote there"
                    .to_string(),
            },
            (None, _) => self.predefined_details(kind, raw)?,
        };
        let object_name = match &details {
            Details::Comm(c) => c.name.value().cloned(),
            Details::Datatype(d) => d.name.value().cloned(),
            _ => None,
        };
        let predefined_name = table_name
            .map(str::to_string)
            .or_else(|| predefined_pair(kind, raw).map(str::to_string))
            .or_else(|| predefined.then_some(object_name).flatten());
        let freed_by_application = if predefined {
            Availability::Value(false)
        } else {
            match located.state {
                ObjectState::Freed => {
                    notes.push(
                        "freed by the application: implied, as MPICH frees an object only once \
                         the application's reference is gone"
                            .to_string(),
                    );
                    Availability::Value(true)
                }
                ObjectState::Live if kind == HandleKind::Info => Availability::not_available(
                    "MPICH keeps no mark of MPI_Info_free: a freed info object goes straight \
                     back to the allocator, so a live one was not freed, or was freed and \
                     reused",
                ),
                ObjectState::Live => Availability::not_available(format!(
                    "MPICH keeps no mark of MPI_{}_free: freeing only drops a reference, and the \
                     object lives while references remain{}",
                    free_function(kind),
                    located
                        .ref_count
                        .map(|n| format!(" (it has {n} now)"))
                        .unwrap_or_default()
                )),
            }
        };
        Ok(HandleView {
            implementation: self.implementation.clone(),
            kind,
            c_handle: Availability::Value(CHandle::Int(raw as i32)),
            fortran_index: Availability::Value(raw as i32),
            predefined,
            predefined_name,
            object_address: match located.addr {
                Some(a) => Availability::Value(a),
                None => Availability::not_available(
                    "MPICH implements this predefined handle without an object",
                ),
            },
            state: Availability::Value(located.state),
            freed_by_application,
            freed_by_implementation: Availability::Value(located.state == ObjectState::Freed),
            reference_count: match located.ref_count {
                _ if kind == HandleKind::Info => {
                    Availability::not_available("MPICH does not count references to info objects")
                }
                Some(n) => Availability::Value(n),
                None => Availability::not_available("the predefined handle has no object"),
            },
            encoding: Some(encoding(&self.ctx, &spec, &located)),
            details,
            notes,
        })
    }

    fn details(
        &self,
        kind: HandleKind,
        addr: TargetAddr,
        raw: u32,
        located: &Located,
    ) -> Result<Details, HandleError> {
        Ok(match kind {
            HandleKind::Comm => Details::Comm(comm::decode(self, addr)?),
            HandleKind::Group => Details::Group(group::decode(self, addr)?),
            HandleKind::Datatype => Details::Datatype(datatype::decode(self, addr, raw)?),
            HandleKind::Errhandler => Details::Errhandler(errhandler::decode(
                self,
                addr,
                located.handle.storage == Storage::Builtin,
            )?),
            HandleKind::Op => Details::Op(op::decode(self, Some(addr))?),
            HandleKind::Info => Details::Info(info::decode(self, addr)?),
            HandleKind::Request => Details::Request(request::decode(self, addr)?),
            HandleKind::Win => Details::Win(win::decode(self, addr)?),
            HandleKind::File | HandleKind::Status => {
                return Err(HandleError::Unsupported(format!(
                    "{kind} is not an MPICH int handle"
                )))
            }
        })
    }

    /// Details of a predefined handle that MPICH implements without an
    /// object.
    fn predefined_details(&self, kind: HandleKind, raw: u32) -> Result<Details, HandleError> {
        match kind {
            HandleKind::Op => Ok(Details::Op(op::decode(self, None)?)),
            _ => Err(HandleError::NeverAllocated {
                value: raw,
                addr: TargetAddr::NULL,
                found: 0,
                hint: " (its builtin slot is empty: MPI_Init has not run?)",
            }),
        }
    }
}

impl Mpich<'_> {
    /// The view of the handle of `kind` whose C value is `value` in a
    /// program built against the MPI-5 standard ABI (MPICH's
    /// `libmpi_abi.so`): a predefined one by the standard's constant, any
    /// other through the `handle` member of the object it points at,
    /// which must be of `kind`. The view's C handle is `value`, as the
    /// program holds it, and its Fortran INTEGER what `MPI_Comm_toint` and
    /// its siblings give: the constant for a predefined handle, else
    /// MPICH's int handle.
    pub fn resolve_abi(&self, kind: HandleKind, value: u64) -> Result<HandleView, HandleError> {
        let raw = match AbiHandle::classify(kind, value)? {
            AbiHandle::Predefined { mpich, .. } => mpich,
            // ROMIO's files are pointers in both ABIs.
            AbiHandle::Object(_) if kind == HandleKind::File => {
                return self.resolve(kind, value as i64)
            }
            AbiHandle::Object(addr) => {
                let spec = spec(kind).ok_or_else(|| {
                    HandleError::Unsupported(format!("MPICH keeps no pool of {kind} objects"))
                })?;
                let member = self.ctx.m(spec.object_type, "handle")?;
                let raw = self
                    .ctx
                    .mem
                    .read_u32(at(addr, member.offset), spec.object_type)?;
                // An object of another kind: its handle's bits say so.
                let mut view = self
                    .resolve(kind, i64::from(raw as i32))
                    .map_err(|e| match e {
                        HandleError::WrongKind { .. } => HandleError::BadValue {
                            kind,
                            value: value as i64,
                            reason: format!("the object at {addr} holds MPICH handle {raw:#010x}: {e}"),
                        },
                        other => other,
                    })?;
                view.c_handle = Availability::Value(CHandle::Pointer(addr));
                return Ok(view);
            }
        };
        let mut view = self.resolve(kind, i64::from(raw as i32))?;
        view.c_handle = Availability::Value(CHandle::Pointer(TargetAddr(value)));
        view.fortran_index = Availability::Value(value as i32);
        Ok(view)
    }

    /// The view of the handle of `kind` whose Fortran INTEGER is `value`
    /// in a program built against the MPI-5 standard ABI: MPICH's ABI
    /// layer (`MPI_Comm_toint` and its siblings) gives a predefined
    /// handle's constant, from 1 up to [`ABI_BUILTIN_LIMIT`], and any
    /// other handle's MPICH int handle.
    pub fn resolve_abi_int(&self, kind: HandleKind, value: i32) -> Result<HandleView, HandleError> {
        match u64::try_from(value) {
            Ok(v) if v > 0 && v < ABI_BUILTIN_LIMIT => self.resolve_abi(kind, v),
            _ => {
                let mut view = self.resolve_fortran(kind, value)?;
                // The program's C handle is the object's address.
                if let (Availability::Value(addr), false) =
                    (&view.object_address, kind == HandleKind::File)
                {
                    view.c_handle = Availability::Value(CHandle::Pointer(*addr));
                }
                Ok(view)
            }
        }
    }
}

impl HandleResolver for Mpich<'_> {
    fn implementation(&self) -> &str {
        &self.implementation
    }

    fn resolve(&self, kind: HandleKind, value: i64) -> Result<HandleView, HandleError> {
        Mpich::resolve(self, kind, value)
    }

    fn resolve_fortran(&self, kind: HandleKind, value: i32) -> Result<HandleView, HandleError> {
        Mpich::resolve_fortran(self, kind, value)
    }

    fn status(&self, addr: TargetAddr, datatype: Option<i64>) -> Result<StatusView, HandleError> {
        Mpich::status(self, addr, datatype)
    }
}

fn free_function(kind: HandleKind) -> &'static str {
    match kind {
        HandleKind::Comm => "Comm",
        HandleKind::Group => "Group",
        HandleKind::Datatype => "Type",
        HandleKind::Errhandler => "Errhandler",
        HandleKind::Op => "Op",
        HandleKind::Info => "Info",
        HandleKind::Request => "Request",
        HandleKind::Win => "Win",
        HandleKind::File => "File_close",
        HandleKind::Status => "?",
    }
}

fn encoding(ctx: &Ctx<'_>, spec: &PoolSpec, located: &Located) -> HandleEncoding {
    let h = &located.handle;
    // A builtin index is masked per kind, as MPICH's lookup masks it.
    let index = match (h.storage, spec.builtin) {
        (Storage::Builtin, Some((_, mask))) => h.raw & mask,
        _ => h.index,
    };
    let object_kind = ctx
        .layouts
        .enum_name("MPII_Object_kind", i128::from(h.object_kind))
        .ok()
        .flatten()
        .unwrap_or_else(|| h.object_kind.to_string());
    let indirect = h.storage == Storage::Indirect;
    HandleEncoding {
        storage: h.storage.name().to_string(),
        object_kind,
        index: (!indirect).then_some(index),
        pool: (h.pool != 0).then_some(h.pool),
        block: indirect.then_some(h.block),
        block_index: indirect.then_some(h.block_index),
    }
}
