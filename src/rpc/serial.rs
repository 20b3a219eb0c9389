//! Per-key serial execution.
//!
//! Requests that change the same thing (a session, keyed by its id) must run one at a time and
//! in the order they arrived, while different keys never wait for each other. The reader takes
//! a [`Ticket`] for the request's key the moment the request arrives, which fixes its place in
//! line; the request's task later awaits the ticket to get its [`Turn`], and the turn passes to
//! the next ticket in line when it is dropped. A ticket dropped while waiting (the request was
//! cancelled) leaves the line without disturbing it: the turn still passes strictly in order.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

/// The waiting lines, one per key; a line exists only while some ticket holds its turn.
#[derive(Clone, Default)]
pub struct SerialQueues(Arc<Mutex<HashMap<String, Line>>>);

#[derive(Default)]
struct Line {
    /// The tickets after the one holding the turn, in arrival order.
    waiting: VecDeque<oneshot::Sender<()>>,
}

impl SerialQueues {
    fn lines(&self) -> MutexGuard<'_, HashMap<String, Line>> {
        // Nothing panics while the lock is held; if it did, the map would still be whole.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a place in `key`'s line now. Call this in arrival order; await the ticket with
    /// [`Ticket::turn`] to run.
    pub fn ticket(&self, key: impl Into<String>) -> Ticket {
        let key = key.into();
        let state = {
            let mut lines = self.lines();
            match lines.get_mut(&key) {
                None => {
                    lines.insert(key.clone(), Line::default());
                    TicketState::Granted
                }
                Some(line) => {
                    let (grant, granted) = oneshot::channel();
                    line.waiting.push_back(grant);
                    TicketState::Waiting(granted)
                }
            }
        };
        Ticket {
            key,
            queues: self.clone(),
            state,
        }
    }

    /// Whether any ticket for `key` is alive (for tests and diagnostics).
    pub fn is_busy(&self, key: &str) -> bool {
        self.lines().contains_key(key)
    }

    /// Gives the turn for `key` to the next live ticket, or ends the line.
    fn pass_on(&self, key: &str) {
        let mut lines = self.lines();
        if let Some(line) = lines.get_mut(key) {
            while let Some(next) = line.waiting.pop_front() {
                // Fails only for a ticket dropped while waiting; skip it.
                if next.send(()).is_ok() {
                    return;
                }
            }
            lines.remove(key);
        }
    }
}

/// A place in a key's line.
pub struct Ticket {
    key: String,
    queues: SerialQueues,
    state: TicketState,
}

enum TicketState {
    Granted,
    Waiting(oneshot::Receiver<()>),
    /// Turned into a [`Turn`]; the turn is responsible for passing on now.
    Used,
}

impl Ticket {
    /// Waits until every earlier ticket for the same key has finished. Dropping this future
    /// while it waits gives up the place in line without disturbing the order of the others.
    pub async fn turn(mut self) -> Turn {
        if let TicketState::Waiting(granted) = &mut self.state {
            // An error would mean the grant was dropped unsent, which only happens to tickets
            // that closed their receiver, never to a live one; proceed either way.
            let _ = granted.await;
        }
        self.state = TicketState::Used;
        Turn {
            key: std::mem::take(&mut self.key),
            queues: self.queues.clone(),
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let holds_turn = match &mut self.state {
            TicketState::Granted => true,
            TicketState::Waiting(granted) => {
                // Refuse any grant from now on, then see whether one came just before.
                granted.close();
                granted.try_recv().is_ok()
            }
            TicketState::Used => false,
        };
        if holds_turn {
            self.queues.pass_on(&self.key);
        }
    }
}

/// The right to change the key's thing; passes to the next ticket when dropped.
pub struct Turn {
    key: String,
    queues: SerialQueues,
}

impl Turn {
    /// The key this turn is for.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.queues.pass_on(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn turns_come_in_ticket_order_per_key() {
        let queues = SerialQueues::default();
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        // Later tickets sleep less, so only the queue keeps them in order.
        for (i, key) in ["a", "a", "b", "a"].into_iter().enumerate() {
            let ticket = queues.ticket(key);
            let log = log.clone();
            tasks.push(tokio::spawn(async move {
                let _turn = ticket.turn().await;
                log.lock().unwrap().push(format!("{key}{i} start"));
                tokio::time::sleep(Duration::from_millis(40 - 10 * i as u64)).await;
                log.lock().unwrap().push(format!("{key}{i} end"));
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        let log = log.lock().unwrap().clone();
        assert_eq!(
            log,
            [
                "a0 start", "b2 start", "b2 end", "a0 end", "a1 start", "a1 end", "a3 start",
                "a3 end"
            ]
        );
        assert!(!queues.is_busy("a") && !queues.is_busy("b"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_ticket_dropped_while_waiting_does_not_let_the_next_one_jump_ahead() {
        let queues = SerialQueues::default();
        let first = queues.ticket("k").turn().await;
        let second = queues.ticket("k");
        let third = queues.ticket("k");
        let third = tokio::spawn(third.turn());
        drop(second);
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!third.is_finished(), "third must wait for first");
        drop(first);
        let third = third.await.unwrap();
        assert_eq!(third.key(), "k");
        drop(third);
        assert!(!queues.is_busy("k"));
    }

    #[tokio::test]
    async fn a_granted_ticket_never_awaited_passes_the_turn_on() {
        let queues = SerialQueues::default();
        let first = queues.ticket("k");
        let second = queues.ticket("k");
        drop(first);
        let _turn = second.turn().await;
        assert!(queues.is_busy("k"));
    }

    #[tokio::test]
    async fn a_grant_arriving_as_the_ticket_drops_is_passed_on() {
        let queues = SerialQueues::default();
        let first = queues.ticket("k").turn().await;
        let second = queues.ticket("k");
        let third = queues.ticket("k");
        drop(first); // grants `second`, which is never polled
        drop(second); // must pass the grant to `third`
        let _turn = third.turn().await;
    }
}
