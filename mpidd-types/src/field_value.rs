//! Rust types that can stand for a record field, and the macro that builds a
//! record from a list of them.
//!
//! A record is declared once: its fields' Rust types say both the C layout
//! (through [`FieldValue::KIND`] and [`FieldValue::COUNT`]) and how to read
//! and write them. The field list, the decoder and the encoder all come out
//! of that one declaration, so they cannot drift apart.

use crate::addr::TargetAddr;
use crate::cchar::CChars;
use crate::error::TypesError;
use crate::flags::{DebuggerFlags, MpiFlags};
use crate::layout::{FieldKind, FieldReader, FieldWriter};
use crate::magic::Mpi2ddMagic;
use crate::state::Mpi2ddDebugState;

/// A Rust type that stands for one C field of a record.
///
/// `i64` stands for a signed target word (`mqs_tword_t`): its width comes
/// from the ABI, and 32-bit targets sign-extend it.
pub trait FieldValue: Sized {
    /// C element type.
    const KIND: FieldKind;
    /// C element count (1 for scalars).
    const COUNT: usize;
    /// Read the field at the reader's position.
    fn read(r: &mut FieldReader<'_>) -> Self;
    /// Write the field at the writer's position.
    fn write(&self, w: &mut FieldWriter<'_>) -> Result<(), TypesError>;
}

impl FieldValue for u8 {
    const KIND: FieldKind = FieldKind::U8;
    const COUNT: usize = 1;
    fn read(r: &mut FieldReader<'_>) -> Self {
        r.u8()
    }
    fn write(&self, w: &mut FieldWriter<'_>) -> Result<(), TypesError> {
        w.u8(*self);
        Ok(())
    }
}

impl FieldValue for i32 {
    const KIND: FieldKind = FieldKind::I32;
    const COUNT: usize = 1;
    fn read(r: &mut FieldReader<'_>) -> Self {
        r.i32()
    }
    fn write(&self, w: &mut FieldWriter<'_>) -> Result<(), TypesError> {
        w.i32(*self);
        Ok(())
    }
}

impl<const N: usize> FieldValue for [i32; N] {
    const KIND: FieldKind = FieldKind::I32;
    const COUNT: usize = N;
    fn read(r: &mut FieldReader<'_>) -> Self {
        r.i32_array()
    }
    fn write(&self, w: &mut FieldWriter<'_>) -> Result<(), TypesError> {
        w.i32_array(self);
        Ok(())
    }
}

impl FieldValue for TargetAddr {
    const KIND: FieldKind = FieldKind::Addr;
    const COUNT: usize = 1;
    fn read(r: &mut FieldReader<'_>) -> Self {
        r.addr()
    }
    fn write(&self, w: &mut FieldWriter<'_>) -> Result<(), TypesError> {
        w.addr(*self).map(drop)
    }
}

impl FieldValue for i64 {
    const KIND: FieldKind = FieldKind::Word;
    const COUNT: usize = 1;
    fn read(r: &mut FieldReader<'_>) -> Self {
        r.word()
    }
    fn write(&self, w: &mut FieldWriter<'_>) -> Result<(), TypesError> {
        w.word(*self).map(drop)
    }
}

impl<const N: usize> FieldValue for CChars<N> {
    const KIND: FieldKind = FieldKind::U8;
    const COUNT: usize = N;
    fn read(r: &mut FieldReader<'_>) -> Self {
        CChars(r.bytes())
    }
    fn write(&self, w: &mut FieldWriter<'_>) -> Result<(), TypesError> {
        w.bytes(&self.0);
        Ok(())
    }
}

/// `char text[M][N]`: rows of C strings, laid out back to back.
impl<const N: usize, const M: usize> FieldValue for [CChars<N>; M] {
    const KIND: FieldKind = FieldKind::U8;
    const COUNT: usize = N * M;
    fn read(r: &mut FieldReader<'_>) -> Self {
        let all = r.byte_slice(N * M);
        std::array::from_fn(|row| {
            let mut line = [0u8; N];
            line.copy_from_slice(&all[row * N..(row + 1) * N]);
            CChars(line)
        })
    }
    fn write(&self, w: &mut FieldWriter<'_>) -> Result<(), TypesError> {
        let mut all = Vec::with_capacity(N * M);
        for row in self {
            all.extend_from_slice(&row.0);
        }
        w.bytes(&all);
        Ok(())
    }
}

impl FieldValue for Mpi2ddMagic {
    const KIND: FieldKind = FieldKind::U8;
    const COUNT: usize = 5;
    fn read(r: &mut FieldReader<'_>) -> Self {
        Mpi2ddMagic(r.bytes())
    }
    fn write(&self, w: &mut FieldWriter<'_>) -> Result<(), TypesError> {
        w.bytes(&self.0);
        Ok(())
    }
}

impl FieldValue for Mpi2ddDebugState {
    const KIND: FieldKind = FieldKind::U8;
    const COUNT: usize = 1;
    fn read(r: &mut FieldReader<'_>) -> Self {
        r.u8().into()
    }
    fn write(&self, w: &mut FieldWriter<'_>) -> Result<(), TypesError> {
        w.u8((*self).into());
        Ok(())
    }
}

impl FieldValue for DebuggerFlags {
    const KIND: FieldKind = FieldKind::U32;
    const COUNT: usize = 1;
    fn read(r: &mut FieldReader<'_>) -> Self {
        DebuggerFlags::from_bits_retain(r.u32())
    }
    fn write(&self, w: &mut FieldWriter<'_>) -> Result<(), TypesError> {
        w.u32(self.bits());
        Ok(())
    }
}

impl FieldValue for MpiFlags {
    const KIND: FieldKind = FieldKind::U32;
    const COUNT: usize = 1;
    fn read(r: &mut FieldReader<'_>) -> Self {
        MpiFlags::from_bits_retain(r.u32())
    }
    fn write(&self, w: &mut FieldWriter<'_>) -> Result<(), TypesError> {
        w.u32(self.bits());
        Ok(())
    }
}

/// Declares a record struct together with its [`Record`](crate::Record)
/// implementation and scroll glue, from one list of documented fields.
macro_rules! define_record {
    (
        $(#[$meta:meta])*
        pub struct $name:ident = $c_name:literal, $rule:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $crate::record::Record for $name {
            const C_NAME: &'static str = $c_name;
            const PACKING: $crate::layout::PackingRule = $crate::layout::PackingRule::$rule;
            const FIELDS: &'static [$crate::layout::Field] = &[
                $( $crate::layout::Field::array(
                    stringify!($field),
                    <$ty as $crate::field_value::FieldValue>::KIND,
                    <$ty as $crate::field_value::FieldValue>::COUNT,
                ), )*
            ];

            fn decode(
                bytes: &[u8],
                abi: $crate::abi::TargetAbi,
            ) -> Result<Self, $crate::error::TypesError> {
                let mut r = $crate::layout::FieldReader::new(
                    Self::C_NAME, Self::FIELDS, Self::PACKING, bytes, abi,
                )?;
                // Struct-expression fields are evaluated in source order,
                // which is the order of FIELDS.
                let value = $name {
                    $( $field: <$ty as $crate::field_value::FieldValue>::read(&mut r), )*
                };
                r.finish();
                Ok(value)
            }

            fn encode(
                &self,
                out: &mut [u8],
                abi: $crate::abi::TargetAbi,
            ) -> Result<usize, $crate::error::TypesError> {
                let mut w = $crate::layout::FieldWriter::new(
                    Self::C_NAME, Self::FIELDS, Self::PACKING, out, abi,
                )?;
                $( $crate::field_value::FieldValue::write(&self.$field, &mut w)?; )*
                Ok(w.finish())
            }
        }

        $crate::record::scroll_glue!($name);
    };
}
pub(crate) use define_record;
