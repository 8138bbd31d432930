//! `mpidd_read::locate_hidden_globals` over an arbitrary file, with the
//! recipes of every shipped MPICH family that predicts its hidden
//! globals (the allocators' records, exported functions' references, the
//! version strings): the file's section headers, relocations, symbols and
//! code are all the input's, and every answer must lie in the section its
//! recipe names. `located_in_file` (the family matched on the file's own
//! strings) runs over the same bytes.
//!
//! ```text
//! input := an object file (ELF or not)
//! ```

#![no_main]

use libfuzzer_sys::fuzz_target;
use mpidd_read::{locate_hidden_globals, located_in_file, shipped_profiles, LayoutProfile};

fn profiles() -> &'static [LayoutProfile] {
    static PROFILES: std::sync::OnceLock<Vec<LayoutProfile>> = std::sync::OnceLock::new();
    PROFILES.get_or_init(shipped_profiles)
}

fuzz_target!(|data: &[u8]| {
    let profiles = profiles();
    for profile in profiles {
        for (family, _) in profile.families() {
            let Some(recipes) = family.hidden_globals.as_deref() else {
                continue;
            };
            let first = locate_hidden_globals(data, recipes);
            let again = locate_hidden_globals(data, recipes);
            assert_eq!(first, again, "locating twice gave two answers");
            if let Ok(found) = first {
                for (name, g) in &found.found {
                    assert_eq!(name, &g.name);
                    assert!(!found.not_found.contains_key(name), "{name} found and not");
                }
            }
        }
    }
    let _ = located_in_file(data, profiles);
});
