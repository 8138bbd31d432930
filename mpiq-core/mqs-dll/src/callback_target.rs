//! A target seen through a debugger's callbacks: memory through
//! `mqs_fetch_data`, byte order through `mqs_target_to_host`, widths through
//! `mqs_get_type_sizes`, symbols through `mqs_find_symbol`, and types through
//! `mqs_find_type`/`mqs_field_offset`/`mqs_sizeof` (completed by MPICH's
//! declarations, [`DeclaredLayouts`](crate::declared_layouts::DeclaredLayouts)).
//! The native decoders run on this exactly as on a core file or a live
//! process.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_int, c_void, CString};
use std::io;

use mpidd_read::{ReadError, Symbol, SymbolSource, TargetMemory};
use mpidd_types::{AddressWidth, ByteOrder, TargetAbi, TargetAddr};
use mpiq_core::mqs_abi::{
    MqsImage, MqsProcess, MqsTaddr, MqsTargetTypeSizes, MqsType, MQS_LANG_C, MQS_OK,
};
use mpiq_core::LayoutError;

use crate::declared_layouts::{ScalarSizes, TypeCallbacks};
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

impl CallbackMemory {
    /// One `mqs_fetch_data` of all of `buf` at `addr`: its return code.
    fn fetch(&self, addr: u64, buf: &mut [u8]) -> Result<c_int, ReadError> {
        // SAFETY: the table is the debugger's, kept valid while its process
        // is set up (the interface's promise); checked for NULL.
        let fetch = unsafe { self.callbacks.as_ref() }.and_then(|c| c.fetch_data);
        let Some(fetch) = fetch else {
            return Err(backend(
                "target memory",
                TargetAddr(addr),
                "the debugger gave no mqs_fetch_data",
            ));
        };
        // SAFETY: `buf` is writable for its length, which fits a C int
        // (callers split at MAX_FETCH); the debugger writes at most that.
        Ok(unsafe {
            fetch(
                self.process,
                addr as MqsTaddr,
                buf.len() as c_int,
                buf.as_mut_ptr() as *mut c_void,
            )
        })
    }
}

impl TargetMemory for CallbackMemory {
    fn abi(&self) -> TargetAbi {
        self.abi
    }

    /// Exact reads, which the decoders make, fail with the debugger's own
    /// return code.
    fn read_exact(
        &self,
        addr: TargetAddr,
        buf: &mut [u8],
        what: &'static str,
    ) -> Result<(), ReadError> {
        let mut done = 0;
        while done < buf.len() {
            let n = (buf.len() - done).min(MAX_FETCH);
            let at = addr.0.wrapping_add(done as u64);
            let rc = self.fetch(at, &mut buf[done..done + n])?;
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

    /// `mqs_fetch_data` is all or nothing; where a read fails, the longest
    /// readable prefix is found by halving, so a read that runs off the
    /// end of a mapping gets what lies before it (as from a core or a live
    /// process), in a few calls.
    fn read_into(&self, addr: TargetAddr, buf: &mut [u8]) -> Result<usize, ReadError> {
        let mut done = 0;
        while done < buf.len() {
            let n = (buf.len() - done).min(MAX_FETCH);
            let at = addr.0.wrapping_add(done as u64);
            if self.fetch(at, &mut buf[done..done + n])? == MQS_OK {
                done += n;
                continue;
            }
            // Invariant: `lo` bytes at `at` are known readable (and read),
            // `hi` bytes are not.
            let (mut lo, mut hi) = (0usize, n);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if self.fetch(at, &mut buf[done..done + mid])? == MQS_OK {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            if lo > 0 {
                self.fetch(at, &mut buf[done..done + lo])?;
            }
            return Ok(done + lo);
        }
        Ok(done)
    }
}

fn backend(what: &'static str, addr: TargetAddr, why: &str) -> ReadError {
    ReadError::Backend {
        what,
        addr,
        cause: io::Error::other(why.to_string()),
    }
}

/// The target's ABI as the debugger describes it: the pointer size from
/// `mqs_get_type_sizes`, the byte order from what `mqs_target_to_host`
/// does to a known value; and the sizes of `int` and pointers.
///
/// # Safety
/// `image` and `process` are the debugger's tables for this process.
pub(crate) unsafe fn probe_abi(
    image: &HostImage,
    process_callbacks: &HostProcess,
    process: *mut MqsProcess,
) -> Option<(TargetAbi, ScalarSizes)> {
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
    let sizes = ScalarSizes {
        int: u64::try_from(sizes[1]).ok().filter(|&n| n > 0)?,
        pointer: width.bytes() as u64,
    };
    Some((TargetAbi::new(order, width), sizes))
}

/// The debugger's answers about one image's types, each asked once: the
/// layouts are asked again at every reading, and a debugger may keep every
/// type handle it gives out for the life of the image.
#[derive(Default)]
pub(crate) struct TypeCache {
    /// `mqs_find_type` by name (NULL when it does not know the type).
    handles: RefCell<HashMap<String, *mut MqsType>>,
    /// `mqs_field_offset` by type and member.
    offsets: RefCell<HashMap<(String, String), c_int>>,
    /// `mqs_sizeof` by type.
    sizes: RefCell<HashMap<String, c_int>>,
}

/// An image's symbols and types through its callbacks.
pub(crate) struct CallbackImage<'a> {
    pub(crate) image: *mut MqsImage,
    pub(crate) callbacks: *const HostImage,
    /// The target's `int` and pointer sizes, once a process of the image
    /// has been set up.
    pub(crate) sizes: Option<ScalarSizes>,
    pub(crate) cache: &'a TypeCache,
}

impl CallbackImage<'_> {
    fn table(&self) -> Option<&HostImage> {
        // SAFETY: the debugger keeps its image table valid while the image
        // is set up; checked for NULL.
        unsafe { self.callbacks.as_ref() }
    }
}

impl SymbolSource for CallbackImage<'_> {
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

impl<T: TypeCallbacks> TypeCallbacks for &T {
    fn type_size(&self, type_name: &str) -> Result<u64, LayoutError> {
        (**self).type_size(type_name)
    }
    fn field_offset(&self, type_name: &str, member: &str) -> Result<u64, LayoutError> {
        (**self).field_offset(type_name, member)
    }
    fn scalar_sizes(&self) -> Option<ScalarSizes> {
        (**self).scalar_sizes()
    }
}

impl CallbackImage<'_> {
    /// The debugger's handle for the type `type_name`, and its table.
    fn find(
        &self,
        type_name: &str,
        member: Option<&str>,
    ) -> Result<(*mut MqsType, &HostImage), LayoutError> {
        let missing = |reason: &str| LayoutError::new(type_name, member, reason);
        let table = self.table().ok_or_else(|| missing("no image callbacks"))?;
        let cached = self.cache.handles.borrow().get(type_name).copied();
        let handle = match cached {
            Some(handle) => handle,
            None => {
                let find = table
                    .find_type
                    .ok_or_else(|| missing("the debugger gave no mqs_find_type"))?;
                let ty = CString::new(type_name).map_err(|_| missing("a name with a NUL"))?;
                // SAFETY: a NUL-terminated name the debugger only reads.
                let handle = unsafe { find(self.image, ty.as_ptr() as *mut _, MQS_LANG_C) };
                self.cache
                    .handles
                    .borrow_mut()
                    .insert(type_name.to_string(), handle);
                handle
            }
        };
        if handle.is_null() {
            return Err(missing(
                "the debugger's mqs_find_type does not know the type",
            ));
        }
        Ok((handle, table))
    }
}

// The message-queue callbacks give a named type's size and its members'
// offsets; `DeclaredLayouts` adds what MPICH declares.
impl TypeCallbacks for CallbackImage<'_> {
    fn field_offset(&self, type_name: &str, member: &str) -> Result<u64, LayoutError> {
        let missing = |reason: &str| LayoutError::new(type_name, Some(member), reason);
        let key = (type_name.to_string(), member.to_string());
        let cached = self.cache.offsets.borrow().get(&key).copied();
        let off = match cached {
            Some(off) => off,
            None => {
                let (handle, table) = self.find(type_name, Some(member))?;
                let offset = table
                    .field_offset
                    .ok_or_else(|| missing("the debugger gave no mqs_field_offset"))?;
                let field = CString::new(member).map_err(|_| missing("a name with a NUL"))?;
                // SAFETY: a type handle the debugger gave, and a name it
                // only reads.
                let off = unsafe { offset(handle, field.as_ptr() as *mut _) };
                self.cache.offsets.borrow_mut().insert(key, off);
                off
            }
        };
        u64::try_from(off).map_err(|_| missing("mqs_field_offset returned -1: no such member"))
    }

    fn type_size(&self, type_name: &str) -> Result<u64, LayoutError> {
        let missing = |reason: &str| LayoutError::new(type_name, None, reason);
        let cached = self.cache.sizes.borrow().get(type_name).copied();
        let n = match cached {
            Some(n) => n,
            None => {
                let (handle, table) = self.find(type_name, None)?;
                let size = table
                    .sizeof
                    .ok_or_else(|| missing("the debugger gave no mqs_sizeof"))?;
                // SAFETY: a type handle the debugger gave.
                let n = unsafe { size(handle) };
                self.cache
                    .sizes
                    .borrow_mut()
                    .insert(type_name.to_string(), n);
                n
            }
        };
        u64::try_from(n)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| missing("mqs_sizeof returned no size"))
    }

    fn scalar_sizes(&self) -> Option<ScalarSizes> {
        self.sizes
    }
}
