//! One row of a session listing: what pi's `SessionInfo` holds.

use std::borrow::Cow;
use std::path::PathBuf;

use crate::format::js_date::JsDate;
use crate::format::json::{JsObject, JsString, JsValue};
use crate::repo::messages_text::MessagesText;

/// A member of pi's `SessionInfo`, named as pi names it: what a client asks for in `fields`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
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

    /// The row a client receives: [`SessionInfo::to_js_value`] as serde JSON, built by moving
    /// the texts rather than escaping and unescaping them (a listing's rows hold megabytes of
    /// message text), with only `fields` when given (in pi's key order, whatever their order).
    pub fn into_json(self, fields: Option<&[ListField]>) -> serde_json::Value {
        use serde_json::Value;
        let wanted = |field: ListField| fields.is_none_or(|f| f.contains(&field));
        let date = |d: JsDate| d.to_iso_string().map_or(Value::Null, Value::from);
        let mut row = serde_json::Map::new();
        if wanted(ListField::Path) {
            let path = self.path.into_os_string();
            let path = path
                .into_string()
                .unwrap_or_else(|p| p.to_string_lossy().into_owned());
            row.insert("path".into(), Value::String(path));
        }
        if let Some(id) = self.id.filter(|_| wanted(ListField::Id)) {
            row.insert("id".into(), id.to_serde());
        }
        if wanted(ListField::Cwd) {
            row.insert("cwd".into(), Value::String(self.cwd));
        }
        if let Some(name) = self.name.filter(|_| wanted(ListField::Name)) {
            row.insert("name".into(), Value::String(name));
        }
        if let Some(parent) = self
            .parent_session_path
            .filter(|_| wanted(ListField::ParentSessionPath))
        {
            row.insert("parentSessionPath".into(), parent.to_serde());
        }
        if wanted(ListField::Created) {
            row.insert("created".into(), date(self.created));
        }
        if wanted(ListField::Modified) {
            row.insert("modified".into(), date(self.modified));
        }
        if wanted(ListField::MessageCount) {
            row.insert("messageCount".into(), Value::from(self.message_count));
        }
        if wanted(ListField::FirstMessage) {
            row.insert("firstMessage".into(), Value::String(self.first_message));
        }
        if wanted(ListField::AllMessagesText) {
            row.insert(
                "allMessagesText".into(),
                Value::String(self.all_messages_text.into_string()),
            );
        }
        Value::Object(row)
    }

    /// [`SessionInfo::to_js_value`] with only `fields` (pi's key order).
    pub fn to_js_value_fields(&self, fields: &[ListField]) -> JsValue {
        let full = self.to_js_value();
        let JsValue::Object(object) = full else {
            return full;
        };
        let names: Vec<String> = fields
            .iter()
            .map(|f| {
                serde_json::to_value(f)
                    .map_or_else(|_| String::new(), |v| v.as_str().unwrap_or("").to_string())
            })
            .collect();
        JsValue::Object(
            object
                .into_iter()
                .filter(|(key, _)| names.iter().any(|n| key.escaped() == n))
                .collect(),
        )
    }

    /// The object `JSON.stringify(info)` writes for pi's `SessionInfo`: same keys, same order,
    /// dates as ISO strings (`null` when invalid), undefined fields left out.
    pub fn to_js_value(&self) -> JsValue {
        let mut object = JsObject::new();
        let mut put = |key: &str, value: JsValue| {
            object.insert(JsString::new(key), value);
        };
        let date = |d: JsDate| d.to_iso_string().map_or(JsValue::Null, JsValue::from);
        put("path", JsValue::from(self.path.to_string_lossy().as_ref()));
        if let Some(id) = &self.id {
            put("id", id.clone());
        }
        put("cwd", JsValue::from(self.cwd.as_str()));
        if let Some(name) = &self.name {
            put("name", JsValue::from(name.as_str()));
        }
        if let Some(parent) = &self.parent_session_path {
            put("parentSessionPath", parent.clone());
        }
        put("created", date(self.created));
        put("modified", date(self.modified));
        put("messageCount", JsValue::Number(self.message_count as f64));
        put("firstMessage", JsValue::from(self.first_message.as_str()));
        put(
            "allMessagesText",
            JsValue::from(self.all_messages_text.as_str()),
        );
        JsValue::Object(object)
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
