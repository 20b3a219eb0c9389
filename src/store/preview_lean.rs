//! A message line read for its tree row in one pass, borrowing its strings and skipping every
//! field a row does not show: the role, the text a preview is made of, and whether pi's
//! `/tree` selector shows the message. No value tree is built. Anything this reader cannot
//! answer exactly as `JSON.parse` would (a duplicate key, a lone surrogate escape, a number
//! or an object where a preview shows text, a message that is not an object) gives `None`,
//! and the caller takes the exact path.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::format::js_whitespace::is_js_whitespace;

/// `visit_bool`, `visit_i64`, `visit_u64` and `visit_f64`, each giving `value`: what a reader
/// makes of a number or a boolean where it expects text.
macro_rules! scalars_give {
    ($value:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }

        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }

        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }

        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

/// What a row needs of a message entry.
#[derive(Debug, PartialEq)]
pub(crate) struct LeanMessage<'a> {
    /// `message.role` when it is a string, else empty (as the exact path prints it).
    pub(crate) role: Cow<'a, str>,
    /// The pieces the preview is made of, in order (joined with spaces, they are its text).
    pub(crate) body: Vec<Cow<'a, str>>,
    /// `hasTextContent(content) || isErrorOrAborted`: what pi's selector tests of an
    /// assistant message that is not the leaf.
    pub(crate) shown: bool,
}

/// The row facts of a message line, or `None` when only the exact reader can tell them.
pub(crate) fn message(line: &str) -> Option<LeanMessage<'_>> {
    let entry: Entry<'_> = serde_json::from_str(line).ok()?;
    let Some(message) = entry.message else {
        // Missing or null: no role, no body, not shown.
        return Some(LeanMessage {
            role: Cow::Borrowed(""),
            body: Vec::new(),
            shown: false,
        });
    };
    let shown = message.stop_reason.0 || message.content.has_text();
    let role = match message.role {
        Scalar::Text(role) => role,
        _ => Cow::Borrowed(""),
    };
    let body = if role == "bashExecution" {
        message.command.preview()?.into_iter().collect()
    } else {
        message.content.preview()?
    };
    Some(LeanMessage { role, body, shown })
}

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow)]
    message: Option<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(default, borrow)]
    role: Scalar<'a>,
    #[serde(default, borrow)]
    content: Content<'a>,
    #[serde(default, borrow)]
    command: Scalar<'a>,
    #[serde(default, rename = "stopReason")]
    stop_reason: ErrorOrAborted,
}

/// A value as a preview prints it: a string as it is, `null` as `null`; anything else only
/// the exact reader prints as pi does.
#[derive(Debug, Default)]
enum Scalar<'a> {
    #[default]
    Missing,
    Text(Cow<'a, str>),
    Null,
    Other,
}

impl<'a> Scalar<'a> {
    /// The value's piece of a preview (`Some(None)`: missing, no piece); `None` when only the
    /// exact reader can print it.
    fn preview(self) -> Option<Option<Cow<'a, str>>> {
        match self {
            Scalar::Missing => Some(None),
            Scalar::Text(text) => Some(Some(text)),
            Scalar::Null => Some(Some(Cow::Borrowed("null"))),
            Scalar::Other => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Scalar::Text(Cow::Owned(v)))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }

    scalars_give!(Scalar::Other);

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| Scalar::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_map(map).map(|_| Scalar::Other)
    }
}

/// `message.content`: a string, content blocks, or something a preview prints as JSON.
#[derive(Debug, Default)]
enum Content<'a> {
    #[default]
    Missing,
    Text(Cow<'a, str>),
    Blocks {
        /// The preview piece of each block that has one; `None` when one needs the exact
        /// reader.
        pieces: Option<Vec<Cow<'a, str>>>,
        /// Some `text` block has non-blank text.
        has_text: bool,
    },
    Scalar(Scalar<'a>),
}

impl<'a> Content<'a> {
    /// The preview's pieces; `None` when only the exact reader can print them.
    fn preview(self) -> Option<Vec<Cow<'a, str>>> {
        match self {
            Content::Missing => Some(Vec::new()),
            Content::Text(text) => Some(vec![text]),
            Content::Blocks { pieces, .. } => pieces,
            Content::Scalar(scalar) => scalar.preview().map(|p| p.into_iter().collect()),
        }
    }

    /// pi's `hasTextContent`.
    fn has_text(&self) -> bool {
        match self {
            Content::Text(text) => non_blank(text),
            Content::Blocks { has_text, .. } => *has_text,
            Content::Missing | Content::Scalar(_) => false,
        }
    }
}

/// Not empty after `String.prototype.trim`.
fn non_blank(text: &str) -> bool {
    text.chars().any(|c| !is_js_whitespace(c))
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ContentVisitor)
    }
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut pieces = Some(Vec::new());
        let mut has_text = false;
        while let Some(item) = seq.next_element::<Item<'de>>()? {
            let Item::Block(block) = item else { continue };
            let kind = match &block.kind {
                Scalar::Text(kind) => kind.as_ref(),
                _ => continue,
            };
            let piece = match kind {
                "text" => {
                    has_text |= matches!(&block.text, Scalar::Text(t) if non_blank(t));
                    block.text.preview()
                }
                "toolCall" => block
                    .name
                    .preview()
                    .map(|name| name.map(|n| Cow::Owned(format!("{n}(...)")))),
                "image" => Some(Some(Cow::Borrowed("[image]"))),
                _ => Some(None),
            };
            match (piece, &mut pieces) {
                (Some(piece), Some(list)) => list.extend(piece),
                _ => pieces = None,
            }
        }
        Ok(Content::Blocks { pieces, has_text })
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Content::Text(Cow::Owned(v)))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Content::Scalar(Scalar::Null))
    }

    scalars_give!(Content::Scalar(Scalar::Other));

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        IgnoredAny
            .visit_map(map)
            .map(|_| Content::Scalar(Scalar::Other))
    }
}

/// One item of a content array: a block (an object), or anything else, which no preview or
/// filter reads.
enum Item<'a> {
    Block(Block<'a>),
    Skipped,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(default, rename = "type", borrow)]
    kind: Scalar<'a>,
    #[serde(default, borrow)]
    text: Scalar<'a>,
    #[serde(default, borrow)]
    name: Scalar<'a>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Item<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ItemVisitor)
    }
}

struct ItemVisitor;

impl<'de> Visitor<'de> for ItemVisitor {
    type Value = Item<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Block::deserialize(de::value::MapAccessDeserializer::new(map)).map(Item::Block)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| Item::Skipped)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Item::Skipped)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Item::Skipped)
    }

    scalars_give!(Item::Skipped);
}

/// `message.stopReason` ended in an error or an abort: a non-empty string other than `stop`
/// and `toolUse`, or any other truthy value.
#[derive(Debug, Default)]
struct ErrorOrAborted(bool);

impl<'de> Deserialize<'de> for ErrorOrAborted {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(StopVisitor)
            .map(ErrorOrAborted)
    }
}

struct StopVisitor;

impl<'de> Visitor<'de> for StopVisitor {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E>(self, v: &str) -> Result<bool, E> {
        Ok(!matches!(v, "" | "stop" | "toolUse"))
    }

    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_bool<E>(self, v: bool) -> Result<bool, E> {
        Ok(v)
    }

    fn visit_i64<E>(self, v: i64) -> Result<bool, E> {
        Ok(v != 0)
    }

    fn visit_u64<E>(self, v: u64) -> Result<bool, E> {
        Ok(v != 0)
    }

    fn visit_f64<E>(self, v: f64) -> Result<bool, E> {
        Ok(v != 0.0 && !v.is_nan())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<bool, A::Error> {
        IgnoredAny.visit_seq(seq).map(|_| true)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<bool, A::Error> {
        IgnoredAny.visit_map(map).map(|_| true)
    }
}
