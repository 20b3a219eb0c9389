//! One error type for the store, each kind with a stable name.

use std::fmt;
use std::path::Path;

/// What went wrong, by a name clients can match on (`kind()`), with a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    pub kind: ErrorKind,
    pub message: String,
    /// The 1-based line of the file the error is about, when there is one.
    pub line: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The file is not a session this profile can read (header missing or invalid).
    InvalidSession,
    /// A line the harness profile cannot accept.
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
}

impl ErrorKind {
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
        }
    }
}

impl StoreError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        StoreError {
            kind,
            message: message.into(),
            line: None,
        }
    }

    pub fn at_line(kind: ErrorKind, line: u64, message: impl Into<String>) -> Self {
        StoreError {
            kind,
            message: message.into(),
            line: Some(line),
        }
    }

    pub fn entry_not_found(id: &str) -> Self {
        StoreError::new(ErrorKind::EntryNotFound, format!("Entry {id} not found"))
    }

    pub fn io(path: &Path, what: &str, error: std::io::Error) -> Self {
        if super::safe_file::is_not_regular(&error) {
            // "<path>: is a FIFO, not a regular file": what was tried adds nothing.
            return StoreError::new(ErrorKind::Io, format!("{}: {error}", path.display()));
        }
        let kind = if error.kind() == std::io::ErrorKind::NotFound {
            ErrorKind::SessionNotFound
        } else {
            ErrorKind::Io
        };
        StoreError::new(kind, format!("{}: {what}: {error}", path.display()))
    }

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

pub type StoreResult<T> = Result<T, StoreError>;
