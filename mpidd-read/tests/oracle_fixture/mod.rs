//! Builds the type-oracle C fixture (`tests/c/oracle_layout*.c`) with a
//! given compiler and flags, and reads back what the compiler recorded in
//! it. Shared by the oracle's test files.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use mpidd_read::NameIndexKind;
use mpidd_types::ByteOrder;
use object::{Object, ObjectSection, ObjectSymbol};

/// A compiler and the flags of one build of the fixture.
pub struct Variant {
    pub name: &'static str,
    pub cc: &'static str,
    pub package: &'static str,
    pub flags: &'static [&'static str],
    /// Run after linking: `gdb-add-index` with these arguments.
    pub add_index: Option<&'static [&'static str]>,
    /// The name index the oracle must find.
    pub index: NameIndexKind,
}

pub const NATIVE: Variant = Variant {
    name: "gcc",
    cc: "gcc",
    package: "gcc",
    flags: &[],
    add_index: None,
    index: NameIndexKind::Scan,
};

pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c")
}

/// A fresh directory under the system's temp dir.
pub fn temp_dir(what: &str) -> PathBuf {
    static COUNT: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "mpidd-oracle-{}-{}-{what}",
        std::process::id(),
        COUNT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("create a temp dir");
    dir
}

pub fn run(cmd: &mut Command, tool: &str, package: &str) {
    match cmd.output() {
        Err(e) => panic!(
            "cannot run `{tool}`: {e}. Install the Debian package {package} \
             (`bash scripts/test.sh` installs what the tests need)."
        ),
        Ok(o) if !o.status.success() => panic!(
            "`{cmd:?}` failed:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Ok(_) => {}
    }
}

/// Builds the fixture as `dir/liboracle.so`.
pub fn build(v: &Variant, dir: &Path) -> PathBuf {
    let out = dir.join("liboracle.so");
    let src = fixture_dir();
    run(
        Command::new(v.cc)
            .args(["-g", "-O0", "-shared", "-fPIC", "-nostdlib"])
            .args(["-Wall", "-Wextra", "-Werror"])
            .args(v.flags)
            .arg("-o")
            .arg(&out)
            .arg(src.join("oracle_layout.c"))
            .arg(src.join("oracle_layout_def.c")),
        v.cc,
        v.package,
    );
    if let Some(args) = v.add_index {
        run(
            Command::new("gdb-add-index").args(args).arg(&out),
            "gdb-add-index",
            "gdb",
        );
    }
    out
}

/// The object file's bytes and what the test reads from it.
pub struct Fixture {
    pub data: Vec<u8>,
}

impl Fixture {
    pub fn open(path: &Path) -> Self {
        Fixture {
            data: std::fs::read(path).expect("read the built object"),
        }
    }

    pub fn file(&self) -> object::File<'_> {
        object::File::parse(&*self.data).expect("parse the built object")
    }

    pub fn order(&self) -> ByteOrder {
        if self.file().is_little_endian() {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        }
    }

    /// The bytes of a data symbol.
    pub fn symbol(&self, name: &str) -> Vec<u8> {
        let file = self.file();
        let sym = file
            .symbols()
            .chain(file.dynamic_symbols())
            .find(|s| s.name() == Ok(name))
            .unwrap_or_else(|| panic!("symbol {name} not in the object"));
        let section = file
            .section_by_index(sym.section_index().expect("symbol has a section"))
            .expect("the symbol's section");
        let data = section.data().expect("section data");
        let start = (sym.address() - section.address()) as usize;
        data[start..start + sym.size() as usize].to_vec()
    }

    pub fn truth(&self, values: &str, names: &str) -> Vec<(String, u64)> {
        let bytes = self.symbol(values);
        let values: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| {
                let c: [u8; 8] = c.try_into().unwrap();
                match self.order() {
                    ByteOrder::Little => u64::from_le_bytes(c),
                    ByteOrder::Big => u64::from_be_bytes(c),
                }
            })
            .collect();
        let names: Vec<String> = self
            .symbol(names)
            .split(|&b| b == 0)
            .filter(|s| !s.is_empty())
            .map(|s| String::from_utf8(s.to_vec()).unwrap())
            .collect();
        assert_eq!(names.len(), values.len(), "{values:?} and {names:?}");
        names.into_iter().zip(values).collect()
    }
}

/// Bit positions set in `bytes`, in DWARF 4's numbering for `order`.
pub fn set_bits(bytes: &[u8], order: ByteOrder) -> Vec<u64> {
    let mut bits = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        for j in 0..8u64 {
            let mask = match order {
                ByteOrder::Little => 1u8 << j,
                ByteOrder::Big => 0x80u8 >> j,
            };
            if b & mask != 0 {
                bits.push(i as u64 * 8 + j);
            }
        }
    }
    bits
}
