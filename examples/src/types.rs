//! `mpidd types`: the layout of C types in an object's DWARF, like gdb's
//! `ptype /o`.

use std::io::Write;
use std::path::PathBuf;

use mpidd_read::{MemberLayout, TypeError, TypeLayout, TypeOracle};

/// What to show.
pub struct Options {
    /// The ELF object whose DWARF is read.
    pub object: PathBuf,
    /// Its separate debug file, if the object is stripped.
    pub debug_file: Option<PathBuf>,
    /// Type names: `MPIR_Comm`, `struct MPIR_Request`...
    pub types: Vec<String>,
    /// Print JSON instead of text.
    pub json: bool,
}

/// Failures of `mpidd types`.
#[derive(Debug, thiserror::Error)]
pub enum TypesError {
    /// A type could not be found or read.
    #[error(transparent)]
    Type(#[from] TypeError),
    /// JSON output failed.
    #[error("cannot print JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Writing to standard output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
}

/// Prints each type's layout; stops at the first type that fails.
pub fn run(opts: &Options) -> Result<(), TypesError> {
    let name = opts.object.display().to_string();
    let mut oracle = TypeOracle::new();
    oracle.add_object(&name, &opts.object, opts.debug_file.as_deref());
    // Line-buffered stdout would make a write call per line of a
    // 100,000-operation dump.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut layouts = Vec::new();
    for ty in &opts.types {
        let layout = oracle.find_type(ty)?;
        if opts.json {
            layouts.push(layout);
        } else {
            write!(out, "{}", text(&layout))?;
        }
    }
    if opts.json {
        serde_json::to_writer_pretty(&mut out, &layouts)?;
        writeln!(out)?;
    } else {
        let stats = oracle.index_stats(&name)?;
        writeln!(
            out,
            "(name index: {:?}; {} candidates from it, {} units scanned{})",
            stats.kind,
            stats.accelerated_candidates,
            stats.units_scanned,
            if stats.scan_complete { ", all" } else { "" }
        )?;
    }
    out.flush()?;
    Ok(())
}

/// The text form: a header line, then one line per member with offset,
/// size and bit position, anonymous members' own members indented.
pub fn text(layout: &TypeLayout) -> String {
    let mut s = format!(
        "{}: {:?}, {} bytes, from {}\n",
        layout.name, layout.kind, layout.size, layout.object
    );
    if !layout.members.is_empty() {
        s += &format!("{:>8} {:>6} {:>7}  member\n", "offset", "size", "bits");
        for field in &layout.members {
            push_field(&mut s, field, 1);
        }
    }
    for e in &layout.enumerators {
        s += &format!("  {} = {}\n", e.name, e.value);
    }
    s
}

fn push_field(s: &mut String, field: &MemberLayout, depth: usize) {
    let size = field.size.map_or("?".to_string(), |n| n.to_string());
    let bits = field.bits.map_or(String::new(), |b| {
        format!("{}:{}", b.bit_offset, b.bit_size)
    });
    let ty = field.type_name.as_deref().unwrap_or("?");
    let name = field.name.as_deref().unwrap_or("<anonymous>");
    *s += &format!(
        "{:>8} {:>6} {:>7}  {}{ty} {name}\n",
        field.offset,
        size,
        bits,
        "  ".repeat(depth - 1)
    );
    for member in &field.members {
        push_field(s, member, depth + 1);
    }
}
