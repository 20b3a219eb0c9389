//! `session/watchStore` and `session/unwatchStore`: the store's live feed ([`crate::ops::Feed`])
//! told to the client as `store_changed` notifications, each watch running the one follow loop
//! ([`crate::ops::follow`]) over a watch of the sessions root. A look brings the store index up
//! to date and tells what its change log holds after the watch's cursor; it waits while the
//! client's unread output is over its bound, and tells at most [`EVENTS_PER_LOOK`] events
//! before waiting again, so a client that stops reading holds a bounded amount. A look that
//! fails (the index locked past its wait, a full disk) is logged and tried again at the next
//! wake, the cursor where it was: nothing is lost or told twice.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex, PoisonError};

use crate::jsonrpc::{Raw, RpcError, ServerHandle};
use crate::ops::{Feed, FeedInput, FollowedFiles, OpError, StoreEvent};
use crate::store::tree_watch::{TreeWatch, WatchMode};

use super::Sidecar;
use super::threads::{Ctx, blocking};
use super::wire::{
    StoreChangedNotification, UnwatchStoreParams, UnwatchStoreResult, WatchStoreParams,
    WatchStoreResult,
};

/// At most this many events are sent before the output's room is waited for again.
const EVENTS_PER_LOOK: usize = 64;

/// The connection's store watches, by id.
#[derive(Default)]
pub(crate) struct StoreWatches {
    active: Mutex<HashMap<String, Running>>,
    next: Mutex<u64>,
}

impl std::fmt::Debug for StoreWatches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreWatches")
            .field("active", &self.active().keys().collect::<Vec<_>>())
            .finish()
    }
}

/// A watch: its OS watch (ended when dropped) and its task.
struct Running {
    task: tokio::task::JoinHandle<()>,
    _watch: TreeWatch,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl StoreWatches {
    fn active(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        self.active.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn end(&self, id: &str) -> bool {
        self.active().remove(id).is_some()
    }

    pub(crate) fn end_all(&self) {
        let all = std::mem::take(&mut *self.active());
        drop(all);
    }
}

/// Why a look stopped before the end of the log.
enum Stop {
    /// Enough sent for now: the output's room is waited for, then the look goes on.
    Paused,
    Failed(OpError),
}

impl From<OpError> for Stop {
    fn from(e: OpError) -> Self {
        Stop::Failed(e)
    }
}

pub(crate) async fn watch_store(
    ctx: Ctx,
    p: WatchStoreParams,
) -> Result<WatchStoreResult, RpcError> {
    let input = FeedInput {
        profile: p.profile,
        cwd: p.cwd,
        dir: p.dir,
        since: p.since,
    };
    let poll = p.poll;
    // The feed is placed (and the index brought up to date) before the answer; the root is
    // watched from before the first look, so nothing between is missed.
    let (feed, watch) = super::threads::in_scope(&ctx, move |scope, _| {
        let feed = Feed::open(scope, input).map_err(|e| match e {
            OpError::InvalidParams(message) => {
                OpError::store(crate::store::ErrorKind::InvalidArgument, message)
            }
            other => other,
        })?;
        let watch = TreeWatch::new(feed.root(), poll)?;
        Ok((feed, watch))
    })
    .await?;
    let watches = &ctx.state().store_watches;
    let watch_id = {
        let mut next = watches.next.lock().unwrap_or_else(PoisonError::into_inner);
        *next += 1;
        format!("store-{next}")
    };
    let cursor = feed.cursor();
    let polled = matches!(watch.mode, WatchMode::Poll(_));
    let task = tokio::spawn(run(
        ctx.server().clone(),
        watch_id.clone(),
        Arc::new(Mutex::new(feed)),
        watch.changes(),
    ));
    watches.active().insert(
        watch_id.clone(),
        Running {
            task,
            _watch: watch,
        },
    );
    Ok(WatchStoreResult {
        watch_id,
        cursor,
        polled,
    })
}

pub(crate) async fn unwatch_store(
    ctx: Ctx,
    p: UnwatchStoreParams,
) -> Result<UnwatchStoreResult, RpcError> {
    Ok(UnwatchStoreResult {
        ended: ctx.state().store_watches.end(&p.watch_id),
    })
}

async fn run(
    server: ServerHandle<Sidecar>,
    id: String,
    feed: Arc<Mutex<Feed>>,
    changes: crate::store::watch::Changes,
) {
    if look(&server, &id, &feed).await.is_break() {
        return;
    }
    let followed = FollowedFiles::one((), changes);
    crate::ops::follow(&followed, |()| look(&server, &id, &feed)).await
}

/// Tells what the log holds after the cursor, in bounded pieces.
async fn look(
    server: &ServerHandle<Sidecar>,
    id: &str,
    feed: &Arc<Mutex<Feed>>,
) -> ControlFlow<()> {
    loop {
        server.output_room().await;
        let (server_, id_, feed_) = (server.clone(), id.to_string(), feed.clone());
        let looked = blocking(move || {
            let mut feed = feed_.lock().unwrap_or_else(PoisonError::into_inner);
            let mut sent = 0;
            let outcome = feed.step(|event: StoreEvent| {
                if sent == EVENTS_PER_LOOK {
                    return Err(Stop::Paused);
                }
                sent += 1;
                let notification = StoreChangedNotification::new(id_.clone(), event);
                let text = serde_json::to_string(&notification)
                    .map_err(|e| Stop::Failed(OpError::Internal(e.to_string())))?;
                server_.send_raw(Raw::<StoreChangedNotification>::new(text));
                Ok(())
            });
            Ok(match outcome {
                Ok(()) => None,
                Err(Stop::Paused) => Some(None),
                Err(Stop::Failed(e)) => Some(Some(RpcError::from(e).message().to_string())),
            })
        })
        .await;
        let failure = match looked {
            Ok(None) => return ControlFlow::Continue(()),
            Ok(Some(None)) => continue,
            Ok(Some(Some(message))) => message,
            Err(e) => e.message().to_string(),
        };
        // The index locked by another process's long build, a full disk: the watch stays, its
        // cursor where it was, and looks again at the next wake (or the next poll).
        tracing::warn!("store watch {id}: {failure}; trying again at the next change");
        return ControlFlow::Continue(());
    }
}
