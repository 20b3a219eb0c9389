//! A JSON text read as spans of its own bytes, and written back pretty-printed with sorted keys
//! from those bytes: what a document of many messages costs when each message is a part of
//! its line, without a tree of values per message.
//!
//! The spans are read by `JSON.parse`'s grammar. A string is copied only when its bytes are
//! what `JSON.stringify` writes for it, a number only when it is an integer JavaScript prints
//! the same way; others are read and written the exact way ([`super::json`]). A text whose
//! object keys hold escapes is not read at all (a key's bytes then are not its name), and an
//! object with a repeated key is not written from its bytes: callers take the exact path.

use super::json::{self, JsValue, JsonError};

/// Deeper nesting is left to the exact path (whose depth limit is larger); the writer recurses.
const MAX_DEPTH: usize = 128;

/// A JSON text and the values in it, in document order.
pub(crate) struct Spans<'a> {
    text: &'a str,
    nodes: Vec<Node>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    True,
    False,
    Number,
    /// A string whose bytes are what `JSON.stringify` writes for it.
    PlainString,
    String,
    Array,
    /// Its members follow it as a key node and a value's nodes, in turn.
    Object,
}

#[derive(Clone, Copy)]
struct Node {
    kind: Kind,
    /// The value's bytes (a string's with its quotes).
    start: u32,
    end: u32,
    /// The first node after this value's nodes.
    after: u32,
}

/// One value of a [`Spans`].
#[derive(Clone, Copy)]
pub(crate) struct JsonSpan<'s> {
    spans: &'s Spans<'s>,
    at: u32,
}

impl<'a> Spans<'a> {
    /// The values of `text`; `None` when it is not one JSON value, nests deeper than
    /// [`MAX_DEPTH`], or has an object key with an escape.
    pub(crate) fn read(text: &'a str) -> Option<Spans<'a>> {
        u32::try_from(text.len()).ok()?;
        let mut reader = Reader {
            bytes: text.as_bytes(),
            pos: 0,
            nodes: Vec::new(),
        };
        reader.document()?;
        Some(Spans {
            text,
            nodes: reader.nodes,
        })
    }

    /// The whole text's value.
    pub(crate) fn root(&self) -> JsonSpan<'_> {
        JsonSpan { spans: self, at: 0 }
    }
}

impl<'s> JsonSpan<'s> {
    fn node(&self) -> Node {
        self.spans.nodes[self.at as usize]
    }

    fn at(&self, at: u32) -> JsonSpan<'s> {
        JsonSpan {
            spans: self.spans,
            at,
        }
    }

    /// The value's own bytes.
    pub(crate) fn text(&self) -> &'s str {
        let node = self.node();
        &self.spans.text[node.start as usize..node.end as usize]
    }

    pub(crate) fn is_object(&self) -> bool {
        self.node().kind == Kind::Object
    }

    pub(crate) fn is_null(&self) -> bool {
        self.node().kind == Kind::Null
    }

    /// Whether the value is a string whose bytes are not what it holds (it has escapes).
    pub(crate) fn is_escaped_string(&self) -> bool {
        let node = self.node();
        node.kind == Kind::String || (node.kind == Kind::PlainString && self.text().contains('\\'))
    }

    /// The string the value holds when it has no escapes.
    pub(crate) fn as_plain_str(&self) -> Option<&'s str> {
        let text = self.text();
        (self.node().kind == Kind::PlainString && !text.contains('\\'))
            .then(|| &text[1..text.len() - 1])
    }

    /// The member `key` of an object, the last of that name as `JSON.parse` keeps it.
    pub(crate) fn get(&self, key: &str) -> Option<JsonSpan<'s>> {
        self.members()
            .filter(|(name, _)| *name == key)
            .last()
            .map(|(_, value)| value)
    }

    /// An object's members in text order, keys without their quotes (they hold no escapes).
    fn members(&self) -> impl Iterator<Item = (&'s str, JsonSpan<'s>)> + use<'s> {
        let node = self.node();
        let this = *self;
        let mut next = if node.kind == Kind::Object {
            self.at + 1
        } else {
            node.after
        };
        std::iter::from_fn(move || {
            if next >= node.after {
                return None;
            }
            let key = this.at(next).text();
            let value = this.at(next + 1);
            next = value.node().after;
            Some((&key[1..key.len() - 1], value))
        })
    }

    /// The value as `JSON.parse` gives it.
    pub(crate) fn to_value(self) -> Result<JsValue, JsonError> {
        json::parse(self.text())
    }

    /// `JSON.stringify(value, null, indent)` with every object's keys sorted as
    /// [`JsValue::sort_keys`] sorts them, appended to `out` as if the value sat `level` levels
    /// deep in a larger document.
    pub(crate) fn write_sorted_pretty(
        &self,
        out: &mut String,
        indent: usize,
        level: usize,
    ) -> Result<(), JsonError> {
        if self.write_from_bytes(out, indent, level) {
            return Ok(());
        }
        // A repeated key: the exact path decides which value stays.
        let mut value = self.to_value()?;
        value.sort_keys();
        value.write_pretty_at(out, indent, level);
        Ok(())
    }

    /// [`JsonSpan::write_sorted_pretty`] from the value's bytes alone; `false` (and `out` as it
    /// was) when an object repeats a key.
    fn write_from_bytes(&self, out: &mut String, indent: usize, level: usize) -> bool {
        let mark = out.len();
        let mut writer = Writer {
            out,
            indent,
            keys: Vec::new(),
        };
        if writer.value(*self, level).is_some() {
            return true;
        }
        out.truncate(mark);
        false
    }
}

struct Writer<'o> {
    out: &'o mut String,
    indent: usize,
    /// The key nodes of the objects being written, each object's run sorted.
    keys: Vec<u32>,
}

impl Writer<'_> {
    fn newline(&mut self, level: usize) {
        self.out.push('\n');
        json::push_spaces(self.indent * level, self.out);
    }

    /// `None` when an object repeats a key.
    fn value(&mut self, span: JsonSpan<'_>, level: usize) -> Option<()> {
        let node = span.node();
        let text = span.text();
        match node.kind {
            Kind::Null | Kind::True | Kind::False | Kind::PlainString => self.out.push_str(text),
            Kind::Number if is_plain_integer(text) => self.out.push_str(text),
            Kind::Number => json::write_number(text.parse().ok()?, self.out),
            Kind::String => json::parse(text).ok()?.write_compact(self.out),
            Kind::Array => {
                if node.after == span.at + 1 {
                    self.out.push_str("[]");
                    return Some(());
                }
                self.out.push('[');
                let mut at = span.at + 1;
                while at < node.after {
                    if at > span.at + 1 {
                        self.out.push(',');
                    }
                    self.newline(level + 1);
                    let item = span.at(at);
                    self.value(item, level + 1)?;
                    at = item.node().after;
                }
                self.newline(level);
                self.out.push(']');
            }
            Kind::Object => {
                if node.after == span.at + 1 {
                    self.out.push_str("{}");
                    return Some(());
                }
                let base = self.keys.len();
                let mut at = span.at + 1;
                while at < node.after {
                    self.keys.push(at);
                    at = span.at(at + 1).node().after;
                }
                // Keys hold no escapes: their bytes are their names, in code point order.
                let name = |at: u32| {
                    let key = span.at(at).text();
                    &key[1..key.len() - 1]
                };
                self.keys[base..].sort_by(|&a, &b| json::compare_sorted_keys(name(a), name(b)));
                if self.keys[base..]
                    .windows(2)
                    .any(|w| name(w[0]) == name(w[1]))
                {
                    return None;
                }
                self.out.push('{');
                for i in base..self.keys.len() {
                    if i > base {
                        self.out.push(',');
                    }
                    self.newline(level + 1);
                    let key = self.keys[i];
                    self.out.push_str(span.at(key).text());
                    self.out.push_str(": ");
                    self.value(span.at(key + 1), level + 1)?;
                }
                self.keys.truncate(base);
                self.newline(level);
                self.out.push('}');
            }
        }
        Some(())
    }
}

/// An integer JavaScript prints with the same digits: no fraction or exponent, no leading
/// zero, no `-0`, and few enough digits to be exact.
fn is_plain_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text).as_bytes();
    match digits {
        [b'0'] => text.len() == 1,
        [b'1'..=b'9', rest @ ..] => rest.len() < 15 && rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// Where the first `"`, `\\` or control character of `bytes` is: eight bytes at a time.
fn string_run(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        // A byte's high bit is set where it is zero after the xor (or below 0x20): the
        // lowest such byte is exact, though a borrow may mark bytes above it too.
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let found = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (word.wrapping_sub(ONES * 0x20) & !word);
        let found = found & HIGH;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = chunks.remainder();
    rest.iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|i| at + i)
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    nodes: Vec<Node>,
}

impl Reader<'_> {
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn push(&mut self, kind: Kind, start: usize) -> usize {
        self.nodes.push(Node {
            kind,
            start: start as u32,
            end: self.pos as u32,
            after: self.nodes.len() as u32 + 1,
        });
        self.nodes.len() - 1
    }

    fn close(&mut self, node: usize) {
        let after = self.nodes.len() as u32;
        let n = &mut self.nodes[node];
        n.end = self.pos as u32;
        n.after = after;
    }

    /// One value and nothing after it but whitespace. Iterative: nesting costs heap.
    fn document(&mut self) -> Option<()> {
        // Open containers: the node and whether it is an object.
        let mut open: Vec<(usize, bool)> = Vec::new();
        self.skip_ws();
        loop {
            let start = self.pos;
            match *self.bytes.get(self.pos)? {
                b'n' => self.literal(b"null", Kind::Null)?,
                b't' => self.literal(b"true", Kind::True)?,
                b'f' => self.literal(b"false", Kind::False)?,
                b'"' => {
                    let kind = self.string()?;
                    self.push(kind, start);
                }
                b'-' | b'0'..=b'9' => {
                    self.number()?;
                    self.push(Kind::Number, start);
                }
                open_byte @ (b'[' | b'{') => {
                    let object = open_byte == b'{';
                    self.pos += 1;
                    let node = self.push(if object { Kind::Object } else { Kind::Array }, start);
                    self.skip_ws();
                    if self.bytes.get(self.pos) == Some(if object { &b'}' } else { &b']' }) {
                        self.pos += 1;
                        self.close(node);
                    } else {
                        if open.len() >= MAX_DEPTH {
                            return None;
                        }
                        open.push((node, object));
                        if object {
                            self.key()?;
                        }
                        continue;
                    }
                }
                _ => return None,
            }
            // After a value: the next member, or the end of every container that ends here.
            loop {
                self.skip_ws();
                let Some(&(node, object)) = open.last() else {
                    return (self.pos == self.bytes.len()).then_some(());
                };
                match *self.bytes.get(self.pos)? {
                    b',' => {
                        self.pos += 1;
                        self.skip_ws();
                        if object {
                            self.key()?;
                        }
                        break;
                    }
                    b'}' if object => {}
                    b']' if !object => {}
                    _ => return None,
                }
                self.pos += 1;
                self.close(node);
                open.pop();
            }
        }
    }

    fn literal(&mut self, word: &[u8], kind: Kind) -> Option<()> {
        let start = self.pos;
        if !self.bytes[self.pos..].starts_with(word) {
            return None;
        }
        self.pos += word.len();
        self.push(kind, start);
        Some(())
    }

    /// A key without escapes, its colon, and the whitespace before its value.
    fn key(&mut self) -> Option<()> {
        let start = self.pos;
        if self.bytes.get(self.pos) != Some(&b'"') || self.string()? != Kind::PlainString {
            return None;
        }
        if self.bytes[start..self.pos].contains(&b'\\') {
            return None;
        }
        self.push(Kind::PlainString, start);
        self.skip_ws();
        if self.bytes.get(self.pos) != Some(&b':') {
            return None;
        }
        self.pos += 1;
        self.skip_ws();
        Some(())
    }

    /// A string from its opening quote: whether its bytes are what `JSON.stringify` writes.
    fn string(&mut self) -> Option<Kind> {
        let mut plain = true;
        self.pos += 1;
        loop {
            self.pos += string_run(self.bytes.get(self.pos..)?)?;
            match self.bytes[self.pos] {
                b'"' => {
                    self.pos += 1;
                    return Some(if plain {
                        Kind::PlainString
                    } else {
                        Kind::String
                    });
                }
                b'\\' => {
                    plain &= self.escape()?;
                }
                _ => return None,
            }
        }
    }

    /// An escape from its backslash: whether `JSON.stringify` writes the character so.
    fn escape(&mut self) -> Option<bool> {
        let kind = *self.bytes.get(self.pos + 1)?;
        self.pos += 2;
        match kind {
            b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Some(true),
            b'/' => Some(false),
            b'u' => {
                let digits = self.bytes.get(self.pos..self.pos + 4)?;
                let mut unit = 0u32;
                for &d in digits {
                    unit = unit * 16 + (d as char).to_digit(16)?;
                }
                self.pos += 4;
                // `JSON.stringify` escapes only the other control characters, in lower case.
                let lower = digits.iter().all(|d| !d.is_ascii_uppercase());
                Some(lower && unit < 0x20 && !matches!(unit, 0x08..=0x0a | 0x0c | 0x0d))
            }
            _ => None,
        }
    }

    fn number(&mut self) -> Option<()> {
        self.pos += json::number_len(&self.bytes[self.pos..]).ok()?;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the exact path writes: `JSON.parse`, keys sorted, `JSON.stringify(v, null, 2)`.
    fn exact(text: &str, level: usize) -> String {
        let mut value = json::parse(text).unwrap();
        value.sort_keys();
        let mut out = String::new();
        value.write_pretty_at(&mut out, 2, level);
        out
    }

    fn spanned(text: &str, level: usize) -> String {
        let spans = Spans::read(text).unwrap_or_else(|| panic!("{text} is read"));
        let mut out = String::from("before");
        spans
            .root()
            .write_sorted_pretty(&mut out, 2, level)
            .unwrap();
        out.split_off("before".len())
    }

    #[test]
    fn writes_what_the_exact_path_writes() {
        for text in [
            r#"{"role":"user","content":"hi","timestamp":1733000000000}"#,
            r#" { "b" : [ 1 , 2.5 , -3 , true , false , null ] , "a" : { } , "c" : [ ] } "#,
            r#"{"z":{"y":{"x":[{"b":1,"a":2},[[]],{}]}},"ä":1,"a":2,"B":3,"_":4,"ab":5,"a b":6}"#,
            r#"{"s":"x\"y\\z\n\r\t\b\f\u0000\u001f"}"#,
            r#"{"s":"\/ \u00e9 \u001F \u0041 \ud83d\ude00 \ud800 \uDC00x é 🙂"}"#,
            r#"{"n":[0,-0,1.0,1e2,1E-7,0.1,123456789012345,1234567890123456,12345678901234567890,1e400,-1e400,5e-324,0.30000000000000004,-12.50]}"#,
            r#"{"9":1,"10":2,"a":3,"1":4}"#,
            r#"[1,{"a":[{"b":{"c":"d"}}]},"x"]"#,
            r#""just a string""#,
            "42",
            "null",
            "[]",
            "{}",
        ] {
            for level in [0, 3] {
                assert_eq!(spanned(text, level), exact(text, level), "{text}");
            }
        }
    }

    #[test]
    fn a_repeated_key_takes_the_exact_path() {
        for text in [
            r#"{"a":1,"b":2,"a":3}"#,
            r#"{"m":{"content":null,"content":[1]},"x":[{"k":1,"k":{"j":2}}]}"#,
        ] {
            assert_eq!(spanned(text, 2), exact(text, 2), "{text}");
        }
    }

    #[test]
    fn what_json_parse_refuses_is_not_read() {
        for text in [
            "",
            " ",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{a:1}",
            "01",
            "1.",
            ".5",
            "-",
            "1e",
            "+1",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\u12g4\"",
            "\"a\nb\"",
            "\"open",
            "tru",
            "nul",
            "[1] [2]",
            "{\"a\":1}}",
            "[1,2",
            "NaN",
            "'a'",
            "\u{a0}1",
        ] {
            assert!(json::parse(text).is_err(), "{text:?} is JSON");
            assert!(Spans::read(text).is_none(), "{text:?} was read");
        }
    }

    #[test]
    fn keys_with_escapes_and_deep_nesting_are_left_to_the_exact_path() {
        for text in [r#"{"mess\u0061ge":1}"#, r#"{"a":{"b\n":1}}"#, r#"{"\/":1}"#] {
            assert!(json::parse(text).is_ok());
            assert!(Spans::read(text).is_none(), "{text}");
        }
        let deep = format!(
            "{}1{}",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        assert!(Spans::read(&deep).is_none());
        let deep_enough = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(spanned(&deep_enough, 0), exact(&deep_enough, 0));
    }

    #[test]
    fn members_read_as_json_parse_keeps_them() {
        let text = r#"{"type":"message","message":{"role":"a"},"message":{"role":"us\u0065r","content":null},"n":"x\ny"}"#;
        let spans = Spans::read(text).unwrap();
        let root = spans.root();
        assert!(root.is_object());
        assert_eq!(
            root.get("type").and_then(|t| t.as_plain_str()),
            Some("message")
        );
        let message = root.get("message").unwrap();
        assert_eq!(message.text(), r#"{"role":"us\u0065r","content":null}"#);
        assert_eq!(
            message.to_value().unwrap(),
            json::parse(text).unwrap().get("message").unwrap().clone()
        );
        let role = message.get("role").unwrap();
        assert!(role.is_escaped_string());
        assert_eq!(role.as_plain_str(), None);
        assert!(message.get("content").unwrap().is_null());
        assert!(root.get("n").unwrap().is_escaped_string());
        assert!(root.get("absent").is_none());
        assert!(message.get("role").unwrap().get("role").is_none());
    }

    /// Why [`Spans::read`] may decline a text `JSON.parse` takes: a key with an escape, or
    /// nesting deeper than [`MAX_DEPTH`].
    fn may_decline(text: &str) -> bool {
        fn depth(value: &JsValue) -> usize {
            match value {
                JsValue::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
                JsValue::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
                _ => 0,
            }
        }
        let escaped_key = {
            // A backslash before the colon of a member: only a key can be followed by one.
            let bytes = text.as_bytes();
            let mut in_string = false;
            let mut escaped_here = false;
            let mut found = false;
            let mut i = 0;
            while i < bytes.len() {
                match (in_string, bytes[i]) {
                    (true, b'\\') => {
                        escaped_here = true;
                        i += 1;
                    }
                    (true, b'"') => in_string = false,
                    (false, b'"') => {
                        in_string = true;
                        escaped_here = false;
                    }
                    (false, b':') if escaped_here => found = true,
                    (false, b) if !b.is_ascii_whitespace() => escaped_here = false,
                    _ => {}
                }
                i += 1;
            }
            found
        };
        escaped_key || depth(&json::parse(text).unwrap()) > MAX_DEPTH
    }

    /// Whether a value repeats a key in some object (the byte writer then declines).
    fn repeats_a_key(spans: &Spans<'_>) -> bool {
        fn repeats(span: JsonSpan<'_>) -> bool {
            let mut names: Vec<&str> = span.members().map(|(name, _)| name).collect();
            let count = names.len();
            names.sort_unstable();
            names.dedup();
            names.len() < count
                || span.members().any(|(_, value)| repeats(value))
                || span.items().any(repeats)
        }
        repeats(spans.root())
    }

    impl<'s> JsonSpan<'s> {
        /// An array's items (tests only).
        fn items(&self) -> impl Iterator<Item = JsonSpan<'s>> + use<'s> {
            let node = self.node();
            let this = *self;
            let mut next = if node.kind == Kind::Array {
                self.at + 1
            } else {
                node.after
            };
            std::iter::from_fn(move || {
                (next < node.after).then(|| {
                    let item = this.at(next);
                    next = item.node().after;
                    item
                })
            })
        }
    }

    /// The byte writer against the exact one on one text known to be JSON: what it writes is
    /// what the exact path writes, it declines exactly where a key repeats, and the reader
    /// answers `get` as `JSON.parse`'s value does. Whether the bytes were written.
    fn check_text(text: &str) -> bool {
        let Some(spans) = Spans::read(text) else {
            assert!(may_decline(text), "declined: {text:?}");
            return false;
        };
        for level in [0, 2] {
            let mut out = String::from("before");
            let written = spans.root().write_from_bytes(&mut out, 2, level);
            assert_eq!(written, !repeats_a_key(&spans), "{text:?}");
            if written {
                assert_eq!(&out["before".len()..], exact(text, level), "{text:?}");
            } else {
                assert_eq!(out, "before");
            }
            assert_eq!(spanned(text, level), exact(text, level), "{text:?}");
        }
        let value = json::parse(text).unwrap();
        let root = spans.root();
        assert_eq!(root.is_object(), value.as_object().is_some());
        assert_eq!(root.is_null(), value == JsValue::Null);
        assert_eq!(root.to_value().unwrap(), value);
        if let Some(map) = value.as_object() {
            for (key, member) in map {
                let name = key.escaped();
                let span = root
                    .get(name)
                    .unwrap_or_else(|| panic!("{name} in {text:?}"));
                assert_eq!(&span.to_value().unwrap(), member, "{name} in {text:?}");
                let plain = member.as_js_str().filter(|s| !s.escaped().contains('\\'));
                match plain {
                    // The text holds no escapes when the value's stringify form has none.
                    Some(s) if !span.text().contains('\\') => {
                        assert_eq!(span.as_plain_str(), Some(s.escaped()));
                        assert!(!span.is_escaped_string());
                    }
                    _ => assert_eq!(span.as_plain_str(), None),
                }
                if member.as_js_str().is_some() {
                    assert_eq!(span.is_escaped_string(), span.text().contains('\\'));
                }
            }
            assert!(root.get("no such key").is_none());
        }
        true
    }

    /// A seeded corpus of tricky texts (see [`crate::format::tricky_json`]): the bytes are
    /// written exactly as the exact path writes them, on most texts.
    #[test]
    fn random_texts_are_written_exactly() {
        let mut tricky = crate::format::tricky_json::Tricky::new(0x5eed_0001);
        let (mut written, mut declined) = (0, 0);
        for round in 0..4000 {
            let text = tricky.text(1 + round % 6);
            if check_text(&text) {
                written += 1;
            } else {
                declined += 1;
            }
        }
        // Keys with escapes are rare in the corpus, as in real files: most texts are read.
        assert!(written > 2500, "{written} written, {declined} declined");
        assert!(declined > 50, "{written} written, {declined} declined");
    }

    /// The same corpus without whitespace or keys with escapes, nesting deeper: nearly all of
    /// it is read.
    #[test]
    fn random_compact_texts_are_written_exactly() {
        let mut tricky = crate::format::tricky_json::Tricky::new(0x5eed_0002);
        tricky.escaped_keys_per_mille = 0;
        tricky.whitespace_per_mille = 0;
        for round in 0..1500 {
            let text = tricky.text(2 + round % 9);
            assert!(check_text(&text), "{text:?}");
        }
    }

    /// Every number: the digits JavaScript prints, whether copied or printed again.
    #[test]
    fn random_numbers_are_written_exactly() {
        let mut tricky = crate::format::tricky_json::Tricky::new(0x5eed_0003);
        for _ in 0..20_000 {
            let mut text = String::new();
            tricky.number(&mut text);
            assert!(check_text(&text), "{text}");
            let member = format!("{{\"n\":[{text}]}}");
            assert!(check_text(&member), "{member}");
        }
        // Integers at the edge of the copied ones (15 digits) and beyond.
        for digits in 1..=25 {
            for lead in ['1', '9'] {
                let text: String = std::iter::once(lead)
                    .chain(std::iter::repeat_n('9', digits - 1))
                    .collect();
                for text in [text.clone(), format!("-{text}")] {
                    assert!(check_text(&text), "{text}");
                }
            }
        }
    }

    /// Damaged texts: whatever `JSON.parse` refuses is not read, and whatever is read is
    /// written exactly.
    #[test]
    fn damaged_texts_are_read_only_when_json_parse_takes_them() {
        let mut tricky = crate::format::tricky_json::Tricky::new(0x5eed_0004);
        let mut refused = 0;
        for round in 0..6000 {
            let text = tricky.text(1 + round % 4);
            let damaged = tricky.damaged(&text);
            match json::parse(&damaged) {
                Ok(_) => {
                    check_text(&damaged);
                }
                Err(_) => {
                    assert!(Spans::read(&damaged).is_none(), "{damaged:?} was read");
                    refused += 1;
                }
            }
        }
        assert!(refused > 3000, "{refused}");
    }

    /// The word-at-a-time search finds what a byte-at-a-time one finds.
    #[test]
    fn string_runs_end_where_a_byte_search_says() {
        let mut tricky = crate::format::tricky_json::Tricky::new(0x5eed_0005);
        let alphabet = [
            b'a', b'"', b'\\', 0x00, 0x1f, 0x20, 0x21, 0x7f, 0x80, 0xff, 0x5b, 0x5d,
        ];
        for _ in 0..20_000 {
            let len = tricky.below(40);
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    if tricky.chance(900) {
                        b'a' + tricky.below(26) as u8
                    } else {
                        alphabet[tricky.below(alphabet.len())]
                    }
                })
                .collect();
            let expected = bytes
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            assert_eq!(string_run(&bytes), expected, "{bytes:?}");
        }
        for byte in 0..=255u8 {
            for at in 0..20 {
                let mut bytes = vec![b'x'; 20];
                bytes[at] = byte;
                let hit = byte == b'"' || byte == b'\\' || byte < 0x20;
                assert_eq!(string_run(&bytes), hit.then_some(at), "{byte} at {at}");
            }
        }
    }

    #[test]
    fn javascript_details_are_kept() {
        for text in [
            // `JSON.parse` makes `__proto__` an own key like any other.
            r#"{"__proto__":{"x":1},"a":{"__proto__":5,"b":1},"constructor":null}"#,
            // Array indexes come first, in numeric order; other digit keys sort as text.
            r#"{"10":1,"9":2,"1":3,"01":4,"-1":5,"4294967295":6,"4294967294":7,"a":8,"":9}"#,
            // Characters beyond the BMP sort after U+FFFF by code point.
            "{\"😀\":1,\"｡\":2,\"\u{ffff}\":3,\"é\":4,\"z\":5,\"\u{10ffff}\":6}",
            "{\"s\":\"\u{2028}\u{2029}\u{7f}\u{feff}raw\"}",
            r#"{"s":"\u2028\u2029\u007f\ufeff\u0000\u000b\u001F\u001f\/"}"#,
            r#"{"s":["\ud83d","\ude00","\ude00\ud83d","\ud83d\ude00","\uD83D\uDE00","\udbff\udfff"]}"#,
            r#"{"s":"\"\\\b\f\n\r\t","t":"\u0008\u0009\u000a\u000c\u000d\u0022\u005c"}"#,
            "{\r\n\t\"a\" :\t[\r1 ,\n2\r\n] ,\"b\":{ } }\r\n",
            r#"{"n":[-0,0e0,-0e-0,1E0,1e+0,0.5e1,1e21,1e-7,123e-20,1e308,1e309,-1e309]}"#,
        ] {
            assert!(check_text(text), "{text}");
        }
        // Repeated keys, at any depth: JSON.parse keeps the first position and the last value.
        for text in [
            r#"{"a":1,"a":2}"#,
            r#"{"x":[{"k":{"j":1,"j":[2]}}],"k":3}"#,
            r#"{"__proto__":1,"__proto__":2}"#,
            r#"{"":1,"":2}"#,
        ] {
            assert!(check_text(text), "{text}");
            let spans = Spans::read(text).unwrap();
            assert!(!spans.root().write_from_bytes(&mut String::new(), 2, 0));
        }
    }
}
