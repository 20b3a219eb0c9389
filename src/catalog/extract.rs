//! What the store index keeps of one entry, read from the session as its profile reads it:
//! the facts filtering and figures need, and the entry's searchable text, folded.

use crate::format::entry::Kind;
use crate::format::json::JsValue;
use crate::store::{Session, SessionStats, StoreResult};

use super::fold::fold;

/// A tool result's text is indexed up to this many bytes (the rest of a long output is
/// rarely what is searched for, and would make the index as large as the store).
pub(crate) const TOOL_RESULT_TEXT_MAX: usize = 8 * 1024;

/// One entry as the index holds it.
#[derive(Debug, Clone, Default)]
pub(crate) struct EntryRow {
    pub(crate) position: u32,
    pub(crate) line: u64,
    pub(crate) entry_id: Option<String>,
    pub(crate) parent_id: Option<String>,
    /// The entry's `type` (`message`, `compaction`, ...; `None` for unknown kinds).
    pub(crate) kind: Option<&'static str>,
    /// `message.role` for messages.
    pub(crate) role: Option<String>,
    pub(crate) timestamp_ms: Option<f64>,
    pub(crate) provider: Option<String>,
    pub(crate) model: Option<String>,
    /// Tools called (assistant) or answered (tool result).
    pub(crate) tools: Vec<String>,
    /// What pi's `getSessionStats` counts for this entry.
    pub(crate) usage: SessionStats,
    /// Searchable text, folded.
    pub(crate) body: String,
    /// Thinking text, folded (searched only on request).
    pub(crate) thinking: String,
}

/// The row of the entry at `position`; its text only `with_text` (folding costs more than
/// the figures).
pub(crate) fn entry_row(
    session: &Session,
    position: u32,
    with_text: bool,
) -> StoreResult<EntryRow> {
    let record = session.record(position);
    let value = match with_text {
        false => match light_value(&session.line_text(position)?) {
            Some(value) => value,
            None => session.entry_value(position)?,
        },
        true => session.entry_value(position)?,
    };
    let pi16_usage = session.profile().rules().pi16_entries;
    // What getSessionStats counts, once the fields below are read: the value then moves into
    // the count instead of being copied (a tool result's whole output, for one).
    let counted = move |value: JsValue| -> StoreResult<SessionStats> {
        let mut usage = SessionStats::default();
        usage.count(record, move || Ok(value), pi16_usage)?;
        Ok(usage)
    };
    let millis = record.timestamp_millis();
    let mut row = EntryRow {
        position,
        line: record.line(),
        entry_id: record.id().map(str::to_string),
        parent_id: record.parent().into_id().map(str::to_string),
        kind: record.kind().type_name(),
        timestamp_ms: millis.is_finite().then_some(millis),
        ..EntryRow::default()
    };
    let mut body = String::new();
    let mut thinking = String::new();
    if !with_text {
        // The facts filters need, without the text.
        if record.kind() == Kind::Message {
            let message = value.get("message").unwrap_or(&JsValue::Null);
            let text = |key: &str| {
                message
                    .get(key)
                    .and_then(JsValue::as_str)
                    .map(|s| s.into_owned())
            };
            row.role = text("role");
            row.provider = text("provider");
            row.model = text("model");
            row.tools = text("toolName").into_iter().collect();
            let mut unused = (String::new(), String::new());
            content_text(
                message.get("content"),
                &mut unused.0,
                &mut unused.1,
                &mut row.tools,
            );
        }
        row.usage = counted(value)?;
        return Ok(row);
    }
    match record.kind() {
        Kind::Message => {
            let message = value.get("message").unwrap_or(&JsValue::Null);
            let text = |key: &str| {
                message
                    .get(key)
                    .and_then(JsValue::as_str)
                    .map(|s| s.into_owned())
            };
            row.role = text("role");
            row.provider = text("provider");
            row.model = text("model");
            let is_result = row.role.as_deref() == Some("toolResult");
            if let Some(name) = text("toolName") {
                add(&mut body, &name);
                row.tools.push(name);
            }
            if let Some(command) = text("command") {
                add(&mut body, &command);
            }
            let mut content = String::new();
            content_text(
                message.get("content"),
                &mut content,
                &mut thinking,
                &mut row.tools,
            );
            if let Some(output) = text("output") {
                add(&mut content, &output);
            }
            if is_result || row.role.as_deref() == Some("bashExecution") {
                cut(&mut content, TOOL_RESULT_TEXT_MAX);
            }
            add(&mut body, &content);
        }
        Kind::Compaction | Kind::BranchSummary => {
            if let Some(summary) = value.get("summary").and_then(JsValue::as_str) {
                add(&mut body, &summary);
            }
        }
        Kind::CustomMessage => {
            content_text(
                value.get("content"),
                &mut body,
                &mut thinking,
                &mut row.tools,
            );
        }
        Kind::Label => {
            if let Some(label) = value.get("label").and_then(JsValue::as_str) {
                add(&mut body, &label);
            }
        }
        Kind::SessionInfo => {
            if let Some(name) = value.get("name").and_then(JsValue::as_str) {
                add(&mut body, &name);
            }
        }
        _ => {}
    }
    row.usage = counted(value)?;
    row.body = fold(&body);
    row.thinking = fold(&thinking);
    Ok(row)
}

/// The text of a message's `content` (a string, or blocks): text, tool calls (name and
/// arguments), thinking apart.
fn content_text(
    content: Option<&JsValue>,
    body: &mut String,
    thinking: &mut String,
    tools: &mut Vec<String>,
) {
    let Some(content) = content else { return };
    if let Some(text) = content.as_str() {
        add(body, &text);
        return;
    }
    for block in content.as_array().unwrap_or_default() {
        let field = |key: &str| block.get(key).and_then(JsValue::as_str);
        match field("type").as_deref() {
            Some("text") => add(body, &field("text").unwrap_or_default()),
            Some("thinking") => add(thinking, &field("thinking").unwrap_or_default()),
            Some("toolCall") => {
                let name = field("name").unwrap_or_default().into_owned();
                add(body, &name);
                if let Some(arguments) = block.get("arguments") {
                    add(body, &arguments.stringify());
                }
                tools.push(name);
            }
            _ => {}
        }
    }
}

fn add(out: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(text);
}

fn cut(text: &mut String, max: usize) {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
}

/// What the figures and the filters read of an entry line (`message.role`, `.provider`,
/// `.model`, `.toolName`, `.usage`, the `type` and `name` of each `message.content` block, and
/// the entry's `usage`), as a value of the same shape, the rest skipped rather than copied:
/// most of a line is text the figures never read. The pieces kept are pi's own JSON text,
/// read by the same parser as the whole line would be. `None` when the line is not plain
/// enough for the short reading (a key twice, content blocks that are not objects, ...): the
/// caller then parses the whole line.
fn light_value(line: &str) -> Option<JsValue> {
    use serde::Deserialize;
    use serde_json::value::RawValue;
    #[derive(Deserialize)]
    struct Entry<'a> {
        #[serde(borrow)]
        message: Option<&'a RawValue>,
        #[serde(borrow)]
        usage: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Message<'a> {
        #[serde(borrow)]
        role: Option<&'a RawValue>,
        #[serde(borrow)]
        provider: Option<&'a RawValue>,
        #[serde(borrow)]
        model: Option<&'a RawValue>,
        #[serde(borrow)]
        tool_name: Option<&'a RawValue>,
        #[serde(borrow)]
        usage: Option<&'a RawValue>,
        #[serde(borrow)]
        content: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Block<'a> {
        #[serde(borrow, rename = "type")]
        kind: Option<&'a RawValue>,
        #[serde(borrow)]
        name: Option<&'a RawValue>,
    }
    fn member(out: &mut String, key: &str, value: Option<&RawValue>) {
        if let Some(value) = value {
            if !out.ends_with('{') {
                out.push(',');
            }
            out.push('"');
            out.push_str(key);
            out.push_str("\":");
            out.push_str(value.get());
        }
    }
    let entry: Entry<'_> = serde_json::from_str(line).ok()?;
    let mut out = String::from("{");
    if let Some(message) = entry.message {
        let text = message.get();
        if !text.starts_with('{') {
            member(&mut out, "message", Some(message));
        } else {
            let message: Message<'_> = serde_json::from_str(text).ok()?;
            // `message` is the first member written.
            out.push_str("\"message\":{");
            member(&mut out, "role", message.role);
            member(&mut out, "provider", message.provider);
            member(&mut out, "model", message.model);
            member(&mut out, "toolName", message.tool_name);
            member(&mut out, "usage", message.usage);
            if let Some(content) = message.content {
                if content.get().starts_with('[') {
                    let blocks: Vec<Block<'_>> = serde_json::from_str(content.get()).ok()?;
                    if !out.ends_with('{') {
                        out.push(',');
                    }
                    out.push_str("\"content\":[");
                    for (i, block) in blocks.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push('{');
                        member(&mut out, "type", block.kind);
                        member(&mut out, "name", block.name);
                        out.push('}');
                    }
                    out.push(']');
                } else if content.get().starts_with('"') {
                    // A string: no blocks, no tools (its text is not read here).
                    if !out.ends_with('{') {
                        out.push(',');
                    }
                    out.push_str("\"content\":\"\"");
                } else {
                    member(&mut out, "content", Some(content));
                }
            }
            out.push('}');
        }
    }
    member(&mut out, "usage", entry.usage);
    out.push('}');
    crate::format::json::parse(&out).ok()
}
