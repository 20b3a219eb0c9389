//! The tree as a reader sees it. Walks: paths to the root (pi-cli's full path, the harness's
//! truncated path), children, and the whole tree as flat rows; every walk stops at a cycle
//! instead of looping (pi loops forever there) and says so. pi 0.82.1's `/tree` selector
//! filters (`TreeList.applyFilter` in its `modes/interactive/components/tree-selector.js`), so
//! a front-end can show what pi's selector shows without receiving the rows it hides (its text
//! search and folding are the front-end's own business), and pages of the filtered rows. The
//! tree facts (previews and filter bits, held in [`super::tree_memo`]): read from beside the
//! persisted index, or computed.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use crate::format::entry::{Kind, Payload, Ref, Role};
use crate::format::json::JsonError;

use super::error::{ErrorKind, StoreError, StoreResult};
use super::index::Leaf;
use super::index_file;
#[cfg(test)]
use super::preview::assistant_shown_of_line;
use super::preview::{RowEntry, preview_of_line, row_facts_of_line};
use super::session::Session;
use super::tree_memo::{RowPreviews, TreeFacts, TreeRow, TreeShape};

/// Positions from the root (first) to the start of the walk (last).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walk {
    pub positions: Vec<u32>,
    /// The id at which the walk met itself again, if it did.
    pub cycle_at: Option<String>,
}

/// The selector's filter modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeFilter {
    /// pi's default view: settings and bookkeeping entries hidden.
    Default,
    /// The default view without tool results.
    NoTools,
    /// User messages only.
    UserOnly,
    /// Labeled entries only.
    LabeledOnly,
    /// Every entry, except what every mode hides.
    All,
}

/// Which rows of the (filtered) pre-order a reader wants.
#[derive(Debug, Clone, Copy)]
pub enum TreeWindow<'a> {
    /// Skip `offset` rows, then at most `limit` (all when `None`).
    Range { offset: usize, limit: Option<usize> },
    /// At most `limit` rows around an entry, as pi's selector scrolls to its cursor.
    Around { id: &'a str, limit: Option<usize> },
}

/// A page of the tree: its rows and where they are in the whole.
#[derive(Debug, Clone, PartialEq)]
pub struct TreePage {
    pub rows: Vec<TreeRow>,
    /// Rows in the whole (filtered) pre-order.
    pub total: usize,
    /// The index of the first row of `rows` in the whole.
    pub offset: usize,
    /// With [`TreeWindow::Around`]: the index of the row the window is placed on (`None`
    /// when nothing is shown).
    pub anchor: Option<Option<usize>>,
}

impl Session {
    // ---- walks and rows ----

    /// Where the SessionManager's path walk starts for the current leaf: the leaf entry, or,
    /// when the leaf is undefined or names no entry, the last entry (pi's silent fallback).
    fn walk_start(&self, leaf: &Leaf) -> Option<u32> {
        match leaf {
            Leaf::Null => None,
            Leaf::Id(id) => self.index.get(id).or_else(|| self.last_position()),
            Leaf::Undefined => self.last_position(),
        }
    }

    fn last_position(&self) -> Option<u32> {
        self.index.len().checked_sub(1).map(|p| p as u32)
    }

    /// The parent of a record, if its `parentId` is a non-empty string naming an entry.
    pub(crate) fn parent_position(&self, position: u32) -> Option<u32> {
        self.index.parent_position(position)
    }

    /// The full path from the root to `start` (the SessionManager's walk).
    pub(crate) fn walk_from(&self, start: Option<u32>) -> Walk {
        // A step to an earlier entry can never close a cycle, so only the positions left by a
        // step to the same or a later one are remembered (a session written in order has
        // none). When one repeats there is a cycle, and the walk is redone remembering every
        // position, so the cycle is reported where it first closes.
        let mut walk = Walk::default();
        let mut left_forward = std::collections::HashSet::new();
        let mut current = start;
        while let Some(position) = current {
            walk.positions.push(position);
            current = self.parent_position(position);
            if current.is_some_and(|next| next >= position) && !left_forward.insert(position) {
                return self.walk_remembering_every_step(start);
            }
        }
        walk.positions.reverse();
        walk
    }

    fn walk_remembering_every_step(&self, start: Option<u32>) -> Walk {
        let mut walk = Walk::default();
        let mut seen = std::collections::HashSet::new();
        let mut current = start;
        while let Some(position) = current {
            if !seen.insert(position) {
                walk.cycle_at = self.index.record(position).id().map(str::to_string);
                break;
            }
            walk.positions.push(position);
            current = self.parent_position(position);
        }
        walk.positions.reverse();
        walk
    }

    /// The SessionManager's `buildSessionPath` for `leaf`.
    pub fn leaf_path(&self, leaf: &Leaf) -> Walk {
        self.walk_from(self.walk_start(leaf))
    }

    /// `getBranch(id)`: the full path to `id` (empty for an unknown id).
    pub(crate) fn branch_path(&self, id: &str) -> Walk {
        match self.index.get(id) {
            Some(position) => self.walk_from(Some(position)),
            None => Walk::default(),
        }
    }

    /// The harness's `getPathToRootOrCompaction`: the path to `leaf`, cut at the newest
    /// `retainedTail` compaction or at the `firstKeptEntryId` of the last compaction passed.
    pub(crate) fn checkpoint_path(&self, leaf: &Leaf) -> StoreResult<Walk> {
        let id = match leaf {
            Leaf::Null => return Ok(Walk::default()),
            Leaf::Id(id) => id,
            Leaf::Undefined => {
                return Err(StoreError::new(
                    ErrorKind::InvalidSession,
                    "Entry undefined not found",
                ));
            }
        };
        let Some(mut position) = self.index.get(id) else {
            return Err(StoreError::entry_not_found(id));
        };
        let mut walk = Walk::default();
        let mut seen = std::collections::HashSet::new();
        let mut stop_at: Option<&str> = None;
        loop {
            if !seen.insert(position) {
                walk.cycle_at = self.index.record(position).id().map(str::to_string);
                break;
            }
            walk.positions.push(position);
            let record = self.index.record(position);
            if stop_at.is_some() && record.id() == stop_at {
                break;
            }
            if let Payload::Compaction {
                first_kept,
                retained_tail,
                ..
            } = record.payload()
            {
                if retained_tail {
                    break;
                }
                stop_at = first_kept;
            }
            let parent = match record.parent() {
                Ref::Id(p) if !p.is_empty() => p,
                _ => break,
            };
            match self.index.get(parent) {
                Some(p) => position = p,
                None => {
                    return Err(StoreError::new(
                        ErrorKind::InvalidSession,
                        format!("Entry {parent} not found"),
                    ));
                }
            }
        }
        walk.positions.reverse();
        Ok(walk)
    }

    /// The path context building and navigation use for this profile.
    pub(crate) fn profile_path(&self, leaf: &Leaf) -> StoreResult<Walk> {
        match self.options.profile.is_session_manager() {
            true => Ok(self.leaf_path(leaf)),
            false => self.checkpoint_path(leaf),
        }
    }

    /// Entries whose parent is `id`, in file order (`getChildren`).
    pub(crate) fn children(&self, id: &str) -> Vec<u32> {
        (0..self.index.len() as u32)
            .filter(|&p| self.index.record(p).parent().id() == Some(id))
            .collect()
    }

    /// The whole tree, depth-first in pre-order. Roots (entries whose `parentId` is null or
    /// their own id, and orphans) come in file order; children are sorted by timestamp for
    /// pi-cli (stable, as `getTree` sorts them) and kept in file order for the harness.
    ///
    /// As in pi, nodes are found by id: every entry sharing an id places the node of the last
    /// of them, which then appears once per such entry.
    pub fn tree_rows(&self) -> Vec<TreeRow> {
        self.tree_shape().rows.clone()
    }

    /// Which entries are on the path from the root to the current leaf (the SessionManager's
    /// walk, as [`Session::leaf_path`] takes it).
    pub(crate) fn on_leaf_path(&self) -> Vec<bool> {
        let mut on_path = vec![false; self.index.len()];
        self.find_ancestor(self.walk_start(&self.leaf), |position| {
            on_path[position as usize] = true;
            false
        });
        on_path
    }

    /// The first of `start` and its ancestors, nearest first, for which `found` is true, as
    /// [`Session::walk_from`] goes (it stops where the walk meets itself again).
    pub(super) fn find_ancestor(
        &self,
        start: Option<u32>,
        mut found: impl FnMut(u32) -> bool,
    ) -> Option<u32> {
        let shape = self.tree_shape();
        let mut seen = vec![false; self.index.len()];
        let mut current = start;
        while let Some(position) = current {
            if std::mem::replace(&mut seen[position as usize], true) {
                return None;
            }
            if found(position) {
                return Some(position);
            }
            current = shape.parents[position as usize];
        }
        None
    }

    /// The tree's shape for the entries there are now: computed once, then kept until an
    /// entry is added (ids name nodes, so any new entry may move others).
    fn tree_shape(&self) -> Arc<TreeShape> {
        let mut memo = self.shape_memo.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(shape) = memo
            .as_ref()
            .filter(|s| s.parents.len() == self.index.len())
        {
            return shape.clone();
        }
        let shape = Arc::new(TreeShape {
            rows: self.compute_tree_rows(),
            parents: (0..self.index.len() as u32)
                .map(|p| self.parent_position(p))
                .collect(),
        });
        *memo = Some(shape.clone());
        shape
    }

    fn compute_tree_rows(&self) -> Vec<TreeRow> {
        let n = self.index.len();
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        // Without repeated ids every entry is its own node, and most parents are known.
        let ids_repeat = self.index.ids_repeat();
        for entry in 0..n as u32 {
            let record = self.index.record(entry);
            let position = match record.id() {
                Some(id) if ids_repeat => self.index.get(id).unwrap_or(entry),
                _ => entry,
            };
            let parent = match record.parent() {
                Ref::Null => None,
                Ref::Missing if !self.options.profile.is_session_manager() => None,
                Ref::Id(p) if record.id() == Some(p) => None,
                Ref::Id(p) => self.index.known_parent(entry).or_else(|| self.index.get(p)),
                Ref::Missing | Ref::Invalid => None,
            };
            match parent {
                Some(p) => children[p as usize].push(position),
                None => roots.push(position),
            }
        }
        if self.options.profile.is_session_manager() {
            for list in &mut children {
                // NaN compares as equal, as JavaScript's sort treats a NaN comparison.
                list.sort_by(|&a, &b| {
                    let (x, y) = (
                        self.index.record(a).timestamp_millis(),
                        self.index.record(b).timestamp_millis(),
                    );
                    x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
                });
            }
        }
        let mut rows = Vec::with_capacity(n);
        let mut stack: Vec<(u32, u32)> = roots.iter().rev().map(|&r| (r, 0)).collect();
        while let Some((position, depth)) = stack.pop() {
            // Shared nodes can make a loop that pi would follow forever: no path is longer
            // than the number of entries.
            if depth as usize > n {
                continue;
            }
            rows.push(TreeRow { position, depth });
            for &child in children[position as usize].iter().rev() {
                stack.push((child, depth + 1));
            }
        }
        rows
    }

    /// Whether an entry is a user message (the only entries `/fork` accepts).
    pub fn is_user_message(&self, position: u32) -> bool {
        let record = self.index.record(position);
        record.kind() == Kind::Message
            && matches!(
                record.payload(),
                Payload::Message {
                    role: Role::User,
                    ..
                }
            )
    }

    // ---- the selector's filters and pages ----

    /// Whether pi's selector shows the entry at `position` in `filter` mode, the session's
    /// leaf being the current one (`facts`: the session's, see [`Session::tree_facts`]).
    pub(crate) fn shown_by_tree_filter(
        &self,
        facts: &TreeFacts,
        position: u32,
        filter: TreeFilter,
    ) -> bool {
        let record = self.record(position);
        let role = match record.payload() {
            Payload::Message { role, .. } if record.kind() == Kind::Message => Some(role),
            _ => None,
        };
        let settings = matches!(
            record.kind(),
            Kind::Label
                | Kind::Custom
                | Kind::ModelChange
                | Kind::ThinkingLevelChange
                | Kind::SessionInfo
        );
        let passes = match filter {
            TreeFilter::UserOnly => role == Some(Role::User),
            TreeFilter::NoTools => !settings && role != Some(Role::ToolResult),
            TreeFilter::LabeledOnly => record.id().and_then(|id| self.label(id)).is_some(),
            TreeFilter::All => true,
            TreeFilter::Default => !settings,
        };
        if !passes {
            return false;
        }
        // Every mode hides an assistant message with no text (tool calls only) unless it ended
        // in an error or was aborted, or it is the current leaf.
        let is_leaf = record.id().is_some() && record.id() == self.leaf().id();
        if role == Some(Role::Assistant) && !is_leaf {
            return facts.assistant_shown(position);
        }
        true
    }

    /// The rows of the tree pre-order (as [`Session::tree_rows`]) that `filter` shows (all
    /// without one), cut to `window`. `entry_not_found` for an unknown `Around` id.
    pub(crate) fn tree_page(
        &self,
        filter: Option<TreeFilter>,
        window: TreeWindow<'_>,
    ) -> StoreResult<TreePage> {
        let mut rows = self.tree_rows();
        if let Some(filter) = filter {
            let facts = self.tree_facts()?;
            rows.retain(|row| self.shown_by_tree_filter(&facts, row.position, filter));
        }
        let total = rows.len();
        let (start, end, anchor) = match window {
            TreeWindow::Range { offset, limit } => {
                let start = offset.min(total);
                let end = limit.map_or(total, |l| start.saturating_add(l).min(total));
                (start, end, None)
            }
            TreeWindow::Around { id, limit } => {
                let Some(anchor) = self.nearest_shown(&rows, id)? else {
                    return Ok(TreePage {
                        rows: Vec::new(),
                        total,
                        offset: 0,
                        anchor: Some(None),
                    });
                };
                // pi's selector: the cursor in the middle, the window clamped to the ends.
                let limit = limit.unwrap_or(total).min(total);
                let start = anchor.saturating_sub(limit / 2).min(total - limit);
                (start, start + limit, Some(Some(anchor)))
            }
        };
        rows.truncate(end);
        rows.drain(..start);
        Ok(TreePage {
            rows,
            total,
            offset: start,
            anchor,
        })
    }

    /// pi's `findNearestVisibleIndex`: the row of `id`, else of its nearest ancestor that is
    /// shown, else the last row (`None` when no row is shown).
    fn nearest_shown(&self, rows: &[TreeRow], id: &str) -> StoreResult<Option<usize>> {
        let Some(start) = self.position(id) else {
            return Err(StoreError::entry_not_found(id));
        };
        if rows.is_empty() {
            return Ok(None);
        }
        // As pi's map from id to index: a node listed twice is found at its last row.
        let mut index_of = vec![usize::MAX; self.len()];
        for (i, row) in rows.iter().enumerate() {
            index_of[row.position as usize] = i;
        }
        if let Some(position) =
            self.find_ancestor(Some(start), |p| index_of[p as usize] != usize::MAX)
        {
            return Ok(Some(index_of[position as usize]));
        }
        Ok(Some(rows.len() - 1))
    }

    // ---- tree facts: previews and filter bits ----

    /// The previews of the entries at `positions`. The session's facts are used when they
    /// are in memory or filed, or computed (and kept) when `positions` are a good share of
    /// the session; a few rows of a session whose facts nobody asked for yet are read alone.
    pub(crate) fn row_previews(&self, positions: &[u32]) -> StoreResult<RowPreviews> {
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

    /// The facts of every entry (pi's tree preview, whether its selector shows an assistant
    /// message), computed now for what was neither in memory nor filed.
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
            let facts = index_file::tree_file::load(&persisted.place, persisted.generation)?;
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
            index_file::tree_file::save(
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

// Previews read from the session's own lines (the pure rules are in `preview`).
impl Session {
    /// [`row_facts_of_line`] of the entry at `position`.
    pub(super) fn row_facts(&self, position: u32) -> StoreResult<(String, bool)> {
        let text = self.line_text(position)?;
        row_facts_of_line(RowEntry::of_record(self.record(position)), &text)
            .map_err(|e| self.changed_on_disk(position, e))
    }

    /// pi's tree preview of the entry at `position`, read from its line.
    pub fn preview(&self, position: u32) -> StoreResult<String> {
        let text = self.line_text(position)?;
        preview_of_line(RowEntry::of_record(self.record(position)), &text)
            .map_err(|e| self.changed_on_disk(position, e))
    }

    /// [`assistant_shown_of_line`] of the entry at `position`.
    #[cfg(test)]
    pub(super) fn assistant_is_shown(&self, position: u32) -> StoreResult<bool> {
        let text = self.line_text(position)?;
        assistant_shown_of_line(&text).map_err(|e| self.changed_on_disk(position, e))
    }

    /// A line that parsed when it was indexed and no longer does.
    fn changed_on_disk(&self, position: u32, e: JsonError) -> StoreError {
        let line = self.record(position).line();
        StoreError::at_line(
            ErrorKind::Io,
            line,
            format!("line {line} changed on disk: {e}"),
        )
    }
}
