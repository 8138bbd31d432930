//! The profiles a reader falls back on: the caller's, then the ones this
//! crate ships, whose layouts are parsed only when a process needs them.
//!
//! Parsing the shipped profiles (some 220 KB of JSON) was a third of a
//! warm read of a library with DWARF of its own, which never uses them:
//! it only asks whether a profile names one of its objects. Those
//! questions are answered from each shipped profile's identity, read
//! alone; the layouts are parsed the first time a build a profile names,
//! or a family it declares, is read.

use std::sync::{Arc, OnceLock};

use serde::Deserialize;

use crate::layouts::layout_profile::{
    hex, shipped_profile_list, shipped_texts, LayoutProfile, ProfileIdentity,
};

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
}

impl ProfileSet {
    /// The caller's `profiles`, first, then the ones this crate ships.
    pub fn shipped_after(profiles: Vec<LayoutProfile>) -> Self {
        ProfileSet {
            given: profiles,
            shipped: true,
            all: Arc::default(),
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

    fn identities(&self) -> impl Iterator<Item = &ProfileIdentity> {
        let shipped: &[ProfileIdentity] = if self.shipped {
            shipped_identities()
        } else {
            &[]
        };
        self.given.iter().map(|p| &p.identity).chain(shipped)
    }
}

impl From<Vec<LayoutProfile>> for ProfileSet {
    /// These profiles alone, without the shipped ones.
    fn from(given: Vec<LayoutProfile>) -> Self {
        ProfileSet {
            given,
            shipped: false,
            all: Arc::default(),
        }
    }
}

/// The identities of the shipped profiles, in their order, each read from
/// its profile's text without the layouts.
pub(crate) fn shipped_identities() -> &'static [ProfileIdentity] {
    static IDENTITIES: OnceLock<Vec<ProfileIdentity>> = OnceLock::new();
    IDENTITIES.get_or_init(|| {
        shipped_texts()
            .filter_map(|text| match identity_of(text) {
                Some(identity) => Some(identity),
                // Not where it is written: the whole profile says it.
                None => LayoutProfile::from_json(text).ok().map(|p| p.identity),
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
        assert_eq!(shipped_identities(), whole.as_slice());
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
}
