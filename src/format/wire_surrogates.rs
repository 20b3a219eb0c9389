//! Lone surrogates in JSON that comes from a client. `JSON.parse` keeps a lone surrogate escape
//! (`"\ud83d"`) as a string of one UTF-16 unit, and pi writes it back as it came; serde_json,
//! which reads every message, refuses it. So a message holding one is read again after
//! [`protect`], which stands each lone surrogate for two private characters
//! ([`MARK`] + a character of plane 15 naming the unit), and each `MARK` a client sent for
//! `MARK MARK`; [`JsString::from_wire`](super::json::JsString::from_wire) turns them back
//! when a value becomes a JavaScript value (what files are written from).

/// U+10FFFE, a noncharacter: what introduces a stood-in surrogate.
pub(crate) const MARK: char = '\u{10FFFE}';
/// The first of the 2,048 plane-15 characters that stand for U+D800..U+DFFF.
pub(crate) const FIRST_STAND_IN: u32 = 0xF0000;

/// `bytes` (one JSON text) with its lone surrogate escapes and its marks stood in, or `None`
/// when it holds neither (it reads as it is).
pub(crate) fn protect(bytes: &[u8]) -> Option<Vec<u8>> {
    let mark = MARK.to_string();
    // Nearly every message has neither: a search, no copy.
    let surrogate_escape = memchr::memmem::find_iter(bytes, b"\\u")
        .any(|at| matches!(bytes.get(at + 2), Some(b'd' | b'D')));
    if !surrogate_escape && memchr::memmem::find(bytes, mark.as_bytes()).is_none() {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut changed = false;
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !in_string {
            in_string = b == b'"';
            out.push(b);
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                out.push(b);
                i += 1;
            }
            b'\\' if bytes.get(i + 1) == Some(&b'u') => {
                let Some(unit) = hex4(bytes, i + 2) else {
                    // Not a valid escape: left for the reader to refuse.
                    out.extend_from_slice(&bytes[i..(i + 2)]);
                    i += 2;
                    continue;
                };
                let low = (bytes.get(i + 6) == Some(&b'\\') && bytes.get(i + 7) == Some(&b'u'))
                    .then(|| hex4(bytes, i + 8))
                    .flatten()
                    .filter(|low| (0xDC00..0xE000).contains(low));
                match (unit, low) {
                    (0xD800..=0xDBFF, Some(low)) => {
                        let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        if code == MARK as u32 {
                            out.extend_from_slice(mark.repeat(2).as_bytes());
                            changed = true;
                        } else {
                            out.extend_from_slice(&bytes[i..i + 12]);
                        }
                        i += 12;
                    }
                    (0xD800..=0xDFFF, _) => {
                        out.extend_from_slice(mark.as_bytes());
                        let stand_in = char::from_u32(FIRST_STAND_IN + (unit - 0xD800))
                            .expect("plane 15 characters exist");
                        out.extend_from_slice(stand_in.to_string().as_bytes());
                        changed = true;
                        i += 6;
                    }
                    _ => {
                        out.extend_from_slice(&bytes[i..i + 6]);
                        i += 6;
                    }
                }
            }
            b'\\' => {
                out.extend_from_slice(&bytes[i..(i + 2).min(bytes.len())]);
                i += 2;
            }
            _ if bytes[i..].starts_with(mark.as_bytes()) => {
                out.extend_from_slice(mark.repeat(2).as_bytes());
                changed = true;
                i += mark.len();
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    changed.then_some(out)
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// Whether `text` holds a stood-in character (only then does it need [`restore`]).
pub(crate) fn has_stand_ins(text: &str) -> bool {
    text.contains(MARK)
}

/// The pieces of a protected text: plain text, or a UTF-16 unit that stood in.
pub(crate) enum Piece<'a> {
    Text(&'a str),
    Unit(u32),
}

/// Splits a protected text back into text and lone surrogate units.
pub(crate) fn restore(text: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if c != MARK {
            continue;
        }
        let Some(&(next_at, next)) = chars.peek() else {
            continue;
        };
        let unit = next as u32;
        if next == MARK {
            // A mark the client sent: keep one.
            pieces.push(Piece::Text(&text[start..next_at]));
            start = next_at + next.len_utf8();
            chars.next();
        } else if (FIRST_STAND_IN..FIRST_STAND_IN + 0x800).contains(&unit) {
            pieces.push(Piece::Text(&text[start..at]));
            pieces.push(Piece::Unit(0xD800 + unit - FIRST_STAND_IN));
            start = next_at + next.len_utf8();
            chars.next();
        }
    }
    pieces.push(Piece::Text(&text[start..]));
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::json::{JsValue, parse};

    /// A client's JSON read the way the server reads it, as the JavaScript value it means.
    fn read(text: &str) -> JsValue {
        let bytes = protect(text.as_bytes()).unwrap_or_else(|| text.as_bytes().to_vec());
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        JsValue::from_serde(&value)
    }

    #[test]
    fn lone_surrogates_and_marks_come_through_as_json_parse_reads_them() {
        for text in [
            r#"{"a":"x\ud83dy"}"#,
            r#"{"a":"\uDC00","b":["\ud800\ud800"],"\udfff":1}"#,
            r#"{"a":"a whole pair \ud83d\ude00 and \\ud800 as text"}"#,
            "{\"a\":\"a mark \u{10FFFE} and two \u{10FFFE}\u{10FFFE} and \u{10FFFE}\u{F0001}\"}",
            r#"{"a":"an escaped mark \udbff\udffe then \ud800"}"#,
            "{\"a\":\"plain \u{F0001}\"}",
        ] {
            assert_eq!(
                read(text).stringify(),
                parse(text).unwrap().stringify(),
                "{text}"
            );
        }
        assert!(protect(br#"{"a":"plain \u00e9 \ud83d\ude00"}"#).is_none());
    }
}
