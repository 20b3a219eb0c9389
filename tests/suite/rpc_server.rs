//! Server behaviour that a transcript cannot show: the close hook, stop requests (the signal
//! path), the parent-process watch, `on_initialize`, ordering under a multi-threaded runtime,
//! and the test client's own unread-message check.

use crate::support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pi_session::jsonrpc::{
    BoxFuture, ClientSettings, Methods, Nothing, RequestContext, RpcError, ServerOptions,
    ServerState, StopReason, WireFraming,
};
use serde::Deserialize;
use serde_json::{Value, json};
use support::memory::TestClient;

/// Records the lifecycle moments it sees.
#[derive(Default)]
struct Recorder {
    events: Arc<Mutex<Vec<String>>>,
    refuse_first_initialize: AtomicBool,
}

impl Recorder {
    fn record(&self, event: impl Into<String>) {
        self.events.lock().unwrap().push(event.into());
    }
}

/// The recorder's own member of `initialize`'s params; the server knows none of them.
#[derive(Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct RecorderSettings {
    sessions_root: Option<String>,
}

impl ServerState for Recorder {
    type Settings = RecorderSettings;
    type Capabilities = Nothing;

    fn capabilities(&self) -> Nothing {
        Nothing {}
    }

    fn on_initialize(
        &self,
        ours: RecorderSettings,
        _settings: &ClientSettings,
    ) -> Result<RecorderSettings, RpcError> {
        if self.refuse_first_initialize.swap(false, Ordering::SeqCst) {
            return Err(RpcError::application(1099, "not ready", "not_ready"));
        }
        self.record(format!("initialize {:?}", ours.sessions_root.as_deref()));
        Ok(ours)
    }

    fn on_close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move { self.record("close") })
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SleepParams {
    ms: u64,
}

fn recorder_methods() -> Methods<Recorder> {
    let mut methods = Methods::new();
    methods.add(
        "test/sleep",
        |cx: RequestContext<Recorder>, p: SleepParams| async move {
            tokio::time::sleep(Duration::from_millis(p.ms)).await;
            cx.state().record(format!("slept {}", p.ms));
            Ok::<_, RpcError>(p.ms)
        },
    );
    methods
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn notification(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}

async fn initialized(client: &mut TestClient) {
    client
        .send(&request(1, "initialize", json!({"sessionsRoot": "/s"})))
        .await;
    let answer = client.recv().await;
    assert!(answer.get("result").is_some(), "{answer}");
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn close_hook_runs_once_after_running_requests_answer() {
    let state = Recorder::default();
    let events = state.events.clone();
    let mut client = TestClient::start(
        state,
        recorder_methods(),
        ServerOptions::default(),
        WireFraming::Ndjson,
    );
    initialized(&mut client).await;
    client
        .send(&request(2, "test/sleep", json!({"ms": 100})))
        .await;
    client.send(&notification("exit")).await;
    assert_eq!(client.recv().await["result"], 100);
    let outcome = client.finish().await;
    assert_eq!(outcome.reason, StopReason::Exit);
    assert_eq!(outcome.exit_code(), 1);
    assert_eq!(
        *events.lock().unwrap(),
        ["initialize Some(\"/s\")", "slept 100", "close"]
    );
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn a_refused_initialize_can_be_retried() {
    let state = Recorder::default();
    state.refuse_first_initialize.store(true, Ordering::SeqCst);
    let mut client = TestClient::start(
        state,
        recorder_methods(),
        ServerOptions::default(),
        WireFraming::Ndjson,
    );
    client.send(&request(1, "initialize", json!({}))).await;
    let refused = client.recv().await;
    assert_eq!(refused["error"]["data"]["kind"], "not_ready");
    client
        .send(&request(2, "test/sleep", json!({"ms": 1})))
        .await;
    assert_eq!(client.recv().await["error"]["code"], -32002);
    initialized(&mut client).await;
    client.finish().await;
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn a_stop_request_takes_the_graceful_way_out() {
    let state = Recorder::default();
    let events = state.events.clone();
    let mut client = TestClient::start(
        state,
        recorder_methods(),
        ServerOptions::default(),
        WireFraming::Lsp,
    );
    initialized(&mut client).await;
    client.send(&request(2, "shutdown", json!(null))).await;
    assert_eq!(client.recv().await["id"], 2);
    client.stop_handle().stop(StopReason::Signal("SIGTERM"));
    // The server stops although its input is still open.
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(events.lock().unwrap().last().unwrap(), "close");
    let outcome = client.finish().await;
    assert_eq!(outcome.reason, StopReason::Signal("SIGTERM"));
    assert_eq!(outcome.exit_code(), 0);
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn a_second_stop_request_does_not_wait_for_running_requests() {
    let state = Recorder::default();
    let events = state.events.clone();
    let mut client = TestClient::start(
        state,
        recorder_methods(),
        ServerOptions::default(),
        WireFraming::Ndjson,
    );
    initialized(&mut client).await;
    client
        .send(&request(2, "test/sleep", json!({"ms": 60_000})))
        .await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    let stop = client.stop_handle();
    stop.stop(StopReason::Signal("SIGTERM"));
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(
        events.lock().unwrap().last().unwrap(),
        "initialize Some(\"/s\")"
    );
    stop.stop(StopReason::Signal("SIGINT"));
    let outcome = client.finish().await;
    assert_eq!(outcome.reason, StopReason::Signal("SIGTERM"));
    assert_eq!(outcome.exit_code(), 1);
    assert_eq!(events.lock().unwrap().last().unwrap(), "close");
}

#[tokio::main(flavor = "current_thread")]
async fn the_server_exits_when_the_client_process_dies() {
    let mut parent = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("spawn sleep");
    let options = ServerOptions {
        parent_poll_interval: Duration::from_millis(20),
        ..ServerOptions::default()
    };
    let mut client = TestClient::start(
        Recorder::default(),
        recorder_methods(),
        options,
        WireFraming::Ndjson,
    );
    client
        .send(&request(1, "initialize", json!({"processId": parent.id()})))
        .await;
    assert!(client.recv().await.get("result").is_some());
    parent.kill().expect("kill sleep");
    parent.wait().expect("reap sleep");
    let pid = i32::try_from(parent.id()).unwrap();
    // finish() closes the input too, so check the reason, which only the watch can give.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let outcome = client.finish().await;
    assert_eq!(outcome.reason, StopReason::ParentDied(pid));
}

#[derive(Deserialize, schemars::JsonSchema)]
struct AppendParams {
    key: String,
    value: u64,
}

#[derive(Default)]
struct Keyed(Mutex<std::collections::HashMap<String, Vec<u64>>>);

impl ServerState for Keyed {
    type Settings = Nothing;
    type Capabilities = Nothing;

    fn capabilities(&self) -> Nothing {
        Nothing {}
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn serial_changes_answer_in_order_on_a_multi_threaded_runtime() {
    let mut methods = Methods::new();
    methods.add_serial(
        "test/append",
        |p: &AppendParams| p.key.clone(),
        |cx: RequestContext<Keyed>, p: AppendParams| async move {
            // Varying real delays: without the serial line, later requests would overtake.
            let delay = (p.value * 7919) % 4;
            tokio::time::sleep(Duration::from_micros(delay * 300)).await;
            let mut lists = cx.state().0.lock().unwrap();
            let list = lists.entry(p.key).or_default();
            list.push(p.value);
            Ok::<_, RpcError>(list.len())
        },
    );
    let mut client = TestClient::start(
        Keyed::default(),
        methods,
        ServerOptions::default(),
        WireFraming::Ndjson,
    );
    client.send(&request(0, "initialize", json!({}))).await;
    client.recv().await;
    let keys = ["a", "b", "c"];
    let count = 300;
    for i in 1..=count {
        let key = keys[i as usize % keys.len()];
        client
            .send(&request(i, "test/append", json!({"key": key, "value": i})))
            .await;
    }
    let mut last_length = std::collections::HashMap::new();
    for _ in 1..=count {
        let answer = client.recv().await;
        let id = answer["id"].as_u64().unwrap();
        let key = keys[id as usize % keys.len()];
        let length = answer["result"].as_u64().unwrap();
        let previous = last_length.insert(key, length).unwrap_or(0);
        assert_eq!(length, previous + 1, "answers for {key} out of order");
    }
    client.finish().await;
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn the_test_client_fails_on_unread_messages() {
    let mut client = TestClient::start(
        Recorder::default(),
        recorder_methods(),
        ServerOptions::default(),
        WireFraming::Ndjson,
    );
    client.send(&request(1, "initialize", json!({}))).await;
    client.finish().await;
}

crate::tests! {
    close_hook_runs_once_after_running_requests_answer,
    a_refused_initialize_can_be_retried,
    a_stop_request_takes_the_graceful_way_out,
    a_second_stop_request_does_not_wait_for_running_requests,
    the_server_exits_when_the_client_process_dies,
    serial_changes_answer_in_order_on_a_multi_threaded_runtime,
    #[should_panic = "server messages left unread"] the_test_client_fails_on_unread_messages,
}
