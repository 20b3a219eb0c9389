//! `session/watch` and `session/unwatch`: one watch per session, each running the follow loop
//! ([`crate::ops::follow`]).
//!
//! A watch wakes on the OS's word that the file changed ([`crate::store::watch`]); it then
//! does what a request does with a grown file (the one follower,
//! [`crate::store::Session::follow_tail`]) and tells the client of the entries other programs
//! appended (`session_changed`, [`super::changed`]). It takes the session's turn
//! among its changes first, so its notification never overtakes the answer of a change made
//! before it, and it waits while the client's unread output is over its bound, so a client
//! that stops reading holds at most one notification per watched session.

use std::collections::HashMap;
use std::fmt;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex, PoisonError};

use crate::jsonrpc::{RpcError, ServerHandle};
use crate::ops::{FollowEnd, FollowedFiles, Look};
use crate::store::watch::{Changes, FileWatch, FileWatcher};

use super::Sidecar;
use super::changed::report_foreign;
use super::registry::lock;
use super::wire::{WatchEndReason, WatchEndedNotification};

// ---------------------------------------------------------------------------------------------
// The watches of one connection

/// The connection's watches: at most one per session, all through one [`FileWatcher`].
#[derive(Default)]
pub(crate) struct Watches {
    os: Mutex<Option<Arc<FileWatcher>>>,
    active: Mutex<HashMap<String, Running>>,
}

impl fmt::Debug for Watches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watches")
            .field("active", &self.active().keys().collect::<Vec<_>>())
            .finish()
    }
}

/// A watch: its OS watch, ended when this is dropped (at once, not when the runtime gets to
/// the aborted task), and its task.
struct Running {
    task: tokio::task::JoinHandle<()>,
    _watch: FileWatch,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Watches {
    fn active(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        self.active.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn watcher(&self) -> Result<Arc<FileWatcher>, RpcError> {
        let mut os = self.os.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(watcher) = os.as_ref() {
            return Ok(watcher.clone());
        }
        let watcher = Arc::new(FileWatcher::new()?);
        *os = Some(watcher.clone());
        Ok(watcher)
    }

    pub(crate) fn is_watched(&self, id: &str) -> bool {
        self.active().contains_key(id)
    }

    /// Starts watching session `id`'s file at `path` (the caller checked it is not watched).
    pub(crate) fn start(
        &self,
        server: ServerHandle<Sidecar>,
        id: &str,
        path: &std::path::Path,
    ) -> Result<(), RpcError> {
        let watch = self.watcher()?.watch(path)?;
        let task = tokio::spawn(run(server, id.to_owned(), watch.changes()));
        self.active().insert(
            id.to_owned(),
            Running {
                task,
                _watch: watch,
            },
        );
        Ok(())
    }

    /// Ends session `id`'s watch; whether there was one.
    pub(crate) fn end(&self, id: &str) -> bool {
        let running = self.active().remove(id);
        running.is_some()
    }

    /// Ends every watch (the connection is closing).
    pub(crate) fn end_all(&self) {
        let all = std::mem::take(&mut *self.active());
        drop(all);
    }
}

/// What a watch found when it looked.
enum Looked {
    Going,
    Ended,
}

async fn run(server: ServerHandle<Sidecar>, id: String, changes: Changes) {
    let followed = FollowedFiles::one(id, changes);
    crate::ops::follow(&followed, |id| {
        let server = server.clone();
        async move {
            // After every change of the session queued before this look has been answered.
            let turn = server.serial_queues().ticket(id.clone()).turn().await;
            turn.earlier_answered().await;
            server.output_room().await;
            let Ok(cell) = server.state().registry.get(&id) else {
                return ControlFlow::Break(());
            };
            let looker = server.clone();
            let looked = super::threads::blocking(move || Ok(look(&looker, &id, &cell))).await;
            drop(turn);
            match looked {
                Ok(Looked::Going) => ControlFlow::Continue(()),
                Ok(Looked::Ended) | Err(_) => ControlFlow::Break(()),
            }
        }
    })
    .await
}

fn look(server: &ServerHandle<Sidecar>, id: &str, cell: &super::registry::SessionCell) -> Looked {
    let mut session = lock(cell);
    let ended = |reason, message: String| {
        // Forgotten before the client hears of it, so a watch it starts then is a new one
        // (no watch request runs meanwhile: this look holds the session's turn). This task
        // ends with it.
        server.state().watches.end(id);
        server.send(&WatchEndedNotification {
            session_id: id.to_owned(),
            reason,
            message,
        });
        Looked::Ended
    };
    let looked = crate::ops::look(&mut session, RpcError::from, |session, _| {
        report_foreign(server, id, session)
    });
    match looked {
        Ok(Look::Going) => Looked::Going,
        Ok(Look::Ended { reason, message }) => {
            let reason = match reason {
                FollowEnd::Truncated => WatchEndReason::Truncated,
                FollowEnd::Deleted => WatchEndReason::Deleted,
                FollowEnd::Replaced => WatchEndReason::Replaced,
            };
            ended(reason, message)
        }
        Err(e) => ended(WatchEndReason::Error, e.message().to_string()),
    }
}
