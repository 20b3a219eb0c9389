//! Errors as they travel on the wire.
//!
//! Protocol errors use JSON-RPC's reserved codes (and LSP's two additions, -32002 and -32800).
//! Application errors (the store's and the operations') use codes outside the reserved range
//! -32768..=-32000 and always carry `data.kind`, a stable name clients can switch on. They are
//! mapped in one place, `sessions/error.rs`, by implementing [`IntoRpcError`].

use std::fmt;

use jsonrpc_core::{Error, ErrorCode};
use serde_json::{Map, Value};

/// The numeric error codes this server sends.
pub mod code {
    /// The bytes of a frame are not JSON (or not a frame at all).
    pub const PARSE_ERROR: i64 = -32700;
    /// JSON, but not a valid JSON-RPC request; also: a request after `shutdown`, a frame over
    /// the size limit, a batch.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No method of that name.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The params do not fit the method; the message names the parameter.
    pub const INVALID_PARAMS: i64 = -32602;
    /// A method panicked or its result could not be serialized.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// A request other than `initialize` arrived before `initialize` (as in LSP).
    pub const SERVER_NOT_INITIALIZED: i64 = -32002;
    /// The client cancelled the request with `$/cancelRequest` (as in LSP).
    pub const REQUEST_CANCELLED: i64 = -32800;

    /// The range JSON-RPC reserves for protocol errors; application codes stay outside it.
    #[cfg(test)]
    pub const RESERVED: std::ops::RangeInclusive<i64> = -32768..=-32000;
}

/// An error answer to a request: code, message and optional data.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError(Error);

impl RpcError {
    /// An error with any code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError(Error {
            code: ErrorCode::from(code),
            message: message.into(),
            data: None,
        })
    }

    /// -32700: the frame is not JSON.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(code::PARSE_ERROR, format!("parse error: {detail}"))
    }

    /// -32600: not a valid request, or not acceptable now.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(code::INVALID_REQUEST, format!("invalid request: {detail}"))
    }

    /// -32601 naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            code::METHOD_NOT_FOUND,
            format!("method not found: '{method}'"),
        )
    }

    /// -32602; `detail` should name the parameter, e.g. `missing field 'sessionId'`.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        Self::new(code::INVALID_PARAMS, format!("invalid params: {detail}"))
    }

    /// -32603: something went wrong inside the server.
    pub fn internal(detail: impl fmt::Display) -> Self {
        Self::new(code::INTERNAL_ERROR, format!("internal error: {detail}"))
    }

    /// -32002: a request before `initialize`.
    pub fn server_not_initialized() -> Self {
        Self::new(
            code::SERVER_NOT_INITIALIZED,
            "server not initialized: send 'initialize' first",
        )
    }

    /// -32800: the client cancelled the request.
    pub fn request_cancelled() -> Self {
        Self::new(code::REQUEST_CANCELLED, "request cancelled")
    }

    /// An application error: `code` outside -32768..=-32000, a human message, and a stable
    /// `kind` put in `data.kind` (for example `session_not_found`). More data fields can be
    /// added with [`RpcError::with_data`].
    pub fn application(code: i64, message: impl Into<String>, kind: &str) -> Self {
        Self::new(code, message).with_data("kind", kind)
    }

    /// Adds `key: value` to the `data` object (creating it), e.g. the line of a bad file.
    pub fn with_data(mut self, key: &str, value: impl Into<Value>) -> Self {
        let mut data = match self.0.data.take() {
            Some(Value::Object(map)) => map,
            // A non-object data value is kept under "value" so nothing is lost.
            Some(other) => Map::from_iter([("value".to_owned(), other)]),
            None => Map::new(),
        };
        data.insert(key.to_owned(), value.into());
        self.0.data = Some(Value::Object(data));
        self
    }

    /// The numeric code.
    pub fn code(&self) -> i64 {
        self.0.code.code()
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The `data` member, if any.
    pub fn data(&self) -> Option<&Value> {
        self.0.data.as_ref()
    }

    /// `data.kind` of an application error.
    pub fn kind(&self) -> Option<&str> {
        self.0.data.as_ref()?.get("kind")?.as_str()
    }

    /// The jsonrpc-core error object, as serialized on the wire.
    pub fn into_inner(self) -> Error {
        self.0
    }
}

impl From<RpcError> for Error {
    fn from(error: RpcError) -> Self {
        error.0
    }
}

impl From<Error> for RpcError {
    fn from(error: Error) -> Self {
        RpcError(error)
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.0.message, self.code())
    }
}

impl std::error::Error for RpcError {}

/// The one place a lower layer's error becomes a wire error. The store implements this for
/// its error type; then `?` works inside methods, through the `From` impl below.
pub trait IntoRpcError {
    /// The wire form of this error: usually [`RpcError::application`] with a stable kind.
    fn into_rpc_error(self) -> RpcError;
}

impl<E: IntoRpcError> From<E> for RpcError {
    fn from(error: E) -> Self {
        error.into_rpc_error()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn application_errors_carry_kind_and_extra_data() {
        let error = RpcError::application(1001, "no session 'abc'", "session_not_found")
            .with_data("sessionId", "abc");
        assert_eq!(error.code(), 1001);
        assert_eq!(error.kind(), Some("session_not_found"));
        let wire = serde_json::to_value(error.into_inner()).unwrap();
        assert_eq!(
            wire,
            json!({"code": 1001, "message": "no session 'abc'",
                   "data": {"kind": "session_not_found", "sessionId": "abc"}})
        );
    }

    #[test]
    fn lower_layer_errors_convert_with_question_mark() {
        struct Locked;
        impl IntoRpcError for Locked {
            fn into_rpc_error(self) -> RpcError {
                RpcError::application(1005, "session is locked", "locked")
            }
        }
        fn method() -> Result<(), RpcError> {
            Err(Locked)?
        }
        assert_eq!(method().unwrap_err().kind(), Some("locked"));
    }

    #[test]
    fn reserved_codes_are_in_the_reserved_range() {
        for c in [
            code::PARSE_ERROR,
            code::INVALID_REQUEST,
            code::METHOD_NOT_FOUND,
            code::INVALID_PARAMS,
            code::INTERNAL_ERROR,
            code::SERVER_NOT_INITIALIZED,
        ] {
            assert!(code::RESERVED.contains(&c));
        }
    }
}
