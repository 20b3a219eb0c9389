//! The session server, put together: the sidecar's state (the registry of open sessions) and
//! its `session/*` method table over the generic JSON-RPC server. What `pi-session --stdio`
//! serves and the transcript tests play against.

pub use super::Sidecar;
use crate::jsonrpc::{Methods, Server, ServerOptions};

/// The sidecar's methods beside the lifecycle.
pub fn methods() -> Methods<Sidecar> {
    let mut methods = Methods::new();
    super::register(&mut methods);
    methods
}

/// The sidecar, ready to serve.
pub fn server(options: ServerOptions) -> Server<Sidecar> {
    server_with(options, None)
}

/// The sidecar under `config` (`None`: the process's, read at the first need).
pub(crate) fn server_with(
    options: ServerOptions,
    config: Option<crate::ops::Config>,
) -> Server<Sidecar> {
    let sidecar = match config {
        Some(config) => Sidecar::with_config(config),
        None => Sidecar::default(),
    };
    Server::new(sidecar, methods(), options)
}
