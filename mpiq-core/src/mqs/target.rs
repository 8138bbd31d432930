//! What a message-queue library is shown of one process: its memory, its
//! symbols, its types, and who it is in the job.

use mpidd_read::{Layouts, SymbolSource, TargetMemory, TypeOracle};
use mpidd_types::{AddressWidth, TargetAbi};

#[cfg(feature = "mqs")]
use crate::mqs::abi::MqsTargetTypeSizes;

/// The sizes of the target's C base types, as the library asks for them
/// through `mqs_get_type_sizes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetTypeSizes {
    /// `sizeof (short)`.
    pub short: u32,
    /// `sizeof (int)`.
    pub int: u32,
    /// `sizeof (long)`.
    pub long: u32,
    /// `sizeof (long long)`.
    pub long_long: u32,
    /// `sizeof (void *)`.
    pub pointer: u32,
    /// `sizeof (bool)` (only Open MPI's form of the interface asks).
    pub bool_: u32,
    /// `sizeof (size_t)` (only Open MPI's form of the interface asks).
    pub size_t: u32,
}

impl TargetTypeSizes {
    /// The sizes of the Linux C ABIs for this ABI's address width: `long`
    /// and pointers as wide as an address, `int` 4 bytes (ILP32 or LP64).
    pub fn from_abi(abi: TargetAbi) -> Self {
        let word = match abi.address_width {
            AddressWidth::W32 => 4,
            AddressWidth::W64 => 8,
        };
        TargetTypeSizes {
            short: 2,
            int: 4,
            long: word,
            long_long: 8,
            pointer: word,
            bool_: 1,
            size_t: word,
        }
    }

    /// These sizes where the target's DWARF gives them, the ABI's
    /// otherwise.
    pub fn from_oracle(oracle: &TypeOracle, abi: TargetAbi) -> Self {
        let mut sizes = Self::from_abi(abi);
        if let Ok(found) = oracle.base_type_sizes() {
            let pick = |dwarf: Option<u64>, default: u32| {
                dwarf
                    .and_then(|v| u32::try_from(v).ok())
                    .filter(|&v| v > 0 && v <= 16)
                    .unwrap_or(default)
            };
            sizes.short = pick(found.short, sizes.short);
            sizes.int = pick(found.int, sizes.int);
            sizes.long = pick(found.long, sizes.long);
            sizes.long_long = pick(found.long_long, sizes.long_long);
            sizes.pointer = pick(found.pointer, sizes.pointer);
            sizes.bool_ = pick(found.bool, sizes.bool_);
            sizes.size_t = pick(found.size_t, sizes.size_t);
        }
        sizes
    }

    #[cfg(feature = "mqs")]
    pub(crate) fn to_c(self) -> MqsTargetTypeSizes {
        MqsTargetTypeSizes {
            bool_size: self.bool_ as i32,
            size_t_size: self.size_t as i32,
            short_size: self.short as i32,
            int_size: self.int as i32,
            long_size: self.long as i32,
            long_long_size: self.long_long as i32,
            pointer_size: self.pointer as i32,
        }
    }
}

/// One MPI process as a message-queue library sees it.
pub struct MqsTarget<'a> {
    /// The executable image's name, shown in the library's messages.
    pub image_name: String,
    /// Its memory.
    pub memory: &'a dyn TargetMemory,
    /// Its symbols, in every loaded object (local symbols included).
    pub symbols: &'a dyn SymbolSource,
    /// What the library's type callbacks answer from: the DWARF of its
    /// loaded objects (a [`TypeOracle`]), or the layouts its native
    /// decoder reads it with, a stripped build's profile among them
    /// (`read_process_queues` chooses them so).
    pub types: &'a dyn Layouts,
    /// Its rank in `MPI_COMM_WORLD`, or −1 when unknown.
    pub global_rank: i32,
    /// Its base type sizes.
    pub type_sizes: TargetTypeSizes,
}

impl std::fmt::Debug for MqsTarget<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MqsTarget")
            .field("image_name", &self.image_name)
            .field("abi", &self.memory.abi())
            .field("global_rank", &self.global_rank)
            .field("type_sizes", &self.type_sizes)
            .finish_non_exhaustive()
    }
}
