#![warn(missing_docs)]

//! pi-session: pi-compatible session files, served over JSON-RPC.
//!
//! Layers, data flowing one way: `format` (one JSONL line <-> one entry) -> `store` (one
//! session and its file) -> `repo` (sessions directories) -> `ops` (every session operation
//! and its policy, with the configuration read once) -> `sidecar` (the `session/*` methods over
//! the `jsonrpc` transport, which knows no sessions) and `cli` (the command line); `transcript` plays scripted exchanges with the sidecar (for
//! `pi-session test` and the project's own tests).
//!
//! What an embedder uses: open or create a [`Session`] with [`SessionOptions`] (its
//! [`Profile`] says which pi it reads and writes like), query it ([`Session::build_context`],
//! [`Session::tree_rows`], ...), list sessions directories with a [`Repo`], or serve the
//! JSON-RPC sidecar with [`serve_stdio`]. The modules: [`session`] (one file), [`json`] (its
//! values as JavaScript sees them), [`compaction`] (pi's compaction helpers), [`listing`]
//! (sessions directories), [`store_index`] (search and statistics over a whole store),
//! [`jsonrpc`] (the transport), [`sidecar`] (the `session/*` methods on it) and
//! [`transcript`] (scripted exchanges). Everything else is `pub(crate)`; `docs/design.md`
//! ("Embedding") says why each is public.

mod catalog;
mod cli;
mod export;
mod format;
#[cfg(test)]
mod import_graph;
mod inspect;
pub mod jsonrpc;
mod ops;
mod repo;
pub mod sidecar;
mod store;
pub mod transcript;

pub use cli::run as run_cli;
pub use format::json::JsValue;
pub use format::profile::Profile;
pub use repo::{CachePolicy, Listing, MessagesText, PathEnv, Repo, RepoError, SessionInfo};
pub use sidecar::{StdioArgs, serve_stdio};
pub use store::{
    Context, ErrorKind, ForkPosition, MessageFormat, NewSession, Session, SessionOptions,
    SessionStats, StoreError, TreeRow, Warning,
};

pub use format::json;
pub use store::compaction;

/// One session file: open or create a [`Session`], append entries, move its leaf, fork it,
/// and read its tree, branch and context the way pi does.
pub mod session {
    pub use crate::format::entry_id::EntryId;
    pub use crate::format::entry_input::parse_new_entry;
    pub use crate::format::ids::{EntryIdStyle, IdSource};
    pub use crate::format::time::parse_date_millis;
    pub use crate::format::write::NewEntry;
    pub use crate::inspect::check_file;
    pub use crate::store::{
        Context, ContextMessage, ErrorKind, ForkPosition, Leaf, MessageFormat, NavigationOutcome,
        NewSession, Record, Session, SessionOptions, SessionStats, StoreError, StoreResult,
        SummaryInput, TreeDecision, TreeFacts, TreeHookAnswer, TreePreparation, TreeRequest,
        TreeRow, Unsynced, Warning, decide, model_summary,
    };
}

/// Sessions directories as pi lays them out: list them ([`Repo`]), with the listing cache
/// pi-session keeps beside them, and pi's file names, settings and date rules.
pub mod listing {
    pub use crate::repo::search::{NameFilter, SearchQuery, SearchSort};
    pub use crate::repo::{
        CACHE_FILE_NAME, CachePolicy, HarnessListing, HarnessSession, HarnessSkip,
        INVALID_SESSION_ID_MESSAGE, ListField, ListSelection, Listing, MessagesText, PathEnv,
        Pi16Feature, Pi16Mark, Pi16Note, Repo, RepoError, SessionInfo, SkipReason, parse_date,
        render, session_file_name, settings_session_dir, summary_settings, validate_session_id,
    };
}

/// The store-wide operations over every session of a store, read through its index (a
/// SQLite file, kept up to date on each call): full-text search and usage statistics.
pub mod store_index {
    pub use crate::catalog::{Progress, Quiet};
    pub use crate::ops::{
        Config, OpError, Scope, SearchHit, SearchInput, SearchOutput, StatsInput, StatsOutput,
        StoreScope, search, stats,
    };
}
