//! Making bytes and names durable. A created or renamed file survives a crash only once the
//! directory holding its name is synced too (fsync of the file covers its bytes, not its entry).
//! Appends to one file share syncs (group commit): an append waits until a sync that started
//! after its bytes were written has finished; appends written while a sync is in flight are
//! all covered by the next one, so a burst of appends costs one sync per round, not one each.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use super::error::{ErrorKind, StoreError, StoreResult};
use super::safe_file;

/// Syncs the directory holding `path`, so a file just created or renamed there stays.
pub(crate) fn fsync_parent(path: &Path) -> StoreResult<()> {
    safe_file::sync_dir_of(path)
        .map_err(|e| StoreError::io(path, "cannot sync the directory of", e))
}

type SyncFn = Box<dyn Fn(&File) -> std::io::Result<()> + Send + Sync>;

/// The syncs of one open file's appends, shared by whoever waits for them.
pub(crate) struct GroupSync {
    path: PathBuf,
    /// A second handle on the file, so a sync needs no lock on the session that writes it.
    file: File,
    sync: SyncFn,
    state: Mutex<SyncState>,
    finished: Condvar,
}

impl std::fmt::Debug for GroupSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupSync")
            .field("path", &self.path)
            .field("state", &*self.state())
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct SyncState {
    /// Where this process's last append ended.
    written: u64,
    /// Every byte before this is on disk.
    synced: u64,
    /// A sync is running (its leader holds no lock while it does).
    syncing: bool,
    /// Syncs run so far.
    syncs: u64,
    /// Why a sync failed: after a failed fsync the kernel may have dropped the dirty pages, so
    /// no later sync could prove anything about them. Every wait fails from then on.
    failed: Option<String>,
}

impl GroupSync {
    /// Group syncs for `file` (a handle of its own is kept), whose first `len` bytes are taken
    /// as they are (whoever opened it synced them when that mattered).
    pub(super) fn new(path: &Path, file: &File, len: u64) -> std::io::Result<Arc<Self>> {
        Ok(Self::with_sync(
            path,
            file.try_clone()?,
            len,
            Box::new(File::sync_data),
        ))
    }

    fn with_sync(path: &Path, file: File, len: u64, sync: SyncFn) -> Arc<Self> {
        Arc::new(GroupSync {
            path: path.to_path_buf(),
            file,
            sync,
            state: Mutex::new(SyncState {
                written: len,
                synced: len,
                ..SyncState::default()
            }),
            finished: Condvar::new(),
        })
    }

    fn state(&self) -> MutexGuard<'_, SyncState> {
        // The state is whole between statements; a panic elsewhere does not spoil it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that an append ended at `end`: the next sync to start covers it.
    pub(super) fn wrote(&self, end: u64) {
        let mut state = self.state();
        state.written = state.written.max(end);
    }

    /// Where this process's appends end, and what of them is on disk: `(written, synced)`.
    pub(super) fn extent(&self) -> (u64, u64) {
        let state = self.state();
        (state.written, state.synced)
    }

    /// Syncs run so far (every append shares one).
    pub(crate) fn syncs(&self) -> u64 {
        self.state().syncs
    }

    /// The failure every wait reports once a sync has failed.
    pub(super) fn failure(&self) -> Option<StoreError> {
        let state = self.state();
        state
            .failed
            .as_deref()
            .map(|why| self.failed(why, state.synced))
    }

    fn failed(&self, why: &str, synced: u64) -> StoreError {
        StoreError::new(
            ErrorKind::Io,
            format!(
                "{}: cannot sync: {why}; nothing written after byte {synced} was acknowledged \
                 and it may not be on disk: close and reopen the session",
                self.path.display()
            ),
        )
        .naming(&self.path)
    }

    /// Returns once every byte before `end` is on disk. If no sync is running, this caller runs
    /// one for everything written so far; if one is running, it waits for it and then, unless
    /// that sync covered `end`, for the next one, which it runs itself or which another waiter
    /// runs for all of them.
    pub(crate) fn sync_through(&self, end: u64) -> StoreResult<()> {
        let mut state = self.state();
        loop {
            if let Some(why) = &state.failed {
                return Err(self.failed(why, state.synced));
            }
            if state.synced >= end {
                return Ok(());
            }
            if state.syncing {
                state = self
                    .finished
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            let target = state.written.max(end);
            state.syncing = true;
            drop(state);
            let result = (self.sync)(&self.file);
            state = self.state();
            state.syncing = false;
            state.syncs += 1;
            match result {
                Ok(()) => state.synced = state.synced.max(target),
                Err(e) => state.failed = Some(e.to_string()),
            }
            self.finished.notify_all();
        }
    }
}

/// Appends written but not yet known to be on disk: wait before acknowledging them.
#[derive(Debug, Default)]
#[must_use = "the appends are not durable until this is waited for"]
pub struct Unsynced(Option<(Arc<GroupSync>, u64)>);

impl Unsynced {
    /// Nothing to wait for.
    pub(crate) fn none() -> Self {
        Unsynced(None)
    }

    pub(super) fn through(group: Arc<GroupSync>, end: u64) -> Self {
        Unsynced(Some((group, end)))
    }

    /// Returns once the appends are on disk (one sync may cover many appends).
    pub fn wait(self) -> StoreResult<()> {
        match self.0 {
            Some((group, end)) => group.sync_through(end),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn syncs_directories_and_refuses_missing_ones() {
        let root = tempfile::tempdir().unwrap();
        fsync_parent(&root.path().join("x.jsonl")).unwrap();
        let missing = fsync_parent(&root.path().join("gone/x.jsonl")).unwrap_err();
        assert!(missing.message.contains("gone"), "{}", missing.message);
    }

    /// A group whose syncs tell `started` and then wait for a word on `release`.
    fn held_group(fail: Arc<AtomicBool>) -> (Arc<GroupSync>, mpsc::Receiver<()>, mpsc::Sender<()>) {
        let file = tempfile::tempfile().unwrap();
        let (started, on_start) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let released = Mutex::new(released);
        let sync: SyncFn = Box::new(move |_| {
            started.send(()).unwrap();
            released.lock().unwrap().recv().unwrap();
            match fail.load(Ordering::SeqCst) {
                true => Err(std::io::Error::other("injected")),
                false => Ok(()),
            }
        });
        (
            GroupSync::with_sync(Path::new("s.jsonl"), file, 0, sync),
            on_start,
            release,
        )
    }

    #[test]
    fn appends_written_while_a_sync_runs_share_the_next_one() {
        let (group, on_start, release) = held_group(Arc::default());
        group.wrote(10);
        let first = std::thread::spawn({
            let group = group.clone();
            move || group.sync_through(10)
        });
        on_start.recv().unwrap();
        // Written while the first sync runs: not covered by it.
        let followers: Vec<_> = [20, 30, 40]
            .into_iter()
            .map(|end| {
                group.wrote(end);
                let group = group.clone();
                std::thread::spawn(move || group.sync_through(end))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            group.extent(),
            (40, 0),
            "nothing is synced before its sync ends"
        );
        release.send(()).unwrap();
        first.join().unwrap().unwrap();
        // One of the followers leads the second sync, for all three.
        on_start.recv().unwrap();
        release.send(()).unwrap();
        for follower in followers {
            follower.join().unwrap().unwrap();
        }
        assert_eq!(group.syncs(), 2);
        assert_eq!(group.extent(), (40, 40));
        // Already covered: no sync at all.
        group.sync_through(25).unwrap();
        assert_eq!(group.syncs(), 2);
    }

    #[test]
    fn a_failed_sync_fails_every_wait_from_then_on() {
        let fail = Arc::new(AtomicBool::new(true));
        let (group, on_start, release) = held_group(fail.clone());
        group.wrote(10);
        let first = std::thread::spawn({
            let group = group.clone();
            move || group.sync_through(10)
        });
        on_start.recv().unwrap();
        group.wrote(20);
        let second = std::thread::spawn({
            let group = group.clone();
            move || group.sync_through(20)
        });
        release.send(()).unwrap();
        let error = first.join().unwrap().unwrap_err();
        assert!(error.message.contains("injected"), "{}", error.message);
        assert!(error.message.contains("after byte 0"), "{}", error.message);
        second.join().unwrap().unwrap_err();
        // Even a later sync that would succeed proves nothing about the lost pages.
        fail.store(false, Ordering::SeqCst);
        group.sync_through(20).unwrap_err();
        assert_eq!(group.syncs(), 1);
        assert!(group.failure().is_some());
    }
}
