//! Following session files for what other programs do to them: the one loop both front doors
//! run (`session/watch`, `tree --follow`), over any number of files.
//!
//! The OS only says that a file changed ([`crate::store::watch`]); [`follow`] waits for that,
//! lets a burst of appends gather, and hands the caller the keys of the files that changed.
//! The caller then looks at each session with [`look`], the store's follow step: the file
//! grew (the new entries are read and the caller tells of them), was cut, was replaced, or
//! vanished.

use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::store::watch::Changes;
use crate::store::{GoneReason, Session, StoreError};

/// How long a burst of appends may gather after the first wake before it is read: one read
/// (and one notification) for many appends, at a small cost in latency.
pub(crate) const GATHER: Duration = Duration::from_millis(10);

/// Why following a session's file ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FollowEnd {
    /// The file is shorter than what was read: its entries can no longer be trusted.
    Truncated,
    /// The file is gone from its path.
    Deleted,
    /// Another file took its path.
    Replaced,
}

/// What one look at a followed session found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Look {
    /// Still followed (what grew, if anything, was told).
    Going,
    /// Following ends; what the file held before it went away was still told.
    Ended { reason: FollowEnd, message: String },
}

/// One look at `session`, whose file may have changed: reads what other programs appended and
/// calls `tell` with the session and how many entries it had before (which it tells of as its
/// door does), unless the file was cut. Store errors go through `store_error`.
pub(crate) fn look<E>(
    session: &mut Session,
    store_error: impl Fn(StoreError) -> E,
    tell: impl FnOnce(&mut Session, usize) -> Result<(), E>,
) -> Result<Look, E> {
    let gone = session.file_gone().map_err(&store_error)?;
    if let Some(gone) = &gone
        && gone.reason == GoneReason::Truncated
    {
        return Ok(Look::Ended {
            reason: FollowEnd::Truncated,
            message: gone.message.clone(),
        });
    }
    let before = session.len();
    session.follow_tail().map_err(&store_error)?;
    tell(session, before)?;
    Ok(match gone {
        None => Look::Going,
        Some(gone) => Look::Ended {
            reason: match gone.reason {
                GoneReason::Deleted => FollowEnd::Deleted,
                _ => FollowEnd::Replaced,
            },
            message: gone.message,
        },
    })
}

/// The files followed together, each under its caller's key.
pub(crate) struct FollowedFiles<K> {
    files: Vec<(K, Changes)>,
}

impl<K: Clone + PartialEq> Default for FollowedFiles<K> {
    fn default() -> Self {
        FollowedFiles { files: Vec::new() }
    }
}

impl<K: Clone + PartialEq> FollowedFiles<K> {
    /// One file, under `key`.
    pub(crate) fn one(key: K, changes: Changes) -> FollowedFiles<K> {
        let mut followed = FollowedFiles::default();
        followed.add(key, changes);
        followed
    }

    pub(crate) fn add(&mut self, key: K, changes: Changes) {
        self.files.push((key, changes));
    }

    /// Stops following `key`'s file. Only the tests remove a file yet (the store's live feed
    /// will), so it is compiled for them alone.
    #[cfg(test)]
    pub(crate) fn remove(&mut self, key: &K) {
        self.files.retain(|(k, _)| k != key);
    }

    /// Waits until a file changes, lets a burst gather ([`GATHER`]), and returns the keys of
    /// every file that changed by then (each once). Never returns while no file is followed.
    pub(crate) async fn changed(&self) -> Vec<K> {
        let mut waits: Vec<_> = self
            .files
            .iter()
            .map(|(_, changes)| Box::pin(changes.changed()))
            .collect();
        let first = std::future::poll_fn(|cx| first_ready(&mut waits, cx)).await;
        drop(waits);
        tokio::time::sleep(GATHER).await;
        let mut keys = vec![self.files[first].0.clone()];
        // A wake that came meanwhile is waiting as a permit: one poll takes it.
        let mut cx = Context::from_waker(Waker::noop());
        for (i, (key, changes)) in self.files.iter().enumerate() {
            if i != first
                && Box::pin(changes.changed())
                    .as_mut()
                    .poll(&mut cx)
                    .is_ready()
            {
                keys.push(key.clone());
            }
        }
        keys
    }
}

fn first_ready<F: Future<Output = ()>>(
    waits: &mut [Pin<Box<F>>],
    cx: &mut Context<'_>,
) -> Poll<usize> {
    for (i, wait) in waits.iter_mut().enumerate() {
        if wait.as_mut().poll(cx).is_ready() {
            return Poll::Ready(i);
        }
    }
    Poll::Pending
}

/// The follow loop: each time files change, `on_change` is given each of their keys, until it
/// breaks with the loop's result.
pub(crate) async fn follow<K: Clone + PartialEq, T, Step: Future<Output = ControlFlow<T>>>(
    followed: &FollowedFiles<K>,
    mut on_change: impl FnMut(K) -> Step,
) -> T {
    loop {
        for key in followed.changed().await {
            if let ControlFlow::Break(result) = on_change(key).await {
                return result;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::store::watch::FileWatcher;

    #[tokio::test]
    async fn the_files_that_changed_are_told_by_their_keys() {
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<_> = ["a", "b", "c"]
            .iter()
            .map(|name| dir.path().join(format!("{name}.jsonl")))
            .collect();
        for path in &paths {
            std::fs::write(path, "").unwrap();
        }
        let watcher = FileWatcher::new().unwrap();
        let watches: Vec<_> = paths.iter().map(|p| watcher.watch(p).unwrap()).collect();
        let mut followed = FollowedFiles::default();
        for (key, watch) in ["a", "b", "c"].into_iter().zip(&watches) {
            followed.add(key, watch.changes());
        }
        for path in [&paths[0], &paths[2]] {
            let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
            file.write_all(b"{}\n").unwrap();
        }
        let mut keys = Vec::new();
        // The OS may tell of the two appends in one gathering or in two.
        while keys.len() < 2 {
            let changed = tokio::time::timeout(Duration::from_secs(10), followed.changed())
                .await
                .expect("a change is told");
            keys.extend(changed);
            keys.sort();
            keys.dedup();
        }
        assert_eq!(keys, ["a", "c"]);
        followed.remove(&"a");
        // A wake of `c` may still be pending; the loop goes on past it.
        let told = follow(&followed, |key| {
            std::future::ready(match key {
                "b" => ControlFlow::Break(key),
                _ => ControlFlow::Continue(()),
            })
        });
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&paths[1])
            .unwrap();
        file.write_all(b"{}\n").unwrap();
        let key = tokio::time::timeout(Duration::from_secs(10), told).await;
        assert_eq!(key.ok(), Some("b"));
    }
}
