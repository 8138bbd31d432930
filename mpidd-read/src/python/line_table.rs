//! The line a code object's instruction belongs to, from the three forms
//! CPython 3.9 to 3.13 keep that mapping in. Pure functions over the
//! table's bytes: a table read from a hostile target ends where its bytes
//! end, and every loop advances by at least one byte.

use super::python_layout::LineFormat;

/// The source line of the instruction at `instruction` (a byte offset for
/// [`LineFormat::Lnotab`], a code-unit index otherwise) in a code object
/// whose first line is `first_line` and whose line table is `table`.
/// `None` when the table gives the instruction no line, or does not reach
/// it. A negative `instruction` (a frame that has not started) is the
/// first line.
pub(crate) fn line_of(
    format: LineFormat,
    table: &[u8],
    first_line: i32,
    instruction: i64,
) -> Option<i32> {
    if instruction < 0 {
        return Some(first_line);
    }
    match format {
        LineFormat::Lnotab => lnotab(table, first_line, instruction),
        LineFormat::Linetable310 => linetable_310(table, first_line, instruction * 2),
        LineFormat::Locations => locations(table, first_line, instruction),
    }
}

/// 3.9: pairs of (byte-offset increment, signed line increment); the line
/// of an instruction is the sum of the increments of the pairs whose
/// offsets are at or before it.
fn lnotab(table: &[u8], first_line: i32, offset: i64) -> Option<i32> {
    let mut addr: i64 = 0;
    let mut line = first_line;
    for pair in table.chunks_exact(2) {
        addr += i64::from(pair[0]);
        if addr > offset {
            break;
        }
        line = line.wrapping_add(i32::from(pair[1] as i8));
    }
    Some(line)
}

/// 3.10: pairs of (byte length of a range, signed line delta), where a
/// delta of -128 says that the range has no line.
fn linetable_310(table: &[u8], first_line: i32, offset: i64) -> Option<i32> {
    let mut start: i64 = 0;
    let mut line = first_line;
    for pair in table.chunks_exact(2) {
        let delta = pair[1] as i8;
        let here = if delta == -128 {
            None
        } else {
            line = line.wrapping_add(i32::from(delta));
            Some(line)
        };
        let end = start + i64::from(pair[0]);
        if start <= offset && offset < end {
            return here;
        }
        start = end;
    }
    None
}

/// 3.11 on: entries of one header byte (bit 7 set; a 4-bit kind; the
/// range's length in code units minus one) followed by varints. Every kind
/// but "no location" carries a line delta, explicit or implied.
fn locations(table: &[u8], first_line: i32, index: i64) -> Option<i32> {
    let mut at = 0usize;
    let mut start: i64 = 0;
    let mut line = first_line;
    while at < table.len() {
        let header = table[at];
        at += 1;
        if header & 0x80 == 0 {
            // Not the start of an entry: the table is not one.
            return None;
        }
        let kind = (header >> 3) & 0x0f;
        let length = i64::from(header & 0x07) + 1;
        let delta: Option<i64> = match kind {
            15 => None,
            14 => {
                let d = read_svarint(table, &mut at)?;
                for _ in 0..3 {
                    read_varint(table, &mut at)?;
                }
                Some(d)
            }
            13 => Some(read_svarint(table, &mut at)?),
            10..=12 => {
                at += 2;
                Some(i64::from(kind) - 10)
            }
            _ => {
                at += 1;
                Some(0)
            }
        };
        if let Some(d) = delta {
            line = line.wrapping_add(d as i32);
        }
        let end = start + length;
        if start <= index && index < end {
            return delta.map(|_| line);
        }
        start = end;
    }
    None
}

/// An unsigned varint of 6-bit chunks, low chunk first, bit 6 saying
/// another follows. At most 64 bits are kept; longer ones are refused.
fn read_varint(table: &[u8], at: &mut usize) -> Option<u64> {
    let mut value: u64 = 0;
    let mut shift = 0u32;
    loop {
        let b = *table.get(*at)?;
        *at += 1;
        if shift >= 64 {
            return None;
        }
        value |= u64::from(b & 0x3f) << shift;
        shift += 6;
        if b & 0x40 == 0 {
            return Some(value);
        }
    }
}

/// A signed varint: the low bit is the sign of the magnitude above it.
fn read_svarint(table: &[u8], at: &mut usize) -> Option<i64> {
    let v = read_varint(table, at)?;
    let magnitude = (v >> 1) as i64;
    Some(if v & 1 == 1 { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lnotab_sums_the_increments_up_to_the_instruction() {
        // Offsets 0, 6, 10 start lines 10, 11, 13.
        let table = [0, 0, 6, 1, 4, 2];
        assert_eq!(line_of(LineFormat::Lnotab, &table, 10, 0), Some(10));
        assert_eq!(line_of(LineFormat::Lnotab, &table, 10, 5), Some(10));
        assert_eq!(line_of(LineFormat::Lnotab, &table, 10, 6), Some(11));
        assert_eq!(line_of(LineFormat::Lnotab, &table, 10, 12), Some(13));
    }

    #[test]
    fn linetable_310_has_ranges_without_lines() {
        // Bytes 0..4 line 5, 4..8 none, 8..12 line 7 (code units 0..6).
        let table = [4, 0, 4, 0x80, 4, 2];
        assert_eq!(line_of(LineFormat::Linetable310, &table, 5, 1), Some(5));
        assert_eq!(line_of(LineFormat::Linetable310, &table, 5, 2), None);
        assert_eq!(line_of(LineFormat::Linetable310, &table, 5, 5), Some(7));
        assert_eq!(line_of(LineFormat::Linetable310, &table, 5, 6), None);
    }

    #[test]
    fn locations_of_each_kind() {
        let table = [
            // Short form, 2 units, column byte: line stays 20.
            0x80 | 1,
            0x05,
            // One-line form +2, 1 unit, two column bytes: line 22.
            0x80 | (12 << 3),
            1,
            2,
            // No columns, delta -3 (svarint 7), 3 units: line 19.
            0x80 | (13 << 3) | 2,
            7,
            // No location, 1 unit.
            0x80 | (15 << 3),
            // Long form: +10 (svarint 20), end line, two columns; 1 unit.
            0x80 | (14 << 3),
            20,
            0,
            1,
            1,
        ];
        let l = |i| line_of(LineFormat::Locations, &table, 20, i);
        assert_eq!((l(0), l(1)), (Some(20), Some(20)));
        assert_eq!(l(2), Some(22));
        assert_eq!((l(3), l(5)), (Some(19), Some(19)));
        assert_eq!(l(6), None);
        assert_eq!(l(7), Some(29));
        assert_eq!(l(8), None);
    }

    #[test]
    fn a_frame_not_started_is_on_its_first_line() {
        assert_eq!(line_of(LineFormat::Locations, &[], 42, -1), Some(42));
    }

    proptest! {
        // Any bytes, any instruction: an answer or None, never a panic, in
        // time bounded by the table's length.
        #[test]
        fn any_table_gives_an_answer(
            table in proptest::collection::vec(any::<u8>(), 0..512),
            first in any::<i32>(),
            at in -4i64..100_000,
        ) {
            for f in [LineFormat::Lnotab, LineFormat::Linetable310, LineFormat::Locations] {
                let _ = line_of(f, &table, first, at);
            }
        }
    }
}
