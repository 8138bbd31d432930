//! The profiles a reader falls back on: the caller's, then the ones this
//! crate ships, whose layouts are parsed only when a process needs them.
//!
//! Parsing the shipped profiles (some 220 KB of JSON) was a third of a
//! warm read of a library with DWARF of its own, which never uses them:
//! it only asks whether a profile names one of its objects. Those
//! questions are answered from each shipped profile's identity, read
//! alone. At 810 KB, parsing them all was most of a warm read of a
//! stripped build too, which needs two or three of them: a process is
//! given the profiles of what it loads ([`ProfileSet::for_loaded`]), each
//! parsed the first time a process needs it.

use std::sync::{Arc, Mutex, OnceLock};

use serde::Deserialize;

use crate::layouts::layered_layouts::loaded_keys;
use crate::symbols::loaded_objects::LoadedObjects;

use crate::layouts::layout_profile::{hex, so_stem, LayoutProfile, ProfileIdentity};
use crate::layouts::shipped_profiles::{shipped_profile, shipped_profile_list, shipped_texts};

/// How many choices of profiles a set keeps (one per distinct set of
/// loaded builds; a run reads a handful). Past it, they are made again.
const MAX_KEPT_CHOICES: usize = 16;

/// The profiles chosen for a set of loaded builds, by the indexes of the
/// shipped ones among them.
type Choice = (Vec<usize>, Arc<[LayoutProfile]>);

/// Loaded objects, each with its build key when read: what
/// [`ProfileSet::for_loaded`] chooses profiles for.
pub type LoadedKeys = [(String, Option<Vec<u8>>)];

/// The profiles a reader falls back on, in the order they are tried: the
/// caller's, then (for [`ProfileSet::shipped_after`]) the shipped ones.
///
/// ```
/// use mpidd_read::{ProfileSet, shipped_profiles};
///
/// let set = ProfileSet::shipped_after(Vec::new());
/// // Whether a profile might name a build is known without parsing any.
/// assert!(!set.might_describe(&[0xde, 0xad]));
/// assert_eq!(set.all().len(), shipped_profiles().len());
/// ```
#[derive(Clone, Debug, Default)]
pub struct ProfileSet {
    given: Vec<LayoutProfile>,
    shipped: bool,
    /// `given`, then the shipped profiles: made the first time all are
    /// asked for, and shared by the set's copies.
    all: Arc<OnceLock<Vec<LayoutProfile>>>,
    /// The profiles chosen for each set of loaded builds seen, by the
    /// indexes of the shipped ones chosen; shared by the set's copies.
    chosen: Arc<Mutex<Vec<Choice>>>,
}

impl ProfileSet {
    /// The caller's `profiles`, first, then the ones this crate ships.
    pub fn shipped_after(profiles: Vec<LayoutProfile>) -> Self {
        ProfileSet {
            given: profiles,
            shipped: true,
            all: Arc::default(),
            chosen: Arc::default(),
        }
    }

    /// The profiles this crate ships, alone.
    pub fn shipped() -> Self {
        Self::shipped_after(Vec::new())
    }

    /// Every profile, in order. The shipped ones are parsed on the first
    /// call (once per process).
    pub fn all(&self) -> &[LayoutProfile] {
        if !self.shipped {
            return &self.given;
        }
        self.all.get_or_init(|| {
            let mut all = self.given.clone();
            all.extend_from_slice(shipped_profile_list());
            all
        })
    }

    /// How many profiles there are, without parsing any.
    pub fn len(&self) -> usize {
        self.given.len()
            + if self.shipped {
                shipped_identities().len()
            } else {
                0
            }
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether a profile may describe the build whose key is `key`
    /// ([`LayoutProfile::describes`]): `false` means none does. Parses no
    /// layouts.
    pub fn might_describe(&self, key: &[u8]) -> bool {
        let key = hex(key);
        self.identities()
            .any(|i| i.objects.iter().any(|o| o.made_for_hex(&key)))
    }

    /// Whether a profile names an object called as `name` is
    /// ([`LayoutProfile::mentions`]). Parses no layouts.
    pub fn might_mention(&self, name: &str) -> bool {
        self.identities().any(|i| i.mentions(name))
    }

    /// The profiles that may answer for a process whose MPI library, of
    /// `implementation` (as profiles name it, `MPICH`), is loaded as
    /// `library`, beside the objects `loaded` (those a profile mentions,
    /// the library among them, with their build keys): the caller's,
    /// then, of the shipped ones,
    /// - each made for a loaded build's key;
    /// - for a loaded object no profile is made for, each that names it
    ///   (the candidates of its release family): of `implementation` for
    ///   the library itself, of any for a library beside it (UCX's).
    ///
    /// An empty `library` takes the candidates of every implementation.
    /// Only those are parsed; the same choice is made once per set.
    pub fn for_loaded(
        &self,
        implementation: &str,
        library: &str,
        loaded: &LoadedKeys,
    ) -> Arc<[LayoutProfile]> {
        let shipped: &[(usize, ProfileIdentity)] = if self.shipped {
            shipped_identities()
        } else {
            &[]
        };
        let made_for = |identity: &ProfileIdentity, key: &str| {
            identity.objects.iter().any(|o| o.made_for_hex(key))
        };
        let keys: Vec<(&str, Option<String>)> = loaded
            .iter()
            .map(|(name, key)| (name.as_str(), key.as_deref().map(hex)))
            .collect();
        let named = |key: &Option<String>| {
            key.as_deref().is_some_and(|key| {
                self.given.iter().any(|p| made_for(&p.identity, key))
                    || shipped.iter().any(|(_, i)| made_for(i, key))
            })
        };
        let unnamed: Vec<&str> = keys
            .iter()
            .filter(|(_, key)| !named(key))
            .map(|(name, _)| *name)
            .collect();
        let indexes: Vec<usize> = shipped
            .iter()
            .filter(|(_, identity)| {
                keys.iter()
                    .any(|(_, key)| key.as_deref().is_some_and(|key| made_for(identity, key)))
                    || unnamed.iter().any(|name| {
                        identity.mentions(name)
                            && (identity.implementation == implementation
                                || so_stem(name) != so_stem(library))
                    })
            })
            .map(|(index, _)| *index)
            .collect();
        let mut chosen = self.chosen.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, profiles)) = chosen.iter().find(|(i, _)| *i == indexes) {
            return profiles.clone();
        }
        let profiles: Arc<[LayoutProfile]> = self
            .given
            .iter()
            .cloned()
            .chain(indexes.iter().filter_map(|&i| shipped_profile(i)).cloned())
            .collect();
        if chosen.len() >= MAX_KEPT_CHOICES {
            chosen.clear();
        }
        chosen.push((indexes, profiles.clone()));
        profiles
    }

    /// The profiles that may answer for a process whose loaded objects
    /// are `objects`, when which MPI it loaded is not known yet (a handle
    /// resolver opening it): as [`for_loaded`](Self::for_loaded) chooses
    /// them, with the candidates of every implementation for a build no
    /// profile is made for. Only objects a profile mentions are opened
    /// for their build keys.
    pub fn for_objects(&self, objects: &dyn LoadedObjects) -> Arc<[LayoutProfile]> {
        let loaded = loaded_keys(objects, |name| self.might_mention(name));
        self.for_loaded("", "", &loaded)
    }

    fn identities(&self) -> impl Iterator<Item = &ProfileIdentity> {
        let shipped: &[(usize, ProfileIdentity)] = if self.shipped {
            shipped_identities()
        } else {
            &[]
        };
        self.given
            .iter()
            .map(|p| &p.identity)
            .chain(shipped.iter().map(|(_, i)| i))
    }
}

impl From<Vec<LayoutProfile>> for ProfileSet {
    /// These profiles alone, without the shipped ones.
    fn from(given: Vec<LayoutProfile>) -> Self {
        ProfileSet {
            given,
            shipped: false,
            all: Arc::default(),
            chosen: Arc::default(),
        }
    }
}

/// The identities of the shipped profiles, in their order, each with its
/// index among them ([`shipped_profile`]) and read from its profile's
/// text without the layouts.
pub(crate) fn shipped_identities() -> &'static [(usize, ProfileIdentity)] {
    static IDENTITIES: OnceLock<Vec<(usize, ProfileIdentity)>> = OnceLock::new();
    IDENTITIES.get_or_init(|| {
        shipped_texts()
            .enumerate()
            .filter_map(|(index, text)| match identity_of(text) {
                Some(identity) => Some((index, identity)),
                // Not where it is written: the whole profile says it.
                None => shipped_profile(index).map(|p| (index, p.identity.clone())),
            })
            .collect()
    })
}

/// The identity of the profile whose JSON text is `text`, read from its
/// top-level `identity` member alone: a profile written by this crate has
/// it before its layouts, and no other member of that name before it.
fn identity_of(text: &str) -> Option<ProfileIdentity> {
    const KEY: &str = "\"identity\":";
    let at = memchr::memmem::find(text.as_bytes(), KEY.as_bytes())?;
    let mut de = serde_json::Deserializer::from_str(&text[at + KEY.len()..]);
    ProfileIdentity::deserialize(&mut de).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shipped_identity_read_alone_is_the_whole_profiles() {
        let whole: Vec<ProfileIdentity> = shipped_profile_list()
            .iter()
            .map(|p| p.identity.clone())
            .collect();
        let alone: Vec<ProfileIdentity> = shipped_texts()
            .map(|t| identity_of(t).expect("an identity member"))
            .collect();
        assert_eq!(alone, whole);
        let indexed: Vec<ProfileIdentity> = shipped_identities()
            .iter()
            .map(|(_, i)| i.clone())
            .collect();
        assert_eq!(indexed, whole);
    }

    #[test]
    fn the_questions_answer_as_the_parsed_profiles_do() {
        let set = ProfileSet::shipped();
        for p in set.all() {
            for o in &p.identity.objects {
                assert!(set.might_mention(&o.name));
                for id in &o.build_ids {
                    let key: Vec<u8> = (0..id.len() / 2)
                        .map(|i| u8::from_str_radix(&id[2 * i..2 * i + 2], 16).unwrap())
                        .collect();
                    assert!(set.might_describe(&key));
                    assert!(set.all().iter().any(|q| q.describes(&key)));
                }
            }
        }
        assert!(!set.might_mention("libnothing.so.1"));
        assert!(!ProfileSet::from(Vec::new()).might_mention("libmpi.so.40"));
        assert_eq!(set.len(), set.all().len());
    }

    /// The build-id (bytes) of the first object named `stem` in the
    /// shipped profile of `implementation` `version`.
    fn shipped_key(implementation: &str, version: &str, stem: &str) -> Vec<u8> {
        let (_, identity) = shipped_identities()
            .iter()
            .find(|(_, i)| i.implementation == implementation && i.version == version)
            .expect("the profile ships");
        let object = identity
            .objects
            .iter()
            .find(|o| so_stem(&o.name) == stem && !o.build_ids.is_empty())
            .expect("an object with a build-id");
        let id = &object.build_ids[0];
        (0..id.len() / 2)
            .map(|i| u8::from_str_radix(&id[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    fn chosen(
        set: &ProfileSet,
        implementation: &str,
        library: &str,
        loaded: &LoadedKeys,
    ) -> Vec<String> {
        set.for_loaded(implementation, library, loaded)
            .iter()
            .map(|p| format!("{} {}", p.identity.implementation, p.identity.version))
            .collect()
    }

    #[test]
    fn a_process_is_given_the_profiles_of_its_builds_else_of_their_families() {
        let set = ProfileSet::shipped();
        // Debian 12's MPICH and UCX, each a build a profile is made for:
        // those profiles alone, not another MPICH's nor another UCX's.
        let mpich = shipped_key("MPICH", "4.0.2", "libmpich");
        let ucp = shipped_key("UCX", "1.13.1", "libucp");
        let loaded = vec![
            ("libmpich.so.12".to_string(), Some(mpich)),
            ("libucp.so.0".to_string(), Some(ucp)),
        ];
        assert_eq!(
            chosen(&set, "MPICH", "libmpich.so.12", &loaded),
            ["MPICH 4.0.2", "UCX 1.13.1"]
        );
        // A build no profile names: every profile of its implementation
        // that names its library, and every UCX profile for its libucp.
        let loaded = vec![
            ("libmpi.so.12".to_string(), None),
            ("libucp.so.0".to_string(), Some(vec![0xde, 0xad])),
        ];
        let names = chosen(&set, "MPICH", "libmpi.so.12", &loaded);
        assert!(names.contains(&"MPICH 4.0.2".to_string()), "{names:?}");
        assert!(
            names.iter().all(|n| !n.starts_with("Open MPI")),
            "{names:?}"
        );
        let ucx = shipped_identities()
            .iter()
            .filter(|(_, i)| i.implementation == "UCX")
            .count();
        assert_eq!(names.iter().filter(|n| n.starts_with("UCX")).count(), ucx);
        // The same choice again is the same profiles, not parsed again.
        let again = set.for_loaded("MPICH", "libmpi.so.12", &loaded);
        assert!(Arc::ptr_eq(
            &again,
            &set.for_loaded("MPICH", "libmpi.so.12", &loaded)
        ));
        // Nothing a profile names: none.
        assert!(chosen(
            &set,
            "MPICH",
            "libfoo.so.1",
            &[("libfoo.so.1".into(), None)]
        )
        .is_empty());
    }
}
