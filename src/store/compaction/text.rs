//! JavaScript string arithmetic on [`JsString`]'s escaped form: `.length` and `.slice` count
//! UTF-16 code units, and a slice may end inside a surrogate pair, leaving a lone surrogate that
//! only the escaped form can hold. Prompts are built here so they stay exactly pi's strings.

use crate::format::json::JsString;

/// One UTF-16 unit or a whole character of an escaped body, with its byte range.
struct Token {
    start: usize,
    end: usize,
    units: usize,
}

fn tokens(body: &str) -> impl Iterator<Item = Token> + '_ {
    let mut chars = body.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, c) = chars.next()?;
        if c == '\\' {
            let (_, kind) = chars.next()?;
            let len = if kind == 'u' {
                for _ in 0..4 {
                    chars.next();
                }
                6
            } else {
                2
            };
            Some(Token {
                start,
                end: (start + len).min(body.len()),
                units: 1,
            })
        } else {
            Some(Token {
                start,
                end: start + c.len_utf8(),
                units: c.len_utf16(),
            })
        }
    })
}

/// `s.length`.
pub fn length(s: &JsString) -> usize {
    tokens(s.escaped()).map(|t| t.units).sum()
}

/// The `.length` of a plain Rust string.
pub fn str_length(s: &str) -> usize {
    s.encode_utf16().count()
}

/// `s.slice(0, n)`: may cut a surrogate pair, keeping its high half as a lone surrogate.
pub fn slice_to(s: &JsString, n: usize) -> JsString {
    let body = s.escaped();
    let mut out = JsText::new();
    let mut taken = 0;
    for t in tokens(body) {
        if taken + t.units <= n {
            out.body.push_str(&body[t.start..t.end]);
            taken += t.units;
        } else {
            if taken < n {
                // An astral character straddles the end: JavaScript keeps its high surrogate.
                let c = body[t.start..t.end].chars().next().unwrap_or('\u{fffd}');
                let mut units = [0u16; 2];
                let high = c.encode_utf16(&mut units)[0];
                out.body.push_str(&format!("\\u{high:04x}"));
            }
            break;
        }
    }
    out.finish()
}

/// pi 1.6's `sliceHead(s, n)`: `s.slice(0, n)`, one unit shorter when that would end on the
/// high half of a surrogate pair.
pub fn slice_head(s: &JsString, n: usize) -> JsString {
    let body = s.escaped();
    let mut out = JsText::new();
    let mut taken = 0;
    let mut last_high_escape: Option<usize> = None;
    let unit = |piece: &str| {
        piece
            .strip_prefix("\\u")
            .and_then(|h| u16::from_str_radix(h, 16).ok())
    };
    for t in tokens(body) {
        let piece = &body[t.start..t.end];
        if taken + t.units > n {
            // A pair written as two escapes straddles the end: drop its high half too.
            if let (Some(at), Some(0xdc00..=0xdfff)) = (last_high_escape, unit(piece)) {
                out.body.truncate(at);
            }
            break;
        }
        last_high_escape = matches!(unit(piece), Some(0xd800..=0xdbff)).then_some(out.body.len());
        out.body.push_str(piece);
        taken += t.units;
    }
    out.finish()
}

/// A JavaScript string being built by concatenation (template literals, `join`).
#[derive(Default)]
pub struct JsText {
    body: String,
}

impl JsText {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a JavaScript string.
    pub fn js(&mut self, s: &JsString) -> &mut Self {
        self.body.push_str(s.escaped());
        self
    }

    /// Appends plain text.
    pub fn text(&mut self, s: &str) -> &mut Self {
        self.body.push_str(JsString::new(s).escaped());
        self
    }

    /// The string. A lone high surrogate followed by a lone low one is one character, as in
    /// JavaScript, so such neighbours are joined.
    pub fn finish(self) -> JsString {
        let body = if self.body.contains("\\ud") {
            join_surrogates(&self.body)
        } else {
            self.body
        };
        crate::format::json::parse(&format!("\"{body}\""))
            .ok()
            .and_then(|v| v.as_js_str().cloned())
            .unwrap_or_else(|| JsString::new(""))
    }
}

/// `parts.join(separator)`.
pub fn join(parts: &[JsString], separator: &str) -> JsString {
    let mut out = JsText::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.text(separator);
        }
        out.js(part);
    }
    out.finish()
}

fn join_surrogates(body: &str) -> String {
    let unit = |at: usize| -> Option<u16> {
        let s = body.get(at..at + 6)?;
        if !s.starts_with("\\u") {
            return None;
        }
        u16::from_str_radix(&s[2..], 16).ok()
    };
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    let bytes = body.as_bytes();
    while i < body.len() {
        if bytes[i] == b'\\' {
            if let (Some(h @ 0xd800..=0xdbff), Some(l @ 0xdc00..=0xdfff)) = (unit(i), unit(i + 6)) {
                let c = char::decode_utf16([h, l]).next().and_then(Result::ok);
                if let Some(c) = c {
                    out.push(c);
                    i += 12;
                    continue;
                }
            }
            // Copy the whole escape so its backslash is not read again.
            let len = if bytes.get(i + 1) == Some(&b'u') {
                6
            } else {
                2
            };
            let end = (i + len).min(body.len());
            out.push_str(&body[i..end]);
            i = end;
        } else {
            let c = body[i..].chars().next().unwrap_or('\u{fffd}');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// `Array.prototype.sort()` without a comparator on strings: UTF-16 code unit order.
pub fn utf16_cmp(a: &JsString, b: &JsString) -> std::cmp::Ordering {
    units(a).cmp(units(b))
}

fn units(s: &JsString) -> impl Iterator<Item = u16> + '_ {
    let body = s.escaped();
    tokens(body).flat_map(move |t| {
        let piece = &body[t.start..t.end];
        let mut buf = [0u16; 2];
        let v: Vec<u16> = if let Some(hex) = piece.strip_prefix("\\u") {
            vec![u16::from_str_radix(hex, 16).unwrap_or(0xfffd)]
        } else if let Some(rest) = piece.strip_prefix('\\') {
            let c = match rest {
                "n" => '\n',
                "r" => '\r',
                "t" => '\t',
                "b" => '\u{8}',
                "f" => '\u{c}',
                other => other.chars().next().unwrap_or('\\'),
            };
            c.encode_utf16(&mut buf).to_vec()
        } else {
            piece
                .chars()
                .next()
                .map(|c| c.encode_utf16(&mut buf).to_vec())
                .unwrap_or_default()
        };
        v
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(text: &str) -> JsString {
        crate::format::json::parse(text)
            .unwrap()
            .as_js_str()
            .unwrap()
            .clone()
    }

    #[test]
    fn lengths_count_utf16_units() {
        assert_eq!(length(&js(r#""a😀\n""#)), 4);
        assert_eq!(length(&js(r#""\ud83d""#)), 1);
    }

    #[test]
    fn a_slice_can_leave_a_lone_high_surrogate() {
        let s = slice_to(&js(r#""ab😀c""#), 3);
        assert_eq!(s.escaped(), "ab\\ud83d");
        assert_eq!(slice_to(&js(r#""ab😀c""#), 4).escaped(), "ab😀");
    }

    #[test]
    fn slice_head_keeps_a_straddling_character_out() {
        assert_eq!(slice_head(&js(r#""ab😀c""#), 3).escaped(), "ab");
        assert_eq!(slice_head(&js(r#""ab😀c""#), 4).escaped(), "ab😀");
        assert_eq!(slice_head(&js(r#""ab\ud83dc""#), 3).escaped(), "ab\\ud83d");
    }

    #[test]
    fn lone_halves_join_when_concatenated() {
        let mut t = JsText::new();
        t.js(&js(r#""x\ud83d""#)).js(&js(r#""\ude00y""#));
        assert_eq!(t.finish().escaped(), "x😀y");
    }

    #[test]
    fn sorting_is_by_utf16_units() {
        let (emoji, fullwidth) = (JsString::new("😀"), JsString::new("～"));
        assert_eq!(utf16_cmp(&emoji, &fullwidth), std::cmp::Ordering::Less);
    }
}
