//! The names a build's DWARF does not define, kept in the layout cache
//! between runs: never a name the build does define.
//!
//! Real shared objects are compiled with gcc (one of them with compressed
//! DWARF, so the identity is taken without inflating), each run is a new
//! oracle over the same cache directory, and every answer is checked
//! against an oracle without a store. A missing gcc is a failure naming
//! its Debian package, never a skip.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use mpidd_read::{AbsentNameStore, DwarfIdentity, LayoutCache, TypeOracle};
use proptest::prelude::*;

mod oracle_fixture;
use oracle_fixture::{run, temp_dir};

/// Compiles `units` (file name, C text) into the shared object `name` in
/// `dir`, with a build-id; `extra` are more gcc flags.
fn shared_object(dir: &Path, name: &str, units: &[(&str, &str)], extra: &[&str]) -> PathBuf {
    let mut cmd = Command::new("gcc");
    cmd.args(["-shared", "-fPIC", "-g", "-O0", "-Wl,--build-id"]);
    cmd.args(extra);
    for (file, text) in units {
        let path = dir.join(file);
        std::fs::write(&path, text).expect("write a C file");
        cmd.arg(path);
    }
    let out = dir.join(name);
    cmd.arg("-o").arg(&out);
    run(&mut cmd, "gcc", "gcc");
    out
}

fn oracle(objects: &[&Path], cache: Option<&LayoutCache>) -> TypeOracle {
    let mut oracle = TypeOracle::new();
    for path in objects {
        oracle.add_object(&path.display().to_string(), path, None);
    }
    match cache {
        Some(cache) => oracle.with_absent_name_store(Arc::new(cache.clone())),
        None => oracle,
    }
}

/// The size each name has, or `None` where the oracle finds none.
fn answers(oracle: &TypeOracle, names: &[&str]) -> Vec<Option<u64>> {
    names
        .iter()
        .map(|n| oracle.find_type(n).ok().map(|l| l.size))
        .collect()
}

fn absent_file(cache: &LayoutCache, object: &Path) -> PathBuf {
    let id = mpidd_read::build_id(object)
        .expect("read the build-id")
        .expect("gcc gave the object a build-id");
    cache.absent_names_path(&mpidd_read::build_id_hex(&id))
}

/// `text` and enough more types that gcc's `-gz` compresses the DWARF (it
/// leaves a small section as it is).
fn filler(text: &str) -> String {
    let mut out = text.to_string();
    for i in 0..200 {
        out.push_str(&format!(
            "struct fill{i} {{ int a; char c[{i}]; }} fill{i}_v;\n"
        ));
    }
    out
}

/// Whether the object's `.debug_info` is compressed.
fn compressed(path: &Path) -> bool {
    use object::{Object, ObjectSection};
    let bytes = std::fs::read(path).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let info = file.section_by_name(".debug_info").unwrap();
    info.compressed_file_range().unwrap().format != object::CompressionFormat::None
}

/// `struct only_b` is declared (never defined) in a.so's first unit and
/// defined in b.so; `struct late` is defined only in a.so's last unit;
/// `struct nowhere` is defined nowhere.
fn two_objects(dir: &Path) -> (PathBuf, PathBuf) {
    let a = shared_object(
        dir,
        "liba.so",
        &[
            (
                "a1.c",
                "struct only_b; struct only_b *a_ptr; struct a_first { int x; } a_first_v;\n",
            ),
            ("a2.c", &filler("struct a_middle { long y; } a_middle_v;\n")),
            ("a3.c", "struct late { char c[24]; } late_v;\n"),
        ],
        &["-gz=zlib"],
    );
    let b = shared_object(
        dir,
        "libb.so",
        &[("b1.c", "struct only_b { double d[5]; } only_b_v;\n")],
        &[],
    );
    (a, b)
}

#[test]
fn a_name_kept_as_absent_is_still_found_where_it_is_defined() {
    let dir = temp_dir("absent-two");
    let (a, b) = two_objects(&dir);
    assert!(compressed(&a), "the fixture must have compressed DWARF");
    let cache = LayoutCache::at(dir.join("cache"));
    let names = ["a_first", "nowhere", "only_b", "late"];
    let truth = answers(&oracle(&[&a, &b], None), &names);
    assert_eq!(truth, vec![Some(4), None, Some(40), Some(24)]);

    // First run: `nowhere` is learned absent in both objects. `only_b` is
    // not absent from a.so, which declares it.
    let first = oracle(&[&a, &b], Some(&cache));
    assert_eq!(answers(&first, &names), truth);
    assert!(first.keep_absent_names().is_empty());
    let kept: serde_json::Value =
        serde_json::from_slice(&std::fs::read(absent_file(&cache, &a)).unwrap()).unwrap();
    assert_eq!(kept["names"], serde_json::json!(["nowhere"]), "{kept}");

    // Second run, in another order: the same answers, and a.so is not
    // scanned for the name it is known to lack.
    let second = oracle(&[&a, &b], Some(&cache));
    let reordered = ["nowhere", "late", "only_b", "a_first"];
    let truth_reordered = answers(&oracle(&[&a, &b], None), &reordered);
    assert_eq!(answers(&second, &reordered[..1]), truth_reordered[..1]);
    let stats = second.index_stats(&a.display().to_string()).unwrap();
    assert_eq!(
        stats.units_scanned, 0,
        "a.so was scanned for a name it is known to lack"
    );
    assert_eq!(answers(&second, &reordered[1..]), truth_reordered[1..]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_name_asked_before_the_unit_that_defines_it_is_read_is_not_absent() {
    let dir = temp_dir("absent-order");
    let (a, b) = two_objects(&dir);
    let cache = LayoutCache::at(dir.join("cache"));
    // `a_first` is found in the first unit: the scan stops there, with
    // `late` (defined in the last unit) not seen yet.
    let first = oracle(&[&a, &b], Some(&cache));
    assert_eq!(answers(&first, &["a_first"]), vec![Some(4)]);
    let stats = first.index_stats(&a.display().to_string()).unwrap();
    assert!(!stats.scan_complete, "the fixture must leave units unread");
    assert!(first.keep_absent_names().is_empty());
    assert!(
        !absent_file(&cache, &a).exists(),
        "nothing is absent before every unit was read"
    );
    let second = oracle(&[&a, &b], Some(&cache));
    assert_eq!(answers(&second, &["late"]), vec![Some(24)]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_rebuilt_object_is_not_answered_by_its_old_build_s_absent_names() {
    let dir = temp_dir("absent-rebuilt");
    let cache = LayoutCache::at(dir.join("cache"));
    let build = |text: &str| shared_object(&dir, "libr.so", &[("r.c", text)], &[]);
    let old = build("struct kept { int k; } kept_v;\n");
    let first = oracle(&[&old], Some(&cache));
    assert_eq!(answers(&first, &["grown"]), vec![None]);
    assert!(first.keep_absent_names().is_empty());
    let old_file = absent_file(&cache, &old);
    assert!(old_file.exists());

    // The same path, rebuilt with the name defined: another build-id.
    let new = build("struct kept { int k; } kept_v; struct grown { long g[3]; } grown_v;\n");
    assert_eq!(
        answers(&oracle(&[&new], Some(&cache)), &["grown"]),
        vec![Some(24)]
    );

    // The old build's file put under the new build-id's name: its DWARF
    // identity is not the new build's, so it is ignored.
    let new_file = absent_file(&cache, &new);
    let mut moved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&old_file).unwrap()).unwrap();
    let new_id = new_file
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .split('.')
        .next()
        .unwrap()
        .to_string();
    moved["dwarf"]["build_id"] = new_id.into();
    moved["names"] = serde_json::json!(["grown"]);
    std::fs::write(&new_file, serde_json::to_vec(&moved).unwrap()).unwrap();
    assert_eq!(
        answers(&oracle(&[&new], Some(&cache)), &["grown"]),
        vec![Some(24)]
    );

    // A corrupt file is ignored too, and replaced when names are learned.
    std::fs::write(&new_file, b"{\"format\": \"mpidd-absent-na").unwrap();
    let run = oracle(&[&new], Some(&cache));
    assert_eq!(answers(&run, &["grown", "other"]), vec![Some(24), None]);
    assert!(run.keep_absent_names().is_empty());
    let kept: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&new_file).unwrap()).unwrap();
    assert_eq!(kept["names"], serde_json::json!(["other"]));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_store_answers_only_for_the_identity_it_kept() {
    let dir = temp_dir("absent-store");
    let cache = LayoutCache::at(dir.join("cache"));
    let id = DwarfIdentity {
        build_id: "abcd".into(),
        debug_info_bytes: 100,
        debug_abbrev_bytes: 10,
        debug_str_bytes: 20,
        debug_types_bytes: 0,
    };
    assert_eq!(cache.recall(&id), None);
    cache.keep(&id, &["x".into()]).unwrap();
    assert_eq!(cache.recall(&id), Some(vec!["x".to_string()]));
    let other = DwarfIdentity {
        debug_info_bytes: 101,
        ..id.clone()
    };
    assert_eq!(cache.recall(&other), None);
    let sneaky = DwarfIdentity {
        build_id: "../../etc/passwd".into(),
        ..id.clone()
    };
    assert_eq!(cache.recall(&sneaky), None);
    assert!(cache.keep(&sneaky, &[]).is_err());
    // Clearing the cache removes the names with the entries.
    cache.clear().unwrap();
    assert_eq!(cache.recall(&id), None);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// One object defining `t0`..`t7` over four units (two each) and declaring
/// `t8`..`t11` without defining them, compiled once for every case.
fn pool_object() -> &'static Path {
    static OBJECT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    OBJECT.get_or_init(|| {
        let dir = temp_dir("absent-pool");
        let units: Vec<(String, String)> = (0..4)
            .map(|u| {
                let a = u * 2;
                let b = a + 1;
                let d = 8 + u;
                (
                    format!("p{u}.c"),
                    format!(
                        "struct t{a} {{ char c[{}]; }} v{a};\nstruct t{b} {{ char c[{}]; }} v{b};\n\
                         struct t{d}; struct t{d} *p{d};\n",
                        a + 1,
                        b + 1
                    ),
                )
            })
            .map(|(file, text)| {
                let text = if file == "p1.c" { filler(&text) } else { text };
                (file, text)
            })
            .collect();
        let refs: Vec<(&str, &str)> = units
            .iter()
            .map(|(f, t)| (f.as_str(), t.as_str()))
            .collect();
        let object = shared_object(&dir, "libpool.so", &refs, &["-gz=zlib"]);
        assert!(
            compressed(&object),
            "the fixture must have compressed DWARF"
        );
        object
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever names are asked, in whatever order over several runs
    /// sharing one cache, every answer is the answer of an oracle without
    /// the cache: `tN` for N < 8 has size N + 1, the others none.
    #[test]
    fn the_absent_names_never_change_an_answer(
        runs in proptest::collection::vec(proptest::collection::vec(0u32..16, 1..10), 1..4)
    ) {
        let object = pool_object();
        let dir = temp_dir("absent-prop");
        let cache = LayoutCache::at(dir.join("cache"));
        for asked in runs {
            let run = oracle(&[object], Some(&cache));
            for n in asked {
                let got = run.find_type(&format!("t{n}")).ok().map(|l| l.size);
                let want = (n < 8).then_some(u64::from(n) + 1);
                prop_assert_eq!(got, want, "t{}", n);
            }
            prop_assert!(run.keep_absent_names().is_empty());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
