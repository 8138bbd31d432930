//! How the generator lays out a synthetic process with its own code (not
//! the decoders'): [`Heap`], bytes written field by field in the target's
//! order; [`SpecLayout`], the values of a bent layout (synthetic, or a real
//! build's from its DWARF); and [`Objects`], a process's objects written
//! member by member through such a layout.

use mpidd_fuzz::bent::{LayoutSpec, Values};
use mpidd_fuzz::{Process, OBJECT};
use mpidd_read::{SymbolTable, SyntheticMemory, TypeOracle};
use mpidd_types::{ByteOrder, TargetAbi, TargetAddr};

/// Bytes laid out in one region at a base address, written field by field
/// in the target's order with the generator's own code (not the decoder's).
pub struct Heap {
    pub abi: TargetAbi,
    pub base: u64,
    pub bytes: Vec<u8>,
}

impl Heap {
    /// Nothing yet, at `base` in a process of `abi`.
    pub fn new(abi: TargetAbi, base: u64) -> Self {
        Heap {
            abi,
            base,
            bytes: Vec::new(),
        }
    }

    /// `len` zero bytes, 16-byte aligned; their address.
    pub fn alloc(&mut self, len: u64) -> u64 {
        while !self.bytes.len().is_multiple_of(16) {
            self.bytes.push(0);
        }
        let at = self.base + self.bytes.len() as u64;
        self.bytes.resize(self.bytes.len() + len as usize, 0);
        at
    }

    /// Writes the low `width` bytes of `value` at `at`.
    pub fn put(&mut self, at: u64, value: u64, width: usize) {
        let mut b = value.to_le_bytes()[..width].to_vec();
        if self.abi.byte_order == ByteOrder::Big {
            b.reverse();
        }
        let i = (at - self.base) as usize;
        self.bytes[i..i + width].copy_from_slice(&b);
    }

    /// Writes a word of the target at `at`.
    pub fn word(&mut self, at: u64, value: u64) {
        self.put(at, value, self.abi.address_bytes());
    }

    /// A NUL-terminated copy of `s`.
    pub fn text(&mut self, s: &str) -> u64 {
        let at = self.alloc(s.len() as u64 + 1);
        let i = (at - self.base) as usize;
        self.bytes[i..i + s.len()].copy_from_slice(s.as_bytes());
        at
    }
}

/// Offsets, widths and enumerator values of a bent layout (MPICH's handle
/// objects, Open MPI's ob1 structures), one per entry of its spec.
pub struct SpecLayout {
    pub spec: &'static LayoutSpec,
    pub values: Values,
}

impl SpecLayout {
    /// The synthetic defaults of `spec` for pointers of `word` bytes.
    pub fn synthetic(spec: &'static LayoutSpec, word: u64) -> Self {
        SpecLayout {
            spec,
            values: spec.defaults(word),
        }
    }

    /// The (offset or size, width) of a member or, with none, of the type
    /// `ty`; `None` when the layout lacks it.
    pub fn entry(&self, ty: &str, member: Option<&str>) -> Option<(u64, u64)> {
        let i = self
            .spec
            .default
            .iter()
            .position(|e| e.0 == ty && e.1 == member)
            .unwrap_or_else(|| panic!("no layout entry {ty}/{member:?}"));
        self.values[i]
    }

    /// The size of `ty`.
    pub fn size(&self, ty: &str) -> u64 {
        self.entry(ty, None)
            .unwrap_or_else(|| panic!("the layout has no type {ty}"))
            .0
    }

    /// The value of the enumerator `name` (0 when the layout lacks it).
    pub fn en(&self, name: &str) -> u64 {
        let i = self
            .spec
            .enumerators
            .iter()
            .position(|e| e.1 == name)
            .unwrap_or_else(|| panic!("no enumerator {name}"));
        self.values[self.spec.default.len() + i].map_or(0, |v| v.0)
    }

    /// The values `oracle` gives for every entry of `spec` (sizes, member
    /// offsets and widths, enumerators), and the entries it lacks.
    pub fn from_oracle(spec: &'static LayoutSpec, oracle: &TypeOracle) -> (Self, Vec<String>) {
        let mut values = Vec::new();
        let mut missing = Vec::new();
        for &(t, m, _, _) in spec.default {
            let v = match m {
                Some(m) => oracle
                    .offset_of(t, m)
                    .ok()
                    .and_then(|f| Some((f.offset, f.size?))),
                None => oracle.find_type(t).ok().map(|l| (l.size, 0)),
            };
            if v.is_none() {
                missing.push(format!("{t}/{}", m.unwrap_or("(size)")));
            }
            values.push(v);
        }
        for &(e, n, _) in spec.enumerators {
            let v = oracle.find_type(e).ok().and_then(|l| {
                l.enumerators
                    .iter()
                    .find(|x| x.name == n)
                    .map(|x| (x.value as u64, 0))
            });
            if v.is_none() {
                missing.push(format!("{e}::{n}"));
            }
            values.push(v);
        }
        (SpecLayout { spec, values }, missing)
    }
}

/// A synthetic process's objects written through a [`SpecLayout`].
pub struct Objects<'a> {
    pub l: &'a SpecLayout,
    pub h: Heap,
    pub symbols: SymbolTable,
}

impl<'a> Objects<'a> {
    /// No objects yet, at `base` in a process of `abi`, whose symbols are
    /// all defined in [`OBJECT`].
    pub fn new(l: &'a SpecLayout, abi: TargetAbi, base: u64) -> Self {
        let mut symbols = SymbolTable::new();
        symbols.add_object(OBJECT);
        Objects {
            l,
            h: Heap::new(abi, base),
            symbols,
        }
    }

    /// The process the objects make: one segment, at the base.
    pub fn finish(self) -> Process {
        assert!(
            self.h.bytes.len() <= mpidd_fuzz::MAX_SEGMENT_LEN,
            "a seed too big: {} bytes",
            self.h.bytes.len()
        );
        let mut memory = SyntheticMemory::new(self.h.abi);
        memory.map(TargetAddr(self.h.base), self.h.bytes);
        Process {
            memory,
            symbols: self.symbols,
        }
    }

    /// Writes `value` to `member` of the `ty` at `obj`, in the member's
    /// width (nothing when the layout lacks the member).
    pub fn set(&mut self, obj: u64, ty: &str, member: &str, value: u64) {
        if let Some((off, width)) = self.l.entry(ty, Some(member)) {
            self.h.put(obj + off, value, width.min(8) as usize);
        }
    }

    /// Writes `s` into the `char` array `member` of the `ty` at `obj`,
    /// cut to leave its NUL.
    pub fn chars(&mut self, obj: u64, ty: &str, member: &str, s: &str) {
        if let Some((off, width)) = self.l.entry(ty, Some(member)) {
            let i = (obj + off - self.h.base) as usize;
            let n = s.len().min(width as usize - 1);
            self.h.bytes[i..i + n].copy_from_slice(&s.as_bytes()[..n]);
        }
    }

    /// Defines the symbol `name` of `size` bytes at `at`.
    pub fn symbol(&mut self, name: &str, at: u64, size: u64) {
        self.symbols.insert(OBJECT, name, TargetAddr(at), size);
    }

    /// An array of `n` objects of `ty` under the symbol `name`.
    pub fn array(&mut self, name: &str, ty: &str, n: u64) -> u64 {
        let size = self.l.size(ty) * n;
        let at = self.h.alloc(size.max(1));
        self.symbol(name, at, size);
        at
    }

    /// A NUL-terminated copy of `s`.
    pub fn text(&mut self, s: &str) -> u64 {
        self.h.text(s)
    }

    /// An array of the target's words.
    pub fn words(&mut self, ws: &[u64]) -> u64 {
        let w = self.h.abi.address_bytes() as u64;
        let at = self.h.alloc(w * ws.len() as u64);
        for (i, &v) in ws.iter().enumerate() {
            self.h.word(at + i as u64 * w, v);
        }
        at
    }

    /// An array of `int`s.
    pub fn ints(&mut self, vs: &[i32]) -> u64 {
        let at = self.h.alloc(4 * vs.len() as u64);
        for (i, &v) in vs.iter().enumerate() {
            self.h.put(at + i as u64 * 4, v as u32 as u64, 4);
        }
        at
    }
}
