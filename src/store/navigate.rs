//! Tree navigation (`/tree`), as pi's `navigateTree` does it (spec section 8), split in three
//! so that a front-end or an extension can take part between the steps: [`Session::prepare_tree`]
//! (what would be abandoned), [`decide`] (what the `session_before_tree` hook and the caller
//! supplied), and [`Session::apply_navigation`] (the move, the summary and the label).

use crate::format::entry::{Kind, Ref};
use crate::format::json::{JsObject, JsString, JsValue};
use crate::format::profile::Profile;
use crate::format::write::NewEntry;

use super::compaction::{BranchBudget, BranchPlan};
use super::error::{ErrorKind, StoreError, StoreResult};
use super::index::Leaf;
use super::session::Session;

/// What the caller asks for.
#[derive(Debug, Clone, Default)]
pub struct TreeRequest {
    /// The entry to move to.
    pub target_id: String,
    /// Whether to summarize the branch left behind.
    pub summarize: bool,
    /// Instructions for the summarizer.
    pub custom_instructions: Option<String>,
    /// Whether the instructions replace pi's prompt.
    pub replace_instructions: Option<bool>,
    /// A label for the target entry.
    pub label: Option<String>,
}

/// pi's `preparation`: what a navigation would leave behind.
#[derive(Debug, Clone)]
pub struct TreePreparation {
    /// The entry to move to.
    pub target_id: String,
    /// The leaf before the move.
    pub old_leaf: Leaf,
    /// The newest entry both branches share, if any.
    pub common_ancestor_id: Option<String>,
    /// Positions of the abandoned entries, oldest first.
    pub entries_to_summarize: Vec<u32>,
    /// Whether the caller asked for a summary.
    pub user_wants_summary: bool,
    /// Instructions for the summarizer.
    pub custom_instructions: Option<String>,
    /// Whether the instructions replace pi's prompt.
    pub replace_instructions: Option<bool>,
    /// A label for the target entry.
    pub label: Option<String>,
}

/// A branch summary someone wrote (the hook, or the caller with its own model).
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryInput {
    /// The summary text (or blocks).
    pub summary: JsValue,
    /// Extra details.
    pub details: Option<JsValue>,
    /// The summarizing model's usage.
    pub usage: Option<JsValue>,
}

/// The `session_before_tree` hook's answer.
#[derive(Debug, Clone, Default)]
pub struct TreeHookAnswer {
    /// Cancel the navigation.
    pub cancel: bool,
    /// A summary the hook wrote.
    pub summary: Option<SummaryInput>,
    /// Instructions replacing the caller's.
    pub custom_instructions: Option<String>,
    /// Whether the instructions replace pi's prompt.
    pub replace_instructions: Option<bool>,
    /// `Some("")` suppresses the label, as pi's `label: ""` does.
    pub label: Option<String>,
}

/// What to do after the hook.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // made once per navigation, never stored
pub enum TreeDecision {
    /// Nothing moves.
    Cancel,
    /// Move, writing the summary if any.
    Proceed {
        /// The summary to write.
        summary: Option<SummaryInput>,
        /// Whether the summary came from the hook (pi's `fromExtension` / `fromHook`).
        from_extension: bool,
        /// The label to write on the target.
        label: Option<String>,
    },
}

/// What a navigation did.
#[derive(Debug, Clone)]
pub struct NavigationOutcome {
    /// The text pi puts back in the editor (the target user message's), if any.
    pub editor_text: Option<String>,
    /// The branch summary entry written, as stored.
    pub summary_entry: Option<JsValue>,
    /// The leaf before the move.
    pub old_leaf: Leaf,
    /// The leaf after the move (and after any label append, which moves it again).
    pub new_leaf: Leaf,
    /// pi-cli: whether a written summary came from the hook (absent without a summary);
    /// harness: always present.
    pub from_extension: Option<bool>,
}

impl Session {
    /// Steps 1-5 of `navigateTree`: `None` when the target already is the leaf (nothing to do).
    pub fn prepare_tree(&mut self, request: &TreeRequest) -> StoreResult<Option<TreePreparation>> {
        let old_leaf = self.leaf.clone();
        if old_leaf.id() == Some(request.target_id.as_str()) {
            return Ok(None);
        }
        let Some(target) = self.position(&request.target_id) else {
            return Err(StoreError::entry_not_found(&request.target_id));
        };
        let (entries, common) = self.abandoned_entries(&old_leaf, target)?;
        Ok(Some(TreePreparation {
            target_id: request.target_id.clone(),
            old_leaf,
            common_ancestor_id: common,
            entries_to_summarize: entries,
            user_wants_summary: request.summarize,
            custom_instructions: request.custom_instructions.clone(),
            replace_instructions: request.replace_instructions,
            label: request.label.clone(),
        }))
    }

    /// `collectEntriesForBranchSummary`: the entries from the old leaf back to the deepest
    /// entry shared with the target's path (exclusive), oldest first.
    fn abandoned_entries(
        &mut self,
        old_leaf: &Leaf,
        target: u32,
    ) -> StoreResult<(Vec<u32>, Option<String>)> {
        let Some(old_id) = old_leaf.id().filter(|id| !id.is_empty()) else {
            return Ok((Vec::new(), None));
        };
        let checkpoints = self.profile().rules().tree.checkpoint_paths;
        let (old_path, target_path) = if checkpoints {
            (
                self.checkpoint_path(old_leaf)?,
                self.checkpoint_path(&Leaf::Id(
                    self.record(target).id().unwrap_or_default().into(),
                ))?,
            )
        } else {
            (self.branch_path(old_id), self.walk_from(Some(target)))
        };
        self.note_cycle(&old_path);
        let on_old: std::collections::HashSet<u32> = old_path.positions.iter().copied().collect();
        let common = target_path
            .positions
            .iter()
            .rev()
            .find(|p| on_old.contains(p))
            .copied();
        let common_id = common.and_then(|p| self.record(p).id().map(str::to_string));
        let mut entries = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut current = self.position(old_id);
        if current.is_none() && checkpoints {
            return Err(StoreError::new(
                ErrorKind::InvalidSession,
                format!("Entry {old_id} not found"),
            ));
        }
        while let Some(position) = current {
            if Some(position) == common || !seen.insert(position) {
                break;
            }
            entries.push(position);
            current = match self.record(position).parent() {
                Ref::Id(parent) if !parent.is_empty() => {
                    let found = self.position(parent);
                    if found.is_none() && checkpoints {
                        return Err(StoreError::new(
                            ErrorKind::InvalidSession,
                            format!("Entry {parent} not found"),
                        ));
                    }
                    found
                }
                _ => None,
            };
        }
        entries.reverse();
        Ok((entries, common_id))
    }

    /// The preparation as the `session_before_tree` hook receives it (pi's field names; the
    /// abandoned entries as stored).
    pub(crate) fn preparation_value(&self, preparation: &TreePreparation) -> StoreResult<JsValue> {
        let mut map = JsObject::new();
        let mut put = |k: &str, v: JsValue| {
            map.insert(JsString::new(k), v);
        };
        put("targetId", JsValue::from(preparation.target_id.as_str()));
        put("oldLeafId", leaf_value(&preparation.old_leaf));
        put(
            "commonAncestorId",
            preparation
                .common_ancestor_id
                .as_deref()
                .map_or(JsValue::Null, JsValue::from),
        );
        let entries = preparation
            .entries_to_summarize
            .iter()
            .map(|&p| self.entry_value(p))
            .collect::<StoreResult<Vec<_>>>()?;
        put("entriesToSummarize", JsValue::Array(entries));
        put(
            "userWantsSummary",
            JsValue::Bool(preparation.user_wants_summary),
        );
        if let Some(text) = &preparation.custom_instructions {
            put("customInstructions", JsValue::from(text.as_str()));
        }
        if let Some(replace) = preparation.replace_instructions {
            put("replaceInstructions", JsValue::Bool(replace));
        }
        if let Some(label) = &preparation.label {
            put("label", JsValue::from(label.as_str()));
        }
        Ok(JsValue::Object(map))
    }

    /// Steps 8-10: moves the leaf, writes the summary and the label as the profile's pi does.
    pub fn apply_navigation(
        &mut self,
        preparation: &TreePreparation,
        decision: &TreeDecision,
    ) -> StoreResult<Option<NavigationOutcome>> {
        let TreeDecision::Proceed {
            summary,
            from_extension,
            label,
        } = decision
        else {
            return Ok(None);
        };
        let Some(target) = self.position(&preparation.target_id) else {
            return Err(StoreError::entry_not_found(&preparation.target_id));
        };
        let target_value = self.entry_value(target)?;
        let (new_leaf, editor_text) = landing(self, target, &target_value);
        let profile = self.profile();
        let summary_text = summary.as_ref().filter(|s| s.summary.is_truthy());
        let mut summary_entry = None;
        let new_leaf_id = match &new_leaf {
            Ref::Null => None,
            Ref::Id(id) => Some(id.to_string()),
            Ref::Missing | Ref::Invalid => {
                return Err(StoreError::new(
                    ErrorKind::EntryNotFound,
                    "Entry undefined not found",
                ));
            }
        };
        if let Some(summary) = summary_text {
            let id = self.branch_with_summary(
                new_leaf_id.as_deref(),
                summary.summary.clone(),
                summary.details.clone(),
                Some(JsValue::Bool(*from_extension)),
                summary.usage.clone(),
            )?;
            summary_entry = Some(self.entry_value(self.position(&id).unwrap_or_default())?);
            if profile.is_session_manager()
                && let Some(label) = label.as_ref().filter(|l| !l.is_empty())
            {
                self.append(NewEntry::Label {
                    target_id: id,
                    label: Some(JsValue::from(label.as_str())),
                })?;
            }
        } else {
            match &new_leaf_id {
                None => self.reset_leaf()?,
                Some(id) => self.branch(id)?,
            }
            if profile.is_session_manager()
                && let Some(label) = label.as_ref().filter(|l| !l.is_empty())
            {
                let entry = NewEntry::Label {
                    target_id: preparation.target_id.clone(),
                    label: Some(JsValue::from(label.as_str())),
                };
                self.append(entry)?;
            }
        }
        let from_extension = if profile.rules().tree.always_reports_from_extension {
            Some(summary_text.is_some() && *from_extension)
        } else {
            summary_text.map(|_| *from_extension)
        };
        Ok(Some(NavigationOutcome {
            editor_text,
            summary_entry,
            old_leaf: preparation.old_leaf.clone(),
            new_leaf: self.leaf.clone(),
            from_extension,
        }))
    }
}

/// Merges the hook's answer and the caller's ready summary as the profile's pi does (step 6-7).
/// A summary that is wanted (something is abandoned) but that nobody supplied is an error: this
/// program has no model to write one.
pub fn decide(
    profile: Profile,
    preparation: &TreePreparation,
    hook: Option<TreeHookAnswer>,
    supplied: Option<SummaryInput>,
) -> StoreResult<TreeDecision> {
    let mut label = preparation.label.clone();
    let mut hook_summary = None;
    if let Some(answer) = hook {
        if answer.cancel {
            return Ok(TreeDecision::Cancel);
        }
        // pi-cli takes a hook summary only when a summary was asked for; the harness always.
        if preparation.user_wants_summary || profile.rules().tree.hook_summary_unasked {
            hook_summary = answer.summary;
        }
        if answer.label.is_some() {
            label = answer.label;
        }
    }
    if let Some(summary) = hook_summary {
        return Ok(TreeDecision::Proceed {
            summary: Some(summary),
            from_extension: true,
            label,
        });
    }
    if preparation.user_wants_summary && !preparation.entries_to_summarize.is_empty() {
        let Some(summary) = supplied else {
            return Err(StoreError::new(
                ErrorKind::SummaryRequired,
                "a branch summary was asked for, but neither the request nor a session_before_tree hook supplied one",
            ));
        };
        return Ok(TreeDecision::Proceed {
            summary: Some(summary),
            from_extension: false,
            label,
        });
    }
    Ok(TreeDecision::Proceed {
        summary: None,
        from_extension: false,
        label,
    })
}

/// Where the leaf lands for a target (step 8), and the text handed back to the editor.
fn landing(session: &Session, target: u32, value: &JsValue) -> (Ref, Option<String>) {
    let record = session.record(target);
    let content = match record.kind() {
        Kind::Message if session.is_user_message(target) => {
            value.get("message").and_then(|m| m.get("content"))
        }
        Kind::CustomMessage => value.get("content"),
        _ => {
            return (
                record.id().map_or(Ref::Missing, |id| Ref::Id(id.into())),
                None,
            );
        }
    };
    (
        record.parent().to_owned(),
        Some(content.map(content_text).unwrap_or_default()),
    )
}

/// pi-ai's `contentText(content, "")`: a string as is, else the text blocks joined.
pub fn content_text(content: &JsValue) -> String {
    match content {
        JsValue::String(s) => s.to_string_lossy().into_owned(),
        // `blocks.filter(type === "text").map(b => b.text).join("")`: join writes null and
        // undefined as nothing and other values as `String(value)` does.
        JsValue::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(JsValue::as_str).as_deref() == Some("text"))
            .map(|b| match b.get("text") {
                None | Some(JsValue::Null) => String::new(),
                Some(text) => text.to_js_string(),
            })
            .collect(),
        // pi throws here (reading `.filter` of null); an empty text is the lenient answer.
        _ => String::new(),
    }
}

fn leaf_value(leaf: &Leaf) -> JsValue {
    match leaf {
        Leaf::Id(id) => JsValue::from(&**id),
        Leaf::Null | Leaf::Undefined => JsValue::Null,
    }
}

impl Session {
    /// What pi's `generateBranchSummary` would be given for this navigation (`None` when it
    /// would not run: no summary wanted, or nothing abandoned).
    pub fn branch_summary_plan(
        &mut self,
        preparation: &TreePreparation,
        budget: BranchBudget,
    ) -> StoreResult<Option<BranchPlan>> {
        let profile = self.profile();
        if !preparation.user_wants_summary || preparation.entries_to_summarize.is_empty() {
            return Ok(None);
        }
        // The harness passes no reserve, so pi-agent-core's default holds there.
        let budget = if profile.rules().tree.summary_default_reserve {
            BranchBudget {
                reserve_tokens: crate::store::compaction::DEFAULT_RESERVE_TOKENS,
                ..budget
            }
        } else {
            budget
        };
        let entries = preparation
            .entries_to_summarize
            .iter()
            .map(|&p| self.entry_value(p))
            .collect::<StoreResult<Vec<_>>>()?;
        crate::store::compaction::prepare_branch_entries(profile, &entries, budget)
            .map(Some)
            .map_err(|m| {
                StoreError::new(
                    ErrorKind::InvalidSession,
                    format!("pi cannot summarize this branch: {}", m.0),
                )
            })
    }
}

/// The branch summary pi writes from its summarizing model's text (or, when the abandoned
/// entries hold no message, without a model: "No content to summarize").
pub fn model_summary(plan: &BranchPlan, text: &str, usage: Option<JsValue>) -> SummaryInput {
    let (summary, details) = plan.written_summary(text);
    SummaryInput {
        summary,
        details: Some(details),
        usage: if plan.no_content() { None } else { usage },
    }
}
