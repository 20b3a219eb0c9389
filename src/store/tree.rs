//! Walking the tree: paths to the root (pi-cli's full path, the harness's truncated path),
//! children, and the whole tree as flat rows. Every walk stops at a cycle instead of looping
//! (pi loops forever there) and says so.

use std::sync::Arc;

use crate::format::entry::{Kind, Payload, Ref};

use super::error::{ErrorKind, StoreError, StoreResult};
use super::index::Leaf;
use super::session::Session;

/// Positions from the root (first) to the start of the walk (last).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Walk {
    pub positions: Vec<u32>,
    /// The id at which the walk met itself again, if it did.
    pub cycle_at: Option<String>,
}

/// What the tree is made of, for the entries a session has at one time.
#[derive(Debug)]
pub(super) struct TreeShape {
    /// Every row, depth-first in pre-order.
    rows: Vec<TreeRow>,
    /// Each entry's [`Session::parent_position`].
    parents: Vec<Option<u32>>,
}

/// One row of the flattened tree, in depth-first pre-order.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeRow {
    pub position: u32,
    pub depth: u32,
}

impl Session {
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
    pub fn parent_position(&self, position: u32) -> Option<u32> {
        self.index.parent_position(position)
    }

    /// The full path from the root to `start` (the SessionManager's walk).
    pub fn walk_from(&self, start: Option<u32>) -> Walk {
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
    pub fn branch_path(&self, id: &str) -> Walk {
        match self.index.get(id) {
            Some(position) => self.walk_from(Some(position)),
            None => Walk::default(),
        }
    }

    /// The harness's `getPathToRootOrCompaction`: the path to `leaf`, cut at the newest
    /// `retainedTail` compaction or at the `firstKeptEntryId` of the last compaction passed.
    pub fn checkpoint_path(&self, leaf: &Leaf) -> StoreResult<Walk> {
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
    pub fn profile_path(&self, leaf: &Leaf) -> StoreResult<Walk> {
        match self.options.profile.is_session_manager() {
            true => Ok(self.leaf_path(leaf)),
            false => self.checkpoint_path(leaf),
        }
    }

    /// Entries whose parent is `id`, in file order (`getChildren`).
    pub fn children(&self, id: &str) -> Vec<u32> {
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
    pub fn on_leaf_path(&self) -> Vec<bool> {
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
                    role: crate::format::entry::Role::User,
                    ..
                }
            )
    }
}
