//! How pi's tree is laid out for a person: the indentation of each row, shared by the
//! command line's tree and the HTML export's.

use super::tree_memo::TreeRow;

/// How far each row of a pre-order listing is indented: a conversation continues in its last
/// child (the newest), which stays in its parent's column; earlier siblings (abandoned
/// branches) are indented one step, so the active line stays flat however often the user
/// branched. (Also the HTML export's tree.)
pub(crate) fn row_indents(rows: &[TreeRow]) -> Vec<usize> {
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
