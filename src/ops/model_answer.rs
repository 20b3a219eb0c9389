//! A model's answer to a summary request, as the client passes it on, read the way pi reads it.

use crate::format::json::JsValue;
use crate::store::ErrorKind;
use crate::store::compaction::SummaryText;

use super::error::OpError;

/// A model's answer: its text, or its content blocks (pi-ai's assistant message).
#[derive(Debug, Clone, Default)]
pub(crate) struct ModelAnswer {
    pub(crate) text: Option<String>,
    pub(crate) content: Option<Vec<serde_json::Value>>,
    pub(crate) usage: Option<JsValue>,
    pub(crate) stop_reason: Option<String>,
    pub(crate) error_message: Option<String>,
}

/// The answer as the store takes it: `text`, or the text of its `content` blocks. `name` is
/// the param it came in, for the error.
pub(crate) fn summary_text(answer: ModelAnswer, name: &str) -> Result<SummaryText, OpError> {
    let block_type =
        |b: &serde_json::Value| b.get("type").and_then(|t| t.as_str()).map(str::to_string);
    let (text, calls_tool) = match (answer.text, &answer.content) {
        (Some(text), None) => (text, false),
        (None, Some(blocks)) => {
            // pi-ai's `contentText(content)`: the text blocks' texts joined by "\n".
            let texts: Vec<String> = blocks
                .iter()
                .filter(|b| block_type(b).as_deref() == Some("text"))
                .map(|b| match b.get("text") {
                    None | Some(serde_json::Value::Null) => String::new(),
                    Some(t) => JsValue::from_serde(t).to_js_string(),
                })
                .collect();
            let calls = blocks
                .iter()
                .any(|b| block_type(b).as_deref() == Some("toolCall"));
            (texts.join("\n"), calls)
        }
        _ => {
            return Err(OpError::store(
                ErrorKind::InvalidArgument,
                format!("'{name}': give the answer's text or its content, not both or neither"),
            ));
        }
    };
    Ok(SummaryText {
        text,
        usage: answer.usage,
        stop_reason: answer.stop_reason,
        error_message: answer.error_message,
        calls_tool,
    })
}
