//! MPICH datatypes (`MPIR_Datatype`), their constructors and type maps.
//!
//! A datatype keeps its `name`, `size`, `extent`, bounds (`lb`, `ub`,
//! `true_lb`, `true_ub`), `is_committed`, `is_contig`, and for a derived
//! type `contents`: an `MPIR_Datatype_contents` (the combiner and the
//! number of each kind of argument) followed in the same allocation by the
//! argument arrays, types (`MPI_Datatype`s), ints, aints (`MPI_Aint`s) and
//! large counts (`MPI_Aint`s), in that order, each array (and the header)
//! padded to MPICH's `MAX_ALIGNMENT`.
//!
//! `MAX_ALIGNMENT` is `alignof(max_align_t)` of the target, which the debug
//! info does not record. The decoder tries 16, 8 and 4 and keeps the first
//! under which every datatype argument is a datatype handle: a wrong
//! padding shifts the array onto padding or onto the ints that follow,
//! which are never datatype handles. Constructors without datatype
//! arguments (the Fortran 90 ones) cannot be checked that way, and their
//! arguments are reported as not available.
//!
//! The constructor tree, type map and holes come from [`crate::type_map`].

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{Availability, DatatypeDetails, HandleKind, HandleRef};
use crate::mpich::handle_bits::{MpichHandle, Storage};
use crate::mpich::pools::{locate, spec};
use crate::mpich::resolver::Mpich;
use crate::target::{at, Ctx};
use crate::type_map::{Contents, Expander, TypeInfo, TypeSource};

const D: &str = "MPIR_Datatype";
const CONTENTS: &str = "MPIR_Datatype_contents";
const COMBINER_ENUM: &str = "enum MPIR_Combiner_enum";
/// Paddings `MAX_ALIGNMENT` may have, most likely first.
const ALIGNMENTS: [u64; 3] = [16, 8, 4];

/// Reads MPICH datatypes by handle.
struct Reader<'m, 'a> {
    m: &'m Mpich<'a>,
}

impl TypeSource for Reader<'_, '_> {
    type Handle = u32;

    fn read(&self, handle: u32) -> Result<TypeInfo<u32>, HandleError> {
        let spec = spec(HandleKind::Datatype)
            .ok_or_else(|| HandleError::Unsupported("no datatype pool".to_string()))?;
        let located = locate(self.ctx(), &spec, handle)?;
        let addr = located.addr.ok_or(HandleError::NeverAllocated {
            value: handle,
            addr: TargetAddr::NULL,
            found: 0,
            hint: " (its builtin slot is empty)",
        })?;
        self.read_at(addr, handle)
    }

    fn reference(&self, handle: u32) -> HandleRef {
        self.m.reference(HandleKind::Datatype, handle)
    }
}

impl Reader<'_, '_> {
    fn ctx(&self) -> &Ctx<'_> {
        &self.m.ctx
    }

    fn read_at(&self, addr: TargetAddr, handle: u32) -> Result<TypeInfo<u32>, HandleError> {
        let ctx = self.ctx();
        let r = ctx.record(addr, D)?;
        let int = |path: &str| -> Result<i64, HandleError> { Ok(r.int(ctx.m(D, path)?)?) };
        let contents_ptr = r.ptr(ctx.m(D, "contents")?)?;
        let predefined = MpichHandle::decode(handle).storage == Storage::Builtin;
        let contents = if contents_ptr.is_null() || predefined {
            None
        } else {
            Some(self.contents(contents_ptr)?)
        };
        Ok(TypeInfo {
            name: r.chars(ctx.m(D, "name")?)?,
            size: int("size")?,
            extent: int("extent")?,
            lb: int("lb")?,
            ub: int("ub")?,
            predefined: predefined
                || contents
                    .as_ref()
                    .is_none_or(|c| c.combiner == "MPI_COMBINER_NAMED"),
            contents,
        })
    }

    fn contents(&self, addr: TargetAddr) -> Result<Contents<u32>, HandleError> {
        let ctx = self.ctx();
        let r = ctx.record(addr, CONTENTS)?;
        let int = |path: &str| -> Result<i64, HandleError> { Ok(r.int(ctx.m(CONTENTS, path)?)?) };
        let combiner_value = int("combiner")?;
        let combiner = ctx
            .layouts
            .enum_name(COMBINER_ENUM, i128::from(combiner_value))?
            .unwrap_or_else(|| combiner_value.to_string());
        let nr_types = ctx.count(int("nr_types")?, addr, "MPIR_Datatype_contents.nr_types")?;
        let nr_ints = ctx.count(int("nr_ints")?, addr, "MPIR_Datatype_contents.nr_ints")?;
        let nr_aints = ctx.count(int("nr_aints")?, addr, "MPIR_Datatype_contents.nr_aints")?;
        // MPICH before 4.0 has no large counts.
        let nr_counts = match ctx.m(CONTENTS, "nr_counts") {
            Ok(f) => ctx.count(r.int(f)?, addr, "MPIR_Datatype_contents.nr_counts")?,
            Err(_) => 0,
        };
        let header = ctx.size_of(CONTENTS)?;
        // An `MPI_Aint` is as wide as an address on every MPICH target;
        // the count's own width is not it (an `int` before 4.0, an
        // `MPI_Aint` from 4.0). `ints` reads integers of 1 to 8 bytes.
        let aint = ctx.word().clamp(1, 8);
        let int_size = 4;
        let handle_size = 4;
        let kind = ctx
            .layouts
            .enum_value("MPII_Object_kind", "MPIR_DATATYPE")? as u32;
        let round = |n: u64, a: u64| n.div_ceil(a) * a;
        let read =
            |off: u64, n: u64, size: u64, what| ctx.ints(at(addr, off), n as i64, size, what);
        for a in ALIGNMENTS {
            let types_at = round(header, a);
            let ints_at = types_at + round(nr_types * handle_size, a);
            let aints_at = ints_at + round(nr_ints * int_size, a);
            let counts_at = aints_at + round(nr_aints * aint, a);
            // A wrong padding may also run past the allocation: that is
            // one more reason to try the next.
            let Ok(types) = read(types_at, nr_types, handle_size, "datatype contents: types")
            else {
                continue;
            };
            let types: Vec<u32> = types.into_iter().map(|v| v as u32).collect();
            if nr_types == 0 && nr_ints + nr_aints + nr_counts > 0 {
                return Err(HandleError::Unsupported(format!(
                    "{combiner} has no datatype arguments to tell MPICH's MAX_ALIGNMENT by, \
                     so where its other arguments start is unknown"
                )));
            }
            let valid = types.iter().all(|&t| {
                let h = MpichHandle::decode(t);
                h.object_kind == kind && h.storage != Storage::Invalid
            });
            if !valid {
                continue;
            }
            return Ok(Contents {
                combiner,
                types,
                ints: read(ints_at, nr_ints, int_size, "datatype contents: ints")?,
                aints: read(aints_at, nr_aints, aint, "datatype contents: aints")?,
                counts: read(counts_at, nr_counts, aint, "datatype contents: counts")?,
            });
        }
        Err(HandleError::Unsupported(format!(
            "the contents of the datatype at {addr} do not decode: under no padding of 16, 8 or 4 \
             bytes are its {nr_types} type arguments datatype handles"
        )))
    }
}

pub(crate) fn decode(
    m: &Mpich<'_>,
    addr: TargetAddr,
    raw: u32,
) -> Result<DatatypeDetails, HandleError> {
    let ctx = &m.ctx;
    let r = ctx.record(addr, D)?;
    let int = |path: &str| -> Availability<i64> {
        ctx.m(D, path)
            .map_err(HandleError::from)
            .and_then(|f| Ok(r.int(f)?))
            .into()
    };
    let reader = Reader { m };
    // The object found for the handle is the one shown, read once.
    let (constructor, type_map, holes) =
        Expander::new(&reader).expand_read(raw, reader.read_at(addr, raw), ctx.limits.max_list_len);
    Ok(DatatypeDetails {
        name: ctx
            .m(D, "name")
            .map_err(HandleError::from)
            .and_then(|f| Ok(r.chars(f)?))
            .into(),
        size: int("size"),
        extent: int("extent"),
        lb: int("lb"),
        ub: int("ub"),
        true_lb: int("true_lb"),
        true_ub: int("true_ub"),
        committed: int("is_committed").map(|v| v != 0),
        contiguous: int("is_contig").map(|v| v != 0),
        constructor,
        type_map,
        holes,
        ongoing_operations: Availability::not_available(
            "MPICH's requests keep their datatype only in device-private fields",
        ),
    })
}
