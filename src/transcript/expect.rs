//! Inline expectations: what the server must answer, checked as the transcript plays.
//!
//! An expected message is a pattern. An object matches when every member it names matches
//! (members it does not name are not checked, so `{"id": 2, "result": {"entryId": "${any}"}}`
//! checks a response without its `jsonrpc`); an array matches element by element and must have
//! the same length; any other value matches an equal value. A string that is exactly `${any}`
//! matches any value. `${tmp}` and `${@ID.path}` mean what they mean in what the client sends
//! (the caller fills the references and hides the directory before matching).

use serde_json::Value;

/// The string that matches any value.
pub const ANY: &str = "${any}";
/// The string that matches only a missing member.
pub const ABSENT: &str = "${absent}";

/// One member that differs: where (`result.entries[2].type`), what was expected and what came.
#[derive(Debug)]
pub struct Difference {
    pub member: String,
    pub expected: Value,
    /// `None` when the member is missing.
    pub actual: Option<Value>,
}

/// Every difference between `pattern` and `actual`, in document order.
pub fn differences(pattern: &Value, actual: &Value) -> Vec<Difference> {
    let mut found = Vec::new();
    compare(pattern, Some(actual), String::new(), &mut found);
    found
}

fn compare(pattern: &Value, actual: Option<&Value>, member: String, found: &mut Vec<Difference>) {
    match (pattern.as_str(), actual) {
        (Some(ANY), Some(_)) | (Some(ABSENT), None) => return,
        _ => {}
    }
    let differs = |found: &mut Vec<Difference>| {
        found.push(Difference {
            member: if member.is_empty() {
                "(the whole message)".to_owned()
            } else {
                member.clone()
            },
            expected: pattern.clone(),
            actual: actual.cloned(),
        });
    };
    match (pattern, actual) {
        (Value::Object(wanted), Some(Value::Object(got))) => {
            for (key, value) in wanted {
                let path = if member.is_empty() {
                    key.clone()
                } else {
                    format!("{member}.{key}")
                };
                compare(value, got.get(key), path, found);
            }
        }
        (Value::Array(wanted), Some(Value::Array(got))) if wanted.len() == got.len() => {
            for (index, (value, item)) in wanted.iter().zip(got).enumerate() {
                compare(value, Some(item), format!("{member}[{index}]"), found);
            }
        }
        (_, Some(got)) if got == pattern => {}
        _ => differs(found),
    }
}

/// A readable report of `differences` for the message described by `which`.
pub fn report(which: &str, differences: &[Difference], actual: &Value) -> String {
    let mut out = format!("{which}: {} member(s) differ\n", differences.len());
    for difference in differences {
        out.push_str(&format!(
            "  member `{}`\n    expected: {}\n    actual:   {}\n",
            difference.member,
            difference.expected,
            difference
                .actual
                .as_ref()
                .map_or_else(|| "(missing)".to_owned(), Value::to_string),
        ));
    }
    out.push_str(&format!(
        "  the whole message: {}",
        serde_json::to_string(actual).unwrap()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pattern_checks_only_the_members_it_names() {
        let actual = json!({"jsonrpc": "2.0", "id": 2, "result": {"entryId": "ab12", "n": [1, 2]}});
        assert!(differences(&json!({"id": 2, "result": {"entryId": ANY}}), &actual).is_empty());
        let found = differences(&json!({"result": {"n": [1, 3], "gone": true}}), &actual);
        let members: Vec<_> = found.iter().map(|d| d.member.as_str()).collect();
        assert_eq!(members, ["result.n[1]", "result.gone"]);
        assert!(found[1].actual.is_none());
        // Arrays must have the same length; `${any}` still needs the member to exist.
        assert_eq!(
            differences(&json!({"result": {"n": [1]}}), &actual).len(),
            1
        );
        assert_eq!(differences(&json!({"error": ANY}), &actual).len(), 1);
        // `${absent}` says a member must not be there.
        assert!(differences(&json!({"error": ABSENT}), &actual).is_empty());
        let found = differences(&json!({"result": {"n": ABSENT}}), &actual);
        assert_eq!(found[0].member, "result.n");
    }
}
