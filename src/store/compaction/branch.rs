//! Branch summaries as pi's `generateBranchSummary` makes them, everything but the model call:
//! `prepareBranchEntries` under the token budget (`contextWindow − reserveTokens`), the file
//! lists, the one request the summarizing model gets, and the text and `details` pi writes
//! around the model's answer. pi-coding-agent 0.82.1's and pi-agent-core's copies agree on all
//! of it but the token estimate and the LLM conversion; pi 1.6 applies the abandoned entries'
//! context edits, sets no output cap, passes the thinking level as `reasoning` and leaves
//! thinking blocks out of the conversation.

use crate::format::json::{JsString, JsValue};
use crate::format::profile::{ContextRules, Profile};

use super::estimate::{self, CompactionRules, Malformed};
use super::files::{FileOps, format_file_operations};
use super::prepare::{ModelOptions, ModelRequest};
use super::prompts;
use super::rules;
use super::serialize::serialize_conversation;
use super::text::JsText;
use crate::store::context::{convert_to_llm, date_millis, object};

/// pi's fallback when the model names no context window (`model.contextWindow || 128000`).
pub const DEFAULT_CONTEXT_WINDOW: f64 = 128000.0;
/// pi's `branchSummary.reserveTokens` default (and the harness's fixed value).
pub const DEFAULT_RESERVE_TOKENS: f64 = 16384.0;
/// The `maxTokens` of the branch summary request, fixed in pi.
const MAX_TOKENS: f64 = 2048.0;
/// What pi writes when the abandoned entries hold no message (no model is asked).
pub const NO_CONTENT: &str = "No content to summarize";

/// The model and settings figures the budget depends on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BranchBudget {
    /// The model's context window; 0 (or none) is pi's fallback of 128,000.
    pub context_window: f64,
    /// The tokens kept free for the answer.
    pub reserve_tokens: f64,
}

impl Default for BranchBudget {
    fn default() -> Self {
        BranchBudget {
            context_window: DEFAULT_CONTEXT_WINDOW,
            reserve_tokens: DEFAULT_RESERVE_TOKENS,
        }
    }
}

impl BranchBudget {
    fn window(self) -> f64 {
        // `model.contextWindow || 128000`: 0 and NaN fall back.
        if self.context_window == 0.0 || self.context_window.is_nan() {
            DEFAULT_CONTEXT_WINDOW
        } else {
            self.context_window
        }
    }

    /// The tokens the branch's messages may fill (`contextWindow - reserveTokens`).
    pub fn token_budget(self) -> f64 {
        self.window() - self.reserve_tokens
    }
}

/// `prepareBranchEntries(entries, tokenBudget)` and what `generateBranchSummary` makes of it.
#[derive(Debug, Clone)]
pub struct BranchPlan {
    profile: Profile,
    /// The budget it was planned with.
    pub budget: BranchBudget,
    /// The messages that fit the budget, oldest first.
    pub messages: Vec<JsValue>,
    /// The estimated tokens of `messages`.
    pub total_tokens: f64,
    /// The files the branch read and modified.
    pub file_ops: FileOps,
}

/// `getMessageFromEntry` of branch-summarization (tool results skipped; every branch summary
/// and compaction projected, whatever its text).
fn message_of(entry: &JsValue) -> Result<Option<JsValue>, Malformed> {
    let field = |k: &str| entry.get(k).cloned();
    let timestamp = || Some(JsValue::Number(date_millis(entry.get("timestamp"))));
    let kind = entry.get("type").and_then(JsValue::as_str);
    Ok(match kind.as_deref() {
        Some("message") => {
            let Some(message) = entry.get("message").filter(|m| !matches!(m, JsValue::Null)) else {
                return Err(Malformed("a message entry has no message".into()));
            };
            let role = message.get("role").and_then(JsValue::as_str);
            (role.as_deref() != Some("toolResult")).then(|| message.clone())
        }
        Some("custom_message") => Some(object([
            ("role", Some(JsValue::from("custom"))),
            ("customType", field("customType")),
            ("content", field("content")),
            ("display", field("display")),
            ("details", field("details")),
            ("timestamp", timestamp()),
        ])),
        Some("branch_summary") => Some(object([
            ("role", Some(JsValue::from("branchSummary"))),
            ("summary", field("summary")),
            ("fromId", field("fromId")),
            ("timestamp", timestamp()),
        ])),
        Some("compaction") => Some(object([
            ("role", Some(JsValue::from("compactionSummary"))),
            ("summary", field("summary")),
            ("tokensBefore", field("tokensBefore")),
            ("timestamp", timestamp()),
        ])),
        _ => None,
    })
}

/// pi 1.6's `projectContextEntry(entry, edit)` on the messages an entry projects to: a `null`
/// replacement removes them; any other puts its `content` into the editable roles.
fn apply_edit(messages: Vec<JsValue>, edit: &JsValue) -> Result<Vec<JsValue>, Malformed> {
    let Some(replacement) = edit.get("replacement") else {
        return Err(Malformed(
            "a context_edit has no replacement (pi 1.6 cannot read its content)".into(),
        ));
    };
    if matches!(replacement, JsValue::Null) {
        return Ok(Vec::new());
    }
    Ok(crate::store::context::replace_content(
        messages,
        replacement.get("content"),
    ))
}

/// pi 1.6's `getMessageFromEntry(entry, edit)`: an edited message or custom message in its
/// projected form (nothing when omitted); the rest as 0.82.1.
fn message_of_pi16(
    context: &ContextRules,
    entry: &JsValue,
    edit: Option<&JsValue>,
) -> Result<Option<JsValue>, Malformed> {
    let editable = match entry.get("type").and_then(JsValue::as_str).as_deref() {
        Some("message") => {
            entry
                .get("message")
                .and_then(|m| m.get("role"))
                .and_then(JsValue::as_str)
                .as_deref()
                != Some("toolResult")
        }
        Some("custom_message") => true,
        _ => false,
    };
    match edit {
        Some(edit) if editable => {
            let mut projected = Vec::new();
            crate::store::context::project(context, entry, &mut projected);
            Ok(apply_edit(projected, edit)?.into_iter().next())
        }
        _ => message_of(entry),
    }
}

/// `prepareBranchEntries(entries, budget.token_budget())` over the abandoned entries (oldest
/// first, as stored).
pub fn prepare_branch_entries(
    profile: Profile,
    entries: &[JsValue],
    budget: BranchBudget,
) -> Result<BranchPlan, Malformed> {
    let mut file_ops = FileOps::default();
    // The file lists of earlier pi-generated summaries count whatever the budget keeps.
    for entry in entries {
        if entry.get("type").and_then(JsValue::as_str).as_deref() == Some("branch_summary") {
            file_ops.add_carried(entry);
        }
    }
    let token_budget = budget.token_budget();
    let rules = rules(profile);
    // pi 1.6: the latest context edit per target among the abandoned entries applies.
    let mut edits: std::collections::HashMap<String, &JsValue> = std::collections::HashMap::new();
    if rules == CompactionRules::Pi16 {
        for entry in entries {
            if entry.get("type").and_then(JsValue::as_str).as_deref() == Some("context_edit") {
                let target = entry
                    .get("targetId")
                    .map_or("undefined".into(), JsValue::to_js_string);
                edits.insert(target, entry);
            }
        }
    }
    let mut messages = Vec::new();
    let mut total = 0.0;
    for entry in entries.iter().rev() {
        let message = if rules == CompactionRules::Pi16 {
            let id = entry.get("id").map(JsValue::to_js_string);
            message_of_pi16(
                &profile.rules().context,
                entry,
                id.and_then(|id| edits.get(&id).copied()),
            )?
        } else {
            message_of(entry)?
        };
        let Some(message) = message else {
            continue;
        };
        file_ops.extract(&message, rules);
        let tokens = estimate::estimate_tokens(&message, rules)?;
        if token_budget > 0.0 && total + tokens > token_budget {
            // A summary is important context: it may go over the budget while below 90% of it.
            let kind = entry.get("type").and_then(JsValue::as_str);
            if matches!(kind.as_deref(), Some("compaction" | "branch_summary"))
                && total < token_budget * 0.9
            {
                messages.push(message);
                total += tokens;
            }
            break;
        }
        messages.push(message);
        total += tokens;
    }
    messages.reverse();
    Ok(BranchPlan {
        profile,
        budget,
        messages,
        total_tokens: total,
        file_ops,
    })
}

impl BranchPlan {
    /// Nothing to summarize: pi writes `NO_CONTENT` without asking a model.
    pub fn no_content(&self) -> bool {
        self.messages.is_empty()
    }

    /// The request `generateBranchSummary` sends, or `None` when it sends none.
    pub fn request(
        &self,
        custom_instructions: Option<&str>,
        replace_instructions: Option<bool>,
    ) -> Result<Option<ModelRequest>, Malformed> {
        self.request_for(
            custom_instructions,
            replace_instructions,
            &ModelOptions::default(),
        )
    }

    /// [`BranchPlan::request`] for a model: pi 1.6 passes the thinking level as `reasoning`
    /// when the model reasons (0.82.1 sends neither that nor anything else of the model's).
    pub fn request_for(
        &self,
        custom_instructions: Option<&str>,
        replace_instructions: Option<bool>,
        model: &ModelOptions,
    ) -> Result<Option<ModelRequest>, Malformed> {
        let rules = rules(self.profile);
        if self.no_content() {
            return Ok(None);
        }
        let llm: Vec<JsValue> = self
            .messages
            .iter()
            .filter_map(|m| convert_to_llm(m, self.profile))
            .collect();
        let mut t = JsText::new();
        t.text("<conversation>\n")
            .js(&serialize_conversation(&llm, rules)?)
            .text("\n</conversation>\n\n");
        let custom = custom_instructions.filter(|c| !c.is_empty());
        match custom {
            Some(c) if replace_instructions == Some(true) => t.text(c),
            Some(c) => t
                .text(prompts::BRANCH_PROMPT)
                .text("\n\nAdditional focus: ")
                .text(c),
            None => t.text(prompts::BRANCH_PROMPT),
        };
        Ok(Some(ModelRequest {
            purpose: "branchSummary",
            system_prompt: prompts::SYSTEM_PROMPT,
            text: t.finish(),
            max_tokens: (rules != CompactionRules::Pi16).then_some(MAX_TOKENS),
            reasoning: if rules == CompactionRules::Pi16 {
                model.reasoning()
            } else {
                None
            },
            rules,
        }))
    }

    /// `computeFileLists(fileOps)`.
    pub fn file_lists(&self) -> (Vec<JsValue>, Vec<JsValue>) {
        self.file_ops.lists()
    }

    /// The summary pi writes for the model's text (`contentText(response.content)`): the
    /// preamble, the text and the file lists; `details` `{readFiles, modifiedFiles}`. Without
    /// content, `NO_CONTENT` with empty lists whatever the text.
    pub fn written_summary(&self, model_text: &str) -> (JsValue, JsValue) {
        let (read, modified) = if self.no_content() {
            (Vec::new(), Vec::new())
        } else {
            self.file_lists()
        };
        let details = object([
            ("readFiles", Some(JsValue::Array(read.clone()))),
            ("modifiedFiles", Some(JsValue::Array(modified.clone()))),
        ]);
        if self.no_content() {
            return (JsValue::from(NO_CONTENT), details);
        }
        let mut t = JsText::new();
        t.text(prompts::BRANCH_PREAMBLE)
            .text(model_text)
            .js(&format_file_operations(&read, &modified));
        (JsValue::String(t.finish()), details)
    }

    /// `{contextWindow, reserveTokens, tokenBudget, messages, totalTokens, fileOps, readFiles,
    /// modifiedFiles, fileListsText, request}` (`request` null when no model is asked).
    pub fn to_value(&self, request: Option<&ModelRequest>, now_millis: f64) -> JsValue {
        let (read, modified) = self.file_lists();
        let lists_text: JsString = format_file_operations(&read, &modified);
        object([
            ("contextWindow", Some(JsValue::Number(self.budget.window()))),
            (
                "reserveTokens",
                Some(JsValue::Number(self.budget.reserve_tokens)),
            ),
            (
                "tokenBudget",
                Some(JsValue::Number(self.budget.token_budget())),
            ),
            ("messages", Some(JsValue::Array(self.messages.clone()))),
            ("totalTokens", Some(JsValue::Number(self.total_tokens))),
            ("fileOps", Some(self.file_ops.to_value())),
            ("readFiles", Some(JsValue::Array(read))),
            ("modifiedFiles", Some(JsValue::Array(modified))),
            ("fileListsText", Some(JsValue::String(lists_text))),
            (
                "request",
                Some(request.map_or(JsValue::Null, |r| r.to_value(now_millis))),
            ),
        ])
    }
}
