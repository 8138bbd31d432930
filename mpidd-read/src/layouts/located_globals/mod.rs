//! The hidden globals of a stripped library no profile names by build,
//! found in its file as it is, from what its release family predicts
//! ([`HiddenGlobalRecipes`], kept in the family's profile): pip's MPICH
//! wheels are stripped, have no build-id and hide MPICH's globals, so
//! neither a symbol table nor a profile's addresses for one build can say
//! where `MPIR_Process` or the object allocators are.
//!
//! - **Strings** beside another string: MPICH's version and device beside
//!   its configure line.
//! - **Records** of initialised data: an object allocator's initialiser
//!   (kind, object size, direct size) and the relative relocation of its
//!   pointer to the direct array, which places the direct array too.
//! - **References** of exported functions (`references`): every
//!   RIP-relative address, less the offsets the family's build
//!   references, votes for the global's start. Globals whose votes tie
//!   between a few starts are placed together (`tied_placement`), by
//!   what fits and by the distances the family's stand-in library keeps.
//!
//! Each global found says how; one not found says why
//! ([`LocatedGlobals::not_found`]). Nothing here is believed on its own:
//! the layouts' check on the process (`mpihandles::check_layouts`) reads
//! the allocators and the predefined communicators through them first.
//! Work is bounded by the file: the sections' sizes, a function's bytes
//! (64 KiB), its references (4096).

mod elf_view;
pub(crate) mod recipe;
mod references;
mod tied_placement;

use std::collections::{BTreeMap, HashMap};

use elf_view::{ElfView, SectionView};
use recipe::{HiddenGlobalRecipes, RecordRecipe, StringKind, StringRecipe};
use tied_placement::place_tied;

/// How far from the string it lies beside a string recipe looks.
const STRING_WINDOW: usize = 1024;

/// One global located in a file: where it is at link time, its size and
/// how it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocatedGlobal {
    /// Its name (`MPIR_Comm_mem`).
    pub name: String,
    /// Its link-time address.
    pub address: u64,
    /// Its size in bytes.
    pub size: u64,
    /// How it was found, for a person.
    pub how: String,
}

/// What the locator found in one file, and what it did not, with why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LocatedGlobals {
    /// The globals found, by name.
    pub found: BTreeMap<String, LocatedGlobal>,
    /// The globals not found, each with why.
    pub not_found: BTreeMap<String, String>,
}

impl LocatedGlobals {
    /// The string a located global holds, read from the file `data`: a
    /// C string in its read-only data.
    fn string_in(view: &ElfView<'_>, at: &LocatedGlobal) -> Option<String> {
        let rodata = view.section(".rodata")?;
        let from = usize::try_from(at.address.checked_sub(rodata.address)?).ok()?;
        let bytes = rodata.bytes.get(from..)?;
        let end = bytes.iter().take(STRING_WINDOW).position(|&b| b == 0)?;
        String::from_utf8(bytes[..end].to_vec()).ok()
    }
}

/// The strings the recipes locate (MPICH's version and device), read from
/// the file: what a family is matched on before anything else is looked
/// for. `None` when the file is no object the locator reads or lacks one
/// of them.
pub fn stated_strings(
    data: &[u8],
    recipes: &HiddenGlobalRecipes,
) -> Option<BTreeMap<String, String>> {
    let view = ElfView::parse(data).ok()?;
    let mut out = BTreeMap::new();
    for r in &recipes.strings {
        let at = locate_string(&view, r).ok()?;
        out.insert(r.symbol.clone(), LocatedGlobals::string_in(&view, &at)?);
    }
    Some(out)
}

/// Locates every global `recipes` describes in the object file `data`.
/// Fails only when the file is no x86-64 ELF object; each global not
/// found is named in [`LocatedGlobals::not_found`] with why.
pub fn locate_hidden_globals(
    data: &[u8],
    recipes: &HiddenGlobalRecipes,
) -> Result<LocatedGlobals, String> {
    let view = ElfView::parse(data)?;
    let mut out = LocatedGlobals::default();
    for r in &recipes.strings {
        match locate_string(&view, r) {
            Ok(g) => {
                out.found.insert(r.symbol.clone(), g);
            }
            Err(why) => {
                out.not_found.insert(r.symbol.clone(), why);
            }
        }
    }
    for r in &recipes.records {
        match locate_record(&view, r) {
            Ok(globals) => {
                for g in globals {
                    agree(&mut out, g);
                }
            }
            Err(why) => {
                out.not_found.insert(r.symbol.clone(), why.clone());
                for p in &r.pointers {
                    out.not_found.entry(p.symbol.clone()).or_insert_with(|| {
                        format!("its pointer is in {}, not found: {why}", r.symbol)
                    });
                }
            }
        }
    }
    // The GOT's slots, for functions that load a global's address there.
    let got = view
        .section(".got")
        .map(|s| view.relative_relocations(&s))
        .unwrap_or_default();
    // In rounds: a global found narrows the others (a request pool's
    // direct array is referenced beside its allocator); at most one round
    // per recipe, each finding one more or ending. Globals whose references
    // tie are then placed together, and what they take narrows the rest
    // again (a global tied between two starts, one of which a request pool
    // placed so turns out to overlap): at most once per recipe.
    let mut pending: Vec<&recipe::ReferenceRecipe> = recipes.references.iter().collect();
    let mut why_not = BTreeMap::new();
    // Where the family's stand-in library put each global it records.
    let standins: BTreeMap<&str, u64> = recipes
        .references
        .iter()
        .filter_map(|r| Some((r.symbol.as_str(), r.standin_address?)))
        .collect();
    for _ in 0..=recipes.references.len() {
        pending = reference_rounds(&view, &got, pending, &mut out, &mut why_not);
        let before = out.found.len();
        place_tied(&mut out, &pending, &why_not, &standins);
        pending.retain(|r| !out.found.contains_key(&r.symbol));
        if out.found.len() == before || pending.is_empty() {
            break;
        }
    }
    for r in pending {
        // Found another way already: that answer stands.
        if !out.found.contains_key(&r.symbol) {
            if let Some(miss) = why_not.remove(&r.symbol) {
                out.not_found.insert(r.symbol.clone(), miss.why);
            }
        }
    }
    Ok(out)
}

/// Rounds of [`locate_hidden_globals`] over the reference recipes still
/// pending, until a round finds none; returns those left, with why each
/// was not found in `why_not`.
fn reference_rounds<'r>(
    view: &ElfView<'_>,
    got: &HashMap<u64, u64>,
    mut pending: Vec<&'r recipe::ReferenceRecipe>,
    out: &mut LocatedGlobals,
    why_not: &mut BTreeMap<String, references::Miss>,
) -> Vec<&'r recipe::ReferenceRecipe> {
    while !pending.is_empty() {
        let mut left = Vec::new();
        for r in pending.iter().copied() {
            let sections: Vec<SectionView<'_>> =
                r.sections.iter().filter_map(|s| view.section(s)).collect();
            let taken: Vec<(u64, u64)> = out
                .found
                .values()
                .filter(|g| g.name != r.symbol)
                .map(|g| (g.address, g.size))
                .collect();
            match references::locate_by_references(view, r, &sections, &taken, got) {
                Ok((address, how)) => agree(
                    out,
                    LocatedGlobal {
                        name: r.symbol.clone(),
                        address,
                        size: r.size,
                        how,
                    },
                ),
                Err(miss) => {
                    why_not.insert(r.symbol.clone(), miss);
                    left.push(r);
                }
            }
        }
        if left.len() == pending.len() {
            return left;
        }
        pending = left;
    }
    pending
}

/// Adds `g`, unless another way placed the same global elsewhere: then
/// neither answer is believed.
fn agree(out: &mut LocatedGlobals, g: LocatedGlobal) {
    if out.not_found.contains_key(&g.name) && !out.found.contains_key(&g.name) {
        // A disagreement already ruled it out.
        if out.not_found[&g.name].starts_with("two ways disagree") {
            return;
        }
        out.not_found.remove(&g.name);
    }
    match out.found.get(&g.name) {
        Some(prior) if prior.address != g.address => {
            let why = format!(
                "two ways disagree: {:#x} ({}) and {:#x} ({})",
                prior.address, prior.how, g.address, g.how
            );
            out.found.remove(&g.name);
            out.not_found.insert(g.name, why);
        }
        Some(_) => {
            if let Some(prior) = out.found.get_mut(&g.name) {
                prior.how = format!("{}; and {}", prior.how, g.how);
            }
        }
        None => {
            out.found.insert(g.name.clone(), g);
        }
    }
}

/// A string beside the recipe's `near` string, in `.rodata`.
fn locate_string(view: &ElfView<'_>, r: &StringRecipe) -> Result<LocatedGlobal, String> {
    let rodata = view
        .section(".rodata")
        .ok_or_else(|| "the file has no .rodata".to_string())?;
    let near = memchr::memmem::find(rodata.bytes, r.near.as_bytes())
        .ok_or_else(|| format!("{:?} is not in .rodata", r.near))?;
    let from = near.saturating_sub(STRING_WINDOW);
    let to = near.saturating_add(STRING_WINDOW).min(rodata.bytes.len());
    let mut start = from;
    for piece in rodata.bytes[from..to].split(|&b| b == 0) {
        let at = start;
        start += piece.len() + 1;
        // A piece cut by the window's start is not a whole string.
        if at == from && at > 0 && rodata.bytes[at - 1] != 0 {
            continue;
        }
        let Ok(s) = std::str::from_utf8(piece) else {
            continue;
        };
        let fits = match r.is {
            StringKind::Version => is_version(s),
            StringKind::Device => s.starts_with("ch3") || s.starts_with("ch4"),
        };
        if fits {
            return Ok(LocatedGlobal {
                name: r.symbol.clone(),
                address: rodata.address + at as u64,
                size: piece.len() as u64 + 1,
                how: format!(
                    "the {:?} string within {STRING_WINDOW} bytes of {:?}",
                    r.is, r.near
                )
                .to_lowercase(),
            });
        }
    }
    Err(format!(
        "no {:?} string within {STRING_WINDOW} bytes of {:?}",
        r.is, r.near
    ))
}

/// `4.3.2`, `5.0.0a1`: a release version.
fn is_version(s: &str) -> bool {
    let mut parts = s.split('.');
    let numeric = |p: &str| !p.is_empty() && p.len() <= 3 && p.chars().all(|c| c.is_ascii_digit());
    let major = parts.next().unwrap_or("");
    let Some(minor) = parts.next() else {
        return false;
    };
    let minor = minor.trim_end_matches(|c: char| c.is_ascii_alphanumeric() && !c.is_ascii_digit());
    numeric(major)
        && !minor.is_empty()
        && minor.chars().take_while(|c| c.is_ascii_digit()).count() > 0
        && parts.all(|p| p.chars().next().is_some_and(|c| c.is_ascii_digit()) && p.len() <= 6)
        && s.len() <= 16
}

/// The record the recipe describes, and the globals its pointers name.
fn locate_record(view: &ElfView<'_>, r: &RecordRecipe) -> Result<Vec<LocatedGlobal>, String> {
    let section = view
        .section(&r.section)
        .ok_or_else(|| format!("the file has no {}", r.section))?;
    let relocations = view.relative_relocations(&section);
    let align = r.align.max(1);
    let bytes = section.bytes;
    let field = |at: usize, offset: u64, size: u64| -> Option<u64> {
        let from = at.checked_add(usize::try_from(offset).ok()?)?;
        let b = bytes.get(from..from.checked_add(usize::try_from(size).ok()?)?)?;
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        Some(u64::from_le_bytes(w))
    };
    let mut hits = Vec::new();
    let first = section.address.next_multiple_of(align) - section.address;
    let size = usize::try_from(r.size).map_err(|_| "a record larger than memory".to_string())?;
    let mut at = usize::try_from(first).unwrap_or(usize::MAX);
    while at.checked_add(size).is_some_and(|end| end <= bytes.len()) {
        let address = section.address + at as u64;
        let equal = r
            .equal
            .iter()
            .all(|f| f.size <= 8 && field(at, f.offset, f.size) == Some(f.value));
        if equal {
            let pointed: Option<Vec<LocatedGlobal>> = r
                .pointers
                .iter()
                .map(|p| {
                    let target = *relocations.get(&(address + p.offset))?;
                    let s = view.section(&p.section)?;
                    s.holds(target, p.size.max(1)).then(|| LocatedGlobal {
                        name: p.symbol.clone(),
                        address: target,
                        size: p.size,
                        how: format!("the direct pointer of {} at {address:#x}", r.symbol),
                    })
                })
                .collect();
            if let Some(pointed) = pointed {
                hits.push((address, pointed));
            }
        }
        at += usize::try_from(align).unwrap_or(usize::MAX);
    }
    match hits.len() {
        1 => {
            let (address, mut globals) = hits.remove(0);
            globals.insert(
                0,
                LocatedGlobal {
                    name: r.symbol.clone(),
                    address,
                    size: r.size,
                    how: format!(
                        "the only record of {} whose fields are the family's initialiser",
                        r.section
                    ),
                },
            );
            Ok(globals)
        }
        0 => Err(format!(
            "no record of {} has the family's initialiser ({})",
            r.section,
            r.equal
                .iter()
                .map(|f| format!("{} at +{}", f.value, f.offset))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        n => Err(format!(
            "{n} records of {} have the family's initialiser ({})",
            r.section,
            hits.iter()
                .map(|(a, _)| format!("{a:#x}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The hidden globals of the object file `data`, located by the first of
/// `profiles` whose release family predicts them and holds the version
/// and device the file states ([`stated_strings`]), with that family's
/// name. `None` when no family predicts this file's globals.
pub fn located_in_file<'p>(
    data: &[u8],
    profiles: impl IntoIterator<Item = &'p crate::LayoutProfile>,
) -> Option<(String, LocatedGlobals)> {
    for profile in profiles {
        for (family, _) in profile.families() {
            let Some(recipes) = family.hidden_globals.as_deref() else {
                continue;
            };
            let Some(stated) = stated_strings(data, recipes) else {
                continue;
            };
            let of = |kind: StringKind| {
                recipes
                    .strings
                    .iter()
                    .find(|s| s.is == kind)
                    .and_then(|s| stated.get(&s.symbol))
                    .map(String::as_str)
            };
            let Some(version) = of(StringKind::Version) else {
                continue;
            };
            let build = crate::StatedBuild {
                implementation: &family.implementation,
                version,
                arch: "x86_64",
                device: of(StringKind::Device),
            };
            if !family.contains(&build) {
                continue;
            }
            if let Ok(found) = locate_hidden_globals(data, recipes) {
                return Some((family.name(), found));
            }
        }
    }
    None
}

/// Whether `data` is an ELF file whose dynamic string table names
/// `MPI_Init` (or `PMPI_Init`) and no `ompi_` symbol: an MPI library other
/// than Open MPI's.
pub(crate) fn maybe_mpich_library(data: &[u8]) -> bool {
    use object::{Object, ObjectSection};
    let Ok(file) = object::File::parse(data) else {
        return false;
    };
    let Some(dynstr) = file.section_by_name(".dynstr") else {
        return false;
    };
    let Ok(strings) = dynstr.data() else {
        return false;
    };
    // The linker shares string tails: `MPI_Init` may be stored only as the
    // end of `PMPI_Init`.
    memchr::memmem::find(strings, b"MPI_Init\0").is_some()
        && memchr::memmem::find(strings, b"\0ompi_").is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use recipe::ReferenceRecipe;

    fn recipe(symbol: &str, size: u64) -> ReferenceRecipe {
        ReferenceRecipe {
            symbol: symbol.to_string(),
            size,
            align: 8,
            sections: vec![".bss".to_string()],
            functions: Vec::new(),
            standin_address: None,
        }
    }

    fn tie(tied: &[u64]) -> references::Miss {
        references::Miss {
            why: "tied".to_string(),
            tied: tied.to_vec(),
        }
    }

    #[test]
    fn versions_are_told_from_other_strings() {
        for v in ["4.3.2", "5.0.0", "5.0.0a1", "3.4", "4.3.0rc1"] {
            assert!(is_version(v), "{v}");
        }
        for s in [
            "ch4:ucx ofi",
            "--with-device=ch4",
            "4",
            "",
            "a.b",
            "1.2.3.4.5.6.7.8.9.10",
        ] {
            assert!(!is_version(s), "{s}");
        }
    }

    /// A request pool's three globals, which the same functions reference
    /// at their first byte: the one placement where none overlaps another
    /// places them; a second placement leaves them all unplaced.
    #[test]
    fn tied_globals_are_placed_only_where_one_placement_fits() {
        let mem = recipe("mem", 0x2000);
        let direct = recipe("direct", 0x1040);
        let builtin = recipe("builtin", 0x2288);
        let starts = [0xd05700, 0xd07700, 0xd08740];
        let misses: BTreeMap<String, references::Miss> = ["mem", "direct", "builtin"]
            .iter()
            .map(|n| (n.to_string(), tie(&starts)))
            .collect();
        let mut out = LocatedGlobals::default();
        place_tied(
            &mut out,
            &[&mem, &direct, &builtin],
            &misses,
            &BTreeMap::new(),
        );
        let at = |n: &str| out.found[n].address;
        assert_eq!(
            (at("mem"), at("direct"), at("builtin")),
            (0xd05700, 0xd07700, 0xd08740)
        );

        // Two globals small enough to go either way: neither is placed.
        let a = recipe("a", 0x10);
        let b = recipe("b", 0x10);
        let misses: BTreeMap<String, references::Miss> = ["a", "b"]
            .iter()
            .map(|n| (n.to_string(), tie(&[0x1000, 0x2000])))
            .collect();
        let mut out = LocatedGlobals::default();
        place_tied(&mut out, &[&a, &b], &misses, &BTreeMap::new());
        assert!(out.found.is_empty(), "{out:?}");
    }

    /// 4.2's request pool: the allocator and the builtin array have one
    /// size, so two placements fit; the distances the stand-in keeps
    /// between them choose one, and without them none is believed.
    #[test]
    fn a_same_size_tie_is_undone_by_the_standin_distances() {
        let starts = [0xbe9e00, 0xbec000, 0xbed000];
        let misses: BTreeMap<String, references::Miss> = ["mem", "direct", "builtin"]
            .iter()
            .map(|n| (n.to_string(), tie(&starts)))
            .collect();
        let (mut mem, mut direct, mut builtin) = (
            recipe("mem", 0x2200),
            recipe("direct", 0x1000),
            recipe("builtin", 0x2200),
        );
        let mut out = LocatedGlobals::default();
        place_tied(
            &mut out,
            &[&mem, &direct, &builtin],
            &misses,
            &BTreeMap::new(),
        );
        assert!(out.found.is_empty(), "{out:?}");

        mem.standin_address = Some(0x40_0000);
        direct.standin_address = Some(0x40_2200);
        builtin.standin_address = Some(0x40_3200);
        let mut out = LocatedGlobals::default();
        place_tied(
            &mut out,
            &[&mem, &direct, &builtin],
            &misses,
            &BTreeMap::new(),
        );
        let at = |n: &str| out.found[n].address;
        assert_eq!(
            (at("mem"), at("direct"), at("builtin")),
            (0xbe9e00, 0xbec000, 0xbed000)
        );
        assert!(out.found["mem"].how.contains("stand-in"), "{out:?}");

        // Distances no placement keeps: none is believed.
        builtin.standin_address = Some(0x40_5000);
        let mut out = LocatedGlobals::default();
        place_tied(
            &mut out,
            &[&mem, &direct, &builtin],
            &misses,
            &BTreeMap::new(),
        );
        assert!(out.found.is_empty(), "{out:?}");
    }

    /// libmpi_abi's builtin operations, tied alone between two starts
    /// (the one function that references them references an ABI table at
    /// its first byte too): placed at the start that keeps the stand-in's
    /// distance to the direct operations found already; without their
    /// stand-in addresses, or with a distance neither start keeps, not at
    /// all.
    #[test]
    fn a_lone_tie_is_undone_by_the_distance_to_a_global_found() {
        let mut builtin = recipe("builtin", 0x280);
        let misses: BTreeMap<String, references::Miss> =
            [("builtin".to_string(), tie(&[0xc2ccc0, 0xffba80]))].into();
        let found = || {
            let mut out = LocatedGlobals::default();
            out.found.insert(
                "direct".to_string(),
                LocatedGlobal {
                    name: "direct".to_string(),
                    address: 0xc2ca40,
                    size: 0x280,
                    how: "its allocator points at it".to_string(),
                },
            );
            out
        };
        let mut out = found();
        place_tied(&mut out, &[&builtin], &misses, &BTreeMap::new());
        assert!(!out.found.contains_key("builtin"), "{out:?}");

        builtin.standin_address = Some(0x237da0);
        let standins: BTreeMap<&str, u64> = [("builtin", 0x237da0), ("direct", 0x237b20)].into();
        let mut out = found();
        place_tied(&mut out, &[&builtin], &misses, &standins);
        assert_eq!(out.found["builtin"].address, 0xc2ccc0, "{out:?}");
        assert!(
            out.found["builtin"].how.contains("a global found already"),
            "{out:?}"
        );

        let far: BTreeMap<&str, u64> = [("builtin", 0x237da0), ("direct", 0x230000)].into();
        let mut out = found();
        place_tied(&mut out, &[&builtin], &misses, &far);
        assert!(!out.found.contains_key("builtin"), "{out:?}");
    }

    /// Two ways that place one global differently leave it unplaced,
    /// saying both.
    #[test]
    fn disagreeing_ways_leave_a_global_unplaced() {
        let mut out = LocatedGlobals::default();
        let g = |address| LocatedGlobal {
            name: "MPIR_Process".to_string(),
            address,
            size: 8,
            how: format!("way {address:#x}"),
        };
        agree(&mut out, g(0x1000));
        agree(&mut out, g(0x1000));
        assert_eq!(out.found["MPIR_Process"].address, 0x1000);
        agree(&mut out, g(0x2000));
        assert!(out.found.is_empty());
        assert!(out.not_found["MPIR_Process"].starts_with("two ways disagree"));
        agree(&mut out, g(0x1000));
        assert!(out.found.is_empty(), "a disagreement stands");
    }

    /// A file that is no x86-64 object is refused as a whole; one that is
    /// names every global it lacks.
    #[test]
    fn a_file_that_is_no_object_is_refused() {
        let recipes = HiddenGlobalRecipes {
            object: "libmpi.so.12".to_string(),
            ..HiddenGlobalRecipes::default()
        };
        assert!(locate_hidden_globals(b"not an ELF file", &recipes).is_err());
        assert!(stated_strings(b"\x7fELF", &recipes).is_none());
    }
}
