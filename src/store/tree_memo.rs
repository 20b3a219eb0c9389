//! What a session keeps of its tree between requests, while no entry is added: the tree's
//! shape (rows and parents) and every entry's tree facts. The facts are what tree rows show of
//! an entry: its preview, and for an assistant message whether pi's `/tree` selector shows it
//! (when it is not the leaf). They are computed on the first request that needs them, never
//! when a session is opened; kept compactly (one text arena, an end offset and a bit per
//! entry); filed beside the persisted index under its generation, as stats are, and extended
//! with only the entries added since. Computing them is the tree reader's job
//! ([`super::tree`]); this module only holds them, so the session can keep them.

use std::collections::HashMap;
use std::sync::Arc;

use super::error::{ErrorKind, StoreError, StoreResult};

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
    /// Entries covered.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// No entry covered.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// pi's tree preview of the entry at `position`.
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

    pub(super) fn push(&mut self, preview: &str, shown: bool) -> StoreResult<()> {
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

    pub(super) fn extend(&mut self, more: &TreeFacts) -> StoreResult<()> {
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

/// What the tree is made of, for the entries a session has at one time.
#[derive(Debug)]
pub struct TreeShape {
    /// Every row, depth-first in pre-order.
    pub(super) rows: Vec<TreeRow>,
    /// Each entry's `Session::parent_position`.
    pub(super) parents: Vec<Option<u32>>,
}

/// One row of the flattened tree, in depth-first pre-order.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeRow {
    /// The entry's position in the file.
    pub position: u32,
    /// Its depth in the tree (roots at 0).
    pub depth: u32,
}
