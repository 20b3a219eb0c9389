//! What tree rows show of every entry: its preview, and for an assistant message whether pi's
//! `/tree` selector shows it (when it is not the leaf). Computed on the first request that
//! needs them, never when a session is opened; kept compactly (one text arena, an end offset
//! and a bit per entry); filed beside the persisted index under its generation, as stats are,
//! and extended with only the entries added since.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use super::error::{ErrorKind, StoreError, StoreResult};
use super::index_file;
use super::session::Session;

/// The previews and filter bits of entries `0..len()`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeFacts {
    /// Every preview, one after another.
    text: String,
    /// Where each entry's preview ends in `text`.
    ends: Vec<u32>,
    /// One bit per entry: an assistant message pi's selector shows.
    shown: Vec<u64>,
}

impl TreeFacts {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn preview(&self, position: u32) -> &str {
        let i = position as usize;
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p] as usize);
        &self.text[start..self.ends[i] as usize]
    }

    /// An assistant message that pi's selector shows when it is not the leaf (text, an error
    /// or an abort); `false` for every other entry.
    pub fn assistant_shown(&self, position: u32) -> bool {
        self.shown[position as usize / 64] & (1 << (position % 64)) != 0
    }

    #[cfg(test)]
    pub(crate) fn from_rows(rows: &[(String, bool)]) -> TreeFacts {
        let mut facts = TreeFacts::default();
        for (preview, shown) in rows {
            facts.push(preview, *shown).unwrap();
        }
        facts
    }

    fn push(&mut self, preview: &str, shown: bool) -> StoreResult<()> {
        let i = self.len();
        self.text.push_str(preview);
        let end = u32::try_from(self.text.len()).map_err(|_| {
            StoreError::new(ErrorKind::Io, "the previews of this session exceed 4 GiB")
        })?;
        self.ends.push(end);
        if i.is_multiple_of(64) {
            self.shown.push(0);
        }
        if shown {
            self.shown[i / 64] |= 1 << (i % 64);
        }
        Ok(())
    }

    fn extend(&mut self, more: &TreeFacts) -> StoreResult<()> {
        for i in 0..more.len() as u32 {
            self.push(more.preview(i), more.assistant_shown(i))?;
        }
        Ok(())
    }

    /// The first `len` entries as the file keeps them: the arena, each preview's length in
    /// bytes, the bits (padding bits clear).
    pub(super) fn prefix_parts(&self, len: usize) -> (&str, Vec<u32>, Vec<u64>) {
        let len = len.min(self.len());
        let text_end = len.checked_sub(1).map_or(0, |p| self.ends[p] as usize);
        let lengths = (0..len as u32)
            .map(|i| self.preview(i).len() as u32)
            .collect();
        let mut shown = self.shown[..len.div_ceil(64)].to_vec();
        if let Some(last) = shown.last_mut()
            && !len.is_multiple_of(64)
        {
            *last &= (1 << (len % 64)) - 1;
        }
        (&self.text[..text_end], lengths, shown)
    }

    /// The facts a file kept, when they are consistent: lengths adding up to the arena,
    /// each cut on a character boundary, a bit word per 64 entries.
    pub(super) fn from_parts(text: String, lengths: &[u64], shown: Vec<u64>) -> Option<Self> {
        if shown.len() != lengths.len().div_ceil(64) {
            return None;
        }
        let mut ends = Vec::with_capacity(lengths.len());
        let mut end = 0u64;
        for &length in lengths {
            end = end.checked_add(length)?;
            let at = usize::try_from(end).ok()?;
            if at > text.len() || !text.is_char_boundary(at) {
                return None;
            }
            ends.push(u32::try_from(end).ok()?);
        }
        (end as usize == text.len()).then_some(TreeFacts { text, ends, shown })
    }
}

/// The previews of some rows: from the session's facts, or read for these rows alone.
pub enum RowPreviews {
    Facts(Arc<TreeFacts>),
    Read(HashMap<u32, String>),
}

impl RowPreviews {
    pub fn get(&self, position: u32) -> &str {
        match self {
            RowPreviews::Facts(facts) => facts.preview(position),
            RowPreviews::Read(read) => read.get(&position).map_or("", String::as_str),
        }
    }
}

impl Session {
    /// The previews of the entries at `positions`. The session's facts are used when they
    /// are in memory or filed, or computed (and kept) when `positions` are a good share of
    /// the session; a few rows of a session whose facts nobody asked for yet are read alone.
    pub fn row_previews(&self, positions: &[u32]) -> StoreResult<RowPreviews> {
        let many = positions.len().saturating_mul(4) >= self.len();
        if let Some(facts) = self.known_tree_facts(many)? {
            return Ok(RowPreviews::Facts(facts));
        }
        let mut read = HashMap::with_capacity(positions.len());
        for &position in positions {
            read.insert(position, self.row_facts(position)?.0);
        }
        Ok(RowPreviews::Read(read))
    }

    /// The facts of every entry, computed now for what was neither in memory nor filed.
    pub fn tree_facts(&self) -> StoreResult<Arc<TreeFacts>> {
        Ok(self.known_tree_facts(true)?.unwrap_or_default())
    }

    /// The facts of every entry when this session holds them or they are filed (extended
    /// with the entries added since), else, with `compute`, computed now; `None` otherwise.
    /// What the persisted index covers is filed (again) when it was not yet.
    fn known_tree_facts(&self, compute: bool) -> StoreResult<Option<Arc<TreeFacts>>> {
        let mut memo = self.tree_memo.lock().unwrap_or_else(|e| e.into_inner());
        let path = || {
            self.path()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        };
        let held = memo.take().filter(|f| f.len() <= self.len());
        let filed = || {
            let persisted = self.persisted.as_ref()?;
            let facts = index_file::tree_facts::load(&persisted.place, persisted.generation)?;
            (facts.len() <= self.len()).then(|| {
                tracing::debug!(
                    "{}: tree previews of {} entries read from beside the index",
                    path(),
                    facts.len()
                );
                Arc::new(facts)
            })
        };
        let Some(mut facts) = held.or_else(filed).or_else(|| compute.then(Arc::default)) else {
            return Ok(None);
        };
        let known = facts.len();
        if let Some(persisted) = &self.persisted
            && facts.len() < persisted.records
        {
            let from = facts.len() as u32;
            let facts = Arc::make_mut(&mut facts);
            facts.extend(&self.compute_tree_facts(from..persisted.records as u32)?)?;
            index_file::tree_facts::save(
                &persisted.place,
                persisted.generation,
                facts,
                persisted.records,
            );
        }
        if facts.len() < self.len() {
            let from = facts.len() as u32;
            let facts = Arc::make_mut(&mut facts);
            facts.extend(&self.compute_tree_facts(from..self.len() as u32)?)?;
        }
        if facts.len() > known {
            tracing::debug!(
                "{}: tree previews of {} entries computed after {known} known",
                path(),
                facts.len() - known
            );
        }
        *memo = Some(facts.clone());
        Ok(Some(facts))
    }

    /// The facts of the entries in `range`, on every core (each reads its entries' lines).
    fn compute_tree_facts(&self, range: Range<u32>) -> StoreResult<TreeFacts> {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 8) as u32;
        let chunk = range.len().div_ceil(threads as usize).max(1) as u32;
        std::thread::scope(|scope| {
            let parts: Vec<_> = (range.start..range.end)
                .step_by(chunk as usize)
                .map(|start| {
                    let end = start.saturating_add(chunk).min(range.end);
                    scope.spawn(move || {
                        let mut facts = TreeFacts::default();
                        for position in start..end {
                            let (preview, shown) = self.row_facts(position)?;
                            facts.push(&preview, shown)?;
                        }
                        Ok::<_, StoreError>(facts)
                    })
                })
                .collect();
            let mut all = TreeFacts::default();
            for part in parts {
                let part = part
                    .join()
                    .map_err(|_| StoreError::new(ErrorKind::Io, "a preview thread panicked"))??;
                if all.is_empty() {
                    all = part;
                } else {
                    all.extend(&part)?;
                }
            }
            Ok(all)
        })
    }
}
