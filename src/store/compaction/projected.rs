//! pi 1.6's compaction, which works on the session projection (`buildSessionProjection`):
//! context edits applied, the kept range's system messages and older compactions already gone.
//! `estimateProjectedContextTokens`, `findProjectedCutPoint` (the last cut point when trailing
//! tool results alone exceed the budget; the recovery-omission step) and `prepareCompaction`.

use crate::format::json::JsValue;
use crate::format::profile::Profile;

use super::estimate::{self, CompactionRules, ContextEstimate, Malformed, role};
use super::prepare::{CompactionSettings, CutPoint, Preparation, Refusal, Window};
use crate::store::context::{BranchFacts, ProjectedEntry};
use crate::store::system_message::current_system_message;

const RULES: CompactionRules = CompactionRules::Pi16;

impl ProjectedEntry {
    fn kind(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.value.get("type").and_then(JsValue::as_str)
    }

    fn is(&self, kind: &str) -> bool {
        self.kind().as_deref() == Some(kind)
    }

    fn id(&self) -> Option<String> {
        self.value
            .get("id")
            .filter(|v| v.is_truthy())
            .map(JsValue::to_js_string)
    }

    fn tokens(&self) -> Result<f64, Refusal> {
        self.messages
            .iter()
            .map(|m| estimate::estimate_tokens(m, RULES))
            .sum::<Result<f64, _>>()
            .map_err(|m| Refusal::Malformed {
                entry: self.id(),
                problem: m.0,
            })
    }

    /// Omitted by a context edit: it would show, but projects to nothing.
    fn omitted(&self) -> bool {
        self.visible && self.messages.is_empty()
    }
}

fn is_cut_point_message(m: &JsValue) -> bool {
    estimate::is_cut_point_role(role(m).as_deref())
}

fn is_turn_start_message(m: &JsValue) -> bool {
    estimate::is_turn_start_role(role(m).as_deref())
}

fn is_turn_start(e: &ProjectedEntry) -> bool {
    !e.is("compaction") && e.messages.iter().any(is_turn_start_message)
}

/// `estimateProjectedContextTokens(projection, branch)`: the last assistant usage counts only
/// when its entry comes after the branch's latest context edit or compaction; otherwise every
/// message is estimated, the current system message once instead of each system message.
pub fn estimate_projected(
    entries: &[ProjectedEntry],
    branch: &BranchFacts,
) -> Result<(ContextEstimate, Option<String>), Malformed> {
    let messages: Vec<&JsValue> = entries.iter().flat_map(|e| &e.messages).collect();
    let owned: Vec<JsValue> = messages.iter().map(|m| (*m).clone()).collect();
    let estimate = estimate::estimate_context(&owned, RULES)?;
    if let Some(index) = estimate.last_usage_index {
        let mut start = 0;
        let mut usage_entry = None;
        for e in entries {
            let next = start + e.messages.len();
            if index < next {
                usage_entry = e.value.get("id").map(JsValue::to_js_string);
                break;
            }
            start = next;
        }
        let usage_index = usage_entry
            .as_deref()
            .filter(|id| !id.is_empty())
            .and_then(|id| branch.ids.iter().position(|b| b.as_deref() == Some(id)));
        let after = match (usage_index, branch.latest_invalidating) {
            (Some(u), Some(l)) => u > l,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if after {
            return Ok((estimate, usage_entry));
        }
    }
    let system = current_system_message(&owned).map_err(|e| Malformed(e.message))?;
    let mut tokens = match &system {
        Some(s) => estimate::estimate_tokens(s, RULES)?,
        None => 0.0,
    };
    for m in &owned {
        if role(m).as_deref() != Some("system") {
            tokens += estimate::estimate_tokens(m, RULES)?;
        }
    }
    Ok((
        ContextEstimate {
            tokens,
            usage_tokens: 0.0,
            trailing_tokens: tokens,
            last_usage_index: None,
        },
        None,
    ))
}

/// `findProjectedCutPoint(entries, start, end, keepRecentTokens)`.
fn find_cut_point(
    entries: &[ProjectedEntry],
    start: usize,
    keep: f64,
) -> Result<CutPoint, Refusal> {
    let end = entries.len();
    let cut_points: Vec<usize> = (start..end)
        .filter(|&i| {
            !entries[i].is("compaction") && entries[i].messages.iter().any(is_cut_point_message)
        })
        .collect();
    let (Some(&first), Some(&last)) = (cut_points.first(), cut_points.last()) else {
        return Ok(CutPoint::keeping_all_from(start));
    };
    let mut cut = first;
    let mut total = 0.0;
    let mut exceeded = false;
    for i in (start..end).rev() {
        let tokens = entries[i].tokens()?;
        if tokens == 0.0 {
            continue;
        }
        total += tokens;
        if total >= keep {
            exceeded = true;
            // Trailing tool results alone over the budget keep their assistant call.
            cut = cut_points.iter().copied().find(|&c| c >= i).unwrap_or(last);
            break;
        }
    }
    // An omitted recovery attempt after the last visible input: the cut moves past it.
    let suffix = &entries[(cut + 1).min(end)..end];
    let omitted_ids: Vec<Option<String>> = suffix
        .iter()
        .filter(|e| e.omitted())
        .map(|e| e.value.get("id").map(JsValue::to_js_string))
        .collect();
    let external_replacement = suffix.iter().any(|e| {
        e.is("context_edit")
            && !matches!(e.value.get("replacement"), Some(JsValue::Null))
            && !omitted_ids.contains(&e.value.get("targetId").map(JsValue::to_js_string))
    });
    let recovery = exceeded
        && !external_replacement
        && suffix.iter().any(|e| {
            e.is("message")
                && e.value.get("message").and_then(role).as_deref() == Some("assistant")
                && e.omitted()
        })
        && suffix
            .iter()
            .all(|e| !e.is("compaction") && (!e.visible || e.is("context_edit") || e.omitted()));
    if recovery {
        cut += 1;
    }
    while cut > start {
        let previous = &entries[cut - 1];
        if previous.is("compaction") || !previous.messages.is_empty() {
            break;
        }
        cut -= 1;
    }
    let starts = is_turn_start(&entries[cut]);
    let turn_start = if starts {
        None
    } else {
        (start..=cut).rev().find(|&i| is_turn_start(&entries[i]))
    };
    Ok(CutPoint {
        first_kept_index: cut,
        turn_start_index: turn_start,
        is_split_turn: !starts && turn_start.is_some(),
    })
}

/// `getMessagesFromProjectedEntryForCompaction`: no compaction, no system message.
fn messages_for_compaction(e: &ProjectedEntry) -> impl Iterator<Item = &JsValue> {
    let skip = e.is("compaction");
    e.messages
        .iter()
        .filter(move |m| !skip && role(m).as_deref() != Some("system"))
}

/// pi 1.6's `prepareCompaction(pathEntries, settings)` on the path's projection. `last_is_compaction`
/// is whether the path ends in a compaction ("Already compacted").
pub fn prepare(
    profile: Profile,
    entries: &[ProjectedEntry],
    branch: &BranchFacts,
    last_is_compaction: bool,
    settings: CompactionSettings,
) -> Result<Preparation, Refusal> {
    if last_is_compaction {
        return Err(Refusal::AlreadyCompacted);
    }
    // The newest compaction is projected first; one an edit removed is no previous summary.
    let prev = entries
        .iter()
        .position(|e| e.is("compaction") && !e.messages.is_empty());
    let previous_summary = prev.and_then(|c| entries[c].value.get("summary").cloned());
    let window_start = prev.map_or(0, |c| c + 1);
    let (estimate, _) = estimate_projected(entries, branch).map_err(|m| Refusal::Malformed {
        entry: None,
        problem: m.0,
    })?;
    let cut = find_cut_point(entries, window_start, settings.keep_recent_tokens)?;
    let window = Window {
        previous_compaction: prev.map(|c| (c, &entries[c].value)),
        previous_summary,
        window_start,
        cut,
        tokens_before: estimate.tokens,
        settings,
    };
    let path_ids = entries.iter().map(ProjectedEntry::id).collect();
    Preparation::of_window(profile, window, path_ids, |i| {
        messages_for_compaction(&entries[i]).cloned().collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::json::parse;

    fn entry(line: &str, messages: &[&str], visible: bool) -> ProjectedEntry {
        ProjectedEntry {
            value: parse(line).unwrap(),
            messages: messages.iter().map(|m| parse(m).unwrap()).collect(),
            visible,
        }
    }

    const USER: &str = r#"{"role":"user","content":"xxxxxxxx"}"#;
    const CALL: &str =
        r#"{"role":"assistant","content":[{"type":"toolCall","name":"read","arguments":{}}]}"#;
    const RESULT: &str =
        r#"{"role":"toolResult","content":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#;

    #[test]
    fn trailing_tool_results_over_the_budget_keep_the_last_cut_point() {
        let entries = [
            entry(r#"{"type":"message","id":"u"}"#, &[USER], true),
            entry(r#"{"type":"message","id":"a"}"#, &[CALL], true),
            entry(r#"{"type":"message","id":"r"}"#, &[RESULT], true),
        ];
        let cut = find_cut_point(&entries, 0, 5.0).unwrap();
        // pi 0.82.1 would fall back to the first cut point (u).
        assert_eq!(cut.first_kept_index, 1);
        assert!(cut.is_split_turn);
    }

    #[test]
    fn an_omitted_recovery_attempt_after_the_cut_moves_it_forward() {
        let entries = [
            entry(r#"{"type":"message","id":"u"}"#, &[USER], true),
            entry(r#"{"type":"message","id":"u2"}"#, &[USER], true),
            entry(
                r#"{"type":"message","id":"a","message":{"role":"assistant"}}"#,
                &[],
                true,
            ),
            entry(
                r#"{"type":"context_edit","id":"e","targetId":"a","replacement":null}"#,
                &[],
                false,
            ),
        ];
        let cut = find_cut_point(&entries, 0, 1.0).unwrap();
        // u2 is the cut; the omitted attempt after it moves the cut onto it, and the backward
        // scan over entries that project to nothing takes it no further back than u2's end.
        assert_eq!(cut.first_kept_index, 2);
    }
}
