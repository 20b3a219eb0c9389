//! pi-ai's `getCurrentSystemMessage` over a projection's messages: what pi 1.6 stores as a
//! compaction's `systemMessage`, both when it appends one and when it prepares one. A function
//! of messages alone, below the session and the compaction that both call it.

use indexmap::IndexMap;

use crate::format::json::{JsObject, JsString, JsValue, put_in_js_order};

use super::error::{ErrorKind, StoreError, StoreResult};

/// pi-ai's `getCurrentSystemMessage`: every system message replayed into one (content joined,
/// sections patched by name, tools removed then added), or `None` when there is no system
/// message with a timestamp and no tool.
pub(crate) fn current_system_message(messages: &[JsValue]) -> StoreResult<Option<JsValue>> {
    let mut content = Vec::new();
    let mut sections: IndexMap<JsString, JsValue> = IndexMap::new();
    let mut tools: IndexMap<String, JsValue> = IndexMap::new();
    // `timestamp ??= message.timestamp`: `None` while undefined or null.
    let mut timestamp: Option<JsValue> = None;
    for message in messages {
        if message.get("role").and_then(JsValue::as_str).as_deref() != Some("system") {
            continue;
        }
        if matches!(timestamp, None | Some(JsValue::Null)) {
            timestamp = message.get("timestamp").cloned();
        }
        let text = content_text(message.get("content"))?;
        if !text.is_empty() {
            content.push(text);
        }
        if let Some(JsValue::Object(patch)) = message.get("sections") {
            for (name, value) in patch {
                if matches!(value, JsValue::Null) {
                    sections.shift_remove(name);
                } else {
                    sections.insert(name.clone(), value.clone());
                }
            }
        }
        // `getCurrentTools`: per message, removals first, then additions, keyed by name.
        let tool_key = |tool: &JsValue| {
            tool.get("name")
                .map_or("undefined".into(), JsValue::stringify)
        };
        if let Some(JsValue::Array(removed)) = message.get("toolsRemoved") {
            for tool in removed {
                tools.shift_remove(&tool_key(tool));
            }
        }
        if let Some(JsValue::Array(added)) = message.get("toolsAdded") {
            for tool in added {
                let key = tool_key(tool);
                tools.insert(key, tool.clone());
            }
        }
    }
    if timestamp.is_none() && tools.is_empty() {
        return Ok(None);
    }
    let mut out = JsObject::new();
    out.insert(JsString::new("role"), JsValue::from("system"));
    out.insert(
        JsString::new("content"),
        JsValue::from(content.join("\n\n")),
    );
    if !sections.is_empty() {
        let mut map: JsObject = sections.into_iter().collect();
        put_in_js_order(&mut map);
        out.insert(JsString::new("sections"), JsValue::Object(map));
    }
    if !tools.is_empty() {
        out.insert(
            JsString::new("toolsAdded"),
            JsValue::Array(tools.into_values().collect()),
        );
    }
    out.insert(
        JsString::new("timestamp"),
        timestamp.unwrap_or(JsValue::Number(0.0)),
    );
    Ok(Some(JsValue::Object(out)))
}

/// pi-ai's `contentText`: a string as it is, the text blocks of an array joined by `\n`.
fn content_text(content: Option<&JsValue>) -> StoreResult<String> {
    match content {
        Some(JsValue::String(s)) => Ok(s.to_string_lossy().into_owned()),
        Some(JsValue::Array(blocks)) => Ok(blocks
            .iter()
            .filter(|b| b.get("type").and_then(JsValue::as_str).as_deref() == Some("text"))
            .map(|b| match b.get("text") {
                None | Some(JsValue::Null) => String::new(),
                Some(text) => text.to_js_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")),
        _ => Err(StoreError::new(
            ErrorKind::InvalidEntry,
            "a system message's content is neither a string nor an array: pi 1.6 cannot \
             compute the compaction's systemMessage (content.filter is not a function)",
        )),
    }
}
