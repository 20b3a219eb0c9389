//! The one error type of the directory layer. Each kind has a stable name for the wire.

use std::fmt;
use std::io;
use std::path::PathBuf;

#[derive(Debug)]
pub enum RepoError {
    /// A caller-given session id that pi would refuse (same rule, same message).
    InvalidSessionId { id: String },
    /// A path argument that names no path (for instance a `file://` URL with a host).
    InvalidPath { input: String, reason: &'static str },
    /// The environment gives no home directory or no current directory.
    Environment { reason: String },
    /// A delete request for a file that is not a `.jsonl` session file.
    NotASessionFile { path: PathBuf },
    /// Another process (or this one) holds the write lock of the session file.
    Locked { path: PathBuf },
    /// A file system operation failed.
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
}

/// pi's message for an id that does not match `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`.
pub const INVALID_SESSION_ID_MESSAGE: &str = "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character";

impl RepoError {
    /// The stable name of this kind of error.
    pub fn kind(&self) -> &'static str {
        match self {
            RepoError::InvalidSessionId { .. } => "invalid_session_id",
            RepoError::InvalidPath { .. } => "invalid_path",
            RepoError::Environment { .. } => "environment",
            RepoError::NotASessionFile { .. } => "not_a_session_file",
            RepoError::Locked { .. } => "locked",
            RepoError::Io { .. } => "io",
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
            RepoError::InvalidPath { input, reason } => {
                write!(f, "invalid path {input:?}: {reason}")
            }
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
