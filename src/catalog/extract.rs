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
    fn member(out: &mut String, key: &str, value: Option<&str>) {
        if let Some(value) = value {
            if !out.ends_with('{') {
                out.push(',');
            }
            out.push('"');
            out.push_str(key);
            out.push_str("\":");
            out.push_str(value);
        }
    }
    // A member set to null reads as one that is not there (serde's `Option`, as before).
    fn present(v: Option<&str>) -> Option<&str> {
        v.filter(|v| *v != "null")
    }
    const KEYS: [&str; 6] = ["role", "provider", "model", "toolName", "usage", "content"];
    let b = line.as_bytes();
    let mut entry: [Option<&str>; 2] = [None; 2];
    // The message, when it is an object: its members, and its content blocks' type and name.
    let mut fields: Option<[Option<&str>; 6]> = None;
    let mut blocks: Option<Vec<[Option<&str>; 2]>> = None;
    let end = skim::object(b, 0, &["message", "usage"], |slot, at| {
        let end = match (slot, b.get(at)) {
            (0, Some(b'{')) => {
                let mut message = [None; 6];
                let end = skim::object(b, at, &KEYS, |slot, at| {
                    let end = match (slot, b.get(at)) {
                        (5, Some(b'[')) => {
                            let mut list = Vec::new();
                            let end = skim::array(b, at, |at| {
                                if b.get(at) != Some(&b'{') {
                                    return None;
                                }
                                let mut block = [None; 2];
                                let end = skim::object(b, at, &["type", "name"], |slot, at| {
                                    let end = skim::value(b, at)?;
                                    block[slot] = Some(line.get(at..end)?);
                                    Some(end)
                                })?;
                                list.push(block.map(present));
                                Some(end)
                            })?;
                            blocks = Some(list);
                            end
                        }
                        _ => skim::value(b, at)?,
                    };
                    message[slot] = Some(line.get(at..end)?);
                    Some(end)
                })?;
                fields = Some(message.map(present));
                end
            }
            _ => skim::value(b, at)?,
        };
        entry[slot] = Some(line.get(at..end)?);
        Some(end)
    })?;
    if skim::ws(b, end) != b.len() {
        return None;
    }
    let [message, usage] = entry.map(present);
    let mut out = String::from("{");
    match (message, fields) {
        (Some(_), Some(fields)) => {
            // `message` is the first member written.
            out.push_str("\"message\":{");
            for (key, value) in KEYS[..5].iter().zip(&fields[..5]) {
                member(&mut out, key, *value);
            }
            if let Some(content) = fields[5] {
                if let Some(blocks) = blocks.as_ref().filter(|_| content.starts_with('[')) {
                    if !out.ends_with('{') {
                        out.push(',');
                    }
                    out.push_str("\"content\":[");
                    for (i, block) in blocks.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push('{');
                        member(&mut out, "type", block[0]);
                        member(&mut out, "name", block[1]);
                        out.push('}');
                    }
                    out.push(']');
                } else if content.starts_with('"') {
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
        (Some(message), None) => member(&mut out, "message", Some(message)),
        (None, _) => {}
    }
    member(&mut out, "usage", usage);
    out.push('}');
    crate::format::json::parse(&out).ok()
}

/// A JSON skimmer for [`light_value`]: walks a line once, handing the members it names to
/// the caller and skipping everything else without decoding it (a string is jumped over
/// with `memchr` to its closing quote: most of a line is text that is never read). It reads
/// lines the session reader already parsed as JSON; anything it does not expect (a key
/// written with escapes, a key named twice, a value that is not where it should be) is
/// `None`, and the caller parses the whole line instead.
mod skim {
    pub fn ws(b: &[u8], mut i: usize) -> usize {
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        i
    }

    /// The index just past the string whose opening quote is at `i`: the next quote not
    /// escaped (preceded by an even run of backslashes; the run cannot reach back past the
    /// opening quote).
    fn string(b: &[u8], i: usize) -> Option<usize> {
        let mut at = i + 1;
        loop {
            at += memchr::memchr(b'"', b.get(at..)?)?;
            let run = b[i + 1..at]
                .iter()
                .rev()
                .take_while(|c| **c == b'\\')
                .count();
            if run % 2 == 0 {
                return Some(at + 1);
            }
            at += 1;
        }
    }

    /// The index just past the value starting at `i`.
    pub fn value(b: &[u8], i: usize) -> Option<usize> {
        match *b.get(i)? {
            b'"' => string(b, i),
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut at = i;
                loop {
                    match *b.get(at)? {
                        b'"' => {
                            at = string(b, at)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Some(at + 1);
                            }
                        }
                        _ => {}
                    }
                    at += 1;
                }
            }
            _ => {
                let mut at = i;
                while at < b.len()
                    && !matches!(b[at], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                {
                    at += 1;
                }
                (at > i).then_some(at)
            }
        }
    }

    /// The object starting at or after `i` (whitespace first): for each member named in
    /// `keys`, `member(slot, at)` reads the value starting at `at` and returns where it
    /// ends; other members are skipped. A key named twice is `None`. Returns the index just
    /// past the object.
    pub fn object(
        b: &[u8],
        i: usize,
        keys: &[&str],
        mut member: impl FnMut(usize, usize) -> Option<usize>,
    ) -> Option<usize> {
        let mut seen = 0u32;
        let mut i = ws(b, i);
        if b.get(i) != Some(&b'{') {
            return None;
        }
        i = ws(b, i + 1);
        if b.get(i) == Some(&b'}') {
            return Some(i + 1);
        }
        loop {
            if b.get(i) != Some(&b'"') {
                return None;
            }
            let key_end = string(b, i)?;
            let key = &b[i + 1..key_end - 1];
            if key.contains(&b'\\') {
                return None;
            }
            i = ws(b, key_end);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = ws(b, i + 1);
            let end = match keys.iter().position(|k| k.as_bytes() == key) {
                Some(slot) => {
                    if seen & (1 << slot) != 0 {
                        return None;
                    }
                    seen |= 1 << slot;
                    member(slot, i)?
                }
                None => value(b, i)?,
            };
            i = ws(b, end);
            match b.get(i)? {
                b',' => i = ws(b, i + 1),
                b'}' => return Some(i + 1),
                _ => return None,
            }
        }
    }

    /// The array starting at `i`: `element(at)` reads each element and returns where it
    /// ends. Returns the index just past the array.
    pub fn array(
        b: &[u8],
        i: usize,
        mut element: impl FnMut(usize) -> Option<usize>,
    ) -> Option<usize> {
        if b.get(i) != Some(&b'[') {
            return None;
        }
        let mut i = ws(b, i + 1);
        if b.get(i) == Some(&b']') {
            return Some(i + 1);
        }
        loop {
            let end = element(i)?;
            i = ws(b, end);
            match b.get(i)? {
                b',' => i = ws(b, i + 1),
                b']' => return Some(i + 1),
                _ => return None,
            }
        }
    }
}
