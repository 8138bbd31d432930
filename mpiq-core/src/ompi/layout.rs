//! What the Open MPI decoders share to ask the layouts: [`Field`] (a
//! scalar member's place and width), [`span_of`] (the window of a record
//! a reader fetches at once) and [`Asker`], which answers the questions of
//! one decoder's declared list, noting every one that fails.

use mpidd_read::{LayoutError, LayoutNeed, Layouts, Member, ReadError};
use mpidd_types::TargetAddr;

use crate::list_walk::Span;
use crate::target_read::Record;

/// A scalar member: where it is and how wide.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Field {
    pub(crate) offset: u64,
    pub(crate) size: usize,
}

impl Field {
    pub(crate) fn end(self) -> u64 {
        self.offset.saturating_add(self.size as u64)
    }
    pub(crate) fn int(self, r: &Record<'_>) -> Result<i64, ReadError> {
        r.int(self.offset, self.size)
    }
    pub(crate) fn uint(self, r: &Record<'_>) -> Result<u64, ReadError> {
        r.uint(self.offset, self.size)
    }
    pub(crate) fn addr(self, r: &Record<'_>) -> Result<TargetAddr, ReadError> {
        r.uint(self.offset, self.size).map(TargetAddr)
    }
}

/// The smallest window of a record holding these fields.
pub(crate) fn span_of(fields: &[Field]) -> Span {
    Span {
        start: fields.iter().map(|f| f.offset).min().unwrap_or(0),
        end: fields.iter().map(|f| f.end()).max().unwrap_or(0),
    }
}

/// Answers the questions of one decoder's list (`questions`), noting
/// every one that fails; asking anything outside the list is a bug the
/// decoders' tests catch, since a profile made for the list would not
/// answer it.
pub(crate) struct Asker<'a> {
    src: &'a dyn Layouts,
    questions: &'static [LayoutNeed],
    pub(crate) missing: Vec<LayoutError>,
}

impl<'a> Asker<'a> {
    pub(crate) fn new(src: &'a dyn Layouts, questions: &'static [LayoutNeed]) -> Self {
        Asker {
            src,
            questions,
            missing: Vec::new(),
        }
    }

    fn declared(&self, ty: &str, path: Option<&str>) -> bool {
        self.questions
            .iter()
            .any(|n| !n.is_enum && n.type_name == ty && path.is_none_or(|p| n.members.contains(&p)))
    }

    pub(crate) fn field(&mut self, ty: &str, path: &str) -> Field {
        debug_assert!(
            self.declared(ty, Some(path)),
            "{ty}.{path} is not in the decoder's questions"
        );
        match self.src.member(ty, path) {
            Ok(Member { offset, size, .. }) => Field {
                offset,
                size: usize::try_from(size).unwrap_or(usize::MAX),
            },
            Err(e) => {
                self.missing.push(e);
                Field::default()
            }
        }
    }

    /// A member only some versions have (Open MPI 5.0's `c_index`): its
    /// absence is an answer, not a failure.
    pub(crate) fn optional_field(&mut self, ty: &str, path: &str) -> Option<Field> {
        debug_assert!(
            self.declared(ty, Some(path)),
            "{ty}.{path} is not in the decoder's questions"
        );
        let Member { offset, size, .. } = self.src.member(ty, path).ok()?;
        Some(Field {
            offset,
            size: usize::try_from(size).ok()?,
        })
    }

    pub(crate) fn member(&mut self, ty: &str, path: &str) -> Member {
        debug_assert!(
            self.declared(ty, Some(path)),
            "{ty}.{path} is not in the decoder's questions"
        );
        self.src.member(ty, path).unwrap_or_else(|e| {
            self.missing.push(e);
            Member {
                offset: 0,
                size: 0,
                array_len: None,
            }
        })
    }

    pub(crate) fn size(&mut self, ty: &str) -> u64 {
        debug_assert!(
            self.declared(ty, None),
            "{ty} is not in the decoder's questions"
        );
        self.src.size_of(ty).unwrap_or_else(|e| {
            self.missing.push(e);
            0
        })
    }

    pub(crate) fn enumerator(&mut self, ty: &str, name: &str) -> i64 {
        debug_assert!(
            self.questions
                .iter()
                .any(|n| n.is_enum && n.type_name == ty),
            "{ty}::{name} is not in the decoder's questions"
        );
        let found = self.src.enumerators(ty).and_then(|all| {
            all.into_iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v)
                .ok_or_else(|| LayoutError {
                    type_name: ty.to_string(),
                    member: Some(name.to_string()),
                    reason: "no such enumerator".to_string(),
                })
        });
        match found.map(i64::try_from) {
            Ok(Ok(v)) => v,
            Ok(Err(_)) => {
                self.missing.push(LayoutError {
                    type_name: ty.to_string(),
                    member: Some(name.to_string()),
                    reason: "its value does not fit 64 bits".to_string(),
                });
                0
            }
            Err(e) => {
                self.missing.push(e);
                0
            }
        }
    }

    /// The answers, or every question that failed.
    pub(crate) fn finish<T>(self, answers: T) -> Result<T, Vec<LayoutError>> {
        if self.missing.is_empty() {
            Ok(answers)
        } else {
            Err(self.missing)
        }
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Checks that a decoder asks exactly its declared questions.

    use std::cell::RefCell;
    use std::collections::BTreeSet;

    use mpidd_read::{LayoutError, LayoutNeed, Layouts, Member};

    /// Answers every question with a small made-up layout and records it.
    pub(crate) struct Recorder {
        pub(crate) asked: RefCell<BTreeSet<String>>,
        /// Every enumerator the decoder looks up by name.
        pub(crate) enumerators: &'static [&'static str],
    }

    impl Layouts for Recorder {
        fn size_of(&self, type_name: &str) -> Result<u64, LayoutError> {
            self.asked.borrow_mut().insert(type_name.to_string());
            Ok(64)
        }
        fn member(&self, type_name: &str, path: &str) -> Result<Member, LayoutError> {
            self.asked
                .borrow_mut()
                .insert(format!("{type_name}.{path}"));
            Ok(Member {
                offset: 8,
                size: 8,
                array_len: Some(2),
            })
        }
        fn enumerators(&self, type_name: &str) -> Result<Vec<(String, i128)>, LayoutError> {
            self.asked.borrow_mut().insert(format!("{type_name}::"));
            Ok(self
                .enumerators
                .iter()
                .zip(0..)
                .map(|(n, v)| (n.to_string(), v))
                .collect())
        }
        fn member_enumerators(
            &self,
            type_name: &str,
            path: &str,
        ) -> Result<Vec<(String, i128)>, LayoutError> {
            Err(LayoutError::new(type_name, Some(path), "not asked"))
        }
        fn member_fields(
            &self,
            type_name: &str,
            path: &str,
        ) -> Result<Vec<(String, Member)>, LayoutError> {
            Err(LayoutError::new(type_name, Some(path), "not asked"))
        }
    }

    /// The questions asked that `declared` lacks, and those it has that
    /// were never asked.
    pub(crate) fn undeclared_and_unasked(
        asked: &BTreeSet<String>,
        questions: &[LayoutNeed],
    ) -> (Vec<String>, Vec<String>) {
        let mut declared = BTreeSet::new();
        for need in questions {
            let ty = need.type_name;
            if need.is_enum {
                declared.insert(format!("{ty}::"));
                continue;
            }
            if need.members.is_empty() {
                declared.insert(ty.to_string());
            }
            for p in need.members {
                declared.insert(format!("{ty}.{p}"));
            }
        }
        // A type listed with members whose size is also asked is fine;
        // anything asked beyond that is not declared.
        let undeclared = asked
            .iter()
            .filter(|q| !declared.contains(*q) && !questions.iter().any(|n| n.type_name == *q))
            .cloned()
            .collect();
        let unasked = declared
            .iter()
            .filter(|q| !asked.contains(*q))
            .cloned()
            .collect();
        (undeclared, unasked)
    }
}
