//! Seeded random JSON texts made of what tells JavaScript-exact JSON apart from a plain copy
//! (tests only): every escape `JSON.stringify` writes and those it does not, lone and paired
//! surrogates, raw non-ASCII, U+2028, numbers JavaScript prints differently from their text,
//! repeated keys, index-like keys, `__proto__`, keys with escapes, whitespace between tokens,
//! and deep nesting.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

pub(crate) struct Tricky {
    rng: StdRng,
    /// How often (per thousand keys) a key holds an escape.
    pub(crate) escaped_keys_per_mille: u32,
    /// How often (per thousand values) whitespace goes around a token.
    pub(crate) whitespace_per_mille: u32,
}

/// Keys where sorting, repeating or JavaScript's own handling could go wrong.
const KEYS: &[&str] = &[
    "a",
    "b",
    "B",
    "ab",
    "a b",
    "_",
    "Z",
    "é",
    "😀",
    "｡",
    "\u{ffff}",
    "",
    "0",
    "1",
    "2",
    "10",
    "01",
    "-1",
    "1.5",
    "4294967294",
    "4294967295",
    "__proto__",
    "constructor",
    "toString",
    "role",
    "content",
    "type",
    "message",
    "timestamp",
];

/// Keys whose bytes are not their names.
const ESCAPED_KEYS: &[&str] = &[
    r"\u0061",
    r"a\nb",
    r"\/",
    r"\u00e9",
    r"r\u006fle",
    r#"q\"uote"#,
    r"\\",
    r"\ud83d",
    r"\ud83d\ude00",
];

/// Numbers that print differently from their text, or just as their text.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "-0.0",
    "0.0",
    "0e5",
    "1",
    "-1",
    "7",
    "1.0",
    "1.50",
    "2.5E+3",
    "1e2",
    "1E2",
    "1e-7",
    "1e-6",
    "0.000001",
    "0.0000001",
    "1e21",
    "1e20",
    "100000000000000000000",
    "1000000000000000000000",
    "123456789012345",
    "-123456789012345",
    "999999999999999",
    "1234567890123456",
    "9007199254740991",
    "9007199254740993",
    "12345678901234567890",
    "123456789012345678901234567890",
    "0.1",
    "0.30000000000000004",
    "5e-324",
    "2e-324",
    "1e-400",
    "-1e-400",
    "1e400",
    "-1e400",
    "1.7976931348623157e308",
    "1733000000000",
    "-12.50",
    "3.14159",
];

/// String pieces: raw characters and escapes, those `JSON.stringify` writes and others.
const STRING_PIECES: &[&str] = &[
    "a",
    "hello",
    " ",
    "é",
    "🙂",
    "\u{2028}",
    "\u{2029}",
    "\u{7f}",
    "\u{ffff}",
    "\u{feff}",
    "/",
    "'",
    r#"\""#,
    r"\\",
    r"\/",
    r"\b",
    r"\f",
    r"\n",
    r"\r",
    r"\t",
    r"\u0000",
    r"\u0001",
    r"\u001f",
    r"\u001F",
    r"\u000b",
    r"\u0008",
    r"\u0009",
    r"\u000a",
    r"\u000A",
    r"\u000c",
    r"\u000d",
    r"\u0020",
    r"\u0022",
    r"\u005c",
    r"\u002f",
    r"\u0041",
    r"\u007f",
    r"\u00e9",
    r"\u00E9",
    r"\u2028",
    r"\u2029",
    r"\ufeff",
    r"\uffff",
    r"\ud83d\ude00",
    r"\uD83D\uDE00",
    r"\ud83d",
    r"\ude00",
    r"\ude00\ud83d",
    r"\ud800\ud800",
    r"\udbff\udfff",
];

impl Tricky {
    pub(crate) fn new(seed: u64) -> Tricky {
        Tricky {
            rng: StdRng::seed_from_u64(seed),
            escaped_keys_per_mille: 20,
            whitespace_per_mille: 150,
        }
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    pub(crate) fn chance(&mut self, per_mille: u32) -> bool {
        self.rng.random_range(0..1000) < per_mille
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }

    /// JSON whitespace, sometimes.
    pub(crate) fn whitespace(&mut self, out: &mut String) {
        if self.chance(self.whitespace_per_mille) {
            for _ in 0..=self.below(3) {
                out.push([' ', '\t', '\n', '\r'][self.below(4)]);
            }
        }
    }

    /// A number's text: one of [`NUMBERS`] or made of random parts.
    pub(crate) fn number(&mut self, out: &mut String) {
        if self.chance(400) {
            out.push_str(self.pick(NUMBERS));
            return;
        }
        if self.chance(300) {
            out.push('-');
        }
        if self.chance(200) {
            out.push('0');
        } else {
            out.push(char::from(b'1' + self.below(9) as u8));
            for _ in 0..self.below(25) {
                out.push(char::from(b'0' + self.below(10) as u8));
            }
        }
        if self.chance(300) {
            out.push('.');
            for _ in 0..=self.below(20) {
                out.push(char::from(b'0' + self.below(10) as u8));
            }
        }
        if self.chance(250) {
            out.push(if self.chance(500) { 'e' } else { 'E' });
            match self.below(3) {
                0 => out.push('+'),
                1 => out.push('-'),
                _ => {}
            }
            for _ in 0..=self.below(3) {
                out.push(char::from(b'0' + self.below(10) as u8));
            }
        }
    }

    /// A string literal with its quotes.
    pub(crate) fn string(&mut self, out: &mut String) {
        out.push('"');
        for _ in 0..self.below(7) {
            let piece = self.pick(STRING_PIECES);
            out.push_str(piece);
        }
        if self.chance(50) {
            // A random code unit, escaped (upper or lower case).
            let unit = self.rng.random_range(0..0x1_0000u32);
            if self.chance(500) {
                out.push_str(&format!("\\u{unit:04X}"));
            } else {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
        out.push('"');
    }

    /// An object key with its quotes.
    pub(crate) fn key(&mut self, out: &mut String) {
        out.push('"');
        if self.chance(self.escaped_keys_per_mille) {
            out.push_str(self.pick(ESCAPED_KEYS));
        } else {
            out.push_str(self.pick(KEYS));
        }
        out.push('"');
    }

    /// A value nested at most `depth` more levels.
    pub(crate) fn value(&mut self, depth: usize, out: &mut String) {
        self.whitespace(out);
        let kind = if depth == 0 {
            self.below(6)
        } else {
            self.below(9)
        };
        match kind {
            0 => out.push_str(["null", "true", "false"][self.below(3)]),
            1 | 2 => self.number(out),
            3..=5 => self.string(out),
            6 | 7 => self.object(depth - 1, out),
            _ => {
                out.push('[');
                self.whitespace(out);
                for i in 0..self.below(5) {
                    if i > 0 {
                        out.push(',');
                    }
                    self.value(depth - 1, out);
                }
                self.whitespace(out);
                out.push(']');
            }
        }
        self.whitespace(out);
    }

    /// An object whose members nest at most `depth` more levels; keys repeat now and then.
    pub(crate) fn object(&mut self, depth: usize, out: &mut String) {
        out.push('{');
        self.whitespace(out);
        for i in 0..self.below(6) {
            if i > 0 {
                out.push(',');
            }
            self.whitespace(out);
            self.key(out);
            self.whitespace(out);
            out.push(':');
            self.value(depth, out);
        }
        self.whitespace(out);
        out.push('}');
    }

    /// A random JSON text: usually an object, nesting up to `depth` levels.
    pub(crate) fn text(&mut self, depth: usize) -> String {
        let mut out = String::new();
        if self.chance(800) {
            self.whitespace(&mut out);
            self.object(depth, &mut out);
            self.whitespace(&mut out);
        } else {
            self.value(depth, &mut out);
        }
        out
    }

    /// `text` damaged at one place: a character removed, doubled or replaced by one that
    /// matters to JSON's grammar.
    pub(crate) fn damaged(&mut self, text: &str) -> String {
        let chars: Vec<char> = text.chars().collect();
        if chars.is_empty() {
            return "{".into();
        }
        let at = self.below(chars.len());
        let significant = [
            '{', '}', '[', ']', ',', ':', '"', '\\', 'u', 'e', 'E', '.', '-', '+', '0', '1', ' ',
            '\n', '\u{0}', '\u{1f}', 'x', 'n', '\u{a0}',
        ];
        let replacement = significant[self.below(significant.len())];
        let mut out: Vec<char> = chars.clone();
        match self.below(3) {
            0 => {
                out.remove(at);
            }
            1 => out.insert(at, replacement),
            _ => out[at] = replacement,
        }
        out.into_iter().collect()
    }
}
