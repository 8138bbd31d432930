//! A layout the fuzzer bends, shared by the targets whose decoders take a
//! [`mpidd_read::LayoutTable`]: sizes, member offsets and widths, and
//! enumerator values, each entry changeable or removable by the input.

use mpidd_read::LayoutTable;

use crate::cursor::Cursor;

/// A member's width: fixed, or the target's pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    /// `n` bytes.
    Bytes(u64),
    /// A pointer of the target.
    Word,
    /// A `char[n]`.
    Chars(u64),
}

/// One entry's value: an offset or size and a width for a layout
/// entry, a value for an enumerator; `None` when removed.
pub type Values = Vec<Option<(u64, u64)>>;

/// Most overrides one input applies: enough for every entry's
/// offset and width (a real library's layout is one such list).
pub const MAX_OVERRIDES: usize = 512;

/// The entries of one layout and their defaults.
pub struct LayoutSpec {
    /// `(type, member, value, width)`: a member's offset and width, or
    /// with no member the type's size (its width unused).
    pub default: &'static [(&'static str, Option<&'static str>, u64, Width)],
    /// `(enumeration, enumerator, value)`.
    pub enumerators: &'static [(&'static str, &'static str, i128)],
    /// `(type, member, enumeration)`: the members whose enumerators
    /// the decoders ask for.
    pub member_enums: &'static [(&'static str, &'static str, &'static str)],
}

impl LayoutSpec {
    /// The default values for a target whose pointers are `word`
    /// bytes: [`LayoutSpec::default`] then
    /// [`LayoutSpec::enumerators`], one per entry.
    pub fn defaults(&self, word: u64) -> Values {
        self.default
            .iter()
            .map(|&(_, _, v, w)| {
                Some((
                    v,
                    match w {
                        Width::Bytes(n) | Width::Chars(n) => n,
                        Width::Word => word,
                    },
                ))
            })
            .chain(
                self.enumerators
                    .iter()
                    .map(|&(_, _, v)| Some((v as u64, 0))),
            )
            .collect()
    }

    /// Reads the overrides to the defaults for pointers of `word` bytes
    /// ([`parse_overrides`]; the entries are the layout's, then the
    /// enumerators).
    pub fn parse(&self, c: &mut Cursor<'_>, word: u64) -> Values {
        parse_overrides(c, self.defaults(word))
    }

    /// The table the overrides of the input make of the defaults for
    /// pointers of `word` bytes: [`LayoutSpec::parse`], then
    /// [`LayoutSpec::table`].
    pub fn read(&self, c: &mut Cursor<'_>, word: u64) -> LayoutTable {
        self.table(&self.parse(c, word))
    }

    /// The table of `values`.
    pub fn table(&self, values: &[Option<(u64, u64)>]) -> LayoutTable {
        let mut t = LayoutTable::default();
        let (layout, enums) = values.split_at(self.default.len());
        for (&(ty, member, _, _), v) in self.default.iter().zip(layout) {
            let Some((value, width)) = *v else { continue };
            match member {
                None => {
                    t.add_type(ty, value);
                }
                Some(m) => {
                    let sized = self
                        .default
                        .iter()
                        .zip(layout)
                        .any(|((t2, m2, _, _), v2)| *t2 == ty && m2.is_none() && v2.is_some());
                    if !sized {
                        continue;
                    }
                    match self.default.iter().find(|e| e.0 == ty && e.1 == member) {
                        Some((_, _, _, Width::Chars(_))) => {
                            t.add_array(ty, m, value, width, width);
                        }
                        _ => {
                            t.add_member(ty, m, value, width);
                        }
                    }
                }
            }
        }
        let mut names: Vec<&str> = self.enumerators.iter().map(|e| e.0).collect();
        names.dedup();
        for name in names {
            let list: Vec<(&str, i128)> = self
                .enumerators
                .iter()
                .zip(enums)
                .filter(|((e, _, _), _)| *e == name)
                .filter_map(|((_, n, _), v)| Some((*n, i128::from((*v)?.0 as i64))))
                .collect();
            t.add_enum(name, &list);
        }
        for &(ty, m, e) in self.member_enums {
            t.add_member_enum(ty, m, e);
        }
        t
    }

    /// Writes overrides that turn the defaults for `word` into
    /// `values`, for seeds.
    pub fn encode(&self, values: &[Option<(u64, u64)>], word: u64, out: &mut Vec<u8>) {
        encode_overrides(&self.defaults(word), values, out)
    }
}

/// Reads overrides to `values` off the input:
///
/// ```text
/// layout   := n:u16 override{n % 513}
/// override := entry:u16 what:u8 value:u64
/// ```
///
/// `entry` modulo the number of entries; `what` modulo 3: 0 sets the
/// offset, size or enumerator value, 1 the member's width, 2 removes the
/// entry (a type without a size is removed with all its members).
pub fn parse_overrides(c: &mut Cursor<'_>, mut values: Values) -> Values {
    let n = usize::from(c.u8()) | usize::from(c.u8()) << 8;
    for _ in 0..n % (MAX_OVERRIDES + 1) {
        let entry = (usize::from(c.u8()) | usize::from(c.u8()) << 8) % values.len();
        let what = c.u8() % 3;
        let value = c.u64();
        let v = &mut values[entry];
        *v = match (what, *v) {
            (0, Some((_, w))) => Some((value, w)),
            (1, Some((o, _))) => Some((o, value)),
            (0 | 1, None) => Some((value, value)),
            _ => None,
        };
    }
    values
}

/// Writes the overrides that turn `defaults` into `values`, for seeds
/// ([`parse_overrides`] reads them): what changed of each entry, and each
/// entry removed. An entry without a default stays as it is.
pub fn encode_overrides(
    defaults: &[Option<(u64, u64)>],
    values: &[Option<(u64, u64)>],
    out: &mut Vec<u8>,
) {
    let mut changes: Vec<(u16, u8, u64)> = Vec::new();
    for (i, (d, v)) in defaults.iter().zip(values).enumerate() {
        let i = i as u16;
        match (d, v) {
            (Some(d), Some(v)) => {
                if d.0 != v.0 {
                    changes.push((i, 0, v.0));
                }
                if d.1 != v.1 {
                    changes.push((i, 1, v.1));
                }
            }
            (Some(_), None) => changes.push((i, 2, 0)),
            (None, _) => {}
        }
    }
    assert!(
        changes.len() <= MAX_OVERRIDES,
        "too many layout changes for a seed"
    );
    out.extend_from_slice(&(changes.len() as u16).to_le_bytes());
    for (entry, what, value) in changes {
        out.extend_from_slice(&entry.to_le_bytes());
        out.push(what);
        out.extend_from_slice(&value.to_le_bytes());
    }
}
