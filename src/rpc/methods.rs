//! The method table: each method registered once, with its name, typed params and result, and
//! its ordering rule (kind); hooks and server notifications declared with their types. From it
//! come dispatch, `initialize`'s `methods`/`capabilities`, `protocol/schema.json`
//! (`rpc/schema.rs`) and the method index of protocol.md (checked by `tests/schema.rs`).
//!
//! jsonrpc-core's `MetaIoHandler` routes the calls. Each entry is a wrapper that, when the reader
//! calls it (synchronously, in arrival order), parses the params and, for serial methods, takes
//! a ticket in the key's line; the future it returns does the rest in the request's own task.
//!
//! Cancellation (`$/cancelRequest`): a request still waiting for its serial turn, or any
//! request of a concurrent method, is dropped at its next await and answered -32800. A serial
//! method that has its turn is never dropped half-way; it sees the cancellation through
//! [`RequestContext::hook`] (which then yields `HookOutcome::Cancelled`) or
//! [`RequestContext::is_cancelled`], and either stops before changing anything (returning
//! [`RpcError::request_cancelled`]) or finishes and answers normally.

use std::collections::BTreeSet;
use std::future::Future;

use jsonrpc_core::{Call, MetaIoHandler, Output, Params};
use schemars::JsonSchema;
use schemars::r#gen::SchemaGenerator;
use schemars::schema::Schema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::error::RpcError;
use super::request_context::{Answer, BoxFuture, RequestContext, ServerHandle, ServerState};

/// Requests the lifecycle handles itself.
pub const BUILTIN_REQUESTS: [&str; 2] = ["initialize", "shutdown"];

/// Notifications the lifecycle handles itself.
pub const BUILTIN_NOTIFICATIONS: [&str; 3] = ["$/cancelRequest", "exit", "initialized"];

type Table<S> = MetaIoHandler<RequestContext<S>>;

/// Makes the schema of a type (in the generator's definitions when it has a name).
pub type SchemaOf = fn(&mut SchemaGenerator) -> Schema;

fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// How a request runs beside the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Runs beside any other request (reads, and methods that lock what they change).
    Concurrent,
    /// Changes the thing its key names (a session): one at a time per key, in arrival order.
    Serial,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Concurrent => "concurrent",
            Kind::Serial => "serial",
        }
    }
}

/// One message of the table: its name and the schemas of what travels.
#[derive(Clone)]
pub struct Message {
    pub name: String,
    /// Requests only.
    pub kind: Option<Kind>,
    pub params: SchemaOf,
    /// Requests and hooks: the result (a hook's answer).
    pub result: Option<SchemaOf>,
}

/// The methods a server offers beyond the lifecycle, and the names it advertises.
pub struct Methods<S: ServerState> {
    table: Table<S>,
    /// In registration order.
    requests: Vec<Message>,
    notifications: Vec<Message>,
    hooks: Vec<Message>,
    server_notifications: Vec<Message>,
}

impl<S: ServerState> Default for Methods<S> {
    fn default() -> Self {
        Methods {
            table: MetaIoHandler::default(),
            requests: Vec::new(),
            notifications: Vec::new(),
            hooks: Vec::new(),
            server_notifications: Vec::new(),
        }
    }
}

impl<S: ServerState> Methods<S> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a request method that may run beside any other (reads). `handler` receives
    /// the context and the params parsed into `P`; bad params are answered -32602 naming the
    /// parameter, before the handler runs.
    pub fn add<P, R, F, Fut>(&mut self, name: &str, handler: F) -> &mut Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        R: Answer,
        F: Fn(RequestContext<S>, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, RpcError>> + Send + 'static,
    {
        self.claim_request::<P, R>(name, Kind::Concurrent);
        self.table.add_method_with_meta(
            name,
            move |params: Params,
                  context: RequestContext<S>|
                  -> BoxFuture<'static, jsonrpc_core::Result<Value>> {
                let params = match parse_params::<P>(params) {
                    Ok(params) => params,
                    Err(error) => return Box::pin(std::future::ready(Err(error.into()))),
                };
                let work = handler(context.clone(), params);
                Box::pin(async move {
                    let _permit = admitted(&context).await?;
                    let result = tokio::select! {
                        biased;
                        () = context.cancelled() => Err(RpcError::request_cancelled()),
                        result = work => context.keep_answer(result),
                    };
                    result.map_err(Into::into)
                })
            },
        );
        self
    }

    /// Registers a request method that changes the thing named by `key_of(&params)` (a
    /// session id): requests with the same key run one at a time in arrival order, and their
    /// responses leave in that order. Requests with other keys, and methods registered with
    /// [`Methods::add`], run beside them.
    pub fn add_serial<P, R, K, F, Fut>(&mut self, name: &str, key_of: K, handler: F) -> &mut Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        R: Answer,
        K: Fn(&P) -> String + Send + Sync + 'static,
        F: Fn(RequestContext<S>, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, RpcError>> + Send + 'static,
    {
        self.claim_request::<P, R>(name, Kind::Serial);
        self.table.add_method_with_meta(
            name,
            move |params: Params,
                  context: RequestContext<S>|
                  -> BoxFuture<'static, jsonrpc_core::Result<Value>> {
                let params = match parse_params::<P>(params) {
                    Ok(params) => params,
                    Err(error) => return Box::pin(std::future::ready(Err(error.into()))),
                };
                // Taken now, while the reader is still on this request: arrival order.
                let ticket = context.server().serial_queues().ticket(key_of(&params));
                let work = handler(context.clone(), params);
                Box::pin(async move {
                    let turn = tokio::select! {
                        biased;
                        () = context.cancelled() => {
                            return Err(RpcError::request_cancelled().into());
                        }
                        () = context.server().stopping().cancelled() => {
                            return Err(server_stopping().into());
                        }
                        turn = ticket.turn() => turn,
                    };
                    let _permit = admitted(&context).await?;
                    let earlier_answered = turn.earlier_answered();
                    context.hold_turn(turn);
                    let answer = context.keep_answer(work.await);
                    // The work may have let the next request start before it was answered
                    // (`RequestContext::start_next_in_line`); answers still leave in order.
                    earlier_answered.await;
                    answer.map_err(Into::into)
                })
            },
        );
        self
    }

    /// Registers a notification handler. Notifications run one after another in arrival
    /// order, on the reader itself: the handler must be quick and must not block (spawn a
    /// task for anything slow). Bad params are logged and the notification dropped.
    pub fn add_notification<P, F>(&mut self, name: &str, handler: F) -> &mut Self
    where
        P: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(&ServerHandle<S>, P) + Send + Sync + 'static,
    {
        assert!(
            !self.is_known(name),
            "'{name}' is registered twice or is a built-in"
        );
        self.notifications.push(Message {
            name: name.to_owned(),
            kind: None,
            params: schema_of::<P>,
            result: None,
        });
        let owned_name = name.to_owned();
        self.table.add_notification_with_meta(
            name,
            move |params: Params, context: RequestContext<S>| match parse_params::<P>(params) {
                Ok(params) => handler(context.server(), params),
                Err(error) => tracing::warn!("notification '{owned_name}' dropped: {error}"),
            },
        );
        self
    }

    /// Advertises a hook (server -> client request) in `capabilities.hooks`, with its params
    /// `P` and the answer `A` it expects (`null` is always a valid answer).
    pub fn declare_hook<P: JsonSchema, A: JsonSchema>(&mut self, name: &str) -> &mut Self {
        self.hooks.push(Message {
            name: name.to_owned(),
            kind: None,
            params: schema_of::<P>,
            result: Some(schema_of::<Option<A>>),
        });
        self
    }

    /// Advertises a server -> client notification in `capabilities.notifications`, with its
    /// params `P`.
    pub fn declare_notification<P: JsonSchema>(&mut self, name: &str) -> &mut Self {
        self.server_notifications.push(Message {
            name: name.to_owned(),
            kind: None,
            params: schema_of::<P>,
            result: None,
        });
        self
    }

    fn is_known(&self, name: &str) -> bool {
        BUILTIN_REQUESTS.contains(&name)
            || BUILTIN_NOTIFICATIONS.contains(&name)
            || self.has_request(name)
            || self.has_notification(name)
    }

    /// Registration happens once at startup from code, so a clash is a programming error
    /// worth stopping for, not input.
    fn claim_request<P: JsonSchema, R: Answer>(&mut self, name: &str, kind: Kind) {
        assert!(
            !self.is_known(name),
            "'{name}' is registered twice or is a built-in"
        );
        self.requests.push(Message {
            name: name.to_owned(),
            kind: Some(kind),
            params: schema_of::<P>,
            result: Some(schema_of::<R::Shape>),
        });
    }

    pub(crate) fn has_request(&self, name: &str) -> bool {
        self.requests.iter().any(|m| m.name == name)
    }

    pub(crate) fn has_notification(&self, name: &str) -> bool {
        self.notifications.iter().any(|m| m.name == name)
    }

    /// The request methods beyond the lifecycle, in registration order.
    pub fn requests(&self) -> &[Message] {
        &self.requests
    }

    /// The client -> server notifications beyond the lifecycle, in registration order.
    pub fn notifications(&self) -> &[Message] {
        &self.notifications
    }

    /// The hooks, in declaration order.
    pub fn hooks(&self) -> &[Message] {
        &self.hooks
    }

    /// The server -> client notifications, in declaration order.
    pub fn server_notifications(&self) -> &[Message] {
        &self.server_notifications
    }

    /// Runs the wrapper's synchronous part (params, ticket) now; the future does the rest.
    pub(crate) fn call(
        &self,
        call: Call,
        context: RequestContext<S>,
    ) -> impl Future<Output = Option<Output>> + Send + 'static {
        self.table.handle_call(call, context)
    }

    /// Every request method, built-ins included, sorted.
    pub fn request_names(&self) -> Vec<String> {
        let mut names: BTreeSet<String> = self.requests.iter().map(|m| m.name.clone()).collect();
        names.extend(BUILTIN_REQUESTS.map(str::to_owned));
        names.into_iter().collect()
    }

    /// Every notification the client may send, built-ins included, sorted.
    pub fn notification_names(&self) -> Vec<String> {
        let mut names: BTreeSet<String> =
            self.notifications.iter().map(|m| m.name.clone()).collect();
        names.extend(BUILTIN_NOTIFICATIONS.map(str::to_owned));
        names.into_iter().collect()
    }

    /// The hooks declared with [`Methods::declare_hook`], sorted.
    pub fn hook_names(&self) -> Vec<String> {
        let names: BTreeSet<String> = self.hooks.iter().map(|m| m.name.clone()).collect();
        names.into_iter().collect()
    }

    /// The server notifications declared with [`Methods::declare_notification`], sorted.
    pub fn server_notification_names(&self) -> Vec<String> {
        let names: BTreeSet<String> = self
            .server_notifications
            .iter()
            .map(|m| m.name.clone())
            .collect();
        names.into_iter().collect()
    }
}

/// Waits until the request may start its work (backpressure), unless it is cancelled or the
/// server is stopping first; the permit is held for the length of the work.
async fn admitted<S: ServerState>(
    context: &RequestContext<S>,
) -> Result<tokio::sync::OwnedSemaphorePermit, RpcError> {
    let server = context.server();
    tokio::select! {
        biased;
        () = context.cancelled() => Err(RpcError::request_cancelled()),
        () = server.stopping().cancelled() => Err(server_stopping()),
        permit = server.admit() => Ok(permit),
    }
}

/// -32800 for a request that never started because the server is stopping: like a
/// cancellation, it changed nothing.
pub(crate) fn server_stopping() -> RpcError {
    RpcError::new(
        super::error::code::REQUEST_CANCELLED,
        "the server is stopping: the request was not run (nothing changed)",
    )
}

/// Parses by-name params into `P`. Missing params count as `{}`; by-position params are
/// refused. Errors name the parameter: `invalid params: missing field 'sessionId'`, or
/// `invalid params: 'entry.type': unknown variant ...`.
pub fn parse_params<P: DeserializeOwned>(params: Params) -> Result<P, RpcError> {
    let value = match params {
        Params::None => Value::Object(Map::new()),
        Params::Map(map) => Value::Object(map),
        Params::Array(items) if items.is_empty() => Value::Object(Map::new()),
        Params::Array(_) => {
            return Err(RpcError::invalid_params(
                "params must be an object of named parameters, not an array",
            ));
        }
    };
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        // serde quotes names with backticks; single quotes read better inside JSON strings.
        let detail = error.into_inner().to_string().replace('`', "'");
        if path == "." {
            RpcError::invalid_params(detail)
        } else {
            RpcError::invalid_params(format!("'{path}': {detail}"))
        }
    })
}

#[cfg(test)]
mod tests {
    /// Params for methods that take none.
    #[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
    struct NoParams {}

    use super::*;
    use serde_json::json;

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Append {
        session_id: String,
        entry: Entry,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(tag = "type", rename_all = "snake_case")]
    #[allow(dead_code)]
    enum Entry {
        Label { label: String },
    }

    fn message(params: Value) -> String {
        let params: Params = serde_json::from_value(params).unwrap();
        parse_params::<Append>(params)
            .unwrap_err()
            .message()
            .to_owned()
    }

    #[test]
    fn invalid_params_name_the_parameter() {
        assert_eq!(
            message(json!({"entry": {"type": "label", "label": "x"}})),
            "invalid params: missing field 'sessionId'"
        );
        assert_eq!(
            message(json!({"sessionId": 5, "entry": {"type": "label", "label": "x"}})),
            "invalid params: 'sessionId': invalid type: integer '5', expected a string"
        );
        assert_eq!(
            message(json!({"sessionId": "s", "entry": {"type": "label"}})),
            "invalid params: 'entry': missing field 'label'"
        );
        assert_eq!(
            message(json!(["s"])),
            "invalid params: params must be an object of named parameters, not an array"
        );
    }

    #[test]
    fn no_params_accepts_nothing_much() {
        for params in [json!(null), json!({}), json!([]), json!({"extra": 1})] {
            let params: Params = serde_json::from_value(params).unwrap();
            parse_params::<NoParams>(params).unwrap();
        }
    }
}
