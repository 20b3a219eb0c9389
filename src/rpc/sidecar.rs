//! What `pi-session --stdio` serves: the session registry and the method table.

use super::lifecycle::ServerOptions;
use super::methods::Methods;
use super::server::Server;
pub use super::sessions::Sidecar;

/// The sidecar's methods beside the lifecycle.
pub fn methods() -> Methods<Sidecar> {
    let mut methods = Methods::new();
    super::sessions::register(&mut methods);
    methods
}

/// The sidecar, ready to serve.
pub fn server(options: ServerOptions) -> Server<Sidecar> {
    Server::new(Sidecar::default(), methods(), options)
}
