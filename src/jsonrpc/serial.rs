//! Per-key serial execution.
//!
//! Requests that change the same thing (a session, keyed by its id) must run one at a time and
//! in the order they arrived, while different keys never wait for each other. The reader takes
//! a [`Ticket`] for the request's key the moment the request arrives, which fixes its place in
//! line; the request's task later awaits the ticket to get its [`Turn`], and the turn passes to
//! the next ticket in line when it is dropped. A ticket dropped while waiting (the request was
//! cancelled) leaves the line without disturbing it: the turn still passes strictly in order.
//!
//! A turn may also be passed on early ([`Turn::pass_on_early`]), once its change is made but
//! before it may be answered (a durable append waiting for its sync): the next request starts
//! its change meanwhile, yet answers still leave in arrival order, because each turn waits for
//! the answers of the tickets before it ([`Turn::earlier_answered`]).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::{oneshot, watch};

/// The waiting lines, one per key; a line exists only while some ticket of it is alive.
#[derive(Clone, Default)]
pub struct SerialQueues(Arc<Mutex<HashMap<String, KeyLine>>>);

/// One key's line: who holds the turn, the tickets waiting after it, and which have been
/// answered.
struct KeyLine {
    /// Some ticket holds the turn (and has not passed it on early).
    busy: bool,
    /// The tickets after the one holding the turn, in arrival order.
    waiting: VecDeque<oneshot::Sender<()>>,
    /// The number the next ticket gets.
    next: u64,
    /// Every ticket numbered below this value has been answered (or dropped).
    answered_below: watch::Sender<u64>,
    /// Tickets at or above `answered_below` done already, out of order (cancelled ones).
    done_early: BTreeSet<u64>,
}

impl KeyLine {
    fn new() -> Self {
        KeyLine {
            busy: false,
            waiting: VecDeque::new(),
            next: 0,
            answered_below: watch::Sender::new(0),
            done_early: BTreeSet::new(),
        }
    }

    fn is_idle(&self) -> bool {
        !self.busy && self.waiting.is_empty() && *self.answered_below.borrow() == self.next
    }
}

impl SerialQueues {
    fn lines(&self) -> MutexGuard<'_, HashMap<String, KeyLine>> {
        // Nothing panics while the lock is held; if it did, the map would still be whole.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a place in `key`'s line now. Call this in arrival order; await the ticket with
    /// [`Ticket::turn`] to run.
    pub fn ticket(&self, key: impl Into<String>) -> Ticket {
        let key = key.into();
        let (state, number, answered) = {
            let mut lines = self.lines();
            let line = lines.entry(key.clone()).or_insert_with(KeyLine::new);
            let number = line.next;
            line.next += 1;
            let state = match line.busy {
                false => {
                    line.busy = true;
                    TicketState::Granted
                }
                true => {
                    let (grant, granted) = oneshot::channel();
                    line.waiting.push_back(grant);
                    TicketState::Waiting(granted)
                }
            };
            (state, number, line.answered_below.subscribe())
        };
        Ticket {
            place: TicketPlace {
                key,
                number,
                answered,
                queues: self.clone(),
            },
            state,
        }
    }

    /// Whether any ticket for `key` is alive (for tests and diagnostics).
    pub fn is_busy(&self, key: &str) -> bool {
        self.lines().contains_key(key)
    }

    /// Gives the turn for `key` to the next live ticket, or frees it.
    fn pass_on(&self, key: &str) {
        let mut lines = self.lines();
        if let Some(line) = lines.get_mut(key) {
            while let Some(next) = line.waiting.pop_front() {
                // Fails only for a ticket dropped while waiting; skip it.
                if next.send(()).is_ok() {
                    return;
                }
            }
            line.busy = false;
            if line.is_idle() {
                lines.remove(key);
            }
        }
    }

    /// Records that ticket `number` of `key` has been answered (or dropped).
    fn answered(&self, key: &str, number: u64) {
        let mut lines = self.lines();
        let Some(line) = lines.get_mut(key) else {
            return;
        };
        let below = *line.answered_below.borrow();
        if number == below {
            let mut below = below + 1;
            while line.done_early.remove(&below) {
                below += 1;
            }
            line.answered_below.send_replace(below);
        } else {
            line.done_early.insert(number);
        }
        if line.is_idle() {
            lines.remove(key);
        }
    }
}

/// Where a ticket stands in its key's line.
struct TicketPlace {
    key: String,
    number: u64,
    answered: watch::Receiver<u64>,
    queues: SerialQueues,
}

/// A place in a key's line.
pub struct Ticket {
    place: TicketPlace,
    state: TicketState,
}

enum TicketState {
    Granted,
    Waiting(oneshot::Receiver<()>),
    /// Turned into a [`Turn`]; the turn is responsible for passing on now.
    Used,
}

impl Ticket {
    /// Waits until every earlier ticket for the same key has finished its change. Dropping
    /// this future while it waits gives up the place in line without disturbing the order of
    /// the others.
    pub async fn turn(mut self) -> Turn {
        if let TicketState::Waiting(granted) = &mut self.state {
            // An error would mean the grant was dropped unsent, which only happens to tickets
            // that closed their receiver, never to a live one; proceed either way.
            let _ = granted.await;
        }
        self.state = TicketState::Used;
        let place = TicketPlace {
            key: std::mem::take(&mut self.place.key),
            number: self.place.number,
            answered: self.place.answered.clone(),
            queues: self.place.queues.clone(),
        };
        Turn {
            place,
            passed: false,
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
            TicketState::Used => return,
        };
        let TicketPlace { key, number, .. } = &self.place;
        self.place.queues.answered(key, *number);
        if holds_turn {
            self.place.queues.pass_on(key);
        }
    }
}

/// The right to change the key's thing; passes to the next ticket when dropped (after the
/// answer is queued), or earlier with [`Turn::pass_on_early`].
pub struct Turn {
    place: TicketPlace,
    passed: bool,
}

impl Turn {
    /// The key this turn is for.
    pub fn key(&self) -> &str {
        &self.place.key
    }

    /// Lets the next ticket start now, though this request is not answered yet: its change is
    /// made and nothing it still waits for touches the key's thing. Its answer still leaves
    /// before the next ticket's.
    pub fn pass_on_early(&mut self) {
        if !self.passed {
            self.passed = true;
            self.place.queues.pass_on(&self.place.key);
        }
    }

    /// Resolves once every earlier ticket of the key has been answered: await it before
    /// answering, so that answers leave in arrival order even when turns were passed on early.
    pub fn earlier_answered(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut answered = self.place.answered.clone();
        let number = self.place.number;
        async move {
            // Closed only once the line is gone, which needs every ticket answered.
            let _ = answered.wait_for(|below| *below >= number).await;
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.place
            .queues
            .answered(&self.place.key, self.place.number);
        if !self.passed {
            self.place.queues.pass_on(&self.place.key);
        }
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

    /// Checks that `later` may not answer before `earlier` is answered (dropped) and may
    /// right after.
    async fn answers_after(later: &Turn, earlier: Turn) {
        let may_answer = tokio::spawn(later.earlier_answered());
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(
            !may_answer.is_finished(),
            "may answer before an earlier ticket"
        );
        drop(earlier);
        may_answer.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_turn_passed_on_early_lets_the_next_start_but_not_answer_first() {
        let queues = SerialQueues::default();
        let mut first = queues.ticket("k").turn().await;
        let second = queues.ticket("k");
        first.pass_on_early();
        let second = second.turn().await;
        // A third arriving now waits for the second's turn, and for both answers.
        let third = tokio::spawn(queues.ticket("k").turn());
        answers_after(&second, first).await;
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(!third.is_finished(), "the second still holds the turn");
        drop(second);
        let third = third.await.unwrap();
        third.earlier_answered().await;
        drop(third);
        assert!(!queues.is_busy("k"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_line_outlives_its_turn_while_an_early_passed_answer_is_pending() {
        let queues = SerialQueues::default();
        let mut first = queues.ticket("k").turn().await;
        first.pass_on_early();
        assert!(queues.is_busy("k"), "the first is still to be answered");
        // Arriving after the turn was freed: runs at once, answers after the first.
        let second = queues.ticket("k").turn().await;
        answers_after(&second, first).await;
        drop(second);
        assert!(!queues.is_busy("k"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_cancelled_ticket_behind_an_early_pass_does_not_let_the_next_answer_first() {
        let queues = SerialQueues::default();
        let mut first = queues.ticket("k").turn().await;
        let second = queues.ticket("k");
        let third = queues.ticket("k");
        first.pass_on_early(); // grants `second`
        drop(second); // cancelled before it ran: passes the turn to `third`
        let third = third.turn().await;
        answers_after(&third, first).await;
    }
}
