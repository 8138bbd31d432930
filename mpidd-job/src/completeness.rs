//! Whether the ranks read are one whole job: their launcher told each
//! rank its job's size and (under PMIx) its job's namespace, so a set of
//! cores or pids that leaves ranks out, or mixes two jobs, shows itself.
//! A verdict on part of a job must say so, never give an all-clear.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Finding, FindingKind, RankReport};
use crate::stack_tree::rank_set;

/// Most missing ranks a finding lists in its `ranks`; its summary tells
/// them all as ranges, at most [`TOLD_RANGES`] of them.
pub(crate) const MAX_LISTED: usize = 1024;
/// Most ranges of missing ranks a sentence tells.
const TOLD_RANGES: usize = 16;
/// Most jobs (namespaces or sizes) a sentence tells.
const TOLD_JOBS: usize = 4;

/// What the ranks read say of their job as a whole.
#[derive(Clone, Debug, Default)]
pub(crate) struct Completeness {
    /// The job's size, when the ranks that say one agree.
    pub size: Option<i64>,
    /// The world ranks below `size` that no reading has, as inclusive
    /// ranges, ascending.
    pub missing: Vec<(i64, i64)>,
    /// How many ranks `missing` holds.
    pub missing_count: u64,
    /// Each PMIx namespace with the world ranks read in it.
    pub namespaces: BTreeMap<String, Vec<i64>>,
    /// Each job size the ranks say with the world ranks that say it.
    pub sizes: BTreeMap<i64, Vec<i64>>,
}

impl Completeness {
    /// What `ranks` (the report's, sorted by world rank) say.
    pub fn of(ranks: &[RankReport]) -> Self {
        let mut c = Completeness::default();
        for r in ranks {
            let known: Option<i64> = Some(r.world_rank).filter(|&w| w >= 0);
            if let Some(ns) = &r.pmix_namespace {
                c.namespaces.entry(ns.clone()).or_default().extend(known);
            }
            if let Some(n) = r.job_size.filter(|&n| n > 0) {
                c.sizes.entry(n).or_default().extend(known);
            }
        }
        if c.sizes.len() != 1 || c.namespaces.len() > 1 {
            return c;
        }
        let Some(&size) = c.sizes.keys().next() else {
            return c;
        };
        c.size = Some(size);
        let present: BTreeSet<i64> = ranks
            .iter()
            .map(|r| r.world_rank)
            .filter(|&w| (0..size).contains(&w))
            .collect();
        // The gaps between the ranks present: as many ranges as ranks
        // read, whatever size a corrupt rank claims.
        let mut next = 0i64;
        for &w in present.iter().chain([size].iter()) {
            if w > next {
                c.missing.push((next, w - 1));
                c.missing_count += (w - next) as u64;
            }
            next = w.saturating_add(1);
        }
        c
    }

    /// Whether world rank `w` is one the job has but no reading has.
    pub fn is_missing(&self, w: i64) -> bool {
        self.missing.iter().any(|&(a, b)| (a..=b).contains(&w))
    }

    /// The missing ranks in short form: `3`, `1,4-7`, with how many more
    /// ranges when there are too many to tell.
    pub fn missing_text(&self) -> String {
        let mut parts: Vec<String> = self
            .missing
            .iter()
            .take(TOLD_RANGES)
            .map(|&(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            })
            .collect();
        if self.missing.len() > TOLD_RANGES {
            parts.push(format!(
                "and {} more range(s)",
                self.missing.len() - TOLD_RANGES
            ));
        }
        parts.join(",")
    }

    /// The findings: ranks missing, and ranks of different jobs.
    pub fn findings(&self, ranks: &[RankReport]) -> Vec<Finding> {
        let mut out = Vec::new();
        if let (Some(size), false) = (self.size, self.missing.is_empty()) {
            let read = ranks.len();
            let listed: Vec<i64> = self
                .missing
                .iter()
                .flat_map(|&(a, b)| a..=b)
                .take(MAX_LISTED)
                .collect();
            out.push(Finding {
                kind: FindingKind::MissingRanks,
                summary: format!(
                    "the job has {size} ranks, as its ranks' launcher told them, but rank(s) {} \
                     were not read ({} of {size} missing, {read} read): the verdict does not \
                     cover them, so give their cores or pids too",
                    self.missing_text(),
                    self.missing_count
                ),
                ranks: listed,
                operations: Vec::new(),
            });
        }
        if self.namespaces.len() > 1 {
            out.push(Finding {
                kind: FindingKind::MixedJobs,
                summary: format!(
                    "the ranks read belong to {} jobs, by their PMIx namespaces: {}: their world \
                     ranks name different processes, so read each job alone",
                    self.namespaces.len(),
                    told(&self.namespaces, |ns| format!("namespace {ns}"))
                ),
                ranks: involved(&self.namespaces),
                operations: Vec::new(),
            });
        } else if self.sizes.len() > 1 {
            out.push(Finding {
                kind: FindingKind::MixedJobs,
                summary: format!(
                    "the ranks read say different job sizes: {}: they cannot all be of one job, \
                     so read each job alone",
                    told(&self.sizes, |n| format!("{n} ranks"))
                ),
                ranks: involved(&self.sizes),
                operations: Vec::new(),
            });
        }
        out
    }
}

/// `namespace a (ranks 0-3); namespace b (ranks 0-1)`, at most
/// [`TOLD_JOBS`] of them.
fn told<K>(jobs: &BTreeMap<K, Vec<i64>>, name: impl Fn(&K) -> String) -> String {
    let mut parts: Vec<String> = jobs
        .iter()
        .take(TOLD_JOBS)
        .map(|(k, ranks)| {
            let mut r = ranks.clone();
            r.sort_unstable();
            r.dedup();
            if r.is_empty() {
                format!("{} (no world rank known)", name(k))
            } else {
                format!("{} (rank(s) {})", name(k), rank_set(&r))
            }
        })
        .collect();
    if jobs.len() > TOLD_JOBS {
        parts.push(format!("and {} more", jobs.len() - TOLD_JOBS));
    }
    parts.join("; ")
}

/// Every world rank of `jobs`, ascending, each once.
fn involved<K>(jobs: &BTreeMap<K, Vec<i64>>) -> Vec<i64> {
    let set: BTreeSet<i64> = jobs.values().flatten().copied().collect();
    set.into_iter().collect()
}
