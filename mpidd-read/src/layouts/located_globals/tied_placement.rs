//! Globals whose references tie between a few starts, placed together:
//! each on one of its starts so that none overlaps another or a global
//! found, and, where several placements fit, by the distances the
//! family's stand-in library keeps between globals one object defines.

use std::collections::BTreeMap;

use super::{agree, recipe, references, LocatedGlobal, LocatedGlobals};

/// The most globals placed together from their tied starts.
const MAX_PLACED_TOGETHER: usize = 4;

/// Globals whose references tie between a few starts (a request pool's
/// allocator, direct and builtin arrays, which the same functions
/// reference at their first byte), placed together: each on one of its
/// tied starts so that none overlaps another or a global found. Believed
/// only when exactly one such placement exists.
pub(super) fn place_tied(
    out: &mut LocatedGlobals,
    pending: &[&recipe::ReferenceRecipe],
    misses: &BTreeMap<String, references::Miss>,
    standins: &BTreeMap<&str, u64>,
) {
    let mut all: Vec<(&recipe::ReferenceRecipe, &[u64])> = pending
        .iter()
        .filter(|r| !out.found.contains_key(&r.symbol))
        .filter_map(|r| {
            let m = misses.get(&r.symbol)?;
            (!m.tied.is_empty()).then_some((*r, m.tied.as_slice()))
        })
        .collect();
    // Globals tie together when their starts are shared: each such group
    // is placed on its own.
    while let Some(first) = all.pop() {
        let mut group = vec![first];
        let mut grew = true;
        while grew {
            grew = false;
            let mut i = 0;
            while i < all.len() {
                if group
                    .iter()
                    .any(|(_, t)| t.iter().any(|s| all[i].1.contains(s)))
                {
                    group.push(all.swap_remove(i));
                    grew = true;
                } else {
                    i += 1;
                }
            }
        }
        place_group(out, &group, standins);
    }
}

/// One group of [`place_tied`].
fn place_group(
    out: &mut LocatedGlobals,
    tied: &[(&recipe::ReferenceRecipe, &[u64])],
    standins: &BTreeMap<&str, u64>,
) {
    if tied.len() > MAX_PLACED_TOGETHER {
        return;
    }
    let taken: Vec<(u64, u64)> = out.found.values().map(|g| (g.address, g.size)).collect();
    let overlaps = |a: (u64, u64), b: (u64, u64)| {
        a.0 < b.0.saturating_add(b.1.max(1)) && b.0 < a.0.saturating_add(a.1.max(1))
    };
    let mut placements: Vec<Vec<u64>> = Vec::new();
    let mut current: Vec<u64> = Vec::new();
    fn search(
        i: usize,
        tied: &[(&recipe::ReferenceRecipe, &[u64])],
        current: &mut Vec<u64>,
        placements: &mut Vec<Vec<u64>>,
        fits: &dyn Fn(&[u64], usize, u64) -> bool,
    ) {
        if placements.len() > MAX_PLACEMENTS {
            return;
        }
        if i == tied.len() {
            placements.push(current.clone());
            return;
        }
        for &start in tied[i].1 {
            if fits(current, i, start) {
                current.push(start);
                search(i + 1, tied, current, placements, fits);
                current.pop();
            }
        }
    }
    let fits = |placed: &[u64], i: usize, start: u64| {
        let me = (start, tied[i].0.size);
        !taken.iter().any(|&t| overlaps(me, t))
            && placed
                .iter()
                .enumerate()
                .all(|(j, &s)| !overlaps(me, (s, tied[j].0.size)))
    };
    search(0, tied, &mut current, &mut placements, &fits);
    if placements.len() > MAX_PLACEMENTS {
        return;
    }
    let names: Vec<&str> = tied.iter().map(|(r, _)| r.symbol.as_str()).collect();
    let (placement, how) = match placements.as_slice() {
        [one] => (
            one,
            format!(
                "its references tie between a few starts, and the only placement of {} on \
                 theirs where none overlaps another puts it here",
                names.join(", ")
            ),
        ),
        [] => return,
        several => {
            let kept: Vec<&Vec<u64>> = several
                .iter()
                .filter(|p| tied.len() > 1 && keeps_standin_distances(tied, p))
                .collect();
            let near: Vec<&Vec<u64>> = several
                .iter()
                .filter(|p| keeps_distance_to_found(tied, p, out, standins))
                .collect();
            match (kept.as_slice(), near.as_slice()) {
                ([one], _) => (
                    *one,
                    format!(
                        "its references tie between a few starts; of the placements of {} on \
                         theirs where none overlaps another, the only one that keeps their \
                         distances in the family's stand-in library puts it here",
                        names.join(", ")
                    ),
                ),
                (_, [one]) => (
                    *one,
                    format!(
                        "its references tie between a few starts; of the placements of {} on \
                         theirs where none overlaps another, the only one that keeps, for each, \
                         its distance in the family's stand-in library to a global found \
                         already puts it here",
                        names.join(", ")
                    ),
                ),
                _ => return,
            }
        }
    };
    for ((r, _), &address) in tied.iter().zip(placement) {
        agree(
            out,
            LocatedGlobal {
                name: r.symbol.clone(),
                address,
                size: r.size,
                how: how.clone(),
            },
        );
    }
}

/// The most placements of one tied group weighed: more is no answer.
const MAX_PLACEMENTS: usize = 16;

/// Whether `placement` puts the globals of `tied` at the distances from
/// one another that the family's stand-in library has them at; never
/// when a global's stand-in address is not recorded.
fn keeps_standin_distances(tied: &[(&recipe::ReferenceRecipe, &[u64])], placement: &[u64]) -> bool {
    let Some(first) = tied.first().and_then(|(r, _)| r.standin_address) else {
        return false;
    };
    let Some(&start) = placement.first() else {
        return false;
    };
    tied.iter().zip(placement).all(|((r, _), &address)| {
        r.standin_address.is_some_and(|s| {
            i128::from(s) - i128::from(first) == i128::from(address) - i128::from(start)
        })
    })
}

/// Whether `placement` puts each global of `tied` at the distance from a
/// global found already (another than itself) that the family's stand-in
/// library has between them: the globals one object defines keep their
/// distances (a pool's builtin array beside its direct array, found by
/// the allocator record). Never for a global with no stand-in address.
fn keeps_distance_to_found(
    tied: &[(&recipe::ReferenceRecipe, &[u64])],
    placement: &[u64],
    out: &LocatedGlobals,
    standins: &BTreeMap<&str, u64>,
) -> bool {
    tied.iter().zip(placement).all(|((r, _), &address)| {
        let Some(mine) = r.standin_address else {
            return false;
        };
        out.found.values().any(|g| {
            g.name != r.symbol
                && standins.get(g.name.as_str()).is_some_and(|&theirs| {
                    i128::from(mine) - i128::from(theirs)
                        == i128::from(address) - i128::from(g.address)
                })
        })
    })
}
