//! The `session/*` methods over the store: the registry of open sessions, the wire types,
//! and the handlers.

mod entry;
mod error;
mod handlers;
mod registry;
pub mod wire;

use crate::rpc::{BoxFuture, ClientSettings, Methods, RpcError, ServerState};

pub use error::error_code;
pub use registry::Registry;

/// The sidecar's state.
#[derive(Debug, Default)]
pub struct Sidecar {
    pub registry: Registry,
}

impl ServerState for Sidecar {
    fn on_initialize(&self, settings: &ClientSettings) -> Result<(), RpcError> {
        self.registry.configure(settings)
    }

    fn on_close(&self) -> BoxFuture<'_, ()> {
        self.registry.close_all();
        Box::pin(std::future::ready(()))
    }
}

/// Every `session/*` method, hook and notification. Changes to one session run in arrival
/// order (`add_serial`, keyed by session id); reads run beside them.
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
        .add("session/delete", delete)
        .add_serial("session/close", by_session, close)
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
        .add("session/buildContext", build_context)
        .add("session/buildContextEntries", build_context_entries)
        .add("session/getTree", get_tree)
        .add("session/getEntry", get_entry)
        .add("session/getEntries", get_entries)
        .add("session/getChildren", get_children)
        .add("session/getBranch", get_branch)
        .add("session/getInfo", get_info)
        .declare_hook("session_before_tree")
        .declare_hook("session_before_fork")
        .declare_notification("session_tree");
}
