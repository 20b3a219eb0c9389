//! The compaction entry pi appends: the model's texts joined as `compact()` joins them (the
//! split-turn join, `No prior history.`, the file lists appended), `details` from the file
//! lists, the usage of the calls (`combineUsage` for two), and for the harness `retainedTail`.

use crate::format::json::{JsObject, JsString, JsValue};
use crate::format::write::NewEntry;

use super::prepare::Preparation;
use super::text::JsText;

/// A model's answer to one request: its text (pi's `contentText(response.content)`) and usage.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryText {
    pub text: String,
    pub usage: Option<JsValue>,
}

/// The answers to a preparation's requests, by purpose.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summaries {
    pub history: Option<SummaryText>,
    pub turn_prefix: Option<SummaryText>,
}

/// Why the answers cannot make an entry.
#[derive(Debug, Clone, PartialEq)]
pub enum SummaryProblem {
    /// The requests that still need an answer (`"history"`, `"turnPrefix"`).
    Missing(Vec<&'static str>),
    /// A usage pi's `combineUsage` could not add (no `cost`).
    BadUsage(String),
}

impl Preparation {
    fn is_split_with_prefix(&self) -> bool {
        self.cut.is_split_turn && !self.turn_prefix_messages.is_empty()
    }

    /// The purposes of the requests `compact()` makes, in order.
    pub fn request_purposes(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if !self.is_split_with_prefix() || !self.messages_to_summarize.is_empty() {
            out.push("history");
        }
        if self.is_split_with_prefix() {
            out.push("turnPrefix");
        }
        out
    }

    /// The entry pi's `compact()` + `appendCompaction` write from the model's answers.
    pub fn entry_from_summaries(&self, answers: &Summaries) -> Result<NewEntry, SummaryProblem> {
        let purposes = self.request_purposes();
        let missing: Vec<&'static str> = purposes
            .iter()
            .copied()
            .filter(|p| match *p {
                "history" => answers.history.is_none(),
                _ => answers.turn_prefix.is_none(),
            })
            .collect();
        if !missing.is_empty() {
            return Err(SummaryProblem::Missing(missing));
        }
        let mut summary = JsText::new();
        let usage = if self.is_split_with_prefix() {
            let prefix = answers.turn_prefix.as_ref().expect("checked above");
            let history = answers
                .history
                .as_ref()
                .filter(|_| purposes.contains(&"history"));
            summary
                .text(history.map_or("No prior history.", |h| h.text.as_str()))
                .text("\n\n---\n\n**Turn Context (split turn):**\n\n")
                .text(&prefix.text);
            match history {
                Some(h) => match (&h.usage, &prefix.usage) {
                    (Some(a), Some(b)) => Some(combine_usage(a, b)?),
                    _ => h.usage.clone().or_else(|| prefix.usage.clone()),
                },
                None => prefix.usage.clone(),
            }
        } else {
            let history = answers.history.as_ref().expect("checked above");
            summary.text(&history.text);
            history.usage.clone()
        };
        summary.js(&self.file_lists_text());
        let (read, modified) = self.file_lists();
        let mut details = JsObject::new();
        details.insert(JsString::new("readFiles"), JsValue::Array(read));
        details.insert(JsString::new("modifiedFiles"), JsValue::Array(modified));
        Ok(NewEntry::Compaction {
            summary: JsValue::String(summary.finish()),
            first_kept_entry_id: Some(JsValue::from(self.first_kept_entry_id.as_str())),
            tokens_before: JsValue::Number(self.tokens_before),
            retained_tail: self.retained_tail.clone().map(JsValue::Array),
            details: Some(JsValue::Object(details)),
            usage,
            from_hook: Some(JsValue::Bool(false)),
            system_message: None,
        })
    }
}

/// pi's `combineUsage(first, second)`: the sums in its key order (`cacheWrite1h` and
/// `reasoning` only when either has them); a missing number adds as `NaN` (written `null`).
pub fn combine_usage(a: &JsValue, b: &JsValue) -> Result<JsValue, SummaryProblem> {
    let n = |v: &JsValue, k: &str| match v.get(k) {
        Some(JsValue::Number(x)) => *x,
        Some(JsValue::Null) => 0.0,
        _ => f64::NAN,
    };
    let mut out = JsObject::new();
    let put = |out: &mut JsObject, k: &str, v: f64| {
        out.insert(JsString::new(k), JsValue::Number(v));
    };
    for k in ["input", "output", "cacheRead", "cacheWrite"] {
        put(&mut out, k, n(a, k) + n(b, k));
    }
    for k in ["cacheWrite1h", "reasoning"] {
        if a.get(k).is_some() || b.get(k).is_some() {
            let or0 = |v: &JsValue| if v.get(k).is_some() { n(v, k) } else { 0.0 };
            put(&mut out, k, or0(a) + or0(b));
        }
    }
    put(
        &mut out,
        "totalTokens",
        n(a, "totalTokens") + n(b, "totalTokens"),
    );
    let (Some(ca), Some(cb)) = (
        a.get("cost").filter(|c| c.is_truthy()),
        b.get("cost").filter(|c| c.is_truthy()),
    ) else {
        return Err(SummaryProblem::BadUsage(
            "a usage without `cost` cannot be combined (pi throws)".into(),
        ));
    };
    let mut cost = JsObject::new();
    for k in ["input", "output", "cacheRead", "cacheWrite", "total"] {
        put(&mut cost, k, n(ca, k) + n(cb, k));
    }
    out.insert(JsString::new("cost"), JsValue::Object(cost));
    Ok(JsValue::Object(out))
}
