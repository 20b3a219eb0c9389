//! LSP's work-done progress for the store index: the catalog's [`Progress`] told to the client
//! as `$/progress` (begin, reports, end) under the request's `workDoneToken`. A token is used
//! once, as LSP wants: a second pass of the catalog (an index rebuilt elsewhere) reports under
//! the same begin, and the end is sent by [`WorkDone::end`] when the request is done, also
//! when it failed.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::catalog::Progress;

use super::threads::Ctx;
use super::wire::{ProgressNotification, ProgressToken, WorkDoneProgress};

/// Sends `$/progress` for one request. A report goes out only when the whole percentage moves,
/// so a big store sends at most about a hundred of them.
pub(crate) struct WorkDone {
    ctx: Ctx,
    token: ProgressToken,
    total: AtomicU64,
    done: AtomicU64,
    /// The last percentage sent (`u64::MAX`: none yet).
    sent: AtomicU64,
}

impl WorkDone {
    pub(crate) fn new(ctx: &Ctx, token: ProgressToken) -> WorkDone {
        WorkDone {
            ctx: ctx.clone(),
            token,
            total: AtomicU64::new(0),
            done: AtomicU64::new(0),
            sent: AtomicU64::new(u64::MAX),
        }
    }

    fn send(&self, value: WorkDoneProgress) {
        // A cancelled read is answered -32800 at once while the indexing finishes here: the
        // client has closed the token with that answer, so nothing more is sent under it.
        if self.ctx.is_cancelled() {
            return;
        }
        self.ctx.send(&ProgressNotification {
            token: self.token.clone(),
            value,
        });
    }
}

fn percentage(done: u64, total: u64) -> u64 {
    if total == 0 {
        100
    } else {
        (done.min(total) as u128 * 100 / total as u128) as u64
    }
}

impl Progress for WorkDone {
    fn start(&self, files: u64, bytes: u64) {
        self.total.store(bytes, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        let message = Some(format!("{files} session files, {bytes} bytes"));
        if self.sent.swap(0, Ordering::Relaxed) == u64::MAX {
            self.send(WorkDoneProgress::Begin {
                title: "Indexing sessions".into(),
                cancellable: false,
                message,
                percentage: Some(0),
            });
        } else {
            self.send(WorkDoneProgress::Report {
                message,
                percentage: Some(0),
            });
        }
    }

    fn advance(&self, bytes: u64) {
        let done = self.done.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let now = percentage(done, self.total.load(Ordering::Relaxed));
        let before = self.sent.load(Ordering::Relaxed);
        // Only the thread that moves the figure sends it: no report twice, none backwards.
        if before != u64::MAX
            && now > before
            && self
                .sent
                .compare_exchange(before, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.send(WorkDoneProgress::Report {
                message: None,
                percentage: Some(now as u32),
            });
        }
    }

    fn finish(&self) {}
}

impl WorkDone {
    /// Ends the progress when it began (nothing was sent when the index was up to date).
    pub(crate) fn end(&self, failed: bool) {
        if self.sent.load(Ordering::Relaxed) != u64::MAX {
            let message = if failed {
                "indexing failed"
            } else {
                "index up to date"
            };
            self.send(WorkDoneProgress::End {
                message: Some(message.into()),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::percentage;

    #[test]
    fn percentages_stay_within_bounds() {
        assert_eq!(percentage(0, 0), 100);
        assert_eq!(percentage(5, 10), 50);
        assert_eq!(percentage(11, 10), 100);
        assert_eq!(percentage(u64::MAX, u64::MAX), 100);
    }
}
