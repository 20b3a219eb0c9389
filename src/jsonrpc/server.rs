//! The connection: the reader loop, the lifecycle, dispatch, and the way out.
//!
//! One loop reads frames in order. Lifecycle messages, client notifications and answers to
//! hooks are handled right there, in arrival order; each request runs in its own task, its
//! ordering and cancellation arranged by its wrapper (see `methods.rs`). The loop itself never
//! waits for a method, so it is always free to route an answer to a waiting hook.
//!
//! Backpressure (`pressure.rs`): past a bound on pending requests or unsent output, frames are
//! read ahead into a bounded buffer instead of being started; hook answers and
//! `$/cancelRequest` among them are still acted on at once. A full buffer stops the reading.
//!
//! The way out is the same for `exit`, end of input, SIGTERM/SIGINT and the parent's death:
//! stop reading, let every request already read run and answer (hooks can no longer be
//! answered and resolve at once), run the state's close hook, flush, and report exit code 0 if
//! `shutdown` came first, else 1. A second stop request ends the waiting: requests that have
//! not started answer -32800 (nothing changed), and the server is gone within a second.

use std::collections::VecDeque;
use std::time::Duration;

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use jsonrpc_core::Id;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::cancel::{CancelToken, InFlight};
use super::error::RpcError;
use super::framing::{Frame, FrameReader, WireFraming};
use super::hooks::PendingHooks;
use super::lifecycle::{
    Capabilities, ClientSettings, InitializeAnswer, InitializeParams, InitializeResult,
    PROTOCOL_VERSION, ServerInfo, ServerOptions,
};
use super::message::{self, Call, HookAnswer, Incoming, Request};
use super::methods::{Methods, parse_params};
use super::parent_watch::watch_parent;
use super::pressure::Pressure;
use super::request_context::{
    CancelParams, RequestContext, RequestScope, ServerHandle, ServerState, Shared,
};
use super::serial::SerialQueues;
use super::stop::{StopHandle, StopReason};
use super::writer::{Serialized, spawn_writer};

/// How serving ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeOutcome {
    /// What stopped the server.
    pub reason: StopReason,
    /// Whether `shutdown` was received before.
    pub shutdown_requested: bool,
}

impl ServeOutcome {
    /// The process exit code: 0 after `shutdown`, else 1 (as LSP).
    pub fn exit_code(&self) -> i32 {
        if self.shutdown_requested { 0 } else { 1 }
    }
}

/// A JSON-RPC server over one input and one output.
pub struct Server<S: ServerState> {
    state: S,
    methods: Methods<S>,
    options: ServerOptions,
    stop: StopHandle,
    stop_requests: mpsc::UnboundedReceiver<StopReason>,
    signals: Option<Signals>,
}

/// SIGTERM and SIGINT, watched by the server's own loop: a task forwarding them could wait
/// behind a long queue of request tasks, and two signals sent in that time would count as one.
pub struct Signals {
    terminate: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
}

impl Signals {
    /// Starts listening for SIGTERM and SIGINT (their default action is replaced from now on).
    pub fn listen() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    async fn recv(&mut self) -> StopReason {
        let name = tokio::select! {
            Some(()) = self.terminate.recv() => "SIGTERM",
            Some(()) = self.interrupt.recv() => "SIGINT",
            else => return std::future::pending().await,
        };
        tracing::info!("{name} received");
        StopReason::Signal(name)
    }
}

/// The next signal, or never without [`Signals`].
async fn next_signal(signals: &mut Option<Signals>) -> StopReason {
    match signals {
        Some(signals) => signals.recv().await,
        None => std::future::pending().await,
    }
}

impl<S: ServerState> Server<S> {
    /// A server for `state` offering `methods` beside the lifecycle.
    pub fn new(state: S, methods: Methods<S>, options: ServerOptions) -> Self {
        let (stop, stop_requests) = mpsc::unbounded_channel();
        Server {
            state,
            methods,
            options,
            stop: StopHandle(stop),
            stop_requests,
            signals: None,
        }
    }

    /// Stops on SIGTERM/SIGINT as on a stop request (a second one ends the waiting).
    pub fn with_signals(mut self, signals: Signals) -> Self {
        self.signals = Some(signals);
        self
    }

    /// A handle to stop the server from outside; take it before [`Server::serve`].
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// Serves until `exit`, end of input or a stop request; never fails and never panics on
    /// any input.
    pub async fn serve<R, W>(self, input: R, output: W) -> ServeOutcome
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let Server {
            state,
            methods,
            options,
            stop,
            mut stop_requests,
            mut signals,
        } = self;
        let (reader, decision) = FrameReader::new(input, options.framing, options.max_frame_bytes);
        let (mut frames, reading) = spawn_reader(reader);
        let pressure = Arc::new(Pressure::new(options.limits));
        let (outbox, writer) = spawn_writer(output, decision, pressure.clone());
        let shared = Arc::new(Shared {
            state,
            outbox,
            hooks: PendingHooks::default(),
            serial: SerialQueues::default(),
            stopping: CancelToken::default(),
            pressure: pressure.clone(),
        });
        let mut connection = Connection {
            shared,
            methods,
            options,
            stop,
            phase: Phase::AwaitingInitialize,
            settings: None,
            shutdown_requested: false,
            in_flight: Arc::new(InFlight::default()),
            shutdown_reply: None,
            parent_watch: None,
            pressure,
            held: HeldMessages::default(),
        };
        let reason = loop {
            // Buffered frames are always ready: without spending the task budget on each, the
            // loop would read a whole pipelined backlog before the runtime looked at a signal.
            tokio::task::consume_budget().await;
            // Messages held back start first, in arrival order, as soon as there is room.
            if !connection.held.is_empty() && !connection.pressure.is_over() {
                let (incoming, wire) = connection.held.pop();
                if let Some(reason) = connection.on_message(incoming, wire) {
                    break reason;
                }
                continue;
            }
            let holding = !connection.held.is_empty() || connection.pressure.is_over();
            let can_read = connection.held.has_room(connection.pressure.limits());
            tokio::select! {
                biased;
                Some(reason) = stop_requests.recv() => break reason,
                reason = next_signal(&mut signals) => break reason,
                () = connection.pressure.relieved(), if holding => {}
                frame = frames.recv(), if can_read => match frame {
                    Some(Ok(Some((frame, wire)))) => {
                        let stop = if holding {
                            connection.read_ahead(frame, wire)
                        } else {
                            connection.on_frame(frame, wire)
                        };
                        if let Some(reason) = stop {
                            break reason;
                        }
                    }
                    Some(Ok(None)) | None => break StopReason::EndOfInput,
                    Some(Err(error)) => break StopReason::InputError(error.to_string()),
                },
            }
        };
        // Dropping the reader also settles the writer's framing if it was never decided.
        reading.abort();
        drop(frames);
        connection
            .close(reason, &mut stop_requests, &mut signals, writer)
            .await
    }
}

/// What the reading task hands the loop: a frame and the framing it came in, the end of input
/// (`None`), or a read error.
type ReadItem = std::io::Result<Option<(Frame, WireFraming)>>;

/// Frames read ahead of the loop by the reading task.
const READER_CHANNEL_FRAMES: usize = 16;

/// Reads frames in a task of its own: a frame half-read is never lost when the loop turns to
/// something else (a signal, room for held work), as it would be if the loop dropped a read in
/// progress.
fn spawn_reader<R>(mut reader: FrameReader<R>) -> (mpsc::Receiver<ReadItem>, JoinHandle<()>)
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let (sender, frames) = mpsc::channel(READER_CHANNEL_FRAMES);
    let task = tokio::spawn(async move {
        loop {
            let item = match reader.next_frame().await {
                Ok(Some(frame)) => {
                    let wire = reader.wire_framing().unwrap_or(WireFraming::Lsp);
                    Ok(Some((frame, wire)))
                }
                other => other.map(|_| None),
            };
            let last = !matches!(item, Ok(Some(_)));
            if sender.send(item).await.is_err() || last {
                return;
            }
        }
    });
    (frames, task)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    AwaitingInitialize,
    Running,
    ShutDown,
}

struct Connection<S: ServerState> {
    shared: Arc<Shared<S>>,
    methods: Methods<S>,
    options: ServerOptions,
    stop: StopHandle,
    phase: Phase,
    /// Set by `initialize`; every method context carries it.
    settings: Option<Arc<ClientSettings>>,
    shutdown_requested: bool,
    in_flight: Arc<InFlight>,
    /// The task that answers `shutdown` once running requests have answered.
    shutdown_reply: Option<JoinHandle<()>>,
    parent_watch: Option<JoinHandle<()>>,
    pressure: Arc<Pressure>,
    /// Messages read ahead while over a bound, not started yet.
    held: HeldMessages,
}

/// The read-ahead buffer: messages read while the server takes on no new work.
#[derive(Default)]
struct HeldMessages {
    messages: VecDeque<(Incoming, WireFraming, usize)>,
    bytes: usize,
}

impl HeldMessages {
    fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    fn has_room(&self, limits: &super::pressure::Limits) -> bool {
        self.messages.is_empty()
            || (self.messages.len() < limits.read_ahead_messages
                && self.bytes < limits.read_ahead_bytes)
    }

    fn push(&mut self, incoming: Incoming, wire: WireFraming, size: usize) {
        self.bytes += size;
        self.messages.push_back((incoming, wire, size));
    }

    fn pop(&mut self) -> (Incoming, WireFraming) {
        match self.messages.pop_front() {
            Some((incoming, wire, size)) => {
                self.bytes -= size;
                (incoming, wire)
            }
            // Callers check `is_empty` first; an empty buffer holds nothing to run.
            None => (
                Incoming::Ignored {
                    detail: "nothing held".into(),
                },
                WireFraming::Lsp,
            ),
        }
    }

    /// Removes a held request with `id`, if there is one.
    fn take_request(&mut self, id: &Id) -> Option<Request> {
        let at = self.messages.iter().position(
            |(incoming, ..)| matches!(incoming, Incoming::Request(request) if &request.id == id),
        )?;
        let (incoming, _, size) = self.messages.remove(at)?;
        self.bytes -= size;
        match incoming {
            Incoming::Request(request) => Some(request),
            _ => None,
        }
    }
}

impl<S: ServerState> Connection<S> {
    fn reply(&self, id: Id, result: Result<Value, RpcError>) {
        self.shared.outbox.send(&message::response(id, result));
    }

    /// A frame read while no new work may start: hook answers, `$/cancelRequest` and `exit`
    /// are acted on now (they free work rather than add it); everything else waits its turn.
    fn read_ahead(&mut self, frame: Frame, wire: WireFraming) -> Option<StopReason> {
        let Frame::Message(bytes) = frame else {
            return self.on_frame(frame, wire);
        };
        let incoming = message::parse_incoming(&bytes);
        match &incoming {
            Incoming::Response { .. } => self.on_message(incoming, wire),
            // `exit` too: the way out runs every message held before it anyway.
            Incoming::Notification(call)
                if call.method == "$/cancelRequest" || call.method == "exit" =>
            {
                self.on_message(incoming, wire)
            }
            _ => {
                self.held.push(incoming, wire, bytes.len());
                None
            }
        }
    }

    /// Handles one frame; `Some` when it asks the server to stop.
    fn on_frame(&mut self, frame: Frame, wire: WireFraming) -> Option<StopReason> {
        match frame {
            Frame::Message(bytes) => return self.on_message(message::parse_incoming(&bytes), wire),
            Frame::TooLarge { declared } => {
                let limit = self.options.max_frame_bytes;
                let detail = match declared {
                    Some(size) => {
                        format!("frame of {size} bytes exceeds the limit of {limit} bytes; skipped")
                    }
                    None => format!("line exceeds the limit of {limit} bytes; skipped"),
                };
                tracing::warn!("{detail}");
                self.reply(Id::Null, Err(RpcError::invalid_request(detail)));
            }
            Frame::Malformed(problem) => {
                tracing::warn!("malformed frame: {problem}");
                self.reply(
                    Id::Null,
                    Err(RpcError::parse_error(format!("malformed frame: {problem}"))),
                );
            }
        }
        None
    }

    fn on_message(&mut self, incoming: Incoming, wire: WireFraming) -> Option<StopReason> {
        match incoming {
            Incoming::Invalid { id, error } => {
                tracing::warn!("{}", error.message());
                self.reply(id, Err(error));
            }
            // A message without an id is never answered, even when it is not valid.
            Incoming::Ignored { detail } => {
                tracing::warn!("message without an id ignored: {detail}")
            }
            Incoming::Response { id, answer } => self.on_answer(id, answer),
            Incoming::Notification(call) => return self.on_notification(call),
            Incoming::Request(request) => self.on_request(request, wire),
        }
        None
    }

    fn on_answer(&self, id: Option<Value>, answer: HookAnswer) {
        let delivered = match &id {
            Some(Value::String(id)) => self.shared.hooks.answer(id, answer),
            _ => false,
        };
        if !delivered {
            let late = matches!(&id, Some(Value::String(id)) if self.shared.hooks.was_sent(id));
            let shown = id.map_or_else(|| "none".to_owned(), |id| id.to_string());
            if late {
                // The hook timed out or its request was cancelled, and the client said so with
                // `$/cancelRequest`: nothing for the person at the terminal the front-end
                // shares with this server's stderr.
                tracing::debug!("ignoring the late answer to hook {shown}: no longer waiting");
            } else {
                tracing::warn!("ignoring an answer with id {shown}: no hook is waiting for it");
            }
        }
    }

    fn on_notification(&mut self, call: Call) -> Option<StopReason> {
        let method = call.method.as_str();
        match method {
            "exit" => return Some(StopReason::Exit),
            "$/cancelRequest" => match parse_params::<CancelParams>(call.params.as_deref()) {
                Ok(CancelParams { id }) => {
                    if let Some(request) = self.held.take_request(&id) {
                        // Read ahead and never started: it changed nothing.
                        self.reply(request.id, Err(RpcError::request_cancelled()));
                    } else if !self.in_flight.cancel(&id) {
                        tracing::debug!("cancel for {id:?}, which is not in flight");
                    }
                }
                Err(error) => tracing::warn!("$/cancelRequest ignored: {}", error.message()),
            },
            _ if self.phase == Phase::AwaitingInitialize => {
                tracing::warn!("notification '{method}' before initialize ignored");
            }
            "initialized" => tracing::debug!("client says initialized"),
            _ if self.phase == Phase::ShutDown => {
                tracing::warn!("notification '{method}' after shutdown ignored");
            }
            _ if self.methods.has_notification(method) => self.run_notification(&call),
            _ if method.starts_with("$/") => {
                tracing::debug!("optional notification '{method}' ignored")
            }
            _ => tracing::warn!("unknown notification '{method}' ignored"),
        }
        None
    }

    fn run_notification(&self, call: &Call) {
        let Some(settings) = self.settings.clone() else {
            return;
        };
        let server = ServerHandle::new(self.shared.clone(), settings);
        let ran = std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.methods
                .notify(&call.method, call.params.as_deref(), &server)
        }));
        if let Err(panic) = ran {
            tracing::error!(
                "notification '{}' panicked: {}",
                call.method,
                panic_message(panic.as_ref())
            );
        }
    }

    fn on_request(&mut self, request: Request, wire: WireFraming) {
        let id = request.id.clone();
        match (self.phase, request.call.method.as_str()) {
            (Phase::AwaitingInitialize, "initialize") => self.initialize(request, wire),
            (_, "initialize") => self.reply(
                id,
                Err(RpcError::invalid_request(
                    "'initialize' may only be sent once",
                )),
            ),
            (Phase::AwaitingInitialize, _) => {
                self.reply(id, Err(RpcError::server_not_initialized()));
            }
            (Phase::ShutDown, _) => self.reply(
                id,
                Err(RpcError::invalid_request(
                    "the server is shut down; only 'exit' is accepted",
                )),
            ),
            (Phase::Running, "shutdown") => self.shutdown(id),
            (Phase::Running, _) => self.dispatch(request),
        }
    }

    fn initialize(&mut self, request: Request, wire: WireFraming) {
        let Request { id, call } = request;
        let params = call.params.as_deref();
        let settings = parse_params::<InitializeParams>(params)
            .and_then(|ours| ClientSettings::new(ours, &self.options, wire));
        let settings = match settings {
            Ok(settings) => settings,
            Err(error) => return self.reply(id, Err(error)),
        };
        // Read as every method reads its params, so an error names the member.
        let accepted = parse_params::<S::Settings>(params).and_then(|ours| {
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                self.shared.state.on_initialize(ours, &settings)
            }))
            .unwrap_or_else(|panic| Err(panicked("initialize", panic.as_ref())))
        });
        let application = match accepted {
            Ok(application) => application,
            Err(error) => return self.reply(id, Err(error)),
        };
        if let Some(pid) = settings.process_id {
            self.parent_watch = Some(watch_parent(
                pid,
                self.options.parent_poll_interval,
                self.stop.clone(),
            ));
        }
        let result = InitializeResult {
            server_info: ServerInfo::default(),
            protocol_version: PROTOCOL_VERSION,
            methods: self.methods.request_names(),
            capabilities: Capabilities {
                client_notifications: self.methods.notification_names(),
                hooks: self.methods.hook_names(),
                notifications: self.methods.server_notification_names(),
                cancel_request: true,
                batches: false,
                max_frame_bytes: self.options.max_frame_bytes,
                max_pending_requests: self.options.limits.max_pending_requests,
                max_unsent_bytes: self.options.limits.max_unsent_bytes,
            },
            settings,
        };
        let capabilities = self.shared.state.capabilities();
        let answer = InitializeAnswer::new(&result, &application, &capabilities);
        let text = match serde_json::to_string(&answer) {
            Ok(text) => text,
            Err(error) => return self.reply(id, Err(RpcError::internal(error))),
        };
        tracing::info!(
            "initialized: client {:?}, hooks {:?}",
            result.settings.client_info,
            result.settings.hooks
        );
        self.phase = Phase::Running;
        self.settings = Some(Arc::new(result.settings));
        self.shared.outbox.send_serialized(success_bytes(&id, text));
    }

    /// Refuses new requests at once; answers once every running request has answered.
    fn shutdown(&mut self, id: Id) {
        self.phase = Phase::ShutDown;
        self.shutdown_requested = true;
        let in_flight = self.in_flight.clone();
        let outbox = self.shared.outbox.clone();
        self.shutdown_reply = Some(tokio::spawn(async move {
            in_flight.drained().await;
            outbox.send(&message::response(id, Ok(Value::Null)));
        }));
    }

    fn dispatch(&mut self, request: Request) {
        let Request { id, call } = request;
        if !self.methods.has_request(&call.method) {
            return self.reply(id, Err(RpcError::method_not_found(&call.method)));
        }
        let Some(cancel) = self.in_flight.begin(&id) else {
            let shown = serde_json::to_string(&id).unwrap_or_default();
            return self.reply(
                id,
                Err(RpcError::invalid_request(format!(
                    "request id {shown} is already in use by a running request"
                ))),
            );
        };
        let scope = Arc::new(RequestScope::new(id.clone(), cancel));
        let Some(context) = self.request_context(scope.clone()) else {
            return;
        };
        let method = call.method;
        let in_flight = self.in_flight.clone();
        let outbox = self.shared.outbox.clone();
        let pressure = self.pressure.clone();
        pressure.request_started();
        let answer = move |id: &Id, bytes: Option<Serialized>| {
            in_flight.finish(id, || {
                if let Some(bytes) = bytes {
                    outbox.send_serialized(bytes);
                }
            });
            // After the response is queued, so one key's responses leave in order.
            scope.release_turn();
            pressure.request_answered();
        };
        // The synchronous part (params, serial ticket) runs here, in arrival order.
        let started = std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.methods.call(&method, call.params.as_deref(), context)
        }));
        let running = match started {
            Ok(Some(running)) => running,
            // Checked above; kept as an answer rather than a panic.
            Ok(None) => {
                let output =
                    message::response(id.clone(), Err(RpcError::method_not_found(&method)));
                return answer(&id, failure_bytes(&output));
            }
            Err(panic) => {
                let output = message::response(id.clone(), Err(panicked(&method, panic.as_ref())));
                return answer(&id, failure_bytes(&output));
            }
        };
        tokio::spawn(async move {
            let result = match AssertUnwindSafe(running).catch_unwind().await {
                Ok(result) => result,
                Err(panic) => Err(panicked(&method, panic.as_ref())),
            };
            // Written before the turn passes on, so one key's answers still leave in order.
            let bytes = match result {
                Ok(text) => Some(success_bytes(&id, text)),
                Err(error) => failure_bytes(&message::response(id.clone(), Err(error))),
            };
            answer(&id, bytes);
        });
    }

    /// A context for a method; `None` before `initialize` (never reached: the lifecycle
    /// refuses methods until then).
    fn request_context(&self, scope: Arc<RequestScope>) -> Option<RequestContext<S>> {
        let settings = self.settings.clone()?;
        Some(RequestContext::new(
            ServerHandle::new(self.shared.clone(), settings),
            scope,
        ))
    }

    async fn close(
        mut self,
        reason: StopReason,
        stop_requests: &mut mpsc::UnboundedReceiver<StopReason>,
        signals: &mut Option<Signals>,
        writer: JoinHandle<()>,
    ) -> ServeOutcome {
        tracing::info!("stopping: {reason}");
        self.shared.hooks.close();
        // Everything read is run, held messages too (at most the read-ahead bound more).
        while !self.held.is_empty() {
            let (incoming, wire) = self.held.pop();
            let _ = self.on_message(incoming, wire);
        }
        let shutdown_reply = self.shutdown_reply.take();
        let in_flight = self.in_flight.clone();
        let settled = async move {
            in_flight.drained().await;
            if let Some(reply) = shutdown_reply {
                let _ = reply.await;
            }
        };
        tokio::pin!(settled);
        // After a second stop request, what is left of this second bounds the rest.
        let mut deadline = None;
        tokio::select! {
            () = &mut settled => {}
            again = async {
                tokio::select! {
                    Some(again) = stop_requests.recv() => again,
                    again = next_signal(signals) => again,
                }
            } => {
                tracing::warn!("{again}: requests not started yet are answered -32800; not waiting any longer");
                let until = tokio::time::Instant::now() + SECOND_STOP_GRACE;
                deadline = Some(until);
                self.shared.stopping.cancel();
                // Requests that are only waiting wake and answer now; give started ones a moment.
                let _ = tokio::time::timeout_at(until - SECOND_STOP_GRACE / 2, &mut settled).await;
            }
        }
        if let Some(watch) = self.parent_watch.take() {
            watch.abort();
        }
        let finish = async {
            if let Err(panic) = AssertUnwindSafe(self.shared.state.on_close())
                .catch_unwind()
                .await
            {
                tracing::error!("close hook panicked: {}", panic_message(panic.as_ref()));
            }
            self.shared.outbox.close().await;
            let _ = writer.await;
        };
        match deadline {
            None => finish.await,
            Some(until) => {
                if tokio::time::timeout_at(until, finish).await.is_err() {
                    tracing::warn!("output not flushed in time; exiting anyway");
                }
            }
        }
        ServeOutcome {
            reason,
            shutdown_requested: self.shutdown_requested,
        }
    }
}

/// How long the server may take to exit after a second stop request.
const SECOND_STOP_GRACE: Duration = Duration::from_millis(900);

fn panicked(method: &str, panic: &(dyn Any + Send)) -> RpcError {
    let message = panic_message(panic);
    tracing::error!("method '{method}' panicked: {message}");
    RpcError::internal(format!("method '{method}' panicked: {message}"))
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "(no message)".to_owned()
    }
}

/// An error response's bytes (small: an error object).
fn failure_bytes(output: &jsonrpc_core::Output) -> Option<Serialized> {
    match serde_json::to_vec(output) {
        Ok(bytes) => Some(bytes.into()),
        Err(error) => {
            tracing::error!("could not serialize an error response: {error}");
            None
        }
    }
}

/// A success response around a result written as JSON text already ([`super::Answer`]),
/// member for member as jsonrpc-core writes one; the result's text is not copied.
fn success_bytes(id: &Id, result: String) -> Serialized {
    let id = serde_json::to_string(id).unwrap_or_else(|_| "null".to_owned());
    Serialized::from_parts(vec![
        br#"{"jsonrpc":"2.0","result":"#.to_vec(),
        result.into_bytes(),
        format!(r#","id":{id}}}"#).into_bytes(),
    ])
}
