//! The type oracle against C compilers.
//!
//! `tests/c/oracle_layout.c` and `oracle_layout_def.c` are linked into one
//! shared object per compiler and DWARF flavour. The C files record the
//! compiler's own `sizeof`, `offsetof`, array lengths and bit-field widths
//! in the arrays `truth` / `truth_names` (and `truth_def` /
//! `truth_def_names`), and bit-field positions in initialized instances;
//! the test reads those from the object with the `object` crate and asks
//! the oracle the same questions.
//!
//! A missing compiler or tool is a failure that says which Debian package
//! provides it, never a skip.

use std::path::PathBuf;
use std::process::Command;

use mpidd_read::{NameIndexKind, TypeError, TypeKind, TypeOracle};
use object::{Object, ObjectSection};

mod oracle_fixture;
use oracle_fixture::{build, run, set_bits, temp_dir, Fixture, Variant, NATIVE};

/// Asks the oracle every question of the truth tables; returns the
/// disagreements.
fn check_truth(oracle: &TypeOracle, fixture: &Fixture, truth: &[(String, u64)]) -> Vec<String> {
    let mut wrong = Vec::new();
    let sizes = oracle.base_type_sizes();
    for (question, expected) in truth {
        let parts: Vec<&str> = question.split('|').collect();
        let got: Result<Option<u64>, TypeError> = match parts[..] {
            ["size", ty] => oracle.find_type(ty).map(|l| Some(l.size)),
            ["offset", ty, path] => oracle.offset_of(ty, path).map(|f| Some(f.offset)),
            ["msize", ty, path] => oracle.offset_of(ty, path).map(|f| f.size),
            ["alen", ty, path] => oracle.offset_of(ty, path).map(|f| f.array_len),
            ["bits", ty, path, instance] => oracle.offset_of(ty, path).map(|f| {
                let bits = f.bits?;
                // The instance is all zero but this field: its set bits
                // are where the compiler put it.
                let bytes = fixture.symbol(instance);
                let first = f.offset * 8 + bits.bit_offset;
                let want: Vec<u64> = (first..first + bits.bit_size).collect();
                let have = set_bits(&bytes, fixture.order());
                if have != want {
                    wrong.push(format!(
                        "{question}: the oracle puts it at bits {first}..{}, the compiler at {have:?}",
                        first + bits.bit_size
                    ));
                }
                let ones = (1u128 << bits.bit_size) - 1;
                let read = bits.extract(&bytes[f.offset as usize..], fixture.order());
                if read.map(u128::from) != Some(ones) {
                    wrong.push(format!("{question}: extract gives {read:?}"));
                }
                Some(bits.bit_size)
            }),
            ["base", which] => sizes.clone().map(|s| match which {
                "short" => s.short,
                "int" => s.int,
                "long" => s.long,
                "long_long" => s.long_long,
                "pointer" => s.pointer,
                "bool" => s.bool,
                "size_t" => s.size_t,
                other => panic!("unknown base type {other} in the fixture"),
            }),
            ["enum", ty, name] => oracle.find_type(ty).map(|l| {
                assert_eq!(l.kind, TypeKind::Enum, "{question}");
                l.enumerator(name).and_then(|v| u64::try_from(v).ok())
            }),
            _ => panic!("cannot parse the fixture's question {question:?}"),
        };
        match got {
            Ok(Some(v)) if v == *expected => {}
            other => wrong.push(format!("{question}: compiler {expected}, oracle {other:?}")),
        }
    }
    wrong
}

/// Builds one variant and checks every answer.
fn check_variant(v: &Variant) {
    let dir = temp_dir(v.name);
    let so = build(v, &dir);
    let fixture = Fixture::open(&so);
    let mut oracle = TypeOracle::new();
    oracle.add_object("liboracle.so", &so, None);

    // An index must answer from the index: nothing scanned.
    let first = oracle.find_type("outer_t").expect("outer_t");
    assert_eq!(first.kind, TypeKind::Struct);
    let stats = oracle.index_stats("liboracle.so").unwrap();
    assert_eq!(stats.kind, v.index, "{}: {stats:?}", v.name);
    if v.index != NameIndexKind::Scan {
        assert!(
            stats.accelerated_candidates > 0 && stats.units_scanned == 0,
            "{}: the index did not answer: {stats:?}",
            v.name
        );
    }

    let mut wrong = check_truth(&oracle, &fixture, &fixture.truth("truth", "truth_names"));
    wrong.extend(check_truth(
        &oracle,
        &fixture,
        &fixture.truth("truth_def", "truth_def_names"),
    ));
    assert!(
        wrong.is_empty(),
        "{} ({}): {} wrong answers:\n{}",
        v.name,
        so.display(),
        wrong.len(),
        wrong.join("\n")
    );
    check_names_and_kinds(&oracle, v.name);
    std::fs::remove_dir_all(&dir).ok();
}

/// What the compiler cannot write into an array: kinds, C type names,
/// anonymous members, declarations.
fn check_names_and_kinds(oracle: &TypeOracle, variant: &str) {
    let outer = oracle.find_type("outer_alias_t").unwrap();
    assert_eq!(outer.name, "outer_alias_t");
    assert_eq!(outer.object, "liboracle.so");
    let type_of = |member: &str| {
        outer
            .field(member)
            .unwrap_or_else(|| panic!("{variant}: no member {member}"))
            .type_name
            .clone()
            .unwrap()
    };
    assert_eq!(type_of("name"), "char [13]", "{variant}");
    assert_eq!(type_of("next"), "struct outer *", "{variant}");
    assert_eq!(type_of("pair"), "struct inner [2][3]", "{variant}");
    assert_eq!(type_of("callback"), "int (*)(void *, int)", "{variant}");
    assert_eq!(type_of("elsewhere"), "elsewhere_t *", "{variant}");
    assert_eq!(type_of("handle"), "cv_handle_t", "{variant}");
    assert_eq!(type_of("lo"), "short int", "{variant}");

    // Declaration order, and the anonymous union as a member without a name.
    let names: Vec<Option<&str>> = outer.members.iter().map(|f| f.name.as_deref()).collect();
    assert_eq!(
        names[..4],
        [Some("tag"), Some("inner"), None, Some("values")]
    );
    let anon = &outer.members[2];
    assert_eq!(anon.members.len(), 3, "{variant}: {anon:?}");
    assert_eq!(anon.members[1].name, None, "the anonymous struct inside");

    let number = oracle.find_type("union number").unwrap();
    assert_eq!(number.kind, TypeKind::Union);
    assert!(number.members.iter().all(|f| f.offset == 0));
    assert_eq!(
        oracle.find_type("cv_handle_t").unwrap().kind,
        TypeKind::Base
    );
    assert!(matches!(
        oracle.find_type("union outer"),
        Err(TypeError::NotFound { .. })
    ));

    // Descending by hand gives the same offsets as a dotted path.
    let inner = outer.field("inner").unwrap();
    let inner_type = oracle.member_type(inner).unwrap();
    assert_eq!(inner_type.kind, TypeKind::Struct);
    assert_eq!(inner_type.name, "struct inner");
    let d = inner_type.field("d").unwrap().offset;
    assert_eq!(
        oracle.offset_of("outer_t", "inner.d").unwrap().offset,
        inner.offset + d
    );
    // The member's type through a pointer to a struct declared only here.
    let pointer = oracle
        .member_type(outer.field("elsewhere").unwrap())
        .unwrap();
    assert_eq!(pointer.kind, TypeKind::Pointer);

    match oracle.offset_of("outer_t", "inner.nope") {
        Err(TypeError::NoSuchMember {
            type_name, member, ..
        }) => assert_eq!(
            (type_name.as_str(), member.as_str()),
            ("struct inner", "nope")
        ),
        other => panic!("{variant}: {other:?}"),
    }
    match oracle.offset_of("outer_t", "tag.x") {
        Err(TypeError::NoSuchMember { member, .. }) => assert_eq!(member, "x"),
        other => panic!("{variant}: {other:?}"),
    }
    // Declared in both units, defined in neither.
    match oracle.find_type("struct never_defined") {
        Err(TypeError::NotFound { searched, .. }) => {
            assert_eq!(searched.len(), 1);
            assert!(searched[0].has_debug_info && searched[0].declared_only);
        }
        other => panic!("{variant}: {other:?}"),
    }
}

#[test]
fn native_gcc_dwarf5() {
    check_variant(&NATIVE);
}

#[test]
fn native_gcc_dwarf4() {
    check_variant(&Variant {
        name: "gcc-dwarf4",
        flags: &["-gdwarf-4"],
        ..NATIVE
    });
}

#[test]
fn native_gcc_strict_dwarf2_location_expressions() {
    check_variant(&Variant {
        name: "gcc-dwarf2",
        flags: &["-gdwarf-2", "-gstrict-dwarf"],
        ..NATIVE
    });
}

/// How many type units the build of `v` has, in `.debug_info` and
/// `.debug_types`: a type-unit test with none would prove nothing.
fn type_units(v: &Variant) -> usize {
    let dir = temp_dir("type-units");
    let fixture = Fixture::open(&build(v, &dir));
    let file = fixture.file();
    let section = |name: &str| {
        let data = file
            .section_by_name(name)
            .map(|s| s.data().unwrap())
            .unwrap_or(&[]);
        gimli::EndianSlice::new(data, gimli::LittleEndian)
    };
    let mut count = 0;
    let mut units = gimli::DebugInfo::from(section(".debug_info")).units();
    while let Some(header) = units.next().unwrap() {
        count += usize::from(matches!(header.type_(), gimli::UnitType::Type { .. }));
    }
    let mut units = gimli::DebugTypes::from(section(".debug_types")).units();
    while let Some(_header) = units.next().unwrap() {
        count += 1;
    }
    std::fs::remove_dir_all(&dir).ok();
    count
}

#[test]
fn native_gcc_dwarf4_type_units_in_debug_types() {
    let v = Variant {
        name: "gcc-dwarf4-types",
        flags: &["-gdwarf-4", "-fdebug-types-section"],
        ..NATIVE
    };
    assert!(type_units(&v) > 3, "gcc made no type units");
    check_variant(&v);
}

#[test]
fn native_gcc_dwarf5_type_units() {
    let v = Variant {
        name: "gcc-dwarf5-types",
        flags: &["-gdwarf-5", "-fdebug-types-section"],
        ..NATIVE
    };
    assert!(type_units(&v) > 3, "gcc made no type units");
    check_variant(&v);
}

#[test]
fn native_gcc_compressed_sections() {
    let v = Variant {
        name: "gcc-gz",
        flags: &["-gz"],
        ..NATIVE
    };
    let dir = temp_dir("gz-probe");
    let so = build(&v, &dir);
    let fixture = Fixture::open(&so);
    let file = fixture.file();
    let info = file.section_by_name(".debug_info").expect(".debug_info");
    assert_ne!(
        info.compressed_file_range().unwrap().format,
        object::CompressionFormat::None,
        "gcc -gz left .debug_info uncompressed: the test would prove nothing"
    );
    std::fs::remove_dir_all(&dir).ok();
    check_variant(&v);
}

#[test]
fn gold_gdb_index() {
    check_variant(&Variant {
        name: "gold-gdb-index",
        flags: &["-ggnu-pubnames", "-fuse-ld=gold", "-Wl,--gdb-index"],
        package: "binutils (ld.gold)",
        index: NameIndexKind::GdbIndex,
        ..NATIVE
    });
}

#[test]
fn gdb_add_index_gdb_index() {
    check_variant(&Variant {
        name: "gdb-add-index",
        add_index: Some(&[]),
        index: NameIndexKind::GdbIndex,
        ..NATIVE
    });
}

#[test]
fn gdb_add_index_debug_names() {
    check_variant(&Variant {
        name: "gdb-add-index-dwarf5",
        add_index: Some(&["-dwarf-5"]),
        index: NameIndexKind::DebugNames,
        ..NATIVE
    });
}

#[test]
fn s390x_big_endian_64() {
    check_variant(&Variant {
        name: "s390x",
        cc: "s390x-linux-gnu-gcc",
        package: "gcc-s390x-linux-gnu",
        ..NATIVE
    });
}

#[test]
fn s390x_dwarf4_big_endian_bit_offsets() {
    check_variant(&Variant {
        name: "s390x-dwarf4",
        cc: "s390x-linux-gnu-gcc",
        package: "gcc-s390x-linux-gnu",
        flags: &["-gdwarf-4"],
        ..NATIVE
    });
}

#[test]
fn powerpc_big_endian_32() {
    check_variant(&Variant {
        name: "powerpc",
        cc: "powerpc-linux-gnu-gcc",
        package: "gcc-powerpc-linux-gnu",
        ..NATIVE
    });
}

#[test]
fn i686_little_endian_32() {
    check_variant(&Variant {
        name: "i686",
        cc: "i686-linux-gnu-gcc",
        package: "gcc-i686-linux-gnu",
        ..NATIVE
    });
}

#[test]
fn i686_dwarf4() {
    check_variant(&Variant {
        name: "i686-dwarf4",
        cc: "i686-linux-gnu-gcc",
        package: "gcc-i686-linux-gnu",
        flags: &["-gdwarf-4"],
        ..NATIVE
    });
}

/// `strip -g` and `objcopy --only-keep-debug` copies of the native build.
struct Stripped {
    dir: PathBuf,
    full: PathBuf,
    stripped: PathBuf,
    debug: PathBuf,
}

fn stripped() -> Stripped {
    let dir = temp_dir("stripped");
    let full = build(&NATIVE, &dir);
    let stripped = dir.join("liboracle-stripped.so");
    let debug = dir.join("liboracle.debug");
    run(
        Command::new("strip")
            .arg("-g")
            .arg("-o")
            .arg(&stripped)
            .arg(&full),
        "strip",
        "binutils",
    );
    run(
        Command::new("objcopy")
            .arg("--only-keep-debug")
            .arg(&full)
            .arg(&debug),
        "objcopy",
        "binutils",
    );
    Stripped {
        dir,
        full,
        stripped,
        debug,
    }
}

#[test]
fn a_missing_type_names_every_object_searched_and_the_stripped_ones() {
    let s = stripped();
    let mut oracle = TypeOracle::new();
    oracle.add_object("/lib/liboracle-stripped.so", &s.stripped, None);
    oracle.add_object("/lib/liboracle.so", &s.full, None);
    oracle.add_object("/lib/missing.so", &s.dir.join("missing.so"), None);

    let err = oracle.find_type("MPIR_Comm").unwrap_err();
    let TypeError::NotFound { name, searched } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(name, "MPIR_Comm");
    let names: Vec<&str> = searched.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "/lib/liboracle-stripped.so",
            "/lib/liboracle.so",
            "/lib/missing.so"
        ]
    );
    assert!(!searched[0].has_debug_info && searched[0].problem.is_none());
    assert!(searched[1].has_debug_info);
    assert!(searched[2]
        .problem
        .as_deref()
        .unwrap()
        .contains("missing.so"));
    let text = err.to_string();
    assert!(text.contains("/lib/liboracle-stripped.so"), "{text}");
    assert!(text.contains("looks stripped"), "{text}");
    assert!(text.contains("-g"), "{text}");
    assert!(text.contains("/lib/liboracle.so"), "{text}");

    // The type is found past the stripped object, and said to come from
    // the object that has it.
    let outer = oracle.find_type("outer_t").unwrap();
    assert_eq!(outer.object, "/lib/liboracle.so");
    // Per image: the stripped one has nothing.
    assert!(matches!(
        oracle.find_type_in("/lib/liboracle-stripped.so", "outer_t"),
        Err(TypeError::NotFound { .. })
    ));
    assert!(matches!(
        oracle.find_type_in("/lib/missing.so", "outer_t"),
        Err(TypeError::Io { .. })
    ));
    assert!(matches!(
        oracle.find_type_in("/lib/nothing.so", "outer_t"),
        Err(TypeError::UnknownObject { .. })
    ));
    assert_eq!(
        oracle
            .index_stats("/lib/liboracle-stripped.so")
            .unwrap()
            .kind,
        NameIndexKind::NoDebugInfo
    );
    let base = oracle.base_type_sizes_in("/lib/liboracle-stripped.so");
    assert!(matches!(base, Err(TypeError::NotFound { .. })), "{base:?}");
    std::fs::remove_dir_all(&s.dir).ok();
}

#[test]
fn a_stripped_object_is_read_through_its_debug_file() {
    let s = stripped();
    let mut oracle = TypeOracle::new();
    oracle.add_object("liboracle.so", &s.stripped, Some(&s.debug));
    let with_debug = oracle.find_type("outer_t").unwrap();

    let mut direct = TypeOracle::new();
    direct.add_object("liboracle.so", &s.full, None);
    assert_eq!(with_debug, direct.find_type("outer_t").unwrap());

    // A debug file without DWARF is named in the error.
    let mut wrong = TypeOracle::new();
    wrong.add_object("liboracle.so", &s.stripped, Some(&s.stripped));
    let text = wrong.find_type("outer_t").unwrap_err().to_string();
    assert!(text.contains("neither it nor its debug file"), "{text}");
    std::fs::remove_dir_all(&s.dir).ok();
}

#[test]
fn from_symbols_takes_every_object_in_order() {
    let s = stripped();
    let mut symbols = mpidd_read::ElfSymbols::default();
    symbols.add_object(&s.full, "liboracle.so", 0).unwrap();
    let oracle = TypeOracle::from_symbols(&symbols);
    assert_eq!(oracle.find_type("outer_t").unwrap().object, "liboracle.so");
    assert!(oracle.base_type_sizes().unwrap().int.is_some());
    std::fs::remove_dir_all(&s.dir).ok();
}
