//! The file under a session: read back, locked, appended to, created, rewritten.
//!
//! Differences from pi, on purpose: a writer holds an exclusive advisory lock; an append after
//! a last line without its newline (a torn write) starts on a fresh line instead of being glued
//! to it; new files are created 0600; a rewrite goes through a temporary file and a rename.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::error::{ErrorKind, StoreError, StoreResult};

/// An open session file.
#[derive(Debug)]
pub struct SessionFile {
    path: PathBuf,
    file: File,
    /// Where the next line goes.
    len: u64,
    /// The file does not end with `\n`: the next append writes one first.
    torn_tail: bool,
    writable: bool,
    durable: bool,
}

impl SessionFile {
    /// Opens an existing file for reading only: no lock, never written.
    pub fn open_read(path: &Path) -> StoreResult<Self> {
        let file = File::open(path).map_err(|e| StoreError::open(path, "cannot open", e))?;
        Self::from_file(path, file, false, false)
    }

    /// Opens an existing file to append to it, holding the exclusive lock.
    pub fn open_write(path: &Path, durable: bool) -> StoreResult<Self> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(path)
            .map_err(|e| StoreError::open(path, "cannot open for writing", e))?;
        lock(path, &file)?;
        Self::from_file(path, file, true, durable)
    }

    /// Creates a new file (never replacing one), locked, holding `content`.
    pub fn create_new(path: &Path, content: &str, durable: bool) -> StoreResult<Self> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| StoreError::io(path, "cannot create", e))?;
        lock(path, &file)?;
        file.write_all(content.as_bytes())
            .map_err(|e| StoreError::io(path, "cannot write", e))?;
        if durable {
            file.sync_all()
                .map_err(|e| StoreError::io(path, "cannot sync", e))?;
        }
        Self::from_file(path, file, true, durable)
    }

    /// Replaces the file's content with `content`, first keeping the old bytes at `backup`.
    /// The new content is written to a temporary file and renamed over the old one, so a crash
    /// leaves either version whole.
    pub fn rewrite(self, content: &str, backup: &Path) -> StoreResult<Self> {
        let path = self.path.clone();
        std::fs::copy(&path, backup)
            .map_err(|e| StoreError::io(backup, "cannot keep the original", e))?;
        let temporary = path.with_extension("jsonl.rewrite");
        {
            let mut out = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&temporary)
                .map_err(|e| StoreError::io(&temporary, "cannot create", e))?;
            out.write_all(content.as_bytes())
                .map_err(|e| StoreError::io(&temporary, "cannot write", e))?;
            out.sync_all()
                .map_err(|e| StoreError::io(&temporary, "cannot sync", e))?;
        }
        std::fs::rename(&temporary, &path)
            .map_err(|e| StoreError::io(&path, "cannot replace", e))?;
        let durable = self.durable;
        drop(self);
        Self::open_write(&path, durable)
    }

    fn from_file(path: &Path, file: File, writable: bool, durable: bool) -> StoreResult<Self> {
        let meta = file
            .metadata()
            .map_err(|e| StoreError::io(path, "cannot stat", e))?;
        if meta.is_dir() {
            return Err(StoreError::new(
                ErrorKind::Io,
                format!("{}: is a directory", path.display()),
            )
            .naming(path));
        }
        let len = meta.len();
        let mut last = [0u8; 1];
        let torn_tail = len > 0 && {
            file.read_exact_at(&mut last, len - 1)
                .map_err(|e| StoreError::io(path, "cannot read", e))?;
            last[0] != b'\n'
        };
        Ok(SessionFile {
            path: path.to_path_buf(),
            file,
            len,
            torn_tail,
            writable,
            durable,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

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

    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// The underlying file, for streaming reads.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Appends one line (without its newline). Returns where its bytes start. Only returns
    /// once the bytes are written (and synced, when durable).
    pub fn append_line(&mut self, line: &str) -> StoreResult<u64> {
        if !self.writable {
            return Err(StoreError::new(
                ErrorKind::Io,
                format!("{}: opened read-only", self.path.display()),
            )
            .naming(&self.path));
        }
        let mut buffer = Vec::with_capacity(line.len() + 2);
        if self.torn_tail {
            buffer.push(b'\n');
        }
        let start = self.len + buffer.len() as u64;
        buffer.extend_from_slice(line.as_bytes());
        buffer.push(b'\n');
        if let Err(e) = self.file.write_all(&buffer) {
            // Some bytes may have landed: make the next append start on a fresh line.
            self.torn_tail = true;
            self.len = self.file.metadata().map(|m| m.len()).unwrap_or(self.len);
            return Err(StoreError::io(&self.path, "cannot append", e));
        }
        if self.durable {
            self.file
                .sync_data()
                .map_err(|e| StoreError::io(&self.path, "cannot sync", e))?;
        }
        self.len += buffer.len() as u64;
        self.torn_tail = false;
        Ok(start)
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
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => Err(StoreError::new(
            ErrorKind::Locked,
            format!(
                "{}: another process has this session open for writing",
                path.display()
            ),
        )
        .naming(path)),
        Err(TryLockError::Error(e)) => Err(StoreError::io(path, "cannot lock", e)),
    }
}
