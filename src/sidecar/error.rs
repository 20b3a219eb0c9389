//! The one mapping from the store's error kinds (which the repo's and the operations' errors
//! share) to JSON-RPC application codes: `code` and `data.kind` for programs, the message for people.

use crate::jsonrpc::{IntoRpcError, RpcError};
use crate::ops::OpError;
use crate::repo::RepoError;
use crate::store::{ErrorKind, StoreError};

/// The application code of each kind, outside JSON-RPC's reserved range (protocol.md's table).
pub(crate) fn error_code(kind: ErrorKind) -> i64 {
    match kind {
        ErrorKind::InvalidSession => 1001,
        ErrorKind::InvalidEntry => 1002,
        ErrorKind::EntryNotFound => 1003,
        ErrorKind::SessionNotFound => 1004,
        ErrorKind::Locked => 1005,
        ErrorKind::Io => 1006,
        ErrorKind::InvalidForkTarget => 1007,
        ErrorKind::SummaryRequired => 1008,
        ErrorKind::InvalidArgument => 1009,
        ErrorKind::NotSaved => 1010,
        ErrorKind::LineTooLong => 1011,
        ErrorKind::AlreadyCompacted => 1012,
        ErrorKind::NothingToCompact => 1013,
        ErrorKind::LeafMoved => 1014,
    }
}

impl IntoRpcError for StoreError {
    fn into_rpc_error(self) -> RpcError {
        let error = RpcError::application(error_code(self.kind), self.message, self.kind.name());
        match self.line {
            Some(line) => error.with_data("line", line),
            None => error,
        }
    }
}

/// An operation's error: the store's kinds as above, and the request-level outcomes.
impl IntoRpcError for OpError {
    fn into_rpc_error(self) -> RpcError {
        match self {
            OpError::Store(e) => e.into_rpc_error(),
            OpError::Cancelled => RpcError::request_cancelled(),
            OpError::InvalidParams(m) => RpcError::invalid_params(m),
            OpError::SummaryRequired { error, missing } => error
                .into_rpc_error()
                .with_data("missing", serde_json::json!(missing)),
            OpError::Internal(m) => RpcError::internal(m),
        }
    }
}

impl IntoRpcError for RepoError {
    fn into_rpc_error(self) -> RpcError {
        StoreError::from(self).into_rpc_error()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn every_kind_has_its_own_code_outside_the_reserved_range() {
        let codes: std::collections::HashSet<i64> =
            ErrorKind::ALL.iter().map(|&k| error_code(k)).collect();
        assert_eq!(codes.len(), ErrorKind::ALL.len());
        assert!(
            codes
                .iter()
                .all(|c| !crate::jsonrpc::error::code::RESERVED.contains(c))
        );
    }

    #[test]
    fn a_file_that_is_not_a_session_is_invalid_session_on_the_wire() {
        let e = RepoError::NotASessionFile {
            path: PathBuf::from("/tmp/notes.txt"),
        }
        .into_rpc_error();
        assert_eq!(e.kind(), Some("invalid_session"));
        assert_eq!(e.code(), 1001);
    }
}
