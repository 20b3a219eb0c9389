//! Watching a whole sessions root (every project directory, every file) for the store's live
//! feed: through the OS (inotify, recursive, by the `notify` crate) where it tells of changes,
//! else by polling at [`POLL_INTERVAL`]: on network and FUSE file systems (told by `statfs`'s
//! `f_type`: NFS, SMB/CIFS, FUSE, 9p, ...) the OS never hears of another machine's writes, so
//! only a poll sees them; `--poll` asks for it anywhere. Either way the owner only gets wakes
//! ([`Changes`]), and finds what changed with the store index's change detector.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::Notify;

use super::error::{ErrorKind, StoreError, StoreResult};
use super::watch::Changes;

/// How often a polled root is looked at.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// How the root is watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WatchMode {
    /// The OS tells of each change.
    Events,
    /// Looked at every [`POLL_INTERVAL`]; the reason (asked for, or the file system's name).
    Poll(&'static str),
}

/// A watch of a sessions root; ends when dropped.
pub(crate) struct TreeWatch {
    wake: Arc<Notify>,
    pub(crate) mode: WatchMode,
    _os: Option<RecommendedWatcher>,
    /// Dropped with the watch: the poller's thread sees it and ends.
    _alive: Arc<()>,
}

impl TreeWatch {
    /// Watches `root` and everything under it (`poll`: by polling whatever the file system).
    /// A root that does not exist yet is polled until the watch ends (nothing to watch yet).
    pub(crate) fn new(root: &Path, poll: bool) -> StoreResult<TreeWatch> {
        let wake = Arc::new(Notify::new());
        let alive = Arc::new(());
        let mode = if poll {
            WatchMode::Poll("asked for")
        } else if !root.is_dir() {
            WatchMode::Poll("the sessions root does not exist yet")
        } else {
            match remote_file_system(root) {
                Some(name) => WatchMode::Poll(name),
                None => WatchMode::Events,
            }
        };
        let os = match mode {
            WatchMode::Events => {
                let waker = Arc::downgrade(&wake);
                let mut os =
                    notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                        let Some(wake) = waker.upgrade() else { return };
                        match event {
                            // Reads are not changes (inotify tells of opens and closes too).
                            Ok(event)
                                if matches!(
                                    event.kind,
                                    notify::EventKind::Access(
                                        notify::event::AccessKind::Open(_)
                                            | notify::event::AccessKind::Read
                                            | notify::event::AccessKind::Close(
                                                notify::event::AccessMode::Read
                                            )
                                    )
                                ) => {}
                            Ok(_) => wake.notify_one(),
                            Err(error) => {
                                tracing::warn!("store watch: {error}");
                                wake.notify_one();
                            }
                        }
                    })
                    .map_err(|e| watch_error(root, e))?;
                os.watch(root, RecursiveMode::Recursive)
                    .map_err(|e| watch_error(root, e))?;
                Some(os)
            }
            WatchMode::Poll(why) => {
                tracing::debug!(
                    "store watch: polling {} every {POLL_INTERVAL:?} ({why})",
                    root.display()
                );
                let waker = Arc::downgrade(&wake);
                let alive = Arc::downgrade(&alive);
                std::thread::Builder::new()
                    .name("store-poll".into())
                    .spawn(move || {
                        loop {
                            std::thread::sleep(POLL_INTERVAL);
                            match (waker.upgrade(), alive.upgrade()) {
                                (Some(wake), Some(_)) => wake.notify_one(),
                                _ => return,
                            }
                        }
                    })
                    .map_err(|e| StoreError::new(ErrorKind::Io, format!("store watch: {e}")))?;
                None
            }
        };
        Ok(TreeWatch {
            wake,
            mode,
            _os: os,
            _alive: alive,
        })
    }

    /// The watch's wakes, for the follow loop.
    pub(crate) fn changes(&self) -> Changes {
        Changes::of(self.wake.clone())
    }
}

fn watch_error(root: &Path, e: notify::Error) -> StoreError {
    StoreError::new(
        ErrorKind::Io,
        format!("cannot watch {}: {e}", root.display()),
    )
}

/// The name of the network or FUSE file system `path` is on, where the OS's change events
/// do not tell of other machines' writes.
pub(crate) fn remote_file_system(path: &Path) -> Option<&'static str> {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid NUL-terminated path and a statfs the call fills.
    if unsafe { libc::statfs(name.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    // The magic numbers of linux/magic.h (f_type's width differs between targets).
    #[allow(clippy::unnecessary_cast)]
    match stat.f_type as i64 {
        0x6969 => Some("nfs"),
        0xFF53_4D42 => Some("cifs"),
        0xFE53_4D42 => Some("smb2"),
        0x517B => Some("smb"),
        0x6573_5546 => Some("fuse"),
        0x0102_1997 => Some("9p"),
        0x5346_414F => Some("afs"),
        0x7366_7378 => Some("ceph"),
        0x0BD0_0BD0 => Some("lustre"),
        0x4750_4653 => Some("gpfs"),
        _ => None,
    }
}
