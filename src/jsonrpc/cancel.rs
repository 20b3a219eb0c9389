//! Requests in flight and their cancellation.
//!
//! Every request gets a [`CancelToken`] when it arrives. `$/cancelRequest` from the client sets
//! it; what that does depends on where the request is (see `methods.rs`): waiting requests are
//! dropped and answered -32800, a running change may finish and answer normally.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use jsonrpc_core::Id;
use tokio::sync::Notify;

/// Set once, by the client's `$/cancelRequest` (or never).
#[derive(Clone, Default)]
pub struct CancelToken(Arc<CancelState>);

#[derive(Default)]
struct CancelState {
    cancelled: AtomicBool,
    wake: Notify,
}

impl CancelToken {
    /// Marks the request cancelled and wakes everything waiting on [`CancelToken::cancelled`].
    pub fn cancel(&self) {
        if !self.0.cancelled.swap(true, Ordering::SeqCst) {
            self.0.wake.notify_waiters();
        }
    }

    /// Whether the client has cancelled the request.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// Resolves when the request is cancelled (never, if it is not).
    pub async fn cancelled(&self) {
        loop {
            // Registered before the check, so a cancel between the two is not missed.
            let woken = self.0.wake.notified();
            if self.is_cancelled() {
                return;
            }
            woken.await;
        }
    }
}

/// The client's requests that have not been answered yet.
#[derive(Default)]
pub(crate) struct InFlight {
    requests: Mutex<HashMap<Id, CancelToken>>,
    drained: Notify,
}

impl InFlight {
    fn requests(&self) -> MutexGuard<'_, HashMap<Id, CancelToken>> {
        // A panic never happens while the lock is held; if one did, the map is still whole.
        self.requests.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers request `id`; `None` if a request with that id is still in flight.
    pub(crate) fn begin(&self, id: &Id) -> Option<CancelToken> {
        let mut requests = self.requests();
        if requests.contains_key(id) {
            return None;
        }
        let token = CancelToken::default();
        requests.insert(id.clone(), token.clone());
        Some(token)
    }

    /// Cancels request `id`; false if no such request is in flight (a late or unknown cancel,
    /// which LSP says to ignore).
    pub(crate) fn cancel(&self, id: &Id) -> bool {
        match self.requests().get(id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Removes request `id` and queues its response with `send`, both under the lock: a new
    /// request reusing the id cannot be refused as a duplicate after the client saw the
    /// answer, and [`InFlight::drained`] cannot resolve before the answer is queued.
    pub(crate) fn finish(&self, id: &Id, send: impl FnOnce()) {
        let mut requests = self.requests();
        requests.remove(id);
        send();
        if requests.is_empty() {
            self.drained.notify_waiters();
        }
    }

    /// Resolves once no request is in flight.
    pub(crate) async fn drained(&self) {
        loop {
            let woken = self.drained.notified();
            if self.requests().is_empty() {
                return;
            }
            woken.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn cancel_wakes_waiters_and_sticks() {
        let token = CancelToken::default();
        let waiter = tokio::spawn({
            let token = token.clone();
            async move { token.cancelled().await }
        });
        tokio::task::yield_now().await;
        token.cancel();
        waiter.await.unwrap();
        assert!(token.is_cancelled());
        token.cancelled().await;
    }

    #[tokio::test(start_paused = true)]
    async fn drained_waits_for_the_last_request() {
        let in_flight = Arc::new(InFlight::default());
        in_flight.drained().await;
        assert!(in_flight.begin(&Id::Num(1)).is_some());
        assert!(in_flight.begin(&Id::Num(1)).is_none(), "duplicate id");
        let finisher = tokio::spawn({
            let in_flight = in_flight.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(10)).await;
                in_flight.finish(&Id::Num(1), || {});
            }
        });
        in_flight.drained().await;
        finisher.await.unwrap();
        assert!(!in_flight.cancel(&Id::Num(1)));
        assert!(in_flight.begin(&Id::Num(1)).is_some(), "id free again");
    }
}
