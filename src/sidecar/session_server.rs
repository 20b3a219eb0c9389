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

/// The sidecar under the process's configuration, ready to serve.
pub fn server(options: ServerOptions) -> Server<Sidecar> {
    Server::new(Sidecar::default(), methods(), options)
}

/// The sidecar under `config` (the command line's, with its flags), or the reason the
/// configuration could not be read.
pub(crate) fn server_with(
    options: ServerOptions,
    config: Result<crate::ops::Config, crate::repo::RepoError>,
) -> Server<Sidecar> {
    Server::new(Sidecar::with_config(config), methods(), options)
}
