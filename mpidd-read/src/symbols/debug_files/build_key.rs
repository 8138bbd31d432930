//! What tells one build of an object from another: its build-id, or, for
//! an object linked without one (pip's MPI wheels are), a digest of its
//! code. Layout profiles and the layout cache are chosen by this key.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use object::{Object, ObjectSection, SectionKind};
use sha2::{Digest, Sha256};

use crate::backend::core_file::map_file;
use crate::symbols::symbol_error::SymbolError;

use super::build_id::build_id_from_bytes;

/// The key of one build of an object file.
///
/// ```
/// use mpidd_read::BuildKey;
///
/// let key = BuildKey::BuildId(vec![0xab, 0x01]);
/// assert_eq!(key.hex(), "ab01");
/// assert_eq!(key.to_string(), "build-id ab01");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BuildKey {
    /// The `NT_GNU_BUILD_ID` note's bytes.
    BuildId(Vec<u8>),
    /// SHA-256 over the bytes of the object's executable sections, in
    /// section order, for an object that has no build-id. Two builds
    /// whose code differs in one byte differ here; a rebuild of the same
    /// source with another configuration nearly always does.
    CodeDigest(Vec<u8>),
}

impl BuildKey {
    /// The key's bytes, as the layout cache and the profiles match them.
    pub fn bytes(&self) -> &[u8] {
        match self {
            BuildKey::BuildId(b) | BuildKey::CodeDigest(b) => b,
        }
    }

    /// The key's bytes in lower-case hex.
    pub fn hex(&self) -> String {
        crate::layouts::layout_profile::hex(self.bytes())
    }

    /// Whether this is a digest of code rather than a build-id.
    pub fn is_digest(&self) -> bool {
        matches!(self, BuildKey::CodeDigest(_))
    }
}

impl fmt::Display for BuildKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildKey::BuildId(_) => write!(f, "build-id {}", self.hex()),
            BuildKey::CodeDigest(_) => write!(f, "no build-id, code digest {}", self.hex()),
        }
    }
}

/// Files whose keys one process remembers (each key is a few dozen bytes);
/// past this many the memory is cleared rather than grown.
const MAX_REMEMBERED: usize = 1024;

/// A file's key by its path, size and modification time.
type Remembered = HashMap<PathBuf, (u64, Option<SystemTime>, Option<BuildKey>)>;

/// The key of the ELF file at `path`: its build-id, else the digest of
/// its code. `None` for an object with neither (no executable section).
///
/// A digest reads the whole code (a few MB for an MPI library), so each
/// file's key is computed once per process and kept while its size and
/// modification time stay the same: every reader of one run (the layout
/// resolver, the profile choice, the companions' profiles) asks again.
pub fn build_key(path: &Path) -> Result<Option<BuildKey>, SymbolError> {
    static REMEMBERED: OnceLock<Mutex<Remembered>> = OnceLock::new();
    let shown = || path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|cause| SymbolError::Io {
        path: shown(),
        cause,
    })?;
    let stamp = (meta.len(), meta.modified().ok());
    let remembered = REMEMBERED.get_or_init(Default::default);
    if let Some((len, modified, key)) = remembered
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(path)
    {
        if (*len, *modified) == stamp {
            return Ok(key.clone());
        }
    }
    let data = map_file(path).map_err(|cause| SymbolError::Io {
        path: shown(),
        cause,
    })?;
    // A build-id is read from the headers at once; a digest of the code,
    // which hashes all of it, is taken from an earlier run when one kept
    // it for this very file.
    let kept = match build_id_from_bytes(&data) {
        Ok(None) => super::kept_digest::kept_digest(path).map(BuildKey::CodeDigest),
        _ => None,
    };
    let key = match kept {
        Some(key) => Some(key),
        None => {
            let key = build_key_from_bytes(&data).map_err(|e| match e {
                SymbolError::Malformed { reason } => SymbolError::Parse {
                    path: shown(),
                    reason,
                },
                other => other,
            })?;
            if let Some(BuildKey::CodeDigest(digest)) = &key {
                super::kept_digest::keep_digest(path, digest);
            }
            key
        }
    };
    let mut remembered = remembered.lock().unwrap_or_else(|e| e.into_inner());
    if remembered.len() >= MAX_REMEMBERED {
        remembered.clear();
    }
    remembered.insert(path.to_path_buf(), (stamp.0, stamp.1, key.clone()));
    Ok(key)
}

/// [`build_key`] of an ELF file held in memory.
///
/// ```
/// assert!(mpidd_read::build_key_from_bytes(b"not an ELF file").is_err());
/// ```
pub fn build_key_from_bytes(data: &[u8]) -> Result<Option<BuildKey>, SymbolError> {
    if let Some(id) = build_id_from_bytes(data)? {
        return Ok(Some(BuildKey::BuildId(id.to_vec())));
    }
    let malformed = |e: object::Error| SymbolError::Malformed {
        reason: e.to_string(),
    };
    let file = object::File::parse(data).map_err(malformed)?;
    let mut digest = Sha256::new();
    let mut any = false;
    for section in file.sections() {
        // ELF's executable sections (`SHF_EXECINSTR`) are the text kind.
        if section.kind() != SectionKind::Text {
            continue;
        }
        // The section's bytes as the file holds them (a NOBITS section has
        // none); a range outside the file is a malformed object.
        let bytes = section.data().map_err(malformed)?;
        digest.update(bytes);
        any = true;
    }
    Ok(any.then(|| BuildKey::CodeDigest(digest.finalize().to_vec())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object_with_code(code: &[u8], build_id: Option<&[u8]>) -> Vec<u8> {
        use object::write::{Object as Writer, StandardSection};
        let mut w = Writer::new(
            object::BinaryFormat::Elf,
            object::Architecture::X86_64,
            object::Endianness::Little,
        );
        let text = w.section_id(StandardSection::Text);
        w.append_section_data(text, code, 16);
        if let Some(id) = build_id {
            let mut note = Vec::new();
            note.extend_from_slice(&4u32.to_le_bytes());
            note.extend_from_slice(&(id.len() as u32).to_le_bytes());
            note.extend_from_slice(&3u32.to_le_bytes()); // NT_GNU_BUILD_ID
            note.extend_from_slice(b"GNU\0");
            note.extend_from_slice(id);
            let s = w.add_section(
                Vec::new(),
                b".note.gnu.build-id".to_vec(),
                object::SectionKind::Note,
            );
            w.append_section_data(s, &note, 4);
        }
        w.write().unwrap()
    }

    #[test]
    fn a_build_id_is_the_key_when_there_is_one() {
        let file = object_with_code(&[0x90; 8], Some(&[1, 2, 3, 4]));
        let key = build_key_from_bytes(&file).unwrap().unwrap();
        assert_eq!(key, BuildKey::BuildId(vec![1, 2, 3, 4]));
    }

    #[test]
    fn without_one_the_code_decides() {
        let a = build_key_from_bytes(&object_with_code(&[0x90; 8], None))
            .unwrap()
            .unwrap();
        let same = build_key_from_bytes(&object_with_code(&[0x90; 8], None))
            .unwrap()
            .unwrap();
        let other = build_key_from_bytes(&object_with_code(&[0x90, 0xc3], None))
            .unwrap()
            .unwrap();
        assert!(a.is_digest());
        assert_eq!(a.bytes().len(), 32);
        assert_eq!(a, same);
        assert_ne!(a, other);
        assert!(a.to_string().starts_with("no build-id, code digest "));
    }
}
