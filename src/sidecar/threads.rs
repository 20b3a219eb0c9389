//! Where the sidecar's work runs: the one threading policy of the server, for every method.
//!
//! - The event loop reads requests, writes answers and runs quick changes: a change of a
//!   session ([`Hold::Change`], [`Hold::Commit`]) runs on the loop when the session is free,
//!   not durable, and nothing another program appended waits to be read.
//! - Blocking threads run everything else: reads of a session ([`Hold::Read`]), which may be
//!   long; changes the loop could not take; work without an open session ([`in_scope`]);
//!   syncs; a watch's look; dropping a closed session.
//! - Group commit: a request's last change of a durable session ([`Hold::Commit`]) is written
//!   under the session's lock and synced outside it, with the next request for the session let
//!   in, so changes queued behind a sync share the next one; the answer still waits for its
//!   sync (unless the configuration turns group commit off).
//!
//! Every step first reads what another program appended and tells the client of it.

use crate::jsonrpc::{RequestContext, RpcError};
use crate::ops::{Hold, OpError, Scope, SessionAccess};
use crate::store::Session;

use super::Sidecar;
use super::registry::lock;

/// What a method of the sidecar is given.
pub(crate) type Ctx = RequestContext<Sidecar>;

/// Runs blocking store work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, RpcError> + Send + 'static,
) -> Result<T, RpcError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| RpcError::internal(format!("store task failed: {e}")))?
}

/// Runs an operation that needs no open session off the async threads, in the sidecar's scope.
pub(crate) async fn in_scope<T: Send + 'static>(
    ctx: &Ctx,
    work: impl FnOnce(&Scope, &Ctx) -> Result<T, OpError> + Send + 'static,
) -> Result<T, RpcError> {
    let scope = ctx.state().registry.scope()?.clone();
    let ctx = ctx.clone();
    blocking(move || Ok(work(&scope, &ctx)?)).await
}

/// A registered session, as the operations hold it: reads on a blocking thread, quick changes
/// on the event loop when the session is free, and every step after what another program
/// appended was read.
pub(crate) struct Held<'a> {
    pub(crate) ctx: &'a Ctx,
    pub(crate) id: &'a str,
}

impl SessionAccess for Held<'_> {
    type Error = RpcError;

    async fn with<T: Send + 'static>(
        &self,
        turn: Hold,
        work: impl FnOnce(&mut Session) -> Result<T, OpError> + Send + 'static,
    ) -> Result<T, RpcError> {
        let work = move |session: &mut Session| work(session).map_err(RpcError::from);
        match turn {
            Hold::Read => with_session(self.ctx, self.id, work).await,
            Hold::Change => quick(self.ctx, self.id, false, work).await,
            Hold::Commit => quick(self.ctx, self.id, true, work).await,
        }
    }
}

/// Runs a change of one session on the event loop when the session is free and not durable,
/// else (a long read holds it, or a sync is due) on a blocking thread, so the loop never waits
/// for a lock. `commit`: the request's last change; on a durable session it is written under
/// the session's lock and synced outside it, with the next request for the session already let
/// in, so changes that queue behind a sync share the next one (group commit). The answer still
/// waits for the sync that covers it, and for the answers before it.
pub(crate) async fn quick<T: Send + 'static>(
    ctx: &Ctx,
    id: &str,
    commit: bool,
    work: impl FnOnce(&mut Session) -> Result<T, RpcError> + Send + 'static,
) -> Result<T, RpcError> {
    let cell = ctx.state().registry.get(id)?;
    {
        let free = match cell.try_lock() {
            Ok(session) => Some(session),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        };
        // A durable change syncs before it returns, and another program's appends must be
        // read first: neither on the loop.
        if let Some(mut session) = free.filter(|session| !session.is_durable())
            && !session.tail_grew()?
            && !session.has_foreign()
        {
            return work(&mut session);
        }
    }
    let ctx = ctx.clone();
    let id = id.to_owned();
    blocking(move || {
        if !commit {
            return work(current(&ctx, &id, &mut lock(&cell))?);
        }
        let (value, unsynced) = current(&ctx, &id, &mut lock(&cell))?.with_sync_deferred(work)?;
        ctx.start_next_in_line();
        unsynced.wait()?;
        Ok(value)
    })
    .await
}

/// Runs a read of one session on a blocking thread, so a large read never holds up the
/// messages behind it.
pub(crate) async fn with_session<T: Send + 'static>(
    ctx: &Ctx,
    id: &str,
    work: impl FnOnce(&mut Session) -> Result<T, RpcError> + Send + 'static,
) -> Result<T, RpcError> {
    let cell = ctx.state().registry.get(id)?;
    let ctx = ctx.clone();
    let id = id.to_owned();
    blocking(move || work(current(&ctx, &id, &mut lock(&cell))?)).await
}

/// The session with what another program appended since it was last read (pi takes no lock):
/// every read and change sees the file as it is now, and the client hears of new entries
/// (`session_changed`) before the answer that includes them.
fn current<'a>(ctx: &Ctx, id: &str, session: &'a mut Session) -> Result<&'a mut Session, RpcError> {
    session.follow_tail()?;
    super::changed::report_foreign(ctx.server(), id, session)?;
    Ok(session)
}
