//! pi 0.82.1's `/tree` selector filters (`TreeList.applyFilter` in its
//! `modes/interactive/components/tree-selector.js`), so a front-end can show what pi's
//! selector shows without receiving the rows it hides. The selector's text search and folding
//! are the front-end's own business and are not here.

use crate::format::entry::{Kind, Payload, Role};
use crate::format::json::JsValue;

use super::error::StoreResult;
use super::session::Session;
use super::tree_facts::TreeFacts;

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

impl Session {
    /// Whether pi's selector shows the entry at `position` in `filter` mode, the session's
    /// leaf being the current one (`facts`: the session's, see [`Session::tree_facts`]).
    pub fn shown_by_tree_filter(
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

    /// `hasTextContent(message.content) || isErrorOrAborted`, on the exact path (the lean
    /// one is [`super::preview_lean`]).
    pub(super) fn assistant_is_shown(&self, position: u32) -> StoreResult<bool> {
        let [message] = self.entry_fields(position, ["message"])?;
        let Some(message) = message else {
            return Ok(false);
        };
        let error_or_aborted = match message.get("stopReason") {
            Some(JsValue::String(reason)) => {
                !reason.is_empty() && !matches!(reason.escaped(), "stop" | "toolUse")
            }
            Some(reason) => reason.is_truthy(),
            None => false,
        };
        Ok(error_or_aborted || message.get("content").is_some_and(has_text))
    }
}

/// pi's `hasTextContent`: a non-blank string, or an array with a non-blank `text` block.
fn has_text(content: &JsValue) -> bool {
    let non_blank = |text: &JsValue| match text {
        JsValue::String(s) => !s.trim_js().is_empty(),
        // pi calls `text.trim()`, which only strings have; count anything else as no text.
        _ => false,
    };
    match content {
        JsValue::String(_) => non_blank(content),
        JsValue::Array(blocks) => blocks.iter().any(|block| {
            matches!(block.get("type"), Some(JsValue::String(t)) if t.escaped() == "text")
                && block.get("text").is_some_and(non_blank)
        }),
        _ => false,
    }
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
    pub rows: Vec<super::tree::TreeRow>,
    /// Rows in the whole (filtered) pre-order.
    pub total: usize,
    /// The index of the first row of `rows` in the whole.
    pub offset: usize,
    /// With [`TreeWindow::Around`]: the index of the row the window is placed on (`None`
    /// when nothing is shown).
    pub anchor: Option<Option<usize>>,
}

impl Session {
    /// The rows of the tree pre-order (as [`Session::tree_rows`]) that `filter` shows (all
    /// without one), cut to `window`. `entry_not_found` for an unknown `Around` id.
    pub fn tree_page(
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
    fn nearest_shown(&self, rows: &[super::tree::TreeRow], id: &str) -> StoreResult<Option<usize>> {
        let Some(start) = self.position(id) else {
            return Err(super::error::StoreError::entry_not_found(id));
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
}
