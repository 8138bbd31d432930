//! What a stripped MPI library's file says it is, when its symbols do
//! not: MPICH keeps its configure line, device and version as string
//! constants beside each other in its read-only data (the values of
//! `MPII_Version_configure`, `MPII_Version_device`, `MPII_Version_string`),
//! whether or not those symbols are exported. Used to name the library in
//! a refusal, never to decode it.

use std::path::Path;

/// Most bytes of a library file read for its strings.
const MAX_FILE: u64 = 512 << 20;
/// How far around the configure line the version and device are looked
/// for.
const WINDOW: usize = 1024;

/// The version and device of the MPICH build in `path`, from its strings.
pub(crate) fn mpich_build_strings(path: &Path) -> Option<(String, Option<String>)> {
    let len = std::fs::metadata(path).ok()?.len();
    if len > MAX_FILE {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    mpich_strings_in(&bytes)
}

/// The same, over a file's bytes.
pub(crate) fn mpich_strings_in(bytes: &[u8]) -> Option<(String, Option<String>)> {
    find(bytes, b"MPICH Version:")?;
    let at = find(bytes, b"--with-device=").or_else(|| find(bytes, b"--with-pm="))?;
    let from = at.saturating_sub(WINDOW);
    let to = (at + WINDOW).min(bytes.len());
    let strings: Vec<&str> = bytes[from..to]
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

/// The Intel MPI release of the library in `path`, from its strings: its
/// banner's format (`Intel(R) MPI Library %s for Linux* OS`) is followed
/// by the release it fills in (`2021.19.0`). Kept in `.rodata`, so a
/// build stripped of its symbol table still says it.
pub(crate) fn intel_mpi_release(path: &Path) -> Option<String> {
    let len = std::fs::metadata(path).ok()?.len();
    if len > MAX_FILE {
        return None;
    }
    intel_release_in(&std::fs::read(path).ok()?)
}

/// The same, over a file's bytes.
pub(crate) fn intel_release_in(bytes: &[u8]) -> Option<String> {
    const BANNER: &[u8] = b"Intel(R) MPI Library %s for Linux* OS";
    let at = find(bytes, BANNER)?;
    let to = (at + BANNER.len() + WINDOW).min(bytes.len());
    bytes[at..to]
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

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_and_device_beside_the_configure_line() {
        let mut bytes = b"\0MPICH Version:      %s\0junk\0".to_vec();
        bytes.extend_from_slice(
            b"\0ch4:ucx ofi\0--with-device=ch4:ucx,ofi --with-pm=hydra\0Mon Aug 4 2025\x004.3.2\0",
        );
        assert_eq!(
            mpich_strings_in(&bytes),
            Some(("4.3.2".to_string(), Some("ch4:ucx ofi".to_string())))
        );
    }

    #[test]
    fn without_mpichs_format_string_or_configure_line_nothing_is_claimed() {
        assert_eq!(
            mpich_strings_in(b"\0ch4:ucx\0--with-device=ch4\x004.3.2\0"),
            None
        );
        assert_eq!(
            mpich_strings_in(b"\0MPICH Version: %s\0ch4\x004.3.2\0"),
            None
        );
    }

    #[test]
    fn intel_mpis_release_follows_its_banner() {
        let bytes = b"x\0Intel(R) MPI Library %s for Linux* OS\n\x002021.19.0\0I_MPI_INFO\0";
        assert_eq!(intel_release_in(bytes).as_deref(), Some("2021.19.0"));
        assert_eq!(
            intel_release_in(b"\0MPICH Version: %s\x002021.19.0\0"),
            None
        );
        let no_release = b"Intel(R) MPI Library %s for Linux* OS\n\0library kind: %s\0";
        assert_eq!(intel_release_in(no_release), None);
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
