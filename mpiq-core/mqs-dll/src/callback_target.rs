//! A target seen through a debugger's callbacks: memory through
//! `mqs_fetch_data`, byte order through `mqs_target_to_host`, widths through
//! `mqs_get_type_sizes`, symbols through `mqs_find_symbol`, and types through
//! `mqs_find_type`/`mqs_field_offset`/`mqs_sizeof`. The native decoders run
//! on this exactly as on a core file or a live process.

use std::ffi::{c_int, c_void, CString};
use std::io;

use mpidd_read::{ReadError, Symbol, SymbolSource};
use mpidd_types::{AddressWidth, ByteOrder, TargetAbi, TargetAddr};
use mpiq_core::mqs_abi::{MqsImage, MqsProcess, MqsTaddr, MqsTargetTypeSizes, MQS_LANG_C, MQS_OK};
use mpiq_core::{ByteSource, LayoutError, Layouts, Member};

use crate::host_abi::{HostImage, HostProcess};

/// A process's memory through its callbacks.
pub(crate) struct CallbackMemory {
    pub(crate) process: *mut MqsProcess,
    pub(crate) callbacks: *const HostProcess,
    pub(crate) abi: TargetAbi,
}

/// The largest single `mqs_fetch_data` asked of the debugger; larger
/// reads are split (the size argument is a C `int`).
const MAX_FETCH: usize = 1 << 20;

impl ByteSource for CallbackMemory {
    fn abi(&self) -> TargetAbi {
        self.abi
    }

    fn read_exact(
        &self,
        addr: TargetAddr,
        buf: &mut [u8],
        what: &'static str,
    ) -> Result<(), ReadError> {
        // SAFETY: the table is the debugger's, kept valid while its process
        // is set up (the interface's promise); checked for NULL.
        let fetch = unsafe { self.callbacks.as_ref() }.and_then(|c| c.fetch_data);
        let Some(fetch) = fetch else {
            return Err(backend(what, addr, "the debugger gave no mqs_fetch_data"));
        };
        let mut done = 0;
        while done < buf.len() {
            let n = (buf.len() - done).min(MAX_FETCH);
            let at = addr.0.wrapping_add(done as u64);
            // SAFETY: `buf[done..done + n]` is writable; the debugger writes
            // at most `n` bytes there.
            let rc = unsafe {
                fetch(
                    self.process,
                    at as MqsTaddr,
                    n as c_int,
                    buf[done..].as_mut_ptr() as *mut c_void,
                )
            };
            if rc != MQS_OK {
                return Err(backend(
                    what,
                    TargetAddr(at),
                    &format!("mqs_fetch_data of {n} bytes returned {rc}"),
                ));
            }
            done += n;
        }
        Ok(())
    }
}

fn backend(what: &'static str, addr: TargetAddr, why: &str) -> ReadError {
    ReadError::Backend {
        what,
        addr,
        source: io::Error::other(why.to_string()),
    }
}

/// The target's ABI as the debugger describes it: the pointer size from
/// `mqs_get_type_sizes`, the byte order from what `mqs_target_to_host`
/// does to a known value.
///
/// # Safety
/// `image` and `process` are the debugger's tables for this process.
pub(crate) unsafe fn probe_abi(
    image: &HostImage,
    process_callbacks: &HostProcess,
    process: *mut MqsProcess,
) -> Option<TargetAbi> {
    // Seven ints: room for Open MPI's longer form of the struct too.
    let mut sizes = [0 as c_int; 7];
    // SAFETY: the buffer holds either form of mqs_target_type_sizes.
    unsafe { (image.get_type_sizes?)(process, sizes.as_mut_ptr() as *mut MqsTargetTypeSizes) };
    let width = AddressWidth::from_bytes(usize::try_from(sizes[4]).ok()?)?;
    let target = [0u8, 0, 0, 1];
    let mut host = [0u8; 4];
    // SAFETY: 4-byte source and destination buffers.
    unsafe {
        (process_callbacks.target_to_host?)(
            process,
            target.as_ptr() as *const c_void,
            host.as_mut_ptr() as *mut c_void,
            4,
        )
    };
    // The target's bytes 00 00 00 01 mean 1 on a big-endian target and
    // 0x01000000 on a little-endian one; converted, the host sees the value.
    let order = match u32::from_ne_bytes(host) {
        1 => ByteOrder::Big,
        0x0100_0000 => ByteOrder::Little,
        _ => return None,
    };
    Some(TargetAbi::new(order, width))
}

/// An image's symbols and types through its callbacks.
pub(crate) struct CallbackImage {
    pub(crate) image: *mut MqsImage,
    pub(crate) callbacks: *const HostImage,
}

impl CallbackImage {
    fn table(&self) -> Option<&HostImage> {
        // SAFETY: the debugger keeps its image table valid while the image
        // is set up; checked for NULL.
        unsafe { self.callbacks.as_ref() }
    }
}

impl SymbolSource for CallbackImage {
    fn lookup(&self, name: &str) -> Option<Symbol> {
        let find = self.table()?.find_symbol?;
        let c_name = CString::new(name).ok()?;
        let mut addr: MqsTaddr = 0;
        // SAFETY: a NUL-terminated name the debugger only reads, and our
        // variable for the result.
        let rc = unsafe { find(self.image, c_name.as_ptr() as *mut _, &mut addr) };
        (rc == MQS_OK).then(|| Symbol {
            name: name.to_string(),
            addr: TargetAddr(addr as u64),
            size: 0,
            object: "the debugger's image".to_string(),
        })
    }

    fn searched_objects(&self) -> Vec<String> {
        vec!["the image, through the debugger's mqs_find_symbol".to_string()]
    }
}

// The message-queue callbacks give offsets and sizes of types only: no
// member sizes and no enumerators, which the queue decoders do not ask.
impl Layouts for CallbackImage {
    fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
        Err(LayoutError::new(
            type_name,
            Some(path),
            "the debugger's callbacks give member offsets, not member sizes",
        ))
    }

    fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
        Err(LayoutError::new(
            type_name,
            None,
            "the debugger's callbacks describe no enumerations",
        ))
    }

    fn member_enumerators(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, i128)>, LayoutError> {
        Err(LayoutError::new(
            type_name,
            Some(path),
            "the debugger's callbacks describe no enumerations",
        ))
    }

    fn member_fields(
        &self,
        type_name: &str,
        path: &str,
    ) -> Result<Vec<(String, Member)>, LayoutError> {
        Err(LayoutError::new(
            type_name,
            Some(path),
            "the debugger's callbacks list no members",
        ))
    }

    fn member_offset(&self, type_name: &str, member: &str) -> Result<u64, LayoutError> {
        let missing = |reason: &str| LayoutError {
            type_name: type_name.to_string(),
            member: Some(member.to_string()),
            reason: reason.to_string(),
        };
        let table = self.table().ok_or_else(|| missing("no image callbacks"))?;
        let (Some(find), Some(offset)) = (table.find_type, table.field_offset) else {
            return Err(missing(
                "the debugger gave no mqs_find_type or mqs_field_offset",
            ));
        };
        let ty = CString::new(type_name).map_err(|_| missing("a name with a NUL"))?;
        let field = CString::new(member).map_err(|_| missing("a name with a NUL"))?;
        // SAFETY: NUL-terminated names the debugger only reads.
        let handle = unsafe { find(self.image, ty.as_ptr() as *mut _, MQS_LANG_C) };
        if handle.is_null() {
            return Err(missing(
                "the debugger's mqs_find_type does not know the type",
            ));
        }
        // SAFETY: a type handle the debugger just gave, and a name.
        let off = unsafe { offset(handle, field.as_ptr() as *mut _) };
        u64::try_from(off).map_err(|_| missing("mqs_field_offset returned -1: no such member"))
    }

    fn size_of(&self, type_name: &str) -> Result<u64, LayoutError> {
        let missing = |reason: &str| LayoutError {
            type_name: type_name.to_string(),
            member: None,
            reason: reason.to_string(),
        };
        let table = self.table().ok_or_else(|| missing("no image callbacks"))?;
        let (Some(find), Some(size)) = (table.find_type, table.sizeof) else {
            return Err(missing("the debugger gave no mqs_find_type or mqs_sizeof"));
        };
        let ty = CString::new(type_name).map_err(|_| missing("a name with a NUL"))?;
        // SAFETY: a NUL-terminated name the debugger only reads.
        let handle = unsafe { find(self.image, ty.as_ptr() as *mut _, MQS_LANG_C) };
        if handle.is_null() {
            return Err(missing(
                "the debugger's mqs_find_type does not know the type",
            ));
        }
        // SAFETY: a type handle the debugger just gave.
        let n = unsafe { size(handle) };
        u64::try_from(n)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| missing("mqs_sizeof returned no size"))
    }
}
