//! The names an object's DWARF does not define, remembered per build so
//! that no run scans that DWARF for them twice.
//!
//! A name counts as absent only when nothing could have hidden it: the
//! object's accelerator table offered no candidate for it, the scan of its
//! units has read every unit, and neither the scan nor an inflation of its
//! sections met a problem. What is remembered is tied to the DWARF it was
//! learned from ([`DwarfIdentity`]: the build-id of the file the DWARF was
//! read from and the sizes of the sections a scan reads), and a store
//! hands back only names kept for that very identity, so a debug file
//! installed later, a rebuilt library or a store file of another build
//! never answers for this one.

use std::collections::{BTreeSet, HashSet};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};

/// The DWARF of one object, as far as the names it defines go: the
/// build-id of the file that holds it (the object, or its separate debug
/// file), and the inflated sizes of the sections a name scan reads.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DwarfIdentity {
    /// The GNU build-id of the file the DWARF was read from, in hex.
    pub build_id: String,
    /// The size of its `.debug_info` in bytes, inflated.
    pub debug_info_bytes: u64,
    /// The size of its `.debug_abbrev` in bytes, inflated.
    pub debug_abbrev_bytes: u64,
    /// The size of its `.debug_str` in bytes, inflated.
    pub debug_str_bytes: u64,
    /// The size of its `.debug_types` in bytes, inflated (0: none).
    pub debug_types_bytes: u64,
}

/// Where a [`TypeOracle`](crate::TypeOracle) keeps, from one run to the
/// next, the type names each object's DWARF does not define
/// ([`LayoutCache`](crate::LayoutCache) is one, beside its layouts).
pub trait AbsentNameStore: Send + Sync {
    /// The names kept for DWARF of exactly this identity; `None` when
    /// none are kept, or what is kept is unreadable or was made for other
    /// DWARF.
    fn recall(&self, dwarf: &DwarfIdentity) -> Option<Vec<String>>;

    /// Keeps `names` as those that DWARF of this identity does not define,
    /// in place of what was kept before. An error says why they were not
    /// kept; nothing else depends on it.
    fn keep(&self, dwarf: &DwarfIdentity, names: &[String]) -> Result<(), String>;
}

/// How many names one object's list holds at most: a store file may be
/// anyone's, and the questions a decoder asks are a few hundred.
pub const MAX_ABSENT_NAMES: usize = 10_000;

/// One object's absent names: those recalled from the store and those
/// learned in this run.
#[derive(Default)]
pub(crate) struct AbsentNames {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    recalled: HashSet<String>,
    learned: BTreeSet<String>,
}

impl AbsentNames {
    /// Starts from what the store recalled (at most [`MAX_ABSENT_NAMES`]).
    pub(crate) fn recalled(names: Vec<String>) -> Self {
        AbsentNames {
            state: Mutex::new(State {
                recalled: names.into_iter().take(MAX_ABSENT_NAMES).collect(),
                learned: BTreeSet::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `name` is known to be absent.
    pub(crate) fn contains(&self, name: &str) -> bool {
        let state = self.lock();
        state.recalled.contains(name) || state.learned.contains(name)
    }

    /// Notes `name` as absent, learned in this run.
    pub(crate) fn learn(&self, name: &str) {
        let mut state = self.lock();
        if !state.recalled.contains(name)
            && state.recalled.len() + state.learned.len() < MAX_ABSENT_NAMES
        {
            state.learned.insert(name.to_string());
        }
    }

    /// Every absent name, sorted, when this run learned any (so there is
    /// something new to keep); else `None`.
    pub(crate) fn to_keep(&self) -> Option<Vec<String>> {
        let state = self.lock();
        if state.learned.is_empty() {
            return None;
        }
        let mut all: Vec<String> = state.recalled.iter().cloned().collect();
        all.extend(state.learned.iter().cloned());
        all.sort();
        all.dedup();
        Some(all)
    }

    /// Marks what was learned as kept.
    pub(crate) fn kept(&self) {
        let mut state = self.lock();
        let learned = std::mem::take(&mut state.learned);
        state.recalled.extend(learned);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recalled_and_learned_names_are_kept_together_once() {
        let names = AbsentNames::recalled(vec!["b".into(), "a".into()]);
        assert!(names.contains("a") && !names.contains("c"));
        assert_eq!(names.to_keep(), None, "nothing new, nothing to write");
        names.learn("c");
        names.learn("a");
        assert!(names.contains("c"));
        assert_eq!(
            names.to_keep(),
            Some(vec!["a".to_string(), "b".into(), "c".into()])
        );
        names.kept();
        assert_eq!(names.to_keep(), None);
    }

    #[test]
    fn the_list_is_capped() {
        let many = (0..MAX_ABSENT_NAMES + 5).map(|i| i.to_string()).collect();
        let names = AbsentNames::recalled(many);
        names.learn("one more");
        assert!(!names.contains("one more"));
    }
}
