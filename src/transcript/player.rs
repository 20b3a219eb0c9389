//! The transcript format (`protocol/transcripts.md`) and its player.
//!
//! A transcript is a client's side of a conversation with the server, with what the server
//! must answer where the author wrote it down. [`play`] sends the client's messages through a
//! [`Peer`], checks the inline expectations as it goes and returns the whole exchange, which
//! the project's tests keep as an insta snapshot. Nothing here knows how the server is started
//! or what it serves, so `pi-session test FILE` can play the same files through its own peer.

#![allow(dead_code)] // Not every step kind is used by every caller.

pub mod expect;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pi_session::internal::rpc::{Framing, WireFraming};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Transcript {
    /// What the exchange shows.
    pub description: String,
    /// How the client frames what it sends (the server detects it unless `server.framing`).
    #[serde(default = "ndjson")]
    pub framing: WireFraming,
    #[serde(default)]
    pub server: ServerSetup,
    /// Show the result of `initialize` in the exchange. It is long (every method) and the same
    /// in every transcript, so only the lifecycle transcripts show it; the others record
    /// `"[initialize result]"`.
    #[serde(default)]
    pub show_initialize_result: bool,
    pub steps: Vec<Step>,
}

fn ndjson() -> WireFraming {
    WireFraming::Ndjson
}

impl Transcript {
    /// Reads a transcript file; the error names the file and what is wrong.
    pub fn read(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerSetup {
    pub framing: Option<Framing>,
    pub max_frame_bytes: Option<usize>,
    #[serde(default)]
    pub state: StateKind,
}

/// Which server the transcript talks to.
#[derive(Default, Deserialize, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub enum StateKind {
    /// The project's test-only methods (`tests/rpc_transcripts.rs`).
    #[default]
    Test,
    /// The real sidecar: every `session/*` method.
    Sidecar,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Step {
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
    /// Read server messages, in order: a count, or the messages expected (patterns, see
    /// [`expect`]), each checked as it is read.
    Expect(Expected),
    /// Read this many server messages, recording the values of these member names (anywhere
    /// in their `result`) as `[not reproducible]`: for what even the deterministic mode leaves
    /// random.
    ExpectRedacting { count: usize, members: Vec<String> },
    /// Read this many server messages whose relative order is not guaranteed; they are
    /// recorded sorted.
    ExpectUnordered(usize),
    /// Let the clock run.
    SleepMs(u64),
    /// End the server's input.
    CloseInput,
    /// Writes a file (`path` relative to the temporary directory) with this text.
    WriteFile { path: String, text: String },
    /// Copies a file from the fixtures (`from`) into the temporary directory (`to`).
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

/// What an `expect` step reads.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum Expected {
    /// This many messages, recorded but not checked here.
    Count(usize),
    /// These messages, in this order.
    Messages(Vec<Value>),
}

/// The server, as the player sees it.
#[allow(async_fn_in_trait)] // Used with concrete types only; no `Send` bound is needed.
pub trait Peer {
    async fn send(&mut self, message: &Value);
    async fn send_raw(&mut self, bytes: &[u8]);
    /// The next server message (failing when none comes).
    async fn recv(&mut self) -> Value;
    async fn close_input(&mut self);
    async fn sleep(&mut self, duration: Duration);
}

/// Where a transcript's files live while it plays.
pub struct Places {
    /// Written `${tmp}` in transcripts and exchanges.
    pub tmp: Tmp,
    /// Where `copyFixture` copies from.
    pub fixtures: PathBuf,
}

/// Plays `transcript` through `peer`: returns the exchange so far (client and server messages
/// and the other steps, paths shown as `${tmp}`) and, when an expectation failed or a step
/// could not be played, a report naming the step, the message and the member.
pub async fn play(
    transcript: &Transcript,
    peer: &mut impl Peer,
    places: &Places,
) -> (Vec<Value>, Result<(), String>) {
    let mut player = Player {
        places,
        results: BTreeMap::new(),
        methods: BTreeMap::new(),
        locks: Vec::new(),
        exchange: Vec::new(),
        show_initialize_result: transcript.show_initialize_result,
        read: 0,
    };
    for (index, step) in transcript.steps.iter().enumerate() {
        if let Err(failure) = player.step(step, peer).await {
            let failure = format!("step {} ({}): {failure}", index + 1, step_kind(step));
            return (player.exchange, Err(failure));
        }
    }
    (player.exchange, Ok(()))
}

struct Player<'a> {
    places: &'a Places,
    /// The result of every response, by request id, for `${@ID.path}`.
    results: BTreeMap<String, Value>,
    /// The method of every request sent, by id, to name responses in reports.
    methods: BTreeMap<String, String>,
    locks: Vec<File>,
    exchange: Vec<Value>,
    show_initialize_result: bool,
    /// How many server messages were read.
    read: usize,
}

impl Player<'_> {
    async fn step(&mut self, step: &Step, peer: &mut impl Peer) -> Result<(), String> {
        let tmp = &self.places.tmp;
        match step {
            Step::Send(message) => self.send(message, peer).await?,
            Step::Request((id, method, params)) => {
                let message =
                    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
                self.send(&message, peer).await?;
            }
            Step::Notify((method, params)) => {
                let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
                self.send(&message, peer).await?;
            }
            Step::Answer((id, result)) => {
                let message = json!({"jsonrpc": "2.0", "id": id, "result": result});
                self.send(&message, peer).await?;
            }
            Step::SendRaw(text) => {
                peer.send_raw(text.as_bytes()).await;
                self.exchange.push(json!({ "clientRaw": text }));
            }
            Step::SendHex(hex) => {
                peer.send_raw(&decode_hex(hex)?).await;
                self.exchange.push(json!({ "clientHex": hex }));
            }
            Step::Expect(Expected::Count(count)) => {
                for _ in 0..*count {
                    let message = self.recv(peer).await;
                    self.record(message);
                }
            }
            Step::Expect(Expected::Messages(patterns)) => {
                for (index, pattern) in patterns.iter().enumerate() {
                    let message = self.recv(peer).await;
                    let pattern = self.fill(pattern)?;
                    let found = expect::differences(&pattern, &message);
                    if !found.is_empty() {
                        let which = format!(
                            "message {} of {} expected here ({})",
                            index + 1,
                            patterns.len(),
                            self.describe(&message)
                        );
                        let report = expect::report(&which, &found, &message);
                        self.record(message);
                        return Err(report);
                    }
                    self.record(message);
                }
            }
            Step::ExpectRedacting { count, members } => {
                for _ in 0..*count {
                    let mut message = self.recv(peer).await;
                    if let Some(result) = message.get_mut("result") {
                        *result = redact_members(result.take(), members);
                    }
                    self.exchange.push(json!({ "server": message }));
                }
            }
            Step::ExpectUnordered(count) => {
                let mut messages = Vec::new();
                for _ in 0..*count {
                    messages.push(self.recv(peer).await);
                }
                messages.sort_by_key(Value::to_string);
                for message in messages {
                    self.exchange.push(json!({ "server": message }));
                }
            }
            Step::SleepMs(ms) => {
                peer.sleep(Duration::from_millis(*ms)).await;
                self.exchange.push(json!({ "sleepMs": ms }));
            }
            Step::CloseInput => {
                peer.close_input().await;
                self.exchange.push(json!("closeInput"));
            }
            Step::WriteFile { path, text } => {
                let target = tmp.path(path);
                std::fs::create_dir_all(target.parent().unwrap())
                    .and_then(|()| std::fs::write(&target, text))
                    .map_err(|e| format!("{path}: {e}"))?;
                self.exchange
                    .push(json!({ "writeFile": { "path": path, "text": text } }));
            }
            Step::CopyFixture { from, to } => {
                let source = self.places.fixtures.join(from);
                let target = tmp.path(to);
                std::fs::create_dir_all(target.parent().unwrap())
                    .and_then(|()| std::fs::copy(&source, &target))
                    .map_err(|e| format!("{}: {e}", source.display()))?;
                self.exchange
                    .push(json!({ "copyFixture": { "from": from, "to": to } }));
            }
            Step::LockFile(path) => {
                let file = File::options()
                    .read(true)
                    .append(true)
                    .open(tmp.path(path))
                    .map_err(|e| format!("{path}: {e}"))?;
                file.try_lock()
                    .map_err(|e| format!("{path}: cannot lock: {e}"))?;
                self.locks.push(file);
                self.exchange.push(json!({ "lockFile": path }));
            }
            Step::Files(dir) => {
                let files: BTreeMap<String, Value> = tmp
                    .files(dir)
                    .into_iter()
                    .map(|(name, text)| {
                        let lines = text
                            .lines()
                            .map(|line| serde_json::from_str(line).unwrap_or_else(|_| json!(line)))
                            .collect();
                        (name, tmp.hide(Value::Array(lines)))
                    })
                    .collect();
                self.exchange.push(json!({ "files": { dir: files } }));
            }
            Step::ListFiles(dir) => {
                let files: BTreeMap<String, usize> = tmp
                    .files(dir)
                    .into_iter()
                    .map(|(name, text)| (name, text.lines().count()))
                    .collect();
                self.exchange.push(json!({ "listFiles": { dir: files } }));
            }
            Step::SetMtime { path, seconds } => {
                let time = std::time::UNIX_EPOCH + Duration::from_secs(1_767_225_600 + seconds);
                File::options()
                    .write(true)
                    .open(tmp.path(path))
                    .and_then(|file| file.set_modified(time))
                    .map_err(|e| format!("{path}: {e}"))?;
                self.exchange
                    .push(json!({ "setMtime": { "path": path, "seconds": seconds } }));
            }
        }
        Ok(())
    }

    /// Sends a message with its placeholders filled and records it as the transcript wrote it.
    async fn send(&mut self, message: &Value, peer: &mut impl Peer) -> Result<(), String> {
        let message = self.places.tmp.fill(&self.fill(message)?);
        if let (Some(id), Some(method)) = (message.get("id"), message.get("method")) {
            let method = method.as_str().unwrap_or_default().to_owned();
            self.methods.insert(id_key(id), method);
        }
        peer.send(&message).await;
        self.exchange
            .push(json!({ "client": self.places.tmp.hide(message) }));
        Ok(())
    }

    /// The next server message with the directory shown as `${tmp}`; its result remembered.
    async fn recv(&mut self, peer: &mut impl Peer) -> Value {
        let message = self.places.tmp.hide(peer.recv().await);
        self.read += 1;
        if let (Some(id), Some(result)) = (message.get("id"), message.get("result")) {
            self.results.insert(id_key(id), result.clone());
        }
        message
    }

    fn record(&mut self, mut message: Value) {
        let is_initialize = message
            .get("id")
            .and_then(|id| self.methods.get(&id_key(id)))
            .is_some_and(|method| method == "initialize");
        if is_initialize
            && !self.show_initialize_result
            && let Some(result) = message.get_mut("result")
        {
            *result = json!("[initialize result]");
        }
        self.exchange.push(json!({ "server": message }));
    }

    /// `${@ID.path}` -> the earlier result it names, in every string of `value`.
    fn fill(&self, value: &Value) -> Result<Value, String> {
        try_map_strings(value.clone(), &|s| fill_results(s, &self.results))
    }

    /// "server message 7, the response to request 3 (session/append)".
    fn describe(&self, message: &Value) -> String {
        let number = format!("server message {}", self.read);
        match (message.get("id"), message.get("method")) {
            (Some(id), None) => {
                let method = self
                    .methods
                    .get(&id_key(id))
                    .map_or(String::new(), |m| format!(" ({m})"));
                format!("{number}, the response to request {id}{method}")
            }
            (Some(id), Some(method)) => format!("{number}, the server's request {id} ({method})"),
            (None, Some(method)) => format!("{number}, a {method} notification"),
            (None, None) => number,
        }
    }
}

fn step_kind(step: &Step) -> &'static str {
    match step {
        Step::Send(_) => "send",
        Step::Request(_) => "request",
        Step::Notify(_) => "notify",
        Step::Answer(_) => "answer",
        Step::SendRaw(_) => "sendRaw",
        Step::SendHex(_) => "sendHex",
        Step::Expect(_) => "expect",
        Step::ExpectRedacting { .. } => "expectRedacting",
        Step::ExpectUnordered(_) => "expectUnordered",
        Step::SleepMs(_) => "sleepMs",
        Step::CloseInput => "closeInput",
        Step::WriteFile { .. } => "writeFile",
        Step::CopyFixture { .. } => "copyFixture",
        Step::LockFile(_) => "lockFile",
        Step::Files(_) => "files",
        Step::ListFiles(_) => "listFiles",
        Step::SetMtime { .. } => "setMtime",
    }
}

/// A request id as a key: a string as it is, a number as JSON.
fn id_key(id: &Value) -> String {
    id.as_str().map_or_else(|| id.to_string(), str::to_owned)
}

/// The transcript's temporary directory, written `${tmp}` in scripts and exchanges.
pub struct Tmp {
    dir: tempfile::TempDir,
    text: String,
}

impl Tmp {
    const PLACEHOLDER: &'static str = "${tmp}";

    pub fn new() -> Self {
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

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// `${tmp}` -> the directory, in every string of a message.
    fn fill(&self, message: &Value) -> Value {
        map_strings(message.clone(), &|s| {
            s.replace(Self::PLACEHOLDER, &self.text)
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

/// `${@ID.path}`: the member at `path` (dot-separated keys and array indices) of the result of
/// request `ID`.
fn fill_results(text: &str, results: &BTreeMap<String, Value>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${@") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .ok_or_else(|| format!("unterminated placeholder in {text:?}"))?
            + start;
        let reference = &rest[start + 3..end];
        let mut parts = reference.split('.');
        let id = parts.next().unwrap_or_default();
        let mut value = results
            .get(id)
            .ok_or_else(|| format!("${{@{reference}}}: no result for request {id} yet"))?;
        for part in parts {
            value = match part.parse::<usize>() {
                Ok(index) => value.get(index),
                Err(_) => value.get(part),
            }
            .ok_or_else(|| format!("${{@{reference}}}: no member {part:?} in {value}"))?;
        }
        match value {
            Value::String(s) => out.push_str(s),
            other => return Err(format!("${{@{reference}}} is not a string: {other}")),
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
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
    try_map_strings(value, &|s| Ok(f(s))).unwrap()
}

fn try_map_strings(
    value: Value,
    f: &dyn Fn(&str) -> Result<String, String>,
) -> Result<Value, String> {
    Ok(match value {
        Value::String(s) => Value::String(f(&s)?),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| try_map_strings(v, f))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| Ok((f(&k)?, try_map_strings(v, f)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other,
    })
}

fn decode_hex(hex: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| format!("not hex: {:?}", String::from_utf8_lossy(pair)))
        })
        .collect()
}
