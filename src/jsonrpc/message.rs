//! JSON-RPC messages: telling what the client sent, and building what the server sends.
//!
//! Incoming bytes are read once into an [`Envelope`]: its members are checked one by one (so an
//! invalid request is told exactly what is wrong), while `params` (and a hook answer's
//! `result`) stay JSON text, which the method (or the hook's caller) reads straight into its
//! own type. Members JSON-RPC does not define are skipped unread. Batches are refused as a
//! whole (see `protocol/protocol.md`). Responses from the client (answers to hooks) are
//! recognized here too. jsonrpc-core provides the id, version and error types and the
//! response envelope.

use std::fmt;

use jsonrpc_core::{Error, ErrorCode, Id, Output, Version};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::error::RpcError;

/// A request's or notification's method and params, the params still as text.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) method: String,
    /// An object or an array; `None` when absent or `null`.
    pub(crate) params: Option<Box<RawValue>>,
}

/// A request: a call that gets exactly one response, for `id`.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) id: Id,
    pub(crate) call: Call,
}

/// A client's answer to a hook as it arrives: the result's text, or an error object.
pub(crate) type HookAnswer = Result<Box<RawValue>, Error>;

/// What one frame turned out to be.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A request: it gets exactly one response.
    Request(Request),
    /// A notification: it never gets a response.
    Notification(Call),
    /// The client's answer to a server -> client request.
    Response {
        id: Option<Value>,
        answer: HookAnswer,
    },
    /// Not acceptable; answered with `error` and `id` (null when unknown).
    Invalid { id: Id, error: RpcError },
    /// Not acceptable, but without an `id`: a notification, which is never answered (logged).
    Ignored { detail: String },
}

/// The members of a message object JSON-RPC defines, as sent. The small ones are read as
/// values to be checked; `params` and `result` are kept as text. A member sent twice keeps
/// its last value, as `JSON.parse` does.
#[derive(Default)]
struct Envelope {
    jsonrpc: Option<Value>,
    method: Option<Value>,
    /// `Some(Value::Null)` for `"id": null`, which is not the same as no id.
    id: Option<Value>,
    params: Option<Box<RawValue>>,
    result: Option<Box<RawValue>>,
    error: Option<Value>,
}

/// A member's name, told without allocating it.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Member {
    Jsonrpc,
    Method,
    Id,
    Params,
    Result,
    Error,
    #[serde(other)]
    Other,
}

/// The top level of a frame.
// Lives on the stack for one parse; boxing the envelope would cost an allocation per message.
#[allow(clippy::large_enum_variant)]
enum Message {
    Object(Envelope),
    /// A batch; `empty` when it has no items.
    Batch {
        empty: bool,
    },
    /// A string, number, boolean or null.
    Scalar,
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = Message;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<Message, A::Error> {
        let mut envelope = Envelope::default();
        while let Some(member) = members.next_key::<Member>()? {
            match member {
                Member::Jsonrpc => envelope.jsonrpc = Some(members.next_value()?),
                Member::Method => envelope.method = Some(members.next_value()?),
                Member::Id => envelope.id = Some(members.next_value()?),
                Member::Params => envelope.params = Some(members.next_value()?),
                Member::Result => envelope.result = Some(members.next_value()?),
                Member::Error => envelope.error = Some(members.next_value()?),
                Member::Other => {
                    members.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Message::Object(envelope))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Message, A::Error> {
        let empty = items.next_element::<IgnoredAny>()?.is_none();
        // Read to the end, so that a batch that is not JSON is still a parse error.
        while items.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Message::Batch { empty })
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Message, E> {
        Ok(Message::Scalar)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Message, E> {
        Ok(Message::Scalar)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Message, E> {
        Ok(Message::Scalar)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Message, E> {
        Ok(Message::Scalar)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Message, E> {
        Ok(Message::Scalar)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Message, E> {
        Ok(Message::Scalar)
    }
}

pub(crate) fn parse_incoming(bytes: &[u8]) -> Incoming {
    // A message with lone surrogate escapes (JSON.parse takes them; serde_json does not) or
    // with the character that stands them in is read with them stood in; the values that
    // become JavaScript values (entries and the like) get them back.
    let protected = crate::format::wire_surrogates::protect(bytes);
    let message: Message = match serde_json::from_slice(protected.as_deref().unwrap_or(bytes)) {
        Ok(message) => message,
        Err(error) => {
            return Incoming::Invalid {
                id: Id::Null,
                error: RpcError::parse_error(error),
            };
        }
    };
    match message {
        Message::Object(envelope) => classify_object(envelope),
        Message::Batch { empty: true } => invalid(Id::Null, "empty batch"),
        Message::Batch { empty: false } => invalid(
            Id::Null,
            "batches are not supported; send each message in its own frame",
        ),
        Message::Scalar => invalid(Id::Null, "a message must be a JSON object"),
    }
}

fn invalid(id: Id, detail: &str) -> Incoming {
    Incoming::Invalid {
        id,
        error: RpcError::invalid_request(detail),
    }
}

fn classify_object(envelope: Envelope) -> Incoming {
    let has_id = envelope.id.is_some();
    // `exit` ends the server whatever else its message holds: a client on its way out must
    // not be kept by a typo in its params.
    if !has_id && envelope.method.as_ref().and_then(Value::as_str) == Some("exit") {
        return Incoming::Notification(Call {
            method: "exit".into(),
            params: None,
        });
    }
    match classify_call(envelope) {
        Incoming::Invalid { error, .. } if !has_id => Incoming::Ignored {
            detail: error.message().to_owned(),
        },
        incoming => incoming,
    }
}

fn classify_call(envelope: Envelope) -> Incoming {
    let Envelope {
        jsonrpc,
        method,
        id,
        params,
        result,
        error,
    } = envelope;
    let Some(method) = method else {
        if result.is_some() || error.is_some() {
            return classify_response(id, result, error);
        }
        let id = id.as_ref().and_then(parse_id).unwrap_or(Id::Null);
        return invalid(
            id,
            "not a request, notification or response (no 'method', 'result' or 'error')",
        );
    };
    let id = match id {
        None => None,
        Some(raw) => match parse_id(&raw) {
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
    if jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return invalid(reply_id, "'jsonrpc' must be \"2.0\"");
    }
    let Value::String(method) = method else {
        return invalid(reply_id, "'method' must be a string");
    };
    // Raw text starts at the value's first character: its kind shows there.
    let params = match params {
        Some(raw) if raw.get().starts_with("null") => None,
        Some(raw) if raw.get().starts_with(['{', '[']) => Some(raw),
        None => None,
        Some(_) => return invalid(reply_id, "'params' must be an object or an array"),
    };
    let call = Call { method, params };
    match id {
        Some(id) => Incoming::Request(Request { id, call }),
        None => Incoming::Notification(call),
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

fn classify_response(
    id: Option<Value>,
    result: Option<Box<RawValue>>,
    error: Option<Value>,
) -> Incoming {
    let answer = match (error, result) {
        (Some(error), _) => Err(parse_client_error(error)),
        (None, Some(result)) => Ok(result),
        (None, None) => Ok(null_text()),
    };
    Incoming::Response { id, answer }
}

/// `null` as JSON text.
pub(crate) fn null_text() -> Box<RawValue> {
    RawValue::NULL.to_owned()
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

/// A server -> client notification, its params serialized from their own type.
#[derive(Serialize)]
pub(crate) struct OutgoingNotification<'a, P> {
    jsonrpc: Version,
    method: &'a str,
    params: &'a P,
}

/// A server -> client notification; `params` must serialize to an object.
pub(crate) fn notification<'a, P: Serialize>(
    method: &'a str,
    params: &'a P,
) -> OutgoingNotification<'a, P> {
    OutgoingNotification {
        jsonrpc: Version::V2,
        method,
        params,
    }
}

/// A server -> client request (a hook), its params serialized from their own type.
#[derive(Serialize)]
pub(crate) struct OutgoingRequest<'a, P> {
    jsonrpc: Version,
    method: &'a str,
    params: &'a P,
    id: &'a str,
}

/// A server -> client request; `params` must serialize to an object.
pub(crate) fn request<'a, P: Serialize>(
    id: &'a str,
    method: &'a str,
    params: &'a P,
) -> OutgoingRequest<'a, P> {
    OutgoingRequest {
        jsonrpc: Version::V2,
        method,
        params,
        id,
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
        let Incoming::Request(request) =
            parse(json!({"jsonrpc": "2.0", "id": 7, "method": "m", "params": {"a": 1}}))
        else {
            panic!()
        };
        assert_eq!(
            (request.id, request.call.method.as_str()),
            (Id::Num(7), "m")
        );
        assert_eq!(request.call.params.unwrap().get(), r#"{"a":1}"#);
        let Incoming::Notification(n) = parse(json!({"jsonrpc": "2.0", "method": "n"})) else {
            panic!()
        };
        assert!(n.params.is_none());
    }

    #[test]
    fn params_stay_text_as_sent() {
        let text = br#"{"jsonrpc":"2.0","id":"x","method":"m","params":[ 1, {"b" : 2} ]}"#;
        let Incoming::Request(request) = parse_incoming(text) else {
            panic!()
        };
        assert_eq!(request.call.params.unwrap().get(), r#"[ 1, {"b" : 2} ]"#);
    }

    #[test]
    fn unknown_members_and_null_params_are_ignored() {
        let incoming =
            parse(json!({"jsonrpc": "2.0", "id": "x", "method": "m", "params": null, "extra": 1}));
        assert!(matches!(incoming, Incoming::Request(r) if r.call.params.is_none()));
    }

    #[test]
    fn a_member_sent_twice_keeps_its_last_value() {
        let text = br#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b","params":3,"params":{}}"#;
        let Incoming::Request(request) = parse_incoming(text) else {
            panic!()
        };
        assert_eq!(request.call.method, "b");
        assert_eq!(request.call.params.unwrap().get(), "{}");
    }

    #[test]
    fn exit_ends_whatever_its_params() {
        let incoming = parse(json!({"jsonrpc": "1.0", "method": "exit", "params": 3}));
        assert!(matches!(incoming, Incoming::Notification(call) if call.method == "exit"));
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
                json!({"jsonrpc": "2.0", "id": "a", "method": "m", "params": "null"}),
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
            (json!("x"), Id::Null, "JSON object"),
            (json!(null), Id::Null, "JSON object"),
        ];
        for (input, want_id, want_message) in cases {
            let (id, message) = invalid_message(parse(input.clone()));
            assert_eq!(id, want_id, "{input}");
            assert!(message.contains(want_message), "{input}: {message}");
        }
    }

    #[test]
    fn parse_errors_are_answered_with_null_id() {
        for bytes in [
            &b"{"[..],
            b"\xff\xfe",
            b"nul",
            b"{\"a\":1}}",
            b"[1,}",
            b"{\"params\":{]}",
        ] {
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
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{}"#,
            "[".repeat(100_000)
        );
        let (_, message) = invalid_message(parse_incoming(deep.as_bytes()));
        assert!(message.starts_with("parse error"), "{message}");
    }

    #[test]
    fn deeply_nested_params_reach_the_method_unread() {
        // Well-formed: the request is answered (its method reads the params and refuses them
        // naming the parameter) rather than refused as a frame without an id.
        let depth = 100_000;
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{}{}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let Incoming::Request(request) = parse_incoming(text.as_bytes()) else {
            panic!("not a request")
        };
        assert_eq!(request.id, Id::Num(1));
    }

    #[test]
    fn responses_from_the_client() {
        let incoming = parse(json!({"jsonrpc": "2.0", "id": "s1", "result": {"cancel": true}}));
        let Incoming::Response {
            id: Some(id),
            answer: Ok(answer),
        } = incoming
        else {
            panic!()
        };
        assert_eq!((id, answer.get()), (json!("s1"), r#"{"cancel":true}"#));
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
        let text = serde_json::to_string(&request("s1", "hook", &json!({"a": 1}))).unwrap();
        assert_eq!(
            text,
            r#"{"jsonrpc":"2.0","method":"hook","params":{"a":1},"id":"s1"}"#
        );
        let text = serde_json::to_string(&notification("event", &json!({}))).unwrap();
        assert_eq!(text, r#"{"jsonrpc":"2.0","method":"event","params":{}}"#);
        let out = response(Id::Num(1), Err(RpcError::request_cancelled()));
        assert_eq!(
            serde_json::to_value(out).unwrap(),
            json!({"jsonrpc": "2.0", "error": {"code": -32800, "message": "request cancelled"}, "id": 1})
        );
    }
}
