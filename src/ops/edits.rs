//! Changes of one open session that need no client: append, move the leaf, summarize a branch.
//! Each is its request's last change, so on a durable session it commits in a group unless the
//! configuration says otherwise.

use crate::format::json::JsValue;
use crate::format::write::NewEntry;
use crate::store::{Leaf, SummaryInput};

use super::config::Config;
use super::ports::{Hold, SessionAccess};

/// The turn of a request's last change: shared syncs unless turned off.
fn last_change(config: &Config) -> Hold {
    match config.group_commit {
        true => Hold::Commit,
        false => Hold::Change,
    }
}

/// What a change did: the entry it wrote, if any, and the leaf after it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Changed {
    pub(crate) entry_id: Option<String>,
    pub(crate) leaf: Leaf,
}

pub(crate) async fn append<A: SessionAccess>(
    access: &A,
    config: &Config,
    entry: NewEntry,
) -> Result<Changed, A::Error> {
    access
        .with(last_change(config), move |session| {
            let id = session.append(entry)?;
            Ok(Changed {
                entry_id: Some(id),
                leaf: session.leaf().clone(),
            })
        })
        .await
}

/// Moves the leaf to `entry_id`.
pub(crate) async fn branch<A: SessionAccess>(
    access: &A,
    config: &Config,
    entry_id: String,
) -> Result<Changed, A::Error> {
    access
        .with(last_change(config), move |session| {
            session.branch(&entry_id)?;
            Ok(Changed {
                entry_id: None,
                leaf: session.leaf().clone(),
            })
        })
        .await
}

/// Moves the leaf before the first entry.
pub(crate) async fn reset_leaf<A: SessionAccess>(
    access: &A,
    config: &Config,
) -> Result<Changed, A::Error> {
    access
        .with(last_change(config), move |session| {
            session.reset_leaf()?;
            Ok(Changed {
                entry_id: None,
                leaf: session.leaf().clone(),
            })
        })
        .await
}

/// pi's `branchWithSummary`: the leaf moved to `from` with a branch summary entry there.
pub(crate) async fn branch_with_summary<A: SessionAccess>(
    access: &A,
    config: &Config,
    from: Option<String>,
    summary: SummaryInput,
    from_hook: Option<bool>,
) -> Result<Changed, A::Error> {
    access
        .with(last_change(config), move |session| {
            let id = session.branch_with_summary(
                from.as_deref(),
                summary.summary,
                summary.details,
                from_hook.map(JsValue::Bool),
                summary.usage,
            )?;
            Ok(Changed {
                entry_id: Some(id),
                leaf: session.leaf().clone(),
            })
        })
        .await
}
