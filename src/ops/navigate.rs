//! `navigateTree` (spec section 8): prepare, ask the `session_before_tree` hook with the session
//! not held, decide which summary wins, apply. `prepareTree` is its first step alone.

use crate::format::json::JsValue;
use crate::repo::SummarySettings;
use crate::store::compaction::{BranchPlan, CompactionRules, ModelOptions, SummaryText, Verdict};
use crate::store::{
    self, ErrorKind, Leaf, NavigationOutcome, Session, SummaryInput, TreePreparation, TreeRequest,
};

use super::error::OpError;
use super::hooks::{BeforeTree, HookReply, Hooks};
use super::ports::{Hold, SessionAccess};
use super::scope::Scope;

/// The caller's own model's answer to the branch summary request, as the front door read it
/// (an answer it could not read is an error only when the answer is used).
pub(crate) type ModelSummary = Result<SummaryText, OpError>;

#[derive(Debug, Clone, Default)]
pub(crate) struct NavigateInput {
    pub(crate) tree: TreeRequest,
    /// The request's settings, over pi's settings files.
    pub(crate) settings: SummarySettings,
    pub(crate) context_window: Option<f64>,
    /// The summarizing model reasons (pi 1.6: the request then carries the thinking level).
    pub(crate) reasoning: bool,
    /// The level passed as `reasoning` (default: the level in force at the leaf).
    pub(crate) thinking_level: Option<String>,
    /// A finished summary (it wins over every other).
    pub(crate) summary: Option<SummaryInput>,
    pub(crate) model_summary: Option<ModelSummary>,
}

/// `prepareTree`: `None` when the target already is the leaf.
pub(crate) type TreePrepared = Option<BeforeTree>;

/// What a navigation did.
#[derive(Debug, Clone)]
pub(crate) enum Navigated {
    /// The target already was the leaf: nothing written.
    AlreadyThere {
        leaf: Leaf,
    },
    /// The hook cancelled: nothing written.
    Cancelled {
        leaf: Leaf,
    },
    Moved(NavigationOutcome),
}

/// The branch summary pi would make for this navigation (if any), and its document.
fn branch_summary(
    scope: &Scope,
    session: &mut Session,
    preparation: &TreePreparation,
    input: &NavigateInput,
) -> Result<Option<(BranchPlan, JsValue)>, OpError> {
    let settings = super::compact::settings_in_force(scope, session, input.settings)?;
    let budget = settings.branch_budget(input.context_window);
    let Some(plan) = session.branch_summary_plan(preparation, budget)? else {
        return Ok(None);
    };
    let tree = &input.tree;
    let leaf = session.leaf().clone();
    let model = ModelOptions {
        max_tokens: None,
        reasoning: input.reasoning,
        thinking_level: match &input.thinking_level {
            Some(level) => Some(level.clone()),
            None => session.compaction_thinking_level(&leaf)?,
        },
    };
    let request = plan
        .request_for(
            tree.custom_instructions.as_deref(),
            tree.replace_instructions,
            &model,
        )
        .map_err(|m| {
            OpError::store(
                ErrorKind::InvalidSession,
                format!("pi cannot summarize this branch: {}", m.0),
            )
        })?;
    let now = session.ids().now_millis() as f64;
    let doc = plan.to_value(request.as_ref(), now);
    Ok(Some((plan, doc)))
}

/// `prepareTree`: what a navigation would leave behind, and the summary pi would make of it.
pub(crate) fn prepare_tree(
    scope: &Scope,
    session: &mut Session,
    input: &NavigateInput,
) -> Result<TreePrepared, OpError> {
    let Some(preparation) = session.prepare_tree(&input.tree)? else {
        return Ok(None);
    };
    Ok(Some(BeforeTree {
        preparation: session.preparation_value(&preparation)?,
        branch_summary: branch_summary(scope, session, &preparation, input)?.map(|(_, doc)| doc),
    }))
}

/// The summary offered to [`store::decide`] beside the hook's, or pi's summarizer aborted.
#[allow(clippy::large_enum_variant)] // made once per navigation, never stored
enum Supplied {
    Summary(Option<SummaryInput>),
    /// pi's navigateTree: `{cancelled: true, aborted: true}`, nothing written.
    Aborted,
}

/// Which summary a navigation writes when the hook supplied none: the request's finished one,
/// else pi's summarizer ("No content to summarize" without a model, else the model's answer,
/// which the profile's pi may refuse or take as an abort). A plan pi's summarizer could not
/// make is an error only here, when its summary is needed.
fn supplied_summary(
    input: &NavigateInput,
    plan: Result<Option<BranchPlan>, OpError>,
    hook_summary: bool,
    profile: crate::format::profile::Profile,
) -> Result<Supplied, OpError> {
    if let Some(ready) = &input.summary {
        return Ok(Supplied::Summary(Some(ready.clone())));
    }
    if hook_summary {
        return Ok(Supplied::Summary(None));
    }
    let plan = match plan? {
        Some(plan) if plan.no_content() => {
            return Ok(Supplied::Summary(Some(store::model_summary(
                &plan, "", None,
            ))));
        }
        Some(plan) => plan,
        None => return Ok(Supplied::Summary(None)),
    };
    let Some(answer) = &input.model_summary else {
        return Ok(Supplied::Summary(None));
    };
    let answer = answer.clone()?;
    match answer.verdict(CompactionRules::of(profile), "branchSummary") {
        Verdict::Accept => {}
        Verdict::Aborted => return Ok(Supplied::Aborted),
        Verdict::Failed(message) => {
            return Err(OpError::store(
                ErrorKind::InvalidArgument,
                format!("'modelSummary': {message}"),
            ));
        }
    }
    Ok(Supplied::Summary(Some(store::model_summary(
        &plan,
        &answer.text,
        answer.usage,
    ))))
}

/// `navigateTree`, step by step.
pub(crate) async fn navigate<A: SessionAccess>(
    scope: &Scope,
    access: &A,
    hooks: &impl Hooks,
    input: NavigateInput,
) -> Result<Navigated, A::Error> {
    let step_scope = scope.clone();
    let step_input = input.clone();
    let prepared = access
        .with(Hold::Read, move |session| {
            let Some(preparation) = session.prepare_tree(&step_input.tree)? else {
                return Ok(Err(session.leaf().clone()));
            };
            let payload = session.preparation_value(&preparation)?;
            let plan = branch_summary(&step_scope, session, &preparation, &step_input);
            Ok(Ok((preparation, payload, plan, session.profile())))
        })
        .await?;
    let (preparation, payload, plan, profile) = match prepared {
        Ok(prepared) => prepared,
        Err(leaf) => return Ok(Navigated::AlreadyThere { leaf }),
    };
    let (plan, plan_doc) = match plan {
        Ok(Some((plan, doc))) => (Ok(Some(plan)), Some(doc)),
        Ok(None) => (Ok(None), None),
        Err(e) => (Err(e), None),
    };
    let ask = BeforeTree {
        preparation: payload,
        branch_summary: plan_doc,
    };
    let answer = match hooks.before_tree(ask).await {
        HookReply::Cancelled => return Err(OpError::Cancelled.into()),
        HookReply::Answer(answer) => answer,
    };
    let hook_summary = answer.as_ref().is_some_and(|a| a.summary.is_some());
    let supplied = match supplied_summary(&input, plan, hook_summary, profile)? {
        Supplied::Summary(supplied) => supplied,
        Supplied::Aborted => {
            let leaf = access
                .with(Hold::Read, |session| Ok(session.leaf().clone()))
                .await?;
            return Ok(Navigated::Cancelled { leaf });
        }
    };
    let decision = store::decide(profile, &preparation, answer, supplied).map_err(OpError::from)?;
    let applied = access
        .with(Hold::Change, move |session| {
            Ok((
                session.apply_navigation(&preparation, &decision)?,
                session.leaf().clone(),
            ))
        })
        .await?;
    Ok(match applied {
        (Some(outcome), _) => Navigated::Moved(outcome),
        (None, leaf) => Navigated::Cancelled { leaf },
    })
}
