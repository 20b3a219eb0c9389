//! The `session/*` methods: wire types in, store calls, wire types out. No session logic lives
//! here; files are opened on blocking threads so large sessions never stall the reader.

use std::path::Path;

use crate::format::json::{JsString, JsValue};
use crate::format::profile::Profile;
use crate::repo::search::SearchQuery;
use crate::repo::{ListSelection, PathEnv, Place, SessionRequest, SummarySettings, page};
use crate::rpc::{HookOutcome, RawAnswer, RequestContext, RpcError};
use crate::store::{
    self, ErrorKind, Leaf, MessageFormat, Session, SessionOptions, StoreError, SummaryInput,
    TreeFilter, TreeHookAnswer, TreeRequest, TreeWindow,
};
use serde_json::value::RawValue;

use super::answers;

use super::Sidecar;
use super::entry::new_entry;
use super::registry::lock;
use super::wire::*;

type Ctx = RequestContext<Sidecar>;

fn leaf_id(leaf: &Leaf) -> Option<String> {
    leaf.id().map(str::to_string)
}

fn store_error(kind: ErrorKind, message: impl Into<String>) -> RpcError {
    StoreError::new(kind, message).into()
}

/// Runs blocking store work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, RpcError> + Send + 'static,
) -> Result<T, RpcError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| RpcError::internal(format!("store task failed: {e}")))?
}

fn opened(id: String, session: &Session) -> OpenedSession {
    OpenedSession {
        session_id: id,
        path: session.path().map(|p| p.to_string_lossy().into_owned()),
        profile: session.profile(),
        header: session.reported_header().to_serde(),
        leaf_id: leaf_id(session.leaf()),
        written: session.is_written(),
        warnings: session.warnings().to_vec(),
    }
}

fn register(ctx: &Ctx, session: Session) -> Result<OpenedSession, RpcError> {
    let opened = opened(session.session_id().into_owned(), &session);
    ctx.state().registry.insert(session)?;
    Ok(opened)
}

pub async fn create(ctx: Ctx, p: CreateParams) -> Result<OpenedSession, RpcError> {
    let profile = p.profile.unwrap_or(ctx.state().settings().default_profile);
    let options = SessionOptions {
        durable: p.durable,
        ..ctx.state().registry.options(profile)
    };
    let env = ctx.state().registry.repo()?.env().clone();
    let session = blocking(move || {
        let place = match (p.in_memory, p.session_dir.as_deref()) {
            (true, _) => Place::Memory,
            (false, Some(dir)) => Place::Dir(dir),
            (false, None) => Place::Default,
        };
        let request = SessionRequest {
            profile,
            cwd: &p.cwd,
            id: p.id.as_deref(),
            place,
            parent_session: p.parent_session.clone(),
            metadata: p.metadata.as_ref().map(JsValue::from_serde),
        };
        let new = crate::repo::new_session(&env, request, &options.ids)?;
        if options.durable
            && let Some(dir) = new.path.as_deref().and_then(Path::parent)
        {
            // The directory may have just been made: its name must survive a crash too.
            store::fsync_parent(dir)?;
        }
        Ok(Session::create(new, options)?)
    })
    .await?;
    register(&ctx, session)
}

pub async fn open(ctx: Ctx, p: OpenParams) -> Result<OpenedSession, RpcError> {
    let profile = p.profile.unwrap_or(ctx.state().settings().default_profile);
    let options = SessionOptions {
        durable: p.durable,
        ..ctx.state().registry.options(profile)
    };
    let env = ctx.state().registry.repo()?.env();
    let path = crate::repo::session_path(env, &p.path)?;
    if ctx.state().registry.is_open_at(&path) {
        return Err(store_error(
            ErrorKind::Locked,
            format!("{}: this session is already open here", path.display()),
        ));
    }
    let cwd = crate::repo::cwd_for_open(env, p.cwd.as_deref())?;
    let session =
        blocking(move || Session::open(&path, &cwd, options).map_err(RpcError::from)).await?;
    register(&ctx, session)
}

pub async fn close(ctx: Ctx, p: SessionRef) -> Result<Empty, RpcError> {
    ctx.state().registry.get(&p.session_id)?;
    let closed = ctx.state().registry.remove(&p.session_id);
    // Freeing a large index and handing the memory back to the system takes time: off the loop.
    blocking(move || {
        drop(closed);
        crate::rpc::release_freed_memory();
        Ok(())
    })
    .await?;
    Ok(Empty {})
}

pub async fn append(ctx: Ctx, p: AppendParams) -> Result<AppendResult, RpcError> {
    let entry = new_entry(&p.entry)?;
    let id = p.session_id.clone();
    change_then_answer(&ctx, &id, move |session| {
        let entry_id = session.append(entry)?;
        Ok(AppendResult {
            entry_id,
            leaf_id: leaf_id(session.leaf()),
        })
    })
    .await
}

pub async fn branch(ctx: Ctx, p: BranchParams) -> Result<LeafResult, RpcError> {
    let id = p.session_id.clone();
    change_then_answer(&ctx, &id, move |session| {
        session.branch(&p.entry_id)?;
        Ok(LeafResult {
            leaf_id: leaf_id(session.leaf()),
            entry_id: None,
        })
    })
    .await
}

pub async fn reset_leaf(ctx: Ctx, p: SessionRef) -> Result<LeafResult, RpcError> {
    let id = p.session_id.clone();
    change_then_answer(&ctx, &id, move |session| {
        session.reset_leaf()?;
        Ok(LeafResult {
            leaf_id: leaf_id(session.leaf()),
            entry_id: None,
        })
    })
    .await
}

pub async fn branch_with_summary(
    ctx: Ctx,
    p: BranchWithSummaryParams,
) -> Result<LeafResult, RpcError> {
    let id = p.session_id.clone();
    change_then_answer(&ctx, &id, move |session| {
        let id = session.branch_with_summary(
            p.target_id.as_deref(),
            JsValue::from_serde(&p.summary),
            p.details.as_ref().map(JsValue::from_serde),
            p.from_hook.map(JsValue::Bool),
            p.usage.as_ref().map(JsValue::from_serde),
        )?;
        Ok(LeafResult {
            leaf_id: leaf_id(session.leaf()),
            entry_id: Some(id),
        })
    })
    .await
}

fn tree_request(p: &TreeParams) -> TreeRequest {
    TreeRequest {
        target_id: p.target_id.clone(),
        summarize: p.summarize,
        custom_instructions: p.custom_instructions.clone(),
        replace_instructions: p.replace_instructions,
        label: p.label.clone(),
    }
}

fn summary_input(s: &SummaryParam) -> SummaryInput {
    SummaryInput {
        summary: JsValue::String(JsString::from_wire(&s.summary)),
        details: s.details.as_ref().map(JsValue::from_serde),
        usage: s.usage.as_ref().map(JsValue::from_serde),
    }
}

/// The branch summary pi would make for this navigation (if any), and its document.
fn branch_summary(
    env: &PathEnv,
    session: &mut Session,
    preparation: &store::TreePreparation,
    p: &TreeParams,
) -> Result<Option<(store::compaction::BranchPlan, serde_json::Value)>, RpcError> {
    let settings = settings_in_force(env, session, p.settings.as_ref())?;
    let budget = settings.branch_budget(p.context_window);
    let Some(plan) = session.branch_summary_plan(preparation, budget)? else {
        return Ok(None);
    };
    let leaf = session.leaf().clone();
    let model = store::compaction::ModelOptions {
        max_tokens: None,
        reasoning: p.model.as_ref().is_some_and(|m| m.reasoning),
        thinking_level: match &p.thinking_level {
            Some(level) => Some(level.clone()),
            None => session.compaction_thinking_level(&leaf)?,
        },
    };
    let request = plan
        .request_for(
            p.custom_instructions.as_deref(),
            p.replace_instructions,
            &model,
        )
        .map_err(|m| {
            store_error(
                ErrorKind::InvalidSession,
                format!("pi cannot summarize this branch: {}", m.0),
            )
        })?;
    let now = session.ids().now_millis() as f64;
    let doc = plan.to_value(request.as_ref(), now).to_serde();
    Ok(Some((plan, doc)))
}

pub async fn prepare_tree(ctx: Ctx, p: TreeParams) -> Result<PrepareTreeResult, RpcError> {
    let id = p.session_id.clone();
    let env = ctx.state().registry.repo()?.env().clone();
    with_session(&ctx, &id, move |session| {
        Ok(match session.prepare_tree(&tree_request(&p))? {
            None => PrepareTreeResult {
                no_op: true,
                preparation: None,
                branch_summary: None,
            },
            Some(preparation) => PrepareTreeResult {
                no_op: false,
                preparation: Some(session.preparation_value(&preparation)?.to_serde()),
                branch_summary: branch_summary(&env, session, &preparation, &p)?
                    .map(|(_, doc)| doc),
            },
        })
    })
    .await
}

/// `navigateTree`, step by step (spec section 8): prepare, ask the `session_before_tree` hook
/// (the session is not held while waiting), decide, apply, notify `session_tree`, answer.
pub async fn navigate_tree(ctx: Ctx, p: TreeParams) -> Result<NavigateResult, RpcError> {
    let request = tree_request(&p);
    let params = p.clone();
    let env = ctx.state().registry.repo()?.env().clone();
    let prepared = with_session(&ctx, &p.session_id, move |session| {
        Ok(match session.prepare_tree(&request)? {
            None => Err(leaf_id(session.leaf())),
            Some(preparation) => {
                let payload = session.preparation_value(&preparation)?.to_serde();
                // A branch pi's summarizer cannot read is refused only when its summary is
                // needed (no finished summary, and the hook has not supplied one).
                let plan = branch_summary(&env, session, &preparation, &params);
                Ok((preparation, payload, plan, session.profile()))
            }
        })
    })
    .await?;
    let (preparation, payload, plan, profile) = match prepared {
        Ok(prepared) => prepared,
        // Already at the target: nothing to do, nothing written.
        Err(leaf_id) => {
            return Ok(NavigateResult {
                cancelled: false,
                editor_text: None,
                summary_entry: None,
                leaf_id,
            });
        }
    };
    let (plan, plan_doc) = match plan {
        Ok(Some((plan, doc))) => (Ok(Some(plan)), Some(doc)),
        Ok(None) => (Ok(None), None),
        Err(e) => (Err(e), None),
    };
    let hook = BeforeTreeHook {
        session_id: p.session_id.clone(),
        preparation: payload,
        branch_summary: plan_doc,
    };
    let answer = match ctx.hook("session_before_tree", hook).await {
        HookOutcome::Cancelled => return Err(RpcError::request_cancelled()),
        outcome => outcome
            .into_answer()
            .and_then(|value| parse_answer::<BeforeTreeAnswer>("session_before_tree", value)),
    };
    let answer = answer.map(|a| TreeHookAnswer {
        cancel: a.cancel,
        summary: a.summary.as_ref().map(summary_input),
        custom_instructions: a.custom_instructions,
        replace_instructions: a.replace_instructions,
        label: a.label,
    });
    let hook_summary = answer.as_ref().is_some_and(|a| a.summary.is_some());
    let supplied = match p.summary.as_ref() {
        Some(ready) => Some(summary_input(ready)),
        // pi's summarizer: "No content to summarize" without a model, else the model's text.
        None if !hook_summary => match plan? {
            Some(plan) if plan.no_content() => Some(store::model_summary(&plan, "", None)),
            Some(plan) => match p.model_summary.as_ref() {
                None => None,
                Some(m) => {
                    let answer = summary_text(m, "modelSummary")?;
                    let rules = store::compaction::CompactionRules::of(profile);
                    match answer.verdict(rules, "branchSummary") {
                        store::compaction::Verdict::Accept => {}
                        // pi's navigateTree: `{cancelled: true, aborted: true}`, nothing written.
                        store::compaction::Verdict::Aborted => {
                            let leaf_id = with_session(&ctx, &p.session_id, |session| {
                                Ok(leaf_id(session.leaf()))
                            })
                            .await?;
                            return Ok(NavigateResult {
                                cancelled: true,
                                editor_text: None,
                                summary_entry: None,
                                leaf_id,
                            });
                        }
                        store::compaction::Verdict::Failed(message) => {
                            return Err(store_error(
                                ErrorKind::InvalidArgument,
                                format!("'modelSummary': {message}"),
                            ));
                        }
                    }
                    Some(store::model_summary(&plan, &answer.text, answer.usage))
                }
            },
            None => None,
        },
        None => None,
    };
    let decision = store::decide(profile, &preparation, answer, supplied)?;
    let applied = with_session_quick(&ctx, &p.session_id, move |session| {
        Ok((
            session.apply_navigation(&preparation, &decision)?,
            leaf_id(session.leaf()),
        ))
    })
    .await?;
    let outcome = match applied {
        (Some(outcome), _) => outcome,
        (None, leaf_id) => {
            return Ok(NavigateResult {
                cancelled: true,
                editor_text: None,
                summary_entry: None,
                leaf_id,
            });
        }
    };
    let summary_entry = outcome.summary_entry.as_ref().map(JsValue::to_serde);
    ctx.notify(
        "session_tree",
        TreeNotification {
            session_id: p.session_id.clone(),
            new_leaf_id: leaf_id(&outcome.new_leaf),
            old_leaf_id: leaf_id(&outcome.old_leaf),
            summary_entry: summary_entry.clone(),
            from_extension: outcome.from_extension,
        },
    );
    Ok(NavigateResult {
        cancelled: false,
        editor_text: outcome.editor_text,
        summary_entry,
        leaf_id: leaf_id(&outcome.new_leaf),
    })
}

/// A hook answer that does not fit is logged and treated as no answer, as pi ignores a
/// handler that throws.
fn parse_answer<T: serde::de::DeserializeOwned>(hook: &str, value: serde_json::Value) -> Option<T> {
    if value.is_null() {
        return None;
    }
    match serde_json::from_value(value) {
        Ok(answer) => Some(answer),
        Err(e) => {
            tracing::warn!("ignoring the {hook} answer: {e}");
            None
        }
    }
}

/// `/fork` and `/clone` (spec 9.2): the new session is written beside the current one and
/// opened; the current one stays open.
pub async fn fork(ctx: Ctx, p: ForkParams) -> Result<ForkResult, RpcError> {
    // An unknown session is refused before the hook: the client is never asked about it.
    ctx.state().registry.get(&p.session_id)?;
    let hook = BeforeForkHook {
        session_id: p.session_id.clone(),
        entry_id: p.entry_id.clone(),
        position: p.position,
    };
    let answer = match ctx.hook("session_before_fork", hook).await {
        HookOutcome::Cancelled => return Err(RpcError::request_cancelled()),
        outcome => outcome
            .into_answer()
            .and_then(|value| parse_answer::<BeforeForkAnswer>("session_before_fork", value)),
    };
    if answer.is_some_and(|a| a.cancel) {
        return Ok(ForkResult {
            cancelled: true,
            session: None,
            selected_text: None,
        });
    }
    let env = ctx.state().registry.repo()?.env().clone();
    let ids = ctx.state().registry.ids();
    // Selecting and copying the entries reads the session: off the event loop.
    let forked = with_session(&ctx, &p.session_id, move |session| {
        let durable = p.durable.unwrap_or(session.is_durable());
        let mut forked =
            crate::repo::fork_session(&env, session, &p.entry_id, p.position, None, ids)?;
        if durable {
            forked.session.make_durable()?;
        }
        Ok(forked)
    })
    .await?;
    let selected_text = forked.selected_text;
    let session = forked.session;
    let opened = register(&ctx, session)?;
    Ok(ForkResult {
        cancelled: false,
        session: Some(opened),
        selected_text,
    })
}

fn context_leaf(session: &Session, requested: &Option<Option<String>>) -> Result<Leaf, RpcError> {
    Ok(match requested {
        None => session.leaf().clone(),
        Some(None) => Leaf::Null,
        Some(Some(id)) => {
            if session.position(id).is_none() {
                return Err(StoreError::entry_not_found(id).into());
            }
            Leaf::Id(id.as_str().into())
        }
    })
}

pub async fn build_context(ctx: Ctx, p: ContextParams) -> Result<RawAnswer, RpcError> {
    let id = p.session_id.clone();
    with_session(&ctx, &id, move |session| {
        let leaf = context_leaf(session, &p.leaf_id)?;
        let format = match p.format {
            ContextFormat::Agent => MessageFormat::Agent,
            ContextFormat::Llm => MessageFormat::Llm,
        };
        let profile = session.profile();
        // Written as JSON.stringify writes it: strings exact, no tree of values.
        Ok(RawAnswer(
            session
                .build_context(&leaf, format)?
                .to_value(profile)
                .stringify(),
        ))
    })
    .await
}

pub async fn build_context_entries(
    ctx: Ctx,
    p: ContextEntriesParams,
) -> Result<RawAnswer, RpcError> {
    let id = p.session_id.clone();
    with_session(&ctx, &id, move |session| {
        let leaf = context_leaf(session, &p.leaf_id)?;
        let positions = session.context_entries(&leaf)?;
        answers::entries_sliced(session, &positions, p.offset, p.limit)
    })
    .await
}

fn tree_filter(name: TreeFilterName) -> TreeFilter {
    match name {
        TreeFilterName::Default => TreeFilter::Default,
        TreeFilterName::NoTools => TreeFilter::NoTools,
        TreeFilterName::UserOnly => TreeFilter::UserOnly,
        TreeFilterName::LabeledOnly => TreeFilter::LabeledOnly,
        TreeFilterName::All => TreeFilter::All,
    }
}

pub async fn get_tree(ctx: Ctx, p: GetTreeParams) -> Result<RawAnswer, RpcError> {
    if p.around.is_some() && p.offset.is_some() {
        return Err(RpcError::invalid_params(
            "'offset' and 'around' name a page each: give one",
        ));
    }
    let id = p.session_id.clone();
    with_session(&ctx, &id, move |session| {
        let window = match &p.around {
            Some(id) => TreeWindow::Around { id, limit: p.limit },
            None => TreeWindow::Range {
                offset: p.offset.unwrap_or(0),
                limit: p.limit,
            },
        };
        let page = session.tree_page(p.filter.map(tree_filter), window)?;
        let on_path = session.on_leaf_path();
        let positions: Vec<u32> = page.rows.iter().map(|r| r.position).collect();
        let previews = session.row_previews(&positions)?;
        let mut rows = Vec::with_capacity(page.rows.len());
        for row in &page.rows {
            let record = session.record(row.position);
            let label = record.id().and_then(|id| session.label(id));
            rows.push(TreeRow {
                id: record.id(),
                parent_id: record.parent().into_id(),
                kind: record.type_name(),
                depth: row.depth,
                label: label.and_then(|l| RawValue::from_string(l.stringify()).ok()),
                preview: previews.get(row.position),
                on_path: on_path[row.position as usize],
            });
        }
        let result = TreeResult {
            leaf_id: leaf_id(session.leaf()),
            total: page.total,
            offset: page.offset,
            anchor: page.anchor,
            rows,
        };
        serde_json::to_string(&result)
            .map(RawAnswer)
            .map_err(|e| RpcError::internal(format!("cannot serialize the tree: {e}")))
    })
    .await
}

/// Runs a quick change of one session on the event loop when the session is free, else (a
/// long read holds it) on a blocking thread, so the loop never waits for a lock.
async fn with_session_quick<T: Send + 'static>(
    ctx: &Ctx,
    id: &str,
    work: impl FnOnce(&mut Session) -> Result<T, RpcError> + Send + 'static,
) -> Result<T, RpcError> {
    quick(ctx, id, Step::NotLast, work).await
}

/// [`with_session_quick`] for the request's last step, after which it only answers. On a
/// durable session the change is written under the session's lock and synced outside it, with
/// the next request for the session already let in: changes that queue behind a sync write
/// meanwhile and share the next one (group commit). The answer still waits for the sync that
/// covers it, and for the answers before it.
async fn change_then_answer<T: Send + 'static>(
    ctx: &Ctx,
    id: &str,
    work: impl FnOnce(&mut Session) -> Result<T, RpcError> + Send + 'static,
) -> Result<T, RpcError> {
    let step = match group_commit() {
        true => Step::Last,
        false => Step::NotLast,
    };
    quick(ctx, id, step, work).await
}

/// Whether a request may let the next one in before its sync: on unless
/// `PI_SESSION_NO_GROUP_COMMIT` is set (then every durable change syncs on its own, the way to
/// measure what group commit saves).
fn group_commit() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("PI_SESSION_NO_GROUP_COMMIT").is_none())
}

#[derive(Clone, Copy, PartialEq)]
enum Step {
    /// More of the request follows (or group commit is off): the turn is kept throughout.
    NotLast,
    Last,
}

async fn quick<T: Send + 'static>(
    ctx: &Ctx,
    id: &str,
    step: Step,
    work: impl FnOnce(&mut Session) -> Result<T, RpcError> + Send + 'static,
) -> Result<T, RpcError> {
    let cell = ctx.state().registry.get(id)?;
    {
        let free = match cell.try_lock() {
            Ok(session) => Some(session),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        };
        // A durable change syncs before it returns, and another program's appends must be
        // read first: neither on the loop.
        if let Some(mut session) = free.filter(|session| !session.is_durable())
            && !session.tail_grew()?
        {
            return work(&mut session);
        }
    }
    let ctx = ctx.clone();
    let id = id.to_owned();
    blocking(move || {
        if step == Step::NotLast {
            return work(current(&ctx, &id, &mut lock(&cell))?);
        }
        let (value, unsynced) = current(&ctx, &id, &mut lock(&cell))?.with_sync_deferred(work)?;
        ctx.start_next_in_line();
        unsynced.wait()?;
        Ok(value)
    })
    .await
}

/// Runs a read of one session on a blocking thread, so a large read never holds up the
/// messages behind it.
async fn with_session<T: Send + 'static>(
    ctx: &Ctx,
    id: &str,
    work: impl FnOnce(&mut Session) -> Result<T, RpcError> + Send + 'static,
) -> Result<T, RpcError> {
    let cell = ctx.state().registry.get(id)?;
    let ctx = ctx.clone();
    let id = id.to_owned();
    blocking(move || work(current(&ctx, &id, &mut lock(&cell))?)).await
}

/// The session with what another program appended since it was last read (pi takes no lock):
/// every read and change sees the file as it is now, and the client hears of new entries
/// (`session_changed`) before the answer that includes them.
fn current<'a>(ctx: &Ctx, id: &str, session: &'a mut Session) -> Result<&'a mut Session, RpcError> {
    let added = session.follow_tail()?;
    if added > 0 {
        ctx.notify(
            "session_changed",
            ChangedNotification {
                session_id: id.to_owned(),
                entries_added: added,
                leaf_id: leaf_id(session.leaf()),
            },
        );
    }
    Ok(session)
}

fn position_of(session: &Session, id: &str) -> Result<u32, RpcError> {
    session
        .position(id)
        .ok_or_else(|| StoreError::entry_not_found(id).into())
}

pub async fn get_entry(ctx: Ctx, p: EntryParams) -> Result<RawAnswer, RpcError> {
    let id = p.session_id.clone();
    with_session_quick(&ctx, &id, move |session| {
        let position = position_of(session, &p.entry_id)?;
        answers::entry(session, position)
    })
    .await
}

pub async fn get_children(ctx: Ctx, p: EntryParams) -> Result<RawAnswer, RpcError> {
    let id = p.session_id.clone();
    with_session(&ctx, &id, move |session| {
        position_of(session, &p.entry_id)?;
        answers::entries(session, &session.children(&p.entry_id), "")
    })
    .await
}

pub async fn get_branch(ctx: Ctx, p: BranchPathParams) -> Result<RawAnswer, RpcError> {
    let id = p.session_id.clone();
    with_session(&ctx, &id, move |session| {
        let leaf = match &p.entry_id {
            Some(id) => {
                position_of(session, id)?;
                Leaf::Id(id.as_str().into())
            }
            None => session.leaf().clone(),
        };
        let walk = session.profile_path(&leaf)?;
        answers::entries_sliced(session, &walk.positions, p.offset, p.limit)
    })
    .await
}

pub async fn get_entries(ctx: Ctx, p: EntriesParams) -> Result<RawAnswer, RpcError> {
    let id = p.session_id.clone();
    with_session(&ctx, &id, move |session| {
        let total = session.len();
        let start = p.offset.min(total);
        let limit = p.limit.unwrap_or(1000);
        if limit == 0 {
            // A page of nothing would name itself as the next page: a client following it
            // would never end.
            return Err(RpcError::invalid_params("'limit': must be at least 1"));
        }
        let end = start.saturating_add(limit).min(total);
        let positions: Vec<u32> = (start as u32..end as u32).collect();
        let next = match end < total {
            true => end.to_string(),
            false => "null".to_string(),
        };
        answers::entries(
            session,
            &positions,
            &format!(r#","nextOffset":{next},"total":{total}"#),
        )
    })
    .await
}

pub async fn get_info(ctx: Ctx, p: SessionRef) -> Result<InfoResult, RpcError> {
    let id = p.session_id.clone();
    with_session(&ctx, &id, move |session| {
        Ok(InfoResult {
            session_id: p.session_id.clone(),
            path: session.path().map(|p| p.to_string_lossy().into_owned()),
            profile: session.profile(),
            header: session.reported_header().to_serde(),
            name: session.session_name(),
            leaf_id: leaf_id(session.leaf()),
            written: session.is_written(),
            entry_count: session.len(),
            stats: session.stats()?,
        })
    })
    .await
}

// ---------------------------------------------------------------------------------------------
// Sessions directories

/// pi's rows (only `fields` when asked), the selected page of them, and every warning.
fn listing_result(
    mut listing: crate::repo::Listing,
    selection: &ListSelectionParams,
) -> Result<RawAnswer, RpcError> {
    let query = match selection.query.as_deref().map(SearchQuery::parse) {
        None => None,
        Some(Ok(query)) => query,
        Some(Err(e)) => {
            return Err(store_error(
                ErrorKind::InvalidArgument,
                format!("'query': {e}"),
            ));
        }
    };
    let total = listing.select(&ListSelection {
        query,
        sort: selection.sort.unwrap_or_default(),
        names: selection.name_filter.unwrap_or_default(),
        offset: to_usize(selection.offset),
        limit: selection.limit.map(|l| to_usize(Some(l))),
    });
    let warnings = listing.warnings.iter().map(|w| ListWarning {
        path: w.path.to_string_lossy().into_owned(),
        reason: w.reason.to_string(),
        line: None,
        use_profile: None,
    });
    let warnings: Vec<_> = warnings.chain(pi16_warnings(&listing.pi16_notes)).collect();
    answers::listing(
        &listing.sessions,
        selection.fields.as_deref(),
        &warnings,
        selection.pages().then_some(total as u64),
    )
}

fn harness_listing_result(
    listing: crate::repo::HarnessListing,
    selection: &ListSelectionParams,
) -> Result<RawAnswer, RpcError> {
    if selection.fields.is_some() || selection.query.is_some() || selection.name_filter.is_some() {
        return Err(store_error(
            ErrorKind::InvalidArgument,
            "'fields', 'query', 'nameFilter': the harness's listing has no SessionInfo rows to \
             select from (use offset and limit, or profile pi-cli or pi-1.6)",
        ));
    }
    let (rows, total) = page(
        listing.sessions,
        to_usize(selection.offset),
        selection.limit.map(|l| to_usize(Some(l))),
    );
    // As in pi's listings, the pi 1.6 warnings follow the rows returned.
    let shown: std::collections::HashSet<&str> = rows.iter().map(|s| s.path.as_str()).collect();
    let notes: Vec<_> = listing
        .pi16_notes
        .iter()
        .filter(|n| n.path.to_str().is_some_and(|p| shown.contains(p)))
        .cloned()
        .collect();
    let warnings = listing.skipped.into_iter().map(|skip| ListWarning {
        path: skip.path,
        reason: skip.reason,
        line: None,
        use_profile: None,
    });
    let warnings = warnings.chain(pi16_warnings(&notes)).collect();
    let result = ListResult {
        sessions: rows.iter().map(|s| s.to_js_value().to_serde()).collect(),
        warnings,
        total: selection.pages().then_some(total as u64),
    };
    serde_json::to_string(&result)
        .map(RawAnswer)
        .map_err(|e| RpcError::internal(format!("cannot serialize the listing: {e}")))
}

fn to_usize(n: Option<u64>) -> usize {
    n.map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX))
}

fn pi16_warnings(notes: &[crate::repo::Pi16Note]) -> impl Iterator<Item = ListWarning> + '_ {
    notes.iter().map(|note| ListWarning {
        path: note.path.to_string_lossy().into_owned(),
        reason: note.message(),
        line: Some(note.mark.line),
        use_profile: Some(Profile::Pi16),
    })
}

fn profile_or_default(ctx: &Ctx, profile: Option<Profile>) -> Profile {
    profile.unwrap_or(ctx.state().settings().default_profile)
}

pub async fn list(ctx: Ctx, p: ListParams) -> Result<RawAnswer, RpcError> {
    let repo = ctx.state().registry.repo()?.clone();
    let profile = profile_or_default(&ctx, p.profile);
    blocking(move || {
        let dir = p.session_dir.as_deref();
        let selection = p.selection();
        match profile {
            Profile::Harness => {
                harness_listing_result(repo.harness_list(Some(&p.cwd), dir)?, &selection)
            }
            _ => listing_result(repo.list_as(profile, &p.cwd, dir)?, &selection),
        }
    })
    .await
}

pub async fn list_all(ctx: Ctx, p: ListAllParams) -> Result<RawAnswer, RpcError> {
    let repo = ctx.state().registry.repo()?.clone();
    let profile = profile_or_default(&ctx, p.profile);
    blocking(move || {
        let dir = p.session_dir.as_deref();
        let selection = p.selection();
        match profile {
            Profile::Harness => harness_listing_result(repo.harness_list(None, dir)?, &selection),
            _ => listing_result(repo.list_all_as(profile, dir)?, &selection),
        }
    })
    .await
}

pub async fn find_by_id(ctx: Ctx, p: FindByIdParams) -> Result<FindByIdResult, RpcError> {
    let repo = ctx.state().registry.repo()?.clone();
    let profile = profile_or_default(&ctx, p.profile);
    let found = blocking(move || {
        let dir = p.session_dir.as_deref();
        Ok(match profile {
            Profile::Pi16 => repo.find_by_id(&p.cwd, &p.id, dir)?,
            Profile::PiCli => repo.find_by_id_in_list(&p.cwd, &p.id, dir)?,
            Profile::Harness => {
                return Err(store_error(
                    ErrorKind::InvalidArgument,
                    "'profile': the harness has no findById (use pi-cli or pi-1.6)",
                ));
            }
        })
    })
    .await?;
    Ok(FindByIdResult {
        path: found.map(|p| p.to_string_lossy().into_owned()),
    })
}

/// pi's `--continue`: the most recently modified session of the cwd, opened, or a new one.
pub async fn continue_recent(ctx: Ctx, p: ContinueRecentParams) -> Result<OpenedSession, RpcError> {
    let repo = ctx.state().registry.repo()?.clone();
    let (cwd, dir) = (p.cwd.clone(), p.session_dir.clone());
    let profile = profile_or_default(&ctx, p.profile);
    let candidate =
        blocking(move || Ok(repo.continue_recent_candidate_as(profile, &cwd, dir.as_deref())?))
            .await?;
    match candidate {
        Some(path) => {
            let params = OpenParams {
                path: path.to_string_lossy().into_owned(),
                profile: p.profile,
                cwd: Some(p.cwd),
                durable: p.durable,
            };
            open(ctx, params).await
        }
        None => {
            let params = CreateParams {
                cwd: p.cwd,
                profile: p.profile,
                session_dir: p.session_dir,
                durable: p.durable,
                ..CreateParams::default()
            };
            create(ctx, params).await
        }
    }
}

/// pi's `--fork`: a whole session copied into a new session of another cwd.
pub async fn fork_from(ctx: Ctx, p: ForkFromParams) -> Result<OpenedSession, RpcError> {
    let registry = &ctx.state().registry;
    let env = registry.repo()?.env().clone();
    let ids = registry.ids();
    let profile = match p.profile {
        Some(Profile::Harness) => {
            return Err(store_error(
                ErrorKind::InvalidArgument,
                "'profile': forkFrom is pi's SessionManager.forkFrom (use pi-cli or pi-1.6)",
            ));
        }
        Some(profile) => profile,
        None => match ctx.state().settings().default_profile {
            Profile::Harness => Profile::PiCli,
            profile => profile,
        },
    };
    let session = blocking(move || {
        Ok(crate::repo::fork_from(
            &env,
            profile,
            Path::new(&p.source_path),
            &p.cwd,
            p.session_dir.as_deref(),
            p.id.as_deref(),
            ids,
        )
        .and_then(|mut session| {
            if p.durable {
                session.make_durable()?;
            }
            Ok(session)
        })?)
    })
    .await?;
    register(&ctx, session)
}

pub async fn delete(ctx: Ctx, p: DeleteParams) -> Result<DeleteResult, RpcError> {
    let repo = ctx.state().registry.repo()?.clone();
    let path = crate::repo::session_path(repo.env(), &p.path)?;
    if ctx.state().registry.is_open_at(&path) {
        return Err(store_error(
            ErrorKind::Locked,
            format!("{}: the session is open; close it first", path.display()),
        ));
    }
    let deleted = blocking(move || Ok(repo.delete_session(&path)?)).await?;
    Ok(DeleteResult { deleted })
}

/// The request's `settings` translated; unset members stay unset.
fn request_settings(p: Option<&CompactionSettingsParam>) -> SummarySettings {
    let Some(p) = p else {
        return SummarySettings::default();
    };
    SummarySettings {
        compaction_enabled: p.compaction.enabled,
        compaction_reserve_tokens: p.compaction.reserve_tokens,
        compaction_keep_recent_tokens: p.compaction.keep_recent_tokens,
        branch_summary_reserve_tokens: p.branch_summary.reserve_tokens,
    }
}

/// The settings in force for `session`: the request's over pi's `settings.json` files (global,
/// then the project of the session's cwd), over pi's defaults.
fn settings_in_force(
    env: &PathEnv,
    session: &Session,
    p: Option<&CompactionSettingsParam>,
) -> Result<SummarySettings, RpcError> {
    let files = crate::repo::summary_settings(env, session.profile(), &session.cwd())?;
    Ok(request_settings(p).over(files))
}

pub async fn get_context_usage(
    ctx: Ctx,
    p: ContextUsageParams,
) -> Result<ContextUsageResult, RpcError> {
    let id = p.session_id.clone();
    let env = ctx.state().registry.repo()?.env().clone();
    with_session(&ctx, &id, move |session| {
        let leaf = context_leaf(session, &p.leaf_id)?;
        let settings = settings_in_force(&env, session, p.settings.as_ref())?.compaction();
        let usage = session.context_usage(&leaf)?;
        let e = &usage.estimate;
        let window = p.context_window;
        let context_usage = window
            .filter(|&w| w > 0.0 && session.profile() != crate::format::profile::Profile::Harness)
            .map(|w| {
                let tokens = (!usage.unknown_after_compaction).then_some(e.tokens);
                ContextUsageFigures {
                    tokens,
                    context_window: w,
                    percent: tokens.map(|t| t / w * 100.0),
                }
            });
        Ok(ContextUsageResult {
            leaf_id: leaf_id(&leaf),
            settings: settings.to_value().to_serde(),
            estimate: ContextEstimateDocument {
                tokens: e.tokens,
                usage_tokens: e.usage_tokens,
                trailing_tokens: e.trailing_tokens,
                last_usage_index: e.last_usage_index.map(|i| i as u64),
                last_usage_entry_id: usage.last_usage_entry_id.clone(),
            },
            context_window: window,
            threshold: window.map(|w| w - settings.reserve_tokens),
            should_compact: window.map(|w| settings.should_compact(e.tokens, w)),
            context_usage,
        })
    })
    .await
}

pub async fn prepare_compaction(
    ctx: Ctx,
    p: PrepareCompactionParams,
) -> Result<serde_json::Value, RpcError> {
    let id = p.session_id.clone();
    let env = ctx.state().registry.repo()?.env().clone();
    with_session(&ctx, &id, move |session| {
        let leaf = context_leaf(session, &p.leaf_id)?;
        let settings = settings_in_force(&env, session, p.settings.as_ref())?.compaction();
        let preparation = session.prepare_compaction(&leaf, settings)?;
        let thinking_level = match p.thinking_level {
            Some(level) => Some(level),
            None => session.compaction_thinking_level(&leaf)?,
        };
        let model = p.model.unwrap_or_default();
        let model = store::compaction::ModelOptions {
            max_tokens: model.max_tokens,
            reasoning: model.reasoning,
            thinking_level,
        };
        let requests = preparation
            .requests(p.custom_instructions.as_deref(), &model)
            .map_err(|m| {
                store_error(
                    ErrorKind::InvalidSession,
                    format!("pi cannot summarize this session: {}", m.0),
                )
            })?;
        let now = session.ids().now_millis() as f64;
        Ok(preparation
            .plan_value(&requests, now, store::compaction::Detail::Full)
            .to_serde())
    })
    .await
}

/// A model's answer as the store takes it: `text`, or the text of its `content` blocks.
fn summary_text(
    p: &SummaryTextParam,
    name: &str,
) -> Result<store::compaction::SummaryText, RpcError> {
    let block_type =
        |b: &serde_json::Value| b.get("type").and_then(|t| t.as_str()).map(str::to_string);
    let (text, calls_tool) = match (&p.text, &p.content) {
        (Some(text), None) => (text.clone(), false),
        (None, Some(blocks)) => {
            // pi-ai's `contentText(content)`: the text blocks' texts joined by "\n".
            let texts: Vec<String> = blocks
                .iter()
                .filter(|b| block_type(b).as_deref() == Some("text"))
                .map(|b| match b.get("text") {
                    None | Some(serde_json::Value::Null) => String::new(),
                    Some(t) => JsValue::from_serde(t).to_js_string(),
                })
                .collect();
            let calls = blocks
                .iter()
                .any(|b| block_type(b).as_deref() == Some("toolCall"));
            (texts.join("\n"), calls)
        }
        _ => {
            return Err(store_error(
                ErrorKind::InvalidArgument,
                format!("'{name}': give the answer's text or its content, not both or neither"),
            ));
        }
    };
    Ok(store::compaction::SummaryText {
        text,
        usage: p.usage.as_ref().map(JsValue::from_serde),
        stop_reason: p.stop_reason.clone(),
        error_message: p.error_message.clone(),
        calls_tool,
    })
}

/// pi's `AgentSession.compact()` step by step: prepare at the leaf (checking `leafId`), ask the
/// `session_before_compact` hook (the session is not held while waiting), then write the hook's
/// compaction or the one made from the request's `summaries`, notify `session_compact`, answer.
pub async fn compact(ctx: Ctx, p: CompactParams) -> Result<CompactResult, RpcError> {
    let env = ctx.state().registry.repo()?.env().clone();
    let request_settings = p.settings.clone();
    let expected_leaf = p.leaf_id.clone();
    let prepared = with_session(&ctx, &p.session_id, move |session| {
        let settings = settings_in_force(&env, session, request_settings.as_ref())?.compaction();
        let leaf = session.leaf().clone();
        if let Some(expected) = &expected_leaf
            && leaf.id() != Some(expected.as_str())
        {
            return Err(store_error(
                ErrorKind::LeafMoved,
                format!(
                    "the leaf moved since the preparation (expected {expected}, now {})",
                    leaf.id().unwrap_or("before the first entry")
                ),
            ));
        }
        let preparation = session.prepare_compaction(&leaf, settings)?;
        let branch: Vec<serde_json::Value> = session
            .path_entries(&leaf)?
            .iter()
            .map(JsValue::to_serde)
            .collect();
        Ok((leaf, preparation, branch, session.profile()))
    })
    .await?;
    let (leaf, preparation, branch_entries, profile) = prepared;
    let harness = profile == crate::format::profile::Profile::Harness;
    let hook = BeforeCompactHook {
        session_id: p.session_id.clone(),
        preparation: preparation.to_value().to_serde(),
        branch_entries,
        // pi-cli passes custom instructions to a manual compaction only.
        custom_instructions: p
            .custom_instructions
            .clone()
            .filter(|_| harness || matches!(p.reason.unwrap_or_default(), CompactReason::Manual)),
        reason: (!harness).then(|| p.reason.unwrap_or_default()),
    };
    let answer = match ctx.hook("session_before_compact", hook).await {
        HookOutcome::Cancelled => return Err(RpcError::request_cancelled()),
        outcome => outcome
            .into_answer()
            .and_then(|value| parse_answer::<BeforeCompactAnswer>("session_before_compact", value)),
    };
    let answer = answer.unwrap_or_default();
    if answer.cancel {
        return Ok(CompactResult {
            cancelled: true,
            entry: None,
            leaf_id: leaf_id(&leaf),
        });
    }
    let from_extension = answer.compaction.is_some();
    let entry = match answer.compaction {
        Some(c) => crate::format::write::NewEntry::Compaction {
            summary: JsValue::String(JsString::from_wire(&c.summary)),
            first_kept_entry_id: c.first_kept_entry_id.as_deref().map(JsValue::from),
            tokens_before: JsValue::Number(c.tokens_before),
            retained_tail: c
                .retained_tail
                .as_ref()
                .filter(|_| harness)
                .map(JsValue::from_serde),
            details: c.details.as_ref().map(JsValue::from_serde),
            usage: c.usage.as_ref().map(JsValue::from_serde),
            from_hook: Some(JsValue::Bool(true)),
            system_message: None,
        },
        None => {
            let summaries = p.summaries.unwrap_or_default();
            let answers = store::compaction::Summaries {
                history: summaries
                    .history
                    .as_ref()
                    .map(|s| summary_text(s, "summaries.history"))
                    .transpose()?,
                turn_prefix: summaries
                    .turn_prefix
                    .as_ref()
                    .map(|s| summary_text(s, "summaries.turnPrefix"))
                    .transpose()?,
            };
            match preparation.entry_from_summaries(&answers) {
                Ok(entry) => entry,
                Err(store::compaction::SummaryProblem::Missing(missing)) => {
                    let error: RpcError = store_error(
                        ErrorKind::SummaryRequired,
                        format!(
                            "compaction needs the model's answer to the {} request(s) of the preparation",
                            missing.join(" and ")
                        ),
                    );
                    return Err(error.with_data("missing", serde_json::json!(missing)));
                }
                Err(store::compaction::SummaryProblem::BadUsage(message)) => {
                    return Err(store_error(ErrorKind::InvalidArgument, message));
                }
                // pi refuses the answer and writes nothing.
                Err(store::compaction::SummaryProblem::Failed(message)) => {
                    return Err(store_error(
                        ErrorKind::InvalidArgument,
                        format!("'summaries': {message}"),
                    ));
                }
            }
        }
    };
    let written = with_session_quick(&ctx, &p.session_id, move |session| {
        // A serial method: nothing else moved the leaf, but say so if it did.
        if session.leaf() != &leaf {
            return Err(store_error(
                ErrorKind::LeafMoved,
                "the leaf moved during the compaction",
            ));
        }
        let entry = session.append_compaction(entry)?;
        Ok((entry, leaf_id(session.leaf())))
    })
    .await?;
    let (entry, leaf_after) = written;
    let entry = entry.to_serde();
    ctx.notify(
        "session_compact",
        CompactNotification {
            session_id: p.session_id.clone(),
            compaction_entry: entry.clone(),
            from_extension,
        },
    );
    Ok(CompactResult {
        cancelled: false,
        entry: Some(entry),
        leaf_id: leaf_after,
    })
}
