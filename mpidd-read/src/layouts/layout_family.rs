//! Release families: the builds a profile's layouts hold for beyond the
//! exact builds it names. What moves the structs a decoder reads is the
//! implementation's release line, its PML or device, a few configure
//! choices and the ABI, not the build; so a profile may declare the
//! family it holds for, with the facts that back the claim, and a library
//! no profile names is offered the profile whose family contains the
//! version the library states. Such an offer is only a candidate: the
//! caller checks it on the process before anything is read through it
//! (`mpihandles::check_layouts`).

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::layouts::located_globals::recipe::HiddenGlobalRecipes;
use crate::layouts::LayoutTable;

/// The release family a profile's layouts hold for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutFamily {
    /// The implementation, as a library states it and profiles name it
    /// (`Open MPI`).
    pub implementation: String,
    /// The first version of the family (`5.0.7`), included.
    pub from_version: String,
    /// The first version past the family (`5.1`), excluded.
    pub below_version: String,
    /// The PML (Open MPI) or device (MPICH) whose types the profile
    /// holds (`ob1`).
    pub pml: String,
    /// Whether the family is of debug builds (Open MPI's
    /// `--enable-debug`, which puts `obj_magic_id` first in every
    /// object and so moves every member).
    pub debug: bool,
    /// The other configure choices that move members, as the family's
    /// builds make them (`--without-cuda`), for a person.
    #[serde(default)]
    pub configure: Vec<String>,
    /// The architecture, as [`object_arch`](crate::object_arch) names it.
    pub arch: String,
    /// What backs the claim: the upstream commits compared and what was
    /// compared, each a sentence.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// The real binaries the family was checked on, each a sentence.
    #[serde(default)]
    pub checked_on: Vec<String>,
    /// For UCX: whether the family's builds have assertions compiled in
    /// (`UCS_ENABLE_ASSERT`, on unless `--disable-assertions`), which adds
    /// members to the structs read (`ucs_async_context_t.owner`, so every
    /// member of `ucp_worker_t` after it moves). A library's own state is
    /// read from its file ([`ucx_assertions`](crate::ucx_assertions));
    /// `None` (the default, and every other implementation's) decides
    /// nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assertions: Option<bool>,
    /// Where the family's stripped libraries keep the globals they hide,
    /// as the family predicts it (its allocators' initialisers, the
    /// offsets its exported functions reference): how a library of the
    /// family that no profile names by build has them located in its
    /// file ([`locate_hidden_globals`](crate::locate_hidden_globals)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_globals: Option<Box<HiddenGlobalRecipes>>,
}

/// What a library states about its build, which a family is matched on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatedBuild<'a> {
    /// The implementation its symbols identify (`Open MPI`).
    pub implementation: &'a str,
    /// The version it states (Open MPI's `opal_version_string`).
    pub version: &'a str,
    /// The architecture of its file ([`object_arch`](crate::object_arch)).
    pub arch: &'a str,
    /// The device it states, when it states one (MPICH's
    /// `MPII_Version_device`: `ch3:nemesis`, `ch4:ucx`): an MPICH family
    /// holds the builds of its own device only ([`LayoutFamily::pml`]),
    /// whose structs differ from another device's. `None` decides
    /// nothing.
    pub device: Option<&'a str>,
}

impl LayoutFamily {
    /// Whether the library that states `build` is of this family: the
    /// same implementation and architecture, and a version from
    /// [`from_version`](Self::from_version) up to but not including
    /// [`below_version`](Self::below_version). A version that is not
    /// plain numbers and dots (a release candidate, a git snapshot) is
    /// in no family: which structs it has is not known.
    pub fn contains(&self, build: &StatedBuild<'_>) -> bool {
        self.mismatch(build).is_none()
    }

    /// Why the library that states `build` is not of this family (the
    /// first fact that keeps it out, for a person: `states version
    /// 5.0.6, below 5.0.7`), or `None` when it is
    /// ([`contains`](Self::contains)).
    ///
    /// ```
    /// use mpidd_read::{LayoutFamily, StatedBuild};
    ///
    /// let family = LayoutFamily {
    ///     implementation: "Open MPI".into(),
    ///     from_version: "5.0.7".into(),
    ///     below_version: "5.1".into(),
    ///     arch: "x86_64".into(),
    ///     ..LayoutFamily::default()
    /// };
    /// let stated = |version| StatedBuild { implementation: "Open MPI", version, arch: "x86_64", device: None };
    /// assert_eq!(family.mismatch(&stated("5.0.9")), None);
    /// assert_eq!(
    ///     family.mismatch(&stated("5.0.6")).as_deref(),
    ///     Some("it states version 5.0.6, below the family's first, 5.0.7")
    /// );
    /// ```
    pub fn mismatch(&self, build: &StatedBuild<'_>) -> Option<String> {
        if self.implementation != build.implementation {
            return Some(format!(
                "it is {}, the family is {}",
                build.implementation, self.implementation
            ));
        }
        if self.arch != build.arch {
            return Some(format!(
                "it is built for {}, the family for {}",
                build.arch, self.arch
            ));
        }
        // MPICH's device decides its request and communicator; Open MPI's
        // profiles answer every PML a process loads, so its `pml` does
        // not.
        if let Some(device) = build.device {
            if self.implementation == "MPICH" && !self.pml.is_empty() && device != self.pml {
                return Some(format!(
                    "it states device {device}, the family is of {}",
                    self.pml
                ));
            }
        }
        let Some(v) = version_numbers(build.version) else {
            return Some(format!(
                "it states version {:?}, which is not plain release numbers",
                build.version
            ));
        };
        let (Some(from), Some(below)) = (
            version_numbers(&self.from_version),
            version_numbers(&self.below_version),
        ) else {
            return Some(format!(
                "the family's bounds {:?} and {:?} are not plain release numbers",
                self.from_version, self.below_version
            ));
        };
        if compare_versions(&v, &from) == Ordering::Less {
            return Some(format!(
                "it states version {}, below the family's first, {}",
                build.version, self.from_version
            ));
        }
        if compare_versions(&v, &below) != Ordering::Less {
            return Some(format!(
                "it states version {}, not below the family's bound, {}",
                build.version, self.below_version
            ));
        }
        None
    }

    /// The family as a person reads it: `Open MPI 5.0.7 up to 5.1 (ob1,
    /// not a debug build, --without-cuda, x86_64)`.
    pub fn name(&self) -> String {
        let mut about = vec![
            self.pml.clone(),
            if self.debug {
                "a debug build".to_string()
            } else {
                "not a debug build".to_string()
            },
        ];
        match self.assertions {
            Some(true) => about.push("assertions on".to_string()),
            Some(false) => about.push("assertions off".to_string()),
            None => {}
        }
        about.extend(self.configure.iter().cloned());
        about.push(self.arch.clone());
        format!(
            "{} {} up to {} ({})",
            self.implementation,
            self.from_version,
            self.below_version,
            about.join(", ")
        )
    }
}

/// A release family a profile's layouts hold for once a few of its types
/// are laid out otherwise: the releases just before the profile's own
/// family, say, where a struct lacked a member added later. The other
/// types are the profile's, and the facts that back the claim say why
/// they are the same.
///
/// ```
/// use mpidd_read::{FamilyVariant, LayoutFamily, LayoutTable, Layouts};
///
/// let mut profile = LayoutTable::default();
/// profile
///     .add_type("ompi_group_t", 72)
///     .add_type("mca_common_ompio_data_t", 456)
///     .add_member("mca_common_ompio_data_t", "ompio_fh.f_atomicity", 124, 4)
///     .add_type("mca_pml_ucx_module_t", 1504);
/// let mut changed = LayoutTable::default();
/// changed
///     .add_type("mca_common_ompio_data_t", 448)
///     .add_member("mca_common_ompio_data_t", "ompio_fh.f_atomicity", 116, 4);
/// let older = LayoutFamily { from_version: "4.1.0".into(), below_version: "4.1.3".into(), ..LayoutFamily::default() };
/// let variant = FamilyVariant::new(older, changed, vec!["mca_pml_ucx_module_t".into()], &profile);
/// let l = variant.layouts();
/// assert_eq!(l.member("mca_common_ompio_data_t", "ompio_fh.f_atomicity").unwrap().offset, 116);
/// assert_eq!(l.size_of("ompi_group_t").unwrap(), 72);
/// assert!(l.size_of("mca_pml_ucx_module_t").is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilyVariant {
    /// The family, with the facts that back the claim and the binaries it
    /// was checked on.
    pub family: LayoutFamily,
    /// The types this family lays out otherwise than the profile, each
    /// whole (size, members, enumerators).
    #[serde(default)]
    pub changed: LayoutTable,
    /// The profile's types whose layout in this family is not known (not
    /// measured): asked through the family, they are unanswered, and what
    /// needs them is refused rather than read with another family's
    /// layout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<String>,
    /// The profile's layouts with `changed` in their place and `unknown`
    /// taken out: made when the profile is read.
    #[serde(skip)]
    layouts: LayoutTable,
}

impl FamilyVariant {
    /// The variant `family` of a profile whose layouts are `profile`:
    /// `changed` types in place of the profile's, `unknown` ones left out.
    pub fn new(
        family: LayoutFamily,
        changed: LayoutTable,
        unknown: Vec<String>,
        profile: &LayoutTable,
    ) -> Self {
        let mut variant = FamilyVariant {
            family,
            changed,
            unknown,
            layouts: LayoutTable::default(),
        };
        variant.lay_out(profile);
        variant
    }

    /// The layouts the family reads with.
    pub fn layouts(&self) -> &LayoutTable {
        &self.layouts
    }

    /// Makes [`layouts`](Self::layouts) from the profile's.
    pub(crate) fn lay_out(&mut self, profile: &LayoutTable) {
        let mut layouts = self.changed.clone();
        layouts.fill_from(profile);
        for name in &self.unknown {
            layouts.remove_type(name);
        }
        self.layouts = layouts;
    }
}

/// A version's numbers (`5.0.9` is `[5, 0, 9]`), or `None` when it is
/// anything but numbers separated by dots.
fn version_numbers(version: &str) -> Option<Vec<u64>> {
    version
        .trim()
        .split('.')
        .map(|part| {
            (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
                .then(|| part.parse().ok())
                .flatten()
        })
        .collect()
}

/// Compares two versions' numbers, a missing number being 0 (`5.1` is
/// `5.1.0`).
fn compare_versions(a: &[u64], b: &[u64]) -> Ordering {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            a.get(i)
                .copied()
                .unwrap_or(0)
                .cmp(&b.get(i).copied().unwrap_or(0))
        })
        .find(|o| *o != Ordering::Equal)
        .unwrap_or(Ordering::Equal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn family() -> LayoutFamily {
        LayoutFamily {
            implementation: "Open MPI".into(),
            from_version: "5.0.7".into(),
            below_version: "5.1".into(),
            pml: "ob1".into(),
            arch: "x86_64".into(),
            ..LayoutFamily::default()
        }
    }

    fn stated(version: &str) -> StatedBuild<'_> {
        StatedBuild {
            implementation: "Open MPI",
            version,
            arch: "x86_64",
            device: None,
        }
    }

    #[test]
    fn a_family_holds_its_versions_from_the_first_up_to_the_bound() {
        let f = family();
        for v in ["5.0.7", "5.0.9", "5.0.10", "5.0.11", "5.0.99"] {
            assert!(f.contains(&stated(v)), "{v}");
        }
        for v in [
            "5.0.6", "5.1", "5.1.0", "4.1.8", "6.0.0", "5.0.9rc1", "", "5.0..9", "5.0.x",
        ] {
            assert!(!f.contains(&stated(v)), "{v}");
        }
    }

    #[test]
    fn another_implementation_or_arch_is_not_of_the_family() {
        let f = family();
        let mut s = stated("5.0.9");
        s.implementation = "MPICH";
        assert!(!f.contains(&s));
        let mut s = stated("5.0.9");
        s.arch = "aarch64";
        assert!(!f.contains(&s));
    }

    #[test]
    fn a_ucx_family_names_its_assertions_and_keeps_them_across_json() {
        let f = LayoutFamily {
            implementation: "UCX".into(),
            from_version: "1.18.1".into(),
            below_version: "1.19".into(),
            pml: "ucp tag matching".into(),
            arch: "x86_64".into(),
            assertions: Some(false),
            ..LayoutFamily::default()
        };
        assert_eq!(
            f.name(),
            "UCX 1.18.1 up to 1.19 (ucp tag matching, not a debug build, assertions off, x86_64)"
        );
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(serde_json::from_str::<LayoutFamily>(&json).unwrap(), f);
        // Open MPI's families say nothing of it, and write nothing.
        let json = serde_json::to_string(&family()).unwrap();
        assert!(!json.contains("assertions"), "{json}");
    }

    #[test]
    fn an_old_profile_without_a_family_still_parses() {
        let json = r#"{"implementation":"Open MPI","from_version":"4.1.0","below_version":"4.2",
            "pml":"ob1","debug":false,"arch":"x86_64"}"#;
        let f: LayoutFamily = serde_json::from_str(json).unwrap();
        assert!(f.configure.is_empty() && f.evidence.is_empty());
        assert_eq!(
            f.name(),
            "Open MPI 4.1.0 up to 4.2 (ob1, not a debug build, x86_64)"
        );
    }

    /// The Open MPI 4.1.4 profile mpidd ships.
    fn shipped_4_1_4() -> crate::LayoutProfile {
        crate::shipped_profiles()
            .into_iter()
            .find(|p| p.identity.implementation == "Open MPI" && p.identity.version == "4.1.4")
            .expect("the 4.1.4 profile is shipped")
    }

    #[test]
    fn the_4_1_4_profile_holds_4_1_0_and_4_1_1_through_its_variant_and_not_4_1_2() {
        use crate::Layouts;
        let p = shipped_4_1_4();
        for v in ["4.1.0", "4.1.1"] {
            let (f, l) = p.family_holding(&stated(v)).expect(v);
            assert_eq!(
                (f.from_version.as_str(), f.below_version.as_str()),
                ("4.1.0", "4.1.2")
            );
            assert_eq!(l.size_of("mca_common_ompio_data_t").unwrap(), 448);
            assert_eq!(
                l.member_offset("mca_common_ompio_data_t", "ompio_fh.f_atomicity")
                    .unwrap(),
                116
            );
            assert_eq!(l.size_of("ompi_op_t").unwrap(), 1344);
            // What the family does not know is unanswered, not 4.1.4's.
            assert!(l.size_of("mca_pml_ucx_module_t").is_err());
            // The rest is the profile's.
            for (ty, member) in [
                ("ompi_communicator_t", "c_contextid"),
                ("mca_pml_ob1_recv_request_t", "req_recv.req_base.req_tag"),
                ("ompi_op_t", "o_name"),
            ] {
                assert_eq!(
                    l.member(ty, member).unwrap(),
                    p.layouts.member(ty, member).unwrap(),
                    "{ty}.{member}"
                );
            }
        }
        assert!(p.family_holding(&stated("4.1.2")).is_none());
        let (f, l) = p.family_holding(&stated("4.1.3")).unwrap();
        assert_eq!(f.from_version, "4.1.3");
        assert_eq!(l.size_of("mca_common_ompio_data_t").unwrap(), 456);
        assert_eq!(p.families().count(), 2);
    }

    #[test]
    fn a_variant_is_laid_out_again_when_its_profile_is_read() {
        let p = shipped_4_1_4();
        let again = crate::LayoutProfile::from_json(&p.to_json()).unwrap();
        assert_eq!(again, p);
        assert_eq!(
            again.family_variants[0].layouts(),
            p.family_variants[0].layouts()
        );
        assert!(!again.family_variants[0].layouts().is_empty());
    }

    #[test]
    fn the_chooser_offers_the_variant_for_a_version_only_it_holds() {
        use crate::{choose_layouts, LayoutOrigin, LayoutTable, Layouts};
        let profiles = vec![shipped_4_1_4()];
        let none = LayoutTable::default();
        let missing = |l: &dyn Layouts| {
            l.size_of("mca_common_ompio_data_t")
                .err()
                .into_iter()
                .collect::<Vec<_>>()
        };
        let (layouts, origin) = choose_layouts(
            &none,
            &missing,
            "libmpi.so.40",
            Some(&[0xab; 20]),
            Some("4.1.0"),
            &profiles,
            &[],
            Some(stated("4.1.0")),
        )
        .unwrap();
        assert_eq!(layouts.size_of("mca_common_ompio_data_t").unwrap(), 448);
        match origin {
            LayoutOrigin::Family(f) => {
                assert_eq!(f.family.from_version, "4.1.0");
                assert_eq!(f.stated_version, "4.1.0");
            }
            other => panic!("chosen as {other:?}"),
        }
        let refused = choose_layouts(
            &none,
            &missing,
            "libmpi.so.40",
            Some(&[0xab; 20]),
            Some("4.1.2"),
            &profiles,
            &[],
            Some(stated("4.1.2")),
        );
        assert!(refused.is_err());
    }

    #[test]
    fn an_mpich_family_holds_its_own_device_only_and_open_mpi_s_any_pml() {
        let ch3 = LayoutFamily {
            implementation: "MPICH".into(),
            from_version: "4.0".into(),
            below_version: "4.0.3".into(),
            pml: "ch3:nemesis".into(),
            arch: "x86_64".into(),
            ..LayoutFamily::default()
        };
        let mpich = |device| StatedBuild {
            implementation: "MPICH",
            version: "4.0.2",
            arch: "x86_64",
            device,
        };
        assert!(ch3.contains(&mpich(Some("ch3:nemesis"))));
        assert!(
            ch3.contains(&mpich(None)),
            "no device stated decides nothing"
        );
        assert_eq!(
            ch3.mismatch(&mpich(Some("ch4:ucx"))).as_deref(),
            Some("it states device ch4:ucx, the family is of ch3:nemesis")
        );
        // Open MPI's profiles answer every PML its processes load.
        let ompi = StatedBuild {
            device: Some("ucx"),
            ..stated("5.0.9")
        };
        assert!(family().contains(&ompi));
    }
}
