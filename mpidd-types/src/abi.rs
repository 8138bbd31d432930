//! The target ABI: the facts about the debugged machine that decide how its
//! bytes are laid out. Nothing here looks at the host.

use serde::{Deserialize, Serialize};

/// Byte order of the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ByteOrder {
    /// Least significant byte first (x86, most ARM and AArch64 Linux).
    Little,
    /// Most significant byte first (s390x, 32-bit PowerPC, MIPS).
    Big,
}

impl From<ByteOrder> for scroll::Endian {
    fn from(order: ByteOrder) -> Self {
        match order {
            ByteOrder::Little => scroll::Endian::Little,
            ByteOrder::Big => scroll::Endian::Big,
        }
    }
}

/// Width of a target address, which on every supported ABI is also the
/// width of the C `long` that the message-queue interface uses for
/// `mqs_taddr_t` and `mqs_tword_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AddressWidth {
    /// 4-byte addresses (ILP32).
    #[serde(rename = "4")]
    W32,
    /// 8-byte addresses (LP64).
    #[serde(rename = "8")]
    W64,
}

impl AddressWidth {
    /// Number of bytes in a target address.
    pub const fn bytes(self) -> usize {
        match self {
            AddressWidth::W32 => 4,
            AddressWidth::W64 => 8,
        }
    }

    /// The width for a byte count of 4 or 8, `None` for anything else.
    pub const fn from_bytes(n: usize) -> Option<Self> {
        match n {
            4 => Some(AddressWidth::W32),
            8 => Some(AddressWidth::W64),
            _ => None,
        }
    }

    /// Largest address value the width can hold.
    pub const fn max_address(self) -> u64 {
        match self {
            AddressWidth::W32 => u32::MAX as u64,
            AddressWidth::W64 => u64::MAX,
        }
    }
}

/// How the MPI-2 debugger-interface records were compiled into the target.
///
/// The draft says those records are packed, with no padding between fields.
/// MPICH's `mpi2_interface.h` declares them as ordinary C structs, so a real
/// MPICH build lays them out with natural alignment. A debugger has to be told
/// which one it faces; the two differ only where a field would be padded, for
/// example the tail of `MPI2DD_DIRECTORYENTRY` on LP64 targets.
///
/// Records that are plain C structs in every implementation
/// (`MPIR_PROCDESC`, the `mqs_*` records) ignore this setting and always use
/// the natural layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Packing {
    /// No padding at all: each field starts right after the previous one.
    Packed,
    /// The C compiler's layout: each scalar aligned to its own size, the
    /// struct padded to a multiple of its largest alignment.
    Natural,
}

/// Everything the decoders need to know about the target machine.
///
/// The value always comes from the target (a core file's ELF header, the
/// live process's executable, the user's explicit choice), never from the
/// machine the debugger runs on.
///
/// ```
/// use mpidd_types::{AddressWidth, ByteOrder, Packing, TargetAbi};
///
/// let s390x = TargetAbi::S390X;
/// assert_eq!(s390x.byte_order, ByteOrder::Big);
/// assert_eq!(s390x.address_width, AddressWidth::W64);
/// let packed = s390x.with_packing(Packing::Packed);
/// assert_eq!(packed.packing, Packing::Packed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TargetAbi {
    /// Byte order of every multi-byte scalar.
    pub byte_order: ByteOrder,
    /// Width of addresses and of `long`.
    pub address_width: AddressWidth,
    /// Layout rule for the MPI-2 debugger-interface records.
    pub packing: Packing,
}

impl TargetAbi {
    /// x86_64 Linux (little-endian LP64).
    pub const X86_64: TargetAbi = TargetAbi::new(ByteOrder::Little, AddressWidth::W64);
    /// i686 Linux (little-endian ILP32).
    pub const I686: TargetAbi = TargetAbi::new(ByteOrder::Little, AddressWidth::W32);
    /// AArch64 Linux (little-endian LP64).
    pub const AARCH64: TargetAbi = TargetAbi::new(ByteOrder::Little, AddressWidth::W64);
    /// 32-bit ARM hard-float Linux (little-endian ILP32).
    pub const ARMHF: TargetAbi = TargetAbi::new(ByteOrder::Little, AddressWidth::W32);
    /// s390x Linux (big-endian LP64).
    pub const S390X: TargetAbi = TargetAbi::new(ByteOrder::Big, AddressWidth::W64);
    /// 32-bit PowerPC Linux (big-endian ILP32).
    pub const POWERPC: TargetAbi = TargetAbi::new(ByteOrder::Big, AddressWidth::W32);
    /// 32-bit big-endian MIPS Linux (O32, ILP32).
    pub const MIPS: TargetAbi = TargetAbi::new(ByteOrder::Big, AddressWidth::W32);

    /// An ABI with natural packing; see [`Packing`] for why that is the
    /// default.
    pub const fn new(byte_order: ByteOrder, address_width: AddressWidth) -> Self {
        TargetAbi {
            byte_order,
            address_width,
            packing: Packing::Natural,
        }
    }

    /// The same ABI with another packing rule.
    pub const fn with_packing(self, packing: Packing) -> Self {
        TargetAbi { packing, ..self }
    }

    /// Number of bytes in a target address or `long`.
    pub const fn address_bytes(self) -> usize {
        self.address_width.bytes()
    }

    /// The byte order as scroll's context value.
    pub fn endian(self) -> scroll::Endian {
        self.byte_order.into()
    }
}

impl std::fmt::Display for TargetAbi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let order = match self.byte_order {
            ByteOrder::Little => "little-endian",
            ByteOrder::Big => "big-endian",
        };
        let packing = match self.packing {
            Packing::Packed => "packed",
            Packing::Natural => "natural",
        };
        write!(f, "{order} {}-bit ({packing})", self.address_bytes() * 8)
    }
}
