//! The MPIR process table as it is kept in memory: each distinct string
//! once, each rank as three small numbers.
//!
//! A job of a million ranks has a million host-name pointers but only as
//! many distinct host names as it has nodes, and usually one executable.
//! Keeping a `String` per rank and field would cost two allocations and
//! about 60 bytes per rank; this table costs 12 bytes per rank plus the
//! distinct strings.

use serde::Serialize;

/// One rank of the MPIR process table, borrowed from a [`ProcTable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct MpirProcess<'a> {
    /// Host the rank runs on.
    pub host_name: &'a str,
    /// Executable of the rank.
    pub executable_name: &'a str,
    /// Pid of the rank on that host.
    pub pid: i32,
}

/// A rank as stored: indexes into [`ProcTable::strings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    host: u32,
    exe: u32,
    pid: i32,
}

/// The MPIR process table in rank order, with its strings interned.
///
/// Equality compares the ranks' contents, not how the strings happen to
/// be numbered. It serializes as a sequence of [`MpirProcess`].
///
/// ```
/// use mpidd_read::mpir::{MpirProcess, ProcTable};
///
/// let table = ProcTable::from_processes([
///     MpirProcess { host_name: "n1", executable_name: "/bin/ring", pid: 7 },
///     MpirProcess { host_name: "n2", executable_name: "/bin/ring", pid: 8 },
/// ]);
/// assert_eq!(table.len(), 2);
/// assert_eq!(table.get(1).map(|p| p.host_name), Some("n2"));
/// assert_eq!(table.distinct_strings(), 3);
/// assert_eq!(table.distinct_hosts(), ["n1", "n2"]);
/// assert_eq!(table.distinct_executables(), ["/bin/ring"]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ProcTable {
    entries: Vec<Entry>,
    strings: Vec<Box<str>>,
}

impl ProcTable {
    /// Builds a table from ranks given in rank order.
    pub fn from_processes<'a>(processes: impl IntoIterator<Item = MpirProcess<'a>>) -> Self {
        let mut builder = ProcTableBuilder::default();
        let mut ids = std::collections::HashMap::new();
        let mut intern = |b: &mut ProcTableBuilder, text: &'a str| {
            *ids.entry(text).or_insert_with(|| b.add_string(text))
        };
        for p in processes {
            let host = intern(&mut builder, p.host_name);
            let exe = intern(&mut builder, p.executable_name);
            builder.push(host, exe, p.pid);
        }
        builder.finish()
    }

    /// Number of ranks.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table has no ranks (the job has not spawned yet).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The rank at `rank`, if the table has it.
    pub fn get(&self, rank: usize) -> Option<MpirProcess<'_>> {
        self.entries.get(rank).map(|e| self.view(e))
    }

    /// The ranks in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            table: self,
            entries: self.entries.iter(),
        }
    }

    /// How many distinct strings (host and executable names) the ranks
    /// share.
    pub fn distinct_strings(&self) -> usize {
        self.strings.len()
    }

    /// The distinct host names, in the order of the first rank on each:
    /// where a tool starts one daemon per node.
    pub fn distinct_hosts(&self) -> Vec<&str> {
        self.distinct(|e| e.host)
    }

    /// The distinct executable names, in the order of the first rank
    /// running each.
    pub fn distinct_executables(&self) -> Vec<&str> {
        self.distinct(|e| e.exe)
    }

    fn distinct(&self, field: impl Fn(&Entry) -> u32) -> Vec<&str> {
        let mut seen = vec![false; self.strings.len()];
        let mut out = Vec::new();
        for e in &self.entries {
            let i = field(e);
            if let Some(slot) = seen.get_mut(i as usize) {
                if !*slot {
                    *slot = true;
                    out.push(self.string(i));
                }
            }
        }
        out
    }

    /// Heap bytes the table holds: the rank entries, the string slots and
    /// the string bytes. Allocator overhead is not counted.
    pub fn heap_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.strings.capacity() * std::mem::size_of::<Box<str>>()
            + self.strings.iter().map(|s| s.len()).sum::<usize>()
    }

    fn string(&self, i: u32) -> &str {
        self.strings.get(i as usize).map_or("", |s| s)
    }

    fn view(&self, e: &Entry) -> MpirProcess<'_> {
        MpirProcess {
            host_name: self.string(e.host),
            executable_name: self.string(e.exe),
            pid: e.pid,
        }
    }
}

impl PartialEq for ProcTable {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for ProcTable {}

impl Serialize for ProcTable {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'a> IntoIterator for &'a ProcTable {
    type Item = MpirProcess<'a>;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Iterator over the ranks of a [`ProcTable`], in rank order.
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    table: &'a ProcTable,
    entries: std::slice::Iter<'a, Entry>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = MpirProcess<'a>;
    fn next(&mut self) -> Option<MpirProcess<'a>> {
        self.entries.next().map(|e| self.table.view(e))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.entries.next_back().map(|e| self.table.view(e))
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// Builds a [`ProcTable`]. It keeps strings as given; the caller interns
/// them (by text, or by the bytes it read).
#[derive(Default)]
pub(crate) struct ProcTableBuilder {
    table: ProcTable,
}

impl ProcTableBuilder {
    /// Stores `text` and returns its index. A table cannot hold more than
    /// `u32::MAX` strings: the entry limit bounds it long before, and an
    /// index past the end reads as an empty string, never a panic.
    pub(crate) fn add_string(&mut self, text: &str) -> u32 {
        let i = u32::try_from(self.table.strings.len()).unwrap_or(u32::MAX);
        self.table.strings.push(text.into());
        i
    }

    pub(crate) fn reserve(&mut self, ranks: usize) {
        self.table.entries.reserve_exact(ranks);
    }

    pub(crate) fn push(&mut self, host: u32, exe: u32, pid: i32) {
        self.table.entries.push(Entry { host, exe, pid });
    }

    pub(crate) fn finish(mut self) -> ProcTable {
        self.table.strings.shrink_to_fit();
        self.table
    }
}
