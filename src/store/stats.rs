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

/// The usage figures of one `usage` object, as pi reads them (`x || 0`-like: what is not a
/// number counts 0).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Usage {
    pub(crate) input: f64,
    pub(crate) output: f64,
    pub(crate) cache_read: f64,
    pub(crate) cache_write: f64,
    /// `cost.total`.
    pub(crate) cost: f64,
}

impl Usage {
    fn of(usage: &JsValue) -> Usage {
        let number = |v: Option<&JsValue>| v.and_then(JsValue::as_f64).unwrap_or(0.0);
        Usage {
            input: number(usage.get("input")),
            output: number(usage.get("output")),
            cache_read: number(usage.get("cacheRead")),
            cache_write: number(usage.get("cacheWrite")),
            cost: number(usage.get("cost").and_then(|c| c.get("total"))),
        }
    }
}

/// What the stats read of one line beyond the index's facts: the `toolCall` blocks of
/// `message.content`, `message.usage` and the entry's own `usage` (`None` where absent).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct LineUsage {
    pub(crate) tool_calls: u64,
    pub(crate) message_usage: Option<Usage>,
    pub(crate) entry_usage: Option<Usage>,
}

impl LineUsage {
    /// From the entry as `JSON.parse` gives it.
    pub(crate) fn of_value(entry: &JsValue) -> LineUsage {
        let message = entry.get("message");
        let tool_calls = message
            .and_then(|m| m.get("content"))
            .and_then(JsValue::as_array)
            .map_or(0, |blocks| {
                blocks
                    .iter()
                    .filter(|b| {
                        b.get("type").and_then(JsValue::as_str).as_deref() == Some("toolCall")
                    })
                    .count()
            });
        // `null` counts nothing, as its zeros would.
        let usage = |v: Option<&JsValue>| v.filter(|u| !matches!(u, JsValue::Null)).map(Usage::of);
        LineUsage {
            tool_calls: tool_calls as u64,
            message_usage: usage(message.and_then(|m| m.get("usage"))),
            entry_usage: usage(entry.get("usage")),
        }
    }
}

impl SessionStats {
    fn add_usage(&mut self, usage: Option<Usage>) {
        let Some(u) = usage else { return };
        self.input_tokens += u.input;
        self.output_tokens += u.output;
        self.cache_read_tokens += u.cache_read;
        self.cache_write_tokens += u.cache_write;
        self.total_tokens += u.input + u.output + u.cache_read + u.cache_write;
        self.cost_total += u.cost;
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
        let role = match record.payload() {
            Payload::Message { role, .. } => Some(role),
            _ => None,
        };
        self.count_as(
            record.kind(),
            role,
            || Ok(LineUsage::of_value(&value()?)),
            pi16_usage,
        )
    }

    /// [`SessionStats::count`] of an entry of `kind` (a message's `role` when it is one), from
    /// a line's facts as well as from the index; `usage` reads the line when it is needed.
    pub(crate) fn count_as(
        &mut self,
        kind: Kind,
        role: Option<Role>,
        usage: impl FnOnce() -> StoreResult<LineUsage>,
        pi16_usage: bool,
    ) -> StoreResult<()> {
        match (role, kind) {
            (Some(role), _) => {
                self.message_count += 1;
                match role {
                    Role::User => self.user_messages += 1,
                    Role::Assistant => {
                        self.assistant_messages += 1;
                        let line = usage()?;
                        self.tool_calls += line.tool_calls;
                        self.add_usage(line.message_usage);
                    }
                    Role::ToolResult => {
                        self.tool_results += 1;
                        self.add_usage(usage()?.message_usage);
                    }
                    Role::System | Role::Other => {}
                }
            }
            (_, Kind::Compaction | Kind::BranchSummary) => self.add_usage(usage()?.entry_usage),
            // pi 1.6 counts usage entries (cache warming, ...); 0.82.1 does not know them.
            (_, Kind::Usage) if pi16_usage => self.add_usage(usage()?.entry_usage),
            _ => {}
        }
        Ok(())
    }

    /// Adds what [`SessionStats::count`] counted of later entries, starting from zero: the
    /// sums are those of one pass in order, since each entry adds its usage once and `0 + x`
    /// is `x` exactly.
    pub(crate) fn add(&mut self, later: &SessionStats) {
        self.message_count += later.message_count;
        self.user_messages += later.user_messages;
        self.assistant_messages += later.assistant_messages;
        self.tool_results += later.tool_results;
        self.tool_calls += later.tool_calls;
        self.input_tokens += later.input_tokens;
        self.output_tokens += later.output_tokens;
        self.cache_read_tokens += later.cache_read_tokens;
        self.cache_write_tokens += later.cache_write_tokens;
        self.total_tokens += later.total_tokens;
        self.cost_total += later.cost_total;
    }
}
