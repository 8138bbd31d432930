//! The pages of target memory a debugger gave during one stop, so that a
//! decoder's thousands of small reads cost few calls into the debugger's
//! Python (each one a Python call, an allocation and the debugger's own
//! read). The caller clears it whenever the target may have changed: at
//! each stop, after a write, when another process or core is selected.
//!
//! Knows nothing of Python: it fills itself through a `fetch` function the
//! caller passes at each read, so that the calls into the debugger happen
//! on the caller's thread, within its call.

use std::collections::HashMap;

/// The unit of caching: memory is mapped, and so readable or not, by
/// whole pages.
pub const PAGE: u64 = 4096;

/// At most this many pages are asked for in one fetch: a walk over a large
/// array reads ahead, but a fetch that fails costs little.
const PAGES_PER_FETCH: u64 = 16;

/// Pages kept at most (64 MiB); past that the cache starts again, so that
/// reading a job's largest queues cannot grow the debugger without bound.
const MAX_PAGES: usize = 16 * 1024;

/// What one fetch gave: the bytes read from its start (fewer than asked
/// when the rest could not be read), or the caller's failure, which says
/// nothing about the memory.
pub type Fetched = Result<Vec<u8>, String>;

/// Counts of what the cache did since it was made or cleared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Reads answered from kept pages alone.
    pub hits: u64,
    /// Calls into the debugger.
    pub fetches: u64,
    /// Pages kept now.
    pub pages: u64,
    /// Pages found unreadable.
    pub unreadable: u64,
}

/// The pages read so far in this stop: each page's bytes, or `None` for a
/// page the debugger could not read.
#[derive(Debug, Default)]
pub struct PageCache {
    pages: HashMap<u64, Option<Box<[u8]>>>,
    stats: CacheStats,
}

impl PageCache {
    /// Forgets every page: the next reads go to the debugger.
    pub fn clear(&mut self) {
        self.pages.clear();
        self.stats = CacheStats::default();
    }

    /// What it did since the last clear.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            pages: self.pages.len() as u64,
            ..self.stats
        }
    }

    /// Fills `buf` with the target's bytes at `addr`, page by page, asking
    /// `fetch(address, size)` for pages not kept yet. Returns how many
    /// leading bytes of `buf` hold the target's bytes: fewer than asked
    /// when a page cannot be read (`TargetMemory::read_into`'s contract).
    /// A failure of `fetch` itself is returned as is.
    pub fn read(
        &mut self,
        addr: u64,
        buf: &mut [u8],
        fetch: &mut dyn FnMut(u64, usize) -> Fetched,
    ) -> Result<usize, String> {
        let mut done = 0usize;
        let mut fetched = false;
        while done < buf.len() {
            let Some(at) = addr.checked_add(done as u64) else {
                break;
            };
            let page = at & !(PAGE - 1);
            if !self.pages.contains_key(&page) {
                fetched = true;
                let wanted_end = at.saturating_add((buf.len() - done) as u64);
                self.fill(page, wanted_end, fetch)?;
            }
            let offset = (at - page) as usize;
            match self.pages.get(&page) {
                Some(Some(bytes)) => {
                    let n = (bytes.len() - offset).min(buf.len() - done);
                    buf[done..done + n].copy_from_slice(&bytes[offset..offset + n]);
                    done += n;
                }
                // The page as a whole could not be read: the bytes asked
                // for in it may still be (a debugger that reads a core
                // whose segment ends inside a page), so they are asked for
                // alone, and not kept.
                _ => {
                    let n = (PAGE as usize - offset).min(buf.len() - done);
                    self.stats.fetches += 1;
                    let bytes = fetch(at, n)?;
                    let got = bytes.len().min(n);
                    buf[done..done + got].copy_from_slice(&bytes[..got]);
                    done += got;
                    if got < n {
                        break;
                    }
                }
            }
        }
        if !fetched && done == buf.len() {
            self.stats.hits += 1;
        }
        Ok(done)
    }

    /// Reads the pages from `page` up to the one holding `wanted_end - 1`
    /// (at most [`PAGES_PER_FETCH`], none already kept) in one fetch; when
    /// that comes back short, the first page alone, so that one unreadable
    /// page further on does not make the first one unreadable too.
    fn fill(
        &mut self,
        page: u64,
        wanted_end: u64,
        fetch: &mut dyn FnMut(u64, usize) -> Fetched,
    ) -> Result<(), String> {
        if self.pages.len() >= MAX_PAGES {
            self.pages.clear();
        }
        let mut count = 1;
        while count < PAGES_PER_FETCH {
            let next = page.saturating_add(count * PAGE);
            if next >= wanted_end || next < page || self.pages.contains_key(&next) {
                break;
            }
            count += 1;
        }
        self.stats.fetches += 1;
        let bytes = fetch(page, (count * PAGE) as usize)?;
        let whole = (bytes.len() as u64 / PAGE).min(count);
        for i in 0..whole {
            let start = (i * PAGE) as usize;
            let kept = bytes[start..start + PAGE as usize]
                .to_vec()
                .into_boxed_slice();
            self.pages.insert(page + i * PAGE, Some(kept));
        }
        if whole == 0 {
            if count > 1 {
                self.stats.fetches += 1;
                let first = fetch(page, PAGE as usize)?;
                if first.len() >= PAGE as usize {
                    let kept = first[..PAGE as usize].to_vec().into_boxed_slice();
                    self.pages.insert(page, Some(kept));
                    return Ok(());
                }
            }
            self.stats.unreadable += 1;
            self.pages.insert(page, None);
        }
        Ok(())
    }
}
