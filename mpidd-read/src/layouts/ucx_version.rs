//! The version a UCX library states of itself, read from its file: what a
//! UCX profile's release family is matched on when no profile names the
//! build (pip's wheels bundle a libucp.so.0 stripped of its build-id).
//!
//! A stripped libucp keeps its exported functions: `ucp_get_version_string`
//! returns the address of the version string (`UCP_VERSION_STRING`, `1.18.1`
//! for 1.18.1, `src/ucp/core/ucp_version.c.in` in openucx/ucx), a constant
//! in the library's read-only data. The function is two instructions on
//! x86_64 (`lea str(%rip),%rax; ret`, after an `endbr64` when the library
//! is built with control-flow protection, as Debian's is); the string is
//! read where that `lea` points. Nothing of the process is read, and no
//! other code shape is guessed at: another shape, or another architecture,
//! states no version, and a family is then not offered.

use std::path::Path;

use object::{Object, ObjectSection, ObjectSymbol};

use crate::layouts::layout_profile::ProfileError;
use crate::layouts::object_file_facts::with_object_file;

/// The function whose returned constant is the version.
const VERSION_FUNCTION: &str = "ucp_get_version_string";

/// The longest version string read (`1.20.1` is 6 bytes).
const MAX_VERSION_LEN: usize = 32;

/// The version the UCX library at `path` (a `libucp.so.0`) states:
/// `Ok(None)` when it is no libucp (no `ucp_get_version_string`), or its
/// function is not the shape described in this module, or what it points
/// to is not plain release numbers.
///
/// ```no_run
/// let v = mpidd_read::ucx_stated_version(std::path::Path::new(
///     "/usr/lib/x86_64-linux-gnu/libucp.so.0",
/// ))?;
/// println!("{v:?}"); // Some("1.13.1") on Debian 12
/// # Ok::<(), mpidd_read::ProfileError>(())
/// ```
pub fn ucx_stated_version(path: &Path) -> Result<Option<String>, ProfileError> {
    with_object_file(path, stated_version_of)
}

/// The text of an assertion's expression that UCX's request code carries
/// only when assertions are compiled in (`ucs_assert` in
/// `ucp_request_put` and its kin, `src/ucp/core/ucp_request.inl`, from
/// 1.13 to 1.20): `ucs_assert` stringifies its expression into the
/// message it would print, and a build without assertions has no such
/// text.
const ASSERTION_TEXT: &[u8] = b"!((req)->flags & UCP_REQUEST_FLAG_COMPLETED)";

/// Whether the UCX library at `path` (a `libucp.so.0`) was built with
/// assertions (`UCS_ENABLE_ASSERT`), which moves members of the structs
/// UCX's readers read: the text of one of its request code's assertions
/// is in its read-only data exactly then. `Ok(None)` when the file has
/// no read-only data to tell by.
pub fn ucx_assertions(path: &Path) -> Result<Option<bool>, ProfileError> {
    with_object_file(path, |file| {
        let rodata = file.section_by_name(".rodata")?;
        rodata
            .data()
            .ok()
            .map(|d| memchr::memmem::find(d, ASSERTION_TEXT).is_some())
    })
}

/// [`ucx_stated_version`] of a parsed file.
fn stated_version_of(file: &object::File<'_>) -> Option<String> {
    if file.architecture() != object::Architecture::X86_64 {
        return None;
    }
    let function = file
        .dynamic_symbols()
        .chain(file.symbols())
        .find(|s| s.name() == Ok(VERSION_FUNCTION) && s.is_definition())?;
    let code = bytes_at(file, function.address(), 16)?;
    let target = lea_rax_ret_target(function.address(), code)?;
    let text = bytes_at(file, target, MAX_VERSION_LEN)?;
    let end = text.iter().position(|&b| b == 0)?;
    let version = std::str::from_utf8(&text[..end]).ok()?;
    let plain = !version.is_empty()
        && version.split('.').count() >= 2
        && version
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    plain.then(|| version.to_string())
}

/// Up to `len` bytes of the file's loaded contents at virtual address
/// `addr` (fewer at the end of a section), from the section that holds it.
fn bytes_at<'d>(file: &object::File<'d>, addr: u64, len: usize) -> Option<&'d [u8]> {
    let section = file.sections().find(|s| {
        s.address() <= addr && addr < s.address().saturating_add(s.size()) && s.size() > 0
    })?;
    let data = section.data().ok()?;
    let start = usize::try_from(addr - section.address()).ok()?;
    let end = start.saturating_add(len).min(data.len());
    data.get(start..end)
}

/// Where `[endbr64] lea disp32(%rip),%rax; ret` at `addr` points, or `None`
/// for any other code.
fn lea_rax_ret_target(addr: u64, code: &[u8]) -> Option<u64> {
    const ENDBR64: [u8; 4] = [0xf3, 0x0f, 0x1e, 0xfa];
    const LEA_RAX_RIP: [u8; 3] = [0x48, 0x8d, 0x05];
    const RET: u8 = 0xc3;
    let skip = if code.starts_with(&ENDBR64) { 4 } else { 0 };
    let lea = code.get(skip..skip + 8)?;
    if lea[..3] != LEA_RAX_RIP || lea[7] != RET {
        return None;
    }
    let disp = i32::from_le_bytes(lea[3..7].try_into().ok()?);
    // The displacement counts from the end of the 7-byte lea.
    let next = addr.checked_add(skip as u64 + 7)?;
    Some(next.wrapping_add_signed(i64::from(disp)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lea_is_read_with_and_without_endbr64() {
        // Debian 13's libucp 1.18.1: endbr64; lea 0xe1f35(%rip),%rax; ret.
        let debian = [
            0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x8d, 0x05, 0x35, 0x1f, 0x0e, 0x00, 0xc3,
        ];
        assert_eq!(lea_rax_ret_target(0x5b8b0, &debian), Some(0x13d7f0));
        // The 5.0.8 wheel's: lea 0x79fa9(%rip),%rax; ret.
        let wheel = [0x48, 0x8d, 0x05, 0xa9, 0x9f, 0x07, 0x00, 0xc3];
        assert_eq!(lea_rax_ret_target(0x48810, &wheel), Some(0xc27c0));
        // A negative displacement.
        let back = [0x48, 0x8d, 0x05, 0xf0, 0xff, 0xff, 0xff, 0xc3];
        assert_eq!(lea_rax_ret_target(0x1000, &back), Some(0x1000 + 7 - 16));
    }

    #[test]
    fn other_code_states_nothing() {
        // A call, a load rather than lea, a lea into another register, no
        // ret after the lea, too short.
        for code in [
            &[0xe8, 0, 0, 0, 0, 0xc3, 0, 0][..],
            &[0x48, 0x8b, 0x05, 1, 0, 0, 0, 0xc3],
            &[0x48, 0x8d, 0x0d, 1, 0, 0, 0, 0xc3],
            &[0x48, 0x8d, 0x05, 1, 0, 0, 0, 0x90],
            &[0x48, 0x8d, 0x05, 1],
        ] {
            assert_eq!(lea_rax_ret_target(0x1000, code), None, "{code:x?}");
        }
    }
}
