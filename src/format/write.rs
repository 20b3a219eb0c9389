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
    /// A `message` entry.
    Message {
        /// The agent message (`role`, `content`, ...).
        message: JsValue,
    },
    /// A `thinking_level_change` entry.
    ThinkingLevelChange {
        /// The new thinking level.
        thinking_level: JsValue,
    },
    /// A `model_change` entry.
    ModelChange {
        /// The provider of the new model.
        provider: JsValue,
        /// The new model's id.
        model_id: JsValue,
    },
    /// An `active_tools_change` entry.
    ActiveToolsChange {
        /// The names of the tools now active.
        active_tool_names: JsValue,
    },
    /// A `compaction` entry.
    Compaction {
        /// The summary of what was compacted.
        summary: JsValue,
        /// The first entry kept after the compaction.
        first_kept_entry_id: Option<JsValue>,
        /// The context's tokens before the compaction.
        tokens_before: JsValue,
        /// The harness's retained tail of messages.
        retained_tail: Option<JsValue>,
        /// Extra details (pi: the files read and modified).
        details: Option<JsValue>,
        /// The summarizing model's usage.
        usage: Option<JsValue>,
        /// Whether an extension wrote the summary (pi's `fromHook`).
        from_hook: Option<JsValue>,
        /// pi 1.6: the system prompt in force, computed by the store (never given by callers).
        system_message: Option<Box<JsValue>>,
    },
    /// A `branch_summary` entry.
    BranchSummary {
        /// The entry the abandoned branch left from.
        from_id: JsValue,
        /// The summary of the abandoned branch.
        summary: JsValue,
        /// Extra details (pi: the files read and modified).
        details: Option<JsValue>,
        /// The summarizing model's usage.
        usage: Option<JsValue>,
        /// Whether an extension wrote the summary (pi's `fromHook`).
        from_hook: Option<JsValue>,
    },
    /// A `custom` entry (extension data, outside the context).
    Custom {
        /// The extension's name for the entry's kind.
        custom_type: JsValue,
        /// The extension's data.
        data: Option<JsValue>,
    },
    /// A `custom_message` entry (an extension's message in the context).
    CustomMessage {
        /// The extension's name for the message's kind.
        custom_type: JsValue,
        /// The message content (text or blocks).
        content: JsValue,
        /// Whether the interface shows it.
        display: Option<JsValue>,
        /// Extra details for the extension.
        details: Option<JsValue>,
    },
    /// A `label` entry.
    Label {
        /// The entry labelled.
        target_id: String,
        /// The label (none: the label removed).
        label: Option<JsValue>,
    },
    /// A `session_info` entry.
    SessionInfo {
        /// The session's name.
        name: JsValue,
    },
    /// The harness's `leaf` entry: where the leaf moved.
    Leaf {
        /// The new leaf (none: before the first entry).
        target_id: Option<String>,
    },
    /// pi 1.6: `replacement` is `null` (remove the target from the context) or `{content}`.
    ContextEdit {
        /// The entry whose context message is edited.
        target_id: String,
        /// `null` or `{content}`.
        replacement: JsValue,
    },
    /// pi 1.6: usage outside the context; `note` is written only when truthy.
    Usage {
        /// What the usage was for.
        kind: JsValue,
        /// The model's provider.
        provider: JsValue,
        /// The model.
        model: JsValue,
        /// The usage figures.
        usage: JsValue,
        /// A note, written when truthy.
        note: Option<JsValue>,
    },
}

impl NewEntry {
    /// The entry's `type` as written.
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
