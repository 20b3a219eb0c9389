//! Compaction as pi does it, everything but the model call: token estimates, cut points, the
//! preparation, file operations, the serialized conversation and the exact requests a
//! summarizing model gets. The profile picks one [`CompactionRules`] value: pi-cli follows
//! pi-coding-agent 0.82.1's `core/compaction`, pi-1.6 pi-coding-agent 1.6.0's (on the session
//! projection: `projected`), the harness pi-agent-core's `harness/compaction` (its own cut
//! rules, `retainedTail`).

mod branch;
mod entry;
mod estimate;
mod files;
mod plan;
mod prepare;
mod projected;
mod prompts;
mod serialize;
mod text;

pub use branch::{
    BranchBudget, BranchPlan, DEFAULT_CONTEXT_WINDOW, DEFAULT_RESERVE_TOKENS,
    prepare_branch_entries,
};
pub use entry::{Summaries, SummaryProblem, SummaryText, Verdict, combine_usage};
pub use estimate::{CompactionRules, ContextEstimate};
pub use files::FileOps;
pub use plan::Detail;
pub use prepare::{CompactionSettings, CutPoint, ModelOptions, ModelRequest, Preparation};

use crate::format::json::JsValue;
use crate::format::profile::Profile;

use super::context::project;
use super::error::{ErrorKind, StoreError, StoreResult};
use super::index::Leaf;
use super::session::Session;
use estimate::CompactionRules as Rules;
use prepare::{PathEntry, Refusal};

/// `estimateContextTokens` at a leaf, with the entry the usage came from.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageAtLeaf {
    /// The estimate.
    pub estimate: ContextEstimate,
    /// The entry whose assistant message gave `usageTokens` (a message entry), if any.
    pub last_usage_entry_id: Option<String>,
    /// pi-cli's `AgentSession.getContextUsage()` rule: after the newest compaction on the
    /// path, no assistant with valid usage yet (its figures are then unknown).
    pub unknown_after_compaction: bool,
}

fn rules(profile: Profile) -> Rules {
    Rules::of(profile)
}

impl Session {
    /// The index in `positions` of the newest compaction, if any.
    fn last_compaction(&self, positions: &[u32]) -> Option<usize> {
        positions
            .iter()
            .rposition(|&p| self.record(p).kind() == crate::format::entry::Kind::Compaction)
    }

    /// The context messages at `leaf` (`buildSessionContext(path).messages`), each with the id
    /// of the message entry it is (none for projected summaries and tails).
    fn context_messages(&mut self, leaf: &Leaf) -> StoreResult<Vec<(JsValue, Option<String>)>> {
        let profile = self.profile();
        let mut out = Vec::new();
        for position in self.context_entries(leaf)? {
            let entry = self.entry_value(position)?;
            let id = (entry.get("type").and_then(JsValue::as_str).as_deref() == Some("message"))
                .then(|| self.record(position).id().map(str::to_string))
                .flatten();
            let mut messages = Vec::new();
            project(&profile.rules().context, &entry, &mut messages);
            out.extend(messages.into_iter().map(|m| (m, id.clone())));
        }
        Ok(out)
    }

    /// pi 1.6's `estimateProjectedContextTokens(projection, branch)` at `leaf`, and
    /// `getContextUsage()`'s rule: after the branch's newest compaction, no projected
    /// assistant with valid usage yet.
    fn projected_context_usage(&mut self, leaf: &Leaf) -> StoreResult<UsageAtLeaf> {
        let (entries, branch, _) = self.projected_entries(leaf)?;
        let (estimate, last_usage_entry_id) = projected::estimate_projected(&entries, &branch)
            .map_err(|m| {
                refusal_error(
                    self.profile(),
                    Refusal::Malformed {
                        entry: None,
                        problem: m.0,
                    },
                )
            })?;
        let path = self.profile_path(leaf)?;
        let mut unknown = false;
        if let Some(c) = self.last_compaction(&path.positions) {
            let with_usage: std::collections::HashSet<String> = entries
                .iter()
                .filter(|e| {
                    e.messages.iter().any(|m| {
                        m.get("role").and_then(JsValue::as_str).as_deref() == Some("assistant")
                            && !matches!(
                                m.get("stopReason").and_then(JsValue::as_str).as_deref(),
                                Some("aborted" | "error")
                            )
                            && estimate::context_tokens(m.get("usage").unwrap_or(&JsValue::Null))
                                > 0.0
                    })
                })
                .filter_map(|e| e.value.get("id").map(JsValue::to_js_string))
                .collect();
            unknown = !path.positions[c + 1..].iter().any(|&p| {
                self.record(p)
                    .id()
                    .is_some_and(|id| with_usage.contains(id))
            });
        }
        Ok(UsageAtLeaf {
            estimate,
            last_usage_entry_id,
            unknown_after_compaction: unknown,
        })
    }

    /// `estimateContextTokens(buildSessionContext(path).messages)` at `leaf` (pi 1.6:
    /// `estimateProjectedContextTokens`).
    pub fn context_usage(&mut self, leaf: &Leaf) -> StoreResult<UsageAtLeaf> {
        let profile = self.profile();
        if rules(profile).on_projection() {
            return self.projected_context_usage(leaf);
        }
        let tagged = self.context_messages(leaf)?;
        let messages: Vec<JsValue> = tagged.iter().map(|(m, _)| m.clone()).collect();
        let estimate = estimate::estimate_context(&messages, rules(profile))
            .map_err(|m| malformed_context(&tagged, profile, m))?;
        let last_usage_entry_id = estimate.last_usage_index.and_then(|i| tagged[i].1.clone());
        let path = self.profile_path(leaf)?;
        let mut unknown = false;
        if let Some(c) = self.last_compaction(&path.positions) {
            unknown = true;
            for &p in &path.positions[c + 1..] {
                if !self.record(p).is_assistant_message() {
                    continue;
                }
                let entry = self.entry_value(p)?;
                let message = entry.get("message").cloned().unwrap_or(JsValue::Null);
                let stop = message.get("stopReason").and_then(JsValue::as_str);
                if !matches!(stop.as_deref(), Some("aborted" | "error"))
                    && estimate::context_tokens(message.get("usage").unwrap_or(&JsValue::Null))
                        > 0.0
                {
                    unknown = false;
                    break;
                }
            }
        }
        Ok(UsageAtLeaf {
            estimate,
            last_usage_entry_id,
            unknown_after_compaction: unknown,
        })
    }

    /// The thinking level `compact()` is given: the one in force at `leaf` for pi-cli
    /// (AgentSession's level), `"off"` for the harness (its own default).
    pub fn compaction_thinking_level(&mut self, leaf: &Leaf) -> StoreResult<Option<String>> {
        if let Some(level) = rules(self.profile()).fixed_thinking_level() {
            return Ok(Some(level.into()));
        }
        let context = self.build_context(leaf, super::context::MessageFormat::Agent)?;
        Ok(context
            .thinking_level
            .and_then(|l| l.as_str().map(|s| s.into_owned())))
    }

    /// Appends a compaction entry at the leaf (pi's `appendCompaction`): the entry as stored.
    pub fn append_compaction(
        &mut self,
        entry: crate::format::write::NewEntry,
    ) -> StoreResult<JsValue> {
        let id = self.append(entry)?;
        let position = self
            .position(&id)
            .ok_or_else(|| StoreError::entry_not_found(&id))?;
        self.entry_value(position)
    }

    /// The entries of the profile's path to `leaf` (`getBranch()`), as stored.
    pub(crate) fn path_entries(&mut self, leaf: &Leaf) -> StoreResult<Vec<JsValue>> {
        let walk = self.profile_path(leaf)?;
        walk.positions
            .iter()
            .map(|&p| self.entry_value(p))
            .collect()
    }

    /// `prepareCompaction(getBranch(), settings)` at `leaf`, with pi's refusals as errors
    /// (`already_compacted`, `nothing_to_compact`).
    pub fn prepare_compaction(
        &mut self,
        leaf: &Leaf,
        settings: CompactionSettings,
    ) -> StoreResult<Preparation> {
        let profile = self.profile();
        if rules(profile).on_projection() {
            let (entries, branch, last_is_compaction) = self.projected_entries(leaf)?;
            return projected::prepare(profile, &entries, &branch, last_is_compaction, settings)
                .map_err(|r| refusal_error(profile, r));
        }
        let walk = self.profile_path(leaf)?;
        self.note_cycle(&walk);
        // Only the window (from the previous compaction's first kept entry) and that compaction
        // need their bodies; the older part of the path is types and ids.
        let positions = &walk.positions;
        let compaction = self.last_compaction(positions);
        let window_start = match compaction {
            None => 0,
            Some(c) => match self.record(positions[c]).payload() {
                crate::format::entry::Payload::Compaction {
                    first_kept: Some(first),
                    ..
                } => positions[..c]
                    .iter()
                    .position(|&p| self.record(p).id() == Some(first))
                    .unwrap_or(c),
                _ => c,
            },
        };
        let mut path = Vec::with_capacity(positions.len());
        for (i, &p) in positions.iter().enumerate() {
            path.push(if i >= window_start {
                PathEntry::new(self.entry_value(p)?)
            } else {
                let record = self.record(p);
                PathEntry::light(record.type_name(), record.id())
            });
        }
        let tagged = self.context_messages(leaf)?;
        let context: Vec<JsValue> = tagged.iter().map(|(m, _)| m.clone()).collect();
        prepare::prepare(profile, &path, &context, settings).map_err(|r| match r {
            Refusal::Malformed {
                entry: None,
                problem,
            } => malformed_context(&tagged, profile, estimate::Malformed(problem)),
            r => refusal_error(profile, r),
        })
    }
}

/// A context message pi's estimate would throw on, named by its entry when it has one.
fn malformed_context(
    tagged: &[(JsValue, Option<String>)],
    profile: Profile,
    problem: estimate::Malformed,
) -> StoreError {
    let entry = tagged
        .iter()
        .find(|(m, _)| estimate::estimate_tokens(m, rules(profile)).is_err())
        .and_then(|(_, id)| id.clone());
    refusal_error(
        profile,
        Refusal::Malformed {
            entry,
            problem: problem.0,
        },
    )
}

fn refusal_error(profile: Profile, refusal: Refusal) -> StoreError {
    let (already_compacted, nothing_to_compact) = rules(profile).refusal_messages();
    match refusal {
        Refusal::AlreadyCompacted => {
            StoreError::new(ErrorKind::AlreadyCompacted, already_compacted)
        }
        Refusal::NothingToCompact => {
            StoreError::new(ErrorKind::NothingToCompact, nothing_to_compact)
        }
        Refusal::NoId => StoreError::new(
            ErrorKind::InvalidSession,
            "First kept entry has no UUID - session may need migration",
        ),
        Refusal::Malformed { entry, problem } => StoreError::new(
            ErrorKind::InvalidSession,
            match entry {
                Some(id) => format!("pi cannot compact entry {id}: {problem}"),
                None => format!("pi cannot compact this session: {problem}"),
            },
        ),
    }
}

impl UsageAtLeaf {
    /// `{tokens, usageTokens, trailingTokens, lastUsageIndex, lastUsageEntryId}`.
    pub fn to_value(&self) -> JsValue {
        use crate::format::json::{JsObject, JsString};
        let mut map = JsObject::new();
        let e = &self.estimate;
        for (k, v) in [
            ("tokens", JsValue::Number(e.tokens)),
            ("usageTokens", JsValue::Number(e.usage_tokens)),
            ("trailingTokens", JsValue::Number(e.trailing_tokens)),
            (
                "lastUsageIndex",
                e.last_usage_index
                    .map_or(JsValue::Null, |i| JsValue::Number(i as f64)),
            ),
            (
                "lastUsageEntryId",
                self.last_usage_entry_id
                    .as_deref()
                    .map_or(JsValue::Null, JsValue::from),
            ),
        ] {
            map.insert(JsString::new(k), v);
        }
        JsValue::Object(map)
    }
}
