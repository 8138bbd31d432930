//! An MPI library's layouts over those of the library it runs on, each
//! chosen by its own build: two shared objects that gcc builds with
//! build-ids stand for an MPI library and UCX. The MPI library is read
//! through its DWARF or its profile; UCX's profile, found by UCX's
//! build-id, answers what the MPI library's source does not, and only for
//! the UCX build it was made for.

use std::path::{Path, PathBuf};

use mpidd_read::{
    build_id, build_id_hex, choose_loaded_layouts, companion_profiles, ElfSymbols, LayoutError,
    LayoutOrigin, LayoutProfile, LayoutTable, Layouts, ProfileIdentity, ProfileObject,
};

mod common;

fn temp_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mpidd-layered-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A shared object named `name` in `dir`, whose one global makes its
/// build-id its own.
fn shared_object(dir: &Path, name: &str, global: &str) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, format!("int {global} = 1;\n")).unwrap();
    let out = dir.join(name);
    common::gcc(&src, &out, &["-shared", "-fPIC", "-Wl,--build-id"]);
    out
}

fn hex_id(path: &Path) -> String {
    build_id_hex(
        &build_id(path)
            .unwrap()
            .expect("gcc gave the object a build-id"),
    )
}

/// A profile whose own library is `own` (made for `own_build`), also
/// describing `others`, with `layouts`.
fn profile(
    implementation: &str,
    own: (&str, &Path),
    others: &[(&str, &Path)],
    layouts: LayoutTable,
) -> LayoutProfile {
    let object = |name: &str, path: &Path| ProfileObject {
        name: name.to_string(),
        source_build_id: None,
        build_ids: vec![hex_id(path)],
        code_digests: Vec::new(),
    };
    let mut objects = vec![object(own.0, own.1)];
    objects.extend(others.iter().map(|(n, p)| object(n, p)));
    LayoutProfile::cached(
        ProfileIdentity {
            implementation: implementation.to_string(),
            version: "1".to_string(),
            build: "test".to_string(),
            arch: "x86_64".to_string(),
            objects,
        },
        layouts,
    )
}

fn objects(loaded: &[(&str, &Path)]) -> ElfSymbols {
    let mut symbols = ElfSymbols::new();
    for (i, (name, path)) in loaded.iter().enumerate() {
        symbols
            .add_object(path, name, 0x7f00_0000_0000 + (i as u64) * 0x100_0000)
            .unwrap();
    }
    symbols
}

fn mpi_questions(l: &dyn Layouts) -> Vec<LayoutError> {
    l.size_of("MPIR_Request").err().into_iter().collect()
}

#[test]
fn ucx_profile_answers_under_the_mpi_librarys_dwarf_and_profile() {
    let dir = temp_dir("choose");
    let mpi = shared_object(&dir, "libmpich.so.12", "mpi_global");
    let ucx = shared_object(&dir, "libucp.so.0", "ucx_global");
    let other_ucx = shared_object(&dir, "other-libucp.so.0", "another_ucx_global");

    let mut mpi_table = LayoutTable::default();
    mpi_table.add_type("MPIR_Request", 400);
    // The MPI library's profile also describes UCX's request, as the
    // profile of Debian's MPICH does: it is not UCX's profile.
    mpi_table.add_type("ucp_request_t", 999);
    let mut ucx_table = LayoutTable::default();
    ucx_table.add_type("ucp_request_t", 216);
    ucx_table.add_type("ucp_worker_t", 4096);
    let profiles = vec![
        profile(
            "MPICH",
            ("libmpich.so.12", &mpi),
            &[("libucp.so.0", &ucx)],
            mpi_table,
        ),
        profile("UCX", ("libucp.so.0", &ucx), &[], ucx_table),
    ];
    let loaded = objects(&[("libmpich.so.12", &mpi), ("libucp.so.0", &ucx)]);

    let beside = companion_profiles(&loaded, "libmpich.so.12", &profiles);
    assert_eq!(
        beside.len(),
        1,
        "UCX's profile alone is the MPI library's companion"
    );
    assert_eq!(beside[0].identity.implementation, "UCX");

    // Stripped MPI library: its profile first, then UCX's for what it lacks.
    let empty = LayoutTable::default();
    let (layered, origin) = choose_loaded_layouts(
        &empty,
        &mpi_questions,
        "libmpich.so.12",
        None,
        None,
        None,
        &loaded,
        &profiles,
    )
    .unwrap();
    assert!(matches!(origin, LayoutOrigin::Profile(ref p) if p.implementation == "MPICH"));
    assert_eq!(layered.size_of("MPIR_Request").unwrap(), 400);
    assert_eq!(
        layered.size_of("ucp_request_t").unwrap(),
        999,
        "the MPI library's own answer wins"
    );
    assert_eq!(layered.size_of("ucp_worker_t").unwrap(), 4096);
    assert!(
        layered.first().size_of("ucp_worker_t").is_err(),
        "UCX's answers are not the first source's"
    );

    // A debug MPI library: its DWARF (here a table) first, UCX's profile under it.
    let mut dwarf = LayoutTable::default();
    dwarf.add_type("MPIR_Request", 408);
    let (layered, origin) = choose_loaded_layouts(
        &dwarf,
        &mpi_questions,
        "libmpich.so.12",
        None,
        None,
        None,
        &loaded,
        &profiles,
    )
    .unwrap();
    assert_eq!(origin, LayoutOrigin::Dwarf);
    assert_eq!(layered.size_of("MPIR_Request").unwrap(), 408);
    assert_eq!(layered.size_of("ucp_request_t").unwrap(), 216);
    assert_eq!(layered.size_of("ucp_worker_t").unwrap(), 4096);

    // Another UCX build is loaded: no profile answers for it.
    let loaded = objects(&[("libmpich.so.12", &mpi), ("libucp.so.0", &other_ucx)]);
    assert!(companion_profiles(&loaded, "libmpich.so.12", &profiles).is_empty());
    let (layered, _) = choose_loaded_layouts(
        &dwarf,
        &mpi_questions,
        "libmpich.so.12",
        None,
        None,
        None,
        &loaded,
        &profiles,
    )
    .unwrap();
    let e = layered.size_of("ucp_worker_t").unwrap_err();
    assert!(e.to_string().contains("ucp_worker_t"), "{e}");

    // UCX not loaded at all (an MPI library on another transport).
    let loaded = objects(&[("libmpich.so.12", &mpi)]);
    assert!(companion_profiles(&loaded, "libmpich.so.12", &profiles).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
