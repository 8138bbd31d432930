//! The layout source of a library loaded by a debugger: the debugger's type
//! callbacks, completed by what MPICH declares
//! ([`mpich_declarations`](crate::mpich_declarations)) where the callbacks
//! cannot answer.
//!
//! A dotted member path is walked one member at a time: through a named
//! type by asking the debugger the member's offset, through an unnamed
//! union at offset 0, through an unnamed struct by C's layout rules over
//! its declared members. The last member's size comes from its declared
//! type, whose size the debugger gives when the type has a name.

use mpidd_read::{LayoutError, Layouts, Member};

use crate::mpich_declarations::{self as decl, Len, Ty};

/// What a debugger's type callbacks answer.
pub(crate) trait TypeCallbacks {
    /// `mqs_sizeof` of the type `mqs_find_type` finds by this name.
    fn type_size(&self, type_name: &str) -> Result<u64, LayoutError>;
    /// `mqs_field_offset` of one member (no dots) of a named type.
    fn field_offset(&self, type_name: &str, member: &str) -> Result<u64, LayoutError>;
    /// The sizes of `int` and of a pointer (`mqs_get_type_sizes`), known
    /// once the debugger has a process to ask about.
    fn scalar_sizes(&self) -> Option<ScalarSizes>;
}

/// The target's `sizeof (int)` and `sizeof (void *)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ScalarSizes {
    pub(crate) int: u64,
    pub(crate) pointer: u64,
}

/// [`Layouts`] over a debugger's callbacks and MPICH's declarations.
pub(crate) struct DeclaredLayouts<C> {
    pub(crate) callbacks: C,
}

/// Where a path's walk is.
#[derive(Clone, Copy)]
enum Place<'a> {
    Named(&'a str),
    Union(&'static [(&'static str, Ty)]),
    Struct(&'static [(&'static str, Ty)]),
    /// A [`Ty::Tail`] struct and its size.
    Tail(&'static [(&'static str, Ty)], u64),
    Leaf,
}

/// The member a path names.
struct Resolved<'a> {
    offset: u64,
    ty: Ty,
    /// The named type holding the member directly, and the member's offset
    /// in it, when the member's place is a named type.
    parent: Option<(&'a str, u64)>,
}

fn align_up(n: u64, align: u64) -> Option<u64> {
    n.checked_add(align.checked_sub(1)?)
        .map(|n| n / align * align)
}

impl<C: TypeCallbacks> DeclaredLayouts<C> {
    fn resolve<'a>(&self, type_name: &'a str, path: &'a str) -> Result<Resolved<'a>, LayoutError> {
        let err = |reason: String| LayoutError::new(type_name, Some(path), reason);
        let mut place = Place::Named(type_name);
        let mut offset = 0u64;
        let mut found = None;
        let mut walked = String::new();
        for name in path.split('.') {
            let mut parent = None;
            let (off, ty) = match place {
                Place::Named(n) => {
                    let ty = decl::member_type(n, name).ok_or_else(|| {
                        err(format!(
                            "the debugger's callbacks do not give the type of `{n}.{name}`, and \
                             MPICH's declarations known to this library do not include it"
                        ))
                    })?;
                    let off = self
                        .callbacks
                        .field_offset(n, name)
                        .map_err(|e| err(e.to_string()))?;
                    parent = Some((n, off));
                    (off, ty)
                }
                Place::Union(members) => (0, self.declared(members, name, &walked, &err)?),
                Place::Struct(members) => self
                    .forward(members, name)
                    .map_err(|why| err(format!("`{walked}`: {why}")))?,
                Place::Tail(members, size) => self
                    .backward(members, size, name)
                    .map_err(|why| err(format!("`{walked}`: {why}")))?,
                Place::Leaf => {
                    return Err(err(format!("`{walked}` is not a struct or union")));
                }
            };
            offset = offset
                .checked_add(off)
                .ok_or_else(|| err("its offset overflows".to_string()))?;
            place = match ty {
                Ty::Named(n) => Place::Named(n),
                Ty::Union(members) => Place::Union(members),
                Ty::Struct(members) => Place::Struct(members),
                Ty::Tail(members) => {
                    let Some((holder, at)) = parent else {
                        return Err(err(format!(
                            "`{walked}.{name}` is declared as the tail of a named type, but is not \
                             a member of one"
                        )));
                    };
                    let size = self
                        .callbacks
                        .type_size(holder)
                        .map_err(|e| err(e.to_string()))?
                        .checked_sub(at)
                        .ok_or_else(|| err(format!("`{name}` lies past the end of `{holder}`")))?;
                    Place::Tail(members, size)
                }
                _ => Place::Leaf,
            };
            if !walked.is_empty() {
                walked.push('.');
            }
            walked.push_str(name);
            found = Some(Resolved { offset, ty, parent });
        }
        found.ok_or_else(|| err("an empty path".to_string()))
    }

    fn declared(
        &self,
        members: &[(&str, Ty)],
        name: &str,
        walked: &str,
        err: &dyn Fn(String) -> LayoutError,
    ) -> Result<Ty, LayoutError> {
        decl::find(members, name)
            .ok_or_else(|| err(format!("`{walked}` is declared with no member `{name}`")))
    }

    /// The offset and type of `name` in an unnamed struct laid out from its
    /// start: each member at the next multiple of its alignment.
    fn forward(&self, members: &[(&str, Ty)], name: &str) -> Result<(u64, Ty), String> {
        let mut end = 0u64;
        for (n, ty) in members {
            let at = align_up(end, self.align(*ty)?).ok_or("its layout overflows")?;
            if *n == name {
                return Ok((at, *ty));
            }
            end = at
                .checked_add(self.size(*ty)?)
                .ok_or("its layout overflows")?;
        }
        Err(format!("it is declared with no member `{name}`"))
    }

    /// The offset and type of `name` in a [`Ty::Tail`] struct of `size`
    /// bytes: its declared members end it, with no padding between them.
    fn backward(&self, members: &[(&str, Ty)], size: u64, name: &str) -> Result<(u64, Ty), String> {
        let mut start = size;
        for (n, ty) in members.iter().rev() {
            start = start
                .checked_sub(self.size(*ty)?)
                .ok_or("its declared members are larger than it")?;
            if *n == name {
                return Ok((start, *ty));
            }
        }
        Err(format!("it is declared with no member `{name}`"))
    }

    fn scalars(&self) -> Result<ScalarSizes, String> {
        self.callbacks.scalar_sizes().ok_or_else(|| {
            "the sizes of int and pointers come from mqs_get_type_sizes, which needs a process"
                .to_string()
        })
    }

    /// The size of a declared type.
    fn size(&self, ty: Ty) -> Result<u64, String> {
        Ok(match ty {
            Ty::Int => self.scalars()?.int,
            Ty::Pointer => self.scalars()?.pointer,
            Ty::Exact(n) => n,
            Ty::Typedef(n) | Ty::Enum(n) | Ty::Named(n) => {
                self.callbacks.type_size(n).map_err(|e| e.to_string())?
            }
            Ty::Array(elem, Len::Fixed(n)) => self
                .size(*elem)?
                .checked_mul(n)
                .ok_or("the array's size overflows")?,
            Ty::Array(_, Len::Before(_)) => {
                return Err("an array whose length configure sets is sized only as a member".into())
            }
            Ty::Union(members) => {
                let mut size = 0;
                for (_, t) in members {
                    size = size.max(self.size(*t)?);
                }
                align_up(size, self.align(ty)?).ok_or("the union's size overflows")?
            }
            Ty::Struct(members) => {
                let mut end = 0u64;
                for (_, t) in members {
                    let (align, size) = (self.align(*t)?, self.size(*t)?);
                    end = align_up(end, align)
                        .and_then(|at| at.checked_add(size))
                        .ok_or("the struct's size overflows")?;
                }
                align_up(end, self.align(ty)?).ok_or("the struct's size overflows")?
            }
            Ty::Tail(_) => return Err("a tail struct is sized only by the type holding it".into()),
        })
    }

    /// The alignment of a declared type: an integer or pointer no wider
    /// than a pointer is aligned to its size on every ABI MPICH runs on;
    /// wider ones (an 8-byte integer on i386) and named structs are not
    /// laid out here.
    fn align(&self, ty: Ty) -> Result<u64, String> {
        match ty {
            Ty::Int | Ty::Pointer | Ty::Exact(_) | Ty::Typedef(_) | Ty::Enum(_) => {
                let size = self.size(ty)?;
                let pointer = self.scalars()?.pointer;
                if size == 0 || size > pointer || !size.is_power_of_two() {
                    return Err(format!(
                        "a {size}-byte integer's alignment depends on the ABI; the declarations \
                         lay out only integers no wider than a pointer"
                    ));
                }
                Ok(size)
            }
            Ty::Array(elem, _) => self.align(*elem),
            Ty::Union(members) | Ty::Struct(members) => {
                let mut align = 1;
                for (_, t) in members {
                    align = align.max(self.align(*t)?);
                }
                Ok(align)
            }
            Ty::Named(n) => Err(format!(
                "the alignment of `{n}` is neither declared nor given by the debugger"
            )),
            Ty::Tail(_) => Err("a tail struct is not laid out in another".to_string()),
        }
    }
}

impl<C: TypeCallbacks> Layouts for DeclaredLayouts<C> {
    fn size_of(&self, type_name: &str) -> Result<u64, LayoutError> {
        self.callbacks.type_size(type_name)
    }

    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        let r = self.resolve(type_name, path)?;
        let err = |why: String| LayoutError::new(type_name, Some(path), why);
        let (size, array_len) = match r.ty {
            Ty::Array(elem, len) => {
                let each = self.size(*elem).map_err(err)?;
                let n = match len {
                    Len::Fixed(n) => n,
                    Len::Before(next) => {
                        let Some((holder, at)) = r.parent else {
                            return Err(err(format!(
                                "its length is what fits before `{next}`, which needs the named \
                                 type holding it"
                            )));
                        };
                        let end = self.callbacks.field_offset(holder, next)?;
                        end.checked_sub(at)
                            .filter(|_| each > 0)
                            .map(|bytes| bytes / each)
                            .ok_or_else(|| {
                                err(format!("`{next}` does not follow it in `{holder}`"))
                            })?
                    }
                };
                let size = each
                    .checked_mul(n)
                    .ok_or_else(|| err("its size overflows".to_string()))?;
                (size, Some(n))
            }
            ty => (self.size(ty).map_err(err)?, None),
        };
        Ok(Member {
            offset: r.offset,
            size,
            array_len,
        })
    }

    // A member of a named type, with no dots, is the debugger's own
    // answer, declared or not: MPICH's CH3 decoder asks only those.
    fn member_offset(&self, type_name: &str, path: &str) -> Result<u64, LayoutError> {
        if path.contains('.') {
            Ok(self.resolve(type_name, path)?.offset)
        } else {
            self.callbacks.field_offset(type_name, path)
        }
    }

    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
        decl::enumerators(type_name).ok_or_else(|| {
            LayoutError::new(
                type_name,
                None,
                "the debugger's callbacks describe no enumerations, and MPICH's declarations \
                 known to this library do not include it",
            )
        })
    }

    fn member_enumerators(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, i128)>, LayoutError> {
        match self.resolve(type_name, path)?.ty {
            Ty::Enum(e) => self.enumerators(e),
            _ => Err(LayoutError::new(
                type_name,
                Some(path),
                "it is not declared as an enumeration",
            )),
        }
    }

    fn member_fields(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, Member)>, LayoutError> {
        Err(LayoutError::new(
            type_name,
            Some(path),
            "the debugger's callbacks list no members",
        ))
    }
}
