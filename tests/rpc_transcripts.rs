//! Scripted exchanges with the server, checked as insta snapshots.
//!
//! Each file in `tests/transcripts/` holds a client's side of a conversation: messages, raw
//! bytes (malformed frames), pauses, and how many server messages to read at each point. The
//! runner plays it against an in-memory server on a paused clock (timeouts are instant and
//! exact) and snapshots the whole exchange. A server message the script does not read fails
//! the test.
//!
//! The server offers test-only methods, registered here through the same seam the session
//! methods use; they are not part of the production table.

mod rpc_support;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use pi_session::rpc::{
    Framing, HookOutcome, Methods, RequestContext, RpcError, ServerOptions, ServerState,
    WireFraming,
};
use rpc_support::TestClient;
use serde::Deserialize;
use serde_json::{Value, json};

/// What the test methods change: named lists of values.
#[derive(Default)]
struct Lists(Mutex<BTreeMap<String, Vec<Value>>>);

impl Lists {
    fn push(&self, key: &str, value: Value) -> Vec<Value> {
        let mut lists = self.0.lock().unwrap();
        let list = lists.entry(key.to_owned()).or_default();
        list.push(value);
        list.clone()
    }

    fn get(&self, key: &str) -> Vec<Value> {
        self.0.lock().unwrap().get(key).cloned().unwrap_or_default()
    }
}

impl ServerState for Lists {}

#[derive(Deserialize)]
struct SleepParams {
    ms: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AppendParams {
    key: String,
    value: Value,
    #[serde(default)]
    delay_ms: u64,
}

#[derive(Deserialize)]
struct KeyParams {
    key: String,
}

#[derive(Deserialize)]
struct HookParams {
    name: String,
    #[serde(default)]
    params: Value,
}

#[derive(Deserialize)]
struct SerialHookParams {
    key: String,
    name: String,
}

#[derive(Deserialize)]
struct NotifyParams {
    method: String,
    params: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct TypedParams {
    session_id: String,
    count: u32,
}

fn describe(outcome: HookOutcome) -> Value {
    match outcome {
        HookOutcome::Answered(answer) => json!({ "answered": answer }),
        HookOutcome::Error(error) => {
            json!({ "error": { "code": error.code(), "message": error.message() } })
        }
        HookOutcome::TimedOut => json!("timedOut"),
        HookOutcome::NotDeclared => json!("notDeclared"),
        HookOutcome::Cancelled => json!("cancelled"),
        HookOutcome::InputClosed => json!("inputClosed"),
    }
}

async fn sleep_ms(ms: u64) {
    if ms > 0 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

fn test_methods() -> Methods<Lists> {
    let mut methods = Methods::new();
    methods
        .add("test/echo", |_, params: Value| async move {
            Ok::<_, RpcError>(params)
        })
        .add("test/sleep", |_, p: SleepParams| async move {
            sleep_ms(p.ms).await;
            Ok::<_, RpcError>(json!({ "slept": p.ms }))
        })
        .add_serial(
            "test/append",
            |p: &AppendParams| p.key.clone(),
            |cx: RequestContext<Lists>, p: AppendParams| async move {
                sleep_ms(p.delay_ms).await;
                Ok::<_, RpcError>(cx.state().push(&p.key, p.value))
            },
        )
        .add(
            "test/read",
            |cx: RequestContext<Lists>, p: KeyParams| async move {
                Ok::<_, RpcError>(cx.state().get(&p.key))
            },
        )
        .add(
            "test/hook",
            |cx: RequestContext<Lists>, p: HookParams| async move {
                Ok::<_, RpcError>(describe(cx.hook(&p.name, p.params).await))
            },
        )
        .add_serial(
            "test/serialHook",
            |p: &SerialHookParams| p.key.clone(),
            |cx: RequestContext<Lists>, p: SerialHookParams| async move {
                let outcome = cx.hook(&p.name, json!({ "key": p.key })).await;
                if outcome == HookOutcome::Cancelled {
                    // Stop before changing anything, as a real method would.
                    return Err(RpcError::request_cancelled());
                }
                cx.state().push(&p.key, json!("hooked"));
                Ok(describe(outcome))
            },
        )
        .add("test/panic", |_, _: Value| async move {
            if true {
                panic!("boom");
            }
            Ok::<Value, RpcError>(Value::Null)
        })
        .add(
            "test/notify",
            |cx: RequestContext<Lists>, p: NotifyParams| async move {
                cx.notify(&p.method, p.params);
                Ok::<_, RpcError>("sent")
            },
        )
        .add("test/typed", |_, _: TypedParams| async move {
            Ok::<_, RpcError>("ok")
        })
        .add("test/fail", |_, _: Value| async move {
            Err::<Value, _>(
                RpcError::application(1001, "no session 'x'", "session_not_found")
                    .with_data("sessionId", "x"),
            )
        })
        .add_notification("test/record", |server, p: AppendParams| {
            server.state().push(&p.key, p.value);
        })
        .declare_hook("test_hook")
        .declare_notification("test/event");
    methods
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Transcript {
    /// What the exchange shows; kept in the snapshot's header.
    description: String,
    /// How the client frames what it sends (the server detects it unless `server.framing`).
    #[serde(default = "ndjson")]
    framing: WireFraming,
    #[serde(default)]
    server: ServerSetup,
    steps: Vec<Step>,
}

fn ndjson() -> WireFraming {
    WireFraming::Ndjson
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ServerSetup {
    framing: Option<Framing>,
    max_frame_bytes: Option<usize>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
enum Step {
    /// One message, framed.
    Send(Value),
    /// Text sent as it is (for malformed frames).
    SendRaw(String),
    /// Bytes in hex sent as they are (for non-UTF-8 input).
    SendHex(String),
    /// Read this many server messages, in order.
    Expect(usize),
    /// Read this many server messages whose relative order is not guaranteed; they are
    /// recorded sorted.
    ExpectUnordered(usize),
    /// Let the (paused) clock run.
    SleepMs(u64),
    /// End the server's input.
    CloseInput,
}

async fn run(name: &str) {
    let path = format!(
        "{}/tests/transcripts/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let transcript: Transcript =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let defaults = ServerOptions::default();
    let options = ServerOptions {
        framing: transcript.server.framing.unwrap_or(defaults.framing),
        max_frame_bytes: transcript
            .server
            .max_frame_bytes
            .unwrap_or(defaults.max_frame_bytes),
        ..defaults
    };
    let mut client = TestClient::start(
        Lists::default(),
        test_methods(),
        options,
        transcript.framing,
    );
    let mut exchange = Vec::new();
    for step in transcript.steps {
        match step {
            Step::Send(message) => {
                client.send(&message).await;
                exchange.push(json!({ "client": message }));
            }
            Step::SendRaw(text) => {
                client.send_raw(text.as_bytes()).await;
                exchange.push(json!({ "clientRaw": text }));
            }
            Step::SendHex(hex) => {
                client.send_raw(&decode_hex(&hex)).await;
                exchange.push(json!({ "clientHex": hex }));
            }
            Step::Expect(count) => {
                for _ in 0..count {
                    exchange.push(json!({ "server": client.recv().await }));
                }
            }
            Step::ExpectUnordered(count) => {
                let mut messages = Vec::new();
                for _ in 0..count {
                    messages.push(client.recv().await);
                }
                messages.sort_by_key(Value::to_string);
                for message in messages {
                    exchange.push(json!({ "server": message }));
                }
            }
            Step::SleepMs(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                exchange.push(json!({ "sleepMs": ms }));
            }
            Step::CloseInput => {
                client.close_input().await;
                exchange.push(json!("closeInput"));
            }
        }
    }
    let outcome = client.finish().await;
    exchange.push(json!({
        "exit": { "code": outcome.exit_code(), "reason": outcome.reason.to_string() }
    }));
    insta::with_settings!({
        description => transcript.description,
        omit_expression => true,
    }, {
        insta::assert_json_snapshot!(name, exchange, {
            ".**.serverInfo.version" => "[version]",
        });
    });
}

fn decode_hex(hex: &str) -> Vec<u8> {
    let digits: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect()
}

macro_rules! transcripts {
    ($($name:ident),* $(,)?) => {
        $(
            #[tokio::test(start_paused = true)]
            async fn $name() {
                run(stringify!($name)).await;
            }
        )*

        #[test]
        fn every_transcript_file_has_a_test() {
            let listed = [$(stringify!($name)),*];
            let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/transcripts");
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
                assert!(listed.contains(&stem.as_str()), "no test runs transcripts/{stem}.json");
            }
        }
    };
}

transcripts!(
    lifecycle,
    before_initialize,
    after_shutdown,
    shutdown_waits_for_running_requests,
    invalid_messages,
    lsp_framing,
    ndjson_framing,
    hooks,
    hook_answer_never_waits_behind_requests,
    cancellation,
    ordering,
    notifications,
    end_of_input,
    lsp_truncated_frame,
);
