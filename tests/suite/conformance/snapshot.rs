//! Normalized, oracle-checked documents kept as insta snapshots in `tests/snapshots/`, so that
//! the suite still checks this program's output on a machine without Node.
//!
//! A snapshot shows every value except long strings (message bodies, tool output) and long
//! arrays (the messages, rows and ids of a real session of a thousand entries): a string
//! longer than [`LONG`] characters, or holding a lone surrogate, is shown as its start, its
//! length and a hash of its exact JSON escape; an array of more than [`LONG_ARRAY`] items as
//! its first [`ARRAY_START`] items and a last string giving its length and a hash of its JSON.
//! That keeps the files small enough to read and still fails on any change. `tree` rows are
//! shown one per line as `"<depth> <id> <type>"`.

use pi_session::json::JsValue;

use crate::conformance::cases::path_str;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

const LONG: usize = 120;
const LONG_ARRAY: usize = 50;
const ARRAY_START: usize = 3;

/// Serializes a [`JsValue`] for insta, keys sorted by code point.
pub struct Snap<'a>(pub &'a JsValue);

impl Serialize for Snap<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            JsValue::Null => serializer.serialize_unit(),
            JsValue::Bool(b) => serializer.serialize_bool(*b),
            JsValue::Number(n) if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 => {
                serializer.serialize_i64(*n as i64)
            }
            JsValue::Number(n) => serializer.serialize_f64(*n),
            JsValue::String(s) => {
                let exact = s.to_str();
                match exact {
                    Some(text) if text.chars().count() <= LONG => serializer.serialize_str(&text),
                    _ => serializer.serialize_str(&digest(&s.to_string_lossy(), s.escaped())),
                }
            }
            JsValue::Array(items) if items.len() > LONG_ARRAY => {
                let mut seq = serializer.serialize_seq(Some(ARRAY_START + 1))?;
                for item in &items[..ARRAY_START] {
                    seq.serialize_element(&Snap(item))?;
                }
                seq.serialize_element(&format!(
                    "… ({} items, fnv1a {:016x})",
                    items.len(),
                    fnv1a(&self.0.stringify())
                ))?;
                seq.end()
            }
            JsValue::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&Snap(item))?;
                }
                seq.end()
            }
            JsValue::Object(fields) => {
                let mut keys: Vec<_> = fields.iter().collect();
                keys.sort_by(|a, b| a.0.to_string_lossy().cmp(&b.0.to_string_lossy()));
                let mut map = serializer.serialize_map(Some(keys.len()))?;
                for (key, value) in keys {
                    map.serialize_entry(&*key.to_string_lossy(), &Snap(value))?;
                }
                map.end()
            }
        }
    }
}

/// `"<start>… (<n> chars, fnv1a <hash>)"`.
fn digest(text: &str, escaped: &str) -> String {
    let hash = fnv1a(escaped);
    let start: String = text.chars().take(40).collect();
    format!(
        "{start}… ({} chars, fnv1a {hash:016x})",
        text.encode_utf16().count()
    )
}

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// insta settings for this suite: snapshots in `tests/snapshots/`, named as given.
pub fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}

/// Asserts `value` against the JSON snapshot `name`.
pub fn assert_json(name: &str, value: &JsValue) {
    let value = for_snapshot(value);
    settings().bind(|| insta::assert_json_snapshot!(name, Snap(&value)));
}

/// `value` with the rows of every `tree` as one string each, and the checkout's path (pi makes
/// a relative or missing `cwd` absolute against the process's) shown as `<checkout>`.
fn for_snapshot(value: &JsValue) -> JsValue {
    match value {
        JsValue::Array(items) => JsValue::Array(items.iter().map(for_snapshot).collect()),
        JsValue::Object(map) => JsValue::Object(
            map.iter()
                .map(|(key, value)| match value {
                    JsValue::Array(rows) if key.escaped() == "tree" => (
                        key.clone(),
                        JsValue::Array(rows.iter().map(tree_row).collect()),
                    ),
                    _ => (key.clone(), for_snapshot(value)),
                })
                .collect(),
        ),
        JsValue::String(s) => {
            let checkout = path_str(crate::conformance::env::root());
            match s.to_str() {
                Some(text) if text.starts_with(checkout) => {
                    JsValue::from(text.replacen(checkout, "<checkout>", 1))
                }
                _ => value.clone(),
            }
        }
        other => other.clone(),
    }
}

fn tree_row(row: &JsValue) -> JsValue {
    let field = |key| {
        row.get(key).map_or("-".to_string(), |v| match v.as_str() {
            Some(text) => text.into_owned(),
            None => v.stringify(),
        })
    };
    let expected = ["depth", "id", "type"];
    let fields = row.as_object().map(|r| r.len());
    if fields != Some(3) || !expected.iter().all(|k| row.get(k).is_some()) {
        return row.clone();
    }
    JsValue::from(format!(
        "{} {} {}",
        field("depth"),
        field("id"),
        field("type")
    ))
}

/// Asserts `text` against the text snapshot `name`.
pub fn assert_text(name: &str, text: &str) {
    settings().bind(|| insta::assert_snapshot!(name, text));
}

/// Asserts the differences between two documents (as their snapshots would show them) against
/// the text snapshot `name`: one line per member that differs, `<path>: <a> | <b>`. One
/// profile's document is kept in full; the other's is this, so that what differs between the
/// profiles is stated, and a change that touches both shows up once.
pub fn assert_json_diff(name: &str, (a_name, a): (&str, &JsValue), (b_name, b): (&str, &JsValue)) {
    let shown = |doc: &JsValue| serde_json::to_value(Snap(&for_snapshot(doc))).unwrap();
    let mut lines = vec![format!("<member>: {a_name} | {b_name}")];
    value_diff(&shown(a), &shown(b), "", &mut lines);
    assert_text(name, &lines.join("\n"));
}

fn value_diff(a: &serde_json::Value, b: &serde_json::Value, at: &str, out: &mut Vec<String>) {
    use serde_json::Value;
    let member = |key: &str| {
        let plain = key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let key = if plain {
            key.to_owned()
        } else {
            serde_json::to_string(key).unwrap()
        };
        if at.is_empty() {
            key
        } else {
            format!("{at}.{key}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                match (x.get(key), y.get(key)) {
                    (Some(p), Some(q)) => value_diff(p, q, &member(key), out),
                    (p, q) => out.push(format!("{}: {} | {}", member(key), shown(p), shown(q))),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (index, (p, q)) in x.iter().zip(y).enumerate() {
                value_diff(p, q, &format!("{at}[{index}]"), out);
            }
        }
        // Items inserted or removed (a harness file's leaf entries): the items only one side
        // has, by their index on that side.
        (Value::Array(x), Value::Array(y)) => {
            let x: Vec<String> = x.iter().map(ToString::to_string).collect();
            let y: Vec<String> = y.iter().map(ToString::to_string).collect();
            for (side, index, item) in line_diff(&x, &y) {
                match side {
                    Side::A => out.push(format!("{at}[{index}]: {item} | (none)")),
                    Side::B => out.push(format!("{at}[{index}]: (none) | {item}")),
                }
            }
        }
        _ if a == b => {}
        _ => out.push(format!("{at}: {a} | {b}")),
    }
}

fn shown(value: Option<&serde_json::Value>) -> String {
    value.map_or_else(|| "(none)".to_owned(), ToString::to_string)
}

/// Asserts the line differences between two texts against the text snapshot `name`: the lines
/// only `a` has (`-`) and only `b` has (`+`), with their line numbers, from a longest common
/// subsequence of lines.
pub fn assert_text_diff(name: &str, (a_name, a): (&str, &str), (b_name, b): (&str, &str)) {
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    let mut lines = vec![format!(
        "- {a_name} only, + {b_name} only (line numbers in each)"
    )];
    for (side, index, line) in line_diff(&a, &b) {
        let sign = if side == Side::A { '-' } else { '+' };
        lines.push(format!("{sign}{:>4} {line}", index + 1));
    }
    assert_text(name, &lines.join("\n"));
}

#[derive(PartialEq, Clone, Copy)]
enum Side {
    A,
    B,
}

/// The items only `a` or only `b` has, with their index on that side, in order: the complement
/// of a longest common subsequence.
fn line_diff<'a, T: PartialEq>(a: &'a [T], b: &'a [T]) -> Vec<(Side, usize, &'a T)> {
    // lcs[i][j]: the length of a longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push((Side::A, i, &a[i]));
            i += 1;
        } else {
            out.push((Side::B, j, &b[j]));
            j += 1;
        }
    }
    out
}
