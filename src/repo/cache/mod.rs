//! The listing cache: one file per sessions directory (`.pi-session-list.cache`, which pi
//! ignores since it lists only `*.jsonl`), remembering each file's listing row under the `stat`
//! it was read at.
//!
//! The cache is a shortcut, never a source of truth:
//! - an entry is used only while the file's size, mtime, ctime, inode and device are unchanged,
//!   and only if the file had not been modified within [`RACY_WINDOW_NS`] before it was read
//!   (a change in the same timestamp tick could otherwise go unseen);
//! - a missing, damaged or other-version cache file is ignored and rebuilt;
//! - the file is replaced atomically (temporary file, then rename), so concurrent readers see
//!   either the old or the new cache, and concurrent writers lose nothing but cached rows,
//!   which are rebuilt the next time.

mod codec;
mod memo;

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::Arc;

pub(crate) use memo::LoadedCaches;

use crate::repo::scan::{Pi16Mark, SkipReason};
use crate::repo::session_info::SessionInfo;
use crate::repo::stamp::FileStamp;
use crate::store::safe_file;

/// The cache file's name inside a sessions directory.
pub const CACHE_FILE_NAME: &str = ".pi-session-list.cache";

/// A file modified this close to the moment it was read may change again without its stamp
/// changing (file system timestamps are coarse), so its cached row is not trusted.
pub(crate) const RACY_WINDOW_NS: i64 = 2_000_000_000;

/// What the cache remembers of a file: its row (without the path, which depends on how the
/// directory was named by the caller) or why it has none.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CachedOutcome {
    Session(Box<SessionInfo>, Vec<Pi16Mark>),
    Skipped(SkipReason),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CacheEntry {
    pub stamp: FileStamp,
    /// Wall-clock time just before the file was opened, in ns since the epoch.
    pub scanned_at_ns: i64,
    pub outcome: CachedOutcome,
}

/// The cache of one directory, loaded into memory.
#[derive(Default)]
pub(crate) struct DirCache {
    entries: HashMap<String, CacheEntry>,
    changed: bool,
}

impl DirCache {
    /// The cache of `dir`; empty when there is none or it cannot be used.
    pub(crate) fn load(dir: &Path) -> DirCache {
        DirCache::load_kept(dir, None)
    }

    /// [`DirCache::load`], from `kept` while it holds the cache file as it is now (and kept
    /// there once read).
    pub(crate) fn load_kept(dir: &Path, kept: Option<&LoadedCaches>) -> DirCache {
        let path = dir.join(CACHE_FILE_NAME);
        let read = match read_cache_file(&path, kept) {
            Ok(read) => read,
            Err(e) => {
                if e.kind() != io::ErrorKind::NotFound {
                    tracing::debug!("listing cache {} unreadable: {e}", path.display());
                }
                return DirCache::default();
            }
        };
        match read {
            Ok(entries) => DirCache {
                entries,
                changed: false,
            },
            Err(e) => {
                tracing::debug!("listing cache {} ignored: {e:?}", path.display());
                // Rewrite it even if no file changed, so the damage does not persist.
                DirCache {
                    entries: HashMap::new(),
                    changed: true,
                }
            }
        }
    }

    /// Whether the row stored for `name` may stand in for reading the file now.
    pub(crate) fn is_fresh(&self, name: &str, stamp: &FileStamp) -> bool {
        self.entries.get(name).is_some_and(|entry| {
            entry.stamp == *stamp
                && entry.stamp.mtime_ns.max(entry.stamp.ctime_ns) + RACY_WINDOW_NS
                    < entry.scanned_at_ns
        })
    }

    /// Takes the stored outcome for `name` out of the cache (call [`DirCache::store`] first if
    /// the cache is to be written).
    pub(crate) fn take(&mut self, name: &str) -> Option<CachedOutcome> {
        self.entries.remove(name).map(|entry| entry.outcome)
    }

    pub(crate) fn record(&mut self, name: &str, entry: CacheEntry) {
        self.entries.insert(name.to_string(), entry);
        self.changed = true;
    }

    /// Drops the rows of files that are gone.
    pub(crate) fn retain_names(&mut self, keep: impl Fn(&str) -> bool) {
        let before = self.entries.len();
        self.entries.retain(|name, _| keep(name));
        self.changed |= self.entries.len() != before;
    }

    pub(crate) fn remove(&mut self, name: &str) {
        self.changed |= self.entries.remove(name).is_some();
    }

    pub(crate) fn is_changed(&self) -> bool {
        self.changed
    }

    /// Writes the cache of `dir` atomically: a private temporary file renamed over the old one.
    pub(crate) fn store(&self, dir: &Path) -> io::Result<()> {
        let mut names: Vec<&String> = self.entries.keys().collect();
        names.sort();
        let encoded = codec::encode(
            names
                .iter()
                .map(|name| (name.as_str(), &self.entries[*name])),
        );
        let target = dir.join(CACHE_FILE_NAME);
        // The cache holds message text, so it is as private as a session file (0600).
        let temporary = safe_file::temporary_beside(&target)?;
        encoded.write_to(io::BufWriter::with_capacity(1 << 20, temporary.as_file()))?;
        // Not synced: a cache torn by a crash fails its checksum and is rebuilt, and waiting
        // for the disk would make every listing that updates it wait too.
        temporary.persist(&target).map_err(|e| e.error)?;
        Ok(())
    }
}

/// The entries of the cache file at `path`: from `kept` if it holds the file as it is, else
/// read in its parts, the message texts straight into the buffer that becomes their string
/// (they are most of the file), then kept.
fn read_cache_file(
    path: &Path,
    kept: Option<&LoadedCaches>,
) -> io::Result<Result<memo::Entries, codec::DecodeError>> {
    // Never through a symlink, never a FIFO or device, never past the size it has now.
    let file = safe_file::open_regular(path, safe_file::Access::Read, false)?;
    let stamp = FileStamp::of(&file.metadata()?);
    if let Some(entries) = kept.and_then(|kept| kept.get(path, &stamp)) {
        return Ok(Ok(Arc::unwrap_or_clone(entries)));
    }
    let read = read_cache_parts(&file, stamp.size)?;
    let read = read.map(|entries| entries.into_iter().collect::<memo::Entries>());
    if let (Some(kept), Ok(entries)) = (kept, &read) {
        kept.keep(path, stamp, Arc::new(entries.clone()));
    }
    Ok(read)
}

fn read_cache_parts(
    file: &std::fs::File,
    size: u64,
) -> io::Result<Result<Vec<(String, CacheEntry)>, codec::DecodeError>> {
    let header = read_next(file, codec::HEADER_LEN as u64)?;
    let header = match codec::Header::parse(&header) {
        Ok(header) => header,
        Err(e) => return Ok(Err(e)),
    };
    let records_end = (codec::HEADER_LEN as u64).saturating_add(header.records_len);
    if records_end.saturating_add(header.texts_len) != size {
        return Ok(Err(codec::DecodeError::Truncated));
    }
    let records = read_next(file, header.records_len)?;
    let texts = read_next(file, header.texts_len)?;
    Ok(codec::decode_parts(&header, &records, texts))
}

/// The next `len` bytes of `file` (fewer if it is shorter now).
fn read_next(mut file: &std::fs::File, len: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let capacity = usize::try_from(len).map_err(|_| io::Error::other("cache file too large"))?;
    let mut buffer = Vec::with_capacity(capacity);
    file.by_ref().take(len).read_to_end(&mut buffer)?;
    Ok(buffer)
}

/// The current wall-clock time in ns since the epoch (0 if the clock is before 1970).
pub(crate) fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}
