//! The JSON-RPC transport: framing, the reader, the single writer, the lifecycle, dispatch,
//! cancellation, backpressure, hooks (server -> client requests) and notifications. It knows
//! no sessions (the import-graph test holds it to that); the wire contract is
//! `protocol/protocol.md`.
//!
//! The seam for the application: implement [`ServerState`] for the state (with its own members
//! of `initialize`'s settings and capabilities), register methods in a [`Methods`] table
//! ([`Methods::add`] for reads, [`Methods::add_serial`] for changes to one session,
//! [`Methods::add_notification`], [`Methods::declare`] for a [`Hook`], [`Methods::announce`]
//! for a [`ServerNotification`]), and serve it with [`Server`]. Methods receive a
//! [`RequestContext`] that reaches the state, the settings from `initialize`, notifications
//! ([`RequestContext::send`]) and hooks ([`RequestContext::ask`]). The session application
//! plugged into it is [`crate::sidecar`].

mod cancel;
pub(crate) mod error;
mod framing;
mod hooks;
mod lifecycle;
pub(crate) mod logging;
mod message;
mod methods;
mod outgoing;
mod parent_watch;
mod pressure;
mod request_context;
pub(crate) mod serial;
mod server;
mod stop;
mod writer;

pub use error::{IntoRpcError, RpcError};
pub use framing::{
    DEFAULT_MAX_FRAME_BYTES, Frame, FrameReader, Framing, WireFraming, encode_frame,
};
pub use hooks::HookOutcome;
pub use lifecycle::{
    ClientSettings, Deterministic, InitializeParams, InitializeResult, PROTOCOL_VERSION,
    ServerOptions,
};
pub use methods::{Message, Methods, SchemaOf};
pub use outgoing::{Hook, ServerNotification};
pub use request_context::{BoxFuture, Nothing, Raw, RequestContext, ServerHandle, ServerState};
pub use server::{ServeOutcome, Server, Signals};
pub use stop::{StopHandle, StopReason};
