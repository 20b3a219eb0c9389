//! Why an operation did not happen.

use crate::repo::RepoError;
use crate::store::{ErrorKind, StoreError};

/// Why an operation failed.
#[derive(Debug, Clone, PartialEq)]
pub enum OpError {
    /// The store or a sessions directory refused (its kind is the error's name on the wire).
    Store(StoreError),
    /// The client cancelled the request while its hook was being asked: nothing changed.
    Cancelled,
    /// Parameters that contradict each other.
    InvalidParams(String),
    /// A compaction that needs the model's answers to these requests of its preparation.
    SummaryRequired {
        /// The refusal (its kind and message).
        error: StoreError,
        /// The purposes of the requests without an answer.
        missing: Vec<String>,
    },
    /// The machinery failed (a worker thread that died).
    Internal(String),
}

impl OpError {
    /// The store refusing with `kind` and `message`.
    pub fn store(kind: ErrorKind, message: impl Into<String>) -> OpError {
        OpError::Store(StoreError::new(kind, message))
    }
}

impl From<StoreError> for OpError {
    fn from(error: StoreError) -> Self {
        OpError::Store(error)
    }
}

/// The store index could not answer (its database, a team's server): an I/O failure.
impl From<crate::catalog::CatalogError> for OpError {
    fn from(e: crate::catalog::CatalogError) -> OpError {
        OpError::store(ErrorKind::Io, e.message)
    }
}

impl From<RepoError> for OpError {
    fn from(error: RepoError) -> Self {
        OpError::Store(error.into())
    }
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpError::Store(e) | OpError::SummaryRequired { error: e, .. } => {
                f.write_str(&e.message)
            }
            OpError::Cancelled => f.write_str("request cancelled"),
            OpError::InvalidParams(m) | OpError::Internal(m) => f.write_str(m),
        }
    }
}
