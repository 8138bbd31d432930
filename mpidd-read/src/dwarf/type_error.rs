//! Errors of the DWARF type oracle. Each says which object, and where in its
//! DWARF, so that a user can tell a missing `-g` from a corrupt file.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

/// One object a failed type search looked in, and what it had to offer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SearchedObject {
    /// The object's name as the target knows it.
    pub name: String,
    /// Where its ELF file was read.
    pub path: PathBuf,
    /// Whether DWARF `.debug_info` was found, in the object or its debug
    /// file.
    pub has_debug_info: bool,
    /// The separate debug file given for it, if any.
    pub debug_file: Option<PathBuf>,
    /// The object declares the type but defines it nowhere: the unit that
    /// defines it was built without `-g`, or it is opaque here.
    pub declared_only: bool,
    /// Why the object, or part of its DWARF, could not be read, if so.
    pub problem: Option<String>,
}

impl fmt::Display for SearchedObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name, self.path.display())?;
        if let Some(problem) = &self.problem {
            write!(f, ": {problem}")?;
        }
        if self.has_debug_info {
            if self.declared_only {
                f.write_str(": only a declaration, no definition")?;
            }
            return Ok(());
        }
        match &self.debug_file {
            Some(debug) => write!(
                f,
                ": neither it nor its debug file {} has .debug_info",
                debug.display()
            )?,
            None => f.write_str(": no .debug_info")?,
        }
        f.write_str(
            " (it looks stripped: it needs to be built with -g, or its dbgsym package \
             installed, or its separate debug file given)",
        )
    }
}

/// Why the type oracle could not answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TypeError {
    /// No object defines a type of that name.
    #[error("type `{name}` not found; searched {}", list(searched))]
    NotFound {
        /// The name asked for.
        name: String,
        /// Every object searched, in order.
        searched: Vec<SearchedObject>,
    },
    /// The type has no member of that name, not even through anonymous
    /// struct or union members.
    #[error("{type_name} (in {object}) has no member `{member}`")]
    NoSuchMember {
        /// The type searched, as far as the path got.
        type_name: String,
        /// The member asked for.
        member: String,
        /// The object the type came from.
        object: String,
    },
    /// No object was added under that name.
    #[error("no object named `{object}` was added to the type oracle")]
    UnknownObject {
        /// The name asked for.
        object: String,
    },
    /// A field carries no reference to its type (it did not come from this
    /// oracle, or its DWARF names no type).
    #[error("member `{field}` has no type this oracle can find")]
    NoType {
        /// The field's name, or `<anonymous>`.
        field: String,
    },
    /// The DWARF is malformed or uses something this reader does not
    /// understand.
    #[error("{object}: DWARF at {context}: {reason}")]
    Dwarf {
        /// The object.
        object: String,
        /// Where: a section offset, a DIE, a member.
        context: String,
        /// What is wrong.
        reason: String,
    },
    /// A file could not be read.
    #[error("cannot read {}: {reason}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        reason: String,
    },
    /// A file is not an ELF object this reader can use.
    #[error("{} is not a usable ELF object: {reason}", path.display())]
    Object {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A chain of type references or nested members is deeper than the
    /// cap, which a cycle in corrupt DWARF would otherwise make endless.
    #[error("{what} is deeper than {limit} levels (a cycle in the DWARF?)")]
    LimitExceeded {
        /// What was being followed.
        what: String,
        /// The cap.
        limit: u64,
    },
}

/// Up to this many objects are described one by one; beyond it, stripped
/// objects are summed up (a live process maps dozens of libraries, most
/// stripped, and the ones that matter must not drown).
const LIST_IN_FULL: usize = 4;
/// How many names a summary line shows before "and N more".
const NAMES_SHOWN: usize = 6;

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn list(searched: &[SearchedObject]) -> String {
    if searched.is_empty() {
        return "no objects (none were added)".to_string();
    }
    if searched.len() <= LIST_IN_FULL {
        return searched
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
    }
    let (mut stripped, telling): (Vec<&SearchedObject>, Vec<&SearchedObject>) = searched
        .iter()
        .partition(|o| !o.has_debug_info && o.problem.is_none() && o.debug_file.is_none());
    // File names only: the paths are in the verbose list.
    let short = |o: &SearchedObject| {
        let name = file_name(&o.name);
        match (&o.problem, o.declared_only, &o.debug_file) {
            (Some(problem), _, _) => format!("{name}: {problem}"),
            (None, true, _) => format!("{name}: only a declaration, no definition"),
            (None, false, Some(d)) if !o.has_debug_info => {
                format!("{name}: its debug file {} has no .debug_info", d.display())
            }
            (None, false, _) => name.to_string(),
        }
    };
    // Objects with debug info that merely lack the type are told
    // together; the others each say what is wrong.
    let (plain, odd): (Vec<&SearchedObject>, Vec<&SearchedObject>) = telling
        .iter()
        .partition(|o| o.has_debug_info && o.problem.is_none() && !o.declared_only);
    let mut parts: Vec<String> = odd.iter().take(NAMES_SHOWN).map(|o| short(o)).collect();
    if odd.len() > NAMES_SHOWN {
        parts.push(format!(
            "{} more with problems or only declarations",
            odd.len() - NAMES_SHOWN
        ));
    }
    if !plain.is_empty() {
        let names: Vec<&str> = plain
            .iter()
            .take(NAMES_SHOWN)
            .map(|o| file_name(&o.name))
            .collect();
        let more = plain.len().saturating_sub(NAMES_SHOWN);
        parts.push(format!(
            "{} with debug info but not this type ({}{})",
            plain.len(),
            names.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    if !stripped.is_empty() {
        // The MPI libraries are the ones whose debug info matters: when
        // they are among them, only they are named.
        stripped.sort_by_key(|o| !crate::symbols::searched_objects::is_mpi_library(&o.name));
        let mpi = stripped
            .iter()
            .take_while(|o| crate::symbols::searched_objects::is_mpi_library(&o.name))
            .count();
        let shown = if mpi > 0 {
            mpi.min(NAMES_SHOWN)
        } else {
            NAMES_SHOWN
        };
        let names: Vec<&str> = stripped
            .iter()
            .take(shown)
            .map(|o| file_name(&o.name))
            .collect();
        let more = stripped.len().saturating_sub(shown);
        parts.push(format!(
            "{} with no .debug_info, which look stripped (they need to be built \
             with -g, or their dbgsym packages installed, or their separate debug files \
             given): {}{}",
            stripped.len(),
            names.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    format!("{} objects: {}", searched.len(), parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn searched(has_debug_info: bool, debug_file: Option<&str>) -> SearchedObject {
        SearchedObject {
            name: "libmpi.so.12".into(),
            path: "/usr/lib/libmpi.so.12".into(),
            has_debug_info,
            debug_file: debug_file.map(PathBuf::from),
            declared_only: false,
            problem: None,
        }
    }

    #[test]
    fn not_found_names_every_object_and_calls_stripped_ones_stripped() {
        let err = TypeError::NotFound {
            name: "MPIR_Comm".into(),
            searched: vec![
                searched(true, None),
                searched(false, None),
                searched(false, Some("/usr/lib/debug/x.debug")),
            ],
        };
        let text = err.to_string();
        assert!(text.contains("`MPIR_Comm` not found"), "{text}");
        assert_eq!(
            text.matches("libmpi.so.12 (/usr/lib/libmpi.so.12)").count(),
            3
        );
        assert_eq!(text.matches("looks stripped").count(), 2, "{text}");
        assert!(text.contains("dbgsym"), "{text}");
        assert!(
            text.contains("/usr/lib/debug/x.debug has .debug_info"),
            "{text}"
        );
    }

    #[test]
    fn many_stripped_objects_are_summed_up_after_the_telling_ones() {
        let mut objects: Vec<SearchedObject> = (0..40)
            .map(|i| SearchedObject {
                name: format!("/usr/lib/libstripped{i}.so"),
                ..searched(false, None)
            })
            .collect();
        objects.insert(7, searched(true, None));
        let text = TypeError::NotFound {
            name: "opal_list_item_t".into(),
            searched: objects,
        }
        .to_string();
        assert!(text.contains("41 objects"), "{text}");
        assert!(
            text.contains("1 with debug info but not this type (libmpi.so.12)"),
            "{text}"
        );
        assert!(!text.contains("/usr/lib/"), "file names only: {text}");
        assert!(
            text.contains("40 with no .debug_info, which look stripped"),
            "{text}"
        );
        assert!(text.contains("libstripped5.so and 34 more"), "{text}");
        assert!(!text.contains("libstripped6.so"), "{text}");
        assert_eq!(text.matches("look").count(), 1, "{text}");
    }

    #[test]
    fn the_stripped_mpi_libraries_are_named_first() {
        let mut objects: Vec<SearchedObject> = (0..20)
            .map(|i| SearchedObject {
                name: format!("/usr/lib/libstripped{i}.so"),
                ..searched(false, None)
            })
            .collect();
        objects.push(SearchedObject {
            name: "/usr/lib/x86_64-linux-gnu/libopen-pal.so.40.30.2".into(),
            ..searched(false, None)
        });
        let text = TypeError::NotFound {
            name: "opal_list_item_t".into(),
            searched: objects,
        }
        .to_string();
        assert!(
            text.contains("given): libopen-pal.so.40.30.2 and 20 more"),
            "{text}"
        );
    }

    #[test]
    fn no_objects_says_so() {
        let err = TypeError::NotFound {
            name: "X".into(),
            searched: vec![],
        };
        assert!(err.to_string().contains("none were added"));
    }
}
