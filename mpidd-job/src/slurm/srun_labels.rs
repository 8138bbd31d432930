//! Taking the agents' records back out of `srun --label` output.
//!
//! `srun` brings every task's standard output back over one pipe. It passes
//! on short lines whole, but cuts a long line into pieces (of 1 KiB in
//! Slurm 22.05) and, without `--label`, interleaves the pieces of different
//! tasks. With `--label` every piece is a line of its own that starts with
//! its task's number (`"  1: "`), so the pieces of one task can be put back
//! together in order.
//!
//! Where a record ends is told by its JSON, not by the line breaks, since
//! `srun` adds one after every piece: a record is one JSON object written
//! without raw newlines (JSON strings cannot hold one), and it ends where
//! its outermost brace closes. The scan is linear in the bytes received.

use std::collections::BTreeMap;

/// Most bytes one record may take; more is dropped as malformed, so that a
/// task writing garbage cannot make the front end grow without bound.
pub const MAX_RECORD_BYTES: usize = 256 << 20;

/// What one labelled line completed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// A whole record of task `task`, as it was written (no newline).
    Record {
        /// The task that wrote it.
        task: u32,
        /// Its bytes.
        bytes: Vec<u8>,
    },
    /// Output of task `task` that is not a JSON object (a message of the
    /// program the task ran, or an overlong record), line by line.
    Other {
        /// The task that wrote it.
        task: u32,
        /// The text.
        text: String,
    },
    /// A line without a task label (not written by a task).
    Unlabelled(String),
}

/// Reassembles records from `srun --label` lines, per task.
#[derive(Debug, Default)]
pub struct LabelledRecords {
    tasks: BTreeMap<u32, Partial>,
}

/// A record of one task as far as it came.
#[derive(Debug, Default)]
struct Partial {
    bytes: Vec<u8>,
    depth: u32,
    in_string: bool,
    escaped: bool,
}

impl Partial {
    /// Appends `piece`; returns the record when its outermost object
    /// closed, and the rest of the piece after it.
    fn push<'a>(&mut self, piece: &'a [u8]) -> (Option<Vec<u8>>, &'a [u8]) {
        for (i, &b) in piece.iter().enumerate() {
            self.bytes.push(b);
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        let record = std::mem::take(&mut self.bytes);
                        *self = Partial::default();
                        return (Some(record), &piece[i + 1..]);
                    }
                }
                _ => {}
            }
        }
        (None, &[])
    }
}

/// Splits `"  12: rest"` into 12 and `rest`.
fn label(line: &[u8]) -> Option<(u32, &[u8])> {
    let start = line.iter().position(|&b| b != b' ')?;
    let colon = start + line[start..].iter().position(|&b| b == b':')?;
    let task = std::str::from_utf8(&line[start..colon])
        .ok()?
        .parse()
        .ok()?;
    let rest = &line[colon + 1..];
    Some((task, rest.strip_prefix(b" ").unwrap_or(rest)))
}

impl LabelledRecords {
    /// Nothing received yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one line of `srun --label` output (with or without its
    /// newline) and returns what it completed.
    pub fn push_line(&mut self, line: &[u8]) -> Vec<Piece> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let Some((task, mut rest)) = label(line) else {
            return vec![Piece::Unlabelled(
                String::from_utf8_lossy(line).into_owned(),
            )];
        };
        let partial = self.tasks.entry(task).or_default();
        let mut out = Vec::new();
        while !rest.is_empty() {
            if partial.bytes.is_empty() && partial.depth == 0 {
                let skip = rest
                    .iter()
                    .position(|b| !b.is_ascii_whitespace())
                    .unwrap_or(rest.len());
                rest = &rest[skip..];
                if rest.is_empty() {
                    break;
                }
                if rest[0] != b'{' {
                    out.push(Piece::Other {
                        task,
                        text: String::from_utf8_lossy(rest).into_owned(),
                    });
                    break;
                }
            }
            let (record, after) = partial.push(rest);
            if let Some(bytes) = record {
                out.push(Piece::Record { task, bytes });
            } else if partial.bytes.len() > MAX_RECORD_BYTES {
                let dropped = std::mem::take(partial);
                out.push(Piece::Other {
                    task,
                    text: format!(
                        "a record longer than {MAX_RECORD_BYTES} bytes, dropped (it began {})",
                        String::from_utf8_lossy(&dropped.bytes[..80])
                    ),
                });
            }
            rest = after;
        }
        out
    }

    /// The tasks whose last record is incomplete, with the bytes received
    /// of it: what is left when the output ended.
    pub fn unfinished(&self) -> Vec<(u32, usize)> {
        self.tasks
            .iter()
            .filter(|(_, p)| !p.bytes.is_empty())
            .map(|(&t, p)| (t, p.bytes.len()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cuts `text` into labelled pieces of `size` bytes, as srun does.
    fn pieces(task: u32, text: &[u8], size: usize) -> Vec<Vec<u8>> {
        text.chunks(size)
            .map(|c| {
                let mut l = format!("{task:>3}: ").into_bytes();
                l.extend_from_slice(c);
                l.push(b'\n');
                l
            })
            .collect()
    }

    #[test]
    fn interleaved_pieces_of_two_tasks_make_their_records_again() {
        let a = br#"{"record":"rank","s":"a \"}{ quoted\\","n":[1,{"x":2}]}"#.to_vec();
        let b = format!(r#"{{"record":"rank","pad":"{}"}}"#, "é".repeat(3000)).into_bytes();
        let (pa, pb) = (pieces(0, &a, 7), pieces(11, &b, 1024));
        let mut merged = LabelledRecords::new();
        let mut got = Vec::new();
        let n = pa.len().max(pb.len());
        for i in 0..n {
            for p in [pa.get(i), pb.get(i)].into_iter().flatten() {
                got.extend(merged.push_line(p));
            }
        }
        let summary: Vec<String> = got
            .iter()
            .map(|p| match p {
                Piece::Record { task, bytes } => format!("record {task} {}", bytes.len()),
                other => format!("{other:?}"),
            })
            .collect();
        // Task 11's record has fewer pieces: it is whole first.
        assert_eq!(
            summary,
            [
                format!("record 11 {}", b.len()),
                format!("record 0 {}", a.len())
            ]
        );
        assert_eq!(
            got,
            vec![
                Piece::Record { task: 11, bytes: b },
                Piece::Record { task: 0, bytes: a }
            ]
        );
        assert!(merged.unfinished().is_empty());
    }

    #[test]
    fn other_output_and_unlabelled_lines_are_kept_apart() {
        let mut merged = LabelledRecords::new();
        assert_eq!(
            merged.push_line(b"srun: error: n2: task 1: Killed\n"),
            vec![Piece::Unlabelled("srun: error: n2: task 1: Killed".into())]
        );
        assert_eq!(
            merged.push_line(b"1: hello\n"),
            vec![Piece::Other {
                task: 1,
                text: "hello".into()
            }]
        );
        assert_eq!(merged.push_line(b"1: {\"a\":"), vec![]);
        assert_eq!(merged.unfinished(), vec![(1, 5)]);
    }
}
