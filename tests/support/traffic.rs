//! Real traffic, recorded and checked against `protocol/schema.json`.
//!
//! [`proxy`] stands in for the binary: a client spawns it (through `PI_SESSION_BIN`), it runs
//! the real `pi-session` with the same arguments, passes bytes through unchanged both ways and
//! appends every chunk to a recording (one file per proxy process). A client's chunk is
//! recorded before it is forwarded, so an answer is always recorded after its request.
//! [`Recording::messages`] cuts the chunks into messages (ndjson or LSP framing, as the server
//! decides) and [`problems`] checks each one against the schema of its method, hook or
//! notification.

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::schema_check::ProtocolSchema;

/// The variable that turns a test binary into the proxy: the folder recordings go to.
pub const RECORD_DIR: &str = "PI_SESSION_TRAFFIC_DIR";

const ARGS: u8 = b'A';
const CLIENT: u8 = b'C';
const SERVER: u8 = b'S';

/// The server the proxy runs, for its signal handler (0 until spawned).
static SERVER_PID: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward_signal(signal: libc::c_int) {
    let pid = SERVER_PID.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(pid, signal) };
    }
}

fn record(log: &Mutex<File>, tag: u8, bytes: &[u8]) {
    let mut record = Vec::with_capacity(bytes.len() + 5);
    record.push(tag);
    record.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    record.extend_from_slice(bytes);
    // One write per record under the lock: the two directions never tear each other.
    log.lock()
        .unwrap()
        .write_all(&record)
        .expect("write the recording");
}

/// Runs `server` with this process's arguments, recording into `dir`, and exits as it exits
/// (with its code, or by its signal). Signals that stop a server (TERM, INT, HUP) are passed on,
/// so a client that stops "the server" stops the real one.
pub fn proxy(dir: &Path, server: &Path) -> ! {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let path = dir.join(format!("{}.traffic", std::process::id()));
    let log = Arc::new(Mutex::new(
        File::create(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    ));
    let joined: Vec<u8> = args
        .iter()
        .map(|a| a.as_bytes())
        .collect::<Vec<_>>()
        .join(&0u8);
    record(&log, ARGS, &joined);
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: the handler only reads an atomic and calls kill.
        unsafe { libc::signal(signal, forward_signal as *const () as libc::sighandler_t) };
    }
    let mut child = Command::new(server)
        .args(&args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", server.display()));
    SERVER_PID.store(child.id() as i32, Ordering::SeqCst);
    let mut to_server = child.stdin.take().unwrap();
    let mut from_server = child.stdout.take().unwrap();
    let client_log = Arc::clone(&log);
    // Not joined: it may sit in a read of our stdin after the server is gone.
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buffer = vec![0u8; 1 << 16];
        loop {
            let n = match stdin.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            record(&client_log, CLIENT, &buffer[..n]);
            if to_server.write_all(&buffer[..n]).is_err() {
                break;
            }
        }
        // Dropping the pipe is the server's end of input.
    });
    let server_log = Arc::clone(&log);
    let output = std::thread::spawn(move || {
        let mut stdout = std::io::stdout().lock();
        let mut client_gone = false;
        let mut buffer = vec![0u8; 1 << 16];
        loop {
            let n = match from_server.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            record(&server_log, SERVER, &buffer[..n]);
            // A client that closed its end: keep draining, so the server never blocks on us.
            if !client_gone {
                client_gone = stdout
                    .write_all(&buffer[..n])
                    .and_then(|()| stdout.flush())
                    .is_err();
            }
        }
    });
    let status = child.wait().expect("wait for the server");
    let _ = output.join();
    let _ = log.lock().unwrap().flush();
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        std::process::exit(code);
    }
    let signal = status.signal().unwrap_or(libc::SIGKILL);
    // SAFETY: back to the default action, then die by the server's signal.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
    std::process::exit(128 + signal)
}

/// Who sent a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Client = 0,
    Server = 1,
}

/// One message of a recording, in the order the proxy saw them.
#[derive(Clone, Debug)]
pub struct Message {
    pub side: Side,
    /// `None`: a frame that is not JSON (a client testing the server's errors, or a bug when
    /// the server sent it); the text is kept.
    pub value: Option<Value>,
    pub text: String,
}

/// One proxy run: its arguments and the chunks both ways.
pub struct Recording {
    pub path: PathBuf,
    pub args: Vec<String>,
    chunks: Vec<(Side, Vec<u8>)>,
}

impl Recording {
    /// Reads a recording the proxy wrote.
    pub fn read(path: &Path) -> Recording {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        Recording::from_bytes(path.to_owned(), &bytes)
    }

    fn from_bytes(path: PathBuf, mut bytes: &[u8]) -> Recording {
        let mut recording = Recording {
            path,
            args: Vec::new(),
            chunks: Vec::new(),
        };
        while bytes.len() >= 5 {
            let len = u32::from_le_bytes(bytes[1..5].try_into().unwrap()) as usize;
            let body = &bytes[5..(5 + len).min(bytes.len())];
            match bytes[0] {
                ARGS => {
                    recording.args = body
                        .split(|b| *b == 0)
                        .filter(|a| !a.is_empty())
                        .map(|a| String::from_utf8_lossy(a).into_owned())
                        .collect()
                }
                CLIENT => recording.chunks.push((Side::Client, body.to_vec())),
                SERVER => recording.chunks.push((Side::Server, body.to_vec())),
                other => panic!("{}: unknown record {other}", recording.path.display()),
            }
            bytes = &bytes[(5 + len).min(bytes.len())..];
        }
        recording
    }

    /// A recording made of whole messages (for tests of the checker itself).
    pub fn of_messages(messages: &[(Side, Value)]) -> Recording {
        Recording {
            path: PathBuf::from("(planted)"),
            args: vec!["--stdio".into()],
            chunks: messages
                .iter()
                .map(|(side, value)| (*side, format!("{value}\n").into_bytes()))
                .collect(),
        }
    }

    /// Whether the proxy ran a JSON-RPC server (`--stdio`), not a command of the command line.
    pub fn is_server(&self) -> bool {
        self.args.iter().any(|a| a == "--stdio")
    }

    /// The messages both ways, in order. The framing is the server's rule (`auto`): the
    /// client's first byte that is not ASCII whitespace, `{` or `[` for ndjson, else LSP.
    pub fn messages(&self) -> Vec<Message> {
        let lsp = self
            .chunks
            .iter()
            .filter(|(side, _)| *side == Side::Client)
            .flat_map(|(_, bytes)| bytes.iter())
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|b| *b != b'{' && *b != b'[');
        let mut buffers = [Vec::new(), Vec::new()];
        let mut messages = Vec::new();
        for (side, bytes) in &self.chunks {
            let buffer = &mut buffers[*side as usize];
            buffer.extend_from_slice(bytes);
            cut(*side, buffer, lsp, false, &mut messages);
        }
        for side in [Side::Client, Side::Server] {
            cut(side, &mut buffers[side as usize], lsp, true, &mut messages);
        }
        messages
    }
}

/// Moves the whole messages at the start of `buffer` into `messages` (at the end of input, the
/// last ndjson line without its newline too).
fn cut(side: Side, buffer: &mut Vec<u8>, lsp: bool, end: bool, messages: &mut Vec<Message>) {
    let mut push = |body: &[u8]| {
        let text = String::from_utf8_lossy(body).into_owned();
        if text.trim().is_empty() {
            return;
        }
        messages.push(Message {
            side,
            value: serde_json::from_slice(body).ok(),
            text,
        });
    };
    loop {
        if !lsp {
            let Some(newline) = buffer.iter().position(|b| *b == b'\n') else {
                if end {
                    push(&std::mem::take(buffer));
                }
                return;
            };
            let line: Vec<u8> = buffer.drain(..=newline).collect();
            push(&line[..line.len() - 1]);
            continue;
        }
        let Some(header_end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") else {
            if end && !buffer.iter().all(u8::is_ascii_whitespace) {
                push(&std::mem::take(buffer));
            }
            return;
        };
        let header = String::from_utf8_lossy(&buffer[..header_end]).into_owned();
        let length = header.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        });
        let Some(length) = length else {
            // Not a frame the checker can follow (a client testing malformed headers): the
            // rest of this side is one unparsable message.
            push(&std::mem::take(buffer));
            return;
        };
        let start = header_end + 4;
        if buffer.len() < start + length {
            if end {
                push(&std::mem::take(buffer));
            }
            return;
        }
        let body: Vec<u8> = buffer[start..start + length].to_vec();
        buffer.drain(..start + length);
        push(&body);
    }
}

/// A client request waiting for its answer.
struct Pending {
    method: String,
    /// Why the schema refuses the request (an unknown method, params that do not fit), if it
    /// does.
    refused: Option<String>,
}

fn id_key(id: &Value) -> String {
    id.to_string()
}

fn shown(text: &str) -> String {
    let text = text.trim();
    let mut shown: String = text.chars().take(400).collect();
    if shown.len() < text.len() {
        shown.push_str("...");
    }
    shown
}

/// Every problem with `recording`'s messages, each naming the recording, the message (its
/// index and text), its method and the schema path that failed:
/// - a server message that is not a JSON-RPC 2.0 object;
/// - an answer's result against its request's method `result`, an error against the error
///   object (`code`, `message`, and `data.kind` for application errors);
/// - a hook's and a notification's params against theirs; a hook, notification or answered
///   method the schema does not know;
/// - the client's requests, hook answers and notifications against theirs: a request the schema
///   refuses must be refused by the server too (clients test the server's errors on purpose),
///   and one the server refuses as invalid params (-32602) must be one the schema refuses.
pub fn problems(recording: &Recording) -> Vec<String> {
    let schema = ProtocolSchema::committed();
    let mut pending: HashMap<String, VecDeque<Pending>> = HashMap::new();
    let mut hooks: HashMap<String, String> = HashMap::new();
    let mut problems = Vec::new();
    for (index, message) in recording.messages().iter().enumerate() {
        let side = match message.side {
            Side::Client => "client",
            Side::Server => "server",
        };
        let mut report = |what: String| {
            problems.push(format!(
                "{} message {index} from the {side} ({what}): {}",
                recording.path.display(),
                shown(&message.text)
            ))
        };
        let Some(object) = message.value.as_ref().and_then(Value::as_object) else {
            // A client may send garbage on purpose; the server never may.
            if message.side == Side::Server {
                report("not a JSON object".into());
            }
            continue;
        };
        let method = object.get("method").and_then(Value::as_str);
        let id = object.get("id");
        let params = object.get("params");
        let failed = |errors: Vec<String>| errors.join("; ");
        // Omitted, `null` and `[]` params all mean "none" to the server (protocol.md,
        // Messages): they fit a method whose params are `null` or an object without required
        // members. Any other value is checked as sent.
        let check = |section: &str, name: &str| {
            let none = match params {
                None | Some(Value::Null) => true,
                Some(Value::Array(items)) => items.is_empty(),
                Some(_) => false,
            };
            if !none {
                return schema.check(section, name, "params", params.unwrap());
            }
            let as_null = schema.check(section, name, "params", &Value::Null)?;
            if as_null.is_empty() {
                return Some(as_null);
            }
            schema.check(section, name, "params", &json!({}))
        };
        match (message.side, method, id) {
            (Side::Client, Some(method), Some(id)) => {
                let refused = match check("methods", method) {
                    None => Some(format!("no method '{method}' in the schema")),
                    Some(errors) if !errors.is_empty() => Some(failed(errors)),
                    Some(_) => None,
                };
                pending.entry(id_key(id)).or_default().push_back(Pending {
                    method: method.to_owned(),
                    refused,
                });
            }
            (Side::Client, Some(method), None) => match check("clientNotifications", method) {
                None => report(format!("no client notification '{method}' in the schema")),
                Some(errors) if !errors.is_empty() => {
                    report(format!("client notification {method}: {}", failed(errors)))
                }
                Some(_) => {}
            },
            (Side::Client, None, Some(id)) => {
                let Some(hook) = hooks.remove(&id_key(id)) else {
                    report("an answer to no hook the server sent".into());
                    continue;
                };
                if let Some(result) = object.get("result") {
                    if let Some(errors) = schema.check("hooks", &hook, "result", result)
                        && !errors.is_empty()
                    {
                        report(format!("answer to hook {hook}: {}", failed(errors)));
                    }
                } else if let Some(problem) = error_problem(object) {
                    report(format!("error answer to hook {hook}: {problem}"));
                }
            }
            (Side::Client, None, None) => {}
            (Side::Server, _, _) if object.get("jsonrpc") != Some(&json!("2.0")) => {
                report("no \"jsonrpc\": \"2.0\"".into());
            }
            (Side::Server, Some(method), Some(id)) => {
                match check("hooks", method) {
                    None => report(format!("no hook '{method}' in the schema")),
                    Some(errors) if !errors.is_empty() => {
                        report(format!("hook {method}: {}", failed(errors)))
                    }
                    Some(_) => {}
                }
                hooks.insert(id_key(id), method.to_owned());
            }
            (Side::Server, Some(method), None) => match check("notifications", method) {
                None => report(format!("no notification '{method}' in the schema")),
                Some(errors) if !errors.is_empty() => {
                    report(format!("notification {method}: {}", failed(errors)))
                }
                Some(_) => {}
            },
            (Side::Server, None, id) => {
                let error = object.get("error");
                let result = object.get("result");
                if error.is_some() == result.is_some() {
                    report("not exactly one of result and error".into());
                    continue;
                }
                if let Some(problem) = error.and_then(|_| error_problem(object)) {
                    report(problem);
                }
                // `id: null` answers a frame without a usable id (garbage, a batch).
                let Some(id) = id.filter(|id| !id.is_null()) else {
                    if result.is_some() {
                        report("a result with no id".into());
                    }
                    continue;
                };
                let request = pending.get_mut(&id_key(id)).and_then(VecDeque::pop_front);
                let Some(request) = request else {
                    report(format!(
                        "an answer to id {id}, which no waiting request has"
                    ));
                    continue;
                };
                let method = &request.method;
                match (result, &request.refused) {
                    (Some(_), Some(refused)) => report(format!(
                        "{method} was answered with a result, yet the schema refuses its \
                         request: {refused}"
                    )),
                    (Some(result), None) => {
                        if let Some(errors) = schema.check("methods", method, "result", result)
                            && !errors.is_empty()
                        {
                            report(format!("result of {method}: {}", failed(errors)));
                        }
                    }
                    (None, None) if error.unwrap()["code"] == json!(-32602) => report(format!(
                        "{method}: the server refused as invalid params a request the schema \
                         accepts"
                    )),
                    (None, _) => {}
                }
            }
        }
    }
    problems
}

/// What is wrong with the error object of `message`, if anything.
fn error_problem(message: &serde_json::Map<String, Value>) -> Option<String> {
    let error = &message["error"];
    let Some(code) = error.get("code").and_then(Value::as_i64) else {
        return Some("an error without an integer code".into());
    };
    if !error.get("message").is_some_and(Value::is_string) {
        return Some("an error without a string message".into());
    }
    if let Some(data) = error.get("data")
        && !data.is_object()
    {
        return Some("an error whose data is not an object".into());
    }
    // protocol.md's Errors: JSON-RPC's codes, -32002 before `initialize` and LSP's -32800 for
    // a cancelled request; every other code is an application error carrying `data.kind`.
    const PROTOCOL_CODES: [i64; 7] = [-32700, -32600, -32601, -32602, -32603, -32002, -32800];
    if PROTOCOL_CODES.contains(&code) {
        return None;
    }
    if (-32768..=-32000).contains(&code) {
        return Some(format!(
            "error code {code}, which protocol.md does not name"
        ));
    }
    if !error["data"]["kind"].is_string() {
        return Some(format!("application error {code} without data.kind"));
    }
    None
}

/// Every recording in `dir`, oldest first by name (the proxy's pid).
pub fn recordings(dir: &Path) -> Vec<Recording> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "traffic"))
        .collect();
    paths.sort();
    paths.iter().map(|p| Recording::read(p)).collect()
}

/// What a set of recordings held: messages per kind and name, for the test's report and its
/// floor on what was exercised.
#[derive(Default, Debug)]
pub struct Seen {
    pub servers: usize,
    pub messages: usize,
    /// `result session/open`, `error session/open`, `hook session_before_tree`,
    /// `notification session_tree`, `answer session_before_tree`, ...
    pub names: std::collections::BTreeMap<String, usize>,
}

impl Seen {
    pub fn of(recordings: &[Recording]) -> Seen {
        let mut seen = Seen::default();
        for recording in recordings.iter().filter(|r| r.is_server()) {
            seen.servers += 1;
            let mut requests: HashMap<String, String> = HashMap::new();
            for message in recording.messages() {
                seen.messages += 1;
                let Some(value) = message.value else { continue };
                let method = value.get("method").and_then(Value::as_str);
                let id = value.get("id").map(id_key);
                let name = match (message.side, method, id) {
                    (Side::Client, Some(method), Some(id)) => {
                        requests.insert(id, method.to_owned());
                        continue;
                    }
                    (Side::Server, Some(method), Some(_)) => format!("hook {method}"),
                    (Side::Server, Some(method), None) => format!("notification {method}"),
                    (Side::Server, None, Some(id)) => {
                        let method = requests.get(&id).cloned().unwrap_or_default();
                        if value.get("error").is_some() {
                            format!("error {method}")
                        } else {
                            format!("result {method}")
                        }
                    }
                    _ => continue,
                };
                *seen.names.entry(name).or_default() += 1;
            }
        }
        seen
    }

    /// Whether a message of `name` (as in [`Seen::names`]) was seen.
    pub fn has(&self, name: &str) -> bool {
        self.names.contains_key(name)
    }
}
