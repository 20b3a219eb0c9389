//! `session/append`'s `entry` param -> the store's [`NewEntry`], naming the bad field.

use serde_json::Value;

use crate::format::json::JsValue;
use crate::format::write::NewEntry;
use crate::rpc::RpcError;

/// Reads `{type, ...}` with pi's field names.
pub fn new_entry(entry: &Value) -> Result<NewEntry, RpcError> {
    let Some(object) = entry.as_object() else {
        return Err(RpcError::invalid_params(
            "'entry': expected an object {type, ...}",
        ));
    };
    let kind = object
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("'entry.type': expected a string"))?;
    let known: &[&str] = match kind {
        "message" => &["message"],
        "thinking_level_change" => &["thinkingLevel"],
        "model_change" => &["provider", "modelId"],
        "active_tools_change" => &["activeToolNames"],
        "compaction" => &[
            "summary",
            "firstKeptEntryId",
            "tokensBefore",
            "retainedTail",
            "details",
            "usage",
            "fromHook",
        ],
        "custom" => &["customType", "data"],
        "custom_message" => &["customType", "content", "display", "details"],
        "label" => &["targetId", "label"],
        "session_info" => &["name"],
        other => {
            return Err(RpcError::invalid_params(format!(
                "'entry.type': {other:?} cannot be appended (expected message, thinking_level_change, model_change, \
                 compaction, custom, custom_message, label, session_info or active_tools_change)"
            )));
        }
    };
    if let Some(extra) = object
        .keys()
        .find(|k| *k != "type" && !known.contains(&k.as_str()))
    {
        return Err(RpcError::invalid_params(format!(
            "'entry.{extra}': not a field of a {kind} entry"
        )));
    }
    let optional = |key: &str| object.get(key).map(JsValue::from_serde);
    let required = |key: &str| {
        optional(key)
            .ok_or_else(|| RpcError::invalid_params(format!("missing field 'entry.{key}'")))
    };
    let string = |key: &str| -> Result<JsValue, RpcError> {
        match object.get(key) {
            Some(Value::String(s)) => Ok(JsValue::from(s.as_str())),
            Some(_) => Err(RpcError::invalid_params(format!(
                "'entry.{key}': expected a string"
            ))),
            None => Err(RpcError::invalid_params(format!(
                "missing field 'entry.{key}'"
            ))),
        }
    };
    Ok(match kind {
        "message" => {
            let message = required("message")?;
            if message.get("role").and_then(JsValue::as_js_str).is_none() {
                return Err(RpcError::invalid_params(
                    "'entry.message.role': expected a string",
                ));
            }
            NewEntry::Message { message }
        }
        "thinking_level_change" => NewEntry::ThinkingLevelChange {
            thinking_level: string("thinkingLevel")?,
        },
        "model_change" => NewEntry::ModelChange {
            provider: string("provider")?,
            model_id: string("modelId")?,
        },
        "active_tools_change" => NewEntry::ActiveToolsChange {
            active_tool_names: required("activeToolNames")?,
        },
        "compaction" => NewEntry::Compaction {
            summary: string("summary")?,
            first_kept_entry_id: match object.get("firstKeptEntryId") {
                None => None,
                Some(Value::String(s)) => Some(JsValue::from(s.as_str())),
                Some(_) => {
                    return Err(RpcError::invalid_params(
                        "'entry.firstKeptEntryId': expected a string",
                    ));
                }
            },
            tokens_before: match object.get("tokensBefore") {
                Some(v @ Value::Number(_)) => JsValue::from_serde(v),
                Some(_) => {
                    return Err(RpcError::invalid_params(
                        "'entry.tokensBefore': expected a number",
                    ));
                }
                None => {
                    return Err(RpcError::invalid_params(
                        "missing field 'entry.tokensBefore'",
                    ));
                }
            },
            retained_tail: optional("retainedTail"),
            details: optional("details"),
            usage: optional("usage"),
            from_hook: optional("fromHook"),
        },
        "custom" => NewEntry::Custom {
            custom_type: string("customType")?,
            data: optional("data"),
        },
        "custom_message" => NewEntry::CustomMessage {
            custom_type: string("customType")?,
            content: required("content")?,
            display: optional("display"),
            details: optional("details"),
        },
        "label" => NewEntry::Label {
            target_id: string("targetId")?
                .as_str()
                .unwrap_or_default()
                .into_owned(),
            label: match object.get("label") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(JsValue::from(s.as_str())),
                Some(_) => {
                    return Err(RpcError::invalid_params(
                        "'entry.label': expected a string or null",
                    ));
                }
            },
        },
        _ => NewEntry::SessionInfo {
            name: string("name")?,
        },
    })
}
