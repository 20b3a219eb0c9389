//! The tree for a person: one line per entry, indented where the conversation branches, with a
//! short preview, labels, and the current leaf marked.

use std::fmt::Write;

use crate::store::{Session, StoreResult};

pub fn render_tree(session: &Session) -> StoreResult<String> {
    let rows = session.tree_rows();
    let leaf = session.leaf().id().and_then(|id| session.position(id));
    let on_path: std::collections::HashSet<u32> = session
        .leaf_path(session.leaf())
        .positions
        .into_iter()
        .collect();
    // Indent only where a parent has several children, so long linear chains stay flat.
    let mut indent_of = vec![0usize; session.len()];
    let mut child_count = vec![0u32; session.len()];
    for position in 0..session.len() as u32 {
        if let Some(p) = session.parent_position(position) {
            child_count[p as usize] += 1;
        }
    }
    let mut out = String::new();
    for row in &rows {
        let position = row.position;
        let parent = session.parent_position(position);
        let indent = match parent {
            Some(p) if child_count[p as usize] > 1 => indent_of[p as usize] + 1,
            Some(p) => indent_of[p as usize],
            None => 0,
        };
        indent_of[position as usize] = indent;
        let record = session.record(position);
        let marker = if Some(position) == leaf {
            "*"
        } else if on_path.contains(&position) {
            "|"
        } else {
            " "
        };
        let id = record.id().unwrap_or("?");
        let what = session.preview(position)?;
        let _ = write!(out, "{marker} {}{id} {what}", "  ".repeat(indent));
        if let Some(label) = record.id().and_then(|id| session.label(id)) {
            let _ = write!(out, "  [{}]", label.as_str().unwrap_or_default());
        }
        if Some(position) == leaf {
            out.push_str("  <- leaf");
        }
        out.push('\n');
    }
    if rows.is_empty() {
        out.push_str("(no entries)\n");
    }
    Ok(out)
}
