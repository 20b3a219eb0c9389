//! One row of a session listing: what pi's `SessionInfo` holds. Written as JSON by
//! [`crate::repo::rows`] alone; the listing cache files it in its own binary form.

use std::borrow::Cow;
use std::path::PathBuf;

use crate::format::js_date::JsDate;
use crate::format::json::JsValue;
use crate::repo::messages_text::MessagesText;

/// A member of pi's `SessionInfo`, named as pi names it: what a client asks for in `fields`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)] // no doc comments: schemars would copy them into protocol/schema.json; protocol.md describes these members
pub enum ListField {
    Path,
    Id,
    Cwd,
    Name,
    ParentSessionPath,
    Created,
    Modified,
    MessageCount,
    FirstMessage,
    AllMessagesText,
}

impl ListField {
    /// Every member, in pi's key order.
    pub const ALL: [ListField; 10] = [
        ListField::Path,
        ListField::Id,
        ListField::Cwd,
        ListField::Name,
        ListField::ParentSessionPath,
        ListField::Created,
        ListField::Modified,
        ListField::MessageCount,
        ListField::FirstMessage,
        ListField::AllMessagesText,
    ];

    /// The member's name in pi's `SessionInfo`.
    pub fn name(self) -> &'static str {
        match self {
            ListField::Path => "path",
            ListField::Id => "id",
            ListField::Cwd => "cwd",
            ListField::Name => "name",
            ListField::ParentSessionPath => "parentSessionPath",
            ListField::Created => "created",
            ListField::Modified => "modified",
            ListField::MessageCount => "messageCount",
            ListField::FirstMessage => "firstMessage",
            ListField::AllMessagesText => "allMessagesText",
        }
    }
}

/// What pi's `SessionManager.list`/`listAll` report for one session file.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionInfo {
    /// The file, spelled as pi spells it (`path.join(dir, name)`).
    pub path: PathBuf,
    /// The header `id`, whatever its type (`None`: the header has no `id`). A string in every
    /// file pi writes.
    pub id: Option<JsValue>,
    /// The header `cwd` if it is a string, else empty.
    pub cwd: String,
    /// The latest `session_info` name, trimmed; `None` when never set or cleared.
    pub name: Option<String>,
    /// The header `parentSession`, whatever its type.
    pub parent_session_path: Option<JsValue>,
    /// `new Date(header.timestamp)`.
    pub created: JsDate,
    /// The last user/assistant activity, else the header time, else the file's mtime.
    pub modified: JsDate,
    /// Every `message` entry, on all branches.
    pub message_count: u64,
    /// The first user text, or `(no messages)`.
    pub first_message: String,
    /// Every non-empty user/assistant text, joined with spaces (what pi's search reads).
    pub all_messages_text: MessagesText,
}

impl SessionInfo {
    /// The session id when it is a string (always, for files pi wrote).
    pub fn id_str(&self) -> Option<Cow<'_, str>> {
        self.id.as_ref().and_then(JsValue::as_str)
    }

    /// What a session picker shows: the name, else the first message.
    pub fn title(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.first_message)
    }
}

#[cfg(test)]
mod tests {
    use super::ListField;

    #[test]
    fn field_names_are_their_wire_names() {
        for field in ListField::ALL {
            let wire = serde_json::to_value(field).unwrap();
            assert_eq!(wire, field.name());
            let back: ListField = serde_json::from_value(wire).unwrap();
            assert_eq!(back, field);
        }
    }
}
