//! Listing caches kept in memory once read, so that a process listing the same directory again
//! (a server answering `session/list`) does not re-read and re-check tens of megabytes.
//!
//! A kept cache stands in for its file only while the file's stamp (size, mtime, ctime, inode,
//! device) is unchanged: every rewrite replaces the file (a new inode), so any change made by
//! this process or another is seen. Its rows are still checked against the session files,
//! exactly as rows read from the file are. Few caches are kept, and none above a byte bound.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use super::CacheEntry;
use crate::repo::stamp::FileStamp;

/// Caches kept at most.
const KEPT_CACHES: usize = 4;
/// Bytes of cache files kept at most, all together.
const KEPT_BYTES: u64 = 256 * 1024 * 1024;

pub(crate) type Entries = HashMap<String, CacheEntry>;

/// The caches read last, most recently used first.
#[derive(Default)]
pub(crate) struct LoadedCaches {
    kept: Mutex<Vec<Kept>>,
}

struct Kept {
    path: PathBuf,
    stamp: FileStamp,
    entries: Arc<Entries>,
}

impl LoadedCaches {
    /// The entries read from the cache file at `path` when it had `stamp`, if they are kept.
    pub(crate) fn get(&self, path: &Path, stamp: &FileStamp) -> Option<Arc<Entries>> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let at = kept.iter().position(|k| k.path == path)?;
        if kept[at].stamp != *stamp {
            // Replaced since: what was kept describes a file that is gone.
            kept.remove(at);
            return None;
        }
        let hit = kept.remove(at);
        let entries = hit.entries.clone();
        kept.insert(0, hit);
        Some(entries)
    }

    /// Keeps the entries read from the cache file at `path`, which had `stamp`.
    pub(crate) fn keep(&self, path: &Path, stamp: FileStamp, entries: Arc<Entries>) {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.retain(|k| k.path != path);
        if stamp.size > KEPT_BYTES {
            return;
        }
        kept.insert(
            0,
            Kept {
                path: path.to_path_buf(),
                stamp,
                entries,
            },
        );
        let mut bytes = 0;
        let within = kept
            .iter()
            .take(KEPT_CACHES)
            .take_while(|k| {
                bytes += k.stamp.size;
                bytes <= KEPT_BYTES
            })
            .count();
        kept.truncate(within);
    }
}

impl std::fmt::Debug for LoadedCaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_list()
            .entries(kept.iter().map(|k| &k.path))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(size: u64, ino: u64) -> FileStamp {
        FileStamp {
            size,
            mtime_ns: 1,
            ctime_ns: 1,
            ino,
            dev: 1,
        }
    }

    #[test]
    fn kept_only_while_the_stamp_holds_and_within_bounds() {
        let caches = LoadedCaches::default();
        let a = Path::new("/a");
        caches.keep(a, stamp(10, 1), Arc::default());
        assert!(caches.get(a, &stamp(10, 1)).is_some());
        assert!(caches.get(a, &stamp(10, 2)).is_none(), "replaced file");
        assert!(
            caches.get(a, &stamp(10, 1)).is_none(),
            "forgotten once replaced"
        );
        for i in 0..=KEPT_CACHES as u64 {
            caches.keep(
                &PathBuf::from(format!("/d{i}")),
                stamp(10, i),
                Arc::default(),
            );
        }
        assert!(
            caches.get(Path::new("/d0"), &stamp(10, 0)).is_none(),
            "oldest dropped"
        );
        assert!(caches.get(Path::new("/d1"), &stamp(10, 1)).is_some());
        caches.keep(a, stamp(KEPT_BYTES + 1, 1), Arc::default());
        assert!(
            caches.get(a, &stamp(KEPT_BYTES + 1, 1)).is_none(),
            "too large"
        );
        caches.keep(a, stamp(KEPT_BYTES - 5, 1), Arc::default());
        assert!(caches.get(a, &stamp(KEPT_BYTES - 5, 1)).is_some());
        assert!(
            caches.get(Path::new("/d1"), &stamp(10, 1)).is_none(),
            "over the bytes"
        );
    }
}
