//! How the front door that runs an operation holds an open session ([`SessionAccess`]); how
//! the client answers a hook is [`super::Hooks`].

use std::future::Future;
#[cfg(test)]
use std::sync::Mutex;

use crate::store::Session;

use super::error::OpError;

/// How a step holds the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hold {
    /// A read, or a step after which more of the request follows.
    Read,
    /// A quick change after which more of the request follows: it keeps its turn throughout.
    Change,
    /// The request's last change, after which it only answers: on a durable session the next
    /// change of the session may be let in before this one's sync, so that both share the next
    /// sync (group commit). The answer still waits for the sync that covers it.
    Commit,
}

/// How a front door holds one open session while a step of an operation works on it. The
/// server runs a step on a blocking thread, after reading what another program appended; a
/// hook is never awaited while a session is held, so reads during a hook never wait for it.
pub(crate) trait SessionAccess: Sync {
    /// The door's own error, into which an operation's errors go.
    type Error: From<OpError> + Send + 'static;

    fn with<T: Send + 'static>(
        &self,
        turn: Hold,
        work: impl FnOnce(&mut Session) -> Result<T, OpError> + Send + 'static,
    ) -> impl Future<Output = Result<T, Self::Error>> + Send;
}

/// A session held by a plain mutex, each step run where it is called: for one process working
/// on one session (this module's tests). Durable changes sync before they return.
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct Local(pub Mutex<Session>);

#[cfg(test)]
impl Local {
    pub(crate) fn new(session: Session) -> Local {
        Local(Mutex::new(session))
    }

    pub(crate) fn into_inner(self) -> Session {
        self.0.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
impl SessionAccess for Local {
    type Error = OpError;

    async fn with<T: Send + 'static>(
        &self,
        _: Hold,
        work: impl FnOnce(&mut Session) -> Result<T, OpError> + Send + 'static,
    ) -> Result<T, OpError> {
        let mut session = self.0.lock().unwrap_or_else(|p| p.into_inner());
        work(&mut session)
    }
}
