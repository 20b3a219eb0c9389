//! The JSON-RPC stdio sidecar: framing, the reader, the single writer, the lifecycle, dispatch,
//! hooks (server -> client requests) and notifications. The wire contract is
//! `protocol/protocol.md`.
//!
//! The seam for the application: implement [`ServerState`] for the state (with its own members
//! of `initialize`'s settings and capabilities), register methods in a [`Methods`] table
//! ([`Methods::add`] for reads, [`Methods::add_serial`] for changes to one session,
//! [`Methods::add_notification`], [`Methods::declare`] for a [`Hook`], [`Methods::announce`]
//! for a [`ServerNotification`]), and serve it with [`Server`]. Methods receive a
//! [`RequestContext`] that reaches the state, the settings from `initialize`, notifications
//! ([`RequestContext::send`]) and hooks ([`RequestContext::ask`]). The session server (the
//! sidecar's state, table and server, put together) is [`session_server`].

mod cancel;
mod error;
mod framing;
mod hooks;
mod lifecycle;
pub(crate) mod logging;
mod memory;
mod message;
mod methods;
mod parent_watch;
mod pressure;
mod request_context;
pub mod schema;
pub mod serial;
mod server;
pub mod session_server;
pub mod sessions;
mod stdio;
mod writer;

pub use error::{IntoRpcError, RpcError};
pub use framing::{Frame, FrameReader, Framing, WireFraming, encode_frame};
pub use hooks::HookOutcome;
pub use lifecycle::{ClientSettings, Deterministic, PROTOCOL_VERSION, ServerOptions};
pub use memory::release_freed_memory;
pub use methods::{Hook, Methods, ServerNotification};
pub use request_context::{BoxFuture, Nothing, Raw, RequestContext, ServerHandle, ServerState};
pub use server::{ServeOutcome, Server, StopHandle, StopReason};
pub(crate) use stdio::serve_stdio_with;
pub use stdio::{StdioArgs, serve_stdio};
