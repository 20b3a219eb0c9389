//! The page's skeleton: what the viewer needs before any entry to draw the tree and find its
//! way — `{format, file, header, name, leaf, selected, count, ids, parents, rows, kinds,
//! classes, previews, labels, first}`. Positions index `ids`, `parents`, `kinds` and
//! `previews`; `rows` is the tree, `[position, indent, ...]` in pre-order; `kinds` index
//! `classes` (the style class of each entry: `role-user`, `type-compaction`, ...); `first`
//! lists the positions the first chunk holds. Written in pieces, never held whole.

use std::io::Write;

use crate::format::entry::Kind;
use crate::format::json;
use crate::store::row_indents;
use crate::store::{Session, StoreResult};

use super::output::write_error;

/// Writes the skeleton of `session` opening at `selected`, whose first chunk holds `first`.
pub(crate) fn write(
    session: &Session,
    selected: Option<u32>,
    first: &[u32],
    out: &mut dyn Write,
) -> StoreResult<()> {
    let mut text = Pieces::new(out);
    text.push_str("{\"format\":2,\"file\":");
    let file = session
        .path()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    push_opt_string(&mut text, file.as_deref());
    text.push_str(",\"header\":");
    session.reported_header().write_compact(&mut text.buffer);
    text.push_str(",\"name\":");
    push_opt_string(&mut text, session.session_name().as_deref());
    let leaf = session.leaf_path(session.leaf()).positions.last().copied();
    text.push_str(",\"leaf\":");
    push_opt_position(&mut text, leaf);
    text.push_str(",\"selected\":");
    push_opt_position(&mut text, selected);
    let n = session.len() as u32;
    text.push_str(&format!(",\"count\":{n},\"ids\":["));
    for position in 0..n {
        text.comma(position);
        push_opt_string(&mut text, session.record(position).id());
        text.flush_full()?;
    }
    text.push_str("],\"parents\":[");
    for position in 0..n {
        text.comma(position);
        push_opt_position(&mut text, session.parent_position(position));
        text.flush_full()?;
    }
    text.push_str("],\"rows\":[");
    let rows = session.tree_rows();
    let indents = row_indents(&rows);
    for (i, (row, indent)) in rows.iter().zip(indents).enumerate() {
        text.comma(i as u32);
        text.push_str(&format!("{},{indent}", row.position));
        text.flush_full()?;
    }
    drop(rows);
    let facts = session.tree_facts()?;
    // The style class of each entry: its type, or a message's role (the preview's prefix).
    let mut classes: Vec<String> = Vec::new();
    text.push_str("],\"kinds\":[");
    for position in 0..n {
        text.comma(position);
        let record = session.record(position);
        let class = match record.kind() {
            Kind::Message => {
                let preview = facts.preview(position);
                let role = preview.split_once(": ").map_or("", |(role, _)| role);
                format!("role-{role}")
            }
            _ => format!("type-{}", record.type_name().unwrap_or("other")),
        };
        let class = css_class(&class);
        let index = match classes.iter().position(|c| *c == class) {
            Some(index) => index,
            None => {
                classes.push(class);
                classes.len() - 1
            }
        };
        text.push_str(&index.to_string());
        text.flush_full()?;
    }
    text.push_str("],\"classes\":[");
    for (i, class) in classes.iter().enumerate() {
        text.comma(i as u32);
        json::write_string(class, &mut text.buffer);
    }
    text.push_str("],\"previews\":[");
    for position in 0..n {
        text.comma(position);
        json::write_string(facts.preview(position), &mut text.buffer);
        text.flush_full()?;
    }
    text.push_str("],\"labels\":{");
    for (i, (target, label, _)) in session.labels().enumerate() {
        text.comma(i as u32);
        json::write_string(target, &mut text.buffer);
        text.push_str(":");
        label.write_compact(&mut text.buffer);
        text.flush_full()?;
    }
    text.push_str("},\"first\":[");
    for (i, position) in first.iter().enumerate() {
        text.comma(i as u32);
        text.push_str(&position.to_string());
    }
    text.push_str("]}");
    text.flush()
}

/// A class name from session text: letters, digits, `-` and `_` kept, anything else `_`
/// (a role or type is the session's own text and lands in a `class` attribute).
fn css_class(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Text built in a buffer and written out whenever it grows past a piece.
struct Pieces<'a> {
    buffer: String,
    out: &'a mut dyn Write,
}

impl<'a> Pieces<'a> {
    const PIECE: usize = 64 * 1024;

    fn new(out: &'a mut dyn Write) -> Self {
        Pieces {
            buffer: String::with_capacity(2 * Self::PIECE),
            out,
        }
    }

    fn push_str(&mut self, text: &str) {
        self.buffer.push_str(text);
    }

    /// A `,` before every item but the first.
    fn comma(&mut self, item: u32) {
        if item > 0 {
            self.buffer.push(',');
        }
    }

    fn flush_full(&mut self) -> StoreResult<()> {
        if self.buffer.len() >= Self::PIECE {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> StoreResult<()> {
        self.out
            .write_all(self.buffer.as_bytes())
            .map_err(write_error)?;
        self.buffer.clear();
        Ok(())
    }
}

fn push_opt_string(text: &mut Pieces, value: Option<&str>) {
    match value {
        Some(value) => json::write_string(value, &mut text.buffer),
        None => text.push_str("null"),
    }
}

fn push_opt_position(text: &mut Pieces, value: Option<u32>) {
    match value {
        Some(value) => text.push_str(&value.to_string()),
        None => text.push_str("null"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_session_text_never_leaves_a_class_name() {
        assert_eq!(css_class("role-\"><script>"), "role-___script_");
        assert_eq!(css_class("type-branch_summary"), "type-branch_summary");
    }
}
