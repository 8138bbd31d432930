//! The text form of a profile's hidden symbols (`mpidd profile write
//! --symbols FILE`): `OBJECT NAME ADDRESS SIZE` a line, parsed into the
//! [`ProfileSymbol`]s a profile carries.

use std::collections::BTreeMap;

use crate::layouts::layout_profile::ProfileSymbol;

/// A line that is not `OBJECT NAME ADDRESS SIZE`, or names an object the
/// profile does not describe, or a symbol twice.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}")]
pub struct SymbolLineError {
    /// The line, counted from 1.
    pub line: usize,
    /// What is wrong with it.
    pub why: String,
}

/// Parses the symbols a stripped build hides: one `OBJECT NAME ADDRESS
/// SIZE` a line (link-time address and size in hex with `0x` or decimal;
/// `#` starts a comment; blank lines are skipped). `OBJECT` must be one of
/// `objects`, the loaded file names of the objects the profile describes.
///
/// ```
/// use mpidd_read::parse_profile_symbols;
///
/// let objects = ["libmpich.so.12.1.10".to_string()];
/// let text = "# Debian's MPICH 4.0.2\nlibmpich.so.12.1.10 MPIR_Comm_builtin 0x2c8f40 4608\n";
/// let symbols = parse_profile_symbols(text, &objects)?;
/// assert_eq!(symbols["MPIR_Comm_builtin"].address, 0x2c8f40);
/// assert_eq!(symbols["MPIR_Comm_builtin"].size, 4608);
/// # Ok::<(), mpidd_read::SymbolLineError>(())
/// ```
pub fn parse_profile_symbols(
    text: &str,
    objects: &[String],
) -> Result<BTreeMap<String, ProfileSymbol>, SymbolLineError> {
    let bad = |n: usize, why: String| SymbolLineError { line: n + 1, why };
    let number = |s: &str| match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    };
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let [object, name, address, size] = line.split_whitespace().collect::<Vec<_>>()[..] else {
            return Err(bad(n, "expected OBJECT NAME ADDRESS SIZE".to_string()));
        };
        if !objects.iter().any(|o| o == object) {
            return Err(bad(
                n,
                format!(
                    "`{object}` is none of the profile's objects ({})",
                    objects.join(", ")
                ),
            ));
        }
        let (Some(address), Some(size)) = (number(address), number(size)) else {
            return Err(bad(n, "ADDRESS and SIZE must be numbers".to_string()));
        };
        let symbol = ProfileSymbol {
            object: object.to_string(),
            address,
            size,
        };
        if out.insert(name.to_string(), symbol).is_some() {
            return Err(bad(n, format!("`{name}` is given twice")));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn objects() -> Vec<String> {
        vec!["libmpi.so.40".to_string()]
    }

    #[test]
    fn hex_and_decimal_comments_and_blank_lines() {
        let text = "\n# hidden\nlibmpi.so.40 a 0x10 8 # trailing\nlibmpi.so.40 b 32 0x4\n";
        let s = parse_profile_symbols(text, &objects()).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s["a"].address, s["a"].size), (0x10, 8));
        assert_eq!((s["b"].address, s["b"].size), (32, 4));
    }

    #[test]
    fn each_bad_line_is_named_by_its_number() {
        let e = |text: &str| parse_profile_symbols(text, &objects()).unwrap_err();
        assert_eq!(e("# c\nlibmpi.so.40 a 0x10\n").line, 2);
        assert!(e("other.so a 1 2")
            .why
            .contains("none of the profile's objects"));
        assert!(e("libmpi.so.40 a x 2").why.contains("must be numbers"));
        let twice = e("libmpi.so.40 a 1 2\nlibmpi.so.40 a 3 4");
        assert_eq!(twice.line, 2);
        assert!(twice.why.contains("given twice"));
    }
}
