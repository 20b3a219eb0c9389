//! The session operations, between the store and sessions directories below and the two front
//! doors above (`rpc`, the JSON-RPC server, and `cli`, the command line). Each operation is one
//! function with typed input and output, and holds the decisions both doors share: which
//! summary wins in a navigation, what a profile refuses, when a durable change may share its
//! sync, which leaf a context is built at, which listing a profile reads. A front door only
//! translates its own types into these and back.
//!
//! What an operation needs from outside comes in by value or through a port: a [`Scope`]
//! (configuration, sessions directories, ids and clock), a [`SessionAccess`] (how the door
//! holds an open session: the server's locks and group commit, or a plain mutex), and a
//! [`Hooks`] port (how the client answers `session_before_tree`, `session_before_fork` and
//! `session_before_compact`). So every operation runs in a test without a process or JSON.

mod compact;
mod config;
mod context;
mod cursor;
mod durable;
mod edits;
mod error;
mod export;
mod feed;
mod follow;
mod hooks;
mod listing;
mod model_answer;
mod navigate;
mod ports;
mod reads;
mod scope;
mod search;
mod sessions;
mod stats;
mod team;

pub(crate) use compact::{
    CompactInput, Compacted, PrepareCompactionInput, compact, context_usage, plan_document,
    prepare_compaction,
};
pub use config::Config;
pub(crate) use config::{ProcessVars, TeamIndex};
pub(crate) use context::{LeafChoice, build_context, context_entries, leaf};
pub(crate) use cursor::cursor_at;
pub(crate) use edits::{Changed, append, branch, branch_with_summary, reset_leaf};
pub use error::OpError;
pub(crate) use export::{ExportInput, export};
pub(crate) use feed::{EVENT_ENTRIES as FEED_EVENT_ENTRIES, Feed, FeedInput, StoreEvent};
pub(crate) use follow::{FollowEnd, FollowedFiles, Look, follow, look};
pub(crate) use hooks::{
    BeforeCompact, BeforeFork, BeforeTree, CompactHookAnswer, CompactReason, HookCompaction,
    HookReply, Hooks,
};
pub(crate) use listing::{ListInput, Listed, cli_session_dir, find_by_id, list};
pub(crate) use model_answer::{ModelAnswer, summary_text};
pub(crate) use navigate::{NavigateInput, Navigated, navigate, prepare_tree};
#[cfg(test)]
pub(crate) use ports::Local;
pub(crate) use ports::{Hold, SessionAccess};
pub(crate) use reads::{
    EntriesInput, TreeInput, branch_entries, check_tree_input, children, entries, entry_position,
    tree, watch_point,
};
pub use scope::Scope;
pub(crate) use search::DEFAULT_LIMIT;
pub use search::{SearchHit, SearchInput, SearchOutput, StoreScope, search};
pub(crate) use sessions::{
    CreateInput, ForkFromInput, ForkInput, ForkOutcome, OpenInput, PlaceChoice, continue_recent,
    create, delete, fork, fork_file, fork_from, open,
};
pub(crate) use stats::{Figures, GroupBy};
pub use stats::{StatsInput, StatsOutput, stats};
pub(crate) use team::TeamSync;

#[cfg(test)]
mod tests;
