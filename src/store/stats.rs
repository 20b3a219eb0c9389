//! Counts and usage over every entry of a session (all branches), as pi's
//! `AgentSession.getSessionStats` counts them. The session keeps them between calls and files
//! them beside its persisted index (`Session::stats`); the counting is here.

use crate::format::entry::{Kind, Payload, Role};
use crate::format::json::JsValue;

use super::error::StoreResult;
use super::index::Record;

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)] // no doc comments: schemars would copy them into protocol/schema.json; protocol.md describes these members
pub struct SessionStats {
    pub message_count: u64,
    pub user_messages: u64,
    pub assistant_messages: u64,
    pub tool_results: u64,
    pub tool_calls: u64,
    pub input_tokens: f64,
    pub output_tokens: f64,
    pub cache_read_tokens: f64,
    pub cache_write_tokens: f64,
    /// input + output + cacheRead + cacheWrite.
    pub total_tokens: f64,
    pub cost_total: f64,
}

impl SessionStats {
    fn add_usage(&mut self, usage: Option<&JsValue>) {
        let Some(usage) = usage else { return };
        let number = |v: Option<&JsValue>| v.and_then(JsValue::as_f64).unwrap_or(0.0);
        let (input, output) = (number(usage.get("input")), number(usage.get("output")));
        let (read, write) = (
            number(usage.get("cacheRead")),
            number(usage.get("cacheWrite")),
        );
        self.input_tokens += input;
        self.output_tokens += output;
        self.cache_read_tokens += read;
        self.cache_write_tokens += write;
        self.total_tokens += input + output + read + write;
        self.cost_total += number(usage.get("cost").and_then(|c| c.get("total")));
    }

    /// Counts the entry `record`; `value` reads its whole JSON when the counts need more than
    /// the index holds (assistant and tool-result messages, compactions, summaries, and with
    /// `pi16_usage` pi 1.6's usage entries). Sums continue exactly as one pass in order.
    pub fn count(
        &mut self,
        record: Record<'_>,
        value: impl FnOnce() -> StoreResult<JsValue>,
        pi16_usage: bool,
    ) -> StoreResult<()> {
        match (record.payload(), record.kind()) {
            (Payload::Message { role, .. }, _) => {
                self.message_count += 1;
                match role {
                    Role::User => self.user_messages += 1,
                    Role::Assistant => {
                        self.assistant_messages += 1;
                        let message = value()?.get("message").cloned().unwrap_or(JsValue::Null);
                        let calls = message.get("content").and_then(JsValue::as_array).map_or(
                            0,
                            |blocks| {
                                blocks
                                    .iter()
                                    .filter(|b| {
                                        b.get("type").and_then(JsValue::as_str).as_deref()
                                            == Some("toolCall")
                                    })
                                    .count()
                            },
                        );
                        self.tool_calls += calls as u64;
                        self.add_usage(message.get("usage"));
                    }
                    Role::ToolResult => {
                        self.tool_results += 1;
                        let entry = value()?;
                        self.add_usage(entry.get("message").and_then(|m| m.get("usage")));
                    }
                    Role::System | Role::Other => {}
                }
            }
            (_, Kind::Compaction | Kind::BranchSummary) => self.add_usage(value()?.get("usage")),
            // pi 1.6 counts usage entries (cache warming, ...); 0.82.1 does not know them.
            (_, Kind::Usage) if pi16_usage => self.add_usage(value()?.get("usage")),
            _ => {}
        }
        Ok(())
    }
}
