//! C types from DWARF: the [`type_oracle::TypeOracle`] answers "this type's
//! size, this member's offset" for the loaded objects (or their debug
//! files). This folder owns reading DWARF sections ([`dwarf_file`]), the
//! name indexes ([`dwarf_index`] over `.debug_names`, [`gdb_index`] and a
//! scan of the units in [`dwarf_units`]), turning DIEs into layouts
//! ([`dwarf_layout`], [`type_layout`]), the names a build's DWARF does not
//! define, remembered per build ([`absent_names`]), and the errors that say
//! what is missing ([`type_error`]).
//!
//! It stands on `symbols` (which objects are loaded, and their debug
//! files) and must not depend on `layouts`, which builds on it.

pub(crate) mod absent_names;
pub(crate) mod dwarf_file;
pub(crate) mod dwarf_index;
pub(crate) mod dwarf_layout;
pub(crate) mod dwarf_units;
pub(crate) mod gdb_index;
pub(crate) mod type_error;
pub(crate) mod type_layout;
pub(crate) mod type_oracle;
