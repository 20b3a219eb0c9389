//! JSON exactly as JavaScript sees it: `JSON.parse` in, `JSON.stringify` out.
//!
//! pi reads lines with `JSON.parse` and writes them with `JSON.stringify`. Wherever this program
//! must rewrite a line as pi would (migration, branched copies) or compare with pi, it goes
//! through [`JsValue`], which keeps what JavaScript keeps and loses what it loses:
//! object key order (a duplicate key keeps its first position and takes the last value),
//! numbers as IEEE-754 doubles printed like `Number.prototype.toString`, and strings as UTF-16,
//! so a lone surrogate escape such as `"\ud83d"` survives (a Rust `String` cannot hold it).

use std::borrow::{Borrow, Cow};
use std::fmt;

use indexmap::IndexMap;

/// A string as `JSON.stringify` writes it, without the surrounding quotes.
///
/// Keeping the escaped form makes output a copy, equality exact (stringify is injective) and
/// lone surrogates representable.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JsString(Box<str>);

/// An object with JavaScript's key order.
pub type JsObject = IndexMap<JsString, JsValue>;

/// A value as `JSON.parse` produces it.
#[derive(Clone, Debug, PartialEq)]
pub enum JsValue {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number (a JavaScript double; `-0` kept).
    Number(f64),
    /// A string, lone surrogates kept.
    String(JsString),
    /// An array.
    Array(Vec<JsValue>),
    /// An object, its keys in JavaScript's order.
    Object(JsObject),
}

/// Why a text is not JSON, with the byte offset where reading stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// The byte offset where reading stopped.
    pub offset: usize,
    /// What was wrong there.
    pub reason: &'static str,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.reason, self.offset)
    }
}

impl std::error::Error for JsonError {}

/// Deeper nesting is refused rather than risking the stack; real entries nest a few levels.
pub const MAX_DEPTH: usize = 1000;

impl JsString {
    /// The JavaScript string holding exactly `text`.
    pub fn new(text: &str) -> Self {
        let mut out = String::with_capacity(text.len());
        escape_into(text, &mut out);
        JsString(out.into_boxed_str())
    }

    /// The string a client sent, its stood-in lone surrogates (see
    /// `wire_surrogates`) made lone surrogates again.
    pub fn from_wire(text: &str) -> Self {
        use super::wire_surrogates::{Piece, has_stand_ins, restore};
        if !has_stand_ins(text) {
            return JsString::new(text);
        }
        let mut out = String::with_capacity(text.len());
        for piece in restore(text) {
            match piece {
                Piece::Text(text) => escape_into(text, &mut out),
                Piece::Unit(unit) => push_unicode_escape(unit, &mut out),
            }
        }
        JsString(out.into_boxed_str())
    }

    /// The body as `JSON.stringify` writes it (no quotes).
    pub fn escaped(&self) -> &str {
        &self.0
    }

    /// The text, if it holds no lone surrogate.
    pub fn to_str(&self) -> Option<Cow<'_, str>> {
        if !self.0.contains('\\') {
            return Some(Cow::Borrowed(&self.0));
        }
        let mut out = String::with_capacity(self.0.len());
        decode_escaped(&self.0, &mut out, false).then_some(Cow::Owned(out))
    }

    /// The text, with any lone surrogate replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        if !self.0.contains('\\') {
            return Cow::Borrowed(&self.0);
        }
        let mut out = String::with_capacity(self.0.len());
        decode_escaped(&self.0, &mut out, true);
        Cow::Owned(out)
    }

    /// `String.prototype.trim`, on the escaped form so a lone surrogate survives.
    pub fn trim_js(&self) -> JsString {
        // Split the body into characters and escapes; trim the ones that are whitespace.
        let body = &*self.0;
        let mut tokens: Vec<(usize, usize, bool)> = Vec::new();
        let mut chars = body.char_indices().peekable();
        while let Some((start, c)) = chars.next() {
            let (end, white) = if c == '\\' {
                let (_, kind) = chars.next().unwrap_or((start, ' '));
                let len = if kind == 'u' { 6 } else { 2 };
                for _ in 2..len {
                    chars.next();
                }
                let end = (start + len).min(body.len());
                let white = match kind {
                    'n' | 'r' | 't' | 'f' => true,
                    'u' => u32::from_str_radix(&body[start + 2..end], 16)
                        .ok()
                        .and_then(char::from_u32)
                        .is_some_and(super::js_whitespace::is_js_whitespace),
                    _ => false,
                };
                (end, white)
            } else {
                (
                    start + c.len_utf8(),
                    super::js_whitespace::is_js_whitespace(c),
                )
            };
            tokens.push((start, end, white));
        }
        let first = tokens.iter().position(|t| !t.2);
        let last = tokens.iter().rposition(|t| !t.2);
        match (first, last) {
            (Some(f), Some(l)) => JsString(body[tokens[f].0..tokens[l].1].into()),
            _ => JsString(Box::from("")),
        }
    }

    /// Whether the string is empty (`""` is falsy in JavaScript).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The order of two strings by their code points, as the oracle sorts keys (iterating a
    /// JavaScript string, where a lone surrogate stands for itself): byte order when neither
    /// holds an escape.
    pub fn compare_code_points(&self, other: &JsString) -> std::cmp::Ordering {
        if !self.0.contains('\\') && !other.0.contains('\\') {
            return self.0.cmp(&other.0);
        }
        self.code_points().cmp(other.code_points())
    }

    /// The string's code points, a lone surrogate as its own value.
    fn code_points(&self) -> impl Iterator<Item = u32> + '_ {
        let mut rest = self.0.chars();
        let unit_after = |rest: &mut std::str::Chars<'_>| {
            let escaped = rest.next()?;
            Some(match escaped {
                'u' => (0..4).fold(0, |unit, _| {
                    unit * 16 + rest.next().and_then(|d| d.to_digit(16)).unwrap_or(0)
                }),
                'b' => 0x08,
                'f' => 0x0c,
                'n' => 0x0a,
                'r' => 0x0d,
                't' => 0x09,
                other => other as u32, // `"` and `\`
            })
        };
        std::iter::from_fn(move || {
            let c = rest.next()?;
            if c != '\\' {
                return Some(c as u32);
            }
            let unit = unit_after(&mut rest)?;
            if !(0xd800..0xdc00).contains(&unit) {
                return Some(unit);
            }
            // Two stood-in halves side by side make one character in JavaScript.
            let mut ahead = rest.clone();
            if ahead.next() == Some('\\')
                && let Some(low) = unit_after(&mut ahead).filter(|u| (0xdc00..0xe000).contains(u))
            {
                rest = ahead;
                return Some(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00));
            }
            Some(unit)
        })
    }
}

impl Borrow<str> for JsString {
    /// Lookups by `&str` match keys that need no escaping, which every key pi reads is.
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for JsString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", self.0)
    }
}

impl From<&str> for JsString {
    fn from(text: &str) -> Self {
        JsString::new(text)
    }
}

impl From<&str> for JsValue {
    fn from(text: &str) -> Self {
        JsValue::String(JsString::new(text))
    }
}

impl From<String> for JsValue {
    fn from(text: String) -> Self {
        JsValue::String(JsString::new(&text))
    }
}

impl From<f64> for JsValue {
    fn from(n: f64) -> Self {
        JsValue::Number(n)
    }
}

impl From<bool> for JsValue {
    fn from(b: bool) -> Self {
        JsValue::Bool(b)
    }
}

impl JsValue {
    /// The member `key`, if this is an object that has it.
    pub fn get(&self, key: &str) -> Option<&JsValue> {
        match self {
            JsValue::Object(map) => map.get(key),
            _ => None,
        }
    }

    /// The object, if this is one.
    pub fn as_object(&self) -> Option<&JsObject> {
        match self {
            JsValue::Object(map) => Some(map),
            _ => None,
        }
    }

    /// The object, mutably, if this is one.
    pub fn as_object_mut(&mut self) -> Option<&mut JsObject> {
        match self {
            JsValue::Object(map) => Some(map),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&[JsValue]> {
        match self {
            JsValue::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The string with its UTF-16 code units, if this is a string.
    pub fn as_js_str(&self) -> Option<&JsString> {
        match self {
            JsValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The string's text (lossy for lone surrogates), if this is a string.
    pub fn as_str(&self) -> Option<Cow<'_, str>> {
        self.as_js_str().map(JsString::to_string_lossy)
    }

    /// The number, if this is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            JsValue::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// JavaScript truthiness.
    pub fn is_truthy(&self) -> bool {
        match self {
            JsValue::Null => false,
            JsValue::Bool(b) => *b,
            JsValue::Number(n) => *n != 0.0 && !n.is_nan(),
            JsValue::String(s) => !s.is_empty(),
            JsValue::Array(_) | JsValue::Object(_) => true,
        }
    }

    /// `String(value)`, as template literals and `Array.prototype.join` write a value
    /// (arrays join their items with commas, `null` items as nothing). Lone surrogates
    /// become U+FFFD.
    pub fn to_js_string(&self) -> String {
        match self {
            JsValue::String(s) => s.to_string_lossy().into_owned(),
            JsValue::Number(n) => number_to_string(*n),
            JsValue::Bool(b) => b.to_string(),
            JsValue::Null => "null".into(),
            JsValue::Array(items) => items
                .iter()
                .map(|item| {
                    if *item == JsValue::Null {
                        String::new()
                    } else {
                        item.to_js_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(","),
            JsValue::Object(_) => "[object Object]".into(),
        }
    }

    /// Puts every object's keys in the order the oracle prints them, in place (a document of
    /// 300,000 messages is not copied): it sorts them by code point into a new object, which
    /// JavaScript then enumerates array indexes first, in numeric order (see
    /// [`compare_sorted_keys`]).
    pub fn sort_keys(&mut self) {
        match self {
            JsValue::Array(items) => items.iter_mut().for_each(JsValue::sort_keys),
            JsValue::Object(map) => {
                map.sort_by(|a, _, b, _| a.compare_code_points(b));
                put_in_js_order(map);
                map.values_mut().for_each(JsValue::sort_keys);
            }
            _ => {}
        }
    }

    /// `JSON.stringify(value)`.
    pub fn stringify(&self) -> String {
        let mut out = String::new();
        self.write_compact(&mut out);
        out
    }

    /// `JSON.stringify(value)` appended to `out`.
    pub fn write_compact(&self, out: &mut String) {
        self.write(out, None, 0);
    }

    /// `JSON.stringify(value, null, indent)`.
    pub fn stringify_pretty(&self, indent: usize) -> String {
        let mut out = String::new();
        self.write(&mut out, Some(indent), 0);
        out
    }

    /// `JSON.stringify(value, null, indent)` appended to `out` as if the value sat `level`
    /// levels deep in a larger document (for writing a document piece by piece).
    pub fn write_pretty_at(&self, out: &mut String, indent: usize, level: usize) {
        self.write(out, Some(indent), level);
    }

    fn write(&self, out: &mut String, indent: Option<usize>, level: usize) {
        match self {
            JsValue::Null => out.push_str("null"),
            JsValue::Bool(true) => out.push_str("true"),
            JsValue::Bool(false) => out.push_str("false"),
            JsValue::Number(n) => write_number(*n, out),
            JsValue::String(s) => {
                out.push('"');
                out.push_str(s.escaped());
                out.push('"');
            }
            JsValue::Array(items) => {
                if items.is_empty() {
                    out.push_str("[]");
                    return;
                }
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, indent, level + 1);
                    item.write(out, indent, level + 1);
                }
                newline(out, indent, level);
                out.push(']');
            }
            JsValue::Object(map) => {
                if map.is_empty() {
                    out.push_str("{}");
                    return;
                }
                out.push('{');
                for (i, (key, value)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, indent, level + 1);
                    out.push('"');
                    out.push_str(key.escaped());
                    out.push_str(if indent.is_some() { "\": " } else { "\":" });
                    value.write(out, indent, level + 1);
                }
                newline(out, indent, level);
                out.push('}');
            }
        }
    }
}

fn newline(out: &mut String, indent: Option<usize>, level: usize) {
    if let Some(width) = indent {
        out.push('\n');
        push_spaces(width * level, out);
    }
}

/// Appends `count` spaces (pretty-printing's indentation), a slice at a time.
pub fn push_spaces(mut count: usize, out: &mut String) {
    const SPACES: &str = "                                                                ";
    while count > 0 {
        let n = count.min(SPACES.len());
        out.push_str(&SPACES[..n]);
        count -= n;
    }
}

/// `Number.prototype.toString()`: JavaScript's shortest round-trip form, `NaN`, `Infinity`.
pub fn number_to_string(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        let mut out = String::new();
        write_number(n, &mut out);
        out
    }
}

/// `Number.prototype.toString` as `JSON.stringify` uses it; non-finite numbers become `null`.
pub fn write_number(n: f64, out: &mut String) {
    if !n.is_finite() {
        out.push_str("null");
    } else if n == 0.0 {
        out.push('0'); // also -0
    } else if n.fract() == 0.0 && n.abs() < MAX_SAFE_PLUS_ONE {
        // Below 2^53 every integer is a double of its own, so its shortest round-trip digits
        // are its digits: what `Number.prototype.toString` prints, without ryu's search.
        write_integer(n as i64, out);
    } else {
        let mut buffer = ryu_js::Buffer::new();
        out.push_str(buffer.format_finite(n));
    }
}

/// 2^53: from here on not every integer is a double.
const MAX_SAFE_PLUS_ONE: f64 = 9_007_199_254_740_992.0;

/// Appends an integer's decimal digits (a leading `-` when negative).
pub fn write_integer(n: i64, out: &mut String) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        out.push('-');
    }
    // ASCII digits.
    out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

/// Appends `JSON.stringify(text)`: the string quoted and escaped.
pub fn write_string(text: &str, out: &mut String) {
    out.push('"');
    escape_into(text, out);
    out.push('"');
}

/// Appends `text` escaped as `JSON.stringify` escapes it.
fn escape_into(text: &str, out: &mut String) {
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.push_str(&text[start..i]);
        if escape.is_empty() {
            push_unicode_escape(b as u32, out);
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&text[start..]);
}

fn push_unicode_escape(unit: u32, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[((unit >> shift) & 0xf) as usize] as char);
    }
}

/// Decodes an escaped body written by [`escape_into`] or the parser. Returns false (and stops)
/// at a lone surrogate unless `lossy`, where it writes U+FFFD instead.
fn decode_escaped(escaped: &str, out: &mut String, lossy: bool) -> bool {
    let mut rest = escaped;
    while let Some(pos) = rest.find('\\') {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos + 1..];
        let (decoded, used) = match tail.as_bytes().first() {
            Some(b'"') => ('"', 1),
            Some(b'\\') => ('\\', 1),
            Some(b'n') => ('\n', 1),
            Some(b'r') => ('\r', 1),
            Some(b't') => ('\t', 1),
            Some(b'b') => ('\u{8}', 1),
            Some(b'f') => ('\u{c}', 1),
            Some(b'u') => {
                let unit = u32::from_str_radix(&tail[1..5], 16).unwrap_or(0xfffd);
                match char::from_u32(unit) {
                    Some(c) => (c, 5),
                    None if lossy => ('\u{fffd}', 5),
                    None => return false,
                }
            }
            _ => ('\u{fffd}', 1),
        };
        out.push(decoded);
        rest = &tail[used..];
    }
    out.push_str(rest);
    true
}

/// JavaScript's property order: keys that are array indexes ("0", "2", "10") come first, in
/// numeric order, then the other keys in insertion order. `JSON.parse` builds objects this
/// way and `JSON.stringify` writes them this way.
pub fn put_in_js_order(map: &mut JsObject) {
    let index_of = |key: &JsString| array_index(key.escaped());
    if !map.keys().any(|k| index_of(k).is_some()) {
        return;
    }
    // Stable: the non-index keys keep their order.
    map.sort_by(|a, _, b, _| match (index_of(a), index_of(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
}

/// The number a key names when it is an array index ("0", "7", "10"; not "01", "-1", "1.5" or
/// 2^32 - 1 and beyond): such keys come first in a JavaScript object, in numeric order.
pub fn array_index(key: &str) -> Option<u32> {
    let first = *key.as_bytes().first()?;
    if !first.is_ascii_digit() || (first == b'0' && key.len() > 1) || key.len() > 10 {
        return None;
    }
    key.parse::<u64>()
        .ok()
        .filter(|&n| n < u64::from(u32::MAX))
        .map(|n| n as u32)
}

/// The order of two keys (without escapes) in a document the oracle prints: array indexes
/// first, in numeric order, then the others by code point (UTF-8 byte order).
pub fn compare_sorted_keys(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (array_index(a), array_index(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// The length of the JSON number `bytes` start with; `Err(at)` where they stop being one.
pub(super) fn number_len(bytes: &[u8]) -> Result<usize, usize> {
    let digits_from = |from: usize| {
        from + bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut pos = usize::from(bytes.first() == Some(&b'-'));
    pos = match bytes.get(pos) {
        Some(b'0') => pos + 1,
        Some(b'1'..=b'9') => digits_from(pos),
        _ => return Err(pos),
    };
    if bytes.get(pos) == Some(&b'.') {
        let end = digits_from(pos + 1);
        if end == pos + 1 {
            return Err(end);
        }
        pos = end;
    }
    if let Some(b'e' | b'E') = bytes.get(pos) {
        pos += 1;
        if let Some(b'+' | b'-') = bytes.get(pos) {
            pos += 1;
        }
        let end = digits_from(pos);
        if end == pos {
            return Err(end);
        }
        pos = end;
    }
    Ok(pos)
}

/// `JSON.parse(text)`.
pub fn parse(text: &str) -> Result<JsValue, JsonError> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        text,
        pos: 0,
    };
    parser.skip_ws();
    let value = parser.value()?;
    parser.skip_ws();
    if parser.pos != parser.bytes.len() {
        return Err(parser.error("unexpected text after the value"));
    }
    Ok(value)
}

/// `JSON.parse` of bytes read as UTF-8 the way Node reads files: invalid sequences become U+FFFD.
pub fn parse_bytes(bytes: &[u8]) -> Result<JsValue, JsonError> {
    parse(&String::from_utf8_lossy(bytes))
}

struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn error(&self, reason: &'static str) -> JsonError {
        JsonError {
            offset: self.pos,
            reason,
        }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &'static str, value: JsValue) -> Result<JsValue, JsonError> {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("unexpected token"))
        }
    }

    /// Iterative, so that nesting depth costs heap, not stack.
    fn value(&mut self) -> Result<JsValue, JsonError> {
        enum Open {
            Array(Vec<JsValue>),
            Object(JsObject, JsString),
        }
        let mut stack: Vec<Open> = Vec::new();
        loop {
            // Read one value, or open a container and go on to its first member.
            let mut value = match self.bytes.get(self.pos) {
                None => return Err(self.error("unexpected end of input")),
                Some(b'n') => self.literal("null", JsValue::Null)?,
                Some(b't') => self.literal("true", JsValue::Bool(true))?,
                Some(b'f') => self.literal("false", JsValue::Bool(false))?,
                Some(b'"') => JsValue::String(self.string()?),
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b'[') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.bytes.get(self.pos) == Some(&b']') {
                        self.pos += 1;
                        JsValue::Array(Vec::new())
                    } else {
                        if stack.len() >= MAX_DEPTH {
                            return Err(self.error("nesting too deep"));
                        }
                        stack.push(Open::Array(Vec::new()));
                        continue;
                    }
                }
                Some(b'{') => {
                    self.pos += 1;
                    self.skip_ws();
                    if self.bytes.get(self.pos) == Some(&b'}') {
                        self.pos += 1;
                        JsValue::Object(JsObject::new())
                    } else {
                        if stack.len() >= MAX_DEPTH {
                            return Err(self.error("nesting too deep"));
                        }
                        let key = self.key()?;
                        stack.push(Open::Object(JsObject::new(), key));
                        continue;
                    }
                }
                Some(_) => return Err(self.error("unexpected token")),
            };
            // Place the value in its container; close every container that ends here.
            loop {
                self.skip_ws();
                let Some(open) = stack.last_mut() else {
                    return Ok(value);
                };
                let next = self.bytes.get(self.pos).copied();
                self.pos += 1;
                match (open, next) {
                    (Open::Array(items), Some(b',')) => {
                        items.push(value);
                        self.skip_ws();
                        break;
                    }
                    (Open::Object(map, key), Some(b',')) => {
                        // IndexMap keeps the first position and takes the new value, as JS does.
                        map.insert(key.clone(), value);
                        self.skip_ws();
                        *key = self.key()?;
                        break;
                    }
                    (Open::Array(items), Some(b']')) => {
                        items.push(value);
                        let Some(Open::Array(items)) = stack.pop() else {
                            unreachable!()
                        };
                        value = JsValue::Array(items);
                    }
                    (Open::Object(map, key), Some(b'}')) => {
                        map.insert(key.clone(), value);
                        let Some(Open::Object(mut map, _)) = stack.pop() else {
                            unreachable!()
                        };
                        put_in_js_order(&mut map);
                        value = JsValue::Object(map);
                    }
                    _ => {
                        self.pos -= 1;
                        return Err(self.error("expected ',' or a closing bracket"));
                    }
                }
            }
        }
    }

    /// An object key and its colon, leaving the position at the value.
    fn key(&mut self) -> Result<JsString, JsonError> {
        if self.bytes.get(self.pos) != Some(&b'"') {
            return Err(self.error("expected a string key"));
        }
        let key = self.string()?;
        self.skip_ws();
        if self.bytes.get(self.pos) != Some(&b':') {
            return Err(self.error("expected ':'"));
        }
        self.pos += 1;
        self.skip_ws();
        Ok(key)
    }

    fn number(&mut self) -> Result<JsValue, JsonError> {
        let start = self.pos;
        match number_len(&self.bytes[start..]) {
            Ok(len) => self.pos += len,
            Err(at) => {
                self.pos += at;
                return Err(self.error("invalid number"));
            }
        }
        let n: f64 = self.text[start..self.pos].parse().map_err(|_| JsonError {
            offset: start,
            reason: "invalid number",
        })?;
        Ok(JsValue::Number(n))
    }

    /// Reads a string literal into its stringify form: escapes are normalized, pairs of
    /// surrogate escapes joined, lone surrogates kept as `\udxxx`.
    fn string(&mut self) -> Result<JsString, JsonError> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        let mut run_start = self.pos;
        loop {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(self.error("unterminated string"));
            };
            match b {
                b'"' => {
                    escape_into(&self.text[run_start..self.pos], &mut out);
                    self.pos += 1;
                    return Ok(JsString(out.into_boxed_str()));
                }
                0x00..=0x1f => return Err(self.error("control character in string")),
                b'\\' => {
                    escape_into(&self.text[run_start..self.pos], &mut out);
                    self.escape(&mut out)?;
                    run_start = self.pos;
                }
                _ => self.pos += 1,
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), JsonError> {
        let simple = match self.bytes.get(self.pos + 1) {
            Some(b'"') => "\\\"",
            Some(b'\\') => "\\\\",
            Some(b'/') => "/",
            Some(b'b') => "\\b",
            Some(b'f') => "\\f",
            Some(b'n') => "\\n",
            Some(b'r') => "\\r",
            Some(b't') => "\\t",
            Some(b'u') => "",
            _ => return Err(self.error("invalid escape")),
        };
        if !simple.is_empty() {
            out.push_str(simple);
            self.pos += 2;
            return Ok(());
        }
        let unit = self.hex4(self.pos + 2)?;
        self.pos += 6;
        if (0xd800..0xdc00).contains(&unit)
            && self.bytes.get(self.pos) == Some(&b'\\')
            && self.bytes.get(self.pos + 1) == Some(&b'u')
        {
            let low = self.hex4(self.pos + 2)?;
            if (0xdc00..0xe000).contains(&low) {
                self.pos += 6;
                let c = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
                out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                return Ok(());
            }
        }
        match char::from_u32(unit) {
            Some(c) => {
                let mut buf = [0u8; 4];
                escape_into(c.encode_utf8(&mut buf), out);
            }
            None => push_unicode_escape(unit, out), // lone surrogate
        }
        Ok(())
    }

    fn hex4(&self, at: usize) -> Result<u32, JsonError> {
        let digits = self.bytes.get(at..at + 4).ok_or(JsonError {
            offset: at,
            reason: "invalid unicode escape",
        })?;
        let mut unit = 0;
        for &d in digits {
            let v = (d as char).to_digit(16).ok_or(JsonError {
                offset: at,
                reason: "invalid unicode escape",
            })?;
            unit = unit * 16 + v;
        }
        Ok(unit)
    }
}

/// Values crossing to serde_json (the JSON-RPC wire). serde_json strings cannot hold lone
/// surrogates: they become U+FFFD there (files keep them). Whole numbers below 2^53 travel as
/// integers, so that they print as JavaScript prints them.
impl JsValue {
    /// This value as a `serde_json::Value`.
    pub fn to_serde(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            JsValue::Null => Value::Null,
            JsValue::Bool(b) => Value::Bool(*b),
            JsValue::Number(n) => {
                if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
                    Value::from(*n as i64)
                } else {
                    serde_json::Number::from_f64(*n).map_or(Value::Null, Value::Number)
                }
            }
            JsValue::String(s) => Value::String(s.to_string_lossy().into_owned()),
            JsValue::Array(items) => Value::Array(items.iter().map(JsValue::to_serde).collect()),
            JsValue::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_serde()))
                    .collect(),
            ),
        }
    }

    /// A `serde_json::Value` as a JavaScript value (`JSON.parse` of its text).
    pub fn from_serde(value: &serde_json::Value) -> JsValue {
        use serde_json::Value;
        match value {
            Value::Null => JsValue::Null,
            Value::Bool(b) => JsValue::Bool(*b),
            Value::Number(n) => JsValue::Number(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => JsValue::String(JsString::from_wire(s)),
            Value::Array(items) => JsValue::Array(items.iter().map(JsValue::from_serde).collect()),
            Value::Object(map) => {
                let mut object: JsObject = map
                    .iter()
                    .map(|(k, v)| (JsString::from_wire(k), JsValue::from_serde(v)))
                    .collect();
                put_in_js_order(&mut object);
                JsValue::Object(object)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(text: &str) -> String {
        parse(text).unwrap().stringify()
    }

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        assert_eq!(roundtrip("1e21"), "1e+21");
        assert_eq!(roundtrip("1e16"), "10000000000000000");
        assert_eq!(roundtrip("-0"), "0");
        assert_eq!(roundtrip("-0.0"), "0");
        assert_eq!(roundtrip("1.50"), "1.5");
        assert_eq!(roundtrip("0.1"), "0.1");
        assert_eq!(roundtrip("1e-7"), "1e-7");
        assert_eq!(roundtrip("123456789012345678901"), "123456789012345680000");
        assert_eq!(roundtrip("9007199254740993"), "9007199254740992");
        assert_eq!(roundtrip("1e400"), "null");
        assert_eq!(roundtrip("2.5E+3"), "2500");
    }

    /// Integers below 2^53 skip ryu: the digits are ryu's (JavaScript's) all the same.
    #[test]
    fn integers_print_as_ryu_prints_them() {
        use rand::{Rng, SeedableRng};
        let ryu = |n: f64| ryu_js::Buffer::new().format_finite(n).to_string();
        let mut rng = rand::rngs::StdRng::seed_from_u64(53);
        let mut numbers: Vec<f64> = vec![
            1.0,
            -1.0,
            9.0,
            10.0,
            1e15,
            1e15 - 1.0,
            1e15 + 1.0,
            1733000000000.0,
            9_007_199_254_740_991.0,
            -9_007_199_254_740_991.0,
            9_007_199_254_740_990.0,
            4_503_599_627_370_496.5,
            0.5,
            -0.5,
            1e-300,
        ];
        for _ in 0..100_000 {
            let bits = rng.random_range(1..=53);
            let n = rng.random_range(1..(1u64 << bits)) as f64;
            numbers.push(if rng.random_bool(0.3) { -n } else { n });
            numbers.push(n + 0.5);
        }
        for n in numbers {
            let mut out = String::new();
            write_number(n, &mut out);
            assert_eq!(out, ryu(n), "{n}");
        }
        for (n, text) in [
            (9_007_199_254_740_992.0, "9007199254740992"),
            (1e21, "1e+21"),
            (2f64.powi(60), "1152921504606847000"),
            (-0.0, "0"),
        ] {
            assert_eq!(number_to_string(n), text);
        }
    }

    #[test]
    fn strings_are_escaped_as_stringify_escapes_them() {
        assert_eq!(roundtrip(r#""a\/b""#), r#""a/b""#);
        assert_eq!(roundtrip(r#""\u0041\u00e9""#), "\"Aé\"");
        assert_eq!(roundtrip(r#""\u001f\u0000\b\f""#), r#""\u001f\u0000\b\f""#);
        assert_eq!(roundtrip(r#""\u2028 \u007f""#), "\"\u{2028} \u{7f}\"");
        assert_eq!(roundtrip(r#""\ud83d\ude42""#), "\"🙂\"");
        assert_eq!(roundtrip(r#""x\uD83Dy""#), r#""x\ud83dy""#);
        assert_eq!(roundtrip(r#""\ude42\ud83d""#), r#""\ude42\ud83d""#);
        assert_eq!(roundtrip(r#""tab\there""#), r#""tab\there""#);
    }

    #[test]
    fn raw_control_characters_are_rejected() {
        assert!(parse("\"tab\there\"").is_err());
    }

    #[test]
    fn array_index_keys_come_first_in_numeric_order() {
        assert_eq!(
            roundtrip(r#"{"z":1,"10":"ten","2":"two","02":0,"-1":0}"#),
            r#"{"2":"two","10":"ten","z":1,"02":0,"-1":0}"#
        );
        assert_eq!(
            roundtrip(r#"{"4294967295":0,"4294967294":1}"#),
            r#"{"4294967294":1,"4294967295":0}"#
        );
    }

    /// As the oracle prints a value: keys sorted by code point into a new object, which
    /// JavaScript enumerates array indexes first (the expected text is Node's).
    #[test]
    fn sorted_keys_are_in_the_oracles_order() {
        let mut value = parse(
            r#"{"z":1,"10":"ten","2":"two","02":0,"-1":0,"b":{"9":1,"a":2,"1":3,"4294967295":4,"4294967294":5,"":6,"😀":7,"｡":8,"0":9}}"#,
        )
        .unwrap();
        value.sort_keys();
        assert_eq!(
            value.stringify(),
            r#"{"2":"two","10":"ten","-1":0,"02":0,"b":{"0":9,"1":3,"9":1,"4294967294":5,"":6,"4294967295":4,"a":2,"｡":8,"😀":7},"z":1}"#
        );
    }

    /// Lone surrogates sort by their own value, as the oracle's code point comparison sorts
    /// them (the expected order is Node's).
    #[test]
    fn keys_with_lone_surrogates_sort_by_code_point() {
        let mut value = parse(
            r#"{"\ud83d":1,"｡":2,"\uffff":3,"😀":4,"\ude00":5,"":6,"\ue000":7,"a\ud800b":8,"a\ud800":9,"a":10,"\ud83d\ude00x":11,"\n":12,"\u0001":13,"\"":14}"#,
        )
        .unwrap();
        value.sort_keys();
        let order: Vec<String> = value
            .as_object()
            .unwrap()
            .values()
            .map(JsValue::to_js_string)
            .collect();
        assert_eq!(order.join(","), "6,13,12,14,10,9,8,1,5,7,2,3,4,11");
        // Two escaped halves side by side are one character to JavaScript.
        let halves = JsString(r"\ud83d\ude00".into());
        assert!(halves.compare_code_points(&JsString::new("😀")).is_eq());
        assert!(
            halves
                .compare_code_points(&JsString::new("\u{ffff}"))
                .is_gt()
        );
    }

    #[test]
    fn duplicate_keys_keep_first_position_and_last_value() {
        assert_eq!(roundtrip(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
    }

    #[test]
    fn whitespace_and_structure_follow_json_parse() {
        assert_eq!(
            roundtrip(" {\"a\" : [ 1 , true , null ] }\r"),
            r#"{"a":[1,true,null]}"#
        );
        for bad in [
            "",
            "01",
            "1.",
            ".5",
            "+1",
            "[1,]",
            "{\"a\":1,}",
            "\u{feff}{}",
            "{} x",
            "nul",
            "'a'",
            "\"\\x\"",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} must be rejected");
        }
    }

    #[test]
    fn decoding_keeps_or_replaces_lone_surrogates() {
        let s = parse(r#""a\ud83d\n""#).unwrap();
        let s = s.as_js_str().unwrap();
        assert_eq!(s.to_str(), None);
        assert_eq!(s.to_string_lossy(), "a\u{fffd}\n");
        let plain = JsString::new("q\"uote\u{1}");
        assert_eq!(plain.escaped(), "q\\\"uote\\u0001");
        assert_eq!(plain.to_str().unwrap(), "q\"uote\u{1}");
    }

    #[test]
    fn trimming_keeps_lone_surrogates_and_drops_escaped_whitespace() {
        let trim = |text: &str| {
            parse(text)
                .unwrap()
                .as_js_str()
                .unwrap()
                .trim_js()
                .escaped()
                .to_string()
        };
        assert_eq!(trim(r#"" \t x \ud83d\n""#), r#"x \ud83d"#);
        assert_eq!(trim(r#""\u00a0a b\u3000""#), "a b");
        assert_eq!(trim(r#"" \n ""#), "");
        assert_eq!(trim(r#""\u000bq\u0008""#), r#"q\b"#);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(MAX_DEPTH + 5);
        assert_eq!(parse(&deep).unwrap_err().reason, "nesting too deep");
    }

    #[test]
    fn pretty_printing_matches_stringify_with_indent() {
        let v = parse(r#"{"a":[1,{}],"b":{"c":[]}}"#).unwrap();
        assert_eq!(
            v.stringify_pretty(2),
            "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": {\n    \"c\": []\n  }\n}"
        );
    }
}
