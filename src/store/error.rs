//! One error type for the store, each kind with a stable name.

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong, by a name clients can match on (`kind()`), with a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    /// What kind of refusal (the error's name on the wire).
    pub kind: ErrorKind,
    /// What went wrong, in one line.
    pub message: String,
    /// The 1-based line of the file the error is about, when there is one.
    pub line: Option<u64>,
    /// The file the error is about, when the message already names it (so a caller that
    /// reports errors per file, as the command line does, does not name it twice).
    pub file: Option<PathBuf>,
}

/// The kinds of store errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The file is not a session this profile can read (header missing or invalid).
    InvalidSession,
    /// A line the profile cannot accept (the harness: any invalid line; pi-1.6: an entry its
    /// context build would throw on).
    InvalidEntry,
    /// An entry id that is not in the session.
    EntryNotFound,
    /// A session file that does not exist.
    SessionNotFound,
    /// Another process holds the write lock.
    Locked,
    /// The file system refused.
    Io,
    /// A fork from an entry pi cannot fork from.
    InvalidForkTarget,
    /// A navigation asked for a summary that nobody supplied.
    SummaryRequired,
    /// A parameter pi would reject (bad session id, empty name, unsupported field...).
    InvalidArgument,
    /// An operation that needs the file before pi's lazy first write made it.
    NotSaved,
    /// A line longer than the reader accepts.
    LineTooLong,
    /// Compaction asked at a leaf that already is a compaction.
    AlreadyCompacted,
    /// Compaction asked where pi finds nothing to summarize.
    NothingToCompact,
    /// The leaf is not where the caller prepared from (its preparation no longer holds).
    LeafMoved,
}

impl ErrorKind {
    /// Every kind, in the order of their wire codes.
    pub const ALL: [ErrorKind; 14] = [
        ErrorKind::InvalidSession,
        ErrorKind::InvalidEntry,
        ErrorKind::EntryNotFound,
        ErrorKind::SessionNotFound,
        ErrorKind::Locked,
        ErrorKind::Io,
        ErrorKind::InvalidForkTarget,
        ErrorKind::SummaryRequired,
        ErrorKind::InvalidArgument,
        ErrorKind::NotSaved,
        ErrorKind::LineTooLong,
        ErrorKind::AlreadyCompacted,
        ErrorKind::NothingToCompact,
        ErrorKind::LeafMoved,
    ];

    /// The stable name clients switch on (`data.kind` on the wire).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidSession => "invalid_session",
            ErrorKind::InvalidEntry => "invalid_entry",
            ErrorKind::EntryNotFound => "entry_not_found",
            ErrorKind::SessionNotFound => "session_not_found",
            ErrorKind::Locked => "locked",
            ErrorKind::Io => "io",
            ErrorKind::InvalidForkTarget => "invalid_fork_target",
            ErrorKind::SummaryRequired => "summary_required",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::NotSaved => "not_saved",
            ErrorKind::LineTooLong => "line_too_long",
            ErrorKind::AlreadyCompacted => "already_compacted",
            ErrorKind::NothingToCompact => "nothing_to_compact",
            ErrorKind::LeafMoved => "leaf_moved",
        }
    }
}

impl StoreError {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        StoreError {
            kind,
            message: message.into(),
            line: None,
            file: None,
        }
    }

    /// An error of `kind` at a 1-based line of the file.
    pub fn at_line(kind: ErrorKind, line: u64, message: impl Into<String>) -> Self {
        StoreError {
            line: Some(line),
            ..StoreError::new(kind, message)
        }
    }

    /// An error about `file` whose message names it.
    pub fn in_file(kind: ErrorKind, file: &Path, message: impl Into<String>) -> Self {
        StoreError::new(kind, message).naming(file)
    }

    /// Marks the message as naming `file` already.
    pub fn naming(mut self, file: &Path) -> Self {
        self.file = Some(file.to_path_buf());
        self
    }

    /// pi's error for an entry id the session does not hold.
    pub fn entry_not_found(id: &str) -> Self {
        StoreError::new(ErrorKind::EntryNotFound, format!("Entry {id} not found"))
    }

    /// The file system refused `what` on `path`: always `io`, whatever the OS error (a missing
    /// directory is not a missing session).
    pub fn io(path: &Path, what: &str, error: std::io::Error) -> Self {
        if super::safe_file::is_not_regular(&error) {
            // "<path>: is a FIFO, not a regular file": what was tried adds nothing.
            return StoreError::in_file(
                ErrorKind::Io,
                path,
                format!("{}: {error}", path.display()),
            );
        }
        StoreError::in_file(
            ErrorKind::Io,
            path,
            format!("{}: {what}: {error}", path.display()),
        )
    }

    /// Opening the session file `path` failed: `session_not_found` when it does not exist,
    /// else `io`.
    pub fn open(path: &Path, what: &str, error: std::io::Error) -> Self {
        let not_found = error.kind() == std::io::ErrorKind::NotFound;
        let mut e = StoreError::io(path, what, error);
        if not_found {
            e.kind = ErrorKind::SessionNotFound;
        }
        e
    }

    /// The kind's name, as the wire spells it.
    pub fn kind_name(&self) -> &'static str {
        self.kind.name()
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StoreError {}

/// A store operation's result.
pub type StoreResult<T> = Result<T, StoreError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_directory_is_io_and_a_missing_session_file_is_not_found() {
        let gone = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let dir = Path::new("/no/such/dir");
        assert_eq!(
            StoreError::io(dir, "cannot create", gone()).kind,
            ErrorKind::Io
        );
        let file = Path::new("/no/such/file.jsonl");
        let e = StoreError::open(file, "cannot open", gone());
        assert_eq!(e.kind, ErrorKind::SessionNotFound);
        assert_eq!(e.file.as_deref(), Some(file));
    }

    #[test]
    fn kind_names_are_distinct() {
        let names: std::collections::HashSet<_> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names.len(), ErrorKind::ALL.len());
    }
}
