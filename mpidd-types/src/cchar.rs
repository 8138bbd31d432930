//! Fixed-size C character arrays (`char name[64]`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::TypesError;

/// A C `char[N]` field, kept byte for byte.
///
/// The bytes are kept exactly, so encoding gives back what was decoded even
/// when there is no terminator or there is junk after it. [`CChars::text`]
/// gives the text up to the first NUL.
///
/// Serde shows the text form (lossy UTF-8 up to the first NUL), which is what
/// a person wants to read; deserializing pads with NULs. Bytes after the
/// first NUL are therefore not carried through serde.
///
/// ```
/// use mpidd_types::CChars;
///
/// let name = CChars::<64>::from_text("MPI_COMM_WORLD")?;
/// assert_eq!(name.text(), "MPI_COMM_WORLD");
/// assert_eq!(name.as_bytes()[14], 0);
/// # Ok::<(), mpidd_types::TypesError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CChars<const N: usize>(pub [u8; N]);

impl<const N: usize> CChars<N> {
    /// An all-NUL array.
    pub const fn empty() -> Self {
        CChars([0; N])
    }

    /// The array holding `text` and NUL padding. Fails if `text` does not
    /// leave room for a terminator.
    pub fn from_text(text: &str) -> Result<Self, TypesError> {
        let b = text.as_bytes();
        if b.len() >= N {
            return Err(TypesError::TextTooLong {
                record: "char array",
                field: "text",
                len: b.len(),
                capacity: N,
            });
        }
        let mut out = [0u8; N];
        out[..b.len()].copy_from_slice(b);
        Ok(CChars(out))
    }

    /// The raw bytes.
    pub const fn as_bytes(&self) -> &[u8; N] {
        &self.0
    }

    /// The bytes before the first NUL (all of them if there is none).
    pub fn text_bytes(&self) -> &[u8] {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(N);
        &self.0[..end]
    }

    /// The text before the first NUL, with invalid UTF-8 replaced.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(self.text_bytes()).into_owned()
    }

    /// Whether the array has a NUL terminator inside it.
    pub fn is_terminated(&self) -> bool {
        self.0.contains(&0)
    }
}

impl<const N: usize> Default for CChars<N> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<const N: usize> std::fmt::Debug for CChars<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.text())
    }
}

impl<const N: usize> Serialize for CChars<N> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

impl<'de, const N: usize> Deserialize<'de> for CChars<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        CChars::from_text(&text).map_err(serde::de::Error::custom)
    }
}
