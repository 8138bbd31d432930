//! Whether a profile still says what a debug build's DWARF says: the
//! profile's own questions asked again of the DWARF (`mpidd profile
//! check`, and the suite's check of the shipped profiles).

use crate::layouts::layout_profile::LayoutProfile;
use crate::layouts::{LayoutTable, Layouts};

/// How `profile` differs from `dwarf`: one entry per type whose recorded
/// answers differ, led by the first question the DWARF cannot answer
/// (`the DWARF lacks ...`). Empty when the profile equals the DWARF.
pub fn profile_drift(profile: &LayoutProfile, dwarf: &dyn Layouts) -> Vec<String> {
    let (fresh, unanswered) = LayoutTable::record(dwarf, &|l| profile.layouts.replay(l));
    let mut diffs = Vec::new();
    if let Some(e) = unanswered.first() {
        diffs.push(format!("the DWARF lacks {e}"));
    }
    // Compared as their serialized forms, type by type, so that a
    // difference is named by the type it is in.
    let (stored, fresh) = (
        serde_json::to_value(&profile.layouts).unwrap_or_default(),
        serde_json::to_value(&fresh).unwrap_or_default(),
    );
    if let (Some(stored), Some(fresh)) = (stored.as_object(), fresh.as_object()) {
        for (name, value) in stored {
            if fresh.get(name) != Some(value) {
                diffs.push(name.clone());
            }
        }
    }
    diffs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layouts::layout_profile::ProfileIdentity;
    use crate::layouts::LayoutNeed;

    fn profile_of(dwarf: &LayoutTable) -> LayoutProfile {
        let needs = [LayoutNeed::members("ompi_group_t", &["grp_proc_count"])];
        let ask = |l: &dyn Layouts| LayoutNeed::ask_all(&needs, l);
        let all = |l: &dyn Layouts| LayoutTable::answer(l, &needs).1;
        LayoutProfile::write(ProfileIdentity::default(), dwarf, &ask, &all).unwrap()
    }

    fn group(offset: u64) -> LayoutTable {
        let mut t = LayoutTable::default();
        t.add_type("ompi_group_t", 64)
            .add_member("ompi_group_t", "grp_proc_count", offset, 4);
        t
    }

    #[test]
    fn the_same_dwarf_shows_no_drift() {
        assert!(profile_drift(&profile_of(&group(8)), &group(8)).is_empty());
    }

    #[test]
    fn a_moved_member_names_its_type_and_a_missing_one_leads() {
        let profile = profile_of(&group(8));
        assert_eq!(profile_drift(&profile, &group(12)), ["ompi_group_t"]);
        let drift = profile_drift(&profile, &LayoutTable::default());
        assert!(drift[0].starts_with("the DWARF lacks"), "{drift:?}");
    }
}
