//! `serializeConversation`: the conversation as the text a summarizing model reads, built on
//! JavaScript strings so tool-result truncation at 2000 UTF-16 units is exactly pi's.

use crate::format::json::{JsString, JsValue};

use super::estimate::{CompactionRules, Malformed};
use super::text::{self, JsText};

/// pi's `TOOL_RESULT_MAX_CHARS`.
const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// `String(value)` as a template literal or `join` writes it (`join` writes null as nothing).
fn js_string(value: &JsValue, in_join: bool) -> JsString {
    match value {
        JsValue::String(s) => s.clone(),
        JsValue::Null if in_join => JsString::new(""),
        other => JsString::new(&other.to_js_string()),
    }
}

/// pi-ai's `contentText(content, separator)`.
fn content_text(content: Option<&JsValue>, separator: &str) -> Result<JsString, Malformed> {
    match content {
        Some(JsValue::String(s)) => Ok(s.clone()),
        Some(JsValue::Array(blocks)) => {
            let mut texts = Vec::new();
            for block in blocks {
                if matches!(block, JsValue::Null) {
                    return Err(Malformed("a content block is null".into()));
                }
                if block.get("type").and_then(JsValue::as_str).as_deref() == Some("text") {
                    texts.push(
                        block
                            .get("text")
                            .map_or_else(|| JsString::new(""), |t| js_string(t, true)),
                    );
                }
            }
            Ok(text::join(&texts, separator))
        }
        _ => Err(Malformed("content is neither a string nor an array".into())),
    }
}

/// `truncateForSummary(text, 2000)`: pi 0.82.1 slices (and may cut a surrogate pair), pi 1.6
/// uses `sliceHead`, which keeps a straddling character out whole.
fn truncate(s: JsString, rules: CompactionRules) -> JsString {
    let len = text::length(&s);
    if len <= TOOL_RESULT_MAX_CHARS {
        return s;
    }
    let head = if rules == CompactionRules::Pi16 {
        text::slice_head(&s, TOOL_RESULT_MAX_CHARS)
    } else {
        text::slice_to(&s, TOOL_RESULT_MAX_CHARS)
    };
    let mut out = JsText::new();
    out.js(&head).text(&format!(
        "\n\n[... {} more characters truncated]",
        len - TOOL_RESULT_MAX_CHARS
    ));
    out.finish()
}

/// `serializeConversation(llmMessages)`. pi 1.6 leaves thinking blocks out.
pub fn serialize_conversation(
    messages: &[JsValue],
    rules: CompactionRules,
) -> Result<JsString, Malformed> {
    let mut parts: Vec<JsString> = Vec::new();
    let labelled = |label: &str, body: &JsString| {
        let mut t = JsText::new();
        t.text(label).js(body);
        t.finish()
    };
    for message in messages {
        match message.get("role").and_then(JsValue::as_str).as_deref() {
            Some("user") => {
                let c = content_text(message.get("content"), "")?;
                if !c.is_empty() {
                    parts.push(labelled("[User]: ", &c));
                }
            }
            Some("assistant") => {
                let Some(JsValue::Array(blocks)) = message.get("content") else {
                    return Err(Malformed("assistant content is not an array".into()));
                };
                let mut thinking = Vec::new();
                let mut calls = Vec::new();
                let mut has_text = false;
                for block in blocks {
                    if matches!(block, JsValue::Null) {
                        return Err(Malformed("a content block is null".into()));
                    }
                    match block.get("type").and_then(JsValue::as_str).as_deref() {
                        Some("thinking") if rules != CompactionRules::Pi16 => thinking.push(
                            block
                                .get("thinking")
                                .map_or_else(|| JsString::new(""), |t| js_string(t, true)),
                        ),
                        Some("toolCall") => calls.push(tool_call(block)?),
                        Some("text") => has_text = true,
                        _ => {}
                    }
                }
                if !thinking.is_empty() {
                    parts.push(labelled(
                        "[Assistant thinking]: ",
                        &text::join(&thinking, "\n"),
                    ));
                }
                if has_text {
                    let c = content_text(message.get("content"), "\n")?;
                    parts.push(labelled("[Assistant]: ", &c));
                }
                if !calls.is_empty() {
                    parts.push(labelled(
                        "[Assistant tool calls]: ",
                        &text::join(&calls, "; "),
                    ));
                }
            }
            Some("toolResult") => {
                let c = content_text(message.get("content"), "")?;
                if !c.is_empty() {
                    parts.push(labelled("[Tool result]: ", &truncate(c, rules)));
                }
            }
            _ => {}
        }
    }
    Ok(text::join(&parts, "\n\n"))
}

/// `${name}(${Object.entries(args).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ")})`.
fn tool_call(block: &JsValue) -> Result<JsString, Malformed> {
    let pairs: Vec<JsString> = match block.get("arguments") {
        // Parsed objects already hold JavaScript's property order.
        Some(JsValue::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                let mut t = JsText::new();
                t.js(k).text("=").text(&v.stringify());
                t.finish()
            })
            .collect(),
        Some(JsValue::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| JsString::new(&format!("{i}={}", v.stringify())))
            .collect(),
        Some(JsValue::Number(_) | JsValue::Bool(_)) => Vec::new(),
        Some(JsValue::String(_)) => {
            return Err(Malformed("a tool call's arguments are a string".into()));
        }
        None | Some(JsValue::Null) => {
            return Err(Malformed("a tool call has no arguments".into()));
        }
    };
    let mut t = JsText::new();
    let name = block
        .get("name")
        .map_or_else(|| JsString::new("undefined"), |n| js_string(n, false));
    t.js(&name)
        .text("(")
        .js(&text::join(&pairs, ", "))
        .text(")");
    Ok(t.finish())
}
