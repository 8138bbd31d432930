//! A global found from the addresses exported functions reference: each
//! function's RIP-relative operands are decoded (iced-x86), and every
//! address a function references, less each offset the family's build
//! references into the global, votes for where the global starts. Another
//! compiler inlines otherwise, so a function may miss some offsets or
//! reference others: the start most offsets agree on wins, and a tie is
//! no answer.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use iced_x86::{Decoder, DecoderOptions};

use super::elf_view::{ElfView, SectionView};
use super::recipe::ReferenceRecipe;

/// The most bytes of one function decoded: MPI's exported functions are
/// bindings of a few kilobytes at most.
const MAX_FUNCTION_BYTES: u64 = 1 << 16;
/// The most references kept of one function.
const MAX_TARGETS: usize = 1 << 12;

/// The most starts kept of a tie.
const MAX_TIED: usize = 8;

/// Why a global was not found by its references; when the best starts
/// tie, those starts, which a placement of several tied globals together
/// may still tell apart.
#[derive(Clone, Debug)]
pub(crate) struct Miss {
    pub(crate) why: String,
    pub(crate) tied: Vec<u64>,
}

impl Miss {
    fn because(why: String) -> Miss {
        Miss {
            why,
            tied: Vec::new(),
        }
    }
}

/// The addresses the function at `[address, address + size)` references
/// through RIP-relative operands; an operand in the GOT stands for the
/// address its slot's relative relocation gives (`got`).
pub(crate) fn referenced(
    view: &ElfView<'_>,
    address: u64,
    size: u64,
    got: &HashMap<u64, u64>,
) -> Option<BTreeSet<u64>> {
    let code = view.code(address, size.min(MAX_FUNCTION_BYTES))?;
    let mut decoder = Decoder::with_ip(64, code, address, DecoderOptions::NONE);
    let mut out = BTreeSet::new();
    while decoder.can_decode() && out.len() < MAX_TARGETS {
        let instruction = decoder.decode();
        if instruction.is_ip_rel_memory_operand() {
            let at = instruction.ip_rel_memory_address();
            out.insert(got.get(&at).copied().unwrap_or(at));
        }
    }
    Some(out)
}

/// Where the recipe's global starts, and how it was found; or why it
/// was not. `taken` are the ranges of globals already located, which no
/// answer may overlap (a pool's direct array has the same member offsets
/// as its builtin array).
pub(crate) fn locate_by_references(
    view: &ElfView<'_>,
    recipe: &ReferenceRecipe,
    sections: &[SectionView<'_>],
    taken: &[(u64, u64)],
    got: &HashMap<u64, u64>,
) -> Result<(u64, String), Miss> {
    let align = recipe.align.max(1);
    let fits = |base: u64| {
        base.is_multiple_of(align)
            && sections.iter().any(|s| s.holds(base, recipe.size.max(1)))
            && !taken.iter().any(|&(at, size)| {
                base < at.saturating_add(size.max(1))
                    && at < base.saturating_add(recipe.size.max(1))
            })
    };
    // Per start: the offsets that hit, over all functions, and the
    // functions with at least one hit.
    let mut votes: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
    let mut decoded = 0;
    let mut asked = 0;
    for f in &recipe.functions {
        let Some((address, size)) = view.function(&f.function) else {
            continue;
        };
        let Some(targets) = referenced(view, address, size, got) else {
            continue;
        };
        decoded += 1;
        asked += f.offsets.len();
        let mut hits: BTreeMap<u64, usize> = BTreeMap::new();
        for &t in &targets {
            for &offset in &f.offsets {
                let Some(base) = t.checked_sub(offset) else {
                    continue;
                };
                if fits(base) {
                    *hits.entry(base).or_default() += 1;
                }
            }
        }
        for (base, n) in hits {
            let v = votes.entry(base).or_default();
            v.0 += n;
            v.1 += 1;
        }
    }
    if recipe.functions.is_empty() {
        return Err(Miss::because(
            "no exported function of the family's build references it, and nothing else \
             predicts where it is"
                .to_string(),
        ));
    }
    if decoded == 0 {
        return Err(Miss::because(format!(
            "none of the {} exported functions that reference it in the family's build ({}) is \
             exported by this file",
            recipe.functions.len(),
            recipe
                .functions
                .iter()
                .map(|f| f.function.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut ranked: Vec<(u64, (usize, usize))> = votes.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let Some(&(base, (hits, functions))) = ranked.first() else {
        return Err(Miss::because(format!(
            "no address the {decoded} decoded functions reference fits it in {}",
            recipe.sections.join(" or ")
        )));
    };
    if let Some(&(other, votes)) = ranked.get(1) {
        if votes == (hits, functions) {
            let tied = ranked
                .iter()
                .take_while(|(_, v)| *v == votes)
                .take(MAX_TIED)
                .map(|(b, _)| *b)
                .collect();
            return Err(Miss {
                why: format!(
                    "the references agree as well on {base:#x} as on {other:#x} ({hits} \
                     offsets, {functions} functions)"
                ),
                tied,
            });
        }
    }
    // One offset of one function could be any global's member.
    let needed = asked.min(2);
    if hits < needed || functions * 2 < decoded {
        return Err(Miss::because(format!(
            "the best start, {base:#x}, has {hits} of {asked} offsets referenced by {functions} of \
             {decoded} functions: too few to believe"
        )));
    }
    Ok((
        base,
        format!(
            "{hits} of {asked} offsets referenced by {functions} of {decoded} exported functions"
        ),
    ))
}
