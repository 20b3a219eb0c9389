//! Stopping the server: why it stopped, and the handle that asks it to from outside the
//! protocol (signals, the parent watch).

use std::fmt;

use tokio::sync::mpsc;

/// Why the server stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The client sent `exit`.
    Exit,
    /// The input ended.
    EndOfInput,
    /// Reading the input failed.
    InputError(String),
    /// A signal (SIGTERM, SIGINT) asked the server to stop.
    Signal(&'static str),
    /// The process named by `initialize.processId` died.
    ParentDied(i32),
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Exit => f.write_str("exit notification"),
            StopReason::EndOfInput => f.write_str("end of input"),
            StopReason::InputError(error) => write!(f, "input error: {error}"),
            StopReason::Signal(name) => write!(f, "signal {name}"),
            StopReason::ParentDied(pid) => write!(f, "parent process {pid} died"),
        }
    }
}

/// Asks a running server to stop, from outside the protocol (signals, the parent watch).
#[derive(Clone)]
pub struct StopHandle(pub(super) mpsc::UnboundedSender<StopReason>);

impl StopHandle {
    /// Requests the graceful way out; a second request stops waiting for running requests.
    pub fn stop(&self, reason: StopReason) {
        // The server may be gone already; then there is nothing to stop.
        let _ = self.0.send(reason);
    }
}
