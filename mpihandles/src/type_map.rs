//! Constructors and type maps of derived datatypes, whatever the
//! implementation: from a datatype's envelope and contents (its combiner
//! and the arguments of the call that built it, as `MPI_Type_get_contents`
//! gives them) down to predefined types, as the MPI standard defines each
//! combiner. Holes are the bytes of `[lb, ub)` that no entry covers.
//! Subarray and darray types are not expanded.
//!
//! An implementation supplies a [`TypeSource`]: how to read one datatype
//! by its handle. Types may share arguments, so a tree of a few objects can
//! stand for exponentially many nodes; a budget of work keeps any target's
//! cost bounded, and a depth limit ends contents that refer back to
//! themselves.

use std::collections::HashMap;
use std::hash::Hash;

use crate::error::HandleError;
use crate::model::{
    Availability, Constructor, HandleRef, Hole, TypeArgument, TypeMap, TypeMapEntry,
};

/// How deep constructors are followed: far beyond any real type, while a
/// corrupt target whose contents refer back to themselves ends.
const MAX_DEPTH: u32 = 32;
/// Most runs a type map is built with (and no more than
/// [`Limits::max_list_len`](mpidd_read::Limits::max_list_len)).
const MAX_RUNS: u64 = 1 << 16;
/// Most constructors shown plus blocks expanded for one view.
const WORK: u64 = 1 << 20;

/// One datatype as read.
#[derive(Clone, Debug)]
pub(crate) struct TypeInfo<H> {
    pub(crate) name: String,
    pub(crate) size: i64,
    pub(crate) extent: i64,
    pub(crate) lb: i64,
    pub(crate) ub: i64,
    /// Predefined: a leaf of every type map.
    pub(crate) predefined: bool,
    pub(crate) contents: Option<Contents<H>>,
}

/// A derived type's envelope and contents.
#[derive(Clone, Debug)]
pub(crate) struct Contents<H> {
    /// `MPI_COMBINER_...`.
    pub(crate) combiner: String,
    pub(crate) ints: Vec<i64>,
    pub(crate) aints: Vec<i64>,
    pub(crate) counts: Vec<i64>,
    pub(crate) types: Vec<H>,
}

/// Reads datatypes of one implementation by handle.
pub(crate) trait TypeSource {
    /// What names a datatype: MPICH's int handle, Open MPI's pointer.
    type Handle: Copy + Eq + Hash;

    /// The datatype `h`.
    fn read(&self, h: Self::Handle) -> Result<TypeInfo<Self::Handle>, HandleError>;

    /// A reference to the datatype `h`, as a constructor argument.
    fn reference(&self, h: Self::Handle) -> HandleRef;
}

/// A datatype's constructor, type map and holes, each with the reason
/// when it cannot be given.
pub(crate) type Expansion = (
    Availability<Constructor>,
    Availability<TypeMap>,
    Availability<Vec<Hole>>,
);

/// No part of an expansion, for the reason `e`.
fn unavailable(e: &HandleError) -> Expansion {
    let why = e.to_string();
    (
        Availability::not_available(why.clone()),
        Availability::not_available(why.clone()),
        Availability::not_available(why),
    )
}

/// Expands the constructors and type maps of one view's datatype, reading
/// each datatype once.
pub(crate) struct Expander<'s, S: TypeSource> {
    src: &'s S,
    cache: HashMap<S::Handle, TypeInfo<S::Handle>>,
    /// Work left: constructors shown and blocks expanded.
    budget: u64,
}

impl<'s, S: TypeSource> Expander<'s, S> {
    pub(crate) fn new(src: &'s S) -> Self {
        Expander {
            src,
            cache: HashMap::new(),
            budget: WORK,
        }
    }

    fn spend(&mut self) -> Result<(), HandleError> {
        if self.budget == 0 {
            return Err(HandleError::Unsupported(format!(
                "the type is too large to expand: more than {WORK} constructors and blocks"
            )));
        }
        self.budget -= 1;
        Ok(())
    }

    /// [`expand`](Self::expand) of the datatype `h` as the view already
    /// read it (`read`, so the object shown is read once), or each part's
    /// reason when it could not be read.
    pub(crate) fn expand_read(
        &mut self,
        h: S::Handle,
        read: Result<TypeInfo<S::Handle>, HandleError>,
        max_list_len: u64,
    ) -> Expansion {
        match read {
            Ok(t) => {
                self.cache.insert(h, t);
                self.expand(h, max_list_len)
            }
            Err(e) => unavailable(&e),
        }
    }

    fn info(&mut self, h: S::Handle) -> Result<TypeInfo<S::Handle>, HandleError> {
        if let Some(t) = self.cache.get(&h) {
            return Ok(t.clone());
        }
        let t = self.src.read(h)?;
        self.cache.insert(h, t.clone());
        Ok(t)
    }

    /// The constructor, type map and holes of the datatype `h`, each
    /// with the reason when it cannot be given.
    pub(crate) fn expand(&mut self, h: S::Handle, max_list_len: u64) -> Expansion {
        let t = match self.info(h) {
            Ok(t) => t,
            Err(e) => return unavailable(&e),
        };
        let constructor = self.constructor(&t, 0).into();
        self.budget = WORK;
        let mut runs = Runs {
            runs: Vec::new(),
            max: MAX_RUNS.min(max_list_len),
        };
        match self.map(&t, 0, 0, &mut runs) {
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

    /// The constructor of `t`, its type arguments' constructors within.
    fn constructor(
        &mut self,
        t: &TypeInfo<S::Handle>,
        depth: u32,
    ) -> Result<Constructor, HandleError> {
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
            let reference = self.src.reference(handle);
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
        t: &TypeInfo<S::Handle>,
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
        let child = |s: &mut Self, i: usize| -> Result<TypeInfo<S::Handle>, HandleError> {
            let h = *c.types.get(i).ok_or_else(|| {
                HandleError::Unsupported(format!("{} has no type argument {i}", c.combiner))
            })?;
            s.info(h)
        };
        // Appends `blocks` of `blocklen` copies of `inner`, block i at
        // `disp(i)` bytes.
        let blocks = |s: &mut Self,
                      inner: &TypeInfo<S::Handle>,
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

    /// A source of hand-made types keyed by small numbers.
    struct Types(HashMap<u32, TypeInfo<u32>>);

    impl TypeSource for Types {
        type Handle = u32;
        fn read(&self, h: u32) -> Result<TypeInfo<u32>, HandleError> {
            self.0
                .get(&h)
                .cloned()
                .ok_or_else(|| HandleError::Unsupported(format!("no type {h}")))
        }
        fn reference(&self, h: u32) -> HandleRef {
            HandleRef {
                kind: crate::model::HandleKind::Datatype,
                c_handle: crate::model::CHandle::Int(h as i32),
                predefined_name: None,
                name: None,
            }
        }
    }

    fn leaf(name: &str, size: i64) -> TypeInfo<u32> {
        TypeInfo {
            name: name.to_string(),
            size,
            extent: size,
            lb: 0,
            ub: size,
            predefined: true,
            contents: None,
        }
    }

    #[test]
    fn a_vector_of_ints_has_a_hole_between_blocks_and_a_type_that_contains_itself_ends() {
        let mut types = HashMap::new();
        types.insert(1, leaf("MPI_INT", 4));
        types.insert(
            2,
            TypeInfo {
                name: "v".to_string(),
                size: 12,
                extent: 20,
                lb: 0,
                ub: 20,
                predefined: false,
                contents: Some(Contents {
                    combiner: "MPI_COMBINER_VECTOR".to_string(),
                    ints: vec![3, 1, 2],
                    aints: vec![],
                    counts: vec![],
                    types: vec![1],
                }),
            },
        );
        // A contiguous type of itself: a corrupt target.
        types.insert(
            3,
            TypeInfo {
                name: "loop".to_string(),
                size: 4,
                extent: 4,
                lb: 0,
                ub: 4,
                predefined: false,
                contents: Some(Contents {
                    combiner: "MPI_COMBINER_CONTIGUOUS".to_string(),
                    ints: vec![1],
                    aints: vec![],
                    counts: vec![],
                    types: vec![3],
                }),
            },
        );
        let src = Types(types);
        let (c, map, holes) = Expander::new(&src).expand(2, 1 << 20);
        assert_eq!(c.value().unwrap().integers, [3, 1, 2]);
        let entries = &map.value().unwrap().entries;
        assert_eq!(entries.len(), 3);
        assert_eq!(
            holes.value().unwrap(),
            &[
                Hole {
                    offset: 4,
                    length: 4
                },
                Hole {
                    offset: 12,
                    length: 4
                }
            ]
        );
        let (c, map, _) = Expander::new(&src).expand(3, 1 << 20);
        assert!(
            c.value().is_some(),
            "the constructor nests to the depth limit"
        );
        assert!(map.reason().unwrap().contains("deeper"), "{map:?}");
    }
}
