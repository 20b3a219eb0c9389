//! The file under a session: read back, locked, appended to, created, rewritten.
//!
//! Differences from pi, on purpose: a writer holds an exclusive advisory lock; an append after
//! a last line without its newline (a torn write) starts on a fresh line instead of being glued
//! to it; a write that fails half-way is rolled back; files are opened and created through
//! [`super::safe_file`] (regular files only, created exclusively, 0600); a rewrite goes through
//! a temporary file and a rename and keeps the original beside it under a name nothing else has.

use std::fs::{File, TryLockError};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use std::sync::Arc;

use super::error::{ErrorKind, StoreError, StoreResult};
use super::safe_file::{self, Access};
use super::sync::{GroupSync, Unsynced};

/// Why a watched file can no longer be followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoneReason {
    Deleted,
    Replaced,
    Truncated,
}

/// A watched file that can no longer be followed, with a message naming it.
#[derive(Debug, Clone)]
pub struct Gone {
    pub reason: GoneReason,
    pub message: String,
}

/// An open session file.
#[derive(Debug)]
pub struct SessionFile {
    path: PathBuf,
    file: File,
    /// The file's length as this process last saw it: where the next line goes.
    len: u64,
    /// The file does not end with `\n`: the next append writes one first.
    torn_tail: bool,
    /// Bytes `0..indexed_end` are in the index (whole lines); bytes after it are new to it.
    indexed_end: u64,
    /// Physical lines in `0..indexed_end`.
    indexed_lines: u64,
    writable: bool,
    durable: bool,
    /// The syncs of this process's appends (writable files only).
    syncs: Option<Arc<GroupSync>>,
}

impl SessionFile {
    /// Opens an existing file for reading only: no lock, never written.
    pub fn open_read(path: &Path) -> StoreResult<Self> {
        let file = safe_file::open_regular(path, Access::Read, true)
            .map_err(|e| StoreError::open(path, "cannot open", e))?;
        Self::from_file(path, file, false, false)
    }

    /// Opens an existing file to append to it, holding the exclusive lock.
    pub fn open_write(path: &Path, durable: bool) -> StoreResult<Self> {
        let file = safe_file::open_regular(path, Access::Append, true)
            .map_err(|e| StoreError::open(path, "cannot open for writing", e))?;
        lock(path, &file)?;
        Self::from_file(path, file, true, durable)
    }

    /// Creates a new file (never replacing one, never through a symlink), locked, holding
    /// `content`. When durable, the file and its directory entry are synced.
    pub fn create_new(path: &Path, content: &str, durable: bool) -> StoreResult<Self> {
        let mut file = safe_file::create_exclusive(path)
            .map_err(|e| StoreError::io(path, "cannot create", e))?;
        lock(path, &file)?;
        let written = file.write_all(content.as_bytes()).and_then(|()| {
            if durable {
                file.sync_all()?;
                safe_file::sync_dir_of(path)?;
            }
            Ok(())
        });
        if let Err(e) = written {
            // Nothing was acknowledged: leave no half-written new file behind.
            let _ = std::fs::remove_file(path);
            return Err(StoreError::io(path, "cannot write", e));
        }
        Self::from_file(path, file, true, durable)
    }

    /// Replaces the file's content with `content`, first copying the old bytes to `backup`
    /// (or `backup.1`, `backup.2`, ... if that name is taken). The new content goes to an
    /// unpredictably named temporary file renamed over the old one, so a crash leaves either
    /// version whole. A session reached through a symlink is rewritten where it really is.
    /// Returns the rewritten file and where the original was kept.
    pub fn rewrite(self, content: &str, backup: &Path) -> StoreResult<(Self, PathBuf)> {
        let path = self.path.clone();
        let real =
            std::fs::canonicalize(&path).map_err(|e| StoreError::io(&path, "cannot resolve", e))?;
        let kept = safe_file::keep_copy(&self.file, self.len, backup)
            .map_err(|e| StoreError::io(backup, "cannot keep the original", e))?;
        let mut temporary = safe_file::temporary_beside(&real)
            .map_err(|e| StoreError::io(&real, "cannot create a temporary file beside", e))?;
        temporary
            .write_all(content.as_bytes())
            .map_err(|e| StoreError::io(temporary.path(), "cannot write", e))?;
        safe_file::replace_with(temporary, &real, self.durable)
            .map_err(|e| StoreError::io(&real, "cannot replace", e))?;
        let durable = self.durable;
        drop(self);
        Ok((Self::open_write(&path, durable)?, kept))
    }

    fn from_file(path: &Path, file: File, writable: bool, durable: bool) -> StoreResult<Self> {
        let len = file
            .metadata()
            .map_err(|e| StoreError::io(path, "cannot stat", e))?
            .len();
        let syncs = match writable {
            true => Some(
                GroupSync::new(path, &file, len)
                    .map_err(|e| StoreError::io(path, "cannot open for syncing", e))?,
            ),
            false => None,
        };
        let mut this = SessionFile {
            path: path.to_path_buf(),
            file,
            len,
            torn_tail: false,
            indexed_end: 0,
            indexed_lines: 0,
            writable,
            durable,
            syncs,
        };
        this.torn_tail = this.ends_without_newline()?;
        Ok(this)
    }

    fn ends_without_newline(&self) -> StoreResult<bool> {
        if self.len == 0 {
            return Ok(false);
        }
        let mut last = [0u8; 1];
        self.file
            .read_exact_at(&mut last, self.len - 1)
            .map_err(|e| StoreError::io(&self.path, "cannot read", e))?;
        Ok(last[0] != b'\n')
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's length as last seen (see [`SessionFile::grown`]).
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the file's last byte is not a newline (a torn or hand-cut last line).
    pub fn has_torn_tail(&self) -> bool {
        self.torn_tail
    }

    /// The underlying file, for streaming reads.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Where the index stops: `(byte offset, physical lines before it)`.
    pub fn indexed(&self) -> (u64, u64) {
        (self.indexed_end, self.indexed_lines)
    }

    /// Records that the index now covers `0..end`, which holds `lines` physical lines.
    pub(super) fn set_indexed(&mut self, end: u64, lines: u64) {
        self.indexed_end = end;
        self.indexed_lines = lines;
    }

    /// Looks at the file's length again. `Ok(true)` when it grew (another program appended:
    /// the caller follows the tail); an error when it shrank (someone cut it: offsets in the
    /// index may no longer hold, so nothing is written or read past that point).
    pub fn grown(&mut self) -> StoreResult<bool> {
        self.refuse_after_failed_sync()?;
        let now = self
            .file
            .metadata()
            .map_err(|e| StoreError::io(&self.path, "cannot stat", e))?
            .len();
        if now < self.indexed_end {
            return Err(self.shrank(now));
        }
        if now == self.len {
            return Ok(false);
        }
        self.len = now;
        self.torn_tail = self.ends_without_newline()?;
        Ok(now > self.indexed_end)
    }

    fn shrank(&self, now: u64) -> StoreError {
        StoreError::new(
            ErrorKind::Io,
            format!(
                "{}: the file shrank from {} to {now} bytes since it was read (another program cut it); reopen the session",
                self.path.display(),
                self.len
            ),
        )
        .naming(&self.path)
    }

    /// Whether the file this session reads is no longer the one at its path, or was cut: what
    /// a watch of the path reports, and after which following the tail means nothing. Unlike
    /// [`SessionFile::grown`], looks at the path too (one `stat`), so only a watch asks.
    pub fn gone(&self) -> StoreResult<Option<Gone>> {
        use std::os::unix::fs::MetadataExt;
        let ours = self
            .file
            .metadata()
            .map_err(|e| StoreError::io(&self.path, "cannot stat", e))?;
        let message = |what: &str| {
            format!(
                "{}: the file was {what} since it was read (another program did it); reopen the session",
                self.path.display()
            )
        };
        match std::fs::metadata(&self.path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Some(Gone {
                    reason: GoneReason::Deleted,
                    message: message("deleted"),
                }));
            }
            Err(e) => return Err(StoreError::io(&self.path, "cannot stat", e)),
            Ok(at_path) if (at_path.dev(), at_path.ino()) != (ours.dev(), ours.ino()) => {
                return Ok(Some(Gone {
                    reason: GoneReason::Replaced,
                    message: message("replaced by another file (renamed over or made anew)"),
                }));
            }
            Ok(_) => {}
        }
        Ok((ours.len() < self.indexed_end).then(|| Gone {
            reason: GoneReason::Truncated,
            message: self.shrank(ours.len()).message,
        }))
    }

    /// Appends one line (without its newline). Returns where its bytes start. Only returns
    /// once the bytes are written (and synced, when durable). A write that fails part-way is
    /// cut back to the previous length, but only while the file still ends where that write
    /// left it (bytes another program appended meanwhile are never cut); otherwise the next
    /// append starts on a fresh line.
    pub fn append_line(&mut self, line: &str) -> StoreResult<u64> {
        let offset = self.append_line_unsynced(line)?;
        self.unsynced()
            .wait()
            .inspect_err(|_| self.cut_unacknowledged())?;
        Ok(offset)
    }

    /// [`SessionFile::append_line`] without the sync: the bytes are written, and
    /// [`SessionFile::unsynced`] says what to wait for before acknowledging them.
    pub fn append_line_unsynced(&mut self, line: &str) -> StoreResult<u64> {
        if !self.writable {
            return Err(StoreError::new(
                ErrorKind::Io,
                format!("{}: opened read-only", self.path.display()),
            )
            .naming(&self.path));
        }
        self.refuse_after_failed_sync()?;
        let mut buffer = Vec::with_capacity(line.len() + 2);
        if self.torn_tail {
            buffer.push(b'\n');
        }
        buffer.extend_from_slice(line.as_bytes());
        buffer.push(b'\n');
        let before = self.len;
        let mut written = 0usize;
        let mut failure = None;
        while written < buffer.len() {
            match self.file.write(&buffer[written..]) {
                Ok(0) => {
                    failure = Some(std::io::Error::from(std::io::ErrorKind::WriteZero));
                    break;
                }
                Ok(n) => written += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = failure {
            self.roll_back(before, written);
            return Err(StoreError::io(&self.path, "cannot append", e));
        }
        // O_APPEND put the bytes at the real end of the file, which is where they start even
        // if another program appended since we last looked.
        let end = self
            .file
            .stream_position()
            .or_else(|_| self.file.seek(SeekFrom::End(0)))
            .map_err(|e| StoreError::io(&self.path, "cannot locate the append", e))?;
        let write_start = end - buffer.len() as u64;
        if write_start != before {
            tracing::warn!(
                "{}: another program wrote {} bytes while this append was written",
                self.path.display(),
                write_start.abs_diff(before)
            );
        }
        self.len = end;
        self.torn_tail = false;
        if let Some(syncs) = &self.syncs {
            syncs.wrote(end);
        }
        // The line is the last `line.len() + 1` bytes written (after any fresh-line newline).
        Ok(end - line.len() as u64 - 1)
    }

    /// What to wait for before acknowledging the appends written so far: nothing unless the
    /// file is durable.
    pub fn unsynced(&self) -> Unsynced {
        match (&self.syncs, self.durable) {
            (Some(syncs), true) => Unsynced::through(syncs.clone(), self.len),
            _ => Unsynced::none(),
        }
    }

    /// Syncs run for this file's appends (several appends may share one).
    pub fn syncs(&self) -> u64 {
        self.syncs.as_ref().map_or(0, |s| s.syncs())
    }

    /// After a failed sync nothing is read or written any more (what the index holds past the
    /// last good sync may not be on disk); unacknowledged bytes are cut when that is safe.
    fn refuse_after_failed_sync(&mut self) -> StoreResult<()> {
        match self.syncs.as_ref().and_then(|s| s.failure()) {
            None => Ok(()),
            Some(error) => {
                self.cut_unacknowledged();
                Err(error)
            }
        }
    }

    /// Cuts what this process appended after the last good sync (nothing of it was
    /// acknowledged), while the file still ends where its last append left it.
    fn cut_unacknowledged(&mut self) {
        let Some((written, synced)) = self.syncs.as_ref().map(|s| s.extent()) else {
            return;
        };
        if written > synced && self.len == written {
            self.roll_back(synced, (written - synced) as usize);
        }
    }

    /// Cuts a failed write back to `before`, if the file still ends at `before + written`.
    fn roll_back(&mut self, before: u64, written: usize) {
        let now = self.file.metadata().map(|m| m.len());
        match now {
            Ok(now) if now == before + written as u64 => {
                if written == 0 || self.file.set_len(before).is_ok() {
                    self.len = before;
                    return;
                }
                self.len = now;
            }
            Ok(now) => self.len = now,
            Err(_) => {}
        }
        // Bytes of ours may remain (or someone else's follow them): start fresh next time.
        self.torn_tail = self.ends_without_newline().unwrap_or(true);
    }

    /// Syncs every append from now on, and what is already written (bytes and name) now.
    pub fn make_durable(&mut self) -> StoreResult<()> {
        if self.writable {
            self.file
                .sync_all()
                .map_err(|e| StoreError::io(&self.path, "cannot sync", e))?;
            super::sync::fsync_parent(&self.path)?;
        }
        self.durable = true;
        Ok(())
    }

    /// Ends a last line that lacks its newline (pi 1.6's repair on open), with the newline
    /// the next append would otherwise write first.
    pub fn end_torn_line(&mut self) -> StoreResult<()> {
        if !self.torn_tail {
            return Ok(());
        }
        if let Err(e) = self.file.write_all(b"\n") {
            self.len = self.file.metadata().map(|m| m.len()).unwrap_or(self.len);
            return Err(StoreError::io(&self.path, "cannot end the last line", e));
        }
        if self.durable {
            self.file
                .sync_data()
                .map_err(|e| StoreError::io(&self.path, "cannot sync", e))?;
        }
        self.len += 1;
        self.torn_tail = false;
        Ok(())
    }

    /// Reads `len` bytes at `offset`.
    pub fn read_at(&self, offset: u64, len: usize) -> StoreResult<Vec<u8>> {
        let mut buffer = vec![0u8; len];
        self.file
            .read_exact_at(&mut buffer, offset)
            .map_err(|e| StoreError::io(&self.path, "cannot read", e))?;
        Ok(buffer)
    }
}

fn lock(path: &Path, file: &File) -> StoreResult<()> {
    match try_write_lock(file) {
        Ok(true) => Ok(()),
        Ok(false) => Err(locked(path)),
        Err(e) => Err(StoreError::io(path, "cannot lock", e)),
    }
}

/// The error for a file whose write lock another process holds.
pub fn locked(path: &Path) -> StoreError {
    StoreError::new(
        ErrorKind::Locked,
        format!(
            "{}: another process has this session open for writing",
            path.display()
        ),
    )
    .naming(path)
}

/// Tries the lock a writer holds on a session file: `Ok(false)` when someone holds it. The
/// lock is released when `file` is closed. Delete takes it too, so that it never removes a
/// file a writer is appending to.
pub fn try_write_lock(file: &File) -> std::io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(TryLockError::WouldBlock) => Ok(false),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn appended(path: &Path, bytes: &[u8]) {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(bytes).unwrap();
    }

    #[test]
    fn a_failed_write_is_cut_back_only_while_the_file_ends_where_it_left_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut file = SessionFile::create_new(&path, "{\"type\":\"session\"}\n", false).unwrap();
        let before = file.len();
        // Half of a line landed, then the write failed: cut back, no torn tail left.
        appended(&path, b"{\"type\":\"mess");
        file.roll_back(before, 13);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), before);
        assert!(!file.has_torn_tail());
        // Half a line landed and another program appended after it: nothing is cut, and the
        // next append starts on a fresh line.
        appended(&path, b"{\"type\":\"mess");
        appended(&path, b"{\"other\":1}");
        file.roll_back(before, 13);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), before + 13 + 11);
        assert!(file.has_torn_tail());
        let offset = file.append_line("{\"type\":\"x\"}").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(&text[offset as usize..], "{\"type\":\"x\"}\n");
        assert_eq!(text.as_bytes()[offset as usize - 1], b'\n');
    }
}
