//! Synthetic target processes: memory segments and symbols, in a byte
//! format that the targets parse and the seed generator writes.
//!
//! The format is deliberately simple and forgiving: every field is
//! little-endian, and a field cut short by the end of the input reads as
//! zero. A mutated input is therefore always some process, and the fuzzer
//! spends its time in the decoders instead of in our own format's errors.
//!
//! ```text
//! process   := abi:u8 nseg:u8 segment{nseg % 9} nsym:u8 symbol{nsym % 33}
//! segment   := addr:u64 len:u32 bytes{min(len, 65536, what is left)}
//! symbol    := name:u8 seg:u8 offset:u64 size:u32
//! ```
//!
//! `name` indexes the target's list of symbol names (modulo its length).
//! A symbol's address is `offset` past the start of segment `seg`, or
//! `offset` itself when `seg` names no segment: symbols stay inside the
//! memory they were made for while the fuzzer moves segments around.

use mpidd_read::{ReadError, Symbol, SymbolSource, SymbolTable, SyntheticMemory, TargetMemory};
use mpidd_types::{TargetAbi, TargetAddr};

use crate::abi::{abi_from, abi_selector};
use crate::cursor::Cursor;

/// Most segments in one process.
pub const MAX_SEGMENTS: usize = 8;
/// Most bytes in one segment.
pub const MAX_SEGMENT_LEN: usize = 1 << 16;
/// Most symbols in one process.
pub const MAX_SYMBOLS: usize = 32;
/// The object every synthetic symbol is defined in.
pub const OBJECT: &str = "/fuzz/libtarget.so";

/// A synthetic process: memory and symbols, as the readers take them.
#[derive(Clone, Debug)]
pub struct Process {
    /// Its memory.
    pub memory: SyntheticMemory,
    /// Its symbols.
    pub symbols: SymbolTable,
}

impl TargetMemory for Process {
    fn abi(&self) -> TargetAbi {
        self.memory.abi()
    }

    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        self.memory.read_into(addr, buf)
    }
}

impl SymbolSource for Process {
    fn lookup(&self, name: &str) -> Option<Symbol> {
        self.symbols.lookup(name)
    }

    fn searched_objects(&self) -> Vec<String> {
        self.symbols.searched_objects()
    }
}

impl Process {
    /// Reads one process in the format above; `names` are the symbol names
    /// the target knows.
    pub fn parse(c: &mut Cursor<'_>, names: &[&str]) -> Process {
        let abi = abi_from(c.u8());
        let mut memory = SyntheticMemory::new(abi);
        let mut starts = Vec::new();
        for _ in 0..usize::from(c.u8()) % (MAX_SEGMENTS + 1) {
            let addr = c.u64();
            let len = (c.u32() as usize).min(MAX_SEGMENT_LEN);
            memory.map(TargetAddr(addr), c.take(len).to_vec());
            starts.push(addr);
        }
        let mut symbols = SymbolTable::new();
        symbols.add_object(OBJECT);
        for _ in 0..usize::from(c.u8()) % (MAX_SYMBOLS + 1) {
            let name = names[usize::from(c.u8()) % names.len()];
            let seg = usize::from(c.u8());
            let offset = c.u64();
            let size = u64::from(c.u32());
            let addr = match starts.get(seg) {
                Some(start) => start.wrapping_add(offset),
                None => offset,
            };
            symbols.insert(OBJECT, name, TargetAddr(addr), size);
        }
        Process { memory, symbols }
    }

    /// Writes this process in the format above, for seeds. Symbols whose
    /// name is not in `names` are left out; every segment must be at most
    /// [`MAX_SEGMENT_LEN`] bytes and there must be at most
    /// [`MAX_SEGMENTS`] of them, [`MAX_SYMBOLS`] symbols.
    pub fn encode(&self, names: &[&str], out: &mut Vec<u8>) {
        out.push(abi_selector(self.memory.abi()));
        let segments: Vec<(TargetAddr, &[u8])> = self.memory.segments().collect();
        assert!(
            segments.len() <= MAX_SEGMENTS,
            "too many segments for a seed"
        );
        out.push(segments.len() as u8);
        for (addr, bytes) in &segments {
            assert!(
                bytes.len() <= MAX_SEGMENT_LEN,
                "segment too long for a seed"
            );
            out.extend_from_slice(&addr.0.to_le_bytes());
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(bytes);
        }
        let symbols: Vec<(usize, &Symbol)> = self
            .symbols
            .iter()
            .filter_map(|s| Some((names.iter().position(|n| *n == s.name)?, s)))
            .collect();
        assert!(symbols.len() <= MAX_SYMBOLS, "too many symbols for a seed");
        out.push(symbols.len() as u8);
        for (name, sym) in symbols {
            let seg = segments
                .iter()
                .position(|(a, b)| a.0 <= sym.addr.0 && sym.addr.0 - a.0 <= b.len() as u64);
            let (seg, offset) = match seg {
                Some(i) => (i as u8, sym.addr.0 - segments[i].0 .0),
                None => (u8::MAX, sym.addr.0),
            };
            out.push(name as u8);
            out.push(seg);
            out.extend_from_slice(&offset.to_le_bytes());
            out.extend_from_slice(&(sym.size.min(u64::from(u32::MAX)) as u32).to_le_bytes());
        }
    }
}
