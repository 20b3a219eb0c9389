//! The `session/*` methods: wire types translated into the operations' types (`crate::ops`)
//! and back. The operations hold the policy; this file holds the hook port they run through
//! here, [`ClientHooks`] (the hooks sent to the client and their answers parsed); the session
//! port ([`Held`]) and where each step runs are `threads.rs`'s.

use std::path::Path;

use crate::format::json::{JsString, JsValue};
use crate::format::profile::Profile;
use crate::jsonrpc::{Hook, HookOutcome, Raw, RpcError};
use crate::ops::{self, HookReply, LeafChoice, OpError, Scope};
use crate::repo::search::SearchQuery;
use crate::repo::{ListSelection, SummarySettings};
use crate::store::{
    self, ErrorKind, Leaf, MessageFormat, Session, StoreError, SummaryInput, TreeFilter,
    TreeHookAnswer, TreeRequest,
};
use serde_json::value::RawValue;

use super::answers;

use super::entry::new_entry;
use super::threads::{Ctx, Held, blocking, in_scope, quick, with_session};
use super::wire::{
    AppendParams, AppendResult, BeforeCompactHook, BeforeForkHook, BeforeTreeHook, BranchParams,
    BranchPathParams, BranchWithSummaryParams, CompactNotification, CompactParams, CompactResult,
    CompactionPlanDocument, CompactionSettingsParam, ContextDocument, ContextEntriesParams,
    ContextEstimateDocument, ContextFormat, ContextParams, ContextUsageFigures, ContextUsageParams,
    ContextUsageResult, ContinueRecentParams, CreateParams, DeleteParams, DeleteResult, Empty,
    EntriesPage, EntriesParams, EntriesResult, EntryParams, ExportParams, ExportResult,
    FindByIdParams, FindByIdResult, ForkFromParams, ForkParams, ForkResult, GetTreeParams,
    GetTreeRow, InfoResult, LeafResult, ListAllParams, ListParams, ListResult, ListResultWarning,
    ListSelectionParams, NavigateResult, OpenParams, OpenedSession, PrepareCompactionParams,
    PrepareTreeResult, SessionRef, SummaryParam, SummaryTextParam, TreeFilterName,
    TreeNotification, TreeParams, TreeResult, UnwatchResult, WatchResult,
};

fn leaf_id(leaf: &Leaf) -> Option<String> {
    leaf.id().map(str::to_string)
}

/// Whether a session is open here at `path`.
fn open_here(ctx: &Ctx) -> impl Fn(&Path) -> bool + '_ {
    |path| ctx.state().registry.is_open_at(path)
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
        cursor: ops::cursor_at(session, session.len()),
    }
}

fn register(ctx: &Ctx, session: Session) -> Result<OpenedSession, RpcError> {
    let opened = opened(session.session_id().into_owned(), &session);
    ctx.state().registry.insert(session)?;
    Ok(opened)
}

// ---------------------------------------------------------------------------------------------
// The ports the operations run through here

/// What an operation on session `id` runs with here: the scope, the session, the client.
fn ports<'a>(ctx: &'a Ctx, id: &'a str) -> Result<(Scope, Held<'a>, ClientHooks<'a>), RpcError> {
    let scope = ctx.state().registry.scope()?.clone();
    let held = Held { ctx, id };
    let hooks = ClientHooks {
        ctx,
        session_id: id,
    };
    Ok((scope, held, hooks))
}

/// The client, asked through its declared hooks for one session.
struct ClientHooks<'a> {
    ctx: &'a Ctx,
    session_id: &'a str,
}

impl ClientHooks<'_> {
    /// Sends hook `H`; an answer that does not fit is logged (by the server) and treated as
    /// none, as pi ignores a handler that throws.
    async fn ask<H: Hook>(&self, params: &H) -> HookReply<H::Answer> {
        match self.ctx.ask(params).await {
            HookOutcome::Cancelled => HookReply::Cancelled,
            outcome => HookReply::Answer(outcome.into_answer().flatten()),
        }
    }
}

fn map_reply<T, U>(reply: HookReply<T>, f: impl FnOnce(T) -> U) -> HookReply<U> {
    match reply {
        HookReply::Cancelled => HookReply::Cancelled,
        HookReply::Answer(answer) => HookReply::Answer(answer.map(f)),
    }
}

fn summary_input(s: &SummaryParam) -> SummaryInput {
    SummaryInput {
        summary: JsValue::String(JsString::from_wire(&s.summary)),
        details: s.details.as_ref().map(JsValue::from_serde),
        usage: s.usage.as_ref().map(JsValue::from_serde),
    }
}

impl ops::Hooks for ClientHooks<'_> {
    async fn before_tree(&self, ask: ops::BeforeTree) -> HookReply<TreeHookAnswer> {
        let hook = BeforeTreeHook {
            session_id: self.session_id.to_owned(),
            preparation: ask.preparation.to_serde(),
            branch_summary: ask.branch_summary.as_ref().map(JsValue::to_serde),
        };
        let reply = self.ask(&hook).await;
        map_reply(reply, |a| TreeHookAnswer {
            cancel: a.cancel,
            summary: a.summary.as_ref().map(summary_input),
            custom_instructions: a.custom_instructions,
            replace_instructions: a.replace_instructions,
            label: a.label,
        })
    }

    async fn before_fork(&self, ask: ops::BeforeFork) -> HookReply<bool> {
        let hook = BeforeForkHook {
            session_id: self.session_id.to_owned(),
            entry_id: ask.entry_id,
            position: ask.position,
        };
        let reply = self.ask(&hook).await;
        map_reply(reply, |a| a.cancel)
    }

    async fn before_compact(&self, ask: ops::BeforeCompact) -> HookReply<ops::CompactHookAnswer> {
        let hook = BeforeCompactHook {
            session_id: self.session_id.to_owned(),
            preparation: ask.preparation.to_serde(),
            branch_entries: ask.branch_entries.iter().map(JsValue::to_serde).collect(),
            custom_instructions: ask.custom_instructions,
            reason: ask.reason,
        };
        let reply = self.ask(&hook).await;
        map_reply(reply, |a| ops::CompactHookAnswer {
            cancel: a.cancel,
            compaction: a.compaction.map(|c| ops::HookCompaction {
                summary: JsValue::String(JsString::from_wire(&c.summary)),
                first_kept_entry_id: c.first_kept_entry_id,
                tokens_before: c.tokens_before,
                details: c.details.as_ref().map(JsValue::from_serde),
                usage: c.usage.as_ref().map(JsValue::from_serde),
                retained_tail: c.retained_tail.as_ref().map(JsValue::from_serde),
            }),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Sessions as wholes

pub(crate) async fn create(ctx: Ctx, p: CreateParams) -> Result<OpenedSession, RpcError> {
    let input = ops::CreateInput {
        profile: p.profile,
        place: match (p.in_memory, p.session_dir) {
            (true, _) => ops::PlaceChoice::Memory,
            (false, Some(dir)) => ops::PlaceChoice::Dir(dir),
            (false, None) => ops::PlaceChoice::Default,
        },
        cwd: p.cwd,
        id: p.id,
        parent_session: p.parent_session,
        metadata: p.metadata.as_ref().map(JsValue::from_serde),
        durable: p.durable,
    };
    let session = in_scope(&ctx, move |scope, _| ops::create(scope, input)).await?;
    register(&ctx, session)
}

pub(crate) async fn open(ctx: Ctx, p: OpenParams) -> Result<OpenedSession, RpcError> {
    let input = ops::OpenInput {
        path: p.path,
        profile: p.profile,
        cwd: p.cwd,
        durable: p.durable,
    };
    let session = in_scope(&ctx, move |scope, ctx| {
        ops::open(scope, input, &open_here(ctx))
    })
    .await?;
    register(&ctx, session)
}

/// pi's `--continue`: the most recently modified session of the cwd, opened, or a new one.
pub(crate) async fn continue_recent(
    ctx: Ctx,
    p: ContinueRecentParams,
) -> Result<OpenedSession, RpcError> {
    let session = in_scope(&ctx, move |scope, ctx| {
        ops::continue_recent(
            scope,
            p.profile,
            p.cwd,
            p.session_dir,
            p.durable,
            &open_here(ctx),
        )
    })
    .await?;
    register(&ctx, session)
}

/// `session/watch`: other programs' appends to the session's file reach the client as they
/// happen (see `watch.rs`).
pub(crate) async fn watch_session(ctx: Ctx, p: SessionRef) -> Result<WatchResult, RpcError> {
    let id = p.session_id.clone();
    // Read up to now first: what is already there is told before the answer, and the
    // answer's cursor is where the watch's notifications begin.
    let watched = id.clone();
    let (path, cursor) = with_session(&ctx, &id, move |session| {
        Ok(ops::watch_point(session, &watched)?)
    })
    .await?;
    let watches = &ctx.state().watches;
    if watches.is_watched(&id) {
        return Ok(WatchResult {
            cursor,
            started: false,
        });
    }
    watches.start(ctx.server().clone(), &id, &path)?;
    Ok(WatchResult {
        cursor,
        started: true,
    })
}

/// `session/unwatch`: ends the session's watch.
pub(crate) async fn unwatch_session(ctx: Ctx, p: SessionRef) -> Result<UnwatchResult, RpcError> {
    ctx.state().registry.get(&p.session_id)?;
    Ok(UnwatchResult {
        ended: ctx.state().watches.end(&p.session_id),
    })
}

/// pi's `--fork`: a whole session copied into a new session of another cwd.
pub(crate) async fn fork_from(ctx: Ctx, p: ForkFromParams) -> Result<OpenedSession, RpcError> {
    let input = ops::ForkFromInput {
        profile: p.profile,
        source_path: p.source_path,
        cwd: p.cwd,
        session_dir: p.session_dir,
        id: p.id,
        durable: p.durable,
    };
    let session = in_scope(&ctx, move |scope, _| ops::fork_from(scope, input)).await?;
    register(&ctx, session)
}

pub(crate) async fn delete(ctx: Ctx, p: DeleteParams) -> Result<DeleteResult, RpcError> {
    let deleted = in_scope(&ctx, move |scope, ctx| {
        ops::delete(scope, &p.path, &open_here(ctx))
    })
    .await?;
    Ok(DeleteResult { deleted })
}

pub(crate) async fn close(ctx: Ctx, p: SessionRef) -> Result<Empty, RpcError> {
    ctx.state().registry.get(&p.session_id)?;
    ctx.state().watches.end(&p.session_id);
    let closed = ctx.state().registry.remove(&p.session_id);
    // Freeing a large index and handing the memory back to the system takes time: off the loop.
    blocking(move || {
        drop(closed);
        super::memory::release_freed_memory();
        Ok(())
    })
    .await?;
    Ok(Empty {})
}

/// `/fork` and `/clone` (spec 9.2): the new session is written beside the current one and
/// opened; the current one stays open.
pub(crate) async fn fork(ctx: Ctx, p: ForkParams) -> Result<ForkResult, RpcError> {
    // An unknown session is refused before the hook: the client is never asked about it.
    ctx.state().registry.get(&p.session_id)?;
    let (scope, held, hooks) = ports(&ctx, &p.session_id)?;
    let input = ops::ForkInput {
        entry_id: p.entry_id.clone(),
        position: p.position,
        durable: p.durable,
    };
    Ok(match ops::fork(&scope, &held, &hooks, input).await? {
        ops::ForkOutcome::Cancelled => ForkResult {
            cancelled: true,
            session: None,
            selected_text: None,
        },
        ops::ForkOutcome::Made(crate::repo::Forked {
            session,
            selected_text,
        }) => ForkResult {
            cancelled: false,
            session: Some(register(&ctx, session)?),
            selected_text,
        },
    })
}

// ---------------------------------------------------------------------------------------------
// Changes

fn leaf_result(changed: ops::Changed) -> LeafResult {
    LeafResult {
        leaf_id: leaf_id(&changed.leaf),
        entry_id: changed.entry_id,
    }
}

fn config(ctx: &Ctx) -> Result<&ops::Config, RpcError> {
    Ok(&ctx.state().registry.scope()?.config)
}

pub(crate) async fn append(ctx: Ctx, p: AppendParams) -> Result<AppendResult, RpcError> {
    let entry = new_entry(&p.entry)?;
    let held = Held {
        ctx: &ctx,
        id: &p.session_id,
    };
    let changed = ops::append(&held, config(&ctx)?, entry).await?;
    Ok(AppendResult {
        entry_id: changed.entry_id.unwrap_or_default(),
        leaf_id: leaf_id(&changed.leaf),
    })
}

pub(crate) async fn branch(ctx: Ctx, p: BranchParams) -> Result<LeafResult, RpcError> {
    let held = Held {
        ctx: &ctx,
        id: &p.session_id,
    };
    let changed = ops::branch(&held, config(&ctx)?, p.entry_id.clone()).await?;
    Ok(leaf_result(changed))
}

pub(crate) async fn reset_leaf(ctx: Ctx, p: SessionRef) -> Result<LeafResult, RpcError> {
    let held = Held {
        ctx: &ctx,
        id: &p.session_id,
    };
    Ok(leaf_result(ops::reset_leaf(&held, config(&ctx)?).await?))
}

pub(crate) async fn branch_with_summary(
    ctx: Ctx,
    p: BranchWithSummaryParams,
) -> Result<LeafResult, RpcError> {
    let held = Held {
        ctx: &ctx,
        id: &p.session_id,
    };
    let summary = SummaryInput {
        summary: JsValue::from_serde(&p.summary),
        details: p.details.as_ref().map(JsValue::from_serde),
        usage: p.usage.as_ref().map(JsValue::from_serde),
    };
    let changed = ops::branch_with_summary(
        &held,
        config(&ctx)?,
        p.target_id.clone(),
        summary,
        p.from_hook,
    )
    .await?;
    Ok(leaf_result(changed))
}

// ---------------------------------------------------------------------------------------------
// Navigation

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

fn navigate_input(p: &TreeParams) -> ops::NavigateInput {
    ops::NavigateInput {
        tree: TreeRequest {
            target_id: p.target_id.clone(),
            summarize: p.summarize,
            custom_instructions: p.custom_instructions.clone(),
            replace_instructions: p.replace_instructions,
            label: p.label.clone(),
        },
        settings: request_settings(p.settings.as_ref()),
        context_window: p.context_window,
        reasoning: p.model.as_ref().is_some_and(|m| m.reasoning),
        thinking_level: p.thinking_level.clone(),
        summary: p.summary.as_ref().map(summary_input),
        model_summary: p
            .model_summary
            .as_ref()
            .map(|m| summary_text(m, "modelSummary")),
    }
}

pub(crate) async fn prepare_tree(ctx: Ctx, p: TreeParams) -> Result<PrepareTreeResult, RpcError> {
    let scope = ctx.state().registry.scope()?.clone();
    let input = navigate_input(&p);
    let prepared = with_session(&ctx, &p.session_id, move |session| {
        Ok(ops::prepare_tree(&scope, session, &input)?)
    })
    .await?;
    Ok(match prepared {
        None => PrepareTreeResult {
            no_op: true,
            preparation: None,
            branch_summary: None,
        },
        Some(prepared) => PrepareTreeResult {
            no_op: false,
            preparation: Some(prepared.preparation.to_serde()),
            branch_summary: prepared.branch_summary.as_ref().map(JsValue::to_serde),
        },
    })
}

/// `navigateTree` (`ops::navigate`), then `session_tree` before the answer.
pub(crate) async fn navigate_tree(ctx: Ctx, p: TreeParams) -> Result<NavigateResult, RpcError> {
    let (scope, held, hooks) = ports(&ctx, &p.session_id)?;
    let outcome = match ops::navigate(&scope, &held, &hooks, navigate_input(&p)).await? {
        ops::Navigated::AlreadyThere { leaf } => {
            return Ok(NavigateResult {
                cancelled: false,
                editor_text: None,
                summary_entry: None,
                leaf_id: leaf_id(&leaf),
            });
        }
        ops::Navigated::Cancelled { leaf } => {
            return Ok(NavigateResult {
                cancelled: true,
                editor_text: None,
                summary_entry: None,
                leaf_id: leaf_id(&leaf),
            });
        }
        ops::Navigated::Moved(outcome) => outcome,
    };
    let summary_entry = outcome.summary_entry.as_ref().map(JsValue::to_serde);
    ctx.send(&TreeNotification {
        session_id: p.session_id.clone(),
        new_leaf_id: leaf_id(&outcome.new_leaf),
        old_leaf_id: leaf_id(&outcome.old_leaf),
        summary_entry: summary_entry.clone(),
        from_extension: outcome.from_extension,
    });
    Ok(NavigateResult {
        cancelled: false,
        editor_text: outcome.editor_text,
        summary_entry,
        leaf_id: leaf_id(&outcome.new_leaf),
    })
}

// ---------------------------------------------------------------------------------------------
// Reads

/// `session/export`: written off the event loop, from the session as it is now.
pub(crate) async fn export(ctx: Ctx, p: ExportParams) -> Result<ExportResult, RpcError> {
    let scope = ctx.state().registry.scope()?.clone();
    let out = match p.path.as_deref() {
        Some(spelled) => Some(crate::repo::session_path(scope.repo.env(), spelled)?),
        None => None,
    };
    let input = ops::ExportInput {
        format: p.format,
        leaf: p.leaf_id,
        out,
        default_dir: None,
    };
    with_session(&ctx, &p.session_id, move |session| {
        let exported = ops::export(&scope, session, input)?;
        Ok(ExportResult {
            path: exported.path.to_string_lossy().into_owned(),
            bytes: exported.bytes,
            format: p.format,
            leaf_id: exported.leaf_id,
        })
    })
    .await
}

pub(crate) async fn build_context(
    ctx: Ctx,
    p: ContextParams,
) -> Result<Raw<ContextDocument>, RpcError> {
    let id = p.session_id.clone();
    with_session(&ctx, &id, move |session| {
        let format = match p.format {
            ContextFormat::Agent => MessageFormat::Agent,
            ContextFormat::Llm => MessageFormat::Llm,
        };
        let context = ops::build_context(session, &LeafChoice::from_wire(&p.leaf_id), format)?;
        // Written as JSON.stringify writes it: strings exact, no tree of values.
        Ok(Raw::new(context.to_value(session.profile()).stringify()))
    })
    .await
}

pub(crate) async fn build_context_entries(
    ctx: Ctx,
    p: ContextEntriesParams,
) -> Result<Raw<EntriesResult>, RpcError> {
    let id = p.session_id.clone();
    with_session(&ctx, &id, move |session| {
        let positions = ops::context_entries(session, &LeafChoice::from_wire(&p.leaf_id))?;
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

pub(crate) async fn get_tree(
    ctx: Ctx,
    p: GetTreeParams,
) -> Result<Raw<TreeResult<'static>>, RpcError> {
    let input = ops::TreeInput {
        filter: p.filter.map(tree_filter),
        offset: p.offset,
        around: p.around,
        limit: p.limit,
    };
    // Refused before the session is looked at, as a bad request.
    ops::check_tree_input(&input)?;
    with_session(&ctx, &p.session_id, move |session| {
        let view = ops::tree(session, input)?;
        let rows = view
            .rows()
            .map(|row| GetTreeRow {
                id: row.id,
                parent_id: row.parent_id,
                kind: row.kind,
                depth: row.depth,
                label: row
                    .label
                    .and_then(|l| RawValue::from_string(l.stringify()).ok()),
                preview: row.preview,
                on_path: row.on_path,
            })
            .collect();
        let result = TreeResult {
            leaf_id: leaf_id(view.leaf),
            total: view.page.total,
            offset: view.page.offset,
            anchor: view.page.anchor,
            rows,
        };
        serde_json::to_string(&result)
            .map(Raw::new)
            .map_err(|e| RpcError::internal(format!("cannot serialize the tree: {e}")))
    })
    .await
}

pub(crate) async fn get_entry(
    ctx: Ctx,
    p: EntryParams,
) -> Result<Raw<super::pi_format::AnyEntry>, RpcError> {
    let id = p.session_id.clone();
    quick(&ctx, &id, false, move |session| {
        let position = ops::entry_position(session, &p.entry_id)?;
        answers::entry(session, position)
    })
    .await
}

pub(crate) async fn get_children(ctx: Ctx, p: EntryParams) -> Result<Raw<EntriesResult>, RpcError> {
    let id = p.session_id.clone();
    with_session(&ctx, &id, move |session| {
        answers::entries(session, &ops::children(session, &p.entry_id)?, "")
    })
    .await
}

pub(crate) async fn get_branch(
    ctx: Ctx,
    p: BranchPathParams,
) -> Result<Raw<EntriesResult>, RpcError> {
    let id = p.session_id.clone();
    with_session(&ctx, &id, move |session| {
        let choice = p
            .entry_id
            .clone()
            .map_or(LeafChoice::Current, LeafChoice::Entry);
        let positions = ops::branch_entries(session, &choice)?;
        answers::entries_sliced(session, &positions, p.offset, p.limit)
    })
    .await
}

pub(crate) async fn get_entries(ctx: Ctx, p: EntriesParams) -> Result<Raw<EntriesPage>, RpcError> {
    let input = ops::EntriesInput {
        offset: p.offset,
        since: p.since,
        limit: p.limit,
    };
    with_session(&ctx, &p.session_id, move |session| {
        let page = ops::entries(session, &input)?;
        let positions: Vec<u32> =
            (page.positions.start as u32..page.positions.end as u32).collect();
        answers::entries(
            session,
            &positions,
            &answers::members_after(&EntriesPageTail {
                next_offset: page.next_offset,
                total: page.total,
                cursor: page.cursor,
            })?,
        )
    })
    .await
}

/// The members of `getEntries`' answer after its entries.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct EntriesPageTail {
    next_offset: Option<usize>,
    total: usize,
    cursor: String,
}

pub(crate) async fn get_info(ctx: Ctx, p: SessionRef) -> Result<InfoResult, RpcError> {
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

fn to_usize(n: Option<u64>) -> usize {
    n.map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX))
}

fn pi16_warnings(notes: &[crate::repo::Pi16Note]) -> impl Iterator<Item = ListResultWarning> + '_ {
    notes.iter().map(|note| ListResultWarning {
        path: note.path.to_string_lossy().into_owned(),
        reason: note.message(),
        line: Some(note.mark.line),
        use_profile: Some(note.use_profile()),
    })
}

/// `list` and `listAll`: pi's rows (only `fields` when asked), the selected page of them, and
/// every warning; or the harness's header rows.
async fn listing(
    ctx: &Ctx,
    profile: Option<Profile>,
    project: Option<String>,
    session_dir: Option<String>,
    selection: ListSelectionParams,
) -> Result<Raw<ListResult>, RpcError> {
    let query = match selection.query.as_deref().map(SearchQuery::parse) {
        None => None,
        Some(Ok(query)) => query,
        Some(Err(e)) => {
            return Err(
                StoreError::new(ErrorKind::InvalidArgument, format!("'query': {e}")).into(),
            );
        }
    };
    let input = ops::ListInput {
        profile,
        project,
        session_dir,
        selection: ListSelection {
            query,
            sort: selection.sort.unwrap_or_default(),
            names: selection.name_filter.unwrap_or_default(),
            offset: to_usize(selection.offset),
            limit: selection.limit.map(|l| to_usize(Some(l))),
        },
        refines_rows: selection.fields.is_some()
            || selection.query.is_some()
            || selection.name_filter.is_some(),
    };
    let total = |total: usize| selection.pages().then_some(total as u64);
    in_scope(ctx, move |scope, _| ops::list(scope, input))
        .await
        .and_then(|listed| match listed {
            ops::Listed::Rows { listing, total: n } => {
                let warnings = listing.warnings.iter().map(|w| ListResultWarning {
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
                    total(n),
                )
            }
            ops::Listed::Headers { listing, total: n } => {
                let warnings = listing.skipped.iter().map(|skip| ListResultWarning {
                    path: skip.path.clone(),
                    reason: skip.reason.clone(),
                    line: None,
                    use_profile: None,
                });
                let warnings = warnings.chain(pi16_warnings(&listing.pi16_notes)).collect();
                let result = ListResult {
                    sessions: listing
                        .sessions
                        .iter()
                        .map(|s| s.to_js_value().to_serde())
                        .collect(),
                    warnings,
                    total: total(n),
                };
                serde_json::to_string(&result)
                    .map(Raw::new)
                    .map_err(|e| RpcError::internal(format!("cannot serialize the listing: {e}")))
            }
        })
}

pub(crate) async fn list(ctx: Ctx, p: ListParams) -> Result<Raw<ListResult>, RpcError> {
    let selection = p.selection();
    listing(&ctx, p.profile, Some(p.cwd), p.session_dir, selection).await
}

pub(crate) async fn list_all(ctx: Ctx, p: ListAllParams) -> Result<Raw<ListResult>, RpcError> {
    let selection = p.selection();
    listing(&ctx, p.profile, None, p.session_dir, selection).await
}

pub(crate) async fn find_by_id(ctx: Ctx, p: FindByIdParams) -> Result<FindByIdResult, RpcError> {
    let found = in_scope(&ctx, move |scope, _| {
        ops::find_by_id(scope, p.profile, &p.cwd, &p.id, p.session_dir.as_deref())
    })
    .await?;
    Ok(FindByIdResult {
        path: found.map(|p| p.to_string_lossy().into_owned()),
    })
}

// ---------------------------------------------------------------------------------------------
// Context usage and compaction

pub(crate) async fn get_context_usage(
    ctx: Ctx,
    p: ContextUsageParams,
) -> Result<ContextUsageResult, RpcError> {
    let scope = ctx.state().registry.scope()?.clone();
    let id = p.session_id.clone();
    with_session(&ctx, &id, move |session| {
        let usage = ops::context_usage(
            &scope,
            session,
            &LeafChoice::from_wire(&p.leaf_id),
            request_settings(p.settings.as_ref()),
            p.context_window,
        )?;
        let e = &usage.usage.estimate;
        Ok(ContextUsageResult {
            leaf_id: leaf_id(&usage.leaf),
            settings: usage.settings.to_value().to_serde(),
            estimate: ContextEstimateDocument {
                tokens: e.tokens,
                usage_tokens: e.usage_tokens,
                trailing_tokens: e.trailing_tokens,
                last_usage_index: e.last_usage_index.map(|i| i as u64),
                last_usage_entry_id: usage.usage.last_usage_entry_id.clone(),
            },
            context_window: usage.context_window,
            threshold: usage.threshold,
            should_compact: usage.should_compact,
            context_usage: usage.percent.map(|f| ContextUsageFigures {
                tokens: f.tokens,
                context_window: f.context_window,
                percent: f.percent,
            }),
        })
    })
    .await
}

pub(crate) async fn prepare_compaction(
    ctx: Ctx,
    p: PrepareCompactionParams,
) -> Result<Raw<CompactionPlanDocument>, RpcError> {
    let scope = ctx.state().registry.scope()?.clone();
    let id = p.session_id.clone();
    with_session(&ctx, &id, move |session| {
        let model = p.model.unwrap_or_default();
        let input = ops::PrepareCompactionInput {
            leaf: LeafChoice::from_wire(&p.leaf_id),
            settings: request_settings(p.settings.as_ref()),
            custom_instructions: p.custom_instructions,
            max_tokens: model.max_tokens,
            reasoning: model.reasoning,
            thinking_level: p.thinking_level,
        };
        Ok(Raw::new(
            ops::prepare_compaction(&scope, session, input)?.stringify(),
        ))
    })
    .await
}

/// A model's answer as the store takes it (`ops::summary_text` reads it as pi does).
fn summary_text(
    p: &SummaryTextParam,
    name: &str,
) -> Result<store::compaction::SummaryText, OpError> {
    let answer = ops::ModelAnswer {
        text: p.text.clone(),
        content: p.content.clone(),
        usage: p.usage.as_ref().map(JsValue::from_serde),
        stop_reason: p.stop_reason.clone(),
        error_message: p.error_message.clone(),
    };
    ops::summary_text(answer, name)
}

/// `compact` (`ops::compact`), then `session_compact` before the answer.
pub(crate) async fn compact(ctx: Ctx, p: CompactParams) -> Result<CompactResult, RpcError> {
    let (scope, held, hooks) = ports(&ctx, &p.session_id)?;
    let summaries = p.summaries.clone().unwrap_or_default();
    let input = ops::CompactInput {
        expected_leaf: p.leaf_id.clone(),
        settings: request_settings(p.settings.as_ref()),
        custom_instructions: p.custom_instructions.clone(),
        reason: p.reason.unwrap_or_default(),
        summaries: (|| {
            Ok(store::compaction::Summaries {
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
            })
        })(),
    };
    match ops::compact(&scope, &held, &hooks, input).await? {
        ops::Compacted::Cancelled { leaf } => Ok(CompactResult {
            cancelled: true,
            entry: None,
            leaf_id: leaf_id(&leaf),
        }),
        ops::Compacted::Written {
            entry,
            leaf,
            from_extension,
        } => {
            let entry = entry.to_serde();
            ctx.send(&CompactNotification {
                session_id: p.session_id.clone(),
                compaction_entry: entry.clone(),
                from_extension,
            });
            Ok(CompactResult {
                cancelled: false,
                entry: Some(entry),
                leaf_id: leaf_id(&leaf),
            })
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The store index

/// Runs a store-wide operation on a blocking thread (bringing the index up to date can take
/// long), with `$/progress` under the request's token when it gave one.
async fn with_store_index<T: Send + 'static>(
    ctx: &Ctx,
    token: Option<super::wire::ProgressToken>,
    work: impl FnOnce(&Scope, &dyn crate::catalog::Progress) -> Result<T, OpError> + Send + 'static,
) -> Result<T, RpcError> {
    in_scope(ctx, move |scope, ctx| {
        let answer = match token {
            None => work(scope, &crate::catalog::Quiet),
            Some(token) => {
                let progress = super::progress::WorkDone::new(ctx, token);
                let answer = work(scope, &progress);
                progress.end(answer.is_err());
                answer
            }
        };
        // Params that fit the schema but whose value cannot be used (a query the engine cannot
        // read, an unknown time zone) are `invalid_argument`, as elsewhere: -32602 means the
        // params do not fit the schema. The command line keeps them usage errors.
        answer.map_err(|e| match e {
            OpError::InvalidParams(message) => OpError::store(ErrorKind::InvalidArgument, message),
            other => other,
        })
    })
    .await
}

pub(crate) async fn search(
    ctx: Ctx,
    p: super::wire::SearchParams,
) -> Result<ops::SearchOutput, RpcError> {
    let (input, token) = p.into_input();
    with_store_index(&ctx, token, move |scope, progress| {
        ops::search(scope, input, progress)
    })
    .await
}

pub(crate) async fn stats(
    ctx: Ctx,
    p: super::wire::StatsParams,
) -> Result<ops::StatsOutput, RpcError> {
    let (input, token) = p.into_input();
    with_store_index(&ctx, token, move |scope, progress| {
        ops::stats(scope, input, progress)
    })
    .await
}
