//! `search`: full-text search across every session of the store, from the store index (see
//! [`crate::catalog`]), brought up to date on the way.

use std::path::{Path, PathBuf};

use crate::catalog::{
    self, Catalog, Pending, Progress, SearchSpec, SyncReport, WhileBuilding, query,
};
use crate::format::profile::Profile;

use super::error::OpError;
use super::scope::Scope;

/// Which sessions a store-wide operation looks at.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)] // no doc comments: schemars would copy them into protocol/schema.json; protocol.md describes these members
pub struct StoreScope {
    pub profile: Option<Profile>,
    /// Only the sessions of this project (its working directory); `None`: every project.
    pub cwd: Option<String>,
    /// A flat sessions directory (pi's `--session-dir`: sessions of any cwd, their project the
    /// directory pi would give their header's cwd) instead of the sessions root; for the
    /// harness, another sessions root. `None`: the sessions root.
    pub session_dir: Option<String>,
}

#[derive(
    Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)] // no doc comments: schemars would copy them into protocol/schema.json; protocol.md describes these members
pub struct SearchInput {
    /// Words that must each appear (case and diacritics ignored); `"a phrase"` as written.
    pub query: String,
    #[serde(flatten)]
    pub scope: StoreScope,
    /// `message.role` (user, assistant, toolResult, ...) or the entry type of other entries
    /// (compaction, branch_summary, custom_message, label, session_info).
    pub role: Option<String>,
    /// Entries at or after this time (milliseconds since the epoch).
    pub since_ms: Option<f64>,
    /// Entries before this time.
    pub until_ms: Option<f64>,
    /// `model` or `provider/model`.
    pub model: Option<String>,
    pub tool: Option<String>,
    /// Only entries on the path to each session's current leaf.
    #[serde(default)]
    pub on_path: bool,
    /// Search thinking text too.
    #[serde(default)]
    pub thinking: bool,
    pub limit: Option<u64>,
    #[serde(default)]
    pub offset: u64,
}

/// The hits shown when no limit is asked for.
pub const DEFAULT_LIMIT: u64 = 20;

#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)] // no doc comments: schemars would copy them into protocol/schema.json; protocol.md describes these members
pub struct SearchHit {
    pub session_path: PathBuf,
    pub session_id: String,
    pub session_name: Option<String>,
    pub entry_id: Option<String>,
    /// The entry's line in its file (1-based).
    pub line: u64,
    pub role: Option<String>,
    /// ISO 8601, UTC.
    pub timestamp: Option<String>,
    /// On the path to the session's current leaf (else on an abandoned branch).
    pub on_path: bool,
    /// Folded text around the match, the match between « and ».
    pub snippet: String,
    /// bm25 (lower ranks first); `None` for hits found by the scan for short pieces.
    pub score: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)] // no doc comments: schemars would copy them into protocol/schema.json; protocol.md describes these members
pub struct SearchOutput {
    pub hits: Vec<SearchHit>,
    /// What bringing the index up to date did first.
    pub index: SyncReport,
    /// Why the persisted index could not be used, when it was not.
    pub note: Option<String>,
    /// Another process was building the index: the hits come from what it had filed, and
    /// this much was left (`null`: the index was up to date).
    pub pending: Option<Pending>,
}

/// Asks `query` of the store index of `profile`, brought up to date with the store first (in
/// memory when the persisted index is turned off or unusable); also says what the update did
/// and, when the persisted index could not be used, why.
pub(crate) fn ask<T>(
    scope: &Scope,
    store: &StoreScope,
    profile: Profile,
    progress: &dyn Progress,
    with_text: bool,
    mode: WhileBuilding,
    mut query: impl FnMut(&mut dyn catalog::Backend) -> catalog::CatalogResult<T>,
) -> Result<(T, SyncReport, Option<String>), OpError> {
    let config = &scope.config;
    if let Some(team) = &config.team {
        // The team database is kept by `pi-session sync`: it is read as it is.
        let mut backend = super::team::backend(team)?;
        let answer = query(&mut backend).map_err(OpError::from)?;
        return Ok((answer, SyncReport::default(), None));
    }
    let layout = layout(scope, profile, store.session_dir.as_deref())?;
    let mut catalog =
        Catalog::open(config.index_dir.as_deref(), profile, &layout).map_err(OpError::from)?;
    if let Some(note) = &catalog.note {
        tracing::warn!("{note}");
    }
    let root = layout;
    let options = config.session_options(profile);
    let (answer, report) = catalog
        .answer(&root, &options, progress, with_text, mode, query)
        .map_err(OpError::from)?;
    for skipped in &report.skipped {
        tracing::warn!("left out of the store index: {skipped}");
    }
    Ok((answer, report, catalog.note))
}

/// Where the store's session files are: the sessions root, or a flat sessions directory
/// (pi-cli, pi-1.6), or another sessions root (harness).
fn layout(
    scope: &Scope,
    profile: Profile,
    session_dir: Option<&str>,
) -> Result<catalog::Layout, OpError> {
    let env = scope.repo.env();
    let Some(dir) = session_dir.filter(|d| !d.is_empty()) else {
        return Ok(catalog::Layout::Root(env.io_path(&env.sessions_root())));
    };
    let dir = env.io_path(&env.normalize_path(dir)?);
    Ok(
        if profile.rules().listing == crate::format::profile::ListingRule::HarnessHeaders {
            catalog::Layout::Root(dir)
        } else {
            catalog::Layout::Flat(dir)
        },
    )
}

/// The project directory name of `cwd` (as the sessions root names it).
pub(crate) fn project_of(scope: &Scope, cwd: &str) -> Result<String, OpError> {
    let dir = scope.repo.env().default_session_dir(cwd)?;
    Ok(Path::new(&dir)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default())
}

/// Searches every session of the store (or of one project), bringing the index up to date first (`progress` shows a first build).
pub fn search(
    scope: &Scope,
    input: SearchInput,
    progress: &dyn Progress,
) -> Result<SearchOutput, OpError> {
    let pieces = query::parse(&input.query).map_err(|e| OpError::InvalidParams(e.to_string()))?;
    let project = input
        .scope
        .cwd
        .as_deref()
        .map(|cwd| project_of(scope, cwd))
        .transpose()?;
    let profile = scope.profile(input.scope.profile);
    let spec = SearchSpec {
        pieces,
        thinking: input.thinking,
        project,
        role: input.role,
        since_ms: input.since_ms,
        until_ms: input.until_ms,
        model: input.model,
        tool: input.tool,
        on_path_only: input.on_path,
        limit: input.limit.unwrap_or(DEFAULT_LIMIT),
        offset: input.offset,
    };
    let (hits, index, note) = ask(
        scope,
        &input.scope,
        profile,
        progress,
        true,
        WhileBuilding::AnswerNow,
        |backend| backend.search(&spec),
    )?;
    let pending = index.pending;
    let hits = hits
        .into_iter()
        .map(|h| SearchHit {
            session_path: h.session_path,
            session_id: h.session_id,
            session_name: h.session_name,
            entry_id: h.entry_id,
            line: h.line,
            role: h.role,
            timestamp: h.timestamp_ms.and_then(iso_utc),
            on_path: h.on_path,
            snippet: h.snippet,
            score: h.score,
        })
        .collect();
    Ok(SearchOutput {
        hits,
        index,
        note,
        pending,
    })
}

pub(crate) fn iso_utc(millis: f64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(millis as i64)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
}
