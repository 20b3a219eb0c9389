//! The fast path: the facts of an entry line straight from serde_json, borrowing strings from
//! the line and skipping everything else without building it (tool results, thinking blocks,
//! images). Keys pi writes first (`type` before `message`, `role` before `content`) let most of
//! a line be skipped.
//!
//! Whenever this path cannot be sure to match `JSON.parse` it gives up, and the caller reads the
//! line again exactly ([`super::facts::parse_exact`]): a line that is not an object, a lone
//! surrogate or an out-of-range number (serde_json refuses both), a non-integer number where
//! its value matters (serde_json may round it differently), an array or object where its
//! string form matters, or duplicate keys that change a decision already taken.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::facts::{
    ContentFact, EntryFacts, ListedKind, MessageFact, NameFact, Pi16Feature, TimeInput,
};
use crate::format::entry::raw_truthy;

/// The facts of an object line, or `None` when the exact reader must decide.
pub(crate) fn entry_facts(line: &[u8]) -> Option<EntryFacts<'_>> {
    serde_json::from_slice::<FastEntry<'_>>(line)
        .ok()
        .map(|e| e.0)
}

fn give_up<E: de::Error>() -> E {
    E::custom("left to the exact reader")
}

/// Consumes the rest of a sequence or map whose content does not matter.
fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// The keys the listing reads, at any level.
enum Key {
    Type,
    Name,
    Message,
    Timestamp,
    Role,
    Content,
    Text,
    SystemMessage,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "type" => Key::Type,
                    "name" => Key::Name,
                    "message" => Key::Message,
                    "timestamp" => Key::Timestamp,
                    "role" => Key::Role,
                    "content" => Key::Content,
                    "text" => Key::Text,
                    "systemMessage" => Key::SystemMessage,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_identifier(KeyVisitor)
    }
}

/// Implements the visitor methods of a value that any JSON type may take, each arm saying what
/// that type means for the field.
macro_rules! any_value_visitor {
    (
        $name:ident<$de:lifetime> => $value:ty, $expecting:literal;
        str($s:ident) => $on_str:expr;
        number($n:ident) => $on_integer:expr;
        float => $on_float:expr;
        bool($b:ident) => $on_bool:expr;
        null => $on_null:expr;
        seq($seq:ident) => $on_seq:expr;
        map($map:ident) => $on_map:expr;
    ) => {
        struct $name;
        impl<$de> Visitor<$de> for $name {
            type Value = $value;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str($expecting)
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &$de str) -> Result<$value, E> {
                let $s: Cow<$de, str> = Cow::Borrowed(v);
                $on_str
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<$value, E> {
                let $s: Cow<$de, str> = Cow::Owned(v.to_owned());
                $on_str
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<$value, E> {
                let $n = v as f64;
                $on_integer
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<$value, E> {
                let $n = v as f64;
                $on_integer
            }
            fn visit_f64<E: de::Error>(self, _v: f64) -> Result<$value, E> {
                $on_float
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<$value, E> {
                let $b = v;
                $on_bool
            }
            fn visit_unit<E: de::Error>(self) -> Result<$value, E> {
                $on_null
            }
            fn visit_seq<A: SeqAccess<$de>>(self, $seq: A) -> Result<$value, A::Error> {
                $on_seq
            }
            fn visit_map<A: MapAccess<$de>>(self, $map: A) -> Result<$value, A::Error> {
                $on_map
            }
        }
    };
}

/// A value compared against strings (`type`, `role`): its text if it is a string.
struct MaybeStr<'a>(Option<Cow<'a, str>>);

any_value_visitor! {
    MaybeStrVisitor<'de> => MaybeStr<'de>, "any JSON value";
    str(s) => Ok(MaybeStr(Some(s)));
    number(_n) => Ok(MaybeStr(None));
    float => Ok(MaybeStr(None));
    bool(_b) => Ok(MaybeStr(None));
    null => Ok(MaybeStr(None));
    seq(seq) => drain_seq(seq).map(|_| MaybeStr(None));
    map(map) => drain_map(map).map(|_| MaybeStr(None));
}

impl<'de> Deserialize<'de> for MaybeStr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MaybeStrVisitor)
    }
}

struct NameValue<'a>(NameFact<'a>);

any_value_visitor! {
    NameVisitor<'de> => NameValue<'de>, "a session name";
    str(s) => Ok(NameValue(NameFact::Text(s)));
    number(_n) => Ok(NameValue(NameFact::NotString));
    float => Ok(NameValue(NameFact::NotString));
    bool(_b) => Ok(NameValue(NameFact::NotString));
    null => Ok(NameValue(NameFact::Unset));
    seq(seq) => drain_seq(seq).map(|_| NameValue(NameFact::NotString));
    map(map) => drain_map(map).map(|_| NameValue(NameFact::NotString));
}

impl<'de> Deserialize<'de> for NameValue<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NameVisitor)
    }
}

struct TimeValue<'a>(TimeInput<'a>);

any_value_visitor! {
    TimeVisitor<'de> => TimeValue<'de>, "an entry timestamp";
    str(s) => Ok(TimeValue(TimeInput::Text(s)));
    number(n) => Ok(TimeValue(TimeInput::Number(n)));
    float => Err(give_up());
    bool(b) => Ok(TimeValue(TimeInput::Bool(b)));
    null => Ok(TimeValue(TimeInput::Null));
    seq(_seq) => Err(give_up());
    map(_map) => Err(give_up());
}

impl<'de> Deserialize<'de> for TimeValue<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TimeVisitor)
    }
}

/// `message.timestamp` when it is a number.
struct MessageTime(Option<f64>);

any_value_visitor! {
    MessageTimeVisitor<'de> => MessageTime, "a message timestamp";
    str(_s) => Ok(MessageTime(None));
    number(n) => Ok(MessageTime(Some(n)));
    float => Err(give_up());
    bool(_b) => Ok(MessageTime(None));
    null => Ok(MessageTime(None));
    seq(seq) => drain_seq(seq).map(|_| MessageTime(None));
    map(map) => drain_map(map).map(|_| MessageTime(None));
}

impl<'de> Deserialize<'de> for MessageTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MessageTimeVisitor)
    }
}

/// A text block's `text` as `Array.prototype.join` turns it into a string.
struct TextValue<'a>(Cow<'a, str>);

any_value_visitor! {
    TextVisitor<'de> => TextValue<'de>, "a block text";
    str(s) => Ok(TextValue(s));
    number(n) => Ok(TextValue(Cow::Owned(crate::format::json::number_to_string(n))));
    float => Err(give_up());
    bool(b) => Ok(TextValue(Cow::Borrowed(if b { "true" } else { "false" })));
    null => Ok(TextValue(Cow::Borrowed("")));
    seq(_seq) => Err(give_up());
    map(_map) => Err(give_up());
}

impl<'de> Deserialize<'de> for TextValue<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextVisitor)
    }
}

/// One element of a content array.
enum Block<'a> {
    /// `null`: reading `block.type` throws.
    Null,
    Text(Cow<'a, str>),
    /// Anything else: filtered out.
    Skip,
}

fn block_from_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<Block<'de>, A::Error> {
    let mut is_text = false;
    let mut text: Cow<'de, str> = Cow::Borrowed("");
    while let Some(key) = map.next_key::<Key>()? {
        match key {
            Key::Type => is_text = map.next_value::<MaybeStr>()?.0.as_deref() == Some("text"),
            Key::Text => text = map.next_value::<TextValue>()?.0,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    Ok(if is_text {
        Block::Text(text)
    } else {
        Block::Skip
    })
}

any_value_visitor! {
    BlockVisitor<'de> => Block<'de>, "a content block";
    str(_s) => Ok(Block::Skip);
    number(_n) => Ok(Block::Skip);
    float => Ok(Block::Skip);
    bool(_b) => Ok(Block::Skip);
    null => Ok(Block::Null);
    seq(seq) => drain_seq(seq).map(|_| Block::Skip);
    map(map) => block_from_map(map);
}

impl<'de> Deserialize<'de> for Block<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(BlockVisitor)
    }
}

struct ContentValue<'a>(ContentFact<'a>);

fn content_from_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<ContentValue<'de>, A::Error> {
    let mut texts: Vec<Cow<'de, str>> = Vec::new();
    let mut invalid = false;
    while let Some(block) = seq.next_element::<Block>()? {
        match block {
            Block::Null => invalid = true,
            Block::Text(text) => texts.push(text),
            Block::Skip => {}
        }
    }
    if invalid {
        return Ok(ContentValue(ContentFact::Invalid));
    }
    let text = if texts.len() == 1 {
        texts.pop().unwrap_or_default()
    } else {
        Cow::Owned(texts.join(" "))
    };
    Ok(ContentValue(ContentFact::Text(text)))
}

any_value_visitor! {
    ContentVisitor<'de> => ContentValue<'de>, "message content";
    str(s) => Ok(ContentValue(ContentFact::Text(s)));
    number(_n) => Ok(ContentValue(ContentFact::Invalid));
    float => Ok(ContentValue(ContentFact::Invalid));
    bool(_b) => Ok(ContentValue(ContentFact::Invalid));
    null => Ok(ContentValue(ContentFact::Invalid));
    seq(seq) => content_from_seq(seq);
    map(map) => drain_map(map).map(|_| ContentValue(ContentFact::Invalid));
}

impl<'de> Deserialize<'de> for ContentValue<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ContentVisitor)
    }
}

/// Where `content` stands once the message object has been read.
enum ContentSlot<'a> {
    Absent,
    /// Skipped because the role read so far was not a chat role.
    Skipped,
    Read(ContentFact<'a>),
    /// Seen before `role`: kept raw until the role is known.
    Raw(&'a RawValue),
}

/// `Some(true)` for `user`, `Some(false)` for `assistant`, `None` otherwise.
fn chat_role(role: &Option<Cow<'_, str>>) -> Option<bool> {
    match role.as_deref() {
        Some("user") => Some(true),
        Some("assistant") => Some(false),
        _ => None,
    }
}

/// The message's facts, and whether its `role` is `"system"` (pi 1.6's system prompt).
fn message_from_map<'de, A: MapAccess<'de>>(
    mut map: A,
) -> Result<(MessageFact<'de>, bool), A::Error> {
    // `None`: no `role` key yet; `Some(None)`: a role that is not a string.
    let mut role: Option<Option<Cow<'de, str>>> = None;
    let mut content = ContentSlot::Absent;
    let mut timestamp = None;
    while let Some(key) = map.next_key::<Key>()? {
        match key {
            Key::Role => role = Some(map.next_value::<MaybeStr>()?.0),
            Key::Content => {
                content = match role.as_ref().map(chat_role) {
                    None => ContentSlot::Raw(map.next_value::<&RawValue>()?),
                    Some(Some(_)) => ContentSlot::Read(map.next_value::<ContentValue>()?.0),
                    Some(None) => {
                        map.next_value::<IgnoredAny>()?;
                        ContentSlot::Skipped
                    }
                }
            }
            Key::Timestamp => timestamp = map.next_value::<MessageTime>()?.0,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    let system = matches!(&role, Some(Some(r)) if r == "system");
    let Some(user) = role.as_ref().and_then(chat_role) else {
        return Ok((MessageFact::Inert, system));
    };
    let content = match content {
        ContentSlot::Absent => return Ok((MessageFact::Inert, system)),
        ContentSlot::Read(fact) => fact,
        ContentSlot::Raw(raw) => {
            serde_json::from_str::<ContentValue>(raw.get())
                .map_err(|_| give_up::<A::Error>())?
                .0
        }
        // A later duplicate `role` key turned it into a chat message after all.
        ContentSlot::Skipped => return Err(give_up()),
    };
    let chat = MessageFact::Chat {
        user,
        timestamp,
        content,
    };
    Ok((chat, system))
}

/// A message's facts, and whether it is a `system`-role message.
struct MessageValue<'a>(MessageFact<'a>, bool);

any_value_visitor! {
    MessageVisitor<'de> => MessageValue<'de>, "a message";
    str(_s) => Ok(MessageValue(MessageFact::Inert, false));
    number(_n) => Ok(MessageValue(MessageFact::Inert, false));
    float => Ok(MessageValue(MessageFact::Inert, false));
    bool(_b) => Ok(MessageValue(MessageFact::Inert, false));
    null => Ok(MessageValue(MessageFact::Nullish, false));
    seq(seq) => drain_seq(seq).map(|_| MessageValue(MessageFact::Inert, false));
    map(map) => message_from_map(map).map(|(fact, system)| MessageValue(fact, system));
}

impl<'de> Deserialize<'de> for MessageValue<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MessageVisitor)
    }
}

struct FastEntry<'a>(EntryFacts<'a>);

impl<'de> Deserialize<'de> for FastEntry<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct EntryVisitor;
        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = FastEntry<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an entry object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FastEntry<'de>, A::Error> {
                let mut kind = None;
                let mut name = NameFact::Unset;
                let mut message = MessageFact::Nullish;
                let mut message_skipped = false;
                let mut system_role = false;
                let mut system_message = false;
                let mut timestamp = TimeInput::Undefined;
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Type => {
                            let text = map.next_value::<MaybeStr>()?.0;
                            kind = Some(
                                text.as_deref()
                                    .map_or(ListedKind::Other, ListedKind::from_type),
                            );
                        }
                        Key::Name => name = map.next_value::<NameValue>()?.0,
                        Key::Message if kind.is_some_and(|k| k != ListedKind::Message) => {
                            map.next_value::<IgnoredAny>()?;
                            message_skipped = true;
                        }
                        Key::Message => {
                            let value = map.next_value::<MessageValue>()?;
                            (message, system_role) = (value.0, value.1);
                            message_skipped = false;
                        }
                        Key::SystemMessage => {
                            system_message = raw_truthy(map.next_value::<&RawValue>()?.get());
                        }
                        Key::Timestamp => timestamp = map.next_value::<TimeValue>()?.0,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let kind = kind.unwrap_or(ListedKind::Other);
                if kind == ListedKind::Message && message_skipped {
                    // A later duplicate `type` key made it a message after all.
                    return Err(give_up());
                }
                Ok(FastEntry(EntryFacts {
                    kind,
                    name,
                    message,
                    timestamp,
                    pi16: Pi16Feature::of(kind, system_role, system_message),
                }))
            }
        }
        d.deserialize_map(EntryVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::super::facts::{Parsed, entry_from_value, parse_exact};
    use super::*;

    fn exact(line: &str) -> EntryFacts<'static> {
        match parse_exact(line.as_bytes()) {
            Parsed::Object(v) => entry_from_value(&v),
            _ => panic!("{line} is not an object"),
        }
    }

    /// Either path must give the exact facts, or the fast one must give up.
    fn agree(line: &str) -> bool {
        match entry_facts(line.as_bytes()) {
            Some(fast) => {
                assert_eq!(fast, exact(line), "{line}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn fast_and_exact_paths_agree() {
        for line in [
            r#"{"type":"message","id":"a","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1767225600000}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"x"},{"type":"text","text":"a\nb"},{"type":"text","text":"c"},{"type":"toolCall"}]}}"#,
            r#"{"type":"message","message":{"content":[{"type":"text","text":"late role"}],"role":"user"}}"#,
            r#"{"type":"message","message":{"role":"toolResult","content":[null]}}"#,
            r#"{"type":"message","message":{"role":"user","content":[{"text":7,"type":"text"},{"type":"text","text":true},{"type":"text","text":null}]}}"#,
            r#"{"type":"message","message":{"role":"user","content":{"a":1}}}"#,
            r#"{"type":"message","message":{"role":"user","content":[1,"x",[],null]}}"#,
            r#"{"type":"message","message":{"role":5,"content":"x"}}"#,
            r#"{"type":"message","message":[]}"#,
            r#"{"message":{"role":"user","content":"x"},"type":"message"}"#,
            r#"{"type":"session_info","name":"  n  ","timestamp":12}"#,
            r#"{"type":"session_info","name":{"x":1}}"#,
            r#"{"type":"custom","message":null,"timestamp":null}"#,
            r#"{"type":"mess\u0061ge","message":{"r\u006fle":"user","content":"\u00e9"}}"#,
            r#"{"type":"message","message":{"role":"user","content":"x","timestamp":"s"}}"#,
        ] {
            assert!(agree(line), "fast path gave up on {line}");
        }
    }

    #[test]
    fn pi16_features_are_found_as_the_store_finds_them() {
        use crate::format::entry::{LineRead, read_line};
        for line in [
            r#"{"type":"context_edit","id":"e","targetId":"u","replacement":null}"#,
            r#"{"type":"usage","id":"g","kind":"cache_warm"}"#,
            r#"{"type":"message","id":"s","message":{"role":"system","content":"p"}}"#,
            r#"{"message":{"content":null,"role":"system"},"type":"message"}"#,
            r#"{"type":"compaction","id":"c","systemMessage":{"role":"system"}}"#,
            r#"{"type":"compaction","id":"c","systemMessage":""}"#,
            r#"{"type":"compaction","id":"c","systemMessage":0}"#,
            r#"{"type":"compaction","id":"c","systemMessage":"x","systemMessage":null}"#,
            r#"{"type":"custom","id":"x","message":{"role":"system"},"systemMessage":1}"#,
            r#"{"type":"message","id":"m","message":{"role":"user","content":"x"}}"#,
            r#"{"type":"usage","note":"\ud800"}"#,
        ] {
            let store = match read_line(line.as_bytes()) {
                LineRead::Entry(facts) => facts.pi16_feature(),
                other => panic!("{line}: {other:?}"),
            };
            let exact = exact(line).pi16.map(Pi16Feature::describe);
            assert_eq!(exact, store, "exact path: {line}");
            if let Some(fast) = entry_facts(line.as_bytes()) {
                assert_eq!(
                    fast.pi16.map(Pi16Feature::describe),
                    store,
                    "fast path: {line}"
                );
            }
        }
    }

    #[test]
    fn doubtful_lines_are_left_to_the_exact_reader() {
        for line in [
            r#"{"type":"message","message":{"role":"user","content":"\ud83d"}}"#,
            r#"{"type":"message","message":{"role":"user","content":"x","timestamp":1.5}}"#,
            r#"{"type":"message","timestamp":1e400,"message":{"role":"user","content":"x"}}"#,
            r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":[1]}]}}"#,
            r#"{"type":"x","message":{"role":"user","content":"x"},"type":"message"}"#,
            r#"{"type":"message","message":{"role":"tool","content":"x","role":"user"}}"#,
            r#"[1]"#,
            r#"42"#,
        ] {
            assert!(!agree(line), "fast path should have given up on {line}");
        }
        // Duplicate keys that change nothing already decided stay on the fast path.
        assert!(agree(
            r#"{"type":"message","message":{"role":"user","content":"a","content":"b"}}"#
        ));
    }
}
