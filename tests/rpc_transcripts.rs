//! Scripted exchanges with the server, checked as insta snapshots.
//!
//! Each file in `tests/transcripts/` holds a client's side of a conversation: messages, raw
//! bytes (malformed frames), pauses, and how many server messages to read at each point. The
//! runner plays it against an in-memory server on a paused clock (timeouts are instant and
//! exact) and snapshots the whole exchange. A server message the script does not read fails
//! the test.
//!
//! A transcript runs against one of two servers (`server.state`): `"test"` (the default) offers
//! test-only methods, registered here through the same seam the session methods use; they are
//! not part of the production table. `"sidecar"` is the real sidecar (`pi-session --stdio`'s
//! state and method table); its transcripts are the `session_*` files.
//!
//! Each transcript gets a fresh temporary directory. `${tmp}` in anything the script sends or
//! names is that directory, and every occurrence of the directory in the server's messages is
//! recorded as `${tmp}`, so snapshots hold no machine paths. Session transcripts initialize
//! with `deterministic`, which makes ids and timestamps reproducible without redaction, and
//! name earlier results as `${@ID.path}`: the member at `path` (dot-separated keys and array
//! indices) of the result of the request with id `ID`, e.g. `${@3.entryId}`. The snapshot
//! records what was sent, with these filled in.

mod support;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use pi_session::rpc::sidecar;
use pi_session::rpc::{
    Framing, HookOutcome, Methods, RequestContext, RpcError, ServerOptions, ServerState,
    WireFraming,
};
use serde::Deserialize;
use serde_json::{Value, json};
use support::memory::TestClient;

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
    #[serde(default)]
    state: StateKind,
}

/// Which server the transcript talks to.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
enum StateKind {
    /// The test-only methods above.
    #[default]
    Test,
    /// The real sidecar: every `session/*` method.
    Sidecar,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
enum Step {
    /// One message, framed.
    Send(Value),
    /// `[id, method, params]`: a request, recorded in full.
    Request((Value, String, Value)),
    /// `[method, params]`: a notification, recorded in full.
    Notify((String, Value)),
    /// `[id, result]`: the client's answer to a hook, recorded in full.
    Answer((Value, Value)),
    /// Text sent as it is (for malformed frames).
    SendRaw(String),
    /// Bytes in hex sent as they are (for non-UTF-8 input).
    SendHex(String),
    /// Read this many server messages, in order.
    Expect(usize),
    /// Read this many server messages, recording the values of these member names (anywhere
    /// in their `result`) as `[not reproducible]`: for what even the deterministic mode leaves random.
    ExpectRedacting { count: usize, members: Vec<String> },
    /// Read this many server messages whose relative order is not guaranteed; they are
    /// recorded sorted.
    ExpectUnordered(usize),
    /// Let the (paused) clock run.
    SleepMs(u64),
    /// End the server's input.
    CloseInput,
    /// Writes a file (`path` relative to the temporary directory) with this text.
    WriteFile { path: String, text: String },
    /// Copies a file from the fixtures (`from`, relative to `tests/fixtures`) into the
    /// temporary directory (`to`).
    CopyFixture { from: String, to: String },
    /// Holds an exclusive lock on a file, as another process writing to it would, until the
    /// transcript ends.
    LockFile(String),
    /// Records every file under a directory (relative to the temporary directory, recursively)
    /// with its lines, each parsed as JSON where it is JSON.
    Files(String),
    /// Records the names and line counts of the files under a directory.
    ListFiles(String),
    /// Sets a file's modification time (`path` relative to the temporary directory) to
    /// `seconds` after 2026-01-01T00:00:00Z.
    SetMtime { path: String, seconds: u64 },
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
    let tmp = Tmp::new();
    let mut client = match transcript.server.state {
        StateKind::Test => TestClient::start(
            Lists::default(),
            test_methods(),
            options,
            transcript.framing,
        ),
        StateKind::Sidecar => TestClient::start(
            sidecar::Sidecar::default(),
            sidecar::methods(),
            options,
            transcript.framing,
        ),
    };
    let mut locks = Vec::new();
    let mut results = BTreeMap::new();
    let mut exchange = Vec::new();
    for step in transcript.steps {
        match step {
            Step::Send(message) => {
                let message = tmp.fill(&message, &results);
                client.send(&message).await;
                exchange.push(json!({ "client": tmp.hide(message) }));
            }
            Step::Request((id, method, params)) => {
                let message =
                    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
                let message = tmp.fill(&message, &results);
                client.send(&message).await;
                exchange.push(json!({ "client": tmp.hide(message) }));
            }
            Step::Notify((method, params)) => {
                let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
                let message = tmp.fill(&message, &results);
                client.send(&message).await;
                exchange.push(json!({ "client": tmp.hide(message) }));
            }
            Step::Answer((id, result)) => {
                let message = json!({"jsonrpc": "2.0", "id": id, "result": result});
                let message = tmp.fill(&message, &results);
                client.send(&message).await;
                exchange.push(json!({ "client": tmp.hide(message) }));
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
                    let message = client.recv().await;
                    remember(&mut results, &message);
                    exchange.push(json!({ "server": tmp.hide(message) }));
                }
            }
            Step::ExpectRedacting { count, members } => {
                for _ in 0..count {
                    let message = client.recv().await;
                    remember(&mut results, &message);
                    let mut message = tmp.hide(message);
                    if let Some(result) = message.get_mut("result") {
                        *result = redact_members(result.take(), &members);
                    }
                    exchange.push(json!({ "server": message }));
                }
            }
            Step::ExpectUnordered(count) => {
                let mut messages = Vec::new();
                for _ in 0..count {
                    let message = client.recv().await;
                    remember(&mut results, &message);
                    messages.push(tmp.hide(message));
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
            Step::WriteFile { path, text } => {
                let target = tmp.path(&path);
                std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                std::fs::write(&target, &text).unwrap();
                exchange.push(json!({ "writeFile": { "path": path, "text": text } }));
            }
            Step::CopyFixture { from, to } => {
                let source = fixtures_dir().join(&from);
                let target = tmp.path(&to);
                std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                std::fs::copy(&source, &target)
                    .unwrap_or_else(|e| panic!("{}: {e}", source.display()));
                exchange.push(json!({ "copyFixture": { "from": from, "to": to } }));
            }
            Step::LockFile(path) => {
                let file = File::options()
                    .read(true)
                    .append(true)
                    .open(tmp.path(&path))
                    .unwrap();
                file.try_lock().expect("lock taken by the test");
                locks.push(file);
                exchange.push(json!({ "lockFile": path }));
            }
            Step::Files(dir) => {
                let files: BTreeMap<String, Value> = tmp
                    .files(&dir)
                    .into_iter()
                    .map(|(name, text)| {
                        let lines = text
                            .lines()
                            .map(|line| serde_json::from_str(line).unwrap_or_else(|_| json!(line)))
                            .collect();
                        (name, tmp.hide(Value::Array(lines)))
                    })
                    .collect();
                exchange.push(json!({ "files": { dir: files } }));
            }
            Step::SetMtime { path, seconds } => {
                let time = std::time::UNIX_EPOCH + Duration::from_secs(1_767_225_600 + seconds);
                File::options()
                    .write(true)
                    .open(tmp.path(&path))
                    .and_then(|file| file.set_modified(time))
                    .unwrap_or_else(|e| panic!("{path}: {e}"));
                exchange.push(json!({ "setMtime": { "path": path, "seconds": seconds } }));
            }
            Step::ListFiles(dir) => {
                let files: BTreeMap<String, usize> = tmp
                    .files(&dir)
                    .into_iter()
                    .map(|(name, text)| (name, text.lines().count()))
                    .collect();
                exchange.push(json!({ "listFiles": { dir: files } }));
            }
        }
    }
    let outcome = client.finish().await;
    drop(locks);
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

/// Where the fixtures are (`tests/fixtures`).
fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The transcript's temporary directory, written `${tmp}` in scripts and snapshots.
struct Tmp {
    dir: tempfile::TempDir,
    text: String,
}

impl Tmp {
    const PLACEHOLDER: &'static str = "${tmp}";

    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        // The canonical path, as the server resolves paths.
        let text = dir
            .path()
            .canonicalize()
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        Tmp { dir, text }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// `${tmp}` -> the directory and `${@ID.path}` -> an earlier result, in every string of a
    /// message.
    fn fill(&self, message: &Value, results: &BTreeMap<String, Value>) -> Value {
        map_strings(message.clone(), &|s| {
            fill_results(&s.replace(Self::PLACEHOLDER, &self.text), results)
        })
    }

    /// The directory -> `${tmp}`, in every string of a message.
    fn hide(&self, message: Value) -> Value {
        map_strings(message, &|s| s.replace(&self.text, Self::PLACEHOLDER))
    }

    /// Every file under `dir`, by path relative to it, with its text.
    fn files(&self, dir: &str) -> Vec<(String, String)> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(root, &path, out);
                } else {
                    let name = path
                        .strip_prefix(root)
                        .unwrap()
                        .to_str()
                        .unwrap()
                        .to_owned();
                    let bytes = std::fs::read(&path).unwrap();
                    out.push((name, String::from_utf8_lossy(&bytes).into_owned()));
                }
            }
        }
        let root = self.path(dir);
        let mut out = Vec::new();
        walk(&root, &root, &mut out);
        out.sort();
        out
    }
}

/// Keeps the result of every response, by its id, for `${@ID.path}`.
fn remember(results: &mut BTreeMap<String, Value>, message: &Value) {
    if let (Some(id), Some(result)) = (message.get("id"), message.get("result")) {
        let id = id.as_str().map_or_else(|| id.to_string(), str::to_owned);
        results.insert(id, result.clone());
    }
}

fn fill_results(text: &str, results: &BTreeMap<String, Value>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${@") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .unwrap_or_else(|| panic!("unterminated placeholder in {text:?}"))
            + start;
        let reference = &rest[start + 3..end];
        let mut parts = reference.split('.');
        let id = parts.next().unwrap();
        let mut value = results
            .get(id)
            .unwrap_or_else(|| panic!("${{@{reference}}}: no result for request {id} yet"));
        for part in parts {
            value = match part.parse::<usize>() {
                Ok(index) => value.get(index),
                Err(_) => value.get(part),
            }
            .unwrap_or_else(|| panic!("${{@{reference}}}: no member {part:?} in {value}"));
        }
        match value {
            Value::String(s) => out.push_str(s),
            other => panic!("${{@{reference}}} is not a string: {other}"),
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

fn redact_members(value: Value, members: &[String]) -> Value {
    match value {
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| redact_members(v, members))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    if members.contains(&k) {
                        (k, json!("[not reproducible]"))
                    } else {
                        (k, redact_members(v, members))
                    }
                })
                .collect(),
        ),
        other => other,
    }
}

fn map_strings(value: Value, f: &dyn Fn(&str) -> String) -> Value {
    match value {
        Value::String(s) => Value::String(f(&s)),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| map_strings(v, f)).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (f(&k), map_strings(v, f)))
                .collect(),
        ),
        other => other,
    }
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
    session_create,
    session_open,
    session_append,
    session_reads_and_moves,
    session_navigate,
    session_navigate_hooks,
    session_fork,
    session_errors,
    session_directories,
);
