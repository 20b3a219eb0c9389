//! Short previews of entries, for tree rows and pickers.

use crate::format::entry::{Kind, LineFacts, Payload, Replacement, Role, field_values};
use crate::format::json::{JsValue, JsonError};

use super::index::Record;
use super::preview_lean;

const PREVIEW_CHARS: usize = 72;

/// What a tree row needs of an entry beyond its line: the same from the index (a record) as
/// from a line's facts while the file is first read, so both give one answer.
#[derive(Clone, Copy, Debug)]
pub(super) struct RowEntry<'a> {
    kind: Kind,
    assistant: bool,
    /// A context edit whose replacement is `null`.
    removes: bool,
    type_name: Option<&'a str>,
}

impl<'a> RowEntry<'a> {
    pub(super) fn of_record(record: Record<'a>) -> Self {
        RowEntry {
            kind: record.kind(),
            assistant: record.is_assistant_message(),
            removes: matches!(record.payload(), Payload::ContextEdit(Replacement::Null)),
            type_name: record.type_name(),
        }
    }

    pub(super) fn of_facts(facts: &'a LineFacts) -> Self {
        RowEntry {
            kind: facts.kind,
            assistant: matches!(
                facts.payload,
                Payload::Message {
                    role: Role::Assistant,
                    ..
                }
            ) && facts.kind == Kind::Message,
            removes: matches!(facts.payload, Payload::ContextEdit(Replacement::Null)),
            type_name: facts.kind.type_name().or(facts.other_type.as_deref()),
        }
    }
}

/// An entry's preview and, for an assistant message, whether pi's `/tree` selector shows it
/// when it is not the leaf (`false` for every other entry). A message is read on the lean
/// path; what that path cannot answer exactly is read again on the exact one.
pub(super) fn row_facts_of_line(
    entry: RowEntry<'_>,
    text: &str,
) -> Result<(String, bool), JsonError> {
    if entry.kind != Kind::Message {
        return Ok((preview_of_line(entry, text)?, false));
    }
    if let Some(lean) = preview_lean::message(text) {
        let preview = format!("{}: {}", lean.role, shorten(lean.body.iter()));
        return Ok((preview, lean.shown && entry.assistant));
    }
    let shown = entry.assistant && assistant_shown_of_line(text)?;
    Ok((preview_of_line(entry, text)?, shown))
}

/// `hasTextContent(message.content) || isErrorOrAborted`, on the exact path (the lean one is
/// [`super::preview_lean`]).
pub(super) fn assistant_shown_of_line(text: &str) -> Result<bool, JsonError> {
    let [message] = field_values(text, ["message"])?;
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

/// A one-line description of an entry: its kind and a short preview of its text, read on the
/// exact path. Only the fields shown are read from the line (a 50 MB `custom` entry costs its
/// `customType`).
pub(super) fn preview_of_line(entry: RowEntry<'_>, text: &str) -> Result<String, JsonError> {
    let one = |key: &str| -> Result<String, JsonError> {
        let [value] = field_values(text, [key])?;
        Ok(value.as_ref().map(preview_of).unwrap_or_default())
    };
    let two = |a: &str, b: &str| -> Result<(String, String), JsonError> {
        let [x, y] = field_values(text, [a, b])?;
        let text = |v: Option<JsValue>| v.as_ref().map(preview_of).unwrap_or_default();
        Ok((text(x), text(y)))
    };
    Ok(match entry.kind {
        Kind::Message => {
            let [message] = field_values(text, ["message"])?;
            let message = message.as_ref();
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
            format!("{role}: {}", shorten([body]))
        }
        Kind::Compaction => format!("compaction: {}", shorten([one("summary")?])),
        Kind::BranchSummary => format!("branch summary: {}", shorten([one("summary")?])),
        Kind::CustomMessage => {
            let (custom_type, content) = two("customType", "content")?;
            format!("custom message ({custom_type}): {}", shorten([content]))
        }
        Kind::Custom => format!("custom ({})", one("customType")?),
        Kind::ContextEdit => {
            let target = one("targetId")?;
            match entry.removes {
                true => format!("context edit: removes {target}"),
                false => format!("context edit: replaces {target}"),
            }
        }
        Kind::Usage => {
            let (kind, provider) = two("kind", "provider")?;
            format!("usage ({kind}): {provider}/{}", one("model")?)
        }
        Kind::Label => {
            let (target, label) = two("targetId", "label")?;
            format!("label {target} -> {label}")
        }
        Kind::SessionInfo => format!("name: {}", one("name")?),
        Kind::ModelChange => {
            let (provider, model) = two("provider", "modelId")?;
            format!("model: {provider}/{model}")
        }
        Kind::ThinkingLevelChange => format!("thinking: {}", one("thinkingLevel")?),
        Kind::Leaf => format!("leaf -> {}", one("targetId")?),
        Kind::ActiveToolsChange => "active tools changed".to_string(),
        Kind::Session | Kind::Other => entry.type_name.unwrap_or("(not an object)").to_string(),
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

/// The pieces joined with spaces, whitespace runs made one space, quoted, cut to
/// `PREVIEW_CHARS` characters with an ellipsis. Reads no further than the cut.
fn shorten<S: AsRef<str>>(pieces: impl IntoIterator<Item = S>) -> String {
    let mut flat = String::new();
    let mut chars = 0;
    'pieces: for piece in pieces {
        for word in piece.as_ref().split_whitespace() {
            if chars > 0 {
                flat.push(' ');
                chars += 1;
            }
            for c in word.chars() {
                if chars > PREVIEW_CHARS {
                    break 'pieces;
                }
                flat.push(c);
                chars += 1;
            }
        }
    }
    if chars <= PREVIEW_CHARS {
        format!("\"{flat}\"")
    } else {
        let cut: String = flat.chars().take(PREVIEW_CHARS - 1).collect();
        format!("\"{cut}…\"")
    }
}

/// pi's `hasTextContent`: a non-blank string, or an array with a non-blank `text` block.
pub(super) fn has_text(content: &JsValue) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::options::SessionOptions;
    use crate::store::session::Session;

    /// The preview text of the program before the lean path, kept as the reference.
    fn shorten_reference(text: &str) -> String {
        let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if flat.chars().count() <= PREVIEW_CHARS {
            format!("\"{flat}\"")
        } else {
            let cut: String = flat.chars().take(PREVIEW_CHARS - 1).collect();
            format!("\"{cut}…\"")
        }
    }

    #[test]
    fn shortening_pieces_is_shortening_their_join() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let alphabet = ['a', 'é', ' ', '\n', '\u{a0}', '\u{feff}', '😀', '\t', 'z'];
        for _ in 0..3000 {
            let pieces: Vec<String> = (0..next(4))
                .map(|_| {
                    (0..next(90))
                        .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                        .collect()
                })
                .collect();
            assert_eq!(
                shorten(pieces.iter()),
                shorten_reference(&pieces.join(" ")),
                "{pieces:?}"
            );
        }
    }

    /// Lines the lean path reads (`true`) or leaves to the exact one (`false`).
    const LINES: &[(bool, &str)] = &[
        (
            true,
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"line one\nline\ttwo \u00e9 \u2028 end","timestamp":1}}"#,
        ),
        (
            true,
            r#"{"type":"message","id":"a2","parentId":"a1","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Here"},{"type":"toolCall","id":"t","name":"bash","arguments":{"c":[1,2]}},{"type":"image","data":"x"},7,"s",null,[1]],"stopReason":"toolUse","usage":{"input":1}}}"#,
        ),
        (
            true,
            r#"{"type":"message","id":"a3","parentId":"a2","message":{"role":"assistant","content":[{"type":"toolCall","name":"read"}],"stopReason":"stop"}}"#,
        ),
        (
            true,
            r#"{"type":"message","id":"a4","parentId":"a3","message":{"role":"assistant","content":[],"stopReason":"error"}}"#,
        ),
        (
            true,
            r#"{"type":"message","id":"a5","parentId":"a4","message":{"role":"assistant","content":[{"type":"text","text":" \u00a0\ufeff\n"}],"stopReason":1}}"#,
        ),
        (
            true,
            r#"{"type":"message","id":"a6","parentId":"a5","message":{"role":"assistant","content":[{"type":"text","text":" \u00a0\ufeff\n"}],"stopReason":""}}"#,
        ),
        (
            true,
            r#"{"type":"message","id":"a7","parentId":"a6","message":{"role":"assistant","content":[{"type":"text","text":null},{"type":"toolCall","name":null},{"text":"no type"}],"stopReason":null}}"#,
        ),
        (
            true,
            r#"{"type":"message","id":"a8","parentId":"a7","message":{"role":"assistant","content":null,"stopReason":{"x":1}}}"#,
        ),
        (
            true,
            r#"{"type":"message","id":"a9","parentId":"a8","message":{"role":"bashExecution","command":"ls -la","content":5}}"#,
        ),
        (
            true,
            r#"{"type":"message","id":"b1","parentId":"a9","message":{"role":"toolResult","\u0063ontent":[{"type":"text","text":"a fairly long tool result that goes on and on and on, well past the seventy-two characters a preview keeps"}]}}"#,
        ),
        (
            true,
            r#"{"type":"message","id":"b2","parentId":"b1","message":{"role":7,"content":"x"}}"#,
        ),
        (
            true,
            r#"{"type":"message","id":"b3","parentId":"b2","message":null}"#,
        ),
        (true, r#"{"type":"message","id":"b4","parentId":"b3"}"#),
        (
            false,
            r#"{"type":"message","id":"c1","parentId":"b4","message":{"role":"assistant","content":"first","content":[{"type":"toolCall","name":"x"}]}}"#,
        ),
        (
            false,
            r#"{"type":"message","id":"c2","parentId":"c1","message":{"role":"user","content":"half \ud83d of a pair"}}"#,
        ),
        (
            false,
            r#"{"type":"message","id":"c3","parentId":"c2","message":{"role":"user","content":42}}"#,
        ),
        (
            false,
            r#"{"type":"message","id":"c4","parentId":"c3","message":{"role":"assistant","content":[{"type":"text","text":["nested",{"type":"text","text":"deep"}]}]}}"#,
        ),
        (
            false,
            r#"{"type":"message","id":"c5","parentId":"c4","message":"not an object"}"#,
        ),
        (
            false,
            r#"{"type":"message","id":"c6","parentId":"c5","message":{"role":"assistant","content":[{"type":"toolCall","name":{"b":1,"a":2}}],"stopReason":"aborted"}}"#,
        ),
        (
            false,
            r#"{"type":"message","id":"c7","parentId":"c6","message":{"role":"user","content":"one"},"message":{"role":"assistant","content":"two"}}"#,
        ),
    ];

    #[test]
    fn the_lean_path_answers_as_the_exact_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        let mut text = String::from(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#,
        );
        for (_, line) in LINES {
            text.push('\n');
            text.push_str(line);
        }
        text.push('\n');
        std::fs::write(&file, text).unwrap();
        let session = Session::open_read_only(&file, SessionOptions::default()).unwrap();
        assert_eq!(session.len(), LINES.len());
        let mut shown = 0;
        for (position, (lean, line)) in LINES.iter().enumerate() {
            let position = position as u32;
            let lean_read = preview_lean::message(line);
            assert_eq!(lean_read.is_some(), *lean, "{line}: {lean_read:?}");
            let record = session.record(position);
            let exact = (
                session.preview(position).unwrap(),
                record.is_assistant_message() && session.assistant_is_shown(position).unwrap(),
            );
            assert_eq!(session.row_facts(position).unwrap(), exact, "{line}");
            shown += usize::from(exact.1);
        }
        // Both answers of the filter bit occur among the assistant messages.
        assert!(shown > 2 && shown < LINES.len() / 2, "{shown}");
    }
}
