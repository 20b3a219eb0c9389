//! The reads of one open session that the front doors page through, and their rules: which
//! params go together, the default page, what a row of the tree shows, where a watch starts.
//! A door translates its params into these inputs and the answers into its own form.

use std::ops::Range;
use std::path::PathBuf;

use crate::format::json::JsValue;
use crate::store::{
    ErrorKind, Leaf, RowPreviews, Session, StoreError, TreeFilter, TreePage, TreeWindow,
};

use super::context::{LeafChoice, leaf};

use super::cursor::{cursor_at, cursor_position};
use super::error::OpError;

/// Entries in a page of `getEntries` when the request names no limit.
pub(crate) const DEFAULT_ENTRIES_PAGE: usize = 1000;

/// Which rows of the tree: a page by `offset`, or the page `around` an entry.
#[derive(Debug, Clone, Default)]
pub(crate) struct TreeInput {
    pub(crate) filter: Option<TreeFilter>,
    pub(crate) offset: Option<usize>,
    pub(crate) around: Option<String>,
    pub(crate) limit: Option<usize>,
}

/// A page of the tree with what its rows show.
pub(crate) struct TreeView<'s> {
    session: &'s Session,
    pub(crate) leaf: &'s Leaf,
    pub(crate) page: TreePage,
    previews: RowPreviews,
    on_path: Vec<bool>,
}

/// One row of a [`TreeView`]: the entry's place and what a person sees of it.
pub(crate) struct TreeViewRow<'s> {
    pub(crate) id: Option<&'s str>,
    pub(crate) parent_id: Option<&'s str>,
    pub(crate) kind: Option<&'s str>,
    pub(crate) depth: u32,
    pub(crate) label: Option<JsValue>,
    pub(crate) preview: &'s str,
    pub(crate) on_path: bool,
}

/// Refuses what names two pages (a door may check it before it looks for the session).
pub(crate) fn check_tree_input(input: &TreeInput) -> Result<(), OpError> {
    if input.around.is_some() && input.offset.is_some() {
        return Err(OpError::InvalidParams(
            "'offset' and 'around' name a page each: give one".into(),
        ));
    }
    Ok(())
}

/// pi's `/tree` selector as pages: the rows `input` asks for, with labels, previews and the
/// leaf's path marked.
pub(crate) fn tree(session: &Session, input: TreeInput) -> Result<TreeView<'_>, OpError> {
    check_tree_input(&input)?;
    let window = match (&input.around, input.offset) {
        (Some(id), _) => TreeWindow::Around {
            id,
            limit: input.limit,
        },
        (None, offset) => TreeWindow::Range {
            offset: offset.unwrap_or(0),
            limit: input.limit,
        },
    };
    let page = session.tree_page(input.filter, window)?;
    let positions: Vec<u32> = page.rows.iter().map(|r| r.position).collect();
    let previews = session.row_previews(&positions)?;
    Ok(TreeView {
        session,
        leaf: session.leaf(),
        page,
        previews,
        on_path: session.on_leaf_path(),
    })
}

impl<'s> TreeView<'s> {
    pub(crate) fn rows(&self) -> impl Iterator<Item = TreeViewRow<'_>> {
        self.page.rows.iter().map(|row| {
            let record = self.session.record(row.position);
            TreeViewRow {
                id: record.id(),
                parent_id: record.parent().into_id(),
                kind: record.type_name(),
                depth: row.depth,
                label: record.id().and_then(|id| self.session.label(id)),
                preview: self.previews.get(row.position),
                on_path: self.on_path[row.position as usize],
            }
        })
    }
}

/// Which entries, in file order: from `offset`, or from the point a cursor (`since`) names.
#[derive(Debug, Clone, Default)]
pub(crate) struct EntriesInput {
    pub(crate) offset: usize,
    pub(crate) since: Option<String>,
    pub(crate) limit: Option<usize>,
}

/// A page of entries by position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EntriesRange {
    pub(crate) positions: Range<usize>,
    /// Where the next page starts; `None` at the end.
    pub(crate) next_offset: Option<usize>,
    pub(crate) total: usize,
    /// The point after the page, to resume from.
    pub(crate) cursor: String,
}

/// `getEntries`' page.
pub(crate) fn entries(session: &Session, input: &EntriesInput) -> Result<EntriesRange, OpError> {
    let total = session.len();
    let start = match &input.since {
        Some(_) if input.offset != 0 => {
            return Err(OpError::InvalidParams(
                "'since': give either 'since' or 'offset', not both".into(),
            ));
        }
        Some(since) => cursor_position(session, since, "since")?,
        None => input.offset.min(total),
    };
    let limit = input.limit.unwrap_or(DEFAULT_ENTRIES_PAGE);
    if limit == 0 {
        // A page of nothing would name itself as the next page: a client following it would
        // never end.
        return Err(OpError::InvalidParams("'limit': must be at least 1".into()));
    }
    let end = start.saturating_add(limit).min(total);
    Ok(EntriesRange {
        positions: start..end,
        next_offset: (end < total).then_some(end),
        total,
        cursor: cursor_at(session, end),
    })
}

/// Where following session `id` starts: its file, and the point after what it holds now. A
/// session in memory has no file to follow.
pub(crate) fn watch_point(session: &Session, id: &str) -> Result<(PathBuf, String), OpError> {
    let cursor = cursor_at(session, session.len());
    match session.path() {
        Some(path) => Ok((path.to_path_buf(), cursor)),
        None => Err(OpError::store(
            ErrorKind::InvalidArgument,
            format!("session {id:?} is in memory: there is no file to watch"),
        )),
    }
}

/// The position of entry `id`, or `entry_not_found`.
pub(crate) fn entry_position(session: &Session, id: &str) -> Result<u32, OpError> {
    session
        .position(id)
        .ok_or_else(|| StoreError::entry_not_found(id).into())
}

/// The positions of entry `id`'s children, in file order.
pub(crate) fn children(session: &Session, id: &str) -> Result<Vec<u32>, OpError> {
    entry_position(session, id)?;
    Ok(session.children(id))
}

/// The positions of the branch from the root to the leaf `choice` names, as the session's
/// profile walks it.
pub(crate) fn branch_entries(session: &Session, choice: &LeafChoice) -> Result<Vec<u32>, OpError> {
    let leaf = leaf(session, choice)?;
    Ok(session.profile_path(&leaf)?.positions)
}
