//! The JSON-RPC stdio sidecar: framing, the reader, the single writer, the lifecycle, dispatch,
//! hooks (server -> client requests) and notifications. The wire contract is
//! `protocol/protocol.md`.
//!
//! The seam for the application: implement [`ServerState`] for the state, register methods in
//! a [`Methods`] table ([`Methods::add`] for reads, [`Methods::add_serial`] for changes to one
//! session, [`Methods::add_notification`]), and serve it with [`Server`]. Methods receive a
//! [`RequestContext`] that reaches the state, the settings from `initialize`, notifications
//! ([`RequestContext::notify`]) and hooks ([`RequestContext::hook`]). The sidecar's own table is
//! built in [`sidecar`].

mod cancel;
mod error;
mod framing;
mod hooks;
mod lifecycle;
mod logging;
mod memory;
mod message;
mod methods;
mod parent_watch;
mod pressure;
mod request_context;
pub mod schema;
pub mod serial;
mod server;
pub mod sessions;
pub mod sidecar;
mod stdio;
mod writer;

pub use cancel::CancelToken;
pub use error::{IntoRpcError, RpcError, code};
pub use framing::{
    DEFAULT_MAX_FRAME_BYTES, Frame, FrameReader, Framing, FramingDecision, WireFraming,
    encode_frame,
};
pub use hooks::HookOutcome;
pub use lifecycle::{
    Capabilities, ClientInfo, ClientSettings, DEFAULT_HOOK_TIMEOUT_MS, Deterministic,
    InitializeParams, InitializeResult, PROTOCOL_VERSION, SERVER_NAME, ServerInfo, ServerOptions,
};
pub use logging::init_logging;
pub use memory::release_freed_memory;
pub use methods::{BUILTIN_NOTIFICATIONS, BUILTIN_REQUESTS, Methods, NoParams, parse_params};
pub use pressure::{DEFAULT_MAX_PENDING_REQUESTS, DEFAULT_MAX_UNSENT_BYTES, Limits};
pub use request_context::{BoxFuture, RequestContext, ServerHandle, ServerState};
pub use server::{ServeOutcome, Server, Signals, StopHandle, StopReason};
pub use stdio::{StdioArgs, serve_stdio};

/// jsonrpc-core's id type, as methods see it in [`RequestContext::request_id`].
pub use jsonrpc_core::Id;
