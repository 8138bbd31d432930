//! The traced process's loaded objects, as a debugger knows them: the ELF
//! files of `/proc/PID/maps`, opened through `/proc/PID/root` (so a
//! process in a container has its own files read), with their symbols.
//! The crates take them as [`ElfSymbols`], the same table
//! `mpidd_read::LiveTarget::open` builds.

use std::path::{Path, PathBuf};

use mpidd_read::{ElfSymbols, MappedFile, SymbolSource};
use mpidd_types::TargetAddr;

/// Why the loaded objects could not be listed.
#[derive(Debug, thiserror::Error)]
#[error("cannot read /proc/{pid}/maps: {cause}")]
pub struct ObjectsError {
    /// The process.
    pub pid: i32,
    /// The system's reason.
    #[source]
    pub cause: std::io::Error,
}

/// Why a breakpoint's function could not be placed.
#[derive(Debug, thiserror::Error)]
#[error("no loaded object of process {pid} defines `{name}` (searched: {searched})")]
pub struct NoSuchFunction {
    /// The process.
    pub pid: i32,
    /// The function asked for.
    pub name: String,
    /// The objects searched.
    pub searched: String,
}

/// The symbols of every ELF file process `pid` has mapped.
pub fn loaded_objects(pid: i32) -> Result<ElfSymbols, ObjectsError> {
    let maps = PathBuf::from(format!("/proc/{pid}/maps"));
    let text = std::fs::read_to_string(&maps).map_err(|cause| ObjectsError { pid, cause })?;
    let mappings: Vec<MappedFile> = text.lines().filter_map(parse_maps_line).collect();
    let root = PathBuf::from(format!("/proc/{pid}/root"));
    let mut objects = ElfSymbols::new();
    objects.add_mapped_objects(&mappings, "", |p| {
        root.join(Path::new(p.trim_start_matches('/')))
    });
    Ok(objects)
}

/// Where function `name` starts in process `pid`, by the loaded objects'
/// symbols.
pub fn function_address(
    objects: &ElfSymbols,
    pid: i32,
    name: &str,
) -> Result<TargetAddr, NoSuchFunction> {
    objects
        .lookup(name)
        .map(|s| s.addr)
        .ok_or_else(|| NoSuchFunction {
            pid,
            name: name.to_string(),
            searched: objects.searched_objects().join(", "),
        })
}

/// One line of `/proc/PID/maps` naming a file, as a [`MappedFile`].
fn parse_maps_line(line: &str) -> Option<MappedFile> {
    let mut parts = line.splitn(6, ' ');
    let range = parts.next()?;
    let _perms = parts.next()?;
    let offset = u64::from_str_radix(parts.next()?, 16).ok()?;
    let _dev = parts.next()?;
    let _inode = parts.next()?;
    let path = parts.next()?.trim_start();
    if !path.starts_with('/') || path.ends_with(" (deleted)") {
        return None;
    }
    let (start, end) = range.split_once('-')?;
    Some(MappedFile {
        start: TargetAddr(u64::from_str_radix(start, 16).ok()?),
        end: TargetAddr(u64::from_str_radix(end, 16).ok()?),
        file_offset: offset,
        path: path.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_maps_line_of_a_file_is_a_mapping_and_an_anonymous_one_is_not() {
        let line = "7f0000001000-7f0000003000 r-xp 00002000 08:01 42    /usr/lib/libmpi.so.40";
        let m = parse_maps_line(line).expect("a file mapping");
        assert_eq!(m.start, TargetAddr(0x7f00_0000_1000));
        assert_eq!(m.end, TargetAddr(0x7f00_0000_3000));
        assert_eq!(m.file_offset, 0x2000);
        assert_eq!(m.path, "/usr/lib/libmpi.so.40");
        assert!(parse_maps_line("7f0000001000-7f0000003000 rw-p 00000000 00:00 0").is_none());
        assert!(
            parse_maps_line("7f0000001000-7f0000003000 rw-p 00000000 00:00 0    [heap]").is_none()
        );
    }
}
