//! pi's `allMessagesText` (megabytes per session) kept in the form a listing sends it: its JSON
//! string literal. Rows are answered from that literal as it is (a warm listing copies bytes
//! from the cache, never escapes or decodes them); the text itself is decoded only when
//! something reads it (a search, a library caller).

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

/// Every non-empty user/assistant text of a session, joined with spaces. Derefs to the text.
#[derive(Clone, Default)]
pub struct MessagesText {
    /// At least one of the two is set.
    json: OnceLock<JsonLiteral>,
    text: OnceLock<String>,
}

/// A JSON string literal (quotes included), possibly a slice of a larger shared text (the
/// listing cache's text region, read once for all rows).
#[derive(Clone)]
pub(crate) struct JsonLiteral {
    whole: Arc<String>,
    start: usize,
    end: usize,
}

impl JsonLiteral {
    /// `whole[start..end]` if that is a whole string literal (`"` at both ends, on character
    /// boundaries).
    pub(crate) fn slice(whole: Arc<String>, start: usize, end: usize) -> Option<JsonLiteral> {
        let literal = whole.get(start..end)?;
        let quoted = literal.len() >= 2 && literal.starts_with('"') && literal.ends_with('"');
        quoted.then_some(JsonLiteral { whole, start, end })
    }

    pub(crate) fn as_str(&self) -> &str {
        // Checked in `slice`; the whole text never changes.
        self.whole.get(self.start..self.end).unwrap_or("\"\"")
    }
}

impl MessagesText {
    /// The text, as the listing gathered it.
    pub fn new(text: String) -> MessagesText {
        MessagesText {
            json: OnceLock::new(),
            text: OnceLock::from(text),
        }
    }

    /// The text of a literal written by [`MessagesText::json`].
    pub(crate) fn from_json(literal: JsonLiteral) -> MessagesText {
        MessagesText {
            json: OnceLock::from(literal),
            text: OnceLock::new(),
        }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        self.text.get_or_init(|| {
            let literal = self.json.get().map_or("\"\"", JsonLiteral::as_str);
            // Only literals this program wrote get here (the cache is checksummed).
            serde_json::from_str(literal).unwrap_or_else(|e| {
                tracing::error!("a cached allMessagesText does not decode: {e}");
                String::new()
            })
        })
    }

    /// The text as a JSON string literal, as serde_json writes it, which is also how
    /// `JSON.stringify` writes it: both escape exactly `"`, `\` and the control characters, the
    /// same way (see the tests).
    pub fn json(&self) -> &str {
        self.json
            .get_or_init(|| {
                let text = self.text.get().map_or("", String::as_str);
                let literal = serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into());
                let end = literal.len();
                JsonLiteral {
                    whole: Arc::new(literal),
                    start: 0,
                    end,
                }
            })
            .as_str()
    }

    /// The whole text.
    pub fn into_string(self) -> String {
        match self.text.into_inner() {
            Some(text) => text,
            None => {
                let decoded = MessagesText {
                    json: self.json,
                    text: OnceLock::new(),
                };
                decoded.as_str().to_string()
            }
        }
    }
}

impl Deref for MessagesText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for MessagesText {
    fn from(text: String) -> Self {
        MessagesText::new(text)
    }
}

impl From<&str> for MessagesText {
    fn from(text: &str) -> Self {
        MessagesText::new(text.to_string())
    }
}

impl PartialEq for MessagesText {
    fn eq(&self, other: &Self) -> bool {
        match (self.text.get(), other.text.get()) {
            (Some(a), Some(b)) => a == b,
            // Escaping is one-to-one, so the literals compare as the texts do.
            _ => self.json() == other.json(),
        }
    }
}

impl PartialEq<str> for MessagesText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for MessagesText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for MessagesText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl serde::Serialize for MessagesText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::json::JsValue;

    /// Every character class either escaper treats specially is ASCII (non-ASCII is copied by
    /// both), so all of ASCII plus a few others covers every case.
    fn every_kind_of_character() -> String {
        let mut text: String = (0u8..0x80).map(char::from).collect();
        text.push_str("é\u{2028}\u{2029}\u{fffd}\u{ffff}😀 end");
        text
    }

    #[test]
    fn the_literal_is_what_json_stringify_writes() {
        let text = every_kind_of_character();
        let ours = MessagesText::new(text.clone());
        assert_eq!(ours.json(), JsValue::from(text.as_str()).stringify());
        assert_eq!(ours.json(), serde_json::to_string(&text).unwrap());
    }

    #[test]
    fn a_literal_decodes_to_its_text() {
        let text = every_kind_of_character();
        let literal = MessagesText::new(text.clone()).json().to_string();
        let whole = Arc::new(format!("xx{literal}yy"));
        let end = 2 + literal.len();
        let sliced = JsonLiteral::slice(whole.clone(), 2, end).unwrap();
        let from_json = MessagesText::from_json(sliced);
        assert_eq!(from_json.json(), literal);
        assert_eq!(from_json, text.as_str());
        assert_eq!(from_json, MessagesText::new(text.clone()));
        assert_eq!(from_json.clone().into_string(), text);
        assert!(JsonLiteral::slice(whole.clone(), 1, end).is_none());
        assert!(JsonLiteral::slice(whole, 2, end + 5).is_none());
    }
}
