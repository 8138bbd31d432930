//! Which libpmix a launcher maps, and where this process opens that very
//! file: by the name in `/proc/PID/maps`, or through `/proc/PID/root`
//! when the launcher runs in a chroot or container, whichever has the
//! device and inode the map records.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::pmix::error::PmixError;

/// The launcher's libpmix as found in its memory map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MappedPmix {
    /// Its name in the map (from the reader's root, or the launcher's).
    pub(crate) recorded: String,
    /// Where this process opens the same file.
    pub(crate) open_at: PathBuf,
}

/// The launcher's libpmix, or why there is none.
pub(crate) fn find_libpmix(pid: i32) -> Result<MappedPmix, PmixError> {
    let maps =
        std::fs::read_to_string(format!("/proc/{pid}/maps")).map_err(|e| PmixError::NoProcess {
            pid,
            reason: e.to_string(),
        })?;
    let line = maps
        .lines()
        .filter_map(parse_line)
        .find(|m| is_libpmix(&m.path))
        .ok_or(PmixError::NotPmix { pid })?;
    let candidates = [
        Path::new("/proc")
            .join(pid.to_string())
            .join("root")
            .join(line.path.trim_start_matches('/')),
        PathBuf::from(&line.path),
    ];
    let same = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| {
            m.ino() == line.inode && dev_major_minor(m.dev()) == (line.major, line.minor)
        })
    };
    let open_at = candidates
        .iter()
        .find(|p| same(p))
        .cloned()
        .ok_or_else(|| PmixError::Load {
            pid,
            path: candidates[0].clone(),
            reason: format!(
                "neither {} nor {} is the file the launcher maps (device {:x}:{:02x}, inode {})",
                candidates[0].display(),
                candidates[1].display(),
                line.major,
                line.minor,
                line.inode
            ),
        })?;
    Ok(MappedPmix {
        recorded: line.path,
        open_at,
    })
}

/// Refuses a launcher that is stopped (`T`) or stopped by a tracer
/// (`t`): see [`PmixError::Stopped`].
pub(crate) fn check_running(pid: i32) -> Result<(), PmixError> {
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ")?.1.chars().next());
    match state {
        Some(state @ ('T' | 't')) => Err(PmixError::Stopped { pid, state }),
        _ => Ok(()),
    }
}

/// Whether process `pid` has another root than this process (a chroot,
/// a container's mount namespace).
pub(crate) fn root_differs(pid: i32) -> bool {
    let key = |p: String| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    match (
        key(format!("/proc/{pid}/root/")),
        key("/proc/self/root/".into()),
    ) {
        (Some(theirs), Some(ours)) => theirs != ours,
        // Unknown (no permission): assume the same root, so that an
        // unprivileged user is never asked to chroot.
        _ => false,
    }
}

/// `libpmix.so`, `libpmix.so.2`, `libpmix.so.2.13.7`.
fn is_libpmix(path: &str) -> bool {
    path.rsplit('/')
        .next()
        .is_some_and(|name| name.starts_with("libpmix.so"))
}

struct MapsLine {
    major: u32,
    minor: u32,
    inode: u64,
    path: String,
}

/// `start-end perms offset major:minor inode path`, for absolute paths
/// of files still there.
fn parse_line(line: &str) -> Option<MapsLine> {
    let mut parts = line.splitn(6, ' ');
    let _range = parts.next()?;
    let _perms = parts.next()?;
    let _offset = parts.next()?;
    let (major, minor) = parts.next()?.split_once(':')?;
    let inode = parts.next()?.parse().ok()?;
    let path = parts.next()?.trim_start();
    if !path.starts_with('/') || path.ends_with(" (deleted)") {
        return None;
    }
    Some(MapsLine {
        major: u32::from_str_radix(major, 16).ok()?,
        minor: u32::from_str_radix(minor, 16).ok()?,
        inode,
        path: path.to_string(),
    })
}

/// Linux's `major(dev)` and `minor(dev)` of a `st_dev`.
fn dev_major_minor(dev: u64) -> (u32, u32) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major as u32, minor as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_maps_line_gives_device_inode_and_path() {
        let l = parse_line(
            "7f00-7f10 r--p 00000000 fe:01 10474131                   /usr/lib/libpmix.so.2.13.7",
        )
        .unwrap();
        assert_eq!((l.major, l.minor, l.inode), (0xfe, 1, 10474131));
        assert_eq!(l.path, "/usr/lib/libpmix.so.2.13.7");
        assert!(is_libpmix(&l.path));
        assert!(!is_libpmix("/usr/lib/libpmixfoo.a"));
        assert!(parse_line("7f00-7f10 rw-p 00000000 00:00 0 ").is_none());
    }

    #[test]
    fn this_process_is_no_pmix_launcher() {
        let me = std::process::id() as i32;
        assert_eq!(find_libpmix(me), Err(PmixError::NotPmix { pid: me }));
        assert!(!root_differs(me));
    }
}
