//! How MPICH packs an integer handle.
//!
//! MPICH's handles are 32-bit ints. From the top (MPICH's
//! `mpir_objects.h` and `mpir_request.h` describe the same bits):
//!
//! - bits 31..30, the storage: 0 invalid (the `MPI_*_NULL` handles), 1 a
//!   builtin (predefined) object, 2 an object of the preallocated "direct"
//!   array, 3 an object of a dynamically allocated "indirect" block;
//! - bits 29..26, the object kind (communicator 1, group 2, datatype 3, ...;
//!   the numbers are the enumerators of `MPII_Object_kind`, which the
//!   decoders read from the library's debug info);
//! - the low 26 bits, the index: of the builtin or direct array, or for an
//!   indirect object a block number (bits 25..12) and an index in that
//!   block (bits 11..0).
//!
//! Requests differ: their low 26 bits hold a pool number (bits 25..20,
//! one object allocator per pool), then the block (19..12) and the index
//! (11..0).
//!
//! These positions are MPICH's handle ABI: application binaries carry
//! handle values such as `MPI_COMM_WORLD` (0x44000000) compiled in, so they
//! cannot change within an ABI version. They are not struct offsets.

use serde::{Deserialize, Serialize};

use crate::error::HandleError;
use crate::model::HandleKind;

/// Where an MPICH object lives, by the handle's top two bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Storage {
    /// 0: no object; the null handles have it.
    Invalid,
    /// 1: a predefined object of a builtin array.
    Builtin,
    /// 2: an object of the preallocated direct array.
    Direct,
    /// 3: an object of an indirect block.
    Indirect,
}

impl Storage {
    /// Its name, as the view shows it.
    pub fn name(self) -> &'static str {
        match self {
            Storage::Invalid => "invalid",
            Storage::Builtin => "builtin",
            Storage::Direct => "direct",
            Storage::Indirect => "indirect",
        }
    }
}

/// An MPICH handle broken into its fields.
///
/// ```
/// use mpihandles::mpich_handle_bits::{MpichHandle, Storage};
///
/// let world = MpichHandle::decode(0x4400_0000);
/// assert_eq!((world.storage, world.object_kind, world.index), (Storage::Builtin, 1, 0));
/// let indirect = MpichHandle::decode(0xc400_3005);
/// assert_eq!(indirect.storage, Storage::Indirect);
/// assert_eq!((indirect.block, indirect.block_index), (3, 5));
/// let request = MpichHandle::decode_request(0xec10_2003);
/// assert_eq!((request.pool, request.block, request.block_index), (1, 2, 3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MpichHandle {
    /// The handle as an unsigned 32-bit pattern.
    pub raw: u32,
    /// Bits 31..30.
    pub storage: Storage,
    /// Bits 29..26: the object kind's number.
    pub object_kind: u32,
    /// Bits 25..0: the index into the builtin or direct array.
    pub index: u32,
    /// For requests, bits 25..20; 0 for other objects.
    pub pool: u32,
    /// For an indirect object, its block.
    pub block: u32,
    /// For an indirect object, its index in the block.
    pub block_index: u32,
}

const STORAGE_SHIFT: u32 = 30;
const KIND_SHIFT: u32 = 26;
const KIND_MASK: u32 = 0x3c00_0000;
const INDEX_MASK: u32 = 0x03ff_ffff;
const BLOCK_MASK: u32 = 0x03ff_f000;
const BLOCK_SHIFT: u32 = 12;
const BLOCK_INDEX_MASK: u32 = 0x0000_0fff;
const REQUEST_POOL_MASK: u32 = 0x03f0_0000;
const REQUEST_POOL_SHIFT: u32 = 20;
const REQUEST_BLOCK_MASK: u32 = 0x000f_f000;

impl MpichHandle {
    /// Decodes any handle but a request's.
    pub fn decode(raw: u32) -> MpichHandle {
        MpichHandle {
            raw,
            storage: storage_of(raw),
            object_kind: (raw & KIND_MASK) >> KIND_SHIFT,
            index: raw & INDEX_MASK,
            pool: 0,
            block: (raw & BLOCK_MASK) >> BLOCK_SHIFT,
            block_index: raw & BLOCK_INDEX_MASK,
        }
    }

    /// Decodes a request handle, whose index bits carry a pool number.
    pub fn decode_request(raw: u32) -> MpichHandle {
        MpichHandle {
            raw,
            storage: storage_of(raw),
            object_kind: (raw & KIND_MASK) >> KIND_SHIFT,
            index: raw & INDEX_MASK,
            pool: (raw & REQUEST_POOL_MASK) >> REQUEST_POOL_SHIFT,
            block: (raw & REQUEST_BLOCK_MASK) >> BLOCK_SHIFT,
            block_index: raw & BLOCK_INDEX_MASK,
        }
    }
}

/// MPICH's int handle from a value given as an int or as its 32-bit
/// pattern.
pub(crate) fn int_handle(kind: HandleKind, value: i64) -> Result<u32, HandleError> {
    if let Ok(v) = i32::try_from(value) {
        return Ok(v as u32);
    }
    u32::try_from(value).map_err(|_| HandleError::BadValue {
        kind,
        value,
        reason: "MPICH's handles are 32-bit ints".to_string(),
    })
}

fn storage_of(raw: u32) -> Storage {
    match raw >> STORAGE_SHIFT {
        0 => Storage::Invalid,
        1 => Storage::Builtin,
        2 => Storage::Direct,
        _ => Storage::Indirect,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn mpich_constants_decode_as_mpi_h_describes_them() {
        // MPI_INT: builtin datatype 5, with its size (4) in bits 15..8.
        let int = MpichHandle::decode(0x4c00_0405);
        assert_eq!(
            (int.storage, int.object_kind, int.index & 0xff),
            (Storage::Builtin, 3, 5)
        );
        // MPI_FLOAT_INT: the first object of the datatype direct array.
        let pair = MpichHandle::decode(0x8c00_0000);
        assert_eq!((pair.storage, pair.index), (Storage::Direct, 0));
        // MPI_COMM_NULL: invalid storage, communicator kind.
        let null = MpichHandle::decode(0x0400_0000);
        assert_eq!((null.storage, null.object_kind), (Storage::Invalid, 1));
        // MPI_REQUEST_NULL.
        let rnull = MpichHandle::decode_request(0x2c00_0000);
        assert_eq!((rnull.storage, rnull.object_kind), (Storage::Invalid, 11));
    }

    proptest! {
        #[test]
        fn fields_rebuild_the_handle(raw in any::<u32>()) {
            let h = MpichHandle::decode(raw);
            let storage = match h.storage {
                Storage::Invalid => 0u32,
                Storage::Builtin => 1,
                Storage::Direct => 2,
                Storage::Indirect => 3,
            };
            prop_assert_eq!((storage << 30) | (h.object_kind << 26) | h.index, raw);
            prop_assert_eq!((h.block << 12) | h.block_index, h.index);
            let r = MpichHandle::decode_request(raw);
            prop_assert_eq!((r.pool << 20) | (r.block << 12) | r.block_index, r.index);
        }
    }
}
