//! [`LoadedObjects`]: the list of a process's loaded objects, as whoever
//! reads the process knows it. The readers above that need only where each
//! object's file is and where it is loaded (its build, for a layout
//! profile; its unwind tables; its DWARF) take this instead of
//! [`ElfSymbols`], so that a debugger hands in the list it already has and
//! no symbol table is read a second time.

use std::path::PathBuf;

use crate::symbols::elf_symbols::{ElfSymbols, ObjectInfo};

/// A process's loaded objects: each one's name (the path the process
/// used), the file to read it from and its load bias.
///
/// [`ElfSymbols`] is one (the objects whose symbol tables it read); a list
/// of [`ObjectInfo`] is another, for a caller that keeps its own symbol
/// tables and hands in its own [`SymbolSource`](crate::SymbolSource):
///
/// ```
/// use mpidd_read::{LoadedObjects, ObjectInfo};
///
/// // What a debugger knows of a process: its objects and where they sit.
/// let objects = vec![
///     ObjectInfo::new("/usr/bin/ring", "/usr/bin/ring", 0x5555_5555_4000),
///     ObjectInfo::new(
///         "/usr/lib/x86_64-linux-gnu/libmpich.so.12",
///         "/proc/4242/root/usr/lib/x86_64-linux-gnu/libmpich.so.12",
///         0x7f00_0000_0000,
///     ),
/// ];
/// let listed = objects.loaded_objects();
/// assert_eq!(listed.len(), 2);
/// assert_eq!(listed[1].bias, 0x7f00_0000_0000);
/// ```
pub trait LoadedObjects {
    /// The loaded objects, in the order the dynamic linker lists them
    /// (the executable first).
    fn loaded_objects(&self) -> Vec<&ObjectInfo>;

    /// Where the process's vDSO starts (its ELF header: the auxiliary
    /// vector's `AT_SYSINFO_EHDR`), if known. The kernel maps it into
    /// every process with no file behind it, and a thread caught inside
    /// `clock_gettime` or `gettimeofday` (as MPI progress loops often are)
    /// unwinds only through its tables, which the stack unwinder then reads
    /// from the process. `None` (the default) leaves such a thread's stack
    /// to end at its first frame.
    fn vdso(&self) -> Option<u64> {
        None
    }
}

impl LoadedObjects for ElfSymbols {
    fn loaded_objects(&self) -> Vec<&ObjectInfo> {
        self.objects().collect()
    }

    fn vdso(&self) -> Option<u64> {
        self.vdso
    }
}

impl LoadedObjects for [ObjectInfo] {
    fn loaded_objects(&self) -> Vec<&ObjectInfo> {
        self.iter().collect()
    }
}

impl LoadedObjects for Vec<ObjectInfo> {
    fn loaded_objects(&self) -> Vec<&ObjectInfo> {
        self.iter().collect()
    }
}

impl<T: LoadedObjects + ?Sized> LoadedObjects for &T {
    fn loaded_objects(&self) -> Vec<&ObjectInfo> {
        (**self).loaded_objects()
    }

    fn vdso(&self) -> Option<u64> {
        (**self).vdso()
    }
}

impl ObjectInfo {
    /// An object called `name` (the path the process used), read from
    /// `path` (the same, or the path through the process's root), loaded
    /// `bias` bytes above its link-time addresses; without a separate
    /// debug file.
    pub fn new(name: impl Into<String>, path: impl Into<PathBuf>, bias: u64) -> ObjectInfo {
        ObjectInfo {
            name: name.into(),
            path: path.into(),
            bias,
            debug_file: None,
            debug_rejected: Vec::new(),
            stamp: None,
        }
    }

    /// The size and modification time its file had when its symbols were
    /// read, if they were read by [`ElfSymbols`](crate::ElfSymbols): what
    /// a reader that keeps something per file can check it against
    /// without looking at the file again.
    pub fn file_read_as(&self) -> Option<(u64, Option<std::time::SystemTime>)> {
        self.stamp.as_ref().map(|s| (s.len, s.modified))
    }
}
