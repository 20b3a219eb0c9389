//! The method table: each method registered once, with its name, typed params and result, and
//! its ordering rule (kind); hooks and server notifications declared with their types. From it
//! come dispatch, `initialize`'s `methods`/`capabilities`, `protocol/schema.json`
//! (`rpc/schema.rs`) and the method index of protocol.md (checked by `tests/schema.rs`).
//!
//! The table routes the calls itself: jsonrpc-core's router hands methods a tree of values,
//! while here a method's params go from the request's text straight into its own type. Each
//! entry is a wrapper that, when the reader calls it (synchronously, in arrival order), reads
//! the params and, for serial methods, takes a ticket in the key's line; the future it returns
//! does the rest in the request's own task and yields the answer's JSON text.
//!
//! Cancellation (`$/cancelRequest`): a request still waiting for its serial turn, or any
//! request of a concurrent method, is dropped at its next await and answered -32800. A serial
//! method that has its turn is never dropped half-way; it sees the cancellation through
//! [`RequestContext::hook`] (which then yields `HookOutcome::Cancelled`) or
//! [`RequestContext::is_cancelled`], and either stops before changing anything (returning
//! [`RpcError::request_cancelled`]) or finishes and answers normally.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;

use schemars::JsonSchema;
use schemars::r#gen::SchemaGenerator;
use schemars::schema::Schema;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::error::RpcError;
use super::outgoing::{Hook, ServerNotification};
use super::request_context::{Answer, BoxFuture, RequestContext, ServerHandle, ServerState};

/// Requests the lifecycle handles itself.
pub const BUILTIN_REQUESTS: [&str; 2] = ["initialize", "shutdown"];

/// Notifications the lifecycle handles itself.
pub const BUILTIN_NOTIFICATIONS: [&str; 3] = ["$/cancelRequest", "exit", "initialized"];

/// A request method's wrapper: reads the params, takes its place, and returns the work, which
/// yields the answer's JSON text.
type RequestHandler<S> = Box<
    dyn Fn(Option<&RawValue>, RequestContext<S>) -> BoxFuture<'static, Result<String, RpcError>>
        + Send
        + Sync,
>;

/// A notification's wrapper: reads the params and runs the handler.
type NotificationHandler<S> = Box<dyn Fn(&ServerHandle<S>, Option<&RawValue>) + Send + Sync>;

/// Makes the schema of a type (in the generator's definitions when it has a name).
pub type SchemaOf = fn(&mut SchemaGenerator) -> Schema;

fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// How a request runs beside the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduling {
    /// Runs beside any other request (reads, and methods that lock what they change).
    Concurrent,
    /// Changes the thing its key names (a session): one at a time per key, in arrival order.
    Serial,
}

impl Scheduling {
    pub fn name(self) -> &'static str {
        match self {
            Scheduling::Concurrent => "concurrent",
            Scheduling::Serial => "serial",
        }
    }
}

/// One message of the table: its name and the schemas of what travels.
#[derive(Clone)]
pub struct Message {
    /// The method's name.
    pub name: String,
    /// Requests only.
    pub kind: Option<Scheduling>,
    /// The params' schema.
    pub params: SchemaOf,
    /// Requests and hooks: the result (a hook's answer).
    pub result: Option<SchemaOf>,
    /// Requests: the member of `initialize`'s `capabilities` that advertises the method, for
    /// a method a client should look for before calling ([`Methods::advertised_by`]).
    pub capability: Option<&'static str>,
}

/// The methods a server offers beyond the lifecycle, and the names it advertises.
pub struct Methods<S: ServerState> {
    request_handlers: HashMap<String, RequestHandler<S>>,
    notification_handlers: HashMap<String, NotificationHandler<S>>,
    /// In registration order.
    requests: Vec<Message>,
    notifications: Vec<Message>,
    hooks: Vec<Message>,
    server_notifications: Vec<Message>,
}

impl<S: ServerState> Default for Methods<S> {
    fn default() -> Self {
        Methods {
            request_handlers: HashMap::new(),
            notification_handlers: HashMap::new(),
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
        self.claim_request::<P, R>(
            name,
            Scheduling::Concurrent,
            reading_params(move |context: RequestContext<S>, params: P| {
                let work = handler(context.clone(), params);
                Box::pin(async move {
                    let _permit = admitted(&context).await?;
                    tokio::select! {
                        biased;
                        () = context.cancelled() => Err(RpcError::request_cancelled()),
                        result = work => result.and_then(Answer::into_json),
                    }
                })
            }),
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
        self.claim_request::<P, R>(
            name,
            Scheduling::Serial,
            reading_params(move |context: RequestContext<S>, params: P| {
                // Taken now, while the reader is still on this request: arrival order.
                let ticket = context.server().serial_queues().ticket(key_of(&params));
                let work = handler(context.clone(), params);
                Box::pin(async move {
                    let turn = tokio::select! {
                        biased;
                        () = context.cancelled() => return Err(RpcError::request_cancelled()),
                        () = context.server().stopping().cancelled() => return Err(server_stopping()),
                        turn = ticket.turn() => turn,
                    };
                    let _permit = admitted(&context).await?;
                    let earlier_answered = turn.earlier_answered();
                    context.hold_turn(turn);
                    let answer = work.await.and_then(Answer::into_json);
                    // The work may have let the next request start before it was answered
                    // (`RequestContext::start_next_in_line`); answers still leave in order.
                    earlier_answered.await;
                    answer
                })
            }),
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
            capability: None,
        });
        let owned_name = name.to_owned();
        self.notification_handlers.insert(
            name.to_owned(),
            Box::new(move |server, params| match parse_params::<P>(params) {
                Ok(params) => handler(server, params),
                Err(error) => tracing::warn!("notification '{owned_name}' dropped: {error}"),
            }),
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
            capability: None,
        });
        self
    }

    /// Names the member of `initialize`'s `capabilities` that advertises the request method
    /// registered last (the table's capability column: `schema.json`'s `x-capability`,
    /// protocol.md's method index).
    pub fn advertised_by(&mut self, capability: &'static str) -> &mut Self {
        let last = self
            .requests
            .last_mut()
            .expect("advertised_by follows the method it advertises");
        last.capability = Some(capability);
        self
    }

    /// [`Methods::declare_hook`] for a [`Hook`] type: its name and answer come with it.
    pub fn declare<H: Hook>(&mut self) -> &mut Self {
        self.declare_hook::<H, H::Answer>(H::NAME)
    }

    /// [`Methods::declare_notification`] for a [`ServerNotification`] type.
    pub fn announce<N: ServerNotification>(&mut self) -> &mut Self {
        self.declare_notification::<N>(N::NAME)
    }

    /// Advertises a server -> client notification in `capabilities.notifications`, with its
    /// params `P`.
    pub fn declare_notification<P: JsonSchema>(&mut self, name: &str) -> &mut Self {
        self.server_notifications.push(Message {
            name: name.to_owned(),
            kind: None,
            params: schema_of::<P>,
            result: None,
            capability: None,
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
    fn claim_request<P: JsonSchema, R: Answer>(
        &mut self,
        name: &str,
        kind: Scheduling,
        handler: RequestHandler<S>,
    ) {
        assert!(
            !self.is_known(name),
            "'{name}' is registered twice or is a built-in"
        );
        self.request_handlers.insert(name.to_owned(), handler);
        self.requests.push(Message {
            name: name.to_owned(),
            kind: Some(kind),
            params: schema_of::<P>,
            result: Some(schema_of::<R::Shape>),
            capability: None,
        });
    }

    pub(crate) fn has_request(&self, name: &str) -> bool {
        self.request_handlers.contains_key(name)
    }

    pub(crate) fn has_notification(&self, name: &str) -> bool {
        self.notification_handlers.contains_key(name)
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

    /// Runs request `method`'s synchronous part (params, ticket) now; the future does the
    /// rest and yields the answer's JSON text. `None` for a method not in the table.
    pub(crate) fn call(
        &self,
        method: &str,
        params: Option<&RawValue>,
        context: RequestContext<S>,
    ) -> Option<BoxFuture<'static, Result<String, RpcError>>> {
        let handler = self.request_handlers.get(method)?;
        Some(handler(params, context))
    }

    /// Runs notification `method`'s handler now; false for one not in the table.
    pub(crate) fn notify(
        &self,
        method: &str,
        params: Option<&RawValue>,
        server: &ServerHandle<S>,
    ) -> bool {
        match self.notification_handlers.get(method) {
            Some(handler) => {
                handler(server, params);
                true
            }
            None => false,
        }
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

/// A request handler that reads the params into `P` (bad params are answered at once, naming
/// the parameter) and then calls `start`, still in arrival order.
fn reading_params<S, P, F>(start: F) -> RequestHandler<S>
where
    S: ServerState,
    P: DeserializeOwned,
    F: Fn(RequestContext<S>, P) -> BoxFuture<'static, Result<String, RpcError>>
        + Send
        + Sync
        + 'static,
{
    Box::new(move |params, context| match parse_params::<P>(params) {
        Ok(params) => start(context, params),
        Err(error) => Box::pin(std::future::ready(Err(error))),
    })
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

/// Reads by-name params, as the client wrote them, into `P`. Missing params count as `{}`;
/// by-position params are refused. Errors name the parameter: `invalid params: missing field
/// 'sessionId'`, or `invalid params: 'entry.type': unknown variant ...`.
pub fn parse_params<P: DeserializeOwned>(params: Option<&RawValue>) -> Result<P, RpcError> {
    let text = match params.map(RawValue::get) {
        None => "{}",
        Some(array) if array.starts_with('[') => {
            // Raw text is valid JSON: after `[` and blanks comes `]` or the first item.
            let rest = array[1..].trim_start_matches([' ', '\t', '\n', '\r']);
            if !rest.starts_with(']') {
                return Err(RpcError::invalid_params(
                    "params must be an object of named parameters, not an array",
                ));
            }
            "{}"
        }
        Some(object) => object,
    };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        // serde quotes names with backticks; single quotes read better inside JSON strings.
        let detail = without_position(error.into_inner()).replace('`', "'");
        if path == "." {
            RpcError::invalid_params(detail)
        } else {
            RpcError::invalid_params(format!("'{path}': {detail}"))
        }
    })
}

/// serde_json's message without the " at line L column C" it adds when reading text: the
/// path names the parameter, and a column in the params alone would mislead.
fn without_position(error: serde_json::Error) -> String {
    let message = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    match message.strip_suffix(&position) {
        Some(bare) => bare.to_owned(),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// Params for methods that take none.
    #[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
    struct NoParams {}

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

    fn raw(params: &Value) -> Box<RawValue> {
        serde_json::value::to_raw_value(params).unwrap()
    }

    fn message(params: Value) -> String {
        parse_params::<Append>(Some(&raw(&params)))
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
            message(json!({"sessionId": "s", "entry": {"type": "tag", "label": "x"}})),
            "invalid params: 'entry.type': unknown variant 'tag', expected 'label'"
        );
        assert_eq!(
            message(json!({"sessionId": "s", "entry": 1.5})),
            "invalid params: 'entry': invalid type: floating point '1.5', expected internally tagged enum Entry"
        );
        assert_eq!(
            message(json!(["s"])),
            "invalid params: params must be an object of named parameters, not an array"
        );
    }

    #[test]
    fn deeply_nested_params_are_invalid_params_not_a_crash() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Open {
            data: Value,
        }
        // The envelope keeps params unread; reading them stops at serde_json's depth limit.
        let depth = 100_000;
        let text = format!(r#"{{"data": {}{}}}"#, "[".repeat(depth), "]".repeat(depth));
        let params = RawValue::from_string(text).unwrap();
        let error = parse_params::<Open>(Some(&params)).unwrap_err();
        assert_eq!(error.code(), crate::jsonrpc::error::code::INVALID_PARAMS);
        assert!(
            error.message().contains("recursion limit"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn no_params_accepts_nothing_much() {
        parse_params::<NoParams>(None).unwrap();
        for text in ["{}", "[]", "[ \n]", r#"{"extra": 1}"#] {
            let params = RawValue::from_string(text.to_owned()).unwrap();
            parse_params::<NoParams>(Some(&params)).unwrap();
        }
    }
}
