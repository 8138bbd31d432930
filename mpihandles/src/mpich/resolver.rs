//! The MPICH handle resolver: from a handle to its object, and from the
//! object to a [`HandleView`].

use mpidd_read::{Limits, SymbolSource, Target, TargetMemory};
use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{
    Availability, CHandle, Details, HandleEncoding, HandleKind, HandleRef, HandleView, ObjectState,
    StatusView,
};
use crate::mpich::handle_bits::Storage;
use crate::mpich::pools::{locate, spec, Located, PoolSpec};
use crate::mpich::predefined::predefined_name;
use crate::mpich::{comm, datatype, errhandler, file, group, info, op, request, status, win};
use crate::target::Ctx;
use crate::HandleResolver;
use mpidd_read::{LayoutError, Layouts};

/// Interprets MPICH handles (MPICH 3.3 to 4.x, whose objects this reads
/// through the library's own debug info) in one process.
///
/// A freed object is known by the allocator's free list. Once MPICH hands
/// the slot to a new object, though, an old handle names the new object:
/// MPICH reuses slots and its handles carry no generation, so a stale
/// handle whose slot was reused cannot be told from a live one.
///
/// ```no_run
/// use mpidd_read::{Limits, LiveTarget};
/// use mpihandles::{HandleKind, HandleResolver, Mpich};
///
/// let target = LiveTarget::open(4242)?;
/// let mpich = Mpich::new(&target, Limits::default())?;
/// let world = mpich.resolve(HandleKind::Comm, 0x4400_0000)?;
/// println!("{}", serde_json::to_string_pretty(&world)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Mpich<'a> {
    pub(crate) ctx: Ctx<'a>,
    implementation: String,
}

/// The layouts without which none of MPICH's handles can be read that
/// `layouts` lacks: the object kinds a handle encodes, the allocator every
/// pool is found through, and the communicator and request objects. A
/// source lacking them is no source for this library (a stripped build):
/// what a caller checks before choosing a profile instead.
pub fn mpich_missing_layouts(layouts: &dyn Layouts) -> Vec<LayoutError> {
    let mut missing = Vec::new();
    if let Err(e) = layouts.enumerators("MPII_Object_kind") {
        missing.push(e);
    }
    for ty in [
        "MPIR_Object_alloc_t",
        "MPIR_Comm",
        "MPIR_Request",
        "MPIR_Group",
    ] {
        if let Err(e) = layouts.size_of(ty) {
            missing.push(e);
        }
    }
    missing
}

impl<'a> Mpich<'a> {
    /// A resolver over a target's memory and symbols, with MPICH's private
    /// layouts from its layouts (for a [`CoreTarget`](mpidd_read::CoreTarget)
    /// or a [`LiveTarget`](mpidd_read::LiveTarget), the library's DWARF;
    /// through a [`TargetParts`](mpidd_read::TargetParts), a layout profile
    /// or a table). Fails if the target has no MPICH handle pools.
    pub fn new(target: &'a dyn Target, limits: Limits) -> Result<Mpich<'a>, HandleError> {
        Self::from_parts(target.memory(), target.symbols(), target.layouts(), limits)
    }

    /// [`Mpich::new`] over a memory, symbols and layouts kept apart (a
    /// layout profile for a stripped library, a debugger's own sources).
    pub fn from_parts(
        memory: &'a dyn TargetMemory,
        symbols: &'a dyn SymbolSource,
        layouts: &'a dyn Layouts,
        limits: Limits,
    ) -> Result<Mpich<'a>, HandleError> {
        let mem = memory;
        let ctx = Ctx {
            mem,
            symbols,
            layouts,
            limits,
        };
        if symbols.lookup("MPIR_Comm_builtin").is_none() {
            return Err(HandleError::NotThisImplementation {
                implementation: "MPICH",
                symbol: "MPIR_Comm_builtin".to_string(),
                searched: mpidd_read::searched_summary(symbols),
            });
        }
        let string = |name: &str| {
            let sym = symbols.lookup(name)?;
            ctx.string(sym.addr).ok().filter(|s| !s.is_empty())
        };
        let implementation = match (string("MPII_Version_string"), string("MPII_Version_device")) {
            (Some(v), Some(d)) => format!("MPICH {v} ({d})"),
            (Some(v), None) => format!("MPICH {v}"),
            _ => "MPICH".to_string(),
        };
        Ok(Mpich {
            ctx,
            implementation,
        })
    }

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
            located.handle.storage == Storage::Builtin || pairtype(kind, raw).is_some();
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
            .or_else(|| pairtype(kind, raw).map(str::to_string))
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

    /// A short reference to the int handle `raw` of `kind`, with its
    /// predefined name and its object's name where it has one. A handle
    /// that does not resolve is still referred to, by value.
    pub(crate) fn reference(&self, kind: HandleKind, raw: u32) -> HandleRef {
        let mut r = HandleRef {
            kind,
            c_handle: CHandle::Int(raw as i32),
            predefined_name: predefined_name(kind, raw)
                .or_else(|| pairtype(kind, raw))
                .map(str::to_string),
            name: None,
        };
        let name_member = match kind {
            HandleKind::Comm => "MPIR_Comm",
            HandleKind::Datatype => "MPIR_Datatype",
            HandleKind::Win => "MPIR_Win",
            _ => return r,
        };
        let Some(spec) = spec(kind) else {
            return r;
        };
        let name = locate(&self.ctx, &spec, raw).ok().and_then(|l| {
            let addr = l.addr?;
            let m = self.ctx.m(name_member, "name").ok()?;
            let bytes = self
                .ctx
                .bytes(crate::target::at(addr, m.offset), m.size, "object name")
                .ok()?;
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            Some(String::from_utf8_lossy(&bytes[..end]).into_owned())
        });
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            if r.predefined_name.is_none() && predefined_by_bits(kind, raw) {
                r.predefined_name = Some(name);
            } else if r.predefined_name.as_ref() != Some(&name) {
                r.name = Some(name);
            }
        }
        r
    }

    /// A reference to the object at `addr` (a pointer MPICH keeps), by the
    /// handle the object carries.
    pub(crate) fn reference_at(
        &self,
        kind: HandleKind,
        addr: TargetAddr,
        object_type: &'static str,
    ) -> Result<HandleRef, HandleError> {
        let header = self.ctx.record_prefix(addr, object_type)?;
        Ok(self.reference(kind, header.handle as u32))
    }

    /// The implementation's description.
    pub fn implementation_name(&self) -> &str {
        &self.implementation
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

/// MPICH's int handle from a value given as an int or as its 32-bit
/// pattern.
fn int_handle(kind: HandleKind, value: i64) -> Result<u32, HandleError> {
    if let Ok(v) = i32::try_from(value) {
        return Ok(v as u32);
    }
    u32::try_from(value).map_err(|_| HandleError::BadValue {
        kind,
        value,
        reason: "MPICH's handles are 32-bit ints".to_string(),
    })
}

fn predefined_by_bits(kind: HandleKind, raw: u32) -> bool {
    let h = crate::mpich::handle_bits::MpichHandle::decode(raw);
    h.storage == Storage::Builtin || pairtype(kind, raw).is_some()
}

/// MPICH's predefined pair datatypes (`MPI_FLOAT_INT`...) are the first
/// objects of the direct array, made by `MPI_Init`; `mpi.h` fixes their
/// handles.
fn pairtype(kind: HandleKind, raw: u32) -> Option<&'static str> {
    if kind != HandleKind::Datatype {
        return None;
    }
    match raw {
        0x8c00_0000 => Some("MPI_FLOAT_INT"),
        0x8c00_0001 => Some("MPI_DOUBLE_INT"),
        0x8c00_0002 => Some("MPI_LONG_INT"),
        0x8c00_0003 => Some("MPI_SHORT_INT"),
        0x8c00_0004 => Some("MPI_LONG_DOUBLE_INT"),
        _ => None,
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
