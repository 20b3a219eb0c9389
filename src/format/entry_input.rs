//! A new entry as callers write it, `{type, ...fields}` with pi's field names, read into a
//! [`NewEntry`]: the one reader for `session/append`'s `entry` and `replay`'s ops. Every
//! refusal names the field (`'entry.modelId'`), so callers pass the message on as it is.

use std::fmt;

use super::json::{JsObject, JsString, JsValue};
use super::write::NewEntry;

/// Why a value is not an entry that can be appended; the message names the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryInputError(pub String);

impl fmt::Display for EntryInputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EntryInputError {}

/// The fields each appendable type takes besides `type`.
fn fields_of(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
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
        "context_edit" => &["targetId", "replacement"],
        "usage" => &["kind", "provider", "model", "usage", "note"],
        _ => return None,
    })
}

/// Reads `entry` (`{type, ...}`); unknown fields are refused, as are values of the wrong type
/// where pi's types say what they must be.
pub fn parse_new_entry(entry: &JsValue) -> Result<NewEntry, EntryInputError> {
    let fail = |message: String| Err(EntryInputError(message));
    let Some(object) = entry.as_object() else {
        return fail("'entry': expected an object {type, ...}".into());
    };
    let Some(kind) = object
        .get(&JsString::new("type"))
        .and_then(JsValue::as_str)
        .map(|k| k.into_owned())
    else {
        return fail("'entry.type': expected a string".into());
    };
    let Some(known) = fields_of(&kind) else {
        return fail(format!(
            "'entry.type': {kind:?} cannot be appended (expected message, thinking_level_change, \
             model_change, compaction, custom, custom_message, label, session_info, \
             active_tools_change, context_edit or usage)"
        ));
    };
    if let Some(extra) = object.keys().find(|k| {
        let k = k.to_string_lossy();
        k != "type" && !known.contains(&k.as_ref())
    }) {
        return fail(format!(
            "'entry.{}': not a field of a {kind} entry",
            extra.to_string_lossy()
        ));
    }
    let fields = Fields(object);
    Ok(match kind.as_str() {
        "message" => {
            let message = fields.required("message")?;
            if message.get("role").and_then(JsValue::as_js_str).is_none() {
                return fail("'entry.message.role': expected a string".into());
            }
            NewEntry::Message { message }
        }
        "thinking_level_change" => NewEntry::ThinkingLevelChange {
            thinking_level: fields.string("thinkingLevel")?,
        },
        "model_change" => NewEntry::ModelChange {
            provider: fields.string("provider")?,
            model_id: fields.string("modelId")?,
        },
        "active_tools_change" => NewEntry::ActiveToolsChange {
            active_tool_names: fields.required("activeToolNames")?,
        },
        "compaction" => NewEntry::Compaction {
            summary: fields.string("summary")?,
            // `null` (pi 1.6): a compaction that keeps nothing before it.
            first_kept_entry_id: match fields.optional("firstKeptEntryId") {
                None => None,
                Some(id @ (JsValue::String(_) | JsValue::Null)) => Some(id),
                Some(_) => {
                    return fail("'entry.firstKeptEntryId': expected a string or null".into());
                }
            },
            tokens_before: match fields.required("tokensBefore")? {
                n @ JsValue::Number(_) => n,
                _ => return fail("'entry.tokensBefore': expected a number".into()),
            },
            retained_tail: fields.optional("retainedTail"),
            details: fields.optional("details"),
            usage: fields.optional("usage"),
            from_hook: fields.optional("fromHook"),
            system_message: None,
        },
        "context_edit" => NewEntry::ContextEdit {
            target_id: fields
                .string("targetId")?
                .as_str()
                .unwrap_or_default()
                .into_owned(),
            // Checked by the store, with pi 1.6's own message.
            replacement: fields.required("replacement")?,
        },
        "usage" => NewEntry::Usage {
            kind: fields.string("kind")?,
            provider: fields.string("provider")?,
            model: fields.string("model")?,
            usage: match fields.required("usage")? {
                usage @ JsValue::Object(_) => usage,
                _ => return fail("'entry.usage': expected an object".into()),
            },
            note: match fields.optional("note") {
                None => None,
                Some(note @ JsValue::String(_)) => Some(note),
                Some(_) => return fail("'entry.note': expected a string".into()),
            },
        },
        "custom" => NewEntry::Custom {
            custom_type: fields.string("customType")?,
            data: fields.optional("data"),
        },
        "custom_message" => NewEntry::CustomMessage {
            custom_type: fields.string("customType")?,
            content: fields.required("content")?,
            display: fields.optional("display"),
            details: fields.optional("details"),
        },
        "label" => NewEntry::Label {
            target_id: fields
                .string("targetId")?
                .as_str()
                .unwrap_or_default()
                .into_owned(),
            label: match fields.optional("label") {
                None | Some(JsValue::Null) => None,
                Some(label @ JsValue::String(_)) => Some(label),
                Some(_) => return fail("'entry.label': expected a string or null".into()),
            },
        },
        _ => NewEntry::SessionInfo {
            name: fields.string("name")?,
        },
    })
}

struct Fields<'a>(&'a JsObject);

impl Fields<'_> {
    fn optional(&self, key: &str) -> Option<JsValue> {
        self.0.get(&JsString::new(key)).cloned()
    }

    fn required(&self, key: &str) -> Result<JsValue, EntryInputError> {
        self.optional(key)
            .ok_or_else(|| EntryInputError(format!("missing field 'entry.{key}'")))
    }

    fn string(&self, key: &str) -> Result<JsValue, EntryInputError> {
        match self.required(key)? {
            s @ JsValue::String(_) => Ok(s),
            _ => Err(EntryInputError(format!("'entry.{key}': expected a string"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::json::parse;

    fn read(text: &str) -> Result<NewEntry, String> {
        parse_new_entry(&parse(text).unwrap()).map_err(|e| e.0)
    }

    #[test]
    fn every_refusal_names_the_field() {
        for (text, message) in [
            ("[]", "'entry': expected an object {type, ...}"),
            (r#"{"type":1}"#, "'entry.type': expected a string"),
            (
                r#"{"type":"model_change","provider":"p"}"#,
                "missing field 'entry.modelId'",
            ),
            (
                r#"{"type":"message","message":{"role":"user"},"parentId":"x"}"#,
                "'entry.parentId': not a field of a message entry",
            ),
            (
                r#"{"type":"compaction","summary":"s","tokensBefore":"9"}"#,
                "'entry.tokensBefore': expected a number",
            ),
            (
                r#"{"type":"label","targetId":"a","label":1}"#,
                "'entry.label': expected a string or null",
            ),
            (
                r#"{"type":"message","message":{}}"#,
                "'entry.message.role': expected a string",
            ),
        ] {
            assert_eq!(read(text).unwrap_err(), message, "{text}");
        }
        assert!(
            read(r#"{"type":"leaf"}"#)
                .unwrap_err()
                .contains("cannot be appended")
        );
    }

    #[test]
    fn values_keep_what_javascript_would_see() {
        // A lone surrogate and duplicate keys survive into the entry.
        let entry = read(r#"{"type":"custom","customType":"\ud83d","data":{"a":1,"a":2}}"#);
        let NewEntry::Custom { custom_type, data } = entry.unwrap() else {
            panic!("a custom entry");
        };
        assert_eq!(custom_type.stringify(), r#""\ud83d""#);
        assert_eq!(data.unwrap().stringify(), r#"{"a":2}"#);
    }
}
