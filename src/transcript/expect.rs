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
    /// The member's path.
    pub member: String,
    /// The value it should have had.
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

/// Compound values longer than this are shown as a line diff rather than side by side.
const SIDE_BY_SIDE_CHARS: usize = 60;

/// A readable report of `differences` for the message described by `which`.
pub fn report(which: &str, differences: &[Difference], actual: &Value) -> String {
    let mut out = format!("{which}: {} member(s) differ\n", differences.len());
    for difference in differences {
        out.push_str(&format!("  member `{}`\n", difference.member));
        let expected = difference.expected.to_string();
        match &difference.actual {
            None => out.push_str(&format!(
                "    expected: {expected}\n    actual:   (missing)\n"
            )),
            Some(got) => {
                let shown = got.to_string();
                let compound = |v: &Value| v.is_array() || v.is_object();
                if compound(&difference.expected)
                    && compound(got)
                    && expected.len().max(shown.len()) > SIDE_BY_SIDE_CHARS
                {
                    out.push_str("    expected (-) and actual (+), line by line:\n");
                    out.push_str(&line_diff(&difference.expected, got));
                } else {
                    out.push_str(&format!(
                        "    expected: {expected}\n    actual:   {shown}\n"
                    ));
                }
            }
        }
    }
    out.push_str(&format!(
        "  the whole message: {}",
        serde_json::to_string(actual).unwrap()
    ));
    out
}

/// The pretty-printed values' lines that differ, with three lines of context around them.
fn line_diff(expected: &Value, actual: &Value) -> String {
    let expected = serde_json::to_string_pretty(expected).unwrap() + "\n";
    let actual = serde_json::to_string_pretty(actual).unwrap() + "\n";
    let diff = similar::TextDiff::from_lines(&expected, &actual);
    let mut out = String::new();
    for (index, group) in diff.grouped_ops(3).iter().enumerate() {
        if index > 0 {
            out.push_str("      ...\n");
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                    similar::ChangeTag::Equal => ' ',
                };
                out.push_str(&format!("    {sign} {}", change.value()));
                if change.missing_newline() {
                    out.push('\n');
                }
            }
        }
    }
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

    #[test]
    fn long_compound_values_are_shown_as_a_line_diff() {
        let rows: Vec<Value> = (0..6)
            .map(|i| json!({"id": format!("row-{i}"), "depth": i}))
            .collect();
        let mut fewer = rows.clone();
        fewer.remove(3);
        let actual = json!({"id": 5, "result": {"rows": rows}});
        let found = differences(&json!({"result": {"rows": fewer}}), &actual);
        let report = report("message 1", &found, &actual);
        assert!(
            report.contains(
                "  member `result.rows`\n    expected (-) and actual (+), line by line:\n"
            ),
            "{report}"
        );
        assert!(
            report.contains("    +     \"id\": \"row-3\",\n    +     \"depth\": 3\n"),
            "{report}"
        );
        let diff = &report[..report.find("the whole message").unwrap()];
        assert!(
            !diff.contains("row-0"),
            "far context is left out:\n{report}"
        );
        // Short values stay side by side.
        let short = json!({"result": {"n": [1, 2]}});
        let found = differences(&json!({"result": {"n": [1]}}), &short);
        assert!(report_of(&found, &short).contains("    expected: [1]\n    actual:   [1,2]\n"));
    }

    fn report_of(found: &[Difference], actual: &Value) -> String {
        report("m", found, actual)
    }
}
