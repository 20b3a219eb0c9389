//! JSON-RPC messages: telling what the client sent, and building what the server sends.
//!
//! Incoming bytes are parsed once into a `serde_json::Value`, checked member by member (so an
//! invalid request is told exactly what is wrong), then handed to jsonrpc-core's types. Members
//! JSON-RPC does not define are ignored rather than refused. Batches are refused as a whole
//! (see `protocol/protocol.md`). Responses from the client (answers to hooks) are recognized
//! here too, since jsonrpc-core only knows requests.

use jsonrpc_core::{Call, Error, ErrorCode, Id, MethodCall, Notification, Output, Params, Version};
use serde_json::{Map, Value};

use super::error::RpcError;

/// What one frame turned out to be.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A request: it gets exactly one response.
    Request(MethodCall),
    /// A notification: it never gets a response.
    Notification(Notification),
    /// The client's answer to a server -> client request.
    Response {
        id: Option<Value>,
        answer: Result<Value, Error>,
    },
    /// Not acceptable; answered with `error` and `id` (null when unknown).
    Invalid { id: Id, error: RpcError },
    /// Not acceptable, but without an `id`: a notification, which is never answered (logged).
    Ignored { detail: String },
}

/// The members a request or notification may have; anything else is ignored.
const CALL_MEMBERS: [&str; 4] = ["jsonrpc", "method", "params", "id"];

pub(crate) fn parse_incoming(bytes: &[u8]) -> Incoming {
    // A message with lone surrogate escapes (JSON.parse takes them; serde_json does not) or
    // with the character that stands them in is read with them stood in; the values that
    // become JavaScript values (entries and the like) get them back.
    let protected = crate::format::wire_surrogates::protect(bytes);
    let value: Value = match serde_json::from_slice(protected.as_deref().unwrap_or(bytes)) {
        Ok(value) => value,
        Err(error) => {
            return Incoming::Invalid {
                id: Id::Null,
                error: RpcError::parse_error(error),
            };
        }
    };
    match value {
        Value::Object(members) => classify_object(members),
        Value::Array(items) if items.is_empty() => invalid(Id::Null, "empty batch"),
        Value::Array(_) => invalid(
            Id::Null,
            "batches are not supported; send each message in its own frame",
        ),
        _ => invalid(Id::Null, "a message must be a JSON object"),
    }
}

fn invalid(id: Id, detail: &str) -> Incoming {
    Incoming::Invalid {
        id,
        error: RpcError::invalid_request(detail),
    }
}

fn classify_object(members: Map<String, Value>) -> Incoming {
    let has_id = members.contains_key("id");
    // `exit` ends the server whatever else its message holds: a client on its way out must
    // not be kept by a typo in its params.
    if !has_id && members.get("method").and_then(Value::as_str) == Some("exit") {
        return Incoming::Notification(Notification {
            jsonrpc: Some(Version::V2),
            method: "exit".into(),
            params: Params::None,
        });
    }
    match classify_call(members) {
        Incoming::Invalid { error, .. } if !has_id => Incoming::Ignored {
            detail: error.message().to_owned(),
        },
        incoming => incoming,
    }
}

fn classify_call(mut members: Map<String, Value>) -> Incoming {
    if !members.contains_key("method") {
        if members.contains_key("result") || members.contains_key("error") {
            return classify_response(members);
        }
        let id = members.get("id").and_then(parse_id).unwrap_or(Id::Null);
        return invalid(
            id,
            "not a request, notification or response (no 'method', 'result' or 'error')",
        );
    }
    let id = match members.get("id") {
        None => None,
        Some(raw) => match parse_id(raw) {
            Some(id) => Some(id),
            None => {
                return invalid(
                    Id::Null,
                    "'id' must be a string, a non-negative integer or null",
                );
            }
        },
    };
    let reply_id = id.clone().unwrap_or(Id::Null);
    if members.get("jsonrpc") != Some(&Value::from("2.0")) {
        return invalid(reply_id, "'jsonrpc' must be \"2.0\"");
    }
    if !members.get("method").is_some_and(Value::is_string) {
        return invalid(reply_id, "'method' must be a string");
    }
    match members.get("params") {
        None | Some(Value::Null | Value::Object(_) | Value::Array(_)) => {}
        Some(_) => return invalid(reply_id, "'params' must be an object or an array"),
    }
    members.retain(|key, _| CALL_MEMBERS.contains(&key.as_str()));
    if members.get("params") == Some(&Value::Null) {
        members.remove("params");
    }
    match serde_json::from_value::<Call>(Value::Object(members)) {
        Ok(Call::MethodCall(call)) => Incoming::Request(call),
        Ok(Call::Notification(notification)) => Incoming::Notification(notification),
        Ok(Call::Invalid { .. }) | Err(_) => invalid(reply_id, "malformed request"),
    }
}

fn parse_id(raw: &Value) -> Option<Id> {
    match raw {
        Value::Null => Some(Id::Null),
        Value::String(s) => Some(Id::Str(s.clone())),
        Value::Number(n) => n.as_u64().map(Id::Num),
        _ => None,
    }
}

fn classify_response(mut members: Map<String, Value>) -> Incoming {
    let id = members.remove("id");
    let answer = match members.remove("error") {
        Some(error) => Err(parse_client_error(error)),
        None => Ok(members.remove("result").unwrap_or(Value::Null)),
    };
    Incoming::Response { id, answer }
}

/// A client's error object, read leniently: a hook answered with an error is only logged and
/// treated as no answer, so a slightly malformed one should not be lost on the way.
fn parse_client_error(error: Value) -> Error {
    let code = error.get("code").and_then(Value::as_i64);
    let message = error.get("message").and_then(Value::as_str);
    match (code, message) {
        (Some(code), Some(message)) => Error {
            code: ErrorCode::from(code),
            message: message.to_owned(),
            data: error.get("data").cloned(),
        },
        _ => Error {
            code: ErrorCode::InternalError,
            message: "malformed error object in the client's answer".to_owned(),
            data: Some(error),
        },
    }
}

/// A response to request `id`.
pub(crate) fn response(id: Id, result: Result<Value, RpcError>) -> Output {
    Output::from(result.map_err(Error::from), id, Some(Version::V2))
}

/// A server -> client notification.
pub(crate) fn notification(method: &str, params: Value) -> Notification {
    Notification {
        jsonrpc: Some(Version::V2),
        method: method.to_owned(),
        params: to_params(method, params),
    }
}

/// A server -> client request.
pub(crate) fn request(id: String, method: &str, params: Value) -> MethodCall {
    MethodCall {
        jsonrpc: Some(Version::V2),
        method: method.to_owned(),
        params: to_params(method, params),
        id: Id::Str(id),
    }
}

fn to_params(method: &str, params: Value) -> Params {
    match params {
        // `"params": null` is not JSON-RPC; an empty object is.
        Value::Null => Params::Map(Map::new()),
        Value::Object(map) => Params::Map(map),
        Value::Array(items) => Params::Array(items),
        scalar => {
            // JSON-RPC params are structured; a scalar is a bug in the sender, kept visible.
            tracing::error!("params of '{method}' are not an object; sending them in an array");
            Params::Array(vec![scalar])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: Value) -> Incoming {
        parse_incoming(value.to_string().as_bytes())
    }

    fn invalid_message(incoming: Incoming) -> (Id, String) {
        match incoming {
            Incoming::Invalid { id, error } => (id, error.message().to_owned()),
            other => panic!("expected invalid, got {other:?}"),
        }
    }

    #[test]
    fn requests_and_notifications() {
        let Incoming::Request(call) =
            parse(json!({"jsonrpc": "2.0", "id": 7, "method": "m", "params": {"a": 1}}))
        else {
            panic!()
        };
        assert_eq!((call.id, call.method.as_str()), (Id::Num(7), "m"));
        let Incoming::Notification(n) = parse(json!({"jsonrpc": "2.0", "method": "n"})) else {
            panic!()
        };
        assert_eq!(n.params, Params::None);
    }

    #[test]
    fn unknown_members_and_null_params_are_ignored() {
        let incoming =
            parse(json!({"jsonrpc": "2.0", "id": "x", "method": "m", "params": null, "extra": 1}));
        assert!(matches!(incoming, Incoming::Request(call) if call.params == Params::None));
    }

    #[test]
    fn invalid_requests_say_what_is_wrong() {
        let cases = [
            (
                json!({"id": 1, "method": "m"}),
                Id::Num(1),
                "'jsonrpc' must be",
            ),
            (
                json!({"jsonrpc": "1.0", "id": 1, "method": "m"}),
                Id::Num(1),
                "'jsonrpc'",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "method": 3}),
                Id::Num(1),
                "'method'",
            ),
            (
                json!({"jsonrpc": "2.0", "id": -1, "method": "m"}),
                Id::Null,
                "'id'",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1.5, "method": "m"}),
                Id::Null,
                "'id'",
            ),
            (
                json!({"jsonrpc": "2.0", "id": "a", "method": "m", "params": 3}),
                Id::Str("a".into()),
                "'params'",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 2}),
                Id::Num(2),
                "not a request",
            ),
            (json!([]), Id::Null, "empty batch"),
            (
                json!([{"jsonrpc": "2.0", "method": "m"}]),
                Id::Null,
                "batches",
            ),
            (json!(42), Id::Null, "JSON object"),
        ];
        for (input, want_id, want_message) in cases {
            let (id, message) = invalid_message(parse(input.clone()));
            assert_eq!(id, want_id, "{input}");
            assert!(message.contains(want_message), "{input}: {message}");
        }
    }

    #[test]
    fn parse_errors_are_answered_with_null_id() {
        for bytes in [&b"{"[..], b"\xff\xfe", b"nul", b"{\"a\":1}}"] {
            let (id, message) = invalid_message(parse_incoming(bytes));
            assert_eq!(id, Id::Null);
            assert!(message.starts_with("parse error"), "{message}");
        }
    }

    #[test]
    fn deeply_nested_json_is_a_parse_error_not_a_crash() {
        let deep = "[".repeat(100_000);
        let (_, message) = invalid_message(parse_incoming(deep.as_bytes()));
        assert!(message.starts_with("parse error"), "{message}");
    }

    #[test]
    fn responses_from_the_client() {
        let incoming = parse(json!({"jsonrpc": "2.0", "id": "s1", "result": {"cancel": true}}));
        assert!(
            matches!(incoming, Incoming::Response { id: Some(id), answer: Ok(_) } if id == "s1")
        );
        let incoming =
            parse(json!({"jsonrpc": "2.0", "id": "s2", "error": {"code": 5, "message": "no"}}));
        let Incoming::Response {
            answer: Err(error), ..
        } = incoming
        else {
            panic!()
        };
        assert_eq!((error.code.code(), error.message.as_str()), (5, "no"));
        let incoming = parse(json!({"id": "s3", "error": "oops"}));
        assert!(
            matches!(incoming, Incoming::Response { answer: Err(e), .. } if e.code.code() == -32603)
        );
    }

    #[test]
    fn outgoing_messages_are_json_rpc_2() {
        let call = request("s1".into(), "hook", json!({"a": 1}));
        assert_eq!(
            serde_json::to_value(call).unwrap(),
            json!({"jsonrpc": "2.0", "method": "hook", "params": {"a": 1}, "id": "s1"})
        );
        let note = notification("event", Value::Null);
        assert_eq!(
            serde_json::to_value(note).unwrap(),
            json!({"jsonrpc": "2.0", "method": "event", "params": {}})
        );
        let out = response(Id::Num(1), Err(RpcError::request_cancelled()));
        assert_eq!(
            serde_json::to_value(out).unwrap(),
            json!({"jsonrpc": "2.0", "error": {"code": -32800, "message": "request cancelled"}, "id": 1})
        );
    }
}
