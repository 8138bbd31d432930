//! What a stripped MPI library's file says it is, when its symbols do
//! not: MPICH keeps its configure line, device and version as string
//! constants beside each other in its read-only data (the values of
//! `MPII_Version_configure`, `MPII_Version_device`, `MPII_Version_string`),
//! whether or not those symbols are exported. Used to name the library in
//! a refusal, never to decode it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use mpidd_read::{ConstantData, ConstantMatch};

/// How far around the configure line the version and device are looked
/// for.
const WINDOW: usize = 1024;
/// Files whose strings one process remembers; past this many the memory
/// is cleared rather than grown.
const MAX_REMEMBERED: usize = 256;

/// What one library file states, read once.
#[derive(Clone, Debug, Default)]
struct Stated {
    /// MPICH's version and device.
    mpich: Option<(String, Option<String>)>,
    /// Intel MPI's release.
    intel: Option<String>,
}

/// The file's identity as far as a remembered answer goes: its size and
/// modification time (a file replaced under its path is read again).
type Stamp = (u64, Option<SystemTime>);

/// The version and device of the MPICH build in `path`, from its strings.
pub(crate) fn mpich_build_strings(path: &Path) -> Option<(String, Option<String>)> {
    stated(path).mpich
}

/// The Intel MPI release of the library in `path`, from its strings: its
/// banner's format (`Intel(R) MPI Library %s for Linux* OS`) is followed
/// by the release it fills in (`2021.19.0`). Kept in `.rodata`, so a
/// build stripped of its symbol table still says it.
pub(crate) fn intel_mpi_release(path: &Path) -> Option<String> {
    stated(path).intel
}

/// What the file at `path` states, from its constant data only, searched
/// once per process for each file: every rank of a job maps the same
/// library, and each read of one asks.
fn stated(path: &Path) -> Stated {
    static REMEMBERED: OnceLock<Mutex<HashMap<PathBuf, (Stamp, Stated)>>> = OnceLock::new();
    let Ok(meta) = std::fs::metadata(path) else {
        return Stated::default();
    };
    let stamp = (meta.len(), meta.modified().ok());
    let remembered = REMEMBERED.get_or_init(Default::default);
    let lock = || remembered.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((at, found)) = lock().get(path) {
        if *at == stamp {
            return found.clone();
        }
    }
    let found = match ConstantData::open(path) {
        Ok(data) => Stated {
            mpich: mpich_strings_in(&|needle| data.find(needle)),
            intel: intel_release_in(&|needle| data.find(needle)),
        },
        Err(_) => Stated::default(),
    };
    let mut remembered = lock();
    if remembered.len() >= MAX_REMEMBERED {
        remembered.clear();
    }
    remembered.insert(path.to_path_buf(), (stamp, found.clone()));
    found
}

/// Finds a needle in a file's constant data.
type Find<'a> = dyn Fn(&[u8]) -> Option<ConstantMatch<'a>> + 'a;

/// The version and device, from the strings around MPICH's configure line.
fn mpich_strings_in(find: &Find<'_>) -> Option<(String, Option<String>)> {
    find(b"MPICH Version:")?;
    let found = find(b"--with-device=").or_else(|| find(b"--with-pm="))?;
    let from = found.at.saturating_sub(WINDOW);
    let to = (found.at + WINDOW).min(found.section.len());
    let strings: Vec<&str> = found.section[from..to]
        .split(|&b| b == 0)
        .filter_map(|s| std::str::from_utf8(s).ok())
        .collect();
    let version = strings.iter().find(|s| is_version(s))?.to_string();
    let device = strings
        .iter()
        .find(|s| s.starts_with("ch3") || s.starts_with("ch4"))
        .map(|s| s.to_string());
    Some((version, device))
}

/// Intel MPI's release, from the strings after its banner.
fn intel_release_in(find: &Find<'_>) -> Option<String> {
    const BANNER: &[u8] = b"Intel(R) MPI Library %s for Linux* OS";
    let found = find(BANNER)?;
    let to = (found.at + BANNER.len() + WINDOW).min(found.section.len());
    found.section[found.at..to]
        .split(|&b| b == 0)
        .skip(1)
        .take(4)
        .filter_map(|s| std::str::from_utf8(s).ok())
        .find(|s| is_release(s))
        .map(str::to_string)
}

/// `2021.19.0`, `2021.6`: a year-numbered release.
fn is_release(s: &str) -> bool {
    let mut parts = s.split('.');
    let year = parts.next().unwrap_or("");
    let digits = |p: &str| !p.is_empty() && p.len() <= 4 && p.chars().all(|c| c.is_ascii_digit());
    year.len() == 4
        && digits(year)
        && parts.next().is_some_and(digits)
        && parts.next().is_none_or(digits)
        && parts.next().is_none()
}

/// `4.3.2`, `4.2.1`, `5.0.0a1`, `3.4a2`.
fn is_version(s: &str) -> bool {
    let mut parts = s.split('.');
    let major = parts.next().unwrap_or("");
    let Some(minor) = parts.next() else {
        return false;
    };
    let digits = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit());
    let tail = parts.next();
    s.len() <= 16
        && digits(major)
        && minor.chars().next().is_some_and(|c| c.is_ascii_digit())
        && minor.chars().all(|c| c.is_ascii_alphanumeric())
        && tail.is_none_or(|t| {
            t.chars().next().is_some_and(|c| c.is_ascii_digit())
                && t.chars().all(|c| c.is_ascii_alphanumeric())
        })
        && parts.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A finder over one section's bytes.
    fn in_bytes<'a>(bytes: &'a [u8]) -> impl Fn(&[u8]) -> Option<ConstantMatch<'a>> + 'a {
        move |needle| {
            bytes
                .windows(needle.len())
                .position(|w| w == needle)
                .map(|at| ConstantMatch { section: bytes, at })
        }
    }

    fn mpich_strings(bytes: &[u8]) -> Option<(String, Option<String>)> {
        mpich_strings_in(&in_bytes(bytes))
    }

    fn intel_release(bytes: &[u8]) -> Option<String> {
        intel_release_in(&in_bytes(bytes))
    }

    #[test]
    fn version_and_device_beside_the_configure_line() {
        let mut bytes = b"\0MPICH Version:      %s\0junk\0".to_vec();
        bytes.extend_from_slice(
            b"\0ch4:ucx ofi\0--with-device=ch4:ucx,ofi --with-pm=hydra\0Mon Aug 4 2025\x004.3.2\0",
        );
        assert_eq!(
            mpich_strings(&bytes),
            Some(("4.3.2".to_string(), Some("ch4:ucx ofi".to_string())))
        );
    }

    #[test]
    fn without_mpichs_format_string_or_configure_line_nothing_is_claimed() {
        assert_eq!(
            mpich_strings(b"\0ch4:ucx\0--with-device=ch4\x004.3.2\0"),
            None
        );
        assert_eq!(mpich_strings(b"\0MPICH Version: %s\0ch4\x004.3.2\0"), None);
    }

    #[test]
    fn intel_mpis_release_follows_its_banner() {
        let bytes = b"x\0Intel(R) MPI Library %s for Linux* OS\n\x002021.19.0\0I_MPI_INFO\0";
        assert_eq!(intel_release(bytes).as_deref(), Some("2021.19.0"));
        assert_eq!(intel_release(b"\0MPICH Version: %s\x002021.19.0\0"), None);
        let no_release = b"Intel(R) MPI Library %s for Linux* OS\n\0library kind: %s\0";
        assert_eq!(intel_release(no_release), None);
        for s in ["2021.6", "2021.19.0"] {
            assert!(is_release(s), "{s}");
        }
        for s in ["3.4a2", "21.6", "2021", "2021.x", "2021.1.2.3"] {
            assert!(!is_release(s), "{s}");
        }
    }

    #[test]
    fn versions_are_told_from_other_strings() {
        for v in ["4.3.2", "4.2.1", "5.0.0a1", "3.4a2", "4.0"] {
            assert!(is_version(v), "{v}");
        }
        for s in [
            "4",
            "4.",
            ".3",
            "4.3.2.1",
            "hydra",
            "2025.1.0 beta",
            "v4.3",
            "4.x",
        ] {
            assert!(!is_version(s), "{s}");
        }
    }
}
