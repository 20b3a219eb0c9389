//! Backpressure: how much work the server has taken on, and when it takes on more.
//!
//! Two things grow with what a client sends: requests read and not yet answered (each holds
//! its params and a task), and output queued for a client that does not read it. Past either
//! bound the reader stops starting new requests; it keeps reading into a small read-ahead
//! buffer so that hook answers and `$/cancelRequest` are still acted on, and stops reading
//! altogether when that buffer is full. The client then sees its writes block, nothing else.

use std::sync::atomic::{AtomicUsize, Ordering};

use std::sync::Arc;

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// The bounds; see `protocol/protocol.md`, "Backpressure".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Requests read and not yet answered, above which no new request is started.
    pub max_pending_requests: usize,
    /// Bytes of output not yet written to the client, above which no new request is started.
    pub max_unsent_bytes: usize,
    /// Messages read ahead (and held, not started) while over a bound.
    pub read_ahead_messages: usize,
    /// Bytes of messages read ahead while over a bound (at least one message is always held).
    pub read_ahead_bytes: usize,
    /// Requests doing their work at once (a request waiting for its session's turn does not
    /// count); each starts only while the unsent output is under its bound, so the output
    /// beyond that bound is at most this many answers.
    pub max_running_requests: usize,
}

/// Requests read and not answered that start without waiting.
pub const DEFAULT_MAX_PENDING_REQUESTS: usize = 32_768;
/// Output bytes waiting for the client that do not hold anything back.
pub const DEFAULT_MAX_UNSENT_BYTES: usize = 16 * 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pending_requests: DEFAULT_MAX_PENDING_REQUESTS,
            max_unsent_bytes: DEFAULT_MAX_UNSENT_BYTES,
            read_ahead_messages: 1024,
            read_ahead_bytes: 8 * 1024 * 1024,
            max_running_requests: 32,
        }
    }
}

/// The current load against the [`Limits`], shared by the reader, the writer and the requests.
#[derive(Debug)]
pub(crate) struct Pressure {
    limits: Limits,
    pending: AtomicUsize,
    unsent: AtomicUsize,
    relieved: Notify,
    running: Arc<Semaphore>,
}

impl Pressure {
    pub(crate) fn new(limits: Limits) -> Self {
        Pressure {
            limits,
            pending: AtomicUsize::new(0),
            unsent: AtomicUsize::new(0),
            relieved: Notify::new(),
            running: Arc::new(Semaphore::new(limits.max_running_requests.max(1))),
        }
    }

    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Whether new requests must wait.
    pub(crate) fn is_over(&self) -> bool {
        self.pending.load(Ordering::SeqCst) >= self.limits.max_pending_requests
            || self.unsent.load(Ordering::SeqCst) >= self.limits.max_unsent_bytes
    }

    pub(crate) fn request_started(&self) {
        self.pending.fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn request_answered(&self) {
        let before = self.pending.fetch_sub(1, Ordering::SeqCst);
        if before >= self.limits.max_pending_requests {
            self.relieved.notify_waiters();
        }
    }

    pub(crate) fn output_queued(&self, bytes: usize) {
        self.unsent.fetch_add(bytes, Ordering::SeqCst);
    }

    pub(crate) fn output_written(&self, bytes: usize) {
        let before = self.unsent.fetch_sub(bytes, Ordering::SeqCst);
        if before >= self.limits.max_unsent_bytes {
            self.relieved.notify_waiters();
        }
    }

    /// Resolves once new requests may start.
    pub(crate) async fn relieved(&self) {
        self.wait_until(|| !self.is_over()).await
    }

    /// Waits for a place among the running requests and for the unsent output to be under
    /// its bound; the request does its work while it holds the permit.
    pub(crate) async fn admit(&self) -> OwnedSemaphorePermit {
        let permit = match self.running.clone().acquire_owned().await {
            Ok(permit) => permit,
            // Never closed; an unlimited permit would do no harm either.
            Err(_) => unreachable!("the running-requests semaphore is never closed"),
        };
        let bound = self.limits.max_unsent_bytes;
        self.wait_until(|| self.unsent.load(Ordering::SeqCst) < bound)
            .await;
        permit
    }

    /// Resolves once the unsent output is under its bound.
    pub(crate) async fn output_room(&self) {
        let bound = self.limits.max_unsent_bytes;
        self.wait_until(|| self.unsent.load(Ordering::SeqCst) < bound)
            .await
    }

    async fn wait_until(&self, ready: impl Fn() -> bool) {
        loop {
            // Registered before the check, so a relief between the two is not missed.
            let woken = self.relieved.notified();
            if ready() {
                return;
            }
            woken.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test]
    async fn over_either_bound_until_relieved() {
        let limits = Limits {
            max_pending_requests: 2,
            max_unsent_bytes: 10,
            ..Limits::default()
        };
        let pressure = Arc::new(Pressure::new(limits));
        pressure.request_started();
        assert!(!pressure.is_over());
        pressure.request_started();
        assert!(pressure.is_over());
        let waiter = tokio::spawn({
            let pressure = pressure.clone();
            async move { pressure.relieved().await }
        });
        tokio::task::yield_now().await;
        pressure.output_queued(20);
        pressure.request_answered();
        assert!(pressure.is_over(), "output is still over");
        assert!(!waiter.is_finished());
        pressure.output_written(20);
        waiter.await.unwrap();
        assert!(!pressure.is_over());
    }
}
