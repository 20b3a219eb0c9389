//! Watching session files for what other programs do to them, through the OS (inotify on
//! Linux, by the `notify` crate).
//!
//! A watch only wakes its owner; what changed is found by the one follower of a grown file
//! ([`super::Session::follow_tail`]) and by [`super::SessionFile::gone`]. Wakes coalesce: many
//! appends before the owner looks are one wake, so a burst costs a few reads, and nothing
//! polls. The OS watch is on the file's directory (so a file replaced or deleted under its
//! name is seen too), one per directory however many files in it are watched, and one per
//! file however many owners watch it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::Notify;

use super::error::{ErrorKind, StoreError, StoreResult};

/// The OS watches of one process (create one, share it).
pub(crate) struct FileWatcher {
    shared: Arc<Shared>,
}

struct Shared {
    os: Mutex<RecommendedWatcher>,
    watched: Arc<Mutex<Watched>>,
}

#[derive(Default)]
struct Watched {
    /// Per directory watched: how many files in it are.
    dirs: HashMap<PathBuf, usize>,
    /// Per file: its watches' wakes, by token.
    files: HashMap<PathBuf, Vec<(u64, Arc<Notify>)>>,
    next_token: u64,
}

impl Watched {
    fn wake(&self, path: &Path) {
        for (_, wake) in self.files.get(path).into_iter().flatten() {
            wake.notify_one();
        }
    }

    fn wake_all(&self) {
        for wake in self.files.values().flatten() {
            wake.1.notify_one();
        }
    }
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl FileWatcher {
    pub(crate) fn new() -> StoreResult<FileWatcher> {
        let watched = Arc::new(Mutex::new(Watched::default()));
        let events = Arc::downgrade(&watched);
        let os = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Some(watched) = events.upgrade() else {
                return;
            };
            let watched = locked(&watched);
            match event {
                // The OS dropped events (its queue overflowed): every owner looks again.
                Ok(event) if event.need_rescan() => watched.wake_all(),
                Ok(event) => event.paths.iter().for_each(|path| watched.wake(path)),
                Err(error) => {
                    tracing::warn!("file watch: {error}");
                    watched.wake_all();
                }
            }
        })
        .map_err(|e| watch_error(Path::new(""), e))?;
        Ok(FileWatcher {
            shared: Arc::new(Shared {
                os: Mutex::new(os),
                watched,
            }),
        })
    }

    /// Watches `path` (which need not exist yet; its directory must). The first wake comes
    /// with the first change after this returns.
    pub(crate) fn watch(&self, path: &Path) -> StoreResult<FileWatch> {
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(StoreError::new(
                ErrorKind::InvalidArgument,
                format!("{}: not a file path", path.display()),
            ));
        };
        let dir = match dir.as_os_str().is_empty() {
            true => Path::new("."),
            false => dir,
        };
        // Events name the directory as it was watched: resolved once, here, both agree.
        let dir = std::fs::canonicalize(dir)
            .map_err(|e| StoreError::io(dir, "cannot watch the directory of", e))?;
        let file = dir.join(name);
        let wake = Arc::new(Notify::new());
        // The OS lock first, held throughout, so watches and unwatches of a directory never
        // interleave; the table's lock never while the OS is asked (the OS's thread waits for
        // it in the event callback while the OS call waits for that thread).
        let mut os = locked(&self.shared.os);
        let known = locked(&self.shared.watched).dirs.contains_key(&dir);
        if !known {
            os.watch(&dir, RecursiveMode::NonRecursive)
                .map_err(|e| watch_error(&dir, e))?;
        }
        let mut watched = locked(&self.shared.watched);
        *watched.dirs.entry(dir.clone()).or_default() += 1;
        watched.next_token += 1;
        let token = watched.next_token;
        watched
            .files
            .entry(file.clone())
            .or_default()
            .push((token, wake.clone()));
        Ok(FileWatch {
            shared: self.shared.clone(),
            dir,
            file,
            token,
            wake,
        })
    }

    /// How many directories the OS watches, and how many files are watched in them (the
    /// tests check that watches end).
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (usize, usize) {
        let watched = locked(&self.shared.watched);
        (watched.dirs.len(), watched.files.len())
    }
}

/// One owner's watch of one file; ended when dropped.
pub(crate) struct FileWatch {
    shared: Arc<Shared>,
    dir: PathBuf,
    file: PathBuf,
    token: u64,
    wake: Arc<Notify>,
}

impl FileWatch {
    /// The file's wakes ([`Changes::changed`]), for a task that does not own the watch (so
    /// that dropping the watch ends the OS watch at once, whatever the task is doing).
    pub(crate) fn changes(&self) -> Changes {
        Changes(self.wake.clone())
    }
}

/// The wakes of a [`FileWatch`], apart from it.
pub(crate) struct Changes(Arc<Notify>);

impl Changes {
    /// The wakes `wake` is notified with (a watch of something other than one file).
    pub fn of(wake: Arc<Notify>) -> Changes {
        Changes(wake)
    }

    /// Resolves once the file (or its name in its directory) changed since the last call:
    /// many changes meanwhile are one. Never resolves once the watch is dropped.
    pub(crate) async fn changed(&self) {
        self.0.notified().await
    }
}

impl Drop for FileWatch {
    fn drop(&mut self) {
        // Lock order as in `FileWatcher::watch`.
        let mut os = locked(&self.shared.os);
        let mut watched = locked(&self.shared.watched);
        if let Some(wakes) = watched.files.get_mut(&self.file) {
            wakes.retain(|(token, _)| *token != self.token);
            if wakes.is_empty() {
                watched.files.remove(&self.file);
            }
        }
        let last = match watched.dirs.get_mut(&self.dir) {
            Some(count) => {
                *count -= 1;
                *count == 0
            }
            None => false,
        };
        if last {
            watched.dirs.remove(&self.dir);
        }
        drop(watched);
        if last && let Err(error) = os.unwatch(&self.dir) {
            tracing::debug!("{}: ending the watch: {error}", self.dir.display());
        }
    }
}

fn watch_error(path: &Path, error: notify::Error) -> StoreError {
    let hint = match &error.kind {
        notify::ErrorKind::MaxFilesWatch => {
            " (the system's limit of watches is reached: raise fs.inotify.max_user_watches)"
        }
        _ => "",
    };
    let message = match path.as_os_str().is_empty() {
        true => format!("cannot watch files: {error}{hint}"),
        false => format!("{}: cannot watch: {error}{hint}", path.display()),
    };
    let mut e = StoreError::new(ErrorKind::Io, message);
    if !path.as_os_str().is_empty() {
        e = e.naming(path);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Duration;

    async fn wakes(watch: &FileWatch) -> bool {
        tokio::time::timeout(Duration::from_secs(2), watch.changes().changed())
            .await
            .is_ok()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn watches_of_one_directory_share_one_os_watch_and_wake_only_for_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
        std::fs::write(&a, "").unwrap();
        std::fs::write(&b, "").unwrap();
        let watcher = FileWatcher::new().unwrap();
        let first = watcher.watch(&a).unwrap();
        let second = watcher.watch(&a).unwrap();
        let other = watcher.watch(&b).unwrap();
        assert_eq!(watcher.counts(), (1, 2), "one directory, two files");

        // Many appends while no one looks are one wake.
        let mut file = std::fs::OpenOptions::new().append(true).open(&a).unwrap();
        for n in 0..50 {
            writeln!(file, "line {n}").unwrap();
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            wakes(&first).await && wakes(&second).await,
            "both watches of a"
        );
        let again =
            tokio::time::timeout(Duration::from_millis(200), first.changes().changed()).await;
        assert!(again.is_err(), "the burst was one wake, already taken");
        let quiet =
            tokio::time::timeout(Duration::from_millis(200), other.changes().changed()).await;
        assert!(quiet.is_err(), "b did not change");

        drop(first);
        writeln!(file, "after").unwrap();
        assert!(wakes(&second).await, "the other watch of a goes on");
        drop(second);
        assert_eq!(watcher.counts(), (1, 1));
        std::fs::remove_file(&b).unwrap();
        assert!(wakes(&other).await, "a deletion wakes too");
        drop(other);
        assert_eq!(watcher.counts(), (0, 0), "the OS watch ends with the last");
    }
}
