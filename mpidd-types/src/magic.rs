//! The five magic bytes that open `MPI2DD_INFO`.

use serde::{Deserialize, Serialize};

use crate::error::TypesError;

/// `MPI2DD_INFO.magic`, kept as found.
///
/// ```
/// use mpidd_types::{Mpi2ddMagic, TypesError};
///
/// assert!(Mpi2ddMagic::EXPECTED.check().is_ok());
/// let err = Mpi2ddMagic(*b"MPI3\x7f").check().unwrap_err();
/// assert!(matches!(err, TypesError::BadMagic { index: 3, found: b'3', .. }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Mpi2ddMagic(pub [u8; 5]);

impl Mpi2ddMagic {
    /// The magic the interface requires: `'M' 'P' 'I' '2' 0x7f`.
    pub const EXPECTED: Mpi2ddMagic = Mpi2ddMagic(*b"MPI2\x7f");

    /// Checks the bytes, naming the first one that differs.
    pub fn check(&self) -> Result<(), TypesError> {
        for (index, (&found, &expected)) in self.0.iter().zip(Self::EXPECTED.0.iter()).enumerate() {
            if found != expected {
                return Err(TypesError::BadMagic {
                    index,
                    expected,
                    found,
                    bytes: self.0,
                });
            }
        }
        Ok(())
    }
}

impl Default for Mpi2ddMagic {
    fn default() -> Self {
        Self::EXPECTED
    }
}
