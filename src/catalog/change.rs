//! The change detector: what happened to a session file since it was last indexed. One small
//! interface, shared by everything that follows files incrementally (the store index today;
//! the store's live feed and the PostgreSQL backend later): a file is identified by device and
//! inode, and remembered by its size, how many entries were indexed, and hashes of its first
//! and last bytes up to that size (which an append never changes).

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;

/// How many bytes each of the two hashes covers.
const WINDOW: u64 = 4096;

/// What was known of a file when it was last indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStamp {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    /// The size the indexed entries were read from (the file may have been longer).
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
    /// Entries indexed: a file that grew is read on from this entry.
    pub(crate) entries: u64,
    /// xxh3 of the first `WINDOW` bytes below `size`.
    pub(crate) head_hash: u64,
    /// xxh3 of the last `WINDOW` bytes below `size`.
    pub(crate) tail_hash: u64,
}

/// What happened to a file since its stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// Never indexed.
    New,
    Unchanged,
    /// Only appended to: index from entry `from_entry` on.
    Grew {
        from_entry: u64,
    },
    /// Replaced, truncated or rewritten: index it again from the start.
    Replaced,
    /// No longer there (or no longer a regular file).
    Gone,
}

/// The file's identity and size now, before it is read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Observed {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
}

impl Observed {
    pub(crate) fn of(path: &Path) -> io::Result<Option<Observed>> {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_file() => Ok(Some(Observed {
                dev: meta.dev(),
                ino: meta.ino(),
                size: meta.len(),
                mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            })),
            Ok(_) => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Compares `path` now with what `previous` remembers.
pub(crate) fn detect(
    path: &Path,
    previous: Option<&FileStamp>,
) -> io::Result<(Change, Option<Observed>)> {
    let Some(now) = Observed::of(path)? else {
        return Ok((Change::Gone, None));
    };
    let Some(before) = previous else {
        return Ok((Change::New, Some(now)));
    };
    if (now.dev, now.ino) != (before.dev, before.ino) || now.size < before.size {
        return Ok((Change::Replaced, Some(now)));
    }
    if now.size == before.size && now.mtime_ns == before.mtime_ns {
        return Ok((Change::Unchanged, Some(now)));
    }
    // Same file, as long or longer: appended to only if the bytes it had are still there.
    let (head, tail) = hashes(path, before.size)?;
    let change = if (head, tail) != (before.head_hash, before.tail_hash) {
        Change::Replaced
    } else if now.size == before.size {
        Change::Unchanged
    } else {
        Change::Grew {
            from_entry: before.entries,
        }
    };
    Ok((change, Some(now)))
}

/// The stamp of `path` indexed up to `entries` entries, read from a file that was `observed`
/// before the read (so bytes appended during the read are looked at again next time).
pub(crate) fn stamp(path: &Path, observed: Observed, entries: u64) -> io::Result<FileStamp> {
    let (head_hash, tail_hash) = hashes(path, observed.size)?;
    Ok(FileStamp {
        dev: observed.dev,
        ino: observed.ino,
        size: observed.size,
        mtime_ns: observed.mtime_ns,
        entries,
        head_hash,
        tail_hash,
    })
}

fn hashes(path: &Path, size: u64) -> io::Result<(u64, u64)> {
    let file = File::open(path)?;
    let read = |at: u64, len: u64| -> io::Result<u64> {
        let mut buf = vec![0; len as usize];
        let mut done = 0;
        while done < buf.len() {
            match file.read_at(&mut buf[done..], at + done as u64)? {
                0 => break,
                n => done += n,
            }
        }
        buf.truncate(done);
        Ok(xxhash_rust::xxh3::xxh3_64(&buf))
    };
    let head = read(0, size.min(WINDOW))?;
    let tail_start = size.saturating_sub(WINDOW);
    let tail = read(tail_start, size - tail_start)?;
    Ok((head, tail))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn grown_replaced_gone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, "one\ntwo\n").unwrap();
        let (change, observed) = detect(&path, None).unwrap();
        assert_eq!(change, Change::New);
        let first = stamp(&path, observed.unwrap(), 2).unwrap();
        assert_eq!(detect(&path, Some(&first)).unwrap().0, Change::Unchanged);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(b"three\n").unwrap();
        assert_eq!(
            detect(&path, Some(&first)).unwrap().0,
            Change::Grew { from_entry: 2 }
        );
        // Rewritten in place, longer: the old bytes changed.
        std::fs::write(&path, "ONE\ntwo\nthree\nfour\n").unwrap();
        assert_eq!(detect(&path, Some(&first)).unwrap().0, Change::Replaced);
        std::fs::write(&path, "o\n").unwrap();
        assert_eq!(detect(&path, Some(&first)).unwrap().0, Change::Replaced);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(detect(&path, Some(&first)).unwrap().0, Change::Gone);
    }
}
