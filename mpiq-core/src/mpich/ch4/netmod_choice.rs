//! Which network module a CH4 rank runs. A build may carry more than one
//! (pip's wheels: `ch4:ucx,ofi` from 4.3, `ch4:ofi,ucx` before); MPICH
//! takes the first unless the `CH4_NETMOD` control variable names another.
//! MPICH reads that variable from the environment under three names,
//! `MPICH_CH4_NETMOD`, then `MPIR_PARAM_CH4_NETMOD`, then
//! `MPIR_CVAR_CH4_NETMOD`, a later one set overriding an earlier, and
//! matches it to a netmod's name ignoring case (`src/util/mpir_cvars.c`,
//! `ch4_init.c`). The variable itself is a hidden global of the library,
//! so the rank's environment (libc's `environ`, live or in a core) is
//! what is read here.
//!
//! What depends on it is what the reading can say of the network: UCX's
//! worker holds the unexpected messages of the UCX netmod, while under
//! OFI the provider holds them, where MPICH keeps nothing to read.

use mpidd_read::{Limits, Target};

use crate::world_rank::{scan_environment, value_of};

/// The variable's names, in the order MPICH reads them: a later one set
/// overrides an earlier.
const NETMOD_VARIABLES: [&str; 3] = [
    "MPICH_CH4_NETMOD",
    "MPIR_PARAM_CH4_NETMOD",
    "MPIR_CVAR_CH4_NETMOD",
];

/// The netmods a device string names (`"ch4:ucx ofi"`, `"ch4:ofi,ucx"`,
/// `"ch4:ucx"`), in the build's order; none for another device.
pub(crate) fn netmods_of(device: &str) -> Vec<String> {
    let Some(list) = device.trim().strip_prefix("ch4:") else {
        return Vec::new();
    };
    list.split([' ', ','])
        .filter(|n| !n.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The netmod a rank runs, and how that was told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ChosenNetmod {
    /// Its name as the device string gives it (`ucx`, `ofi`).
    pub(crate) name: String,
    /// Why it is this one, for the reading's notes.
    pub(crate) how: String,
}

/// The netmod of `netmods` (the build's, in its order) the rank in
/// `target` runs: the one its environment names, else the build's first.
/// `None` when the build names none.
pub(crate) fn chosen_netmod(
    target: &dyn Target,
    limits: &Limits,
    netmods: &[String],
) -> Option<ChosenNetmod> {
    let first = netmods.first()?;
    if netmods.len() == 1 {
        return Some(ChosenNetmod {
            name: first.clone(),
            how: format!("the build's only netmod, {first}"),
        });
    }
    let mut set: [Option<String>; 3] = Default::default();
    let scanned = scan_environment(target.memory(), target.symbols(), limits, |entry| {
        for (i, var) in NETMOD_VARIABLES.iter().enumerate() {
            if let Some(v) = value_of(entry, var) {
                set[i] = Some(String::from_utf8_lossy(v).into_owned());
            }
        }
    });
    let default = |why: String| ChosenNetmod {
        name: first.clone(),
        how: format!("{why}, so the build's first netmod, {first}"),
    };
    if let Err(e) = scanned {
        return Some(default(format!(
            "the rank's environment could not be read ({e})"
        )));
    }
    let Some((var, value)) = NETMOD_VARIABLES
        .iter()
        .zip(&set)
        .rev()
        .find_map(|(var, v)| v.as_deref().map(|v| (*var, v)))
    else {
        return Some(default(format!(
            "no {} in the rank's environment",
            NETMOD_VARIABLES.join(", ")
        )));
    };
    if value.is_empty() {
        return Some(default(format!("{var} is empty")));
    }
    // MPICH compares the value's first characters with each name.
    let wanted = value.to_ascii_lowercase();
    match netmods.iter().find(|n| wanted.starts_with(n.as_str())) {
        Some(n) => Some(ChosenNetmod {
            name: n.clone(),
            how: format!("{var}={value} in the rank's environment"),
        }),
        // MPICH fails to start with a netmod it does not have: a rank that
        // runs has one of them, which this cannot tell.
        None => Some(ChosenNetmod {
            name: first.clone(),
            how: format!(
                "{var}={value} names none of the build's netmods ({}); taken as the first, {first}",
                netmods.join(", ")
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world_rank::tests::with_environment;
    use mpidd_read::{LayoutTable, TargetParts};
    use mpidd_types::TargetAbi;

    fn chosen(vars: &[&str], device: &str) -> ChosenNetmod {
        let (memory, symbols) = with_environment(TargetAbi::X86_64, vars);
        let target = TargetParts {
            memory: &memory,
            symbols: &symbols,
            layouts: &LayoutTable::default(),
        };
        chosen_netmod(&target, &Limits::default(), &netmods_of(device)).unwrap()
    }

    #[test]
    fn device_strings_name_their_netmods() {
        assert_eq!(netmods_of("ch4:ucx ofi"), ["ucx", "ofi"]);
        assert_eq!(netmods_of("ch4:ofi,ucx"), ["ofi", "ucx"]);
        assert_eq!(netmods_of("ch4:ucx"), ["ucx"]);
        assert!(netmods_of("ch3:nemesis").is_empty());
    }

    #[test]
    fn the_environment_names_the_netmod_else_the_first_runs() {
        let c = chosen(&["PATH=/bin", "MPIR_CVAR_CH4_NETMOD=ofi"], "ch4:ucx ofi");
        assert_eq!(c.name, "ofi");
        assert_eq!(c.how, "MPIR_CVAR_CH4_NETMOD=ofi in the rank's environment");
        // A later name overrides an earlier, wherever each is listed.
        let c = chosen(
            &["MPIR_CVAR_CH4_NETMOD=UCX", "MPICH_CH4_NETMOD=ofi"],
            "ch4:ucx ofi",
        );
        assert_eq!(c.name, "ucx");
        assert_eq!(chosen(&["MPICH_CH4_NETMOD=ofi"], "ch4:ucx ofi").name, "ofi");
        assert_eq!(chosen(&["PATH=/bin"], "ch4:ofi,ucx").name, "ofi");
        assert!(chosen(&["MPIR_CVAR_CH4_NETMOD="], "ch4:ucx ofi")
            .how
            .starts_with("MPIR_CVAR_CH4_NETMOD is empty"));
        let c = chosen(&["MPIR_CVAR_CH4_NETMOD=psm9"], "ch4:ucx ofi");
        assert_eq!(c.name, "ucx");
        assert!(
            c.how.contains("names none of the build's netmods"),
            "{}",
            c.how
        );
        // One netmod: the environment is not asked.
        let c = chosen(&["MPIR_CVAR_CH4_NETMOD=ofi"], "ch4:ucx");
        assert_eq!(c.name, "ucx");
    }
}
