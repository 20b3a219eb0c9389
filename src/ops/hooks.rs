//! The hooks an operation asks the client (`session_before_tree`, `session_before_fork`,
//! `session_before_compact`): each question, each answer, and the port ([`Hooks`]) a front door
//! answers them through.

use std::future::Future;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::format::json::JsValue;
use crate::store::{ForkPosition, TreeHookAnswer};

/// The `session_before_tree` hook's question (also `prepareTree`'s answer).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BeforeTree {
    /// pi's `preparation`.
    pub(crate) preparation: JsValue,
    /// The branch summary pi would make, and its request, when it would make one.
    pub(crate) branch_summary: Option<JsValue>,
}

/// The `session_before_fork` hook's question.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BeforeFork {
    pub(crate) entry_id: String,
    pub(crate) position: ForkPosition,
}

/// Why a compaction runs (pi's `reason`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) enum CompactReason {
    #[default]
    Manual,
    Threshold,
    Overflow,
}

/// The `session_before_compact` hook's question.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BeforeCompact {
    pub(crate) preparation: JsValue,
    pub(crate) branch_entries: Vec<JsValue>,
    pub(crate) custom_instructions: Option<String>,
    pub(crate) reason: Option<CompactReason>,
}

/// The hook's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CompactHookAnswer {
    pub(crate) cancel: bool,
    pub(crate) compaction: Option<HookCompaction>,
}

/// A compaction an extension wrote.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HookCompaction {
    pub(crate) summary: JsValue,
    pub(crate) first_kept_entry_id: Option<String>,
    pub(crate) tokens_before: f64,
    pub(crate) details: Option<JsValue>,
    pub(crate) usage: Option<JsValue>,
    pub(crate) retained_tail: Option<JsValue>,
}

/// What the client said to a hook.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum HookReply<T> {
    /// An answer, or none (no answer in time, an error, a client that does not take the hook):
    /// pi goes on as when no extension handles the event.
    Answer(Option<T>),
    /// The request waiting for the hook was cancelled: the operation stops, changing nothing.
    Cancelled,
}

/// How the client answers the hooks an operation asks.
pub(crate) trait Hooks: Sync {
    fn before_tree(
        &self,
        ask: BeforeTree,
    ) -> impl Future<Output = HookReply<TreeHookAnswer>> + Send;
    fn before_fork(&self, ask: BeforeFork) -> impl Future<Output = HookReply<bool>> + Send;
    fn before_compact(
        &self,
        ask: BeforeCompact,
    ) -> impl Future<Output = HookReply<CompactHookAnswer>> + Send;
}

/// No client: every hook goes unanswered (the command line, tests).
impl Hooks for () {
    async fn before_tree(&self, _: BeforeTree) -> HookReply<TreeHookAnswer> {
        HookReply::Answer(None)
    }
    async fn before_fork(&self, _: BeforeFork) -> HookReply<bool> {
        HookReply::Answer(None)
    }
    async fn before_compact(&self, _: BeforeCompact) -> HookReply<CompactHookAnswer> {
        HookReply::Answer(None)
    }
}
