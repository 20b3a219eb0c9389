//! New lines, with the key order each pi implementation writes (spec 4.6).

use super::json::{JsObject, JsString, JsValue};
use super::profile::Profile;

/// The `parentId` a new entry gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParentValue {
    Null,
    Id(String),
    /// The SessionManager's leaf can be `undefined` (a file ending in a non-object line): the
    /// key is then left out, as `JSON.stringify` leaves it out.
    Undefined,
}

/// What an append adds, before it has an id, a parent and a time. Optional fields are `None`
/// when undefined (no key is written).
#[derive(Clone, Debug, PartialEq)]
pub enum NewEntry {
    Message {
        message: JsValue,
    },
    ThinkingLevelChange {
        thinking_level: JsValue,
    },
    ModelChange {
        provider: JsValue,
        model_id: JsValue,
    },
    ActiveToolsChange {
        active_tool_names: JsValue,
    },
    Compaction {
        summary: JsValue,
        first_kept_entry_id: Option<JsValue>,
        tokens_before: JsValue,
        retained_tail: Option<JsValue>,
        details: Option<JsValue>,
        usage: Option<JsValue>,
        from_hook: Option<JsValue>,
        /// pi 1.6: the system prompt in force, computed by the store (never given by callers).
        system_message: Option<Box<JsValue>>,
    },
    BranchSummary {
        from_id: JsValue,
        summary: JsValue,
        details: Option<JsValue>,
        usage: Option<JsValue>,
        from_hook: Option<JsValue>,
    },
    Custom {
        custom_type: JsValue,
        data: Option<JsValue>,
    },
    CustomMessage {
        custom_type: JsValue,
        content: JsValue,
        display: Option<JsValue>,
        details: Option<JsValue>,
    },
    Label {
        target_id: String,
        label: Option<JsValue>,
    },
    SessionInfo {
        name: JsValue,
    },
    Leaf {
        target_id: Option<String>,
    },
    /// pi 1.6: `replacement` is `null` (remove the target from the context) or `{content}`.
    ContextEdit {
        target_id: String,
        replacement: JsValue,
    },
    /// pi 1.6: usage outside the context; `note` is written only when truthy.
    Usage {
        kind: JsValue,
        provider: JsValue,
        model: JsValue,
        usage: JsValue,
        note: Option<JsValue>,
    },
}

impl NewEntry {
    pub fn type_name(&self) -> &'static str {
        match self {
            NewEntry::Message { .. } => "message",
            NewEntry::ThinkingLevelChange { .. } => "thinking_level_change",
            NewEntry::ModelChange { .. } => "model_change",
            NewEntry::ActiveToolsChange { .. } => "active_tools_change",
            NewEntry::Compaction { .. } => "compaction",
            NewEntry::BranchSummary { .. } => "branch_summary",
            NewEntry::Custom { .. } => "custom",
            NewEntry::CustomMessage { .. } => "custom_message",
            NewEntry::Label { .. } => "label",
            NewEntry::SessionInfo { .. } => "session_info",
            NewEntry::Leaf { .. } => "leaf",
            NewEntry::ContextEdit { .. } => "context_edit",
            NewEntry::Usage { .. } => "usage",
        }
    }
}

struct Builder(JsObject);

impl Builder {
    fn put(&mut self, key: &str, value: JsValue) {
        self.0.insert(JsString::new(key), value);
    }

    fn put_opt(&mut self, key: &str, value: &Option<JsValue>) {
        if let Some(v) = value {
            self.put(key, v.clone());
        }
    }

    fn put_common(&mut self, id: &str, parent: &ParentValue, timestamp: &str) {
        self.put("id", JsValue::from(id));
        match parent {
            ParentValue::Null => self.put("parentId", JsValue::Null),
            ParentValue::Id(p) => self.put("parentId", JsValue::from(p.as_str())),
            ParentValue::Undefined => {}
        }
        self.put("timestamp", JsValue::from(timestamp));
    }
}

/// The entry object, keys in the order `profile` writes them.
pub fn entry_object(
    profile: Profile,
    entry: &NewEntry,
    id: &str,
    parent: &ParentValue,
    timestamp: &str,
) -> JsValue {
    let mut b = Builder(JsObject::new());
    b.put("type", JsValue::from(entry.type_name()));
    // The SessionManager builds custom entries with their own fields before the common ones.
    let custom_first = profile.is_session_manager()
        && matches!(
            entry,
            NewEntry::Custom { .. } | NewEntry::CustomMessage { .. }
        );
    if !custom_first {
        b.put_common(id, parent, timestamp);
    }
    match entry {
        NewEntry::Message { message } => b.put("message", message.clone()),
        NewEntry::ThinkingLevelChange { thinking_level } => {
            b.put("thinkingLevel", thinking_level.clone())
        }
        NewEntry::ModelChange { provider, model_id } => {
            b.put("provider", provider.clone());
            b.put("modelId", model_id.clone());
        }
        NewEntry::ActiveToolsChange { active_tool_names } => {
            b.put("activeToolNames", active_tool_names.clone())
        }
        NewEntry::Compaction {
            summary,
            first_kept_entry_id,
            tokens_before,
            retained_tail,
            details,
            usage,
            from_hook,
            system_message,
        } => {
            b.put("summary", summary.clone());
            b.put_opt("firstKeptEntryId", first_kept_entry_id);
            b.put("tokensBefore", tokens_before.clone());
            b.put_opt("retainedTail", retained_tail);
            b.put_opt("details", details);
            b.put_opt("usage", usage);
            b.put_opt("fromHook", from_hook);
            if let Some(system) = system_message {
                b.put("systemMessage", (**system).clone());
            }
        }
        NewEntry::BranchSummary {
            from_id,
            summary,
            details,
            usage,
            from_hook,
        } => {
            b.put("fromId", from_id.clone());
            b.put("summary", summary.clone());
            b.put_opt("details", details);
            b.put_opt("usage", usage);
            b.put_opt("fromHook", from_hook);
        }
        NewEntry::Custom { custom_type, data } => {
            b.put("customType", custom_type.clone());
            b.put_opt("data", data);
        }
        NewEntry::CustomMessage {
            custom_type,
            content,
            display,
            details,
        } => {
            b.put("customType", custom_type.clone());
            b.put("content", content.clone());
            b.put_opt("display", display);
            b.put_opt("details", details);
        }
        NewEntry::Label { target_id, label } => {
            b.put("targetId", JsValue::from(target_id.as_str()));
            b.put_opt("label", label);
        }
        NewEntry::SessionInfo { name } => b.put("name", name.clone()),
        NewEntry::Leaf { target_id } => {
            b.put(
                "targetId",
                target_id.as_deref().map_or(JsValue::Null, JsValue::from),
            );
        }
        NewEntry::ContextEdit {
            target_id,
            replacement,
        } => {
            b.put("targetId", JsValue::from(target_id.as_str()));
            b.put("replacement", replacement.clone());
        }
        NewEntry::Usage {
            kind,
            provider,
            model,
            usage,
            note,
        } => {
            b.put("kind", kind.clone());
            b.put("provider", provider.clone());
            b.put("model", model.clone());
            b.put("usage", usage.clone());
            if let Some(note) = note.as_ref().filter(|n| n.is_truthy()) {
                b.put("note", note.clone());
            }
        }
    }
    if custom_first {
        b.put_common(id, parent, timestamp);
    }
    JsValue::Object(b.0)
}

/// A header object as `profile` writes it.
pub fn header_object(
    profile: Profile,
    id: &str,
    timestamp: &str,
    cwd: &str,
    parent_session: Option<&str>,
    metadata: Option<&JsValue>,
) -> JsValue {
    let mut b = Builder(JsObject::new());
    b.put("type", JsValue::from("session"));
    b.put("version", JsValue::Number(3.0));
    b.put("id", JsValue::from(id));
    b.put("timestamp", JsValue::from(timestamp));
    b.put("cwd", JsValue::from(cwd));
    if let Some(parent) = parent_session {
        b.put("parentSession", JsValue::from(parent));
    }
    // Only the harness has header metadata.
    if !profile.is_session_manager()
        && let Some(metadata) = metadata
    {
        b.put("metadata", metadata.clone());
    }
    JsValue::Object(b.0)
}

/// `name.replace(/[\r\n]+/g, " ").trim()`, as both implementations store session names.
pub fn sanitize_session_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_break = false;
    for c in name.chars() {
        if c == '\r' || c == '\n' {
            if !in_break {
                out.push(' ');
            }
            in_break = true;
        } else {
            out.push(c);
            in_break = false;
        }
    }
    js_trim(&out).to_string()
}

/// JavaScript's `String.prototype.trim`.
pub fn js_trim(text: &str) -> &str {
    text.trim_matches(super::js_whitespace::is_js_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_follows_each_implementation() {
        let custom = NewEntry::Custom {
            custom_type: "ext".into(),
            data: None,
        };
        let parent = ParentValue::Id("p".into());
        assert_eq!(
            entry_object(Profile::PiCli, &custom, "i", &parent, "t").stringify(),
            r#"{"type":"custom","customType":"ext","id":"i","parentId":"p","timestamp":"t"}"#
        );
        assert_eq!(
            entry_object(Profile::Harness, &custom, "i", &parent, "t").stringify(),
            r#"{"type":"custom","id":"i","parentId":"p","timestamp":"t","customType":"ext"}"#
        );
        let leaf = NewEntry::Leaf { target_id: None };
        assert_eq!(
            entry_object(Profile::Harness, &leaf, "l", &ParentValue::Undefined, "t").stringify(),
            r#"{"type":"leaf","id":"l","timestamp":"t","targetId":null}"#
        );
    }

    #[test]
    fn pi_16_kinds_in_pi_16_key_order() {
        let parent = ParentValue::Id("p".into());
        let edit = NewEntry::ContextEdit {
            target_id: "u".into(),
            replacement: JsValue::Null,
        };
        assert_eq!(
            entry_object(Profile::Pi16, &edit, "i", &parent, "t").stringify(),
            r#"{"type":"context_edit","id":"i","parentId":"p","timestamp":"t","targetId":"u","replacement":null}"#
        );
        let usage = NewEntry::Usage {
            kind: "cache_warm".into(),
            provider: "p".into(),
            model: "m".into(),
            usage: JsValue::Object(Default::default()),
            note: Some("".into()),
        };
        assert_eq!(
            entry_object(Profile::Pi16, &usage, "i", &parent, "t").stringify(),
            r#"{"type":"usage","id":"i","parentId":"p","timestamp":"t","kind":"cache_warm","provider":"p","model":"m","usage":{}}"#
        );
    }

    #[test]
    fn session_names_are_sanitized_as_pi_does() {
        assert_eq!(sanitize_session_name("  my\r\n\nname \t "), "my name");
        assert_eq!(sanitize_session_name("a\tb"), "a\tb");
        assert_eq!(sanitize_session_name("\n"), "");
    }
}
