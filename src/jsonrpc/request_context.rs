//! What a method can reach: the server's state, the settings from `initialize`, notifications
//! and hooks to the client, and (for a request) its id and cancellation.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use jsonrpc_core::Id;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::cancel::CancelToken;
use super::error::RpcError;
use super::hooks::{HookOutcome, PendingHooks};
use super::lifecycle::ClientSettings;
use super::message;
use super::outgoing::{Hook, ServerNotification};
use super::serial::{SerialQueues, Turn};
use super::writer::Outbox;

/// A boxed future that can move between threads.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The application state behind the server (for `pi-session --stdio`, the sidecar's), with
/// the two lifecycle moments it may care about. The server knows nothing of the application:
/// the application declares its own members of `initialize`'s params ([`Self::Settings`]) and
/// of its result's `capabilities` ([`Self::Capabilities`]).
pub trait ServerState: Send + Sync + 'static {
    /// The application's members of `initialize`'s params, read from the params as sent
    /// (members it does not name are the server's, or ignored); echoed in the result's
    /// `settings` as [`ServerState::on_initialize`] returns them.
    type Settings: DeserializeOwned + Serialize;
    /// The application's members of `initialize`'s `capabilities`, beside the server's.
    type Capabilities: Serialize;

    /// Called while `initialize` is answered, before any other method can run, with the
    /// application's settings and the server's own. The settings returned are the ones as
    /// understood (defaults filled in). An error fails `initialize` (the client may try
    /// again).
    fn on_initialize(
        &self,
        ours: Self::Settings,
        _settings: &ClientSettings,
    ) -> Result<Self::Settings, RpcError> {
        Ok(ours)
    }

    /// The application's members of `initialize`'s `capabilities`.
    fn capabilities(&self) -> Self::Capabilities;

    /// Called once on the way out (after `exit`, at the end of input, on SIGTERM/SIGINT or
    /// when the parent process dies), after running requests have finished: flush and close
    /// every session here.
    fn on_close(&self) -> BoxFuture<'_, ()> {
        Box::pin(std::future::ready(()))
    }
}

/// Settings or capabilities of an application that has none of its own.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize, Serialize)]
pub struct Nothing {}

impl ServerState for () {
    type Settings = Nothing;
    type Capabilities = Nothing;

    fn capabilities(&self) -> Nothing {
        Nothing {}
    }
}

/// The parts of the server every method shares.
pub(crate) struct Shared<S> {
    pub(crate) state: S,
    pub(crate) outbox: Outbox,
    pub(crate) hooks: PendingHooks,
    pub(crate) serial: SerialQueues,
    /// Set by the second stop request: requests that have not started answer -32800.
    pub(crate) stopping: CancelToken,
    pub(crate) pressure: Arc<super::pressure::Pressure>,
}

/// A handle on the running server: state, settings, notifications and hooks. Cheap to clone
/// and `'static`, so it can be moved into spawned tasks.
pub struct ServerHandle<S> {
    shared: Arc<Shared<S>>,
    settings: Arc<ClientSettings>,
}

impl<S> Clone for ServerHandle<S> {
    fn clone(&self) -> Self {
        ServerHandle {
            shared: self.shared.clone(),
            settings: self.settings.clone(),
        }
    }
}

impl<S: ServerState> ServerHandle<S> {
    pub(crate) fn new(shared: Arc<Shared<S>>, settings: Arc<ClientSettings>) -> Self {
        ServerHandle { shared, settings }
    }

    /// The application state.
    pub fn state(&self) -> &S {
        &self.shared.state
    }

    /// The settings from `initialize` and the command line.
    pub fn settings(&self) -> &ClientSettings {
        &self.settings
    }

    /// The per-key serial queues behind [`Methods::add_serial`](super::Methods::add_serial),
    /// for a method that must also wait for a second key.
    pub fn serial_queues(&self) -> &SerialQueues {
        &self.shared.serial
    }

    /// Set once the server is stopping without waiting: a request that has not started must
    /// not start (see [`RpcError`] `server_stopping` in `methods.rs`).
    pub(crate) fn stopping(&self) -> &CancelToken {
        &self.shared.stopping
    }

    /// Waits until this request may do its work (see `pressure.rs`); hold the permit for it.
    pub(crate) async fn admit(&self) -> tokio::sync::OwnedSemaphorePermit {
        self.shared.pressure.admit().await
    }

    /// Queues a notification to the client, its params serialized from their type (an
    /// object). Notifications and responses leave in the order they are queued, so one sent
    /// before a method returns precedes its response.
    pub fn notify<P: Serialize>(&self, method: &str, params: &P) {
        self.shared
            .outbox
            .send(&message::notification(method, params));
    }

    /// Queues notification `N` (see [`ServerHandle::notify`]).
    pub fn send<N: ServerNotification>(&self, params: &N) {
        self.notify(N::NAME, params);
    }

    /// [`ServerHandle::send`] with params written as JSON text already (entries go out with
    /// the file's strings exactly, as in answers).
    pub fn send_raw<N: ServerNotification>(&self, params: Raw<N>) {
        let method = serde_json::to_string(N::NAME).unwrap_or_default();
        let head = format!(r#"{{"jsonrpc":"2.0","method":{method},"params":"#);
        self.shared
            .outbox
            .send_serialized(super::writer::Serialized::from_parts(vec![
                head.into_bytes(),
                params.text.into_bytes(),
                b"}".to_vec(),
            ]));
    }

    /// Resolves once the output not yet written to the client is under its bound (see
    /// `pressure.rs`): what a sender of unasked-for messages waits for, so that a client that
    /// stops reading stops them too.
    pub async fn output_room(&self) {
        self.shared.pressure.output_room().await
    }

    /// Sends hook `name` to the client and waits for its answer, at most `hookTimeoutMs`,
    /// read into `A` (the answer type the hook is declared with; `Option<_>` where `null` is an
    /// answer). Never sent to a client that did not declare `name` in `initialize.hooks`. When
    /// the server stops waiting without an answer (timeout, end of input, or this future being
    /// dropped) it tells the client with `$/cancelRequest`.
    pub async fn hook<A: DeserializeOwned>(
        &self,
        name: &str,
        params: &impl Serialize,
    ) -> HookOutcome<A> {
        if !self.settings.hooks.contains(name) {
            return HookOutcome::NotDeclared;
        }
        let Some((id, answered)) = self.shared.hooks.register() else {
            return HookOutcome::InputClosed;
        };
        let mut pending = PendingHook {
            id: id.clone(),
            shared: &self.shared,
            settled: false,
        };
        self.shared
            .outbox
            .send(&message::request(&id, name, params));
        let outcome = match tokio::time::timeout(self.settings.hook_timeout, answered).await {
            Ok(Ok(Ok(answer))) => {
                pending.settled = true;
                match serde_json::from_str(answer.get()) {
                    Ok(answer) => HookOutcome::Answered(answer),
                    Err(error) => {
                        // As pi ignores a handler that throws: no answer, and a line saying why.
                        tracing::warn!("ignoring the answer to hook '{name}' ({id}): {error}");
                        HookOutcome::Unfit(error.to_string())
                    }
                }
            }
            Ok(Ok(Err(error))) => {
                pending.settled = true;
                tracing::warn!(
                    "hook '{name}' ({id}) answered with error {}: {}",
                    error.code.code(),
                    error.message
                );
                HookOutcome::Error(error.into())
            }
            Ok(Err(_)) => HookOutcome::InputClosed,
            Err(_) => {
                // The client learns it from `$/cancelRequest`; not a line for the terminal.
                tracing::info!("hook '{name}' ({id}) timed out; cancelling it");
                HookOutcome::TimedOut
            }
        };
        drop(pending);
        outcome
    }
}

/// A hook sent and not settled; dropping it unsettled forgets the id and cancels it on the
/// client's side.
struct PendingHook<'a, S> {
    id: String,
    shared: &'a Shared<S>,
    settled: bool,
}

impl<S> Drop for PendingHook<'_, S> {
    fn drop(&mut self) {
        if !self.settled {
            self.shared.hooks.forget(&self.id);
            let cancel = CancelParams {
                id: Id::Str(std::mem::take(&mut self.id)),
            };
            self.shared
                .outbox
                .send(&message::notification("$/cancelRequest", &cancel));
        }
    }
}

/// What belongs to one request.
pub(crate) struct RequestScope {
    id: Id,
    cancel: CancelToken,
    /// The serial turn, held until the response is queued so that responses for one key
    /// leave in arrival order too.
    turn: Mutex<Option<Turn>>,
}

impl RequestScope {
    pub(crate) fn new(id: Id, cancel: CancelToken) -> Self {
        RequestScope {
            id,
            cancel,
            turn: Mutex::new(None),
        }
    }

    pub(crate) fn release_turn(&self) {
        let turn = self
            .turn
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(turn);
    }
}

/// The context a request method receives: the server handle plus the request's own id and
/// cancellation.
pub struct RequestContext<S> {
    server: ServerHandle<S>,
    request: Arc<RequestScope>,
}

impl<S> Clone for RequestContext<S> {
    fn clone(&self) -> Self {
        RequestContext {
            server: self.server.clone(),
            request: self.request.clone(),
        }
    }
}

impl<S: ServerState> RequestContext<S> {
    pub(crate) fn new(server: ServerHandle<S>, request: Arc<RequestScope>) -> Self {
        RequestContext { server, request }
    }

    /// The server handle, e.g. to move into a spawned task.
    pub fn server(&self) -> &ServerHandle<S> {
        &self.server
    }

    /// The application state.
    pub fn state(&self) -> &S {
        self.server.state()
    }

    /// The settings from `initialize` and the command line.
    pub fn settings(&self) -> &ClientSettings {
        self.server.settings()
    }

    /// Queues a notification; see [`ServerHandle::notify`].
    pub fn notify<P: Serialize>(&self, method: &str, params: &P) {
        self.server.notify(method, params);
    }

    /// Sends a hook and waits for it as [`ServerHandle::hook`] does, and also stops waiting
    /// with [`HookOutcome::Cancelled`] when the client cancels this request.
    pub async fn hook<A: DeserializeOwned>(
        &self,
        name: &str,
        params: &impl Serialize,
    ) -> HookOutcome<A> {
        tokio::select! {
            biased;
            () = self.request.cancel.cancelled() => HookOutcome::Cancelled,
            outcome = self.server.hook(name, params) => outcome,
        }
    }

    /// Sends hook `H` and waits for its answer as [`RequestContext::hook`] does; `null` reads
    /// as `None`.
    pub async fn ask<H: Hook>(&self, params: &H) -> HookOutcome<Option<H::Answer>> {
        self.hook(H::NAME, params).await
    }

    /// Queues notification `N` (see [`ServerHandle::notify`]).
    pub fn send<N: ServerNotification>(&self, params: &N) {
        self.server.send(params);
    }

    /// The client's id for this request.
    pub fn request_id(&self) -> &Id {
        &self.request.id
    }

    /// Whether the client has cancelled this request.
    pub fn is_cancelled(&self) -> bool {
        self.request.cancel.is_cancelled()
    }

    /// Resolves when the client cancels this request.
    pub async fn cancelled(&self) {
        self.request.cancel.cancelled().await
    }

    /// For a serial method whose change is made but not yet answerable (a durable append
    /// waiting for its sync): the next request for the same key may start now, and its answer
    /// still leaves after this one's. Call it only once nothing left of this request touches
    /// the key's thing. Does nothing for a method that is not serial.
    pub fn start_next_in_line(&self) {
        if let Some(turn) = self
            .request
            .turn
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            turn.pass_on_early();
        }
    }

    pub(crate) fn hold_turn(&self, turn: Turn) {
        *self
            .request
            .turn
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(turn);
    }
}

/// `$/cancelRequest` params, in both directions.
#[derive(Debug, serde::Deserialize, Serialize)]
pub(crate) struct CancelParams {
    pub(crate) id: Id,
}

/// A result a method wrote as JSON text itself, whose shape is `T`: sent as it is, never
/// turned into a tree of values (large answers cost their text only, and strings the text
/// holds, lone surrogate escapes included, reach the client exactly). The schema shows `T`;
/// the text must be one valid JSON value of that shape (the transcripts check it).
pub struct Raw<T> {
    text: String,
    shape: PhantomData<fn() -> T>,
}

impl<T> Raw<T> {
    /// `text`, which must be one JSON value of `T`'s shape.
    pub fn new(text: String) -> Self {
        Raw {
            text,
            shape: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Raw<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Raw").field(&self.text).finish()
    }
}

/// What a method answers: its JSON text, and the type the schema shows for it. Every
/// serializable, schema-typed value answers itself; a [`Raw`] answers its text as `T`.
pub trait Answer: Send + 'static {
    /// The type `protocol/schema.json` shows as the method's result.
    type Shape: JsonSchema;

    /// The result's JSON text.
    fn into_json(self) -> Result<String, RpcError>;
}

impl<T: Serialize + JsonSchema + Send + 'static> Answer for T {
    type Shape = T;

    fn into_json(self) -> Result<String, RpcError> {
        serde_json::to_string(&self)
            .map_err(|error| RpcError::internal(format!("cannot serialize the result: {error}")))
    }
}

impl<T: JsonSchema + 'static> Answer for Raw<T> {
    type Shape = T;

    fn into_json(self) -> Result<String, RpcError> {
        Ok(self.text)
    }
}
