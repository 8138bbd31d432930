//! Reads gdb's `.gdb_index` name index (versions 7 to 9), as written by
//! `gdb-add-index`, `gold --gdb-index` and `lld --gdb-index`.
//!
//! The index maps a name to the compile units that define something of that
//! name, and what kind of thing. It is always little-endian. Every number in
//! it is checked against the section's size, and the hash probe stops after
//! visiting each slot once, so a corrupt index gives no hits rather than a
//! panic or an endless loop.

/// A symbol kind in the CU vectors of version 7 and later.
const KIND_TYPE: u32 = 1;

/// A parsed `.gdb_index`.
pub(crate) struct GdbIndex<'a> {
    version: u32,
    cu_list: &'a [u8],
    symbols: &'a [u8],
    pool: &'a [u8],
}

fn word(data: &[u8], at: usize) -> Option<u32> {
    let bytes = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

/// gdb's `mapped_index_string_hash` for index versions 5 and later.
fn hash(name: &str) -> u32 {
    name.bytes().fold(0u32, |r, c| {
        r.wrapping_mul(67)
            .wrapping_add(u32::from(c.to_ascii_lowercase()))
            .wrapping_sub(113)
    })
}

impl<'a> GdbIndex<'a> {
    /// Parses the header; `Err` says why the index is unusable.
    pub(crate) fn parse(data: &'a [u8]) -> Result<Self, String> {
        let version = word(data, 0).ok_or("shorter than its header")?;
        // Version 9 put a shortcut table before the constant pool.
        let pool_slot = match version {
            7 | 8 => 5,
            9 => 6,
            v => return Err(format!("version {v} is not read (7 to 9 are)")),
        };
        let offset = |slot: usize| -> Result<usize, String> {
            let value = word(data, slot * 4).ok_or("shorter than its header")?;
            let value = usize::try_from(value).map_err(|e| e.to_string())?;
            if value > data.len() {
                return Err(format!("offset {value:#x} past its end"));
            }
            Ok(value)
        };
        let cu_start = offset(1)?;
        let types_start = offset(2)?;
        let symbols_start = offset(4)?;
        // The hash table ends where the next table (pool or shortcuts) starts.
        let symbols_end = offset(5)?;
        let pool_start = offset(pool_slot)?;
        let slice = |start: usize, end: usize| {
            data.get(start..end)
                .ok_or_else(|| format!("table {start:#x}..{end:#x} is out of order"))
        };
        let symbols = slice(symbols_start, symbols_end)?;
        let slots = symbols.len() / 8;
        if !slots.is_power_of_two() {
            return Err(format!("{slots} hash slots, not a power of two"));
        }
        Ok(GdbIndex {
            version,
            cu_list: slice(cu_start, types_start)?,
            symbols,
            pool: slice(pool_start, data.len())?,
        })
    }

    /// The `.debug_info` offset of compile unit number `index`.
    pub(crate) fn compile_unit(&self, index: u32) -> Option<u64> {
        let at = usize::try_from(index).ok()?.checked_mul(16)?;
        let bytes = self.cu_list.get(at..at.checked_add(8)?)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    /// The compile units that define a type named `name`, in index order.
    /// Type units (numbered after the compile units) are left out.
    pub(crate) fn type_units_of(&self, name: &str) -> Vec<u32> {
        let slots = self.symbols.len() / 8;
        let Some(mask) = u32::try_from(slots).ok().and_then(|s| s.checked_sub(1)) else {
            return Vec::new();
        };
        let h = hash(name);
        let mut slot = h & mask;
        let step = (h.wrapping_mul(17) & mask) | 1;
        for _ in 0..slots {
            let at = slot as usize * 8;
            let (Some(name_at), Some(vec_at)) =
                (word(self.symbols, at), word(self.symbols, at + 4))
            else {
                return Vec::new();
            };
            if name_at == 0 && vec_at == 0 {
                return Vec::new();
            }
            if self.string(name_at) == Some(name.as_bytes()) {
                return self.cu_vector(vec_at);
            }
            slot = slot.wrapping_add(step) & mask;
        }
        Vec::new()
    }

    fn string(&self, at: u32) -> Option<&'a [u8]> {
        let rest = self.pool.get(usize::try_from(at).ok()?..)?;
        let len = rest.iter().position(|&b| b == 0)?;
        Some(&rest[..len])
    }

    fn cu_vector(&self, at: u32) -> Vec<u32> {
        let Ok(at) = usize::try_from(at) else {
            return Vec::new();
        };
        let Some(count) = word(self.pool, at) else {
            return Vec::new();
        };
        let cus = self.cu_list.len() / 16;
        let mut out = Vec::new();
        // The count is bounded by the pool: each entry takes four bytes.
        for i in 0..count as usize {
            let Some(entry) = i
                .checked_mul(4)
                .and_then(|o| o.checked_add(at + 4))
                .and_then(|o| word(self.pool, o))
            else {
                break;
            };
            let cu = entry & 0x00ff_ffff;
            let kind = (entry >> 28) & 7;
            let is_type = self.version < 7 || kind == KIND_TYPE || kind == 0;
            if is_type && (cu as usize) < cus && !out.contains(&cu) {
                out.push(cu);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a version-8 index with one CU and the given names in slots
    /// chosen by the hash, independently of the reader's probe code.
    fn build(names: &[(&str, &[u32])], slots: u32) -> Vec<u8> {
        let header = 6 * 4;
        let cu_list = [0x10u64.to_le_bytes(), 0x40u64.to_le_bytes()].concat();
        let mut table = vec![0u8; slots as usize * 8];
        let mut pool = Vec::new();
        let mut placed = Vec::new();
        for (name, cus) in names {
            let vec_at = pool.len() as u32;
            pool.extend((cus.len() as u32).to_le_bytes());
            for cu in *cus {
                pool.extend((cu | (KIND_TYPE << 28)).to_le_bytes());
            }
            let name_at = pool.len() as u32;
            pool.extend(name.as_bytes());
            pool.push(0);
            let h = hash(name);
            let mut slot = h & (slots - 1);
            while placed.contains(&slot) {
                slot = (slot + ((h.wrapping_mul(17) & (slots - 1)) | 1)) & (slots - 1);
            }
            placed.push(slot);
            let at = slot as usize * 8;
            table[at..at + 4].copy_from_slice(&name_at.to_le_bytes());
            table[at + 4..at + 8].copy_from_slice(&vec_at.to_le_bytes());
        }
        let cu_at = header;
        let sym_at = cu_at + cu_list.len();
        let pool_at = sym_at + table.len();
        let mut data = Vec::new();
        for w in [8, cu_at, sym_at, sym_at, sym_at, pool_at] {
            data.extend((w as u32).to_le_bytes());
        }
        data.extend(cu_list);
        data.extend(table);
        data.extend(pool);
        data
    }

    #[test]
    fn finds_names_and_their_units() {
        let data = build(&[("MPIR_Comm", &[0]), ("MPIR_Request", &[0, 0])], 8);
        let index = GdbIndex::parse(&data).unwrap();
        assert_eq!(index.type_units_of("MPIR_Comm"), vec![0]);
        assert_eq!(index.type_units_of("MPIR_Request"), vec![0]);
        assert!(index.type_units_of("mpir_comm").is_empty());
        assert!(index.type_units_of("absent").is_empty());
        assert_eq!(index.compile_unit(0), Some(0x10));
        assert_eq!(index.compile_unit(1), None);
    }

    #[test]
    fn a_full_table_without_the_name_ends_the_probe() {
        let names: Vec<String> = (0..4).map(|i| format!("t{i}")).collect();
        let entries: Vec<(&str, &[u32])> =
            names.iter().map(|n| (n.as_str(), &[0u32][..])).collect();
        let data = build(&entries, 4);
        let index = GdbIndex::parse(&data).unwrap();
        assert!(index.type_units_of("missing").is_empty());
        assert_eq!(index.type_units_of("t3"), vec![0]);
    }

    #[test]
    fn corrupt_headers_are_refused_and_truncations_give_no_hits() {
        assert!(GdbIndex::parse(&[]).is_err());
        assert!(GdbIndex::parse(&6u32.to_le_bytes()).is_err());
        let data = build(&[("x", &[0])], 8);
        for len in 0..data.len() {
            if let Ok(index) = GdbIndex::parse(&data[..len]) {
                let _ = index.type_units_of("x");
            }
        }
        let mut bad = data.clone();
        bad[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(GdbIndex::parse(&bad).is_err());
    }
}
