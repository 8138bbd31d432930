//! Where pip's MPICH wheels keep the globals they hide: located in the
//! wheel's own library from what its release family predicts, checked
//! against the list every wheel must give (mpich_wheels.rs for
//! `libmpi.so.12`, mpich_abi_wheels.rs for `libmpi_abi`).

use mpidd_read::LocatedGlobals;

use super::mpich_wheel_builds::Wheel;

/// The wheel's hidden globals, located in its `library` (`libmpi.so.12`,
/// or `libmpi_abi.so.N` from 5.0) from what its
/// family predicts: each at the one place its allocator record or the
/// exported functions' references agree on, none overlapping another;
/// those no exported function of the family's build references, and
/// those the references do not tell apart, are named with why.
pub fn hidden_globals_are_located_in(library: &str, wheel: &Wheel) -> LocatedGlobals {
    let venv = wheel.venv();
    let data = std::fs::read(venv.join("lib").join(library)).unwrap();
    let profiles = mpidd_read::shipped_profiles();
    let (family, found) = mpidd_read::located_in_file(&data, &profiles)
        .expect("a shipped family predicts the wheel's hidden globals");
    assert!(family.starts_with(wheel.family), "{family}");
    let mut located = vec![
        "MPII_Version_string",
        "MPII_Version_device",
        "MPIR_Process",
        "MPIDI_global",
        "MPIR_Comm_mem",
        "MPIR_Comm_direct",
        "MPIR_Comm_builtin",
        "MPIR_Request_mem",
        "MPIR_Request_direct",
        // 3.4 and 4.0 name it in the plural.
        if wheel.version.starts_with("4.0.") || wheel.version.starts_with("3.4.") {
            "MPIR_Request_builtins"
        } else {
            "MPIR_Request_builtin"
        },
        "MPIR_Group_mem",
        "MPIR_Group_direct",
        "MPIR_Group_builtin",
        "MPIR_Datatype_mem",
        "MPIR_Datatype_direct",
        "MPIR_Datatype_builtin",
        "MPIR_Errhandler_mem",
        "MPIR_Errhandler_direct",
        "MPIR_Errhandler_builtin",
        "MPIR_Info_mem",
        "MPIR_Info_direct",
        "MPIR_Info_builtin",
        "MPIR_Op_mem",
        "MPIR_Op_direct",
        "MPIR_Op_builtin",
        "MPIR_Win_mem",
        "MPIR_Win_direct",
        "MPII_Keyval_mem",
        "MPII_Keyval_direct",
        "MPID_Attr_mem",
        "MPID_Attr_direct",
    ];
    let missing = vec![
        "ADIOI_Ftable",
        "ADIOI_Ftable_ptr",
        "MPIDI_UCX_global",
        "MPIR_Topology_keyval",
    ];
    let mut names: Vec<&str> = found.found.keys().map(String::as_str).collect();
    located.sort();
    names.sort();
    assert_eq!(
        names,
        located,
        "{:#?}\n{:#x?}",
        found.not_found,
        found
            .found
            .values()
            .map(|g| (&g.name, g.address, g.size))
            .collect::<Vec<_>>()
    );
    // No two globals overlap.
    let mut spans: Vec<(u64, u64, &str)> = found
        .found
        .values()
        .map(|g| (g.address, g.address + g.size.max(1), g.name.as_str()))
        .collect();
    spans.sort();
    for w in spans.windows(2) {
        assert!(w[0].1 <= w[1].0, "{} overlaps {}", w[0].2, w[1].2);
    }
    let not_found: Vec<&str> = found.not_found.keys().map(String::as_str).collect();
    assert_eq!(not_found, missing, "{:#?}", found.not_found);
    for (name, why) in &found.not_found {
        assert!(
            why.starts_with("no exported function of the family's build references it"),
            "{name}: {why}"
        );
    }
    // The strings the wheel states, read at the places located.
    let recipes = profiles
        .iter()
        .flat_map(|p| p.families())
        .find_map(|(f, _)| f.hidden_globals.as_deref().filter(|_| f.name() == family))
        .unwrap();
    let stated = mpidd_read::stated_strings(&data, recipes).unwrap();
    assert_eq!(stated["MPII_Version_string"], wheel.version);
    assert_eq!(stated["MPII_Version_device"], wheel.device);
    found
}
