//! Open MPI datatypes (`ompi_datatype_t`, an `opal_datatype_t` with the
//! MPI layer's fields), their constructors and type maps.
//!
//! The `opal_datatype_t` part keeps the flags (predefined, committed,
//! contiguous), `size`, the bounds (`lb`, `ub`, `true_lb`, `true_ub`);
//! the MPI part its name, Fortran index, attributes and `args`: an
//! `ompi_datatype_args_t` holding the combiner (`create_type`, a value of
//! `mpi.h`'s combiner enumeration) and the arguments of the call that made
//! the type, as counts (`ci`, `ca`, `cd`) and pointers to the integer,
//! address and datatype arrays (`i`, `a`, `d`), in the order
//! `MPI_Type_get_contents` gives them. The constructor tree, type map and
//! holes come from [`crate::type_map`].

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, DatatypeDetails, Details, HandleKind, HandleRef};
use crate::ompi::constants::{COMBINERS, DT_COMMITTED, DT_CONTIGUOUS, DT_PREDEFINED};
use crate::ompi::opal::attributes;
use crate::ompi::resolver::{Decoded, Ompi};
use crate::target::Rec;
use crate::type_map::{Contents, Expander, TypeInfo, TypeSource};

/// Reads Open MPI datatypes by pointer.
struct Reader<'o, 'a> {
    o: &'o Ompi<'a>,
}

impl TypeSource for Reader<'_, '_> {
    type Handle = TargetAddr;

    fn read(&self, addr: TargetAddr) -> Result<TypeInfo<TargetAddr>, HandleError> {
        self.o.check_class(HandleKind::Datatype, addr)?;
        let l = &self.o.l.datatype;
        let r = self.o.ctx.record_sized(addr, l.size, l.name)?;
        read(self.o, &r)
    }

    fn reference(&self, addr: TargetAddr) -> HandleRef {
        self.o.reference(HandleKind::Datatype, addr)
    }
}

/// The datatype in `r`.
fn read(o: &Ompi<'_>, r: &Rec) -> Result<TypeInfo<TargetAddr>, HandleError> {
    let m = &o.l.datatype.m;
    let flags = r.uint(m.flags)?;
    let predefined = flags & DT_PREDEFINED != 0;
    let lb = r.int(m.lb)?;
    let ub = r.int(m.ub)?;
    let args = r.ptr(m.args)?;
    let contents = if predefined || args.is_null() {
        None
    } else {
        Some(contents(o, args)?)
    };
    Ok(TypeInfo {
        name: r.chars(m.name)?,
        size: r.int(m.size)?,
        extent: ub.checked_sub(lb).ok_or_else(|| {
            HandleError::Unsupported("the datatype's bounds overflow 64 bits".to_string())
        })?,
        lb,
        ub,
        predefined: predefined
            || contents
                .as_ref()
                .is_none_or(|c| c.combiner == "MPI_COMBINER_NAMED"),
        contents,
    })
}

/// The `ompi_datatype_args_t` at `addr`.
fn contents(o: &Ompi<'_>, addr: TargetAddr) -> Result<Contents<TargetAddr>, HandleError> {
    let ctx = &o.ctx;
    let l = &o.l.args;
    let m = &l.m;
    let r = ctx.record_sized(addr, l.size, l.name)?;
    let create_type = r.int(m.create_type)?;
    let combiner = usize::try_from(create_type)
        .ok()
        .and_then(|i| COMBINERS.get(i))
        .map(|c| c.to_string())
        .unwrap_or_else(|| format!("combiner {create_type}"));
    let array = |count: mpidd_read::Member, ptr: mpidd_read::Member, size: u64, what| {
        let n = r.int(count)?;
        if n == 0 {
            return Ok(Vec::new());
        }
        ctx.ints(r.ptr(ptr)?, n, size, what)
            .map_err(HandleError::from)
    };
    let word = ctx.word();
    Ok(Contents {
        combiner,
        ints: array(m.ci, m.i, 4, "ompi_datatype_args_t.i")?,
        aints: array(m.ca, m.a, word, "ompi_datatype_args_t.a")?,
        counts: Vec::new(),
        types: array(m.cd, m.d, word, "ompi_datatype_args_t.d")?
            .into_iter()
            .map(|p| ctx.address(p))
            .collect(),
    })
}

pub(crate) fn decode(o: &Ompi<'_>, addr: TargetAddr) -> Result<Decoded, HandleError> {
    let ctx = &o.ctx;
    let l = &o.l.datatype;
    let m = &l.m;
    let r = ctx.record_sized(addr, l.size, l.name)?;
    let flags = r.uint(m.flags)?;
    let reader = Reader { o };
    let (constructor, type_map, holes) =
        Expander::new(&reader).expand_read(addr, read(o, &r), ctx.limits.max_list_len);
    let int = |f| -> Availability<i64> { r.int(f).map_err(HandleError::from).into() };
    let lb = r.int(m.lb)?;
    let ub = r.int(m.ub)?;
    let name = r.chars(m.name)?;
    let details = DatatypeDetails {
        name: Availability::Value(name.clone()),
        size: int(m.size),
        extent: ub
            .checked_sub(lb)
            .map(Availability::Value)
            .unwrap_or_else(|| Availability::not_available("the bounds overflow 64 bits")),
        lb: Availability::Value(lb),
        ub: Availability::Value(ub),
        true_lb: int(m.true_lb),
        true_ub: int(m.true_ub),
        committed: Availability::Value(flags & DT_COMMITTED != 0),
        contiguous: Availability::Value(flags & DT_CONTIGUOUS != 0),
        constructor,
        type_map,
        holes,
        ongoing_operations: Availability::not_available(
            "Open MPI keeps no list of the operations using a datatype",
        ),
    };
    let mut notes = Vec::new();
    if let Ok(keyhash) = r.ptr(m.keyhash) {
        if let Ok(attrs) = attributes(ctx, &o.l, keyhash) {
            if !attrs.is_empty() {
                notes.push(format!("{} attribute(s) cached on it", attrs.len()));
            }
        }
    }
    Ok(Decoded {
        details: Details::Datatype(details),
        predefined: flags & DT_PREDEFINED != 0,
        name: Some(name),
        f2c: Availability::Value(r.int(m.f2c)?),
        freed_by_application: Availability::not_available(
            "Open MPI keeps no mark of MPI_Type_free: freeing drops a reference, and the type \
             lives while types built from it or pending operations hold it",
        ),
        freed: None,
        notes,
    })
}
