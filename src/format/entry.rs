//! What one JSONL line says, as far as the tree and context building need to know.
//!
//! A line is read once, on open, into [`LineFacts`]; its body stays in the file. The fast path
//! borrows the few fields it needs from the line with serde_json; a line serde_json cannot take
//! (duplicate keys, invalid UTF-8, lone surrogates in a needed field, deep nesting) is read
//! again through [`crate::format::json`], which follows `JSON.parse` exactly.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use std::sync::Arc;

pub(crate) use super::entry_id::EntryId;
use super::js_whitespace::is_js_whitespace;
use super::json::{self, JsValue};
use super::time::parse_date_millis;

/// The entry kinds pi knows; anything else is [`Kind::Other`] and inert.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A `session` header line (a second one inside a file is ignored by every query).
    Session,
    Message,
    ThinkingLevelChange,
    ModelChange,
    ActiveToolsChange,
    Compaction,
    BranchSummary,
    Custom,
    CustomMessage,
    Label,
    SessionInfo,
    Leaf,
    /// pi 1.6: a branch-local edit of an earlier entry's model-visible content.
    ContextEdit,
    /// pi 1.6: model-attributed usage outside the context (`kind: "cache_warm"`, ...).
    Usage,
    /// Unknown `type` string, a missing `type`, or a line that is JSON but not an object.
    Other,
}

impl Kind {
    pub(crate) fn from_type(name: &str) -> Kind {
        match name {
            "session" => Kind::Session,
            "message" => Kind::Message,
            "thinking_level_change" => Kind::ThinkingLevelChange,
            "model_change" => Kind::ModelChange,
            "active_tools_change" => Kind::ActiveToolsChange,
            "compaction" => Kind::Compaction,
            "branch_summary" => Kind::BranchSummary,
            "custom" => Kind::Custom,
            "custom_message" => Kind::CustomMessage,
            "label" => Kind::Label,
            "session_info" => Kind::SessionInfo,
            "leaf" => Kind::Leaf,
            "context_edit" => Kind::ContextEdit,
            "usage" => Kind::Usage,
            _ => Kind::Other,
        }
    }

    /// The `type` string pi writes for this kind (`None` for [`Kind::Other`]).
    pub(crate) fn type_name(self) -> Option<&'static str> {
        Some(match self {
            Kind::Session => "session",
            Kind::Message => "message",
            Kind::ThinkingLevelChange => "thinking_level_change",
            Kind::ModelChange => "model_change",
            Kind::ActiveToolsChange => "active_tools_change",
            Kind::Compaction => "compaction",
            Kind::BranchSummary => "branch_summary",
            Kind::Custom => "custom",
            Kind::CustomMessage => "custom_message",
            Kind::Label => "label",
            Kind::SessionInfo => "session_info",
            Kind::Leaf => "leaf",
            Kind::ContextEdit => "context_edit",
            Kind::Usage => "usage",
            Kind::Other => return None,
        })
    }
}

/// `message.role`, for the roles that change how pi treats a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    User,
    Assistant,
    ToolResult,
    /// pi 1.6's system prompt messages (the full prompt, later patches of `sections`).
    System,
    Other,
}

/// What a `context_edit`'s `replacement` is, as pi 1.6's projection tests it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Replacement {
    /// No `replacement` key: pi 1.6 throws when it projects the target.
    Absent,
    /// `null`: the target leaves the context.
    Null,
    /// Anything else: its `content` (read from the body) replaces the target's content.
    Value,
}

/// A reference field (`parentId`, `targetId`) as JavaScript would test it: owning its id as
/// parsing gives it, or borrowing it (`Ref<&str>`) as the index hands it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ref<I = EntryId> {
    Missing,
    Null,
    Id(I),
    /// Present but neither a string nor null.
    Invalid,
}

impl<'a> Ref<&'a str> {
    /// The id, borrowed for as long as the text it points into.
    pub(crate) fn into_id(self) -> Option<&'a str> {
        match self {
            Ref::Id(id) => Some(id),
            _ => None,
        }
    }
}

impl<I: std::ops::Deref<Target = str>> Ref<I> {
    pub(crate) fn id(&self) -> Option<&str> {
        match self {
            Ref::Id(id) => Some(id),
            _ => None,
        }
    }

    /// The same reference owning its id.
    pub(crate) fn to_owned(&self) -> Ref {
        match self {
            Ref::Missing => Ref::Missing,
            Ref::Null => Ref::Null,
            Ref::Id(id) => Ref::Id(EntryId::from(&**id)),
            Ref::Invalid => Ref::Invalid,
        }
    }
}

/// The kind-specific fields the index keeps, as raw JSON texts (`None` = undefined), so that
/// settings are reported exactly as pi reports them, whatever their type. Owning its texts as
/// parsing gives them, or borrowing them (`Payload<&str, &str>`) as the index hands them out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Payload<T = Arc<str>, I = EntryId> {
    None,
    Message {
        role: Role,
        provider: Option<T>,
        model: Option<T>,
    },
    ThinkingLevel(Option<T>),
    ModelChange {
        provider: Option<T>,
        model_id: Option<T>,
    },
    Compaction {
        first_kept: Option<I>,
        retained_tail: bool,
        /// pi 1.6: `systemMessage` is truthy (the compaction projects it before its summary).
        has_system_message: bool,
    },
    ContextEdit(Replacement),
    Label(Option<T>),
    SessionInfo(Option<T>),
}

/// Everything the index keeps of one parsed line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LineFacts {
    pub(crate) kind: Kind,
    /// The `type` value when it is a string pi does not know (kept for tree rows).
    pub(crate) other_type: Option<Box<str>>,
    /// Whether the line is a JSON object (pi keeps truthy non-objects as inert entries).
    pub(crate) is_object: bool,
    /// Whether `type` is a string (the harness requires it).
    pub(crate) has_type: bool,
    /// `id` when it is a string.
    pub(crate) id: Option<EntryId>,
    pub(crate) parent: Ref,
    /// Whether `timestamp` is a non-empty string (the harness requires it).
    pub(crate) has_timestamp: bool,
    /// `Date.parse(timestamp)`: NaN when missing or unparsable.
    pub(crate) timestamp_millis: f64,
    pub(crate) target: Ref,
    pub(crate) payload: Payload,
}

/// Every name [`LineFacts::pi16_feature`] gives (a persisted index names them).
pub(crate) const PI16_FEATURES: [&str; 4] = [
    "a context_edit entry",
    "a usage entry",
    "a system-role message",
    "a compaction carrying a systemMessage",
];

impl LineFacts {
    /// What in this line only pi 1.6 writes (and only the pi-1.6 profile reads as it means),
    /// or `None` when every pi reads the line alike.
    pub(crate) fn pi16_feature(&self) -> Option<&'static str> {
        match (&self.kind, &self.payload) {
            (Kind::ContextEdit, _) => Some(PI16_FEATURES[0]),
            (Kind::Usage, _) => Some(PI16_FEATURES[1]),
            (
                _,
                Payload::Message {
                    role: Role::System, ..
                },
            ) => Some(PI16_FEATURES[2]),
            (
                _,
                Payload::Compaction {
                    has_system_message: true,
                    ..
                },
            ) => Some(PI16_FEATURES[3]),
            _ => None,
        }
    }
}

/// The warning a reader gives for `feature` (a [`LineFacts::pi16_feature`] text) found first on
/// `line` and on `count` lines in all, read in `profile` (any profile but pi-1.6). One text for
/// every reader (open, check, context, listings), so a client can match on it.
pub(crate) fn pi16_warning(
    profile: super::profile::Profile,
    feature: &str,
    line: u64,
    count: u64,
) -> String {
    let more = match count {
        0 | 1 => String::new(),
        n => format!(" ({} more line(s) like it)", n - 1),
    };
    format!(
        "line {line}: {feature}, which only pi 1.6 writes{more}; profile {} does not read it as \
         pi 1.6 does: use profile {} to see what pi 1.6 shows",
        profile.name(),
        super::profile::Profile::reading_pi16_entries().name()
    )
}

/// How a physical line reads.
#[derive(Debug)]
pub(crate) enum LineRead {
    /// Empty after JavaScript's `trim()`: skipped by both readers.
    Blank,
    /// Not JSON, or JSON that `JSON.parse` returns as a falsy value (`null`, `0`, `false`, `""`),
    /// which the SessionManager drops too.
    Skipped(LineSkip),
    Entry(LineFacts),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LineSkip {
    NotJson(json::JsonError),
    Falsy,
}

impl std::fmt::Display for LineSkip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineSkip::NotJson(e) => write!(f, "is not valid JSON ({e})"),
            LineSkip::Falsy => f.write_str("is a falsy JSON value"),
        }
    }
}

/// Reads one physical line (without its `\n`).
pub(crate) fn read_line(line: &[u8]) -> LineRead {
    if is_blank(line) {
        return LineRead::Blank;
    }
    // serde_json skips the fields it does not need without a depth limit, so a line nested
    // deeper than the exact reader accepts would pass here and fail every later read of its
    // body: such a line takes the exact path, which refuses it by name.
    if !nests_deeper_than(line, json::MAX_DEPTH)
        && let Some(facts) = fast_facts(line)
    {
        return LineRead::Entry(facts);
    }
    match json::parse_bytes(line) {
        Err(e) => LineRead::Skipped(LineSkip::NotJson(e)),
        Ok(value) if !value.is_truthy() => LineRead::Skipped(LineSkip::Falsy),
        Ok(value) => LineRead::Entry(facts_from_value(&value)),
    }
}

/// Whether a line that does not parse is a torn write: the beginning of a JSON text cut short
/// (by a crash, a full disk, or a writer still at work), rather than text that goes wrong in
/// its middle. The reader ran out of input, or failed within the last token.
pub(crate) fn is_torn(line: &[u8], read: &LineRead) -> bool {
    let LineRead::Skipped(LineSkip::NotJson(e)) = read else {
        return false;
    };
    if line.first().is_none_or(|b| *b != b'{' && *b != b'[') {
        return false;
    }
    let text = String::from_utf8_lossy(line);
    let rest = text.get(e.offset..).unwrap_or("");
    match e.reason {
        "unexpected end of input" | "unterminated string" => true,
        // Cut inside `true`, `false` or `null`.
        "unexpected token" => {
            !rest.is_empty()
                && ["true", "false", "null"]
                    .iter()
                    .any(|w| w.starts_with(rest))
        }
        // Cut inside an escape (`\`, `\u12`).
        "invalid escape" => rest == "\\",
        "invalid unicode escape" => rest.len() < 4 && rest.bytes().all(|b| b.is_ascii_hexdigit()),
        // Cut after `-`, `1.`, `1e`, or before a `:`, key or closing bracket.
        _ => rest.is_empty(),
    }
}

/// Whether brackets nest deeper than `limit` outside strings. Cheap for ordinary lines: the
/// exact scan runs only when the line has more than `limit` opening brackets at all.
pub(crate) fn nests_deeper_than(line: &[u8], limit: usize) -> bool {
    if memchr::memchr2_iter(b'[', b'{', line)
        .take(limit + 1)
        .count()
        <= limit
    {
        return false;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in line {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// JavaScript's `String.prototype.trim` whitespace, on a UTF-8 line (invalid bytes are not blank).
pub(crate) fn is_blank(line: &[u8]) -> bool {
    match line.first() {
        None => true,
        Some(b'{') => false,
        Some(_) => match std::str::from_utf8(line) {
            Ok(text) => text.chars().all(is_js_whitespace),
            Err(_) => false,
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Fast path: borrow the needed fields as raw JSON text.

/// Deserializes a present field as its raw text, so that `null` and missing stay distinct.
fn raw<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct FastLine<'a> {
    #[serde(rename = "type", default, borrow, deserialize_with = "raw")]
    kind: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "raw")]
    id: Option<&'a RawValue>,
    #[serde(rename = "parentId", default, borrow, deserialize_with = "raw")]
    parent_id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "raw")]
    timestamp: Option<&'a RawValue>,
    #[serde(rename = "targetId", default, borrow, deserialize_with = "raw")]
    target_id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "raw")]
    label: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "raw")]
    name: Option<&'a RawValue>,
    #[serde(rename = "thinkingLevel", default, borrow, deserialize_with = "raw")]
    thinking_level: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "raw")]
    provider: Option<&'a RawValue>,
    #[serde(rename = "modelId", default, borrow, deserialize_with = "raw")]
    model_id: Option<&'a RawValue>,
    #[serde(rename = "firstKeptEntryId", default, borrow, deserialize_with = "raw")]
    first_kept_entry_id: Option<&'a RawValue>,
    #[serde(rename = "retainedTail", default, borrow, deserialize_with = "raw")]
    retained_tail: Option<&'a RawValue>,
    #[serde(rename = "systemMessage", default, borrow, deserialize_with = "raw")]
    system_message: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "raw")]
    replacement: Option<&'a RawValue>,
    #[serde(default, borrow)]
    message: Option<FastMessage<'a>>,
}

/// `message` when it is an object; anything else (null included) takes the exact path.
#[derive(Deserialize)]
struct FastMessage<'a> {
    #[serde(default, borrow, deserialize_with = "raw")]
    role: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "raw")]
    provider: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "raw")]
    model: Option<&'a RawValue>,
}

/// The fields facts are made of, as raw JSON texts, from either path.
#[derive(Default)]
struct Fields<'a> {
    is_object: bool,
    kind: Option<Cow<'a, str>>,
    id: Option<Cow<'a, str>>,
    parent_id: Option<Cow<'a, str>>,
    timestamp: Option<Cow<'a, str>>,
    target_id: Option<Cow<'a, str>>,
    label: Option<Cow<'a, str>>,
    name: Option<Cow<'a, str>>,
    thinking_level: Option<Cow<'a, str>>,
    provider: Option<Cow<'a, str>>,
    model_id: Option<Cow<'a, str>>,
    first_kept_entry_id: Option<Cow<'a, str>>,
    retained_tail: Option<Cow<'a, str>>,
    system_message: Option<Cow<'a, str>>,
    replacement: Option<Cow<'a, str>>,
    message_is_object: bool,
    role: Option<Cow<'a, str>>,
    message_provider: Option<Cow<'a, str>>,
    message_model: Option<Cow<'a, str>>,
}

fn fast_facts(line: &[u8]) -> Option<LineFacts> {
    fn text(v: Option<&RawValue>) -> Option<Cow<'_, str>> {
        v.map(|r| Cow::Borrowed(r.get()))
    }
    if line.first() != Some(&b'{') {
        return None;
    }
    let fast: FastLine<'_> = serde_json::from_slice(line).ok()?;
    let (message_is_object, role, message_provider, message_model) = match &fast.message {
        Some(m) => (true, text(m.role), text(m.provider), text(m.model)),
        None => (false, None, None, None),
    };
    let fields = Fields {
        is_object: true,
        kind: text(fast.kind),
        id: text(fast.id),
        parent_id: text(fast.parent_id),
        timestamp: text(fast.timestamp),
        target_id: text(fast.target_id),
        label: text(fast.label),
        name: text(fast.name),
        thinking_level: text(fast.thinking_level),
        provider: text(fast.provider),
        model_id: text(fast.model_id),
        first_kept_entry_id: text(fast.first_kept_entry_id),
        retained_tail: text(fast.retained_tail),
        system_message: text(fast.system_message),
        replacement: text(fast.replacement),
        message_is_object,
        role,
        message_provider,
        message_model,
    };
    // A needed string holding an escape serde_json cannot decode takes the exact path.
    facts_from_fields(&fields)
}

/// Facts of a parsed value (the exact path).
pub(crate) fn facts_from_value(value: &JsValue) -> LineFacts {
    let Some(object) = value.as_object() else {
        return facts_from_fields(&Fields::default()).unwrap_or_else(inert_facts);
    };
    let text = |key: &str| object.get(key).map(|v| Cow::Owned(v.stringify()));
    let message = object.get("message").and_then(JsValue::as_object);
    let message_text = |key: &str| {
        message
            .and_then(|m| m.get(key))
            .map(|v| Cow::Owned(v.stringify()))
    };
    let fields = Fields {
        is_object: true,
        kind: text("type"),
        id: text("id"),
        parent_id: text("parentId"),
        timestamp: text("timestamp"),
        target_id: text("targetId"),
        label: text("label"),
        name: text("name"),
        thinking_level: text("thinkingLevel"),
        provider: text("provider"),
        model_id: text("modelId"),
        first_kept_entry_id: text("firstKeptEntryId"),
        retained_tail: text("retainedTail"),
        system_message: text("systemMessage"),
        replacement: text("replacement"),
        message_is_object: message.is_some(),
        role: message_text("role"),
        message_provider: message_text("provider"),
        message_model: message_text("model"),
    };
    facts_from_fields(&fields).unwrap_or_else(inert_facts)
}

fn inert_facts() -> LineFacts {
    LineFacts {
        kind: Kind::Other,
        other_type: None,
        is_object: false,
        has_type: false,
        id: None,
        parent: Ref::Missing,
        has_timestamp: false,
        timestamp_millis: f64::NAN,
        target: Ref::Missing,
        payload: Payload::None,
    }
}

/// The text of a raw JSON string; `None` for other values. `Err` when the string holds an
/// escape that does not decode to Unicode (a lone surrogate): the caller takes the exact path.
fn raw_string(raw: &str) -> Result<Option<Cow<'_, str>>, ()> {
    if !raw.starts_with('"') {
        return Ok(None);
    }
    let body = &raw[1..raw.len() - 1];
    if !body.contains('\\') {
        return Ok(Some(Cow::Borrowed(body)));
    }
    match json::parse(raw) {
        Ok(JsValue::String(s)) => s
            .to_str()
            .map(|t| Some(Cow::Owned(t.into_owned())))
            .ok_or(()),
        _ => Err(()),
    }
}

fn owned_string(raw: &Option<Cow<'_, str>>) -> Result<Option<Box<str>>, ()> {
    match raw {
        None => Ok(None),
        Some(r) => Ok(raw_string(r)?.map(|s| s.into_owned().into_boxed_str())),
    }
}

fn entry_id(raw: &Option<Cow<'_, str>>) -> Result<Option<EntryId>, ()> {
    match raw {
        None => Ok(None),
        Some(r) => Ok(raw_string(r)?.map(|s| EntryId::from(&*s))),
    }
}

fn reference(raw: &Option<Cow<'_, str>>) -> Result<Ref, ()> {
    Ok(match raw.as_deref() {
        None => Ref::Missing,
        Some("null") => Ref::Null,
        Some(r) => match raw_string(r)? {
            Some(id) => Ref::Id(EntryId::from(&*id)),
            None => Ref::Invalid,
        },
    })
}

fn raw_box(raw: &Option<Cow<'_, str>>) -> Option<Arc<str>> {
    raw.as_deref().map(Arc::from)
}

/// JavaScript truthiness of a raw JSON text.
pub(crate) fn raw_truthy(raw: &str) -> bool {
    match raw.as_bytes().first() {
        Some(b'[' | b'{' | b't') => true,
        Some(b'"') => raw.len() > 2,
        Some(b'-' | b'0'..=b'9') => raw.parse::<f64>().is_ok_and(|n| n != 0.0 && !n.is_nan()),
        _ => false,
    }
}

fn facts_from_fields(f: &Fields<'_>) -> Option<LineFacts> {
    let type_name = owned_string(&f.kind).ok()?;
    let kind = type_name.as_deref().map_or(Kind::Other, Kind::from_type);
    let other_type = if kind == Kind::Other {
        type_name.clone()
    } else {
        None
    };
    let payload = match kind {
        Kind::Message => {
            let role = match f.role.as_deref() {
                Some("\"user\"") => Role::User,
                Some("\"assistant\"") => Role::Assistant,
                Some("\"toolResult\"") => Role::ToolResult,
                Some("\"system\"") => Role::System,
                _ => Role::Other,
            };
            if !f.message_is_object {
                // `message` missing or not an object: pi's `entry.message.role` would throw on
                // null/undefined; treat it as a message without a role.
                Payload::Message {
                    role: Role::Other,
                    provider: None,
                    model: None,
                }
            } else if role == Role::Assistant {
                Payload::Message {
                    role,
                    provider: raw_box(&f.message_provider),
                    model: raw_box(&f.message_model),
                }
            } else {
                Payload::Message {
                    role,
                    provider: None,
                    model: None,
                }
            }
        }
        Kind::ThinkingLevelChange => Payload::ThinkingLevel(raw_box(&f.thinking_level)),
        Kind::ModelChange => Payload::ModelChange {
            provider: raw_box(&f.provider),
            model_id: raw_box(&f.model_id),
        },
        Kind::Compaction => Payload::Compaction {
            first_kept: entry_id(&f.first_kept_entry_id).ok()?,
            retained_tail: f.retained_tail.as_deref().is_some_and(raw_truthy),
            has_system_message: f.system_message.as_deref().is_some_and(raw_truthy),
        },
        Kind::ContextEdit => Payload::ContextEdit(match f.replacement.as_deref() {
            None => Replacement::Absent,
            Some("null") => Replacement::Null,
            Some(_) => Replacement::Value,
        }),
        Kind::Label => Payload::Label(raw_box(&f.label)),
        Kind::SessionInfo => Payload::SessionInfo(raw_box(&f.name)),
        _ => Payload::None,
    };
    let timestamp = owned_string(&f.timestamp).ok()?;
    Some(LineFacts {
        kind,
        other_type,
        is_object: f.is_object,
        has_type: type_name.is_some(),
        id: entry_id(&f.id).ok()?,
        parent: reference(&f.parent_id).ok()?,
        has_timestamp: timestamp.as_deref().is_some_and(|t| !t.is_empty()),
        timestamp_millis: timestamp.as_deref().map_or(f64::NAN, parse_date_millis),
        target: reference(&f.target_id).ok()?,
        payload,
    })
}

// ---------------------------------------------------------------------------------------------
// Lean reads: a few top-level fields of a line, the rest skipped without building it.

/// The raw JSON texts of the top-level fields `keys` of an object line (the last occurrence
/// when a key repeats, as `JSON.parse` keeps), skipping every other field without building a
/// tree of it, so a query that needs a few fields of a 50 MB line costs no more than the line.
/// `None` when the line is not an object serde_json can read (invalid UTF-8 and the like):
/// the caller takes the exact path.
pub(crate) fn raw_fields<'a, const N: usize>(
    line: &'a str,
    keys: [&str; N],
) -> Option<[Option<&'a RawValue>; N]> {
    if !line.trim_start().starts_with('{') || nests_deeper_than(line.as_bytes(), json::MAX_DEPTH) {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(line);
    let fields =
        serde::Deserializer::deserialize_map(&mut de, FieldsVisitor { keys: &keys }).ok()?;
    de.end().ok()?;
    Some(fields)
}

struct FieldsVisitor<'k, const N: usize> {
    keys: &'k [&'k str; N],
}

impl<'de, const N: usize> serde::de::Visitor<'de> for FieldsVisitor<'_, N> {
    type Value = [Option<&'de RawValue>; N];

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = [None; N];
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match self.keys.iter().position(|k| *k == key) {
                Some(i) => out[i] = Some(map.next_value::<&'de RawValue>()?),
                None => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}

/// The values of the top-level fields `keys` of a line as `JSON.parse` gives them (`None`
/// for a missing field), building only those fields. Falls back to parsing the whole line
/// when the lean read cannot take it; `Err` when the line is not JSON at all.
pub(crate) fn field_values<const N: usize>(
    line: &str,
    keys: [&str; N],
) -> Result<[Option<JsValue>; N], json::JsonError> {
    if let Some(raws) = raw_fields(line, keys) {
        let mut out: [Option<JsValue>; N] = std::array::from_fn(|_| None);
        for (slot, raw) in out.iter_mut().zip(raws) {
            if let Some(raw) = raw {
                *slot = Some(json::parse(raw.get())?);
            }
        }
        return Ok(out);
    }
    let value = json::parse(line)?;
    Ok(keys.map(|k| value.get(k).cloned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(line: &str) -> LineFacts {
        match read_line(line.as_bytes()) {
            LineRead::Entry(f) => f,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn reads_the_common_fields_of_every_kind() {
        let f = facts(
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"m"}}"#,
        );
        assert_eq!(f.kind, Kind::Message);
        assert_eq!(f.id.as_deref(), Some("a1"));
        assert_eq!(f.parent, Ref::Null);
        assert_eq!(f.timestamp_millis, 1_735_689_600_000.0);
        assert_eq!(
            f.payload,
            Payload::Message {
                role: Role::Assistant,
                provider: Some("\"p\"".into()),
                model: Some("\"m\"".into())
            }
        );
        let f =
            facts(r#"{"type":"label","id":"b","parentId":"a1","timestamp":"t","targetId":"a1"}"#);
        assert_eq!(
            (f.kind, f.target.id(), f.payload),
            (Kind::Label, Some("a1"), Payload::Label(None))
        );
        let f = facts(
            r#"{"type":"compaction","id":"c","parentId":"b","retainedTail":[],"firstKeptEntryId":"a1"}"#,
        );
        assert_eq!(
            f.payload,
            Payload::Compaction {
                first_kept: Some("a1".into()),
                retained_tail: true,
                has_system_message: false
            }
        );
        let f = facts(r#"{"type":"weird","id":"d"}"#);
        assert_eq!(
            (f.kind, f.other_type.as_deref(), f.parent),
            (Kind::Other, Some("weird"), Ref::Missing)
        );
    }

    #[test]
    fn reads_what_pi_16_adds() {
        let f = facts(
            r#"{"type":"context_edit","id":"e","parentId":"a","targetId":"u","replacement":null}"#,
        );
        assert_eq!(
            (f.kind, f.target.id(), &f.payload),
            (
                Kind::ContextEdit,
                Some("u"),
                &Payload::ContextEdit(Replacement::Null)
            )
        );
        assert_eq!(f.pi16_feature(), Some("a context_edit entry"));
        let f = facts(
            r#"{"type":"context_edit","id":"e","targetId":"u","replacement":{"content":"x"}}"#,
        );
        assert_eq!(f.payload, Payload::ContextEdit(Replacement::Value));
        let f = facts(r#"{"type":"context_edit","id":"e","targetId":"u"}"#);
        assert_eq!(f.payload, Payload::ContextEdit(Replacement::Absent));
        let f = facts(r#"{"type":"usage","id":"g","kind":"cache_warm","usage":{}}"#);
        assert_eq!(
            (f.kind, f.pi16_feature()),
            (Kind::Usage, Some("a usage entry"))
        );
        let f = facts(r#"{"type":"message","id":"s","message":{"role":"system","content":"p"}}"#);
        assert_eq!(f.pi16_feature(), Some("a system-role message"));
        let f = facts(r#"{"type":"compaction","id":"c","systemMessage":{"role":"system"}}"#);
        assert_eq!(
            f.pi16_feature(),
            Some("a compaction carrying a systemMessage")
        );
        // Only a truthy systemMessage is projected.
        let f = facts(r#"{"type":"compaction","id":"c","systemMessage":null}"#);
        assert_eq!(f.pi16_feature(), None);
        // The exact path reads the same facts.
        let f =
            facts(r#"{"type":"context_edit","id":"e","id":"e2","targetId":"u","replacement":5}"#);
        assert_eq!(
            (f.id.as_deref(), f.payload),
            (Some("e2"), Payload::ContextEdit(Replacement::Value))
        );
    }

    #[test]
    fn lines_serde_cannot_take_follow_json_parse() {
        // Duplicate key: the last value wins.
        let f = facts(r#"{"type":"message","id":"x","id":"y","parentId":5}"#);
        assert_eq!((f.id.as_deref(), f.parent), (Some("y"), Ref::Invalid));
        // Lone surrogate in a needed field.
        let f = facts(r#"{"type":"session_info","id":"n","name":"a\ud83d"}"#);
        assert_eq!(f.payload, Payload::SessionInfo(Some("\"a\\ud83d\"".into())));
        // Lone surrogate in a skipped field stays on the fast path.
        let f =
            facts(r#"{"type":"message","id":"m","message":{"role":"user","content":"\ud83d"}}"#);
        assert_eq!(
            f.payload,
            Payload::Message {
                role: Role::User,
                provider: None,
                model: None
            }
        );
        // Non-objects are inert entries; falsy values are skipped.
        assert_eq!(facts("42").kind, Kind::Other);
        assert!(!facts("[1]").is_object);
        assert!(matches!(
            read_line(b"0"),
            LineRead::Skipped(LineSkip::Falsy)
        ));
        assert!(matches!(
            read_line(b"{\"a\":"),
            LineRead::Skipped(LineSkip::NotJson(_))
        ));
        assert!(matches!(read_line(b" \t\r"), LineRead::Blank));
        assert!(matches!(
            read_line("\u{a0}\u{feff}".as_bytes()),
            LineRead::Blank
        ));
    }

    #[test]
    fn lean_reads_take_the_named_fields_only() {
        let line = r#"{"type":"custom","data":[[1],{"a":[2]}],"customType":"x","customType":"y"}"#;
        let [kind, custom, missing] = field_values(line, ["type", "customType", "nope"]).unwrap();
        assert_eq!(kind, Some(JsValue::from("custom")));
        assert_eq!(custom, Some(JsValue::from("y")), "the last duplicate wins");
        assert_eq!(missing, None);
        // Lines serde_json cannot read take the exact path.
        let [name] = field_values(r#"{"name":"a\ud83d","name":"b"}"#, ["name"]).unwrap();
        assert_eq!(name, Some(JsValue::from("b")));
        assert!(field_values("{\"a\":", ["a"]).is_err());
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(1001), "]".repeat(1001));
        assert!(raw_fields(&deep, ["a"]).is_none());
        assert!(matches!(read_line(deep.as_bytes()), LineRead::Skipped(_)));
    }

    #[test]
    fn torn_lines_are_told_from_garbage() {
        let line = r#"{"type":"message","id":"a\u00e9","n":-1.5e3,"ok":true,"x":null}"#;
        for cut in 1..line.len() {
            let prefix = &line.as_bytes()[..cut];
            let read = read_line(prefix);
            assert!(
                is_torn(prefix, &read),
                "cut at {cut}: {:?}",
                String::from_utf8_lossy(prefix)
            );
        }
        for garbage in [
            r#"{"type":"message"]"#,
            r#"{"a":tru}"#,
            "hello",
            r#"{"a":1}}"#,
        ] {
            let read = read_line(garbage.as_bytes());
            assert!(!is_torn(garbage.as_bytes(), &read), "{garbage}");
        }
    }

    #[test]
    fn truthiness_of_raw_values() {
        for (raw, truthy) in [
            ("[]", true),
            ("{}", true),
            ("null", false),
            ("0", false),
            ("-0.0", false),
            ("\"\"", false),
            ("\" \"", true),
            ("false", false),
            ("1e-9", true),
        ] {
            assert_eq!(raw_truthy(raw), truthy, "{raw}");
        }
    }
}
