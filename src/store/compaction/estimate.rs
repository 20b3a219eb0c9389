//! pi's token estimates (`estimateTokens`, chars / 4 in UTF-16 units), usage figures
//! (`calculateContextTokens`) and `estimateContextTokens` over a context's messages.
//!
//! Where pi would throw a `TypeError` on a malformed message (an assistant text block without
//! `text`, say), these return an error naming the problem instead.

use crate::format::json::JsValue;

use super::text;

/// pi's `ESTIMATED_IMAGE_CHARS`.
const IMAGE_CHARS: f64 = 4800.0;

/// Which pi's compaction rules apply: the one value every difference between the profiles is
/// chosen by. `Pi082` is pi-coding-agent 0.82.1 (pi-cli), `Pi16` pi-coding-agent 1.6.0 (pi-1.6:
/// the projection with context edits, system messages, retain-none compactions), `Harness`
/// pi-agent-core 0.82.1's copies (which write undefined tool arguments as `"undefined"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionRules {
    /// pi-coding-agent 0.82.1 (pi-cli).
    Pi082,
    /// pi-coding-agent 1.6.0 (pi-1.6).
    Pi16,
    /// pi-agent-core 0.82.1 (harness).
    Harness,
}

impl CompactionRules {
    /// The rules of a profile's pi.
    pub fn of(profile: crate::format::profile::Profile) -> Self {
        use crate::format::profile::Compaction;
        match profile.rules().compaction {
            Compaction::PiCli082 => CompactionRules::Pi082,
            Compaction::Pi16 => CompactionRules::Pi16,
            Compaction::Harness => CompactionRules::Harness,
        }
    }

    /// Compaction works on the session projection (context edits applied, the kept range's
    /// system messages gone): pi 1.6's `projected` code rather than the path's context.
    pub fn on_projection(self) -> bool {
        self == CompactionRules::Pi16
    }

    /// The thinking level `compact()` is given whatever the session's: the harness's own
    /// default; `None` where the level in force at the leaf is passed (AgentSession's).
    pub fn fixed_thinking_level(self) -> Option<&'static str> {
        (self == CompactionRules::Harness).then_some("off")
    }

    /// The refusals' texts: (already compacted, nothing to compact). The harness says the
    /// same for both.
    pub fn refusal_messages(self) -> (&'static str, &'static str) {
        match self {
            CompactionRules::Harness => ("Nothing to compact", "Nothing to compact"),
            CompactionRules::Pi082 | CompactionRules::Pi16 => (
                "Already compacted",
                "Nothing to compact (session too small)",
            ),
        }
    }
}

use CompactionRules as Rules;

/// A message pi's code would crash on; the caller names the entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub String);

type Result<T> = std::result::Result<T, Malformed>;

pub(super) fn role(message: &JsValue) -> Option<std::borrow::Cow<'_, str>> {
    message.get("role").and_then(JsValue::as_str)
}

/// A message a cut may land on (pi's `findValidCutPoints`, in every version): not a tool
/// result, not a system message.
pub(super) fn is_cut_point_role(role: Option<&str>) -> bool {
    matches!(
        role,
        Some(
            "user"
                | "assistant"
                | "bashExecution"
                | "custom"
                | "branchSummary"
                | "compactionSummary"
        )
    )
}

/// A message a turn starts at (pi's `isTurnStart` reading of a message).
pub(super) fn is_turn_start_role(role: Option<&str>) -> bool {
    matches!(
        role,
        Some("user" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary")
    )
}

/// `value.length` for a value pi reads as a string.
fn string_length(value: Option<&JsValue>, what: &str) -> Result<f64> {
    match value {
        Some(JsValue::String(s)) => Ok(text::length(s) as f64),
        Some(JsValue::Array(items)) => Ok(items.len() as f64),
        None | Some(JsValue::Null) => Err(Malformed(format!("{what} is missing"))),
        // `(5).length` is undefined: the estimate becomes NaN in pi.
        Some(_) => Ok(f64::NAN),
    }
}

/// `estimateTextAndImageContentChars`.
fn content_chars(content: Option<&JsValue>) -> Result<f64> {
    match content {
        Some(JsValue::String(s)) => Ok(text::length(s) as f64),
        Some(JsValue::Array(blocks)) => {
            let mut chars = 0.0;
            for block in blocks {
                let kind = block_type(block)?;
                match kind.as_deref() {
                    Some("text") => {
                        if let Some(t) = block.get("text").filter(|t| t.is_truthy()) {
                            chars += string_length(Some(t), "text")?;
                        }
                    }
                    Some("image") => chars += IMAGE_CHARS,
                    _ => {}
                }
            }
            Ok(chars)
        }
        _ => Err(Malformed("content is neither a string nor an array".into())),
    }
}

fn block_type(block: &JsValue) -> Result<Option<std::borrow::Cow<'_, str>>> {
    match block {
        JsValue::Null => Err(Malformed("a content block is null".into())),
        _ => Ok(block.get("type").and_then(JsValue::as_str)),
    }
}

/// `JSON.stringify(value).length` (the harness: `safeJsonStringify`).
fn json_length(value: Option<&JsValue>, rules: Rules) -> Result<f64> {
    match value {
        Some(v) => Ok(text::str_length(&v.stringify()) as f64),
        None if rules == Rules::Harness => Ok("undefined".len() as f64),
        None => Err(Malformed("a tool call has no arguments".into())),
    }
}

/// `estimateTokens(message)`.
pub fn estimate_tokens(message: &JsValue, rules: Rules) -> Result<f64> {
    let chars = match role(message).as_deref() {
        // pi 1.6 counts the prompt: content, each truthy section, the added tools as JSON.
        Some("system") if rules == Rules::Pi16 => {
            let mut chars = content_chars(message.get("content"))?;
            if let Some(JsValue::Object(map)) = message.get("sections") {
                for section in map.values().filter(|s| s.is_truthy()) {
                    chars += string_length(Some(section), "a section")?;
                }
            }
            if let Some(tools) = message.get("toolsAdded").filter(|t| t.is_truthy()) {
                chars += text::str_length(&tools.stringify()) as f64;
            }
            chars
        }
        Some("user" | "custom" | "toolResult") => content_chars(message.get("content"))?,
        Some("assistant") => {
            let Some(JsValue::Array(blocks)) = message.get("content") else {
                return Err(Malformed("assistant content is not an array".into()));
            };
            let mut chars = 0.0;
            for block in blocks {
                match block_type(block)?.as_deref() {
                    Some("text") => {
                        chars += string_length(block.get("text"), "a text block's text")?
                    }
                    Some("thinking") => {
                        chars += string_length(block.get("thinking"), "a thinking block's text")?
                    }
                    Some("toolCall") => {
                        chars += string_length(block.get("name"), "a tool call's name")?
                            + json_length(block.get("arguments"), rules)?
                    }
                    _ => {}
                }
            }
            chars
        }
        Some("bashExecution") => {
            string_length(message.get("command"), "a bash execution's command")?
                + string_length(message.get("output"), "a bash execution's output")?
        }
        Some("branchSummary" | "compactionSummary") => {
            string_length(message.get("summary"), "a summary's text")?
        }
        _ => 0.0,
    };
    Ok((chars / 4.0).ceil())
}

/// JavaScript's `+` on a usage field: numbers, `null` as 0, booleans as 0/1, missing as NaN.
fn number(value: Option<&JsValue>) -> f64 {
    match value {
        Some(JsValue::Number(n)) => *n,
        Some(JsValue::Null) => 0.0,
        Some(JsValue::Bool(b)) => f64::from(u8::from(*b)),
        Some(JsValue::String(s)) => s.to_string_lossy().trim().parse().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// `calculateContextTokens(usage)`: `totalTokens || input + output + cacheRead + cacheWrite`.
pub fn context_tokens(usage: &JsValue) -> f64 {
    match usage.get("totalTokens") {
        Some(total) if total.is_truthy() => number(Some(total)),
        _ => ["input", "output", "cacheRead", "cacheWrite"]
            .iter()
            .map(|k| number(usage.get(k)))
            .sum(),
    }
}

/// `getAssistantUsage(message)`: the usage of a finished assistant message that reports one.
pub fn assistant_usage(message: &JsValue) -> Option<&JsValue> {
    if role(message).as_deref() != Some("assistant") {
        return None;
    }
    let usage = message.get("usage")?;
    let stop = message.get("stopReason").and_then(JsValue::as_str);
    if matches!(stop.as_deref(), Some("aborted" | "error")) || !usage.is_truthy() {
        return None;
    }
    (context_tokens(usage) > 0.0).then_some(usage)
}

/// `estimateContextTokens(messages)`.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextEstimate {
    /// The estimate: the usage plus the trailing messages.
    pub tokens: f64,
    /// The tokens the newest usage reports.
    pub usage_tokens: f64,
    /// The estimated tokens of the messages after it.
    pub trailing_tokens: f64,
    /// The index of the message whose usage counted, if any.
    pub last_usage_index: Option<usize>,
}

pub fn estimate_context(messages: &[JsValue], rules: Rules) -> Result<ContextEstimate> {
    let last = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| assistant_usage(m).map(|u| (i, u)));
    let sum = |from: usize| -> Result<f64> {
        messages[from..]
            .iter()
            .map(|m| estimate_tokens(m, rules))
            .sum::<Result<f64>>()
    };
    Ok(match last {
        None => {
            let estimated = sum(0)?;
            ContextEstimate {
                tokens: estimated,
                usage_tokens: 0.0,
                trailing_tokens: estimated,
                last_usage_index: None,
            }
        }
        Some((i, usage)) => {
            let usage_tokens = context_tokens(usage);
            let trailing = sum(i + 1)?;
            ContextEstimate {
                tokens: usage_tokens + trailing,
                usage_tokens,
                trailing_tokens: trailing,
                last_usage_index: Some(i),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::json::parse;

    #[test]
    fn tokens_are_utf16_chars_over_four_rounded_up() {
        let m =
            parse(r#"{"role":"user","content":[{"type":"text","text":"😀abc"},{"type":"image"}]}"#)
                .unwrap();
        assert_eq!(
            estimate_tokens(&m, Rules::Pi082),
            Ok(((5.0 + 4800.0) / 4.0f64).ceil())
        );
    }

    #[test]
    fn tool_arguments_count_as_javascript_prints_them() {
        let m = parse(r#"{"role":"assistant","content":[{"type":"toolCall","name":"ab","arguments":{"x":1.0}}]}"#)
            .unwrap();
        // `{"x":1}` is 7 units, plus the name's 2.
        assert_eq!(estimate_tokens(&m, Rules::Pi082), Ok(3.0));
        let bare =
            parse(r#"{"role":"assistant","content":[{"type":"toolCall","name":"ab"}]}"#).unwrap();
        assert!(estimate_tokens(&bare, Rules::Pi082).is_err());
        assert_eq!(estimate_tokens(&bare, Rules::Harness), Ok(3.0));
    }

    #[test]
    fn a_zero_total_falls_back_to_the_sum() {
        let u = parse(r#"{"totalTokens":0,"input":1,"output":2,"cacheRead":3,"cacheWrite":4}"#)
            .unwrap();
        assert_eq!(context_tokens(&u), 10.0);
    }
}
