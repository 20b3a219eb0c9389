//! The tree for a person: one line per entry, indented where the conversation branches, with a
//! short preview, labels, and the current leaf marked.

use std::fmt::Write;

use crate::store::{Session, StoreResult, TreeRow};

pub fn render_tree(session: &Session) -> StoreResult<String> {
    render_tree_from(session, 0)
}

/// The rows of [`render_tree`] for the entries at positions `from..` only (the entries a file
/// gained since it was shown), each as the whole tree shows it now.
pub fn render_tree_from(session: &Session, from: u32) -> StoreResult<String> {
    let rows = session.tree_rows();
    let leaf = session.leaf().id().and_then(|id| session.position(id));
    let on_path = session.on_leaf_path();
    let indents = row_indents(&rows);
    let facts = session.tree_facts()?;
    let mut out = String::new();
    for (row, &indent) in rows.iter().zip(&indents) {
        let position = row.position;
        if position < from {
            continue;
        }
        let record = session.record(position);
        let marker = if Some(position) == leaf {
            "*"
        } else if on_path[position as usize] {
            "|"
        } else {
            " "
        };
        let id = record.id().unwrap_or("?");
        let _ = write!(
            out,
            "{marker} {:width$}{id} {}",
            "",
            facts.preview(position),
            width = 2 * indent
        );
        if let Some(label) = record.id().and_then(|id| session.label(id)) {
            let _ = write!(out, "  [{}]", label.as_str().unwrap_or_default());
        }
        if Some(position) == leaf {
            out.push_str("  <- leaf");
        }
        out.push('\n');
    }
    if rows.is_empty() && from == 0 {
        out.push_str("(no entries)\n");
    }
    Ok(out)
}

/// How far each row of a pre-order listing is indented: a conversation continues in its last
/// child (the newest), which stays in its parent's column; earlier siblings (abandoned
/// branches) are indented one step, so the active line stays flat however often the user
/// branched. (Also the HTML export's tree.)
pub fn row_indents(rows: &[TreeRow]) -> Vec<usize> {
    let has_next_sibling = next_siblings(rows);
    let mut indent_at_depth: Vec<usize> = Vec::new();
    let mut indents = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let depth = row.depth as usize;
        let parent_indent = if depth == 0 {
            0
        } else {
            indent_at_depth.get(depth - 1).copied().unwrap_or(0)
        };
        let indent = parent_indent + usize::from(depth > 0 && has_next_sibling[i]);
        indent_at_depth.truncate(depth);
        indent_at_depth.push(indent);
        indents.push(indent);
    }
    indents
}

/// For each row of a pre-order listing, whether a later row is its sibling.
fn next_siblings(rows: &[TreeRow]) -> Vec<bool> {
    let mut has_next = vec![false; rows.len()];
    // The latest row seen at each depth whose next sibling is not known yet.
    let mut open: Vec<usize> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let depth = row.depth as usize;
        if depth < open.len() {
            has_next[open[depth]] = rows[open[depth]].depth == row.depth && depth > 0;
            open.truncate(depth);
        }
        open.resize(depth, usize::MAX);
        open.push(i);
    }
    has_next
}
