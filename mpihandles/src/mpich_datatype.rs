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
//! The type map is built from the constructors down to predefined types,
//! as MPI defines each combiner; holes are the bytes of `[lb, ub)` that no
//! entry covers. Subarray and darray types are not expanded.

use std::collections::HashMap;

use mpidd_types::TargetAddr;

use crate::error::HandleError;
use crate::model::{
    Availability, Constructor, DatatypeDetails, HandleKind, Hole, TypeArgument, TypeMap,
    TypeMapEntry,
};
use crate::mpich::Mpich;
use crate::mpich_handle_bits::{MpichHandle, Storage};
use crate::mpich_pools::{locate, spec};
use crate::target::{at, Ctx};

const D: &str = "MPIR_Datatype";
const CONTENTS: &str = "MPIR_Datatype_contents";
const COMBINER_ENUM: &str = "enum MPIR_Combiner_enum";
/// How deep constructors are followed: far beyond any real type, while a
/// corrupt target whose contents refer back to themselves ends.
const MAX_DEPTH: u32 = 32;
/// Most runs a type map is built with (and no more than
/// [`Limits::max_list_len`](mpidd_read::Limits::max_list_len)).
const MAX_RUNS: u64 = 1 << 16;
/// Most constructors shown plus blocks expanded for one view.
const WORK: u64 = 1 << 20;
/// Paddings `MAX_ALIGNMENT` may have, most likely first.
const ALIGNMENTS: [u64; 3] = [16, 8, 4];

/// One datatype as read.
#[derive(Clone, Debug)]
struct TypeInfo {
    name: String,
    size: i64,
    extent: i64,
    lb: i64,
    ub: i64,
    /// Predefined: a leaf of every type map.
    predefined: bool,
    contents: Option<Contents>,
}

/// A derived type's envelope and contents.
#[derive(Clone, Debug)]
struct Contents {
    combiner: String,
    ints: Vec<i64>,
    aints: Vec<i64>,
    counts: Vec<i64>,
    types: Vec<u32>,
}

/// Reads datatypes once each for one view.
struct Reader<'m, 'a> {
    m: &'m Mpich<'a>,
    cache: HashMap<u32, TypeInfo>,
    /// Work left: constructors shown and blocks expanded. Types may share
    /// arguments, so a tree of a few objects can stand for exponentially
    /// many nodes; this keeps any target's cost bounded.
    budget: u64,
}

impl Reader<'_, '_> {
    fn spend(&mut self) -> Result<(), HandleError> {
        if self.budget == 0 {
            return Err(HandleError::Unsupported(format!(
                "the type is too large to expand: more than {WORK} constructors and blocks"
            )));
        }
        self.budget -= 1;
        Ok(())
    }

    fn ctx(&self) -> &Ctx<'_> {
        &self.m.ctx
    }

    fn info(&mut self, handle: u32) -> Result<TypeInfo, HandleError> {
        if let Some(t) = self.cache.get(&handle) {
            return Ok(t.clone());
        }
        let spec = spec(HandleKind::Datatype)
            .ok_or_else(|| HandleError::Unsupported("no datatype pool".to_string()))?;
        let located = locate(self.ctx(), &spec, handle)?;
        let addr = located.addr.ok_or(HandleError::NeverAllocated {
            value: handle,
            addr: TargetAddr::NULL,
            found: 0,
            hint: " (its builtin slot is empty)",
        })?;
        let t = self.read_at(addr, handle)?;
        self.cache.insert(handle, t.clone());
        Ok(t)
    }

    fn read_at(&self, addr: TargetAddr, handle: u32) -> Result<TypeInfo, HandleError> {
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

    fn contents(&self, addr: TargetAddr) -> Result<Contents, HandleError> {
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
        // `ints` reads integers of 1 to 8 bytes: a wider member (corrupt
        // debug info) must not push the offsets past 2^64 either.
        let aint = ctx.m(CONTENTS, "nr_aints")?.size.clamp(1, 8);
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

    /// The constructor of `t`, its type arguments' constructors within.
    fn constructor(&mut self, t: &TypeInfo, depth: u32) -> Result<Constructor, HandleError> {
        self.spend()?;
        let Some(c) = &t.contents else {
            return Ok(Constructor {
                combiner: "MPI_COMBINER_NAMED".to_string(),
                integers: Vec::new(),
                addresses: Vec::new(),
                large_counts: Vec::new(),
                types: Vec::new(),
            });
        };
        let c = c.clone();
        let mut types = Vec::new();
        for &handle in &c.types {
            let reference = self.m.reference(HandleKind::Datatype, handle);
            let derived = match self.info(handle) {
                Ok(inner) if !inner.predefined => {
                    if depth >= MAX_DEPTH {
                        Some(Availability::not_available(format!(
                            "constructors nest deeper than {MAX_DEPTH}"
                        )))
                    } else {
                        Some(self.constructor(&inner, depth + 1).into())
                    }
                }
                Ok(_) => None,
                Err(e) => Some(Availability::not_available(e.to_string())),
            };
            types.push(TypeArgument {
                handle: reference,
                constructor: derived.map(Box::new),
            });
        }
        Ok(Constructor {
            combiner: c.combiner,
            integers: c.ints,
            addresses: c.aints,
            large_counts: c.counts,
            types,
        })
    }

    /// Appends the type map of `t` shifted by `base` to `out`.
    fn map(
        &mut self,
        t: &TypeInfo,
        base: i64,
        depth: u32,
        out: &mut Runs,
    ) -> Result<(), HandleError> {
        if depth > MAX_DEPTH {
            return Err(HandleError::Unsupported(format!(
                "constructors nest deeper than {MAX_DEPTH}"
            )));
        }
        let Some(c) = t.contents.clone().filter(|_| !t.predefined) else {
            if t.size > 0 {
                out.push(base, &t.name, t.size, 1)?;
            }
            return Ok(());
        };
        if !c.counts.is_empty() {
            return Err(HandleError::Unsupported(format!(
                "{} was built with large counts, whose type maps this decoder does not expand",
                c.combiner
            )));
        }
        let arg = |v: &[i64], i: usize| -> Result<i64, HandleError> {
            v.get(i).copied().ok_or_else(|| {
                HandleError::Unsupported(format!(
                    "{} has too few arguments for its combiner",
                    c.combiner
                ))
            })
        };
        let child = |s: &mut Self, i: usize| -> Result<TypeInfo, HandleError> {
            let h = *c.types.get(i).ok_or_else(|| {
                HandleError::Unsupported(format!("{} has no type argument {i}", c.combiner))
            })?;
            s.info(h)
        };
        // Appends `blocks` of `blocklen` copies of `inner`, block i at
        // `disp(i)` bytes.
        let blocks = |s: &mut Self,
                      inner: &TypeInfo,
                      count: i64,
                      blocklen: &dyn Fn(usize) -> Result<i64, HandleError>,
                      disp: &dyn Fn(usize) -> Result<i64, HandleError>,
                      out: &mut Runs|
         -> Result<(), HandleError> {
            for i in 0..usize::try_from(count.max(0)).unwrap_or(0) {
                s.spend()?;
                out.check()?;
                let start = add(base, disp(i)?)?;
                let len = blocklen(i)?;
                if inner.predefined {
                    if inner.size > 0 && len > 0 {
                        out.push(start, &inner.name, inner.size, len)?;
                    }
                } else {
                    for j in 0..len.max(0) {
                        s.spend()?;
                        s.map(inner, add(start, mul(j, inner.extent)?)?, depth + 1, out)?;
                    }
                }
            }
            Ok(())
        };
        let ints = &c.ints;
        let aints = &c.aints;
        match c.combiner.as_str() {
            "MPI_COMBINER_DUP" | "MPI_COMBINER_RESIZED" => {
                let inner = child(self, 0)?;
                self.map(&inner, base, depth + 1, out)
            }
            "MPI_COMBINER_CONTIGUOUS" => {
                let inner = child(self, 0)?;
                let count = arg(ints, 0)?;
                blocks(self, &inner, 1, &|_| Ok(count), &|_| Ok(0), out)
            }
            "MPI_COMBINER_VECTOR" => {
                let inner = child(self, 0)?;
                let (count, len, stride) = (arg(ints, 0)?, arg(ints, 1)?, arg(ints, 2)?);
                let e = inner.extent;
                blocks(
                    self,
                    &inner,
                    count,
                    &|_| Ok(len),
                    &|i| mul(mul(i as i64, stride)?, e),
                    out,
                )
            }
            "MPI_COMBINER_HVECTOR" | "MPI_COMBINER_HVECTOR_INTEGER" => {
                let inner = child(self, 0)?;
                let (count, len) = (arg(ints, 0)?, arg(ints, 1)?);
                let stride = if c.combiner.ends_with("INTEGER") {
                    arg(ints, 2)?
                } else {
                    arg(aints, 0)?
                };
                blocks(
                    self,
                    &inner,
                    count,
                    &|_| Ok(len),
                    &|i| mul(i as i64, stride),
                    out,
                )
            }
            "MPI_COMBINER_INDEXED" => {
                let inner = child(self, 0)?;
                let count = arg(ints, 0)?;
                let n = count.max(0) as usize;
                let e = inner.extent;
                blocks(
                    self,
                    &inner,
                    count,
                    &|i| arg(ints, 1 + i),
                    &|i| mul(arg(ints, 1 + n + i)?, e),
                    out,
                )
            }
            "MPI_COMBINER_HINDEXED" | "MPI_COMBINER_HINDEXED_INTEGER" => {
                let inner = child(self, 0)?;
                let count = arg(ints, 0)?;
                let n = count.max(0) as usize;
                let integer = c.combiner.ends_with("INTEGER");
                blocks(
                    self,
                    &inner,
                    count,
                    &|i| arg(ints, 1 + i),
                    &|i| {
                        if integer {
                            arg(ints, 1 + n + i)
                        } else {
                            arg(aints, i)
                        }
                    },
                    out,
                )
            }
            "MPI_COMBINER_INDEXED_BLOCK" => {
                let inner = child(self, 0)?;
                let (count, len) = (arg(ints, 0)?, arg(ints, 1)?);
                let e = inner.extent;
                blocks(
                    self,
                    &inner,
                    count,
                    &|_| Ok(len),
                    &|i| mul(arg(ints, 2 + i)?, e),
                    out,
                )
            }
            "MPI_COMBINER_HINDEXED_BLOCK" => {
                let inner = child(self, 0)?;
                let (count, len) = (arg(ints, 0)?, arg(ints, 1)?);
                blocks(self, &inner, count, &|_| Ok(len), &|i| arg(aints, i), out)
            }
            "MPI_COMBINER_STRUCT" | "MPI_COMBINER_STRUCT_INTEGER" => {
                let count = arg(ints, 0)?;
                let n = count.max(0) as usize;
                let integer = c.combiner.ends_with("INTEGER");
                for i in 0..n {
                    let inner = child(self, i)?;
                    let len = arg(ints, 1 + i)?;
                    let disp = if integer {
                        arg(ints, 1 + n + i)?
                    } else {
                        arg(aints, i)?
                    };
                    blocks(self, &inner, 1, &|_| Ok(len), &|_| Ok(disp), out)?;
                }
                Ok(())
            }
            other => Err(HandleError::Unsupported(format!(
                "type maps of {other} types are not expanded"
            ))),
        }
    }
}

/// Type-map runs as they are found, bounded.
struct Runs {
    runs: Vec<TypeMapEntry>,
    max: u64,
}

impl Runs {
    fn check(&self) -> Result<(), HandleError> {
        if self.runs.len() as u64 >= self.max {
            return Err(HandleError::Unsupported(format!(
                "the type map has more than {} runs of predefined types",
                self.max
            )));
        }
        Ok(())
    }

    fn push(
        &mut self,
        offset: i64,
        datatype: &str,
        size: i64,
        count: i64,
    ) -> Result<(), HandleError> {
        if let Some(last) = self.runs.last_mut() {
            if last.datatype == datatype && last.size == size && end(last) == Some(offset) {
                last.count = last.count.saturating_add(count);
                return Ok(());
            }
        }
        self.check()?;
        self.runs.push(TypeMapEntry {
            offset,
            datatype: datatype.to_string(),
            size,
            count,
        });
        Ok(())
    }
}

/// Where a run ends, if that fits in an `i64`.
fn end(r: &TypeMapEntry) -> Option<i64> {
    r.offset.checked_add(r.size.checked_mul(r.count)?)
}

/// Type-map arithmetic on values from the target, which may overflow.
fn add(a: i64, b: i64) -> Result<i64, HandleError> {
    a.checked_add(b).ok_or_else(overflow)
}

fn mul(a: i64, b: i64) -> Result<i64, HandleError> {
    a.checked_mul(b).ok_or_else(overflow)
}

fn overflow() -> HandleError {
    HandleError::Unsupported("the type map's offsets overflow 64 bits".to_string())
}

/// The runs in offset order, neighbours of one type merged.
fn sorted(mut runs: Vec<TypeMapEntry>) -> Vec<TypeMapEntry> {
    runs.sort_by_key(|r| r.offset);
    let mut out: Vec<TypeMapEntry> = Vec::with_capacity(runs.len());
    for r in runs {
        match out.last_mut() {
            Some(last)
                if last.datatype == r.datatype
                    && last.size == r.size
                    && end(last) == Some(r.offset) =>
            {
                last.count = last.count.saturating_add(r.count);
            }
            _ => out.push(r),
        }
    }
    out
}

/// The bytes of `[lb, ub)` no run covers.
fn holes(runs: &[TypeMapEntry], lb: i64, ub: i64) -> Vec<Hole> {
    let mut spans: Vec<(i64, i64)> = runs
        .iter()
        .map(|r| (r.offset, end(r).unwrap_or(i64::MAX)))
        .collect();
    spans.sort_unstable();
    let mut out = Vec::new();
    let mut covered = lb;
    for (start, end) in spans {
        if start > covered && covered < ub {
            out.push(Hole {
                offset: covered,
                length: start.min(ub) - covered,
            });
        }
        covered = covered.max(end);
    }
    if covered < ub {
        out.push(Hole {
            offset: covered,
            length: ub - covered,
        });
    }
    out
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
    let mut reader = Reader {
        m,
        cache: HashMap::new(),
        budget: WORK,
    };
    let this = reader.read_at(addr, raw);
    let (constructor, type_map, holes_found) = match this {
        Err(e) => {
            let why = e.to_string();
            (
                Availability::not_available(why.clone()),
                Availability::not_available(why.clone()),
                Availability::not_available(why),
            )
        }
        Ok(t) => {
            reader.cache.insert(raw, t.clone());
            let constructor = reader.constructor(&t, 0).into();
            reader.budget = WORK;
            let mut runs = Runs {
                runs: Vec::new(),
                max: MAX_RUNS.min(ctx.limits.max_list_len),
            };
            match reader.map(&t, 0, 0, &mut runs) {
                Ok(()) => {
                    let entries = sorted(runs.runs);
                    let h = holes(&entries, t.lb, t.ub);
                    (
                        constructor,
                        Availability::Value(TypeMap { entries }),
                        Availability::Value(h),
                    )
                }
                Err(e) => (
                    constructor,
                    Availability::not_available(e.to_string()),
                    Availability::not_available(e.to_string()),
                ),
            }
        }
    };
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
        holes: holes_found,
        ongoing_operations: Availability::not_available(
            "MPICH's requests keep their datatype only in device-private fields",
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(offset: i64, datatype: &str, size: i64, count: i64) -> TypeMapEntry {
        TypeMapEntry {
            offset,
            datatype: datatype.to_string(),
            size,
            count,
        }
    }

    #[test]
    fn holes_are_the_uncovered_bytes_of_the_extent() {
        // struct { char c; double d; int i; } on LP64: 0..1, 8..16, 16..20.
        let runs = [
            run(0, "MPI_CHAR", 1, 1),
            run(8, "MPI_DOUBLE", 8, 1),
            run(16, "MPI_INT", 4, 1),
        ];
        assert_eq!(
            holes(&runs, 0, 24),
            [
                Hole {
                    offset: 1,
                    length: 7
                },
                Hole {
                    offset: 20,
                    length: 4
                }
            ]
        );
        assert!(holes(&[run(0, "MPI_INT", 4, 4)], 0, 16).is_empty());
        // Overlaps and out-of-order runs.
        let runs = [run(4, "MPI_INT", 4, 2), run(0, "MPI_INT", 4, 2)];
        assert!(holes(&runs, 0, 12).is_empty());
    }

    #[test]
    fn neighbouring_runs_merge_when_sorted() {
        let runs = vec![
            run(8, "MPI_INT", 4, 1),
            run(0, "MPI_INT", 4, 2),
            run(12, "MPI_CHAR", 1, 1),
        ];
        assert_eq!(
            sorted(runs),
            [run(0, "MPI_INT", 4, 3), run(12, "MPI_CHAR", 1, 1)]
        );
    }
}
