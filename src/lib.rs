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
//! JSON-RPC sidecar with [`serve_stdio`]. Everything else is internal.

mod catalog;
mod cli;
mod export;
mod format;
#[cfg(test)]
mod import_graph;
mod inspect;
mod jsonrpc;
mod ops;
mod repo;
mod sidecar;
mod store;
mod transcript;

pub use cli::run as run_cli;
pub use format::json::JsValue;
pub use format::profile::Profile;
pub use repo::{CachePolicy, Listing, MessagesText, PathEnv, Repo, RepoError, SessionInfo};
pub use sidecar::{StdioArgs, serve_stdio};
pub use store::{
    Context, ErrorKind, ForkPosition, MessageFormat, NewSession, Session, SessionOptions,
    SessionStats, StoreError, TreeRow, Warning,
};

/// For this package's own tests and benchmarks: the pieces they check one by one. Not part
/// of the API; no stability is promised.
#[doc(hidden)]
pub mod internal {
    pub mod format {
        pub use crate::format::{entry_input, ids, json, profile, time, write};
    }
    pub mod ops {
        pub use crate::ops::*;
    }
    pub mod catalog {
        pub use crate::catalog::*;
    }
    pub mod inspect {
        pub use crate::inspect::{LeafChoice, ReplayOutcome, check_file};
    }
    pub mod repo {
        pub use crate::repo::{
            CACHE_FILE_NAME, CachePolicy, INVALID_SESSION_ID_MESSAGE, ListField, ListSelection,
            Listing, PathEnv, Pi16Feature, Pi16Mark, Pi16Note, Repo, RepoError, SESSION_DIR_ENV,
            SessionInfo, SkipReason, fork_file, parse_date, paths, render, search,
            session_file_name, settings_session_dir, summary_settings, validate_session_id,
        };
    }
    pub mod rpc {
        pub use crate::jsonrpc::{
            BoxFuture, ClientSettings, Frame, FrameReader, Framing, HookOutcome, Methods, Nothing,
            PROTOCOL_VERSION, RequestContext, RpcError, ServeOutcome, Server, ServerOptions,
            ServerState, StopHandle, StopReason, WireFraming, encode_frame,
        };
        pub use crate::sidecar::{StdioArgs, schema, serve_stdio, session_server};
    }
    pub mod transcript {
        pub use crate::transcript::*;
    }
    pub mod store {
        pub use crate::store::compaction;
        pub use crate::store::{
            ErrorKind, ForkPosition, Leaf, MessageFormat, NewSession, Session, SessionOptions,
            StoreError, SummaryInput, TreeDecision, TreeHookAnswer, TreeRequest, decide,
            model_summary,
        };
    }
}
