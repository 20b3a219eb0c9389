//! What pi's `buildSessionInfo` reads from one parsed line, and the exact way to get it: from
//! the value `JSON.parse` would return ([`crate::format::json`]). The fast serde path in
//! [`super::fast`] must produce the same facts, or give up and leave the line to this one.

use std::borrow::Cow;

use crate::format::js_date::{JsDate, ParsedDate, parse_date};
use crate::format::json::{self, JsValue};
use crate::format::write::js_trim;

/// The `type` of an entry, for the values the listing cares about (the last three only to
/// notice what only pi 1.6 writes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListedKind {
    Session,
    Message,
    SessionInfo,
    Compaction,
    ContextEdit,
    Usage,
    Other,
}

impl ListedKind {
    pub(crate) fn from_type(name: &str) -> ListedKind {
        match name {
            "session" => ListedKind::Session,
            "message" => ListedKind::Message,
            "session_info" => ListedKind::SessionInfo,
            "compaction" => ListedKind::Compaction,
            "context_edit" => ListedKind::ContextEdit,
            "usage" => ListedKind::Usage,
            _ => ListedKind::Other,
        }
    }
}

/// What in an entry only pi 1.6 writes: the listing of a profile that reads such a file
/// otherwise than pi 1.6 says so. The same four things as
/// the entry reader's `pi16_feature`, with the same texts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pi16Feature {
    /// A `context_edit` entry.
    ContextEdit,
    /// A `usage` entry.
    Usage,
    /// A message of role `system`.
    SystemMessage,
    /// A compaction with a `systemMessage`.
    CompactionSystemMessage,
}

impl Pi16Feature {
    pub(crate) const ALL: [Pi16Feature; 4] = [
        Pi16Feature::ContextEdit,
        Pi16Feature::Usage,
        Pi16Feature::SystemMessage,
        Pi16Feature::CompactionSystemMessage,
    ];

    /// What the store's readers call it in their warnings.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Pi16Feature::ContextEdit => "a context_edit entry",
            Pi16Feature::Usage => "a usage entry",
            Pi16Feature::SystemMessage => "a system-role message",
            Pi16Feature::CompactionSystemMessage => "a compaction carrying a systemMessage",
        }
    }

    /// The feature of an entry of `kind` whose `message.role` is `"system"` (`system_role`)
    /// and whose `systemMessage` is truthy (`system_message`).
    pub(crate) fn of(kind: ListedKind, system_role: bool, system_message: bool) -> Option<Self> {
        match kind {
            ListedKind::ContextEdit => Some(Pi16Feature::ContextEdit),
            ListedKind::Usage => Some(Pi16Feature::Usage),
            ListedKind::Message if system_role => Some(Pi16Feature::SystemMessage),
            ListedKind::Compaction if system_message => Some(Pi16Feature::CompactionSystemMessage),
            _ => None,
        }
    }
}

/// A pi-1.6-only feature of a listed file: where it first occurs, and on how many lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pi16Mark {
    /// What pi 1.6 wrote.
    pub feature: Pi16Feature,
    /// The first line holding it (1-based).
    pub line: u64,
    /// How many lines hold it.
    pub count: u64,
}

/// A field that JavaScript hands to `new Date(value)`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum TimeInput<'a> {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    /// A string, or the string an array or object converts to.
    Text(Cow<'a, str>),
}

impl TimeInput<'_> {
    /// `new Date(value)`.
    pub(crate) fn to_date(&self) -> ParsedDate {
        let utc = |date| ParsedDate { date, local: false };
        match self {
            TimeInput::Undefined => utc(JsDate::INVALID),
            TimeInput::Null | TimeInput::Bool(false) => utc(JsDate::from_millis(0.0)),
            TimeInput::Bool(true) => utc(JsDate::from_millis(1.0)),
            TimeInput::Number(n) => utc(JsDate::from_millis(*n)),
            TimeInput::Text(text) => parse_date(text),
        }
    }

    fn from_value(value: Option<&JsValue>) -> TimeInput<'static> {
        match value {
            None => TimeInput::Undefined,
            Some(JsValue::Null) => TimeInput::Null,
            Some(JsValue::Bool(b)) => TimeInput::Bool(*b),
            Some(JsValue::Number(n)) => TimeInput::Number(*n),
            // Arrays and objects go through ToPrimitive, which is their string form.
            Some(other) => TimeInput::Text(Cow::Owned(other.to_js_string())),
        }
    }
}

/// `session_info.name` as `entry.name?.trim() || undefined` sees it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum NameFact<'a> {
    /// Missing or null: the name is cleared.
    Unset,
    Text(Cow<'a, str>),
    /// Any other type: `.trim` is not a function, so pi drops the whole session.
    NotString,
}

impl NameFact<'_> {
    /// The name after pi's `trim() || undefined`, or `Err` when pi would throw.
    pub(crate) fn resolve(&self) -> Result<Option<String>, ()> {
        match self {
            NameFact::Unset => Ok(None),
            NameFact::Text(text) => {
                let trimmed = js_trim(text);
                Ok((!trimmed.is_empty()).then(|| trimmed.to_string()))
            }
            NameFact::NotString => Err(()),
        }
    }
}

/// A `message` entry's `message` field as the listing reads it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum MessageFact<'a> {
    /// Missing or null: reading `message.role` throws, so pi drops the whole session.
    Nullish,
    /// Counted, but no activity time and no text: not an object, `role` not a string, no
    /// `content` key, or a role other than `user` and `assistant`.
    Inert,
    /// A `user` or `assistant` message with a `content` key.
    Chat {
        user: bool,
        /// `message.timestamp` when it is a number.
        timestamp: Option<f64>,
        content: ContentFact<'a>,
    },
}

/// `extractTextContent(message)`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ContentFact<'a> {
    /// The string content, or the `text` of the text blocks joined with spaces (may be empty).
    Text(Cow<'a, str>),
    /// Neither a string nor an array, or an array holding `null`: pi throws and drops the
    /// whole session.
    Invalid,
}

/// Everything the listing needs from one entry line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct EntryFacts<'a> {
    pub(crate) kind: ListedKind,
    pub(crate) name: NameFact<'a>,
    pub(crate) message: MessageFact<'a>,
    pub(crate) timestamp: TimeInput<'a>,
    pub(crate) pi16: Option<Pi16Feature>,
}

/// The header fields `buildSessionInfo` reports. Kept as values, since pi passes `id` and
/// `parentSession` through whatever their type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HeaderFacts {
    pub(crate) is_session: bool,
    pub(crate) id: Option<JsValue>,
    pub(crate) cwd: Option<String>,
    pub(crate) timestamp: TimeInput<'static>,
    pub(crate) timestamp_is_string: bool,
    pub(crate) parent_session: Option<JsValue>,
}

/// How a line reads: nothing (blank, not JSON, or a falsy value, all skipped by pi), a truthy
/// value that is not an object, or an object.
pub(crate) enum Parsed<T> {
    Skip,
    NotObject,
    Object(T),
}

/// `JSON.parse(line)` exactly, classified.
pub(crate) fn parse_exact(line: &[u8]) -> Parsed<JsValue> {
    match json::parse_bytes(line) {
        Ok(value) if !value.is_truthy() => Parsed::Skip,
        Ok(value @ JsValue::Object(_)) => Parsed::Object(value),
        Ok(_) => Parsed::NotObject,
        Err(_) => Parsed::Skip,
    }
}

pub(crate) fn header_from_value(value: &JsValue) -> HeaderFacts {
    let timestamp = value.get("timestamp");
    HeaderFacts {
        is_session: is_string(value.get("type"), "session"),
        id: value.get("id").cloned(),
        cwd: value
            .get("cwd")
            .and_then(JsValue::as_str)
            .map(Cow::into_owned),
        timestamp: TimeInput::from_value(timestamp),
        timestamp_is_string: matches!(timestamp, Some(JsValue::String(_))),
        parent_session: value.get("parentSession").cloned(),
    }
}

pub(crate) fn entry_from_value(value: &JsValue) -> EntryFacts<'static> {
    let kind = match value.get("type") {
        Some(JsValue::String(s)) => ListedKind::from_type(&s.to_string_lossy()),
        _ => ListedKind::Other,
    };
    let name = match value.get("name") {
        None | Some(JsValue::Null) => NameFact::Unset,
        Some(JsValue::String(s)) => NameFact::Text(Cow::Owned(s.to_string_lossy().into_owned())),
        Some(_) => NameFact::NotString,
    };
    let message = value.get("message");
    let system_role = message.is_some_and(|m| is_string(m.get("role"), "system"));
    let system_message = value.get("systemMessage").is_some_and(JsValue::is_truthy);
    EntryFacts {
        kind,
        name,
        message: message_from_value(message),
        timestamp: TimeInput::from_value(value.get("timestamp")),
        pi16: Pi16Feature::of(kind, system_role, system_message),
    }
}

fn message_from_value(message: Option<&JsValue>) -> MessageFact<'static> {
    let Some(message) = message.filter(|m| !matches!(m, JsValue::Null)) else {
        return MessageFact::Nullish;
    };
    let Some(object) = message.as_object() else {
        return MessageFact::Inert;
    };
    let user = match object.get("role") {
        Some(JsValue::String(role)) => match role.escaped() {
            "user" => true,
            "assistant" => false,
            _ => return MessageFact::Inert,
        },
        _ => return MessageFact::Inert,
    };
    let Some(content) = object.get("content") else {
        return MessageFact::Inert;
    };
    MessageFact::Chat {
        user,
        timestamp: object.get("timestamp").and_then(JsValue::as_f64),
        content: content_from_value(content),
    }
}

fn content_from_value(content: &JsValue) -> ContentFact<'static> {
    match content {
        JsValue::String(s) => ContentFact::Text(Cow::Owned(s.to_string_lossy().into_owned())),
        JsValue::Array(blocks) => {
            let mut texts: Vec<String> = Vec::new();
            for block in blocks {
                match block {
                    // `block.type` on null throws.
                    JsValue::Null => return ContentFact::Invalid,
                    JsValue::Object(_) if is_string(block.get("type"), "text") => {
                        texts.push(match block.get("text") {
                            None | Some(JsValue::Null) => String::new(),
                            Some(text) => text.to_js_string(),
                        });
                    }
                    _ => {}
                }
            }
            ContentFact::Text(Cow::Owned(texts.join(" ")))
        }
        _ => ContentFact::Invalid,
    }
}

fn is_string(value: Option<&JsValue>, expected: &str) -> bool {
    // `expected` needs no escaping, so comparing with the escaped form is exact.
    matches!(value, Some(JsValue::String(s)) if s.escaped() == expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(line: &str) -> EntryFacts<'static> {
        match parse_exact(line.as_bytes()) {
            Parsed::Object(v) => entry_from_value(&v),
            _ => panic!("{line} is not an object"),
        }
    }

    #[test]
    fn text_follows_extract_text_content() {
        let f = entry(
            r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text"},{"type":"text","text":[1,null,[2,{}]]},5]}}"#,
        );
        assert_eq!(
            f.message,
            MessageFact::Chat {
                user: true,
                timestamp: None,
                content: ContentFact::Text("a  1,,2,[object Object]".into())
            }
        );
        let f = entry(r#"{"type":"message","message":{"role":"assistant","content":[null]}}"#);
        assert!(matches!(
            f.message,
            MessageFact::Chat {
                content: ContentFact::Invalid,
                ..
            }
        ));
        let f = entry(r#"{"type":"message","message":{"role":"user","content":null}}"#);
        assert!(matches!(
            f.message,
            MessageFact::Chat {
                content: ContentFact::Invalid,
                ..
            }
        ));
        assert_eq!(
            entry(r#"{"type":"message","message":{"role":"user"}}"#).message,
            MessageFact::Inert
        );
        assert_eq!(
            entry(r#"{"type":"message","message":"x"}"#).message,
            MessageFact::Inert
        );
        assert_eq!(
            entry(r#"{"type":"message","message":null}"#).message,
            MessageFact::Nullish
        );
        assert_eq!(entry(r#"{"type":"message"}"#).message, MessageFact::Nullish);
    }

    #[test]
    fn names_trim_or_fail() {
        let name = |line: &str| entry(line).name.resolve();
        assert_eq!(
            name(r#"{"type":"session_info","name":" a\u00a0"}"#),
            Ok(Some("a".into()))
        );
        assert_eq!(name(r#"{"type":"session_info","name":" "}"#), Ok(None));
        assert_eq!(name(r#"{"type":"session_info","name":null}"#), Ok(None));
        assert_eq!(name(r#"{"type":"session_info","name":1}"#), Err(()));
    }

    #[test]
    fn dates_follow_new_date() {
        let date = |v: &str| {
            TimeInput::from_value(Some(&json::parse(v).unwrap()))
                .to_date()
                .date
                .millis()
        };
        assert_eq!(date("null"), Some(0));
        assert_eq!(date("true"), Some(1));
        assert_eq!(date("1.9"), Some(1));
        assert_eq!(date("[\"2026-03-24\"]"), Some(1774310400000));
        assert_eq!(date("{}"), None);
        assert_eq!(date("1e400"), None);
        assert_eq!(TimeInput::Undefined.to_date().date.millis(), None);
    }

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        assert_eq!(json::number_to_string(1e21), "1e+21");
        assert_eq!(json::number_to_string(-0.0), "0");
        assert_eq!(json::number_to_string(f64::INFINITY), "Infinity");
        assert_eq!(json::number_to_string(0.5), "0.5");
    }
}
