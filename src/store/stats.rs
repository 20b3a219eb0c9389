//! Counts and usage over every entry of a session (all branches), as pi's
//! `AgentSession.getSessionStats` counts them.

use crate::format::entry::{Kind, Payload, Role};
use crate::format::json::JsValue;

use super::error::StoreResult;
use super::index_file;
use super::session::Session;

#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
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
}

impl Session {
    /// Counts over every entry. Entries counted before (by this session, or by an earlier
    /// process and filed beside the persisted index) are not read again: only the bodies of
    /// later entries that carry usage (messages, compactions, summaries) are.
    pub fn stats(&self) -> StoreResult<SessionStats> {
        let mut memo = self.stats_memo.lock().unwrap_or_else(|e| e.into_inner());
        let (mut counted, mut stats) = match memo.take() {
            Some((n, stats)) if n <= self.len() => (n, stats),
            _ => self
                .persisted
                .as_ref()
                .and_then(|p| index_file::load_stats(&p.place, p.generation))
                .filter(|(n, _)| *n <= self.len())
                .unwrap_or_default(),
        };
        if let Some(persisted) = &self.persisted
            && counted < persisted.records
        {
            self.count(&mut stats, counted, persisted.records)?;
            counted = persisted.records;
            index_file::save_stats(&persisted.place, persisted.generation, counted, &stats);
        }
        self.count(&mut stats, counted, self.len())?;
        *memo = Some((self.len(), stats.clone()));
        Ok(stats)
    }

    /// Adds entries `from..to` to `stats`, in order (sums continue exactly as one pass).
    fn count(&self, stats: &mut SessionStats, from: usize, to: usize) -> StoreResult<()> {
        for position in from as u32..to as u32 {
            let record = self.record(position);
            match (record.payload(), record.kind()) {
                (Payload::Message { role, .. }, _) => {
                    stats.message_count += 1;
                    match role {
                        Role::User => stats.user_messages += 1,
                        Role::Assistant => {
                            stats.assistant_messages += 1;
                            let message = self
                                .entry_value(position)?
                                .get("message")
                                .cloned()
                                .unwrap_or(JsValue::Null);
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
                            stats.tool_calls += calls as u64;
                            stats.add_usage(message.get("usage"));
                        }
                        Role::ToolResult => {
                            stats.tool_results += 1;
                            let entry = self.entry_value(position)?;
                            stats.add_usage(entry.get("message").and_then(|m| m.get("usage")));
                        }
                        Role::System | Role::Other => {}
                    }
                }
                (_, Kind::Compaction | Kind::BranchSummary) => {
                    stats.add_usage(self.entry_value(position)?.get("usage"))
                }
                // pi 1.6 counts usage entries (cache warming, ...); 0.82.1 does not know them.
                (_, Kind::Usage) if self.profile().rules().pi16_entries => {
                    stats.add_usage(self.entry_value(position)?.get("usage"))
                }
                _ => {}
            }
        }
        Ok(())
    }
}
