//! The type oracle on corrupt DWARF: errors or misses, never a panic, a
//! hang or an unbounded allocation.
//!
//! The fixture of `type_oracle.rs` is built once with gcc; then its
//! `.debug_info` and `.debug_abbrev` bytes are mutated (byte flips at spread
//! positions, random mutations, and hand-made reference cycles) and every
//! kind of question is asked of each copy. All of it runs on a worker
//! thread under a deadline, so a hang fails the test instead of stalling
//! it.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use gimli::{AttributeValue, EndianSlice, LittleEndian, UnitOffset};
use mpidd_read::{TypeError, TypeOracle};
use object::{Object, ObjectSection};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

mod oracle_fixture;
use oracle_fixture::{build, temp_dir, Variant, NATIVE};

/// Every question, each allowed to fail but not to panic.
fn ask_everything(path: &Path) {
    let mut oracle = TypeOracle::new();
    oracle.add_object("hostile.so", path, None);
    if let Ok(outer) = oracle.find_type("outer_alias_t") {
        for field in &outer.members {
            let _ = oracle.member_type(field);
        }
    }
    let _ = oracle.offset_of("struct outer", "inner.d");
    let _ = oracle.offset_of("outer_t", "hi");
    let _ = oracle.offset_of("struct outer", "flags.wide");
    let _ = oracle.find_type("elsewhere_t");
    let _ = oracle.find_type("union number");
    let _ = oracle.base_type_sizes();
    // A miss scans every unit.
    let _ = oracle.find_type("no_such_type");
    let _ = oracle.index_stats("hostile.so");
    if let Err(e) = oracle.find_type("no_such_type_either") {
        let _ = e.to_string();
    }
}

/// Runs `work` on a thread; fails if it panics or outlasts `limit`.
fn with_deadline(limit: Duration, work: impl FnOnce() + Send + 'static) {
    let (done, wait) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        work();
        let _ = done.send(());
    });
    match wait.recv_timeout(limit) {
        Ok(()) => worker.join().expect("the worker finished"),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let panic = worker
                .join()
                .expect_err("the worker ended without finishing");
            let text = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("the oracle panicked on corrupt DWARF: {text}");
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("the oracle did not finish within {limit:?} on corrupt DWARF: a hang")
        }
    }
}

/// The file range of a section.
fn section_range(data: &[u8], name: &str) -> std::ops::Range<usize> {
    let file = object::File::parse(data).unwrap();
    let (offset, size) = file
        .section_by_name(name)
        .and_then(|s| s.file_range())
        .unwrap_or_else(|| panic!("{name} in the fixture"));
    offset as usize..(offset + size) as usize
}

struct Built {
    dir: PathBuf,
    data: Vec<u8>,
}

fn built(what: &str, v: &Variant) -> Built {
    let dir = temp_dir(what);
    let so = build(v, &dir);
    let data = std::fs::read(so).unwrap();
    Built { dir, data }
}

/// Writes `data` as a new file in `dir` and asks it everything.
fn try_copy(dir: &Path, n: usize, data: &[u8]) {
    let path = dir.join(format!("hostile-{n}.so"));
    std::fs::write(&path, data).unwrap();
    ask_everything(&path);
    std::fs::remove_file(&path).ok();
}

#[test]
fn byte_flips_in_debug_info_and_debug_abbrev() {
    let b = built("flips", &NATIVE);
    with_deadline(Duration::from_secs(120), move || {
        let mut n = 0;
        for section in [".debug_info", ".debug_abbrev"] {
            let range = section_range(&b.data, section);
            let step = (range.len() / 150).max(1);
            for at in range.step_by(step) {
                for value in [0x00, 0xff, 0x80, b.data[at] ^ 0x01] {
                    let mut copy = b.data.clone();
                    copy[at] = value;
                    try_copy(&b.dir, n, &copy);
                    n += 1;
                }
            }
        }
        std::fs::remove_dir_all(&b.dir).ok();
    });
}

#[test]
fn random_mutations_of_debug_info() {
    let b = built("random", &NATIVE);
    with_deadline(Duration::from_secs(120), move || {
        let range = section_range(&b.data, ".debug_info");
        let len = range.len();
        let mut runner = TestRunner::new(Config {
            cases: 96,
            failure_persistence: None,
            ..Config::default()
        });
        let n = std::sync::atomic::AtomicUsize::new(0);
        runner
            .run(
                &proptest::collection::vec((0..len, any::<u8>()), 1..12),
                |edits| {
                    let mut copy = b.data.clone();
                    for (at, value) in edits {
                        copy[range.start + at] = value;
                    }
                    let k = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    try_copy(&b.dir, k, &copy);
                    Ok(())
                },
            )
            .unwrap();
        std::fs::remove_dir_all(&b.dir).ok();
    });
}

/// A DIE's attribute as bytes in the file: where its value starts, its
/// form, and the DIE's offset in its unit.
struct AttrAt {
    file_offset: usize,
    form: gimli::DwForm,
    die: usize,
}

/// Finds, in the first unit that has it, the DIE with this tag and name
/// (or without a name, for `None`), and where its attribute `attr` is.
fn find_attr(
    data: &[u8],
    tag: gimli::DwTag,
    name: Option<&str>,
    attr: gimli::DwAt,
) -> Option<AttrAt> {
    let file = object::File::parse(data).unwrap();
    let info = section_range(data, ".debug_info");
    let sec = |n: &str| {
        file.section_by_name(n)
            .and_then(|s| s.data().ok())
            .unwrap_or(&[])
    };
    let dwarf = gimli::Dwarf::load(|id| {
        Ok::<_, gimli::Error>(EndianSlice::new(sec(id.name()), LittleEndian))
    })
    .unwrap();
    let mut units = dwarf.units();
    while let Some(header) = units.next().unwrap() {
        let unit_start = header.debug_info_offset().unwrap().0;
        let unit = dwarf.unit(header).unwrap();
        let mut raw = unit.entries_raw(None).unwrap();
        while !raw.is_empty() {
            let die = raw.next_offset().0;
            let Some(abbrev) = raw.read_abbreviation().unwrap() else {
                continue;
            };
            let mut found = None;
            let mut die_name = None;
            for spec in abbrev.attributes() {
                let at = raw.next_offset().0;
                let value = raw.read_attribute(*spec).unwrap();
                if spec.name() == attr {
                    found = Some((at, spec.form()));
                }
                if spec.name() == gimli::DW_AT_name {
                    die_name = dwarf
                        .attr_string(&unit, value.value())
                        .ok()
                        .map(|s| s.to_string_lossy().into_owned());
                }
            }
            if abbrev.tag() == tag && die_name.as_deref() == name {
                if let Some((at, form)) = found {
                    return Some(AttrAt {
                        file_offset: info.start + unit_start + at,
                        form,
                        die,
                    });
                }
            }
        }
    }
    None
}

/// Overwrites a `DW_FORM_ref4` with a DIE offset in the same unit.
fn set_ref4(data: &mut [u8], at: &AttrAt, target: usize) {
    assert_eq!(at.form, gimli::DW_FORM_ref4, "gcc's reference form changed");
    data[at.file_offset..at.file_offset + 4].copy_from_slice(&(target as u32).to_le_bytes());
}

fn die_of(data: &[u8], tag: gimli::DwTag, name: &str) -> usize {
    find_attr(data, tag, Some(name), gimli::DW_AT_name)
        .unwrap_or_else(|| panic!("{name} in the fixture"))
        .die
}

fn expect_limit(result: Result<impl std::fmt::Debug, TypeError>, what: &str) {
    match result {
        Err(TypeError::LimitExceeded { .. }) => {}
        other => panic!("{what}: expected a LimitExceeded error, got {other:?}"),
    }
}

#[test]
fn reference_cycles_end_in_a_limit_error() {
    let b = built("cycles", &NATIVE);
    with_deadline(Duration::from_secs(60), move || {
        let typedef = |name| {
            find_attr(
                &b.data,
                gimli::DW_TAG_typedef,
                Some(name),
                gimli::DW_AT_type,
            )
            .unwrap_or_else(|| panic!("typedef {name} in the fixture"))
        };
        let open = |data: &[u8], n: usize| {
            let path = b.dir.join(format!("cycle-{n}.so"));
            std::fs::write(&path, data).unwrap();
            let mut oracle = TypeOracle::new();
            oracle.add_object("cycle.so", &path, None);
            oracle
        };

        // A typedef of itself.
        let mut copy = b.data.clone();
        let alias = typedef("outer_alias_t");
        set_ref4(&mut copy, &alias, alias.die);
        let oracle = open(&copy, 0);
        expect_limit(oracle.find_type("outer_alias_t"), "a self-typedef");
        assert!(oracle.find_type("struct outer").is_ok());

        // Two typedefs of each other.
        let mut copy = b.data.clone();
        let outer_t = typedef("outer_t");
        set_ref4(&mut copy, &outer_t, alias.die);
        let oracle = open(&copy, 1);
        expect_limit(oracle.find_type("outer_t"), "a typedef loop");

        // An anonymous member whose type is the struct that holds it.
        let mut copy = b.data.clone();
        let anon = find_attr(&b.data, gimli::DW_TAG_member, None, gimli::DW_AT_type)
            .expect("an anonymous member in the fixture");
        let outer = die_of(&b.data, gimli::DW_TAG_structure_type, "outer");
        set_ref4(&mut copy, &anon, outer);
        let oracle = open(&copy, 2);
        expect_limit(oracle.find_type("struct outer"), "a struct inside itself");

        // A pointer to itself, as a member's type: its name cannot be
        // written, but it is a pointer all the same.
        let mut copy = b.data.clone();
        let next = find_attr(
            &b.data,
            gimli::DW_TAG_member,
            Some("next"),
            gimli::DW_AT_type,
        )
        .expect("member next");
        let pointer = next.die_target(&b.data);
        let pointer_type = find_attr_at(&b.data, pointer, gimli::DW_AT_type);
        set_ref4(&mut copy, &pointer_type, pointer);
        let oracle = open(&copy, 3);
        let layout = oracle.find_type("struct outer").unwrap();
        let next = layout.field("next").unwrap();
        assert_eq!(next.size, Some(8));
        assert!(next.type_name.as_deref().unwrap().contains("..."));

        // A sibling link that points backwards must not loop the scan.
        let mut copy = b.data.clone();
        let sibling = find_attr(
            &b.data,
            gimli::DW_TAG_structure_type,
            Some("inner"),
            gimli::DW_AT_sibling,
        )
        .expect("struct inner has a DW_AT_sibling");
        set_ref4(&mut copy, &sibling, sibling.die);
        let oracle = open(&copy, 4);
        assert!(matches!(
            oracle.find_type("no_such_type"),
            Err(TypeError::NotFound { .. })
        ));
        assert!(oracle.find_type("outer_t").is_ok());
        std::fs::remove_dir_all(&b.dir).ok();
    });
}

impl AttrAt {
    /// The unit offset a `DW_FORM_ref4` attribute points at.
    fn die_target(&self, data: &[u8]) -> usize {
        assert_eq!(self.form, gimli::DW_FORM_ref4);
        let bytes = &data[self.file_offset..self.file_offset + 4];
        u32::from_le_bytes(bytes.try_into().unwrap()) as usize
    }
}

/// The attribute `attr` of the DIE at unit offset `die` of the first unit.
fn find_attr_at(data: &[u8], die: usize, attr: gimli::DwAt) -> AttrAt {
    let file = object::File::parse(data).unwrap();
    let info = section_range(data, ".debug_info");
    let sec = |n: &str| {
        file.section_by_name(n)
            .and_then(|s| s.data().ok())
            .unwrap_or(&[])
    };
    let dwarf = gimli::Dwarf::load(|id| {
        Ok::<_, gimli::Error>(EndianSlice::new(sec(id.name()), LittleEndian))
    })
    .unwrap();
    let header = dwarf.units().next().unwrap().unwrap();
    let unit = dwarf.unit(header).unwrap();
    let mut raw = unit.entries_raw(Some(UnitOffset(die))).unwrap();
    let abbrev = raw.read_abbreviation().unwrap().unwrap();
    for spec in abbrev.attributes() {
        let at = raw.next_offset().0;
        let value = raw.read_attribute(*spec).unwrap();
        if spec.name() == attr {
            assert!(matches!(value.value(), AttributeValue::UnitRef(_)));
            return AttrAt {
                file_offset: info.start + at,
                form: spec.form(),
                die,
            };
        }
    }
    panic!("DIE {die:#x} has no {attr}");
}

#[test]
fn an_absurd_compressed_size_is_refused_before_allocating() {
    let b = built(
        "gz-bomb",
        &Variant {
            name: "gcc-gz",
            flags: &["-gz"],
            ..NATIVE
        },
    );
    let range = section_range(&b.data, ".debug_info");
    // Elf64_Chdr: ch_type (4), ch_reserved (4), ch_size (8), ch_addralign.
    let mut copy = b.data.clone();
    copy[range.start + 8..range.start + 16].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let path = b.dir.join("bomb.so");
    std::fs::write(&path, &copy).unwrap();
    let mut oracle = TypeOracle::new();
    oracle.add_object("bomb.so", &path, None);
    match oracle.find_type_in("bomb.so", "outer_t") {
        Err(TypeError::Object { reason, .. }) => assert!(reason.contains("refused"), "{reason}"),
        other => panic!("expected the section to be refused, got {other:?}"),
    }
    std::fs::remove_dir_all(&b.dir).ok();
}
