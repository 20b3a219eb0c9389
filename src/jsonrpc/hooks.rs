//! Hooks: requests from the server to the client, and the answers waiting for them.
//!
//! A hook's id is registered in [`PendingHooks`] before its request is queued, so an answer can
//! never arrive before anyone waits for it. The reader hands each answer straight to the
//! waiting future; answers are never queued behind requests, so a method awaiting a hook
//! cannot deadlock the connection. Server ids are strings `s1`, `s2`, ... and never reused.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use super::error::RpcError;
pub(crate) use super::message::HookAnswer;

/// How a hook ended, as the awaiting method sees it; `A` is the answer's declared type.
#[derive(Debug, Clone, PartialEq)]
pub enum HookOutcome<A> {
    /// The client answered with this result.
    Answered(A),
    /// The client answered with something that is not an `A` (already logged, with why).
    /// Treat as no answer.
    Unfit(String),
    /// The client answered with an error (already logged). Treat as no answer.
    Error(RpcError),
    /// No answer within `hookTimeoutMs`; the server sent `$/cancelRequest` for it.
    TimedOut,
    /// The client did not list this hook in `initialize.hooks`: nothing was sent.
    NotDeclared,
    /// The client cancelled the request that was waiting for this hook (only from
    /// [`RequestContext::hook`](super::request_context::RequestContext::hook)). The method should stop
    /// without changing anything and return [`RpcError::request_cancelled`].
    Cancelled,
    /// The input ended (or `exit` came) first, so no answer can arrive. Treat as no answer.
    InputClosed,
}

impl<A> HookOutcome<A> {
    /// The client's answer, or `None` for every way of not answering.
    pub fn answer(&self) -> Option<&A> {
        match self {
            HookOutcome::Answered(value) => Some(value),
            _ => None,
        }
    }

    /// The client's answer, consumed.
    pub fn into_answer(self) -> Option<A> {
        match self {
            HookOutcome::Answered(value) => Some(value),
            _ => None,
        }
    }
}

/// The hooks sent and not yet answered.
#[derive(Default)]
pub(crate) struct PendingHooks {
    last_id: AtomicU64,
    waiting: Mutex<Waiting>,
}

#[derive(Default)]
struct Waiting {
    /// Set when input ends: nothing can be answered any more.
    closed: bool,
    answers: HashMap<String, oneshot::Sender<HookAnswer>>,
}

impl PendingHooks {
    fn waiting(&self) -> MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A fresh id, already waiting for its answer; `None` once input has ended.
    pub(crate) fn register(&self) -> Option<(String, oneshot::Receiver<HookAnswer>)> {
        let mut waiting = self.waiting();
        if waiting.closed {
            return None;
        }
        let id = format!("s{}", self.last_id.fetch_add(1, Ordering::Relaxed) + 1);
        let (answer, answered) = oneshot::channel();
        waiting.answers.insert(id.clone(), answer);
        Some((id, answered))
    }

    /// Delivers the client's answer to hook `id`; false if nothing waits for it (unknown id,
    /// or the hook already timed out).
    pub(crate) fn answer(&self, id: &str, answer: HookAnswer) -> bool {
        let waiter = self.waiting().answers.remove(id);
        match waiter {
            // The waiter may have given up in the meantime; then the answer is late too.
            Some(waiter) => waiter.send(answer).is_ok(),
            None => false,
        }
    }

    /// Whether `id` is one this server sent (an answer to it after it stopped waiting is a late
    /// answer, not a client's mistake).
    pub(crate) fn was_sent(&self, id: &str) -> bool {
        id.strip_prefix('s')
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n >= 1 && n <= self.last_id.load(Ordering::Relaxed))
    }

    /// Stops waiting for hook `id`.
    pub(crate) fn forget(&self, id: &str) {
        self.waiting().answers.remove(id);
    }

    /// Input has ended: every waiting hook resolves as [`HookOutcome::InputClosed`] (its
    /// sender is dropped) and no new hook is sent.
    pub(crate) fn close(&self) {
        let mut waiting = self.waiting();
        waiting.closed = true;
        waiting.answers.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    fn text(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).unwrap()
    }

    #[tokio::test]
    async fn answers_reach_their_waiter_once() {
        let hooks = PendingHooks::default();
        let (id, answered) = hooks.register().unwrap();
        assert_eq!(id, "s1");
        assert!(hooks.answer("s1", Ok(text("true"))));
        assert!(!hooks.answer("s1", Ok(text("null"))), "second answer");
        assert_eq!(answered.await.unwrap().unwrap().get(), "true");
        assert_eq!(hooks.register().unwrap().0, "s2");
    }

    #[tokio::test]
    async fn closing_wakes_waiters_and_refuses_new_hooks() {
        let hooks = PendingHooks::default();
        let (_, answered) = hooks.register().unwrap();
        hooks.close();
        assert!(answered.await.is_err());
        assert!(hooks.register().is_none());
    }
}
