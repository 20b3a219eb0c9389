//! A line read for what the stats count of it ([`LineUsage`]) in one pass that builds no value
//! tree: the `toolCall` blocks of `message.content`, `message.usage` and the entry's `usage`.
//! Numbers are taken as their text and read by the exact reader. Anything this reader cannot
//! answer exactly as `JSON.parse` would (a duplicate key, a lone surrogate escape, a `usage`
//! or a `message` that is not an object) gives `None`, and the caller takes the exact path.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::format::json::{self, JsValue};

use super::stats::{LineUsage, Usage};

/// What the stats count of a line, or `None` when only the exact reader can tell it.
pub(crate) fn line_usage(line: &str) -> Option<LineUsage> {
    // Without a `\u` escape every key and string is written as it reads: a line with no
    // `"usage"` and no `toolCall` text carries nothing the stats count (a tool's output, a
    // user's message), found at memchr speed instead of by parsing it.
    let bytes = line.as_bytes();
    if memchr::memmem::find(bytes, b"\\u").is_none()
        && memchr::memmem::find(bytes, b"\"usage\"").is_none()
        && memchr::memmem::find(bytes, b"toolCall").is_none()
    {
        return Some(LineUsage::default());
    }
    let entry: Entry<'_> = serde_json::from_str(line).ok()?;
    let (tool_calls, message_usage) = match entry.message {
        Some(Object(message)) => (
            message.content.0,
            match message.usage {
                Some(usage) => Some(usage.0.read()?),
                None => None,
            },
        ),
        None => (0, None),
    };
    Some(LineUsage {
        tool_calls,
        message_usage,
        entry_usage: match entry.usage {
            Some(usage) => Some(usage.0.read()?),
            None => None,
        },
    })
}

#[derive(Deserialize)]
struct Entry<'a> {
    /// Missing and `null` alike: no usage, no blocks.
    #[serde(default, borrow)]
    message: Option<Object<Message<'a>>>,
    #[serde(default, borrow)]
    usage: Option<Object<LeanUsage<'a>>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(default)]
    content: ToolCalls,
    #[serde(default, borrow)]
    usage: Option<Object<LeanUsage<'a>>>,
}

/// A struct read from a JSON object only (serde would also fill one from an array by
/// position, which is not what `JSON.parse` and a property read give): anything else is an
/// error, and the line takes the exact path.
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Object)
            }
        }
        deserializer.deserialize_any(ObjectVisitor(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct LeanUsage<'a> {
    #[serde(default, borrow)]
    input: Option<&'a RawValue>,
    #[serde(default, borrow)]
    output: Option<&'a RawValue>,
    #[serde(default, borrow, rename = "cacheRead")]
    cache_read: Option<&'a RawValue>,
    #[serde(default, borrow, rename = "cacheWrite")]
    cache_write: Option<&'a RawValue>,
    #[serde(default, borrow)]
    cost: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Cost<'a> {
    #[serde(default, borrow)]
    total: Option<&'a RawValue>,
}

impl LeanUsage<'_> {
    /// The figures; `None` when `cost` is neither an object nor `null`/missing-like text the
    /// exact path reads the same.
    fn read(self) -> Option<Usage> {
        let number = |raw: Option<&RawValue>| -> Option<f64> {
            let Some(raw) = raw else { return Some(0.0) };
            // Only numbers count; the exact reader gives their value.
            match raw.get().as_bytes().first() {
                Some(b'-' | b'0'..=b'9') => json::parse(raw.get()).ok()?.as_f64(),
                _ => Some(0.0),
            }
        };
        let cost = match self.cost {
            None => 0.0,
            Some(raw) => match raw.get().as_bytes().first() {
                Some(b'{') => number(
                    serde_json::from_str::<Object<Cost<'_>>>(raw.get())
                        .ok()?
                        .0
                        .total,
                )?,
                // `cost.total` of a string, a number or an array is undefined; `null` has none.
                Some(b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' | b'[') => 0.0,
                _ => return None,
            },
        };
        Some(Usage {
            input: number(self.input)?,
            output: number(self.output)?,
            cache_read: number(self.cache_read)?,
            cache_write: number(self.cache_write)?,
            cost,
        })
    }
}

/// How many blocks of `message.content` have `type: "toolCall"` (0 unless it is an array).
#[derive(Default)]
struct ToolCalls(u64);

impl<'de> Deserialize<'de> for ToolCalls {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ToolCallsVisitor)
    }
}

struct ToolCallsVisitor;

impl<'de> Visitor<'de> for ToolCallsVisitor {
    type Value = ToolCalls;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<ToolCalls, E> {
        Ok(ToolCalls(0))
    }

    fn visit_i64<E>(self, _: i64) -> Result<ToolCalls, E> {
        Ok(ToolCalls(0))
    }

    fn visit_u64<E>(self, _: u64) -> Result<ToolCalls, E> {
        Ok(ToolCalls(0))
    }

    fn visit_f64<E>(self, _: f64) -> Result<ToolCalls, E> {
        Ok(ToolCalls(0))
    }

    fn visit_str<E>(self, _: &str) -> Result<ToolCalls, E> {
        Ok(ToolCalls(0))
    }

    fn visit_unit<E>(self) -> Result<ToolCalls, E> {
        Ok(ToolCalls(0))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ToolCalls, A::Error> {
        IgnoredAny.visit_map(map).map(|_| ToolCalls(0))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ToolCalls, A::Error> {
        let mut n = 0;
        while let Some(block) = seq.next_element::<Block>()? {
            n += u64::from(block.0);
        }
        Ok(ToolCalls(n))
    }
}

/// One content block: whether its `type` is `"toolCall"` (the last `type` when repeated, as
/// `JSON.parse` keeps it); `false` for what is not an object.
struct Block(bool);

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(BlockVisitor)
    }
}

struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = Block;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Block, E> {
        Ok(Block(false))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Block, E> {
        Ok(Block(false))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Block, E> {
        Ok(Block(false))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Block, E> {
        Ok(Block(false))
    }

    fn visit_str<E>(self, _: &str) -> Result<Block, E> {
        Ok(Block(false))
    }

    fn visit_unit<E>(self) -> Result<Block, E> {
        Ok(Block(false))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Block, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| Block(false))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Block, A::Error> {
        let mut tool_call = false;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Type => tool_call = map.next_value::<TypeIsToolCall>()?.0,
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Block(tool_call))
    }
}

enum Key {
    Type,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(if v == "type" { Key::Type } else { Key::Other })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Whether a value is the string `"toolCall"`.
struct TypeIsToolCall(bool);

impl<'de> Deserialize<'de> for TypeIsToolCall {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <&RawValue>::deserialize(deserializer)?;
        let text = raw.get();
        Ok(TypeIsToolCall(match text.as_bytes().first() {
            // Escapes and all: the exact reader decides what the string says.
            Some(b'"') if text == "\"toolCall\"" => true,
            Some(b'"') if text.contains('\\') => matches!(
                json::parse(text),
                Ok(JsValue::String(s)) if s.escaped() == "toolCall"
            ),
            _ => false,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines the lean reader answers (as the exact path does) or leaves to it (`None`).
    const LINES: &[&str] = &[
        r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"toolCall","name":"x"},{"type":"tool\u0043all"},{"type":"toolCall","type":"text"},{"type":"text","type":"toolCall"},7,null,[{"type":"toolCall"}]],"usage":{"input":1.5,"output":2e3,"cacheRead":"7","cacheWrite":null,"cost":{"total":0.053735}}}}"#,
        r#"{"type":"message","message":{"role":"assistant","content":"text","usage":{"input":-0.0,"cost":5}}}"#,
        r#"{"type":"message","message":{"role":"toolResult","content":{"type":"toolCall"},"usage":null}}"#,
        r#"{"type":"message","message":null,"usage":{"input":3}}"#,
        r#"{"type":"message"}"#,
        r#"{"type":"compaction","usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"cost":{"total":1e-7,"total":2}}}"#,
        r#"{"type":"compaction","usage":[1,2]}"#,
        r#"{"type":"compaction","usage":{"input":1},"usage":{"output":1}}"#,
        r#"{"type":"message","message":"a string"}"#,
        r#"{"type":"message","message":{"role":"assistant","usage":{"input":0.1000000000000000055511151231257827021181583404541015625}}}"#,
        r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"half \ud83d"}]}}"#,
        r#"{"type":"usage","usage":{"input":12345678901234567890,"cost":{"total":[1]}}}"#,
        r#"{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"usage: toolcall"}]}}"#,
        r#"{"type":"message","message":{"role":"assistant","content":[{"type":"tool\u0043all"}],"\u0075sage":{"input":2}}}"#,
    ];

    #[test]
    fn the_lean_reader_answers_as_the_exact_one() {
        for (i, line) in LINES.iter().enumerate() {
            let exact = LineUsage::of_value(&json::parse(line).unwrap());
            match line_usage(line) {
                Some(read) => assert_eq!(read, exact, "{line}"),
                // Duplicate keys, a `usage` array, a `message` string: the exact path's.
                None => assert!([5, 6, 7, 8, 10].contains(&i), "{line}"),
            }
            if [5, 6, 7].contains(&i) {
                assert_eq!(line_usage(line), None, "{line}");
            }
        }
        let first = line_usage(LINES[0]).unwrap();
        assert_eq!(first.tool_calls, 3);
        assert_eq!(first.message_usage.unwrap().cost, 0.053735);
    }
}
