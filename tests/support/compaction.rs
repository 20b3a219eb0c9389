//! What the compaction and branch-summary conformance tests share: the driver of pi's
//! compaction code (`tests/oracle/pi-compaction.mjs`) and the comparisons both make of its
//! answers.

use std::io::Write;
use std::process::Stdio;

use pi_session::compaction::{ContextEstimate, ModelRequest, SummaryText};
use pi_session::json::JsValue;

use super::{Oracle, parse};

/// Runs `tests/oracle/pi-compaction.mjs` on `cases` in one Node process (one JSON per line in
/// and out): one result per case.
pub fn run_pi_compaction(oracle: &Oracle, cases: &[JsValue]) -> Vec<JsValue> {
    let mut child = oracle
        .command("pi-compaction.mjs")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node runs");
    let input: String = cases.iter().map(|c| c.stringify() + "\n").collect();
    let mut stdin = child.stdin.take().unwrap();
    // Written from a thread: pi's answers fill the stdout pipe while the input still goes in.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success(), "pi-compaction.mjs failed");
    let results: Vec<JsValue> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(parse)
        .collect();
    assert_eq!(results.len(), cases.len(), "one result per case");
    results
}

/// A written line with `id` and `timestamp` set aside (each side makes its own); every other
/// byte must match.
pub fn without_id_and_time(line: &str) -> String {
    let mut value = parse(line);
    if let Some(map) = value.as_object_mut() {
        for key in ["id", "timestamp"] {
            if map.contains_key(key) {
                map.insert(key.into(), JsValue::from("…"));
            }
        }
    }
    value.stringify()
}

/// pi's `estimateContextTokens` answer against ours: four comparisons.
pub fn assert_same_estimate(pi: &JsValue, ours: &ContextEstimate, what: &str) {
    let num = |k: &str| pi.get(k).and_then(JsValue::as_f64);
    assert_eq!(num("tokens"), Some(ours.tokens), "{what}");
    assert_eq!(num("usageTokens"), Some(ours.usage_tokens), "{what}");
    assert_eq!(num("trailingTokens"), Some(ours.trailing_tokens), "{what}");
    assert_eq!(
        num("lastUsageIndex"),
        ours.last_usage_index.map(|i| i as f64),
        "{what}"
    );
}

/// A serialized preparation against pi's, showing where they part when they do.
pub fn assert_same_preparation(ours: &str, pi: &str, what: &str) {
    if ours == pi {
        return;
    }
    let at = ours
        .bytes()
        .zip(pi.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(0);
    let around = |text: &str| {
        let mut start = at.saturating_sub(300);
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (at + 200).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        text[start..end].to_string()
    };
    panic!(
        "{what}: preparation differs at byte {at}:\n ours: {}\n pi:   {}",
        around(ours),
        around(pi)
    );
}

/// The model's answers the oracle gave pi (`answers`: text and usage), as this program takes
/// them; `None` when the result has none.
pub fn pi_answers(pi: &JsValue) -> Option<Vec<SummaryText>> {
    let answers = pi.get("answers").and_then(JsValue::as_array)?;
    Some(
        answers
            .iter()
            .map(|a| SummaryText {
                text: a
                    .get("text")
                    .and_then(JsValue::as_str)
                    .unwrap()
                    .into_owned(),
                usage: a.get("usage").cloned(),
                ..SummaryText::default()
            })
            .collect(),
    )
}

/// A request's text against the one pi sent the model (`theirs.text`).
pub fn assert_same_request_text(ours: &ModelRequest, theirs: &JsValue, what: &str) {
    let text = theirs.get("text").and_then(JsValue::as_js_str).unwrap();
    assert!(
        ours.text == *text,
        "{what}: {} request text differs:\n ours: {:?}\n pi:   {:?}",
        ours.purpose,
        ours.text,
        text
    );
}
