//! What DWARF said about the addresses a run named, kept on disk between
//! runs beside the symbol indexes ([`keep_symbol_indexes_in`]): naming a
//! frame in libc from its compressed debug file inflates and parses most
//! of that file's DWARF, which was three quarters of a warm `mpidd job`
//! over a few rank cores. Kept for one DWARF file as it is (path, device,
//! inode, size, modification time), and used only for exactly that file.
//!
//! [`keep_symbol_indexes_in`]: crate::keep_symbol_indexes_in

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::backend::file_identity::FileStamp;
use crate::symbols::name_index::{index_dir, index_key, index_path, write_kept};
use crate::symbols::symbolize::SourceFrame;

/// The tag of the kept frames' key among the keys of a file's kept tables.
const FRAMES_KEY: u8 = 4;

/// The addresses kept for one file at most: a job's stacks name a few
/// hundred; past this, new ones are named again each run.
const MAX_KEPT_FRAMES: usize = 4096;

/// The file's format, with the key it was made for.
#[derive(Serialize, Deserialize)]
struct KeptFile {
    format: String,
    key: Vec<u8>,
    frames: Vec<(u64, Option<SourceFrame>)>,
}

const FORMAT: &str = "mpidd-kept-frames/1";

/// The frames of one DWARF file: those an earlier run kept, and those this
/// run added.
#[derive(Debug, Default)]
pub(crate) struct KeptFrames {
    key: Option<Vec<u8>>,
    frames: HashMap<u64, Option<SourceFrame>>,
    added: bool,
}

impl KeptFrames {
    /// What an earlier run kept for the DWARF file at `path` as it is now;
    /// empty (and keeping nothing) when frames are not kept.
    pub(crate) fn of(path: &Path) -> KeptFrames {
        let key = index_dir()
            .and(FileStamp::of(path))
            .and_then(|s| index_key(&s, FRAMES_KEY));
        let mut kept = KeptFrames {
            key,
            ..KeptFrames::default()
        };
        if let Some(read) = kept.read() {
            kept.frames = read;
        }
        kept
    }

    fn read(&self) -> Option<HashMap<u64, Option<SourceFrame>>> {
        let (dir, key) = (index_dir()?, self.key.as_ref()?);
        let bytes = std::fs::read(index_path(&dir, key, "frames")).ok()?;
        let file: KeptFile = serde_json::from_slice(&bytes).ok()?;
        (file.format == FORMAT && &file.key == key && file.frames.len() <= MAX_KEPT_FRAMES)
            .then(|| file.frames.into_iter().collect())
    }

    /// What was kept for `svma`: `Some(None)` when DWARF had nothing.
    pub(crate) fn get(&self, svma: u64) -> Option<Option<SourceFrame>> {
        self.frames.get(&svma).cloned()
    }

    /// Keeps what DWARF said of `svma`, while there is room.
    pub(crate) fn add(&mut self, svma: u64, frame: Option<SourceFrame>) {
        if self.key.is_some() && self.frames.len() < MAX_KEPT_FRAMES {
            self.frames.insert(svma, frame);
            self.added = true;
        }
    }

    /// Writes the frames when this run added some; a failure to write is
    /// not an error.
    pub(crate) fn write(&mut self) {
        let (Some(dir), Some(key)) = (index_dir(), self.key.clone()) else {
            return;
        };
        if !self.added {
            return;
        }
        let mut frames: Vec<(u64, Option<SourceFrame>)> =
            self.frames.iter().map(|(a, f)| (*a, f.clone())).collect();
        frames.sort_by_key(|(a, _)| *a);
        let file = KeptFile {
            format: FORMAT.to_string(),
            key: key.clone(),
            frames,
        };
        if let Ok(bytes) = serde_json::to_vec(&file) {
            write_kept(&dir, &index_path(&dir, &key, "frames"), &bytes);
            self.added = false;
        }
    }
}
