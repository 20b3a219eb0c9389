//! The tree for a person: one line per entry, indented where the conversation branches, with a
//! short preview, labels, and the current leaf marked.

use std::fmt::Write;

use crate::store::{Session, StoreResult, row_indents};

pub(crate) fn render_tree(session: &Session) -> StoreResult<String> {
    render_tree_from(session, 0)
}

/// The rows of [`render_tree`] for the entries at positions `from..` only (the entries a file
/// gained since it was shown), each as the whole tree shows it now.
pub(crate) fn render_tree_from(session: &Session, from: u32) -> StoreResult<String> {
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
