//! Which layout questions a profile must answer: those of each native
//! queue decoder, of the Open MPI handle decoders in `mpihandles`, and of
//! Open MPI's own message-queue library as mpidd's host serves it, one
//! list across both crates (`mpidd profile write` picks from it).
//!
//! It lives here, above `mpihandles`, because it names decoders of both;
//! `detect` and the decoders do not import it.

use mpidd_read::{LayoutError, Layouts};

use crate::detect::DecoderKind;
use crate::mqs::ompi_msgq_questions::{ompi_msgq_ask_layouts, ompi_msgq_missing_layouts};

/// What a profile can be written for: a native queue decoder, or the
/// Open MPI handle decoders of `mpihandles`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileDecoder {
    /// A native queue decoder.
    Queues(DecoderKind),
    /// `mpihandles`' Open MPI handle decoders.
    OmpiHandles,
    /// `mpihandles`' UCX readers: a UCP worker's tag matching and request
    /// pool, and the single request an MPI library points to.
    Ucx,
    /// `mpihandles`' OFI reader: a libfabric endpoint's queues (shm's
    /// receive context and sends in flight, rxm's receive queues).
    Ofi,
    /// Open MPI's own message-queue library (`libompi_dbg_msgq.so`), whose
    /// type callbacks mpidd's host answers from the profile of a stripped
    /// build.
    OmpiMsgq,
}

/// Why no decoders were chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileDecoderError {
    /// No decoder can read what the layouts describe; each decoder's
    /// first unanswered question, `; `-separated.
    #[error("the objects' debug info serves no decoder: {0}")]
    NoDecoder(String),
    /// A decoder name is unknown.
    #[error("no decoder is called `{name}`; the decoders are: {known}")]
    UnknownDecoder {
        /// The name given.
        name: String,
        /// Every decoder's name, `, `-separated.
        known: String,
    },
}

impl ProfileDecoder {
    /// Every decoder, the queue decoders first.
    pub fn all() -> impl Iterator<Item = ProfileDecoder> {
        DecoderKind::ALL
            .iter()
            .map(|&k| ProfileDecoder::Queues(k))
            .chain([
                ProfileDecoder::OmpiHandles,
                ProfileDecoder::Ucx,
                ProfileDecoder::Ofi,
                ProfileDecoder::OmpiMsgq,
            ])
    }

    /// Its name on the command line (`mpich-ch3`, ..., `ompi-handles`,
    /// `ucx`, `ofi`, `ompi-msgq`).
    pub fn name(self) -> &'static str {
        match self {
            ProfileDecoder::Queues(k) => k.name(),
            ProfileDecoder::OmpiHandles => "ompi-handles",
            ProfileDecoder::Ucx => "ucx",
            ProfileDecoder::Ofi => "ofi",
            ProfileDecoder::OmpiMsgq => "ompi-msgq",
        }
    }

    /// Asks `layouts` every question the decoder may ask.
    pub fn ask_layouts(self, layouts: &dyn Layouts) {
        match self {
            ProfileDecoder::Queues(k) => k.ask_layouts(layouts),
            ProfileDecoder::OmpiHandles => mpihandles::ompi_ask_layouts(layouts),
            ProfileDecoder::Ucx => mpihandles::ask_ucx_worker_layouts(layouts),
            ProfileDecoder::Ofi => mpihandles::ask_ofi_layouts(layouts),
            ProfileDecoder::OmpiMsgq => ompi_msgq_ask_layouts(layouts),
        }
    }

    /// The questions the decoder requires that `layouts` cannot answer.
    pub fn missing_layouts(self, layouts: &dyn Layouts) -> Vec<LayoutError> {
        match self {
            ProfileDecoder::Queues(k) => k.missing_layouts(layouts),
            ProfileDecoder::OmpiHandles => mpihandles::ompi_missing_layouts(layouts),
            ProfileDecoder::Ucx => mpihandles::ucx_worker_layouts_missing(layouts)
                .into_iter()
                .collect(),
            ProfileDecoder::Ofi => mpihandles::ofi_layouts_missing(layouts)
                .into_iter()
                .collect(),
            ProfileDecoder::OmpiMsgq => ompi_msgq_missing_layouts(layouts),
        }
    }

    /// The decoders `names` names, or, with no names, every decoder whose
    /// required questions `layouts` answers (a CH3 build does not describe
    /// CH4's types).
    pub fn choose(
        names: &[String],
        layouts: &dyn Layouts,
    ) -> Result<Vec<ProfileDecoder>, ProfileDecoderError> {
        if names.is_empty() {
            let mut gaps = Vec::new();
            let kinds: Vec<ProfileDecoder> = ProfileDecoder::all()
                .filter(|k| match k.missing_layouts(layouts).into_iter().next() {
                    None => true,
                    Some(first) => {
                        gaps.push(format!("{}: {first}", k.name()));
                        false
                    }
                })
                .collect();
            if kinds.is_empty() {
                return Err(ProfileDecoderError::NoDecoder(gaps.join("; ")));
            }
            return Ok(kinds);
        }
        names
            .iter()
            .map(|n| {
                ProfileDecoder::all()
                    .find(|k| k.name() == n)
                    .ok_or_else(|| {
                        let known: Vec<&str> = ProfileDecoder::all().map(|k| k.name()).collect();
                        ProfileDecoderError::UnknownDecoder {
                            name: n.clone(),
                            known: known.join(", "),
                        }
                    })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpidd_read::LayoutTable;

    #[test]
    fn names_are_unique_and_found_again() {
        let names: Vec<&str> = ProfileDecoder::all().map(|k| k.name()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        let chosen = ProfileDecoder::choose(&["ompi-handles".to_string()], &LayoutTable::default());
        assert_eq!(chosen, Ok(vec![ProfileDecoder::OmpiHandles]));
    }

    #[test]
    fn an_unknown_name_lists_the_known_ones() {
        let e = ProfileDecoder::choose(&["lam".to_string()], &LayoutTable::default()).unwrap_err();
        assert!(e.to_string().contains("ompi-handles"), "{e}");
    }

    #[test]
    fn empty_layouts_serve_no_decoder_and_say_what_each_lacks() {
        match ProfileDecoder::choose(&[], &LayoutTable::default()) {
            Err(ProfileDecoderError::NoDecoder(gaps)) => {
                for k in ProfileDecoder::all() {
                    assert!(gaps.contains(k.name()), "{gaps}");
                }
            }
            other => panic!("{other:?}"),
        }
    }
}
