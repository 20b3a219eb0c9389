//! The tree for a person: one line per entry, indented where the conversation branches, with a
//! short preview, labels, and the current leaf marked.

use std::fmt::Write;

use crate::format::entry::Kind;
use crate::format::json::JsValue;
use crate::store::{Session, StoreResult};

const PREVIEW_CHARS: usize = 72;

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
        let what = describe(session, position)?;
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

fn describe(session: &Session, position: u32) -> StoreResult<String> {
    let record = session.record(position);
    let entry = session.entry_value(position)?;
    let text = |key: &str| entry.get(key).map(preview_of).unwrap_or_default();
    Ok(match record.kind() {
        Kind::Message => {
            let message = entry.get("message");
            let role = message
                .and_then(|m| m.get("role"))
                .and_then(JsValue::as_str)
                .unwrap_or_default()
                .into_owned();
            let body = match role.as_str() {
                "bashExecution" => message
                    .and_then(|m| m.get("command"))
                    .map(preview_of)
                    .unwrap_or_default(),
                _ => message
                    .and_then(|m| m.get("content"))
                    .map(preview_of)
                    .unwrap_or_default(),
            };
            format!("{role}: {}", shorten(&body))
        }
        Kind::Compaction => format!("compaction: {}", shorten(&text("summary"))),
        Kind::BranchSummary => format!("branch summary: {}", shorten(&text("summary"))),
        Kind::CustomMessage => format!(
            "custom message ({}): {}",
            text("customType"),
            shorten(&text("content"))
        ),
        Kind::Custom => format!("custom ({})", text("customType")),
        Kind::Label => format!("label {} -> {}", text("targetId"), text("label")),
        Kind::SessionInfo => format!("name: {}", text("name")),
        Kind::ModelChange => format!("model: {}/{}", text("provider"), text("modelId")),
        Kind::ThinkingLevelChange => format!("thinking: {}", text("thinkingLevel")),
        Kind::Leaf => format!(
            "leaf -> {}",
            entry.get("targetId").map(preview_of).unwrap_or_default()
        ),
        Kind::ActiveToolsChange => "active tools changed".to_string(),
        Kind::Session | Kind::Other => record.type_name().unwrap_or("(not an object)").to_string(),
    })
}

/// The text of a value for a preview: strings as they are, content blocks by their text.
fn preview_of(value: &JsValue) -> String {
    match value {
        JsValue::String(s) => s.to_string_lossy().into_owned(),
        JsValue::Array(blocks) => blocks
            .iter()
            .filter_map(
                |b| match b.get("type").and_then(JsValue::as_str).as_deref() {
                    Some("text") => b.get("text").map(preview_of),
                    Some("toolCall") => b.get("name").map(|n| format!("{}(...)", preview_of(n))),
                    Some("image") => Some("[image]".to_string()),
                    _ => None,
                },
            )
            .collect::<Vec<_>>()
            .join(" "),
        JsValue::Null => "null".into(),
        other => other.stringify(),
    }
}

fn shorten(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= PREVIEW_CHARS {
        format!("\"{flat}\"")
    } else {
        let cut: String = flat.chars().take(PREVIEW_CHARS - 1).collect();
        format!("\"{cut}…\"")
    }
}

/// A one-line preview of an entry, for tree rows and pickers.
pub fn entry_preview(session: &Session, position: u32) -> StoreResult<String> {
    describe(session, position)
}
