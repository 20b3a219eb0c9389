//! What `pi-session --stdio` serves: the state and the method table of the real sidecar.
//!
//! The session methods (`session/*`), their hooks (`session_before_tree`,
//! `session_before_fork`) and notifications (`session_tree`) are registered in [`methods`];
//! the session registry becomes [`Sidecar`]'s contents, closed in its `on_close`.

use super::context::ServerState;
use super::lifecycle::ServerOptions;
use super::methods::Methods;
use super::server::Server;

/// The sidecar's state. Empty until the session store is wired in.
#[derive(Debug, Default)]
pub struct Sidecar {}

impl ServerState for Sidecar {}

/// The sidecar's methods beside the lifecycle (none yet: `session/*` goes here).
pub fn methods() -> Methods<Sidecar> {
    Methods::new()
}

/// The sidecar, ready to serve.
pub fn server(options: ServerOptions) -> Server<Sidecar> {
    Server::new(Sidecar::default(), methods(), options)
}
