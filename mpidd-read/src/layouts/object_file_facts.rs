//! What an object file says of its build, read from the file with no
//! process: its architecture, as profiles and families name it, and the
//! one way this folder maps and parses a file for such facts (UCX's
//! stated version and assertions, `ucx_version`, use it too).

use std::path::Path;

use crate::layouts::layout_profile::ProfileError;

/// The CPU an ELF object is built for, as profiles name it: `object`'s
/// architecture in lower case (`x86_64`, `aarch64`, `powerpc64`), with
/// `-be` for a big-endian object. Read from the object, never the host.
pub fn object_arch(path: &Path) -> Result<String, ProfileError> {
    use object::Object;
    with_object_file(path, |file| {
        let arch = format!("{:?}", file.architecture()).to_lowercase();
        if file.is_little_endian() {
            arch
        } else {
            format!("{arch}-be")
        }
    })
}

/// `read` of the object file at `path`, mapped, not read: a debug build's
/// libmpi is tens of megabytes, and only a few of its parts are looked at
/// (its headers, a symbol, a section).
pub(crate) fn with_object_file<T>(
    path: &Path,
    read: impl FnOnce(&object::File<'_>) -> T,
) -> Result<T, ProfileError> {
    let data = crate::backend::core_file::map_file(path).map_err(|cause| ProfileError::Io {
        path: path.to_path_buf(),
        cause,
    })?;
    let file = object::File::parse(&*data).map_err(|e| ProfileError::Malformed {
        source_name: path.display().to_string(),
        reason: format!("not an object file: {e}"),
    })?;
    Ok(read(&file))
}
