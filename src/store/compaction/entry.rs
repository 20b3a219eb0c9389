//! The compaction entry pi appends: the model's texts joined as `compact()` joins them (the
//! split-turn join, `No prior history.`, the file lists appended), `details` from the file
//! lists, the usage of the calls (`combineUsage` for two), and for the harness `retainedTail`.

use crate::format::json::{JsObject, JsString, JsValue};
use crate::format::write::NewEntry;

use super::estimate::CompactionRules;
use super::prepare::Preparation;
use super::text::JsText;

/// A model's answer to one request: its text (pi's `contentText(response.content)`) and usage,
/// and what pi checks before taking it: the stop reason (with its error message) and whether
/// the answer calls a tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummaryText {
    /// The answer's text.
    pub text: String,
    /// The model's usage.
    pub usage: Option<JsValue>,
    /// The model's stop reason (`stop`, `error`, `aborted`, ...).
    pub stop_reason: Option<String>,
    /// The error message that came with an `error` stop.
    pub error_message: Option<String>,
    /// Whether the answer calls a tool.
    pub calls_tool: bool,
}

/// What pi makes of a summarizing model's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// pi takes the answer.
    Accept,
    /// The branch summarizer was aborted: pi cancels the navigation.
    Aborted,
    /// pi refuses the answer with this error and writes nothing.
    Failed(String),
}

impl SummaryText {
    /// Whether pi takes this answer to a request of `purpose` (`history`, `turnPrefix`,
    /// `branchSummary`). pi 1.6's `getSummarizationFailure` also refuses a `length` stop (a
    /// cut-off summary) and an answer that calls a tool; 0.82.1 only refuses an `error`.
    pub fn verdict(&self, rules: CompactionRules, purpose: &str) -> Verdict {
        let stop = self.stop_reason.as_deref();
        let reason = || {
            self.error_message
                .clone()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| "Unknown error".into())
        };
        match rules {
            CompactionRules::Pi16 => {
                let label = match purpose {
                    "history" => "Summarization",
                    "turnPrefix" => "Turn prefix summarization",
                    _ => "Branch summarization",
                };
                if purpose == "branchSummary" && stop == Some("aborted") {
                    return Verdict::Aborted;
                }
                match stop {
                    Some("error") => Verdict::Failed(format!("{label} failed: {}", reason())),
                    Some("length") => Verdict::Failed(format!(
                        "{label} failed: generation hit the token cap and the summary is incomplete"
                    )),
                    _ if self.calls_tool => {
                        Verdict::Failed(format!("{label} attempted to call a tool"))
                    }
                    _ => Verdict::Accept,
                }
            }
            _ => {
                let harness = rules == CompactionRules::Harness;
                let label = match purpose {
                    "history" => "Summarization",
                    "turnPrefix" => "Turn prefix summarization",
                    _ if harness => "Branch summary",
                    _ => "",
                };
                match stop {
                    Some("aborted") if purpose == "branchSummary" => Verdict::Aborted,
                    Some("aborted") if harness => Verdict::Failed(
                        self.error_message
                            .clone()
                            .filter(|m| !m.is_empty())
                            .unwrap_or_else(|| format!("{label} aborted")),
                    ),
                    // pi-coding-agent 0.82.1's branch summarizer throws the bare message.
                    Some("error") if label.is_empty() => Verdict::Failed(
                        self.error_message
                            .clone()
                            .filter(|m| !m.is_empty())
                            .unwrap_or_else(|| "Summarization failed".into()),
                    ),
                    Some("error") => Verdict::Failed(format!("{label} failed: {}", reason())),
                    _ => Verdict::Accept,
                }
            }
        }
    }
}

/// The answers to a preparation's requests, by purpose.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summaries {
    /// The answer to the history request.
    pub history: Option<SummaryText>,
    /// The answer to the split turn's prefix request.
    pub turn_prefix: Option<SummaryText>,
}

/// Why the answers cannot make an entry.
#[derive(Debug, Clone, PartialEq)]
pub enum SummaryProblem {
    /// The requests that still need an answer (`"history"`, `"turnPrefix"`).
    Missing(Vec<&'static str>),
    /// A usage pi's `combineUsage` could not add (no `cost`).
    BadUsage(String),
    /// An answer pi refuses (`getSummarizationFailure`, a tool call; 0.82.1: an error stop).
    Failed(String),
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
        let rules = CompactionRules::of(self.profile);
        for purpose in &purposes {
            let answer = match *purpose {
                "history" => answers.history.as_ref(),
                _ => answers.turn_prefix.as_ref(),
            };
            if let Some(Verdict::Failed(message)) = answer.map(|a| a.verdict(rules, purpose)) {
                return Err(SummaryProblem::Failed(message));
            }
        }
        let mut summary = JsText::new();
        let usage = if self.is_split_with_prefix() {
            let prefix = answers.turn_prefix.as_ref().expect("checked above");
            let history = answers
                .history
                .as_ref()
                .filter(|_| purposes.contains(&"history"));
            match (history, &self.previous_summary) {
                (Some(h), _) => summary.text(&h.text),
                // pi 1.6: `previousSummary ?? "No prior history."`.
                (None, Some(previous)) if rules == CompactionRules::Pi16 => match previous {
                    JsValue::String(s) => summary.js(s),
                    other => summary.text(&other.to_js_string()),
                },
                (None, _) => summary.text("No prior history."),
            };
            summary
                .text("\n\n---\n\n**Turn Context (split turn):**\n\n")
                .text(&prefix.text);
            match history {
                Some(h) => match (&h.usage, &prefix.usage) {
                    (Some(a), Some(b)) => Some(combine_usage_with(a, b, rules)?),
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
    combine_usage_with(a, b, CompactionRules::Pi082)
}

/// [`combine_usage`] as the rules' pi adds: pi 1.6 also writes `cost.totalFromProvider`
/// (true only when both parts say so).
pub fn combine_usage_with(
    a: &JsValue,
    b: &JsValue,
    rules: CompactionRules,
) -> Result<JsValue, SummaryProblem> {
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
    if rules == CompactionRules::Pi16 {
        let from_provider = |c: &JsValue| c.get("totalFromProvider") == Some(&JsValue::Bool(true));
        cost.insert(
            JsString::new("totalFromProvider"),
            JsValue::Bool(from_provider(ca) && from_provider(cb)),
        );
    }
    out.insert(JsString::new("cost"), JsValue::Object(cost));
    Ok(JsValue::Object(out))
}
