//! The session application: the `session/*` method table plugged into the JSON-RPC transport
//! ([`crate::jsonrpc`]), translating wire types to `ops` and back; the registry of open
//! sessions, the wire types, the handlers, the schema and the stdio entry point.

mod answers;
mod changed;
mod entry;
mod error;
mod handlers;
mod memory;
pub(crate) mod pi_format;
mod progress;
mod registry;
pub mod schema;
pub mod session_server;
mod stdio;
mod store_watch;
mod threads;
mod watch;
pub(crate) mod wire;

pub(crate) use stdio::serve_stdio_with;
pub use stdio::{StdioArgs, serve_stdio};

use std::path::PathBuf;
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::format::profile::Profile;
use crate::jsonrpc::{BoxFuture, ClientSettings, Methods, RpcError, ServerState};

pub(crate) use registry::Registry;

/// The sidecar's members of `initialize`'s params, echoed in its result's `settings`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSettings {
    /// The root of the sessions directories (default `<agentDir>/sessions`).
    #[serde(default)]
    pub sessions_root: Option<PathBuf>,
    /// The writing profile of new sessions when a method does not say.
    #[serde(default)]
    pub default_profile: Profile,
    /// `false`: neither use nor write the persisted index for this connection's sessions
    /// (default `true`: on, unless the server runs with `--no-index` or `PI_SESSION_NO_INDEX`).
    #[serde(default = "index_on")]
    pub index: bool,
}

fn index_on() -> bool {
    true
}

impl Default for SidecarSettings {
    fn default() -> Self {
        SidecarSettings {
            sessions_root: None,
            default_profile: Profile::default(),
            index: true,
        }
    }
}

/// The sidecar's members of `initialize`'s `capabilities` (beside the generic server's).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarCapabilities {
    /// The profiles a `profile` member may name (the default first); `pi-0.82` is also
    /// accepted, as another name of `pi-cli`.
    pub profiles: Vec<Profile>,
    /// Opens may use the persisted index, and `initialize.index` (`false`) turns it off.
    pub persisted_index: bool,
    /// pi's branch summarizer without the model call: `branchSummary` in `session/prepareTree`
    /// and `session_before_tree`, `modelSummary` in `session/navigateTree`.
    pub branch_summaries: bool,
    /// Whose compaction and branch-summary code each profile follows (every profile offers
    /// `getContextUsage`, `prepareCompaction`, `compact` and `branchSummary`).
    pub compaction: std::collections::BTreeMap<String, String>,
    /// What `session/list` and `session/listAll` select beside pi's rows.
    pub listing: ListingCapabilities,
    /// The methods that may answer a part of their answer, with the params that choose it.
    pub paging: std::collections::BTreeMap<String, Vec<String>>,
    /// The `filter` modes of `session/getTree` (pi 0.82.1's `/tree` selector).
    pub(crate) tree_filters: Vec<wire::TreeFilterName>,
    /// Entries and contexts reach the client with the file's strings exactly, lone surrogate
    /// escapes included.
    pub exact_entries: bool,
    /// `session/watch`: other programs' appends are sent as they happen (`session_changed`
    /// with the entries), and answers carry cursors that `getEntries.since` resumes from.
    pub watch: bool,
    /// The `format`s `session/export` writes.
    pub(crate) export_formats: Vec<crate::export::ExportFormat>,
    /// `session/search` and `session/stats`: the store index across every session.
    pub store_index: StoreIndexCapabilities,
    /// `session/watchStore`: the store's live feed (`store_changed`), with durable cursors.
    pub watch_store: WatchStoreCapabilities,
}

/// `capabilities.watchStore`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WatchStoreCapabilities {
    /// How often a polled store is looked at (`poll`, or a network or FUSE file system).
    pub poll_interval_ms: u64,
    /// At most this many entries in one `store_changed` (a bigger change comes in several,
    /// the later ones `appended`).
    pub event_entries: u64,
}

/// `capabilities.storeIndex`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoreIndexCapabilities {
    /// The values of `session/stats`' `by`.
    pub group_by: Vec<crate::ops::GroupBy>,
    /// A `workDoneToken` in the params is answered with `$/progress` while the index catches
    /// up (LSP's work-done progress).
    pub work_done_progress: bool,
    /// `session/search` answers at once while another process builds the index, from what
    /// it has filed, and says what is left (`pending`).
    pub search_pending: bool,
    /// `session/search` and `session/stats` take `sessionDir` (a flat sessions directory).
    pub session_dir: bool,
}

/// `capabilities.listing`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListingCapabilities {
    /// The names `fields` may take (pi's `SessionInfo` members, in pi's key order).
    pub fields: Vec<crate::repo::ListField>,
    /// `query` is matched server-side as pi's `/resume` search.
    pub query: bool,
    /// The values of `sort`.
    pub sort: Vec<crate::repo::search::SearchSort>,
    /// The values of `nameFilter`.
    pub name_filter: Vec<crate::repo::search::NameFilter>,
    /// `offset`/`limit` are taken and `total` answered.
    pub paging: bool,
    /// Listed files holding what only pi 1.6 writes are warned of (`line`, `useProfile`).
    pub pi16_warnings: bool,
}

impl SidecarCapabilities {
    fn current() -> Self {
        use crate::repo::search::{NameFilter, SearchSort};
        use wire::TreeFilterName::*;
        let params = |names: &[&str]| names.iter().map(|n| n.to_string()).collect();
        SidecarCapabilities {
            profiles: Profile::ALL.to_vec(),
            persisted_index: true,
            branch_summaries: true,
            compaction: Profile::ALL
                .iter()
                .map(|p| (p.name().to_string(), p.rules().follows.to_string()))
                .collect(),
            listing: ListingCapabilities {
                fields: crate::repo::ListField::ALL.to_vec(),
                query: true,
                sort: vec![SearchSort::Relevance, SearchSort::Recent],
                name_filter: vec![NameFilter::All, NameFilter::Named],
                paging: true,
                pi16_warnings: true,
            },
            paging: [
                (
                    "session/getTree",
                    params(&["offset", "limit", "around", "filter"]),
                ),
                ("session/getBranch", params(&["offset", "limit"])),
                ("session/buildContextEntries", params(&["offset", "limit"])),
                ("session/getEntries", params(&["offset", "limit", "since"])),
                ("session/list", params(&["offset", "limit"])),
                ("session/listAll", params(&["offset", "limit"])),
            ]
            .into_iter()
            .map(|(method, params)| (method.to_string(), params))
            .collect(),
            tree_filters: vec![Default, NoTools, UserOnly, LabeledOnly, All],
            exact_entries: true,
            watch: true,
            export_formats: crate::export::ExportFormat::ALL.to_vec(),
            store_index: StoreIndexCapabilities {
                group_by: {
                    use crate::ops::GroupBy::*;
                    vec![Day, Week, Month, Model, Project, Session]
                },
                work_done_progress: true,
                search_pending: true,
                session_dir: true,
            },
            watch_store: WatchStoreCapabilities {
                poll_interval_ms: crate::store::tree_watch::POLL_INTERVAL.as_millis() as u64,
                event_entries: crate::ops::FEED_EVENT_ENTRIES as u64,
            },
        }
    }
}

/// The sidecar's state.
#[derive(Debug)]
pub struct Sidecar {
    pub(crate) registry: Registry,
    /// The sessions watched for other programs' appends.
    pub(crate) watches: watch::Watches,
    /// The store watches (`session/watchStore`).
    pub(crate) store_watches: store_watch::StoreWatches,
    settings: OnceLock<SidecarSettings>,
}

impl Sidecar {
    /// A sidecar under `config` (the command line's, with its flags), or the reason the
    /// configuration could not be read (told to each method that needs it).
    pub fn with_config(config: Result<crate::ops::Config, crate::repo::RepoError>) -> Sidecar {
        Sidecar {
            registry: Registry::with_config(config),
            watches: watch::Watches::default(),
            store_watches: store_watch::StoreWatches::default(),
            settings: OnceLock::new(),
        }
    }

    /// The open session `id` (for an embedder's own methods beside `session/*`), or
    /// `session_not_found`. Lock it only for a short step: the sidecar's methods share it.
    pub fn session(
        &self,
        id: &str,
    ) -> Result<std::sync::Arc<std::sync::Mutex<crate::store::Session>>, RpcError> {
        self.registry.get(id)
    }

    /// The settings from `initialize` (the defaults before it).
    pub fn settings(&self) -> &SidecarSettings {
        self.settings.get_or_init(SidecarSettings::default)
    }
}

/// A sidecar under this process's configuration.
impl Default for Sidecar {
    fn default() -> Self {
        Sidecar::with_config(crate::ops::Config::from_process())
    }
}

impl ServerState for Sidecar {
    type Settings = SidecarSettings;
    type Capabilities = SidecarCapabilities;

    fn capabilities(&self) -> SidecarCapabilities {
        SidecarCapabilities::current()
    }

    fn on_initialize(
        &self,
        ours: SidecarSettings,
        settings: &ClientSettings,
    ) -> Result<SidecarSettings, RpcError> {
        self.registry.configure(&ours, settings.deterministic)?;
        // `initialize` succeeds once; a retry after an error may set them anew.
        let _ = self.settings.set(ours.clone());
        Ok(ours)
    }

    fn on_close(&self) -> BoxFuture<'_, ()> {
        self.watches.end_all();
        self.store_watches.end_all();
        self.registry.close_all();
        Box::pin(std::future::ready(()))
    }
}

/// Every `session/*` method, hook and notification, each once with its types: the table
/// behind dispatch, `initialize`'s lists and `protocol/schema.json`. Changes to one session run
/// in arrival order (`add_serial`, keyed by session id); reads run beside them.
pub fn register(methods: &mut Methods<Sidecar>) {
    use handlers::*;
    let by_session = |p: &wire::SessionRef| p.session_id.clone();
    methods
        .add("session/create", create)
        .add("session/open", open)
        .add("session/continueRecent", continue_recent)
        .add("session/forkFrom", fork_from)
        .add("session/list", list)
        .add("session/listAll", list_all)
        .add("session/findById", find_by_id)
        .add("session/delete", delete)
        .add("session/search", search)
        .advertised_by("storeIndex")
        .add("session/stats", stats)
        .advertised_by("storeIndex")
        .add("session/watchStore", store_watch::watch_store)
        .advertised_by("watchStore")
        .add("session/unwatchStore", store_watch::unwatch_store)
        .advertised_by("watchStore")
        .add_serial("session/close", by_session, close)
        .add_serial("session/watch", by_session, watch_session)
        .advertised_by("watch")
        .add_serial("session/unwatch", by_session, unwatch_session)
        .advertised_by("watch")
        .add_serial(
            "session/append",
            |p: &wire::AppendParams| p.session_id.clone(),
            append,
        )
        .add_serial(
            "session/branch",
            |p: &wire::BranchParams| p.session_id.clone(),
            branch,
        )
        .add_serial("session/resetLeaf", by_session, reset_leaf)
        .add_serial(
            "session/branchWithSummary",
            |p: &wire::BranchWithSummaryParams| p.session_id.clone(),
            branch_with_summary,
        )
        .add("session/prepareTree", prepare_tree)
        .add_serial(
            "session/navigateTree",
            |p: &wire::TreeParams| p.session_id.clone(),
            navigate_tree,
        )
        .add_serial(
            "session/fork",
            |p: &wire::ForkParams| p.session_id.clone(),
            fork,
        )
        .add("session/export", export)
        .advertised_by("exportFormats")
        .add("session/buildContext", build_context)
        .add("session/buildContextEntries", build_context_entries)
        .add("session/getTree", get_tree)
        .add("session/getEntry", get_entry)
        .add("session/getEntries", get_entries)
        .add("session/getChildren", get_children)
        .add("session/getBranch", get_branch)
        .add("session/getInfo", get_info)
        .add("session/getContextUsage", get_context_usage)
        .advertised_by("compaction")
        .add("session/prepareCompaction", prepare_compaction)
        .advertised_by("compaction")
        .add_serial(
            "session/compact",
            |p: &wire::CompactParams| p.session_id.clone(),
            compact,
        )
        .advertised_by("compaction")
        .declare::<wire::BeforeTreeHook>()
        .declare::<wire::BeforeForkHook>()
        .declare::<wire::BeforeCompactHook>()
        .announce::<wire::TreeNotification>()
        .announce::<wire::CompactNotification>()
        .announce::<wire::ChangedNotification>()
        .announce::<wire::WatchEndedNotification>()
        .announce::<wire::StoreChangedNotification>()
        .announce::<wire::ProgressNotification>();
}
