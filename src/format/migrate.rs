//! v1 and v2 files brought to v3, exactly as pi's SessionManager does it on load.
//!
//! v1 entries get fresh 8-hex ids chained in file order (appended after their other keys),
//! `firstKeptEntryIndex` becomes `firstKeptEntryId` (the index counts the header as 0 and only
//! lines that parsed); v2 renames the message role `hookMessage` to `custom`. The header's
//! `version` is set in place, or appended last when it was absent.

use super::json::{JsString, JsValue};

/// The version the SessionManager writes.
pub(crate) const CURRENT_VERSION: f64 = 3.0;

/// `header.version ?? 1`, coerced to a number as JavaScript's `<`/`>=` would.
pub(crate) fn header_version(header: &JsValue) -> f64 {
    match header.get("version") {
        None | Some(JsValue::Null) => 1.0,
        Some(JsValue::Number(n)) => *n,
        Some(JsValue::Bool(b)) => f64::from(u8::from(*b)),
        Some(JsValue::String(s)) => {
            let text = s.to_string_lossy();
            let t = text.trim();
            if t.is_empty() {
                0.0
            } else {
                t.parse().unwrap_or(f64::NAN)
            }
        }
        Some(_) => f64::NAN,
    }
}

/// Whether a file with this header is migrated (and so rewritten) on load.
pub(crate) fn needs_migration(header: &JsValue) -> bool {
    // `version >= 3` is false for NaN: pi then "migrates" and rewrites without changing a thing.
    header_version(header)
        .partial_cmp(&CURRENT_VERSION)
        .is_none_or(|o| o.is_lt())
}

/// Migrates `values` (every parsed line, header included, in file order) in place.
/// `new_id` makes v1 ids; pi does not check them for collisions here, and neither do we.
pub(crate) fn migrate(values: &mut [JsValue], mut new_id: impl FnMut() -> String) {
    let Some(version) = values.iter().find(|v| is_header(v)).map(header_version) else {
        return;
    };
    if version >= CURRENT_VERSION {
        return;
    }
    if version < 2.0 {
        v1_to_v2(values, &mut new_id);
    }
    if version < 3.0 {
        v2_to_v3(values);
    }
}

fn is_header(value: &JsValue) -> bool {
    value
        .get("type")
        .and_then(JsValue::as_js_str)
        .is_some_and(|t| t.escaped() == "session")
}

fn set(value: &mut JsValue, key: &str, item: JsValue) {
    if let Some(map) = value.as_object_mut() {
        map.insert(JsString::new(key), item);
    }
}

fn v1_to_v2(values: &mut [JsValue], new_id: &mut impl FnMut() -> String) {
    let mut previous: Option<String> = None;
    for i in 0..values.len() {
        if is_header(&values[i]) {
            set(&mut values[i], "version", JsValue::Number(2.0));
            continue;
        }
        let id = new_id();
        set(&mut values[i], "id", JsValue::from(id.as_str()));
        set(
            &mut values[i],
            "parentId",
            previous.as_deref().map_or(JsValue::Null, JsValue::from),
        );
        previous = Some(id);
        let is_compaction = values[i]
            .get("type")
            .and_then(JsValue::as_js_str)
            .is_some_and(|t| t.escaped() == "compaction");
        if !is_compaction {
            continue;
        }
        let Some(JsValue::Number(index)) = values[i].get("firstKeptEntryIndex").cloned() else {
            continue;
        };
        // `entries[index]`: only whole, non-negative indexes name an element.
        let target = (index >= 0.0 && index.fract() == 0.0)
            .then(|| values.get(index as usize))
            .flatten()
            .filter(|t| !is_header(t))
            .map(|t| t.get("id").cloned());
        if let Some(map) = values[i].as_object_mut() {
            // An id not assigned yet (a later entry) is `undefined`: no key is written.
            if let Some(Some(id)) = target {
                map.insert(JsString::new("firstKeptEntryId"), id);
            }
            map.shift_remove("firstKeptEntryIndex");
        }
    }
}

fn v2_to_v3(values: &mut [JsValue]) {
    for value in values.iter_mut() {
        if is_header(value) {
            set(value, "version", JsValue::Number(3.0));
            continue;
        }
        let is_message = value
            .get("type")
            .and_then(JsValue::as_js_str)
            .is_some_and(|t| t.escaped() == "message");
        if !is_message {
            continue;
        }
        if let Some(message) = value.as_object_mut().and_then(|m| m.get_mut("message"))
            && message
                .get("role")
                .and_then(JsValue::as_js_str)
                .is_some_and(|r| r.escaped() == "hookMessage")
        {
            set(message, "role", JsValue::from("custom"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::json::parse;

    fn lines(text: &str) -> Vec<JsValue> {
        text.lines().map(|l| parse(l).unwrap()).collect()
    }

    #[test]
    fn v1_gets_chained_ids_and_kept_entry_ids() {
        let mut values = lines(concat!(
            "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/w\",\"provider\":\"p\"}\n",
            "{\"type\":\"message\",\"timestamp\":\"t\",\"message\":{\"role\":\"hookMessage\"}}\n",
            "{\"type\":\"message\",\"timestamp\":\"t\",\"message\":{\"role\":\"user\"}}\n",
            "{\"type\":\"compaction\",\"summary\":\"s\",\"firstKeptEntryIndex\":2,\"tokensBefore\":1}\n",
            "{\"type\":\"compaction\",\"summary\":\"s\",\"firstKeptEntryIndex\":9,\"tokensBefore\":1}\n",
        ));
        let mut n = 0;
        migrate(&mut values, || {
            n += 1;
            format!("id{n}")
        });
        let out: Vec<String> = values.iter().map(JsValue::stringify).collect();
        assert_eq!(
            out[0],
            r#"{"type":"session","id":"s","timestamp":"t","cwd":"/w","provider":"p","version":3}"#
        );
        assert_eq!(
            out[1],
            r#"{"type":"message","timestamp":"t","message":{"role":"custom"},"id":"id1","parentId":null}"#
        );
        assert_eq!(
            out[2],
            r#"{"type":"message","timestamp":"t","message":{"role":"user"},"id":"id2","parentId":"id1"}"#
        );
        assert_eq!(
            out[3],
            r#"{"type":"compaction","summary":"s","tokensBefore":1,"id":"id3","parentId":"id2","firstKeptEntryId":"id2"}"#
        );
        assert_eq!(
            out[4],
            r#"{"type":"compaction","summary":"s","tokensBefore":1,"id":"id4","parentId":"id3"}"#
        );
    }

    #[test]
    fn v3_and_later_are_left_alone() {
        let header = parse(r#"{"type":"session","version":4}"#).unwrap();
        assert!(!needs_migration(&header));
        assert!(needs_migration(
            &parse(r#"{"type":"session","version":"x"}"#).unwrap()
        ));
        assert!(needs_migration(&parse(r#"{"type":"session"}"#).unwrap()));
    }
}
