//! What a front-end's session picker asks of a listing: pi's `/resume` search and name filter
//! ([`super::search`]), then one page of the result, with the count before paging.

use std::collections::HashSet;
use std::path::PathBuf;

use crate::repo::listing::Listing;
use crate::repo::search::{NameFilter, SearchQuery, SearchSort, filter_and_sort};

/// The rows wanted: matching `query` (none: all), ordered by `sort`, offered by `names`, from
/// `offset`, at most `limit`.
#[derive(Clone, Debug, Default)]
pub struct ListSelection {
    /// The text rows must match (none: every row).
    pub query: Option<SearchQuery>,
    /// The order of the rows.
    pub sort: SearchSort,
    /// Which sessions are offered, by name.
    pub names: NameFilter,
    /// The rows skipped first.
    pub offset: usize,
    /// The most rows returned (none: all).
    pub limit: Option<usize>,
}

impl ListSelection {
    /// Whether this selection keeps every row in the listing's order.
    pub fn is_everything(&self) -> bool {
        self.query.is_none()
            && self.names == NameFilter::All
            && self.offset == 0
            && self.limit.is_none()
    }
}

impl Listing {
    /// Keeps the selected page of rows (and the pi 1.6 notes of those rows; the warnings about
    /// files passed over stay whole). Returns how many rows matched before paging.
    pub fn select(&mut self, selection: &ListSelection) -> usize {
        if selection.is_everything() {
            return self.sessions.len();
        }
        let matched = filter_and_sort(
            std::mem::take(&mut self.sessions),
            selection.query.as_ref(),
            selection.sort,
            selection.names,
        );
        let total = matched.len();
        self.sessions = matched
            .into_iter()
            .skip(selection.offset)
            .take(selection.limit.unwrap_or(usize::MAX))
            .collect();
        let shown: HashSet<&PathBuf> = self.sessions.iter().map(|s| &s.path).collect();
        self.pi16_notes.retain(|note| shown.contains(&note.path));
        total
    }
}

/// One page of `rows` (`offset`, at most `limit`), and how many there were in all.
pub fn page<T>(rows: Vec<T>, offset: usize, limit: Option<usize>) -> (Vec<T>, usize) {
    let total = rows.len();
    let rows = rows
        .into_iter()
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    (rows, total)
}
