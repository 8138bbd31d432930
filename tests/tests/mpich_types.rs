//! The type oracle against gdb, on the reference MPICH debug build.
//!
//! gdb's `ptype /o` prints every member's offset and size, nested members
//! included. For the structs the queue decoders need, every member gdb
//! shows (through named nested structs by dotted path, through anonymous
//! ones by name, as C11 allows) must have the same offset, size and
//! bit position in the oracle, and the struct the same total size.
//!
//! The reference build is found at `$MPIDD_REF_MPICH`, or by default
//! `$HOME/.cache/mpidd/mpich-4.0.2`. It is missing on a fresh machine:
//! then the test fails and says how to build it. A missing gdb fails too.

use std::path::PathBuf;
use std::process::Command;

use mpidd_read::{TypeError, TypeOracle};

const TYPES: &[&str] = &["MPIR_Comm", "MPIR_Request", "MPIR_Comm_list", "MPIR_Sendq"];

fn reference_libmpi() -> PathBuf {
    let root = match std::env::var_os("MPIDD_REF_MPICH") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let home = std::env::var_os("HOME").expect("HOME is set");
            PathBuf::from(home).join(".cache/mpidd/mpich-4.0.2")
        }
    };
    let lib = root.join("lib/libmpi.so");
    if !root.join(".mpidd-complete").exists() || !lib.exists() {
        panic!(
            "the reference MPICH debug build is not at {} (or $MPIDD_REF_MPICH): \
             build it with `bash scripts/build-ref-mpich.sh` (about 10-15 minutes)",
            root.display()
        );
    }
    lib
}

/// One member as gdb prints it; `offset` is absent for union members.
#[derive(Debug, Default)]
struct Member {
    name: Option<String>,
    offset: Option<u64>,
    bit: Option<u64>,
    size: Option<u64>,
    children: Vec<Member>,
}

/// The number in `/* offset | size */` columns: (offset, bit, size).
fn columns(comment: &str) -> (Option<u64>, Option<u64>, Option<u64>) {
    let inner = comment.trim_start_matches("/*").trim_end_matches("*/");
    let number = |s: &str| s.trim().parse::<u64>().ok();
    match inner.split_once('|') {
        Some((left, right)) => {
            let (offset, bit) = match left.split_once(':') {
                Some((o, b)) => (number(o), number(b)),
                None => (number(left), None),
            };
            (offset, bit, number(right))
        }
        None => (None, None, number(inner)),
    }
}

/// The declared name in a C member declaration (`char name[128]`,
/// `int (*fn)(void)`, `unsigned a : 3`, `} coll`).
fn declared_name(decl: &str) -> Option<String> {
    let decl = decl.trim().trim_end_matches(';').trim();
    let decl = match decl.rsplit_once(" : ") {
        Some((d, bits)) if bits.trim().parse::<u64>().is_ok() => d,
        _ => decl,
    };
    let decl = match decl.find("(*") {
        Some(at) => &decl[at + 2..decl[at..].find(')').map_or(decl.len(), |e| at + e)],
        None => decl.split('[').next().unwrap_or(decl),
    };
    let name: String = decl
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!name.is_empty() && name != "}").then_some(name)
}

/// Parses the `ptype /o` outputs in `text`, one root per `type =`.
fn parse(text: &str) -> Vec<(String, Member, u64)> {
    let mut roots = Vec::new();
    let mut stack: Vec<(Member, Option<u64>)> = Vec::new();
    let mut root_name = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.contains("XXX") {
            continue;
        }
        if let Some(at) = trimmed.find("type = ") {
            root_name = trimmed[at + 7..].trim_end_matches('{').trim().to_string();
            stack = vec![(Member::default(), None)];
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("/* total size (bytes):") {
            let total = rest.trim_end_matches("*/").trim().parse().ok();
            if let Some(top) = stack.last_mut() {
                top.1 = total;
            }
            continue;
        }
        if trimmed.starts_with('}') {
            let (mut node, total) = stack.pop().expect("a brace closes an open type");
            match stack.last_mut() {
                Some(parent) => {
                    node.name = declared_name(trimmed);
                    parent.0.children.push(node);
                }
                None => roots.push((
                    root_name.clone(),
                    node,
                    total.expect("gdb printed the total size"),
                )),
            }
            continue;
        }
        let Some(end) = trimmed.find("*/") else {
            continue;
        };
        let (offset, bit, size) = columns(&trimmed[..end + 2]);
        let decl = trimmed[end + 2..].trim();
        let member = Member {
            name: None,
            offset,
            bit,
            size,
            children: Vec::new(),
        };
        if decl.ends_with('{') {
            stack.push((member, None));
        } else {
            let name = declared_name(decl);
            let parent = &mut stack.last_mut().expect("members inside a type").0;
            parent.children.push(Member { name, ..member });
        }
    }
    roots
}

/// Compares every member under `node` with the oracle; returns how many
/// were compared.
fn compare(
    oracle: &TypeOracle,
    ty: &str,
    prefix: &str,
    parent_offset: u64,
    node: &Member,
    wrong: &mut Vec<String>,
) -> usize {
    let mut compared = 0;
    for child in &node.children {
        // gdb leaves union members' offsets out: they are the union's.
        let offset = child.offset.unwrap_or(parent_offset);
        let path = match &child.name {
            Some(name) if prefix.is_empty() => name.clone(),
            Some(name) => format!("{prefix}.{name}"),
            // An anonymous member: its members are reached without it.
            None => prefix.to_string(),
        };
        if child.name.is_some() {
            compared += 1;
            match oracle.offset_of(ty, &path) {
                Ok(field) => {
                    let bit = field.bits.map(|b| b.bit_offset);
                    let ours = (field.offset, field.size, bit);
                    let gdbs = (offset, child.size, child.bit);
                    if ours != gdbs {
                        wrong.push(format!(
                            "{ty}.{path}: (offset, size, bit) oracle {ours:?}, gdb {gdbs:?}"
                        ));
                    }
                }
                Err(e) => wrong.push(format!("{ty}.{path}: {e}")),
            }
        }
        compared += compare(oracle, ty, &path, offset, child, wrong);
    }
    compared
}

#[test]
fn reference_mpich_types_match_gdb() {
    let lib = reference_libmpi();
    let mut gdb = Command::new("gdb");
    gdb.arg("-batch").arg("-nx");
    for ty in TYPES {
        gdb.arg("-ex").arg(format!("ptype /o struct {ty}"));
    }
    let output = match gdb.arg(&lib).output() {
        Ok(o) => o,
        Err(e) => panic!(
            "cannot run gdb: {e}. Install the Debian package gdb \
             (`bash scripts/test.sh` installs what the tests need)."
        ),
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let roots = parse(&text);
    let names: Vec<String> = TYPES.iter().map(|t| format!("struct {t}")).collect();
    let parsed: Vec<&String> = roots.iter().map(|(n, _, _)| n).collect();
    assert_eq!(
        parsed,
        names.iter().collect::<Vec<_>>(),
        "gdb's output did not parse as {TYPES:?}:\n{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let mut oracle = TypeOracle::new();
    oracle.add_object("libmpi.so", &lib, None);
    let mut wrong = Vec::new();
    for (name, root, total) in &roots {
        let ty = name.trim_start_matches("struct ");
        let layout = oracle.find_type(name).unwrap();
        if layout.size != *total {
            wrong.push(format!(
                "sizeof({name}): oracle {}, gdb {total}",
                layout.size
            ));
        }
        // The typedef names the same struct.
        assert_eq!(
            oracle.find_type(ty).map(|l| l.size),
            Ok(layout.size),
            "{ty}"
        );

        // The same top-level named members, in the same order.
        let gdb_top: Vec<&str> = root
            .children
            .iter()
            .filter_map(|m| m.name.as_deref())
            .collect();
        let ours: Vec<&str> = layout
            .members
            .iter()
            .filter_map(|m| m.name.as_deref())
            .collect();
        assert_eq!(ours, gdb_top, "top-level members of {name}");

        let compared = compare(&oracle, name, "", 0, root, &mut wrong);
        assert!(
            compared >= gdb_top.len(),
            "{name}: compared {compared} members, fewer than its {} top-level ones",
            gdb_top.len()
        );
    }
    assert!(
        wrong.is_empty(),
        "{} disagreements:\n{}",
        wrong.len(),
        wrong.join("\n")
    );

    // The message-queue paths the decoders use, through anonymous and
    // nested members.
    let tag = oracle.offset_of("MPIR_Request", "dev.match.parts.tag");
    assert!(tag.is_ok(), "{tag:?}");
    assert!(matches!(
        oracle.offset_of("MPIR_Comm", "no_such_member"),
        Err(TypeError::NoSuchMember { .. })
    ));
}

#[test]
fn gdb_output_parser_reads_offsets_bits_and_nesting() {
    // Written by hand in gdb 13's format, not copied from a run.
    let text = "\
/* offset      |    size */  type = struct s {
/*      0      |       4 */    int a;
/*      4: 3   |       4 */    unsigned int b : 5;
/* XXX  7-byte hole      */
/*      8      |      16 */    union {
/*                     8 */        long c;
/*                    16 */        struct {
/*      8      |       8 */            char *d;
/*     16      |       8 */            void (*e)(int);

                                       /* total size (bytes):   16 */
                                   } f;

                                   /* total size (bytes):   16 */
                               };
/*     24      |      12 */    char g[12];

                               /* total size (bytes):   40 */
                             }
";
    let roots = parse(text);
    assert_eq!(roots.len(), 1);
    let (name, root, total) = &roots[0];
    assert_eq!((name.as_str(), *total), ("struct s", 40));
    let names: Vec<Option<&str>> = root.children.iter().map(|m| m.name.as_deref()).collect();
    assert_eq!(names, [Some("a"), Some("b"), None, Some("g")]);
    assert_eq!(
        (root.children[1].offset, root.children[1].bit),
        (Some(4), Some(3))
    );
    let union = &root.children[2];
    assert_eq!(union.children[0].offset, None);
    let f = &union.children[1];
    assert_eq!(f.name.as_deref(), Some("f"));
    let inner: Vec<(Option<&str>, Option<u64>)> = f
        .children
        .iter()
        .map(|m| (m.name.as_deref(), m.offset))
        .collect();
    assert_eq!(inner, [(Some("d"), Some(8)), (Some("e"), Some(16))]);
    assert_eq!(root.children[3].size, Some(12));
}
