//! Normalized, oracle-checked documents kept as insta snapshots in `tests/snapshots/`, so that
//! the suite still checks this program's output on a machine without Node.
//!
//! A snapshot shows every value except long strings (message bodies, tool output): a string
//! longer than [`LONG`] characters, or holding a lone surrogate, is shown as its start, its
//! length and a hash of its exact JSON escape, which keeps the files small and still fails on
//! any change. `tree` rows are shown one per line as `"<depth> <id> <type>"`.

use pi_session::format::json::JsValue;

use crate::cases::path_str;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

const LONG: usize = 120;

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
    let hash = escaped.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let start: String = text.chars().take(40).collect();
    format!(
        "{start}… ({} chars, fnv1a {hash:016x})",
        text.encode_utf16().count()
    )
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
            let checkout = path_str(crate::env::root());
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
