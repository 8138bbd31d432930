//! The MPICH process a resolver reads, as every kind's view sees it: its
//! memory, symbols and layouts, the implementation's name, and the
//! references between objects, both ways (the object a handle or pointer
//! names, and the objects that point at one).
//!
//! The views of each kind build on this; the dispatch over kinds is
//! [`handle_view`](super::handle_view).

use mpidd_read::{Limits, SymbolSource, Target, TargetMemory};
use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, CHandle, HandleKind, HandleRef};
use crate::mpich::abi::{abi_predefined, MpichConstants};
use crate::mpich::pools::{self, locate, spec};
use crate::mpich::predefined::{predefined_by_bits, predefined_name, predefined_pair};
use crate::target::{at, Ctx, Rec};
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
    pub(crate) implementation: String,
    /// The wildcards' values in the library's own code (the MPI-5 ABI's in
    /// its `libmpi_abi`).
    pub(crate) constants: MpichConstants,
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
    /// or a `LiveTarget` (feature `live` of `mpidd-read`), the library's DWARF;
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
        let ctx = Ctx::new(memory, symbols, layouts, limits);
        let Some(builtin) = symbols.lookup("MPIR_Comm_builtin") else {
            return Err(HandleError::NotThisImplementation {
                implementation: "MPICH",
                symbol: "MPIR_Comm_builtin".to_string(),
                searched: mpidd_read::searched_summary(symbols),
            });
        };
        let constants = MpichConstants::of_library(&builtin.object);
        let string = |name: &str| {
            let sym = symbols.lookup(name)?;
            ctx.string(sym.addr).ok().filter(|s| !s.is_empty())
        };
        let mut implementation = match (string("MPII_Version_string"), string("MPII_Version_device")) {
            (Some(v), Some(d)) => format!("MPICH {v} ({d})"),
            (Some(v), None) => format!("MPICH {v}"),
            _ => "MPICH".to_string(),
        };
        // Intel MPI names its own release beside the MPICH it derives from.
        if let Some(release) = string("I_MPI_Library_version") {
            implementation = format!("Intel MPI {release}, derived from {implementation}");
        }
        Ok(Mpich {
            ctx,
            implementation,
            constants,
        })
    }

    /// Whether the process's programs hold handles of the MPI-5 standard
    /// ABI: MPICH's globals are in its `libmpi_abi`, which `mpicc_abi`
    /// links. [`HandleResolver`](crate::HandleResolver) then takes the
    /// ABI's values ([`Mpich::resolve_abi`]).
    pub fn holds_abi_handles(&self) -> bool {
        self.constants == MpichConstants::MPI_ABI
    }

    /// A short reference to the int handle `raw` of `kind`, with its
    /// predefined name and its object's name where it has one. A handle
    /// that does not resolve is still referred to, by value.
    pub(crate) fn reference(&self, kind: HandleKind, raw: u32) -> HandleRef {
        let mut r = HandleRef {
            kind,
            c_handle: CHandle::Int(raw as i32),
            predefined_name: predefined_name(kind, raw)
                .or_else(|| predefined_pair(kind, raw))
                .map(str::to_string),
            name: None,
        };
        let Some(spec) = spec(kind) else {
            return r;
        };
        let name_member = match kind {
            HandleKind::Comm => Some("MPIR_Comm"),
            HandleKind::Datatype => Some("MPIR_Datatype"),
            HandleKind::Win => Some("MPIR_Win"),
            _ => None,
        };
        let abi_predefined = abi_predefined(kind, raw).filter(|_| self.holds_abi_handles());
        // The object is looked up only where its name or, in an ABI
        // program, its address is wanted: a view may refer to thousands.
        let wanted = name_member.is_some() || (self.holds_abi_handles() && abi_predefined.is_none());
        let located = wanted.then(|| locate(&self.ctx, &spec, raw).ok()).flatten();
        if self.holds_abi_handles() {
            // The program holds the ABI's handle: a predefined one's
            // constant, else its object's address.
            if let Some((_, abi)) = abi_predefined {
                r.c_handle = CHandle::Pointer(TargetAddr(u64::from(abi)));
            } else if let Some(addr) = located.as_ref().and_then(|l| l.addr) {
                r.c_handle = CHandle::Pointer(addr);
            }
        }
        let Some(name_member) = name_member else {
            return r;
        };
        let name = located.and_then(|l| {
            let addr = l.addr?;
            let m = self.ctx.m(name_member, "name").ok()?;
            let bytes = self
                .ctx
                .bytes(at(addr, m.offset), m.size, "object name")
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

    /// A reference to the object of `kind` whose address is in the
    /// pointer member `path` of `r`, an `object_type`; `None` when the
    /// pointer is NULL.
    pub(crate) fn reference_in(
        &self,
        r: &Rec,
        object_type: &'static str,
        path: &str,
        kind: HandleKind,
    ) -> Availability<Option<HandleRef>> {
        let read = || -> Result<Option<HandleRef>, HandleError> {
            let ptr = r.ptr(self.ctx.m(object_type, path)?)?;
            let Some(spec) = spec(kind).filter(|_| !ptr.is_null()) else {
                return Ok(None);
            };
            Ok(Some(self.reference_at(kind, ptr, spec.object_type)?))
        };
        read().into()
    }

    /// The objects of `kind` that exist (the predefined ones, then those
    /// handed out and not freed) for which `keep` holds, as references
    /// with their addresses. Bounded as [`pools::live_objects`] is.
    pub(crate) fn objects_where(
        &self,
        kind: HandleKind,
        mut keep: impl FnMut(&Rec) -> Result<bool, HandleError>,
    ) -> Result<Vec<(HandleRef, TargetAddr)>, HandleError> {
        let Some(spec) = spec(kind) else {
            return Ok(Vec::new());
        };
        let handle = self.ctx.m(spec.object_type, "handle")?;
        let mut out = Vec::new();
        for r in pools::objects(&self.ctx, &spec)? {
            if keep(&r)? {
                out.push((self.reference(kind, r.int(handle)? as u32), r.base));
            }
        }
        Ok(out)
    }

    /// The objects of `kind` whose pointer member at one of `paths` is
    /// `target`: what refers to the object at `target`.
    pub(crate) fn referring(
        &self,
        kind: HandleKind,
        paths: &[&str],
        target: TargetAddr,
    ) -> Result<Vec<HandleRef>, HandleError> {
        let Some(spec) = spec(kind) else {
            return Ok(Vec::new());
        };
        let members = paths
            .iter()
            .map(|p| self.ctx.m(spec.object_type, p))
            .collect::<Result<Vec<_>, _>>()?;
        let found = self.objects_where(kind, |r| {
            Ok(members.iter().any(|f| r.ptr(*f).ok() == Some(target)))
        })?;
        Ok(found.into_iter().map(|(r, _)| r).collect())
    }

    /// The implementation's description.
    pub fn implementation_name(&self) -> &str {
        &self.implementation
    }
}
