//! Separate debug files and build-ids.
//!
//! Distributions strip their libraries and ship the full `.symtab` and the
//! DWARF in a separate file (Debian's `-dbgsym` packages put them under
//! `/usr/lib/debug`). [`DebugSearch`] finds that file the way gdb does:
//!
//! 1. by the object's build-id, at
//!    `<root>/.build-id/<first 2 hex digits>/<rest>.debug` for each root;
//! 2. by the file name its `.gnu_debuglink` section records, in
//!    `<dir of object>/<name>`, `<dir of object>/.debug/<name>` and
//!    `<root>/<dir of object>/<name>`.
//!
//! A debug file of another build of the same library carries symbols at the
//! wrong addresses and types of the wrong layout, so a candidate is only
//! accepted when it matches: the same build-id when the object has one,
//! else the CRC32 the debuglink records. Every candidate that exists but is
//! refused is kept with its reason ([`DebugLookup::rejected`]), so a user
//! can tell "found, but from another build" from "not installed".
//!
//! The search is here; `build_id.rs` reads the build-ids it matches by
//! (and that other parts of the crate key objects by), and `lookup.rs`
//! holds what a search gives back. Like the rest of `symbols`, this folder
//! reads files through `backend` only, never through `dwarf`, `layouts` or
//! `targets`.

mod build_id;
mod build_key;
pub(crate) mod kept_digest;
mod lookup;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use object::Object;

use crate::backend::core_file::map_file;
use crate::backend::file_identity::{file_key, os_file_name, FileKey};

use build_id::BUILD_ID_LEN;
pub use build_id::{build_id, build_id_from_bytes, build_id_in_headers};
pub use build_key::{build_key, build_key_from_bytes, BuildKey};
pub(crate) use lookup::hex;
use lookup::MAX_PATH_LEN;
pub use lookup::{DebugFile, DebugLookup, MatchedBy, RejectReason, Rejection};

/// Where distributions install debug files.
pub const DEFAULT_DEBUG_ROOT: &str = "/usr/lib/debug";

/// Longest debuglink name accepted, in bytes: Linux's `NAME_MAX`.
const MAX_NAME_LEN: usize = 255;

/// What identifies the right debug file.
#[derive(Clone, Copy)]
enum Expect<'a> {
    BuildId(&'a [u8]),
    Crc(u32),
}

/// Where to look for separate debug files: the debug root directories,
/// [`DEFAULT_DEBUG_ROOT`] unless set.
///
/// ```no_run
/// use mpidd_read::{DebugSearch, MatchedBy};
/// use std::path::Path;
///
/// let search = DebugSearch::new(["/opt/sysroot/usr/lib/debug"]);
/// let lookup = search.search(Path::new("/opt/sysroot/usr/lib/libmpi.so.12"));
/// match lookup.found() {
///     Some(f) => println!("{} ({:?})", f.path.display(), f.matched_by),
///     None => lookup.rejected().iter().for_each(|r| println!("refused {r}")),
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DebugSearch {
    roots: Vec<PathBuf>,
}

impl Default for DebugSearch {
    fn default() -> Self {
        DebugSearch {
            roots: vec![PathBuf::from(DEFAULT_DEBUG_ROOT)],
        }
    }
}

impl DebugSearch {
    /// Searches these debug roots, in order. With none, only the
    /// debuglink places beside the object are searched.
    pub fn new<P: Into<PathBuf>>(roots: impl IntoIterator<Item = P>) -> Self {
        DebugSearch {
            roots: roots.into_iter().map(Into::into).collect(),
        }
    }

    /// The debug roots.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The debug file of the ELF file at `object_path`, if one matches.
    pub fn find(&self, object_path: &Path) -> Option<DebugFile> {
        self.search(object_path).into_found()
    }

    /// Searches for the debug file of the ELF file at `object_path`,
    /// keeping what was tried and refused.
    pub fn search(&self, object_path: &Path) -> DebugLookup {
        self.search_as(object_path, object_path)
    }

    /// Like [`search`](Self::search) for an object read from `on_disk` that
    /// the target knew as `target_path` (under a sysroot, or through
    /// `/proc/PID/root`). Files beside the object are looked for beside
    /// `on_disk`; `<root>/<dir of object>` uses `target_path`'s directory,
    /// so a root inside a sysroot mirrors the target's layout.
    pub fn search_as(&self, on_disk: &Path, target_path: &Path) -> DebugLookup {
        let mut lookup = DebugLookup::default();
        let data = match map_file(on_disk) {
            Ok(d) => d,
            Err(e) => {
                lookup.reject(
                    on_disk,
                    RejectReason::ObjectUnreadable {
                        reason: e.to_string(),
                    },
                );
                return lookup;
            }
        };
        match object::File::parse(&*data) {
            Ok(file) => self.search_parsed(&file, on_disk, target_path, &mut lookup),
            Err(e) => lookup.reject(
                on_disk,
                RejectReason::ObjectUnreadable {
                    reason: e.to_string(),
                },
            ),
        }
        lookup
    }

    /// The search, for an object already parsed.
    pub(crate) fn search_parsed(
        &self,
        file: &object::File<'_>,
        on_disk: &Path,
        target_path: &Path,
        lookup: &mut DebugLookup,
    ) {
        let unreadable = |e: object::Error| RejectReason::ObjectUnreadable {
            reason: e.to_string(),
        };
        let own_id = file.build_id().unwrap_or_else(|e| {
            lookup.reject(on_disk, unreadable(e));
            None
        });
        let own_identity = std::fs::metadata(on_disk)
            .ok()
            .and_then(|m| file_key(on_disk, &m));

        if let Some(id) = own_id {
            if BUILD_ID_LEN.contains(&id.len()) {
                let hex = hex(id);
                let (dir, rest) = hex.split_at(2);
                for root in &self.roots {
                    let path = root
                        .join(".build-id")
                        .join(dir)
                        .join(format!("{rest}.debug"));
                    if try_candidate(&path, Expect::BuildId(id), own_identity.as_ref(), lookup) {
                        lookup.found = Some(DebugFile {
                            path,
                            matched_by: MatchedBy::BuildId,
                        });
                        return;
                    }
                }
            } else {
                lookup.reject(on_disk, RejectReason::BuildIdUnusable { len: id.len() });
            }
        }

        let link = file.gnu_debuglink().unwrap_or_else(|e| {
            lookup.reject(on_disk, unreadable(e));
            None
        });
        let Some((raw_name, crc)) = link else { return };
        let Some(name) = plain_file_name(raw_name) else {
            lookup.reject(
                on_disk,
                RejectReason::BadDebugLinkName {
                    name: String::from_utf8_lossy(raw_name).into_owned(),
                },
            );
            return;
        };
        // An object with a build-id is matched by it even through its
        // debuglink: a stripped file's CRC records only one of the builds
        // that share a name, the build-id pins the build.
        let expect = match own_id {
            Some(id) => Expect::BuildId(id),
            None => Expect::Crc(crc),
        };
        let dir = match on_disk.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut candidates = vec![dir.join(name), dir.join(".debug").join(name)];
        // gdb uses the object's absolute directory under each root.
        let target_dir = std::path::absolute(target_path)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf));
        if let Some(target_dir) = target_dir {
            let relative = target_dir.strip_prefix("/").unwrap_or(&target_dir);
            for root in &self.roots {
                candidates.push(root.join(relative).join(name));
            }
        }
        for path in candidates {
            if lookup.tried.contains(&path) {
                continue;
            }
            if try_candidate(&path, expect, own_identity.as_ref(), lookup) {
                lookup.found = Some(DebugFile {
                    path,
                    matched_by: MatchedBy::DebugLink,
                });
                return;
            }
        }
    }
}

/// `name` as a file name when it is one plain component, so a debuglink
/// cannot lead the search out of the directories it is meant for.
fn plain_file_name(name: &[u8]) -> Option<&OsStr> {
    if name.is_empty()
        || name.len() > MAX_NAME_LEN
        || name == b"."
        || name == b".."
        || name.contains(&b'/')
        || name.contains(&0)
    {
        return None;
    }
    os_file_name(name)
}

/// Looks at one candidate; true when it is accepted, else any refusal is
/// recorded. A path with nothing there is only recorded as tried.
fn try_candidate(
    path: &Path,
    expect: Expect<'_>,
    own_identity: Option<&FileKey>,
    lookup: &mut DebugLookup,
) -> bool {
    lookup.tried.push(path.to_path_buf());
    match check_candidate(path, expect, own_identity) {
        Ok(()) => true,
        Err(None) => false,
        Err(Some(reason)) => {
            lookup.reject(path, reason);
            false
        }
    }
}

/// `Err(None)` when there is no file at `path`.
fn check_candidate(
    path: &Path,
    expect: Expect<'_>,
    own_identity: Option<&FileKey>,
) -> Result<(), Option<RejectReason>> {
    let len = path.as_os_str().len();
    if len > MAX_PATH_LEN {
        return Err(Some(RejectReason::PathTooLong { len }));
    }
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Err(None)
        }
        Err(e) => {
            return Err(Some(RejectReason::Unreadable {
                reason: e.to_string(),
            }))
        }
    };
    // Opening a pipe would block and mapping a device is meaningless.
    if !meta.is_file() {
        return Err(Some(RejectReason::NotRegularFile));
    }
    if own_identity.is_some() && own_identity == file_key(path, &meta).as_ref() {
        return Err(Some(RejectReason::SameFileAsObject));
    }
    if meta.len() == 0 {
        return Err(Some(RejectReason::Empty));
    }
    let data = map_file(path).map_err(|e| {
        Some(RejectReason::Unreadable {
            reason: e.to_string(),
        })
    })?;
    verify_candidate(&data, expect).map_err(Some)
}

/// Whether the bytes of a candidate are the debug file expected.
fn verify_candidate(data: &[u8], expect: Expect<'_>) -> Result<(), RejectReason> {
    let not_elf = |e: object::Error| RejectReason::NotElf {
        reason: e.to_string(),
    };
    let file = object::File::parse(data).map_err(not_elf)?;
    match expect {
        Expect::BuildId(expected) => {
            let found = file.build_id().map_err(not_elf)?;
            if found == Some(expected) {
                Ok(())
            } else {
                Err(RejectReason::BuildIdMismatch {
                    expected: expected.to_vec(),
                    found: found.map(<[u8]>::to_vec),
                })
            }
        }
        Expect::Crc(expected) => {
            let found = crc32fast::hash(data);
            if found == expected {
                Ok(())
            } else {
                Err(RejectReason::CrcMismatch { expected, found })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::symbol_error::SymbolError;
    use object::write;
    use object::{Architecture, BinaryFormat, Endianness, SectionKind};

    /// A small relocatable ELF file with the given build-id note and
    /// debuglink section.
    fn elf(build_id: Option<&[u8]>, debuglink: Option<(&[u8], u32)>) -> Vec<u8> {
        let mut obj =
            write::Object::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
        if let Some(id) = build_id {
            let mut note = Vec::new();
            note.extend(4u32.to_le_bytes());
            note.extend((id.len() as u32).to_le_bytes());
            note.extend(object::elf::NT_GNU_BUILD_ID.0.to_le_bytes());
            note.extend(b"GNU\0");
            note.extend(id);
            note.resize(note.len().next_multiple_of(4), 0);
            let s = obj.add_section(vec![], b".note.gnu.build-id".to_vec(), SectionKind::Note);
            obj.section_mut(s).set_data(note, 4);
        }
        if let Some((name, crc)) = debuglink {
            let mut data = name.to_vec();
            data.push(0);
            data.resize(data.len().next_multiple_of(4), 0);
            data.extend(crc.to_le_bytes());
            let s = obj.add_section(vec![], b".gnu_debuglink".to_vec(), SectionKind::Other);
            obj.section_mut(s).set_data(data, 4);
        }
        obj.write().expect("object writes a small ELF file")
    }

    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> Self {
            static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let dir = std::env::temp_dir()
                .join(format!("mpidd-debug-unit-{tag}-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("create temp dir");
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const ID: &[u8] = &[0xab, 0xcd, 0x01, 0x02, 0x03];

    fn build_id_path(root: &Path) -> PathBuf {
        root.join(".build-id/ab/cd010203.debug")
    }

    fn place(path: &Path, bytes: &[u8]) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn build_id_of_bytes() {
        assert_eq!(build_id_from_bytes(&elf(Some(ID), None)).unwrap(), Some(ID));
        assert_eq!(build_id_from_bytes(&elf(None, None)).unwrap(), None);
        assert!(matches!(
            build_id_from_bytes(b""),
            Err(SymbolError::Malformed { .. })
        ));
        assert!(matches!(
            build_id_from_bytes(b"\x7fELF garbage"),
            Err(SymbolError::Malformed { .. })
        ));
    }

    #[test]
    fn build_id_of_missing_and_non_elf_files() {
        let tmp = TempDir::new("bid");
        assert!(matches!(
            build_id(&tmp.0.join("absent")),
            Err(SymbolError::Io { .. })
        ));
        let text = tmp.0.join("text");
        std::fs::write(&text, "hello").unwrap();
        let err = build_id(&text).unwrap_err();
        assert!(
            matches!(&err, SymbolError::Parse { path, .. } if path.ends_with("text")),
            "{err:?}"
        );
    }

    #[test]
    fn plain_names_only() {
        assert!(plain_file_name(b"libmpi.so.12.debug").is_some());
        for bad in [
            &b""[..],
            b".",
            b"..",
            b"../libmpi.so.debug",
            b"/etc/passwd",
            b"sub/x.debug",
            b"a\0b",
            &[b'x'; 256],
        ] {
            assert!(plain_file_name(bad).is_none(), "{bad:?} accepted");
        }
    }

    #[test]
    fn debuglink_leaving_the_directory_is_not_followed() {
        let tmp = TempDir::new("link");
        let sub = tmp.0.join("lib");
        std::fs::create_dir_all(&sub).unwrap();
        // A real match sits where "../x.debug" points, so following the
        // name would be visible.
        let target = elf(None, None);
        let crc = crc32fast::hash(&target);
        place(&tmp.0.join("x.debug"), &target);
        for name in [&b"../x.debug"[..], b"..", b"/x.debug"] {
            let object = sub.join("libx.so");
            place(&object, &elf(None, Some((name, crc))));
            let lookup = DebugSearch::new([tmp.0.join("root")]).search(&object);
            assert_eq!(lookup.found(), None);
            assert!(lookup.tried().is_empty(), "{:?}", lookup.tried());
            assert!(
                matches!(
                    lookup.rejected(),
                    [Rejection {
                        reason: RejectReason::BadDebugLinkName { .. },
                        ..
                    }]
                ),
                "{:?}",
                lookup.rejected()
            );
        }
    }

    #[test]
    fn missing_candidates_are_tried_not_rejected() {
        let tmp = TempDir::new("missing");
        let object = tmp.0.join("libx.so");
        place(&object, &elf(Some(ID), Some((b"libx.so.debug", 0))));
        let root = tmp.0.join("root");
        let lookup = DebugSearch::new([&root]).search(&object);
        assert_eq!(lookup.found(), None);
        assert!(lookup.rejected().is_empty(), "{:?}", lookup.rejected());
        assert_eq!(lookup.tried()[0], build_id_path(&root));
        assert!(lookup.tried().contains(&tmp.0.join("libx.so.debug")));
        assert!(lookup.tried().contains(&tmp.0.join(".debug/libx.so.debug")));
        assert_eq!(lookup.tried().len(), 4, "{:?}", lookup.tried());
    }

    #[test]
    fn object_itself_missing_or_not_elf() {
        let tmp = TempDir::new("noobj");
        let search = DebugSearch::new([tmp.0.join("root")]);
        let lookup = search.search(&tmp.0.join("absent.so"));
        assert!(matches!(
            lookup.rejected()[0].reason,
            RejectReason::ObjectUnreadable { .. }
        ));
        let text = tmp.0.join("text.so");
        place(&text, b"#!/bin/sh\n");
        assert_eq!(search.find(&text), None);
    }

    fn reason_at_build_id_path(bytes: &[u8]) -> RejectReason {
        let tmp = TempDir::new("bidpath");
        let object = tmp.0.join("libx.so");
        place(&object, &elf(Some(ID), None));
        let root = tmp.0.join("root");
        place(&build_id_path(&root), bytes);
        let lookup = DebugSearch::new([&root]).search(&object);
        assert_eq!(lookup.found(), None);
        match lookup.rejected() {
            [r] => {
                assert_eq!(r.path, build_id_path(&root));
                r.reason.clone()
            }
            other => panic!("expected one rejection, got {other:?}"),
        }
    }

    #[test]
    fn zero_length_candidate() {
        assert_eq!(reason_at_build_id_path(b""), RejectReason::Empty);
    }

    #[test]
    fn non_elf_candidate() {
        let reason = reason_at_build_id_path(b"this is not ELF");
        assert!(matches!(reason, RejectReason::NotElf { .. }), "{reason:?}");
    }

    #[test]
    fn candidate_without_or_with_other_build_id() {
        assert_eq!(
            reason_at_build_id_path(&elf(None, None)),
            RejectReason::BuildIdMismatch {
                expected: ID.to_vec(),
                found: None
            }
        );
        let reason = reason_at_build_id_path(&elf(Some(&[1, 2, 3]), None));
        let shown = reason.to_string();
        assert!(
            shown.contains("build-id 010203 differs from the object's abcd010203"),
            "{shown}"
        );
    }

    #[test]
    fn directory_candidate() {
        let tmp = TempDir::new("dir");
        let object = tmp.0.join("libx.so");
        place(&object, &elf(Some(ID), None));
        let root = tmp.0.join("root");
        std::fs::create_dir_all(build_id_path(&root)).unwrap();
        let lookup = DebugSearch::new([&root]).search(&object);
        assert_eq!(lookup.rejected()[0].reason, RejectReason::NotRegularFile);
    }

    #[test]
    fn matching_build_id_is_accepted() {
        let tmp = TempDir::new("ok");
        let object = tmp.0.join("libx.so");
        place(&object, &elf(Some(ID), None));
        let root = tmp.0.join("root");
        place(&build_id_path(&root), &elf(Some(ID), None));
        let found = DebugSearch::new([tmp.0.join("empty"), root.clone()])
            .find(&object)
            .unwrap();
        assert_eq!(found.path, build_id_path(&root));
        assert_eq!(found.matched_by, MatchedBy::BuildId);
    }

    #[test]
    fn debuglink_naming_the_object_itself() {
        let tmp = TempDir::new("self");
        let object = tmp.0.join("libx.so");
        place(&object, &elf(None, Some((b"libx.so", 0))));
        let lookup = DebugSearch::new(Vec::<PathBuf>::new()).search(&object);
        assert_eq!(lookup.found(), None);
        assert_eq!(lookup.rejected()[0].reason, RejectReason::SameFileAsObject);
    }

    #[test]
    fn unusable_build_id_length() {
        let tmp = TempDir::new("short");
        let object = tmp.0.join("libx.so");
        place(&object, &elf(Some(&[7]), None));
        let lookup = DebugSearch::default().search(&object);
        assert_eq!(
            lookup.rejected()[0].reason,
            RejectReason::BuildIdUnusable { len: 1 }
        );
        assert!(lookup.tried().is_empty());
    }
}
