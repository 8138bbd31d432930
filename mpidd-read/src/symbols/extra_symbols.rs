//! Symbols an object's own tables lack but another source knows for that
//! very build: the narrow interface through which, for one, a shipped
//! layout profile's hidden globals reach [`ElfSymbols`](crate::ElfSymbols)
//! (see `layouts::shipped_profiles::ShippedSymbols`).
//!
//! The symbol tables ask by build-id and take plain names and link-time
//! addresses; they know nothing of where the answers come from, and the
//! source knows nothing of how the tables are kept.

/// One symbol known for a build: its name, link-time address and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ExtraSymbol {
    pub(crate) name: String,
    pub(crate) address: u64,
    pub(crate) size: u64,
}

/// A source of symbols for objects identified by their build-id.
pub(crate) trait ExtraSymbols: Send + Sync {
    /// The symbols known for the object with `build_id`, at its link-time
    /// addresses; the object's own definitions of the same names win.
    fn for_build(&self, build_id: &[u8]) -> Vec<ExtraSymbol>;

    /// The symbols found in the file `data` of an object with no
    /// build-id, at their link-time addresses (the hidden globals a
    /// release family predicts, located in the file); none by default.
    fn for_file(&self, data: &[u8]) -> Vec<ExtraSymbol> {
        let _ = data;
        Vec::new()
    }
}
