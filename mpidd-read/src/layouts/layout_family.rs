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
    /// let stated = |version| StatedBuild { implementation: "Open MPI", version, arch: "x86_64" };
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
}
