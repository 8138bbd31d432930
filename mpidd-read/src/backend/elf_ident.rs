//! The ABI an ELF file declares in its identification (its first 16
//! bytes): enough for a backend to read the target's words before any
//! other part of the file is looked at.

use mpidd_types::{AddressWidth, ByteOrder, TargetAbi};
use object::FileKind;

/// The byte order and address width that the ELF identification at the
/// start of `data` declares; why not, when it is no ELF identification.
pub(crate) fn elf_abi(data: &[u8]) -> Result<TargetAbi, String> {
    let width = match FileKind::parse(data) {
        Ok(FileKind::Elf64) => AddressWidth::W64,
        Ok(FileKind::Elf32) => AddressWidth::W32,
        Ok(other) => return Err(format!("it is {other:?}, not ELF")),
        Err(_) => {
            return Err(format!(
                "it does not start with an ELF identification ({} bytes read)",
                data.len()
            ))
        }
    };
    // EI_DATA.
    let order = match data.get(5) {
        Some(1) => ByteOrder::Little,
        Some(2) => ByteOrder::Big,
        other => return Err(format!("its ELF data encoding is {other:?}")),
    };
    Ok(TargetAbi::new(order, width))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identification_alone_gives_the_abi() {
        let mut ident = *b"\x7fELF\x02\x02\x01\0\0\0\0\0\0\0\0\0";
        let abi = elf_abi(&ident).unwrap();
        assert_eq!(abi, TargetAbi::new(ByteOrder::Big, AddressWidth::W64));
        ident[4] = 1;
        ident[5] = 1;
        let abi = elf_abi(&ident).unwrap();
        assert_eq!(abi, TargetAbi::new(ByteOrder::Little, AddressWidth::W32));
        ident[5] = 7;
        assert!(elf_abi(&ident).unwrap_err().contains("data encoding"));
        assert!(elf_abi(b"\x7fEL").is_err());
        assert!(elf_abi(b"#!/bin/sh\n").is_err());
    }
}
