//! The context usage, and compaction: `prepareCompaction`, and `compact` (prepare, ask the
//! `session_before_compact` hook with the session not held, write the hook's compaction or the
//! one made from the caller's summaries).

use crate::format::json::{JsObject, JsString, JsValue};
use crate::format::profile::Compaction;
use crate::format::write::NewEntry;
use crate::repo::SummarySettings;
use crate::store::compaction::{
    self, CompactionSettings, Detail, ModelOptions, Summaries, SummaryProblem,
};
use crate::store::{ErrorKind, Leaf, Session};

use super::context::{LeafChoice, leaf as chosen_leaf};
use super::error::OpError;
use super::hooks::{BeforeCompact, CompactReason, HookReply, Hooks};
use super::ports::{Hold, SessionAccess};
use super::scope::Scope;

/// The settings in force for `session`: the request's over pi's `settings.json` files (global,
/// then the project of the session's cwd), over pi's defaults.
pub(super) fn settings_in_force(
    scope: &Scope,
    session: &Session,
    request: SummarySettings,
) -> Result<SummarySettings, OpError> {
    let files = crate::repo::summary_settings(scope.repo.env(), session.profile(), &session.cwd())?;
    Ok(request.over(files))
}

/// pi's `getContextUsage()` and `shouldCompact()` at a leaf.
#[derive(Debug, Clone)]
pub(crate) struct ContextUsage {
    pub(crate) leaf: Leaf,
    pub(crate) settings: CompactionSettings,
    pub(crate) usage: compaction::UsageAtLeaf,
    pub(crate) context_window: Option<f64>,
    /// The window less the reserve: past it, pi compacts.
    pub(crate) threshold: Option<f64>,
    pub(crate) should_compact: Option<bool>,
    /// Tokens and percent of the window, as pi's footer shows them (a profile without
    /// `getContextUsage` has none).
    pub(crate) percent: Option<PercentUsage>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PercentUsage {
    /// Unknown after a compaction until an assistant reports usage.
    pub(crate) tokens: Option<f64>,
    pub(crate) context_window: f64,
    pub(crate) percent: Option<f64>,
}

/// The context usage at the chosen leaf, under `settings` over pi's files.
pub(crate) fn context_usage(
    scope: &Scope,
    session: &mut Session,
    choice: &LeafChoice,
    settings: SummarySettings,
    context_window: Option<f64>,
) -> Result<ContextUsage, OpError> {
    let leaf = chosen_leaf(session, choice)?;
    let settings = settings_in_force(scope, session, settings)?.compaction();
    let usage = session.context_usage(&leaf)?;
    let tokens = usage.estimate.tokens;
    let percent = context_window
        .filter(|&w| w > 0.0 && session.profile().rules().context_usage_percent)
        .map(|w| {
            let tokens = (!usage.unknown_after_compaction).then_some(tokens);
            PercentUsage {
                tokens,
                context_window: w,
                percent: tokens.map(|t| t / w * 100.0),
            }
        });
    Ok(ContextUsage {
        leaf,
        settings,
        context_window,
        threshold: context_window.map(|w| w - settings.reserve_tokens),
        should_compact: context_window.map(|w| settings.should_compact(tokens, w)),
        percent,
        usage,
    })
}

#[derive(Debug, Clone, Default)]
pub(crate) struct PrepareCompactionInput {
    pub(crate) leaf: LeafChoice,
    pub(crate) settings: SummarySettings,
    pub(crate) custom_instructions: Option<String>,
    pub(crate) max_tokens: Option<f64>,
    pub(crate) reasoning: bool,
    /// The thinking level of the model call (default: the one in force at the leaf).
    pub(crate) thinking_level: Option<String>,
}

fn cannot_summarize(reason: String) -> OpError {
    OpError::store(
        ErrorKind::InvalidSession,
        format!("pi cannot summarize this session: {reason}"),
    )
}

/// `prepareCompaction`: where pi would cut, and the requests it would send its model.
pub(crate) fn prepare_compaction(
    scope: &Scope,
    session: &mut Session,
    input: PrepareCompactionInput,
) -> Result<JsValue, OpError> {
    let leaf = chosen_leaf(session, &input.leaf)?;
    let settings = settings_in_force(scope, session, input.settings)?.compaction();
    let preparation = session.prepare_compaction(&leaf, settings)?;
    let thinking_level = match input.thinking_level {
        Some(level) => Some(level),
        None => session.compaction_thinking_level(&leaf)?,
    };
    let model = ModelOptions {
        max_tokens: input.max_tokens,
        reasoning: input.reasoning,
        thinking_level,
    };
    let requests = preparation
        .requests(input.custom_instructions.as_deref(), &model)
        .map_err(|m| cannot_summarize(m.0))?;
    let now = session.ids().now_millis() as f64;
    Ok(preparation.plan_value(&requests, now, Detail::Full))
}

/// `pi-session compact-plan`'s document: the context usage at the leaf (with `shouldCompact`
/// when a window is given) and the plan, or pi's refusal (`{"refusal": kind, "message"}`).
pub(crate) fn plan_document(
    scope: &Scope,
    session: &mut Session,
    choice: &LeafChoice,
    settings: SummarySettings,
    context_window: Option<f64>,
    detail: Detail,
) -> Result<JsValue, OpError> {
    let usage = context_usage(scope, session, choice, settings, context_window)?;
    let mut doc = JsObject::new();
    let mut put = |k: &str, v: JsValue| {
        doc.insert(JsString::new(k), v);
    };
    put("profile", JsValue::from(session.profile().name()));
    put(
        "leafId",
        usage.leaf.id().map_or(JsValue::Null, JsValue::from),
    );
    put("estimate", usage.usage.to_value());
    if let (Some(window), Some(threshold), Some(should)) =
        (usage.context_window, usage.threshold, usage.should_compact)
    {
        put("contextWindow", JsValue::Number(window));
        put("threshold", JsValue::Number(threshold));
        put("shouldCompact", JsValue::Bool(should));
    }
    match session.prepare_compaction(&usage.leaf, usage.settings) {
        Ok(preparation) => {
            let model = ModelOptions {
                thinking_level: session.compaction_thinking_level(&usage.leaf)?,
                ..ModelOptions::default()
            };
            let requests = preparation
                .requests(None, &model)
                .map_err(|m| cannot_summarize(m.0))?;
            let now = session.ids().now_millis() as f64;
            if let JsValue::Object(plan) = preparation.plan_value(&requests, now, detail) {
                doc.extend(plan);
            }
        }
        Err(e)
            if matches!(
                e.kind,
                ErrorKind::AlreadyCompacted | ErrorKind::NothingToCompact
            ) =>
        {
            doc.insert(JsString::new("refusal"), JsValue::from(e.kind_name()));
            doc.insert(JsString::new("message"), JsValue::from(e.message.as_str()));
        }
        Err(e) => return Err(e.into()),
    }
    Ok(JsValue::Object(doc))
}

#[derive(Debug, Clone)]
pub(crate) struct CompactInput {
    /// The leaf the caller prepared at (`leaf_moved` when it is not the leaf any more).
    pub(crate) expected_leaf: Option<String>,
    pub(crate) settings: SummarySettings,
    pub(crate) custom_instructions: Option<String>,
    pub(crate) reason: CompactReason,
    /// The model's answers to the preparation's requests, as the front door read them (an
    /// answer it could not read is an error only when the answers are used).
    pub(crate) summaries: Result<Summaries, OpError>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Compacted {
    /// The hook cancelled: nothing written.
    Cancelled { leaf: Leaf },
    Written {
        /// The compaction entry, as stored.
        entry: JsValue,
        leaf: Leaf,
        /// The entry is the hook's.
        from_extension: bool,
    },
}

/// What differs by whose compaction code runs, beyond the store's preparation.
struct CompactRules {
    /// Custom instructions reach the hook for automatic compactions too (not manual only).
    instructions_on_auto: bool,
    /// The hook is told why the compaction runs.
    reason: bool,
    /// A hook's compaction may carry a `retainedTail`.
    retained_tail: bool,
}

fn compact_rules(kind: Compaction) -> CompactRules {
    match kind {
        // pi's AgentSession passes custom instructions to a manual compaction only.
        Compaction::PiCli082 | Compaction::Pi16 => CompactRules {
            instructions_on_auto: false,
            reason: true,
            retained_tail: false,
        },
        Compaction::Harness => CompactRules {
            instructions_on_auto: true,
            reason: false,
            retained_tail: true,
        },
    }
}

/// pi's `AgentSession.compact()`, step by step.
pub(crate) async fn compact<A: SessionAccess>(
    scope: &Scope,
    access: &A,
    hooks: &impl Hooks,
    input: CompactInput,
) -> Result<Compacted, A::Error> {
    let step_scope = scope.clone();
    let expected = input.expected_leaf.clone();
    let settings = input.settings;
    let (leaf, preparation, branch_entries, profile) = access
        .with(Hold::Read, move |session| {
            let settings = settings_in_force(&step_scope, session, settings)?.compaction();
            let leaf = session.leaf().clone();
            if let Some(expected) = &expected
                && leaf.id() != Some(expected.as_str())
            {
                return Err(OpError::store(
                    ErrorKind::LeafMoved,
                    format!(
                        "the leaf moved since the preparation (expected {expected}, now {})",
                        leaf.id().unwrap_or("before the first entry")
                    ),
                ));
            }
            let preparation = session.prepare_compaction(&leaf, settings)?;
            let branch = session.path_entries(&leaf)?;
            Ok((leaf, preparation, branch, session.profile()))
        })
        .await?;
    let rules = compact_rules(profile.rules().compaction);
    let ask = BeforeCompact {
        preparation: preparation.to_value(),
        branch_entries,
        custom_instructions: input
            .custom_instructions
            .clone()
            .filter(|_| rules.instructions_on_auto || input.reason == CompactReason::Manual),
        reason: rules.reason.then_some(input.reason),
    };
    let answer = match hooks.before_compact(ask).await {
        HookReply::Cancelled => return Err(OpError::Cancelled.into()),
        HookReply::Answer(answer) => answer.unwrap_or_default(),
    };
    if answer.cancel {
        return Ok(Compacted::Cancelled { leaf });
    }
    let from_extension = answer.compaction.is_some();
    let entry = match answer.compaction {
        Some(c) => NewEntry::Compaction {
            summary: c.summary,
            first_kept_entry_id: c.first_kept_entry_id.as_deref().map(JsValue::from),
            tokens_before: JsValue::Number(c.tokens_before),
            retained_tail: c.retained_tail.filter(|_| rules.retained_tail),
            details: c.details,
            usage: c.usage,
            from_hook: Some(JsValue::Bool(true)),
            system_message: None,
        },
        None => match preparation.entry_from_summaries(&input.summaries?) {
            Ok(entry) => entry,
            Err(SummaryProblem::Missing(missing)) => {
                let error = crate::store::StoreError::new(
                    ErrorKind::SummaryRequired,
                    format!(
                        "compaction needs the model's answer to the {} request(s) of the preparation",
                        missing.join(" and ")
                    ),
                );
                let missing = missing.iter().map(|m| m.to_string()).collect();
                return Err(OpError::SummaryRequired { error, missing }.into());
            }
            Err(SummaryProblem::BadUsage(message)) => {
                return Err(OpError::store(ErrorKind::InvalidArgument, message).into());
            }
            // pi refuses the answer and writes nothing.
            Err(SummaryProblem::Failed(message)) => {
                return Err(OpError::store(
                    ErrorKind::InvalidArgument,
                    format!("'summaries': {message}"),
                )
                .into());
            }
        },
    };
    let (entry, leaf_after) = access
        .with(Hold::Change, move |session| {
            // A serial method: nothing else moved the leaf, but say so if it did.
            if session.leaf() != &leaf {
                return Err(OpError::store(
                    ErrorKind::LeafMoved,
                    "the leaf moved during the compaction",
                ));
            }
            let entry = session.append_compaction(entry)?;
            Ok((entry, session.leaf().clone()))
        })
        .await?;
    Ok(Compacted::Written {
        entry,
        leaf: leaf_after,
        from_extension,
    })
}
