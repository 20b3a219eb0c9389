//! The JSON text of a line as `JSON.stringify(JSON.parse(line))` means it, for answers that
//! carry entries: the line's own bytes when every JSON reader takes them the way `JSON.parse`
//! does, else the line read and written again the exact way.
//!
//! Copying the line is what keeps large answers cheap (no tree of values per entry) and lone
//! surrogate escapes exact (`"\ud800"` stays as it is). A line is copied only when a reader
//! could not tell it from what `JSON.stringify` would write: no duplicate keys, no keys that
//! JavaScript orders first (array indices), integers within 2^53, no float that JavaScript
//! would print as an integer (`1.0`, `-0`), nothing out of range (`1e400`), no lone surrogate
//! a strict reader refuses... Anything else takes the exact path, which is always right.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::json::{self, JsonError};

/// The text of `line` as an answer carries it (see the module documentation).
pub(crate) fn entry_json(line: &str) -> Result<Cow<'_, str>, JsonError> {
    let trimmed = line.trim_matches([' ', '\t', '\r', '\n']);
    if is_plain(trimmed) {
        return Ok(Cow::Borrowed(trimmed));
    }
    Ok(Cow::Owned(json::parse(line)?.stringify()))
}

/// Whether `text` is one JSON value that every reader parses as `JSON.parse` does and that
/// `JSON.stringify` would write with the same meaning. Its strings must decode to Unicode: a
/// lone surrogate goes the exact way, which writes it as `JSON.stringify` does.
fn is_plain(text: &str) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    Plain::deserialize(&mut de).is_ok() && de.end().is_ok()
}

/// A value that passed the check; it holds nothing.
struct Plain;

impl<'de> Deserialize<'de> for Plain {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PlainVisitor)
    }
}

struct PlainVisitor;

/// Integers JavaScript holds exactly.
const MAX_SAFE: u64 = (1 << 53) - 1;

impl<'de> Visitor<'de> for PlainVisitor {
    type Value = Plain;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON that JSON.stringify would write alike")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Plain, E> {
        Ok(Plain)
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Plain, E> {
        if n.unsigned_abs() > MAX_SAFE {
            return Err(E::custom("integer beyond 2^53"));
        }
        Ok(Plain)
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Plain, E> {
        if n > MAX_SAFE {
            return Err(E::custom("integer beyond 2^53"));
        }
        Ok(Plain)
    }

    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Plain, E> {
        // JavaScript prints an integral float without its fraction, and `-0` as `0`.
        if !n.is_finite() || n.fract() == 0.0 {
            return Err(E::custom("a float JavaScript prints otherwise"));
        }
        Ok(Plain)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Plain, E> {
        Ok(Plain)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Plain, E> {
        Ok(Plain)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Plain, A::Error> {
        while seq.next_element::<Plain>()?.is_some() {}
        Ok(Plain)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Plain, A::Error> {
        let mut keys = Keys::default();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if is_array_index(&key) {
                return Err(de::Error::custom("a key JavaScript orders first"));
            }
            if !keys.insert(key) {
                return Err(de::Error::custom("a duplicate key"));
            }
            map.next_value::<Plain>()?;
        }
        Ok(Plain)
    }
}

/// The keys of one object seen so far: a short list, a set once it grows.
#[derive(Default)]
struct Keys<'de> {
    few: Vec<Cow<'de, str>>,
    many: Option<HashSet<Cow<'de, str>>>,
}

impl<'de> Keys<'de> {
    /// `false` when `key` was seen already.
    fn insert(&mut self, key: Cow<'de, str>) -> bool {
        if let Some(many) = &mut self.many {
            return many.insert(key);
        }
        if self.few.contains(&key) {
            return false;
        }
        self.few.push(key);
        if self.few.len() > 16 {
            self.many = Some(self.few.drain(..).collect());
        }
        true
    }
}

/// An object key, borrowed from the line when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// A key JavaScript objects keep before all others: a canonical integer below 2^32 - 1.
fn is_array_index(key: &str) -> bool {
    let bytes = key.as_bytes();
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return false;
    }
    if bytes.len() > 1 && bytes[0] == b'0' {
        return false;
    }
    key.parse::<u64>().is_ok_and(|n| n < u32::MAX as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `JSON.stringify(JSON.parse(line))` gives, by the exact reader.
    fn exact(line: &str) -> String {
        json::parse(line).unwrap().stringify()
    }

    #[test]
    fn plain_lines_are_copied() {
        for line in [
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"a":[1,2.5,-3,true,false,null,"x\"y\\z\n"],"b":{"c":{}},"d":[]}"#,
            r#"{"e":"caf\u00e9","k":"\ud83d\ude00"}"#,
            r#"{"big":9007199254740991,"neg":-9007199254740991,"f":0.1}"#,
        ] {
            let text = entry_json(line).unwrap();
            assert!(matches!(text, Cow::Borrowed(_)), "{line} is copied");
            let ours: serde_json::Value = serde_json::from_str(&text).unwrap();
            let theirs: serde_json::Value = serde_json::from_str(&exact(line)).unwrap();
            assert_eq!(ours, theirs, "{line}");
        }
        assert_eq!(entry_json(" {\"a\":1}\r").unwrap(), "{\"a\":1}");
    }

    #[test]
    fn lines_a_reader_could_take_otherwise_are_written_again() {
        for (line, written) in [
            (r#"{"a":1,"a":2}"#, r#"{"a":2}"#),
            (r#"{"b":1,"2":2}"#, r#"{"2":2,"b":1}"#),
            (r#"{"n":1.0,"z":-0}"#, r#"{"n":1,"z":0}"#),
            (r#"{"n":1e400}"#, r#"{"n":null}"#),
            (r#"{"n":9007199254740993}"#, r#"{"n":9007199254740992}"#),
            (r#"{"s":"\ud800"}"#, r#"{"s":"\ud800"}"#),
            (r#"{"s":"a\uDC00b"}"#, r#"{"s":"a\udc00b"}"#),
            (r#"{"\ud800":1}"#, r#"{"\ud800":1}"#),
        ] {
            let text = entry_json(line).unwrap();
            assert!(matches!(text, Cow::Owned(_)), "{line} is written again");
            assert_eq!(text, written, "{line}");
            assert_eq!(text, exact(line), "{line}");
        }
    }

    #[test]
    fn deep_lines_take_the_exact_path() {
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        assert_eq!(entry_json(&deep).unwrap(), exact(&deep));
        assert!(entry_json("{\"a\":").is_err());
    }
}
