//! The errors of the directory layer. Each has one of the store's kinds ([`ErrorKind`]), so
//! the wire and the command line see one set of kinds; it converts into a [`StoreError`].

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::store::{ErrorKind, StoreError};

/// Why a sessions-directory operation failed.
#[derive(Debug)]
pub enum RepoError {
    /// A caller-given session id that pi would refuse (same rule, same message).
    InvalidSessionId {
        /// The id.
        id: String,
    },
    /// A caller-given session id that cannot name a session file (the placement
    /// rules: one file-name component, no control characters, short enough).
    UnusableSessionId {
        /// The id.
        id: String,
        /// Why it cannot name a file.
        reason: &'static str,
    },
    /// A path argument that names no path (for instance a `file://` URL with a host).
    InvalidPath {
        /// The argument.
        input: String,
        /// Why it names no path.
        reason: &'static str,
    },
    /// A member of pi's `settings.json` of a type pi cannot use.
    InvalidSetting {
        /// The member's name.
        setting: String,
        /// The type pi expects.
        expected: &'static str,
        /// The settings file.
        file: String,
    },
    /// The environment gives no home directory or no current directory.
    Environment {
        /// What is missing.
        reason: String,
    },
    /// A file that is not a `.jsonl` session file (a delete request for one).
    NotASessionFile {
        /// The file.
        path: PathBuf,
    },
    /// Another process (or this one) holds the write lock of the session file.
    Locked {
        /// The session file.
        path: PathBuf,
    },
    /// A file system operation failed.
    Io {
        /// What was being done.
        action: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The OS's error.
        source: io::Error,
    },
}

/// pi's message for an id that does not match `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`.
pub const INVALID_SESSION_ID_MESSAGE: &str = "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character";

impl RepoError {
    /// The kind clients see (protocol.md's table).
    pub fn kind(&self) -> ErrorKind {
        match self {
            RepoError::InvalidSessionId { .. }
            | RepoError::UnusableSessionId { .. }
            | RepoError::InvalidPath { .. }
            | RepoError::InvalidSetting { .. } => ErrorKind::InvalidArgument,
            RepoError::NotASessionFile { .. } => ErrorKind::InvalidSession,
            RepoError::Locked { .. } => ErrorKind::Locked,
            RepoError::Environment { .. } | RepoError::Io { .. } => ErrorKind::Io,
        }
    }

    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        RepoError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

impl fmt::Display for RepoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RepoError::InvalidSessionId { .. } => f.write_str(INVALID_SESSION_ID_MESSAGE),
            RepoError::UnusableSessionId { id, reason } => {
                write!(f, "session id {id:?} cannot name a session file: {reason}")
            }
            RepoError::InvalidPath { input, reason } => {
                write!(f, "invalid path {input:?}: {reason}")
            }
            RepoError::InvalidSetting {
                setting,
                expected,
                file,
            } => write!(f, "{file}: `{setting}` must be {expected}"),
            RepoError::Environment { reason } => f.write_str(reason),
            RepoError::Locked { path } => write!(
                f,
                "{}: another process has this session open for writing",
                path.display()
            ),
            RepoError::NotASessionFile { path } => write!(
                f,
                "{} is not a session file (session files end in .jsonl)",
                path.display()
            ),
            RepoError::Io {
                action,
                path,
                source,
            } => write!(f, "cannot {action} {}: {source}", path.display()),
        }
    }
}

impl std::error::Error for RepoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RepoError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<RepoError> for StoreError {
    fn from(error: RepoError) -> Self {
        let e = StoreError::new(error.kind(), error.to_string());
        match &error {
            RepoError::NotASessionFile { path } | RepoError::Io { path, .. } => e.naming(path),
            _ => e,
        }
    }
}
