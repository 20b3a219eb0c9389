//! The server as an adversary sees it (issue 8): kill -9 in the middle of appends, mutated
//! frames, a client that stops reading, a client that pipelines far ahead, a durable backlog
//! beside independent work, a second signal, and the protocol edges. Every test is bounded and
//! seeded; the seed, the counts and the peak memory are printed. Longer runs:
//! `RELIABILITY_KILLS=1000 FUZZ_CASES=50000 cargo test --test suite -- reliability:: -- --nocapture`;
//! a failing run is repeated with `RELIABILITY_SEED=<seed>`.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The run's seed: `RELIABILITY_SEED`, else new each run. Printed so a failure can be repeated.
fn seed(test: &str) -> u64 {
    let seed = std::env::var("RELIABILITY_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    println!("{test}: seed {seed} (repeat with RELIABILITY_SEED={seed})");
    seed
}

/// A server over pipes, its output read by a thread into a channel of (arrival, message).
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    output: mpsc::Receiver<(Instant, Value)>,
}

impl Server {
    fn spawn() -> Server {
        Server::spawn_with_gate(None)
    }

    /// A server whose output is not read until `go` is sent on the returned sender.
    fn spawn_not_reading() -> (Server, mpsc::Sender<()>) {
        let (go, gate) = mpsc::channel();
        (Server::spawn_with_gate(Some(gate)), go)
    }

    fn spawn_with_gate(gate: Option<mpsc::Receiver<()>>) -> Server {
        let mut child = Command::new(BIN)
            .args(["--stdio", "--framing", "ndjson"])
            .env(
                "PI_SESSION_LOG",
                std::env::var("RELIABILITY_LOG").unwrap_or("error".into()),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match std::env::var_os("RELIABILITY_LOG") {
                Some(_) => Stdio::inherit(),
                None => Stdio::null(),
            })
            .spawn()
            .expect("spawn pi-session");
        let stdout = child.stdout.take().unwrap();
        let (sender, output) = mpsc::channel();
        thread::spawn(move || {
            if let Some(gate) = gate {
                let _ = gate.recv();
            }
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                if sender.send((Instant::now(), value)).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Server {
            child,
            stdin,
            output,
        }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to the server");
        stdin.flush().expect("flush");
    }

    fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes)?;
        stdin.flush()
    }

    /// Waits for the answer to `id`, skipping anything else.
    fn answer(&self, id: &Value) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (_, message) = self
                .output
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to {id}"));
            if message.get("id") == Some(id) && message.get("method").is_none() {
                return message;
            }
        }
    }

    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&request(id, method, params));
        let answer = self.answer(&json!(id));
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    fn initialize(&mut self, params: Value) {
        self.call(0, "initialize", params);
    }

    /// Peak resident memory so far (VmHWM), in bytes.
    fn peak_rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("read /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .expect("VmHWM")
            * 1024
    }

    fn kill9(&mut self) {
        unsafe { libc::kill(self.pid(), libc::SIGKILL) };
        let _ = self.child.wait();
    }

    fn signal(&self, signal: i32) {
        unsafe { libc::kill(self.pid(), signal) };
    }

    fn close_input_and_wait(mut self, limit: Duration) -> (Option<i32>, Vec<Value>) {
        drop(self.stdin.take());
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let rest = self.output.try_iter().map(|(_, m)| m).collect();
                return (status.code(), rest);
            }
            if Instant::now() > deadline {
                self.kill9();
                panic!("the server did not exit within {limit:?} after end of input");
            }
            thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

fn user(text: &str) -> Value {
    json!({"type": "message", "message": {"role": "user", "content": text, "timestamp": 1}})
}

fn assistant(text: &str) -> Value {
    json!({"type": "message", "message": {"role": "assistant",
        "content": [{"type": "text", "text": text}], "provider": "p", "model": "m",
        "stopReason": "stop", "timestamp": 2}})
}

fn append(id: impl Into<Value>, session: &str, entry: Value) -> Value {
    request(
        id,
        "session/append",
        json!({"sessionId": session, "entry": entry}),
    )
}

/// The ids of the entries in a session file (lines that parse; a torn last line does not).
fn ids_in_file(path: &Path) -> HashSet<String> {
    let Ok(bytes) = std::fs::read(path) else {
        return HashSet::new();
    };
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .filter(|v| v["type"] != "session")
        .filter_map(|v| v["id"].as_str().map(str::to_owned))
        .collect()
}

/// CPU time used by process `pid`, in clock ticks.
fn cpu_ticks(pid: i32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start after the last ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

/// Waits until process `pid` has used no CPU for half a second (at most `limit`).
fn wait_until_idle(pid: i32, limit: Duration) {
    let deadline = Instant::now() + limit;
    let mut last = cpu_ticks(pid);
    let mut quiet_since = Instant::now();
    while Instant::now() < deadline {
        thread::sleep(Duration::from_millis(100));
        let now = cpu_ticks(pid);
        if now != last {
            last = now;
            quiet_since = Instant::now();
        } else if quiet_since.elapsed() >= Duration::from_millis(500) {
            return;
        }
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

// ---------------------------------------------------------------------------------------------
// Finding 10: protocol edges

fn messages_without_an_id_are_never_answered_and_exit_always_exits() {
    let mut server = Server::spawn();
    server.initialize(json!({}));
    for bad in [
        json!({"jsonrpc": "2.0", "method": 5}),
        json!({"jsonrpc": "1.0", "method": "session/list"}),
        json!({"jsonrpc": "2.0", "method": "x", "params": 7}),
        json!({"foo": 1}),
        json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": "nope"}),
    ] {
        server.send(&bad);
    }
    server.send(&request(1, "shutdown", json!(null)));
    server.send(&json!({"jsonrpc": "2.0", "method": "exit", "params": 42}));
    let (code, rest) = server.close_input_and_wait(Duration::from_secs(10));
    assert_eq!(
        code,
        Some(0),
        "exit with bad params exits, after shutdown: 0"
    );
    let ids: Vec<&Value> = rest.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&json!(1)], "only the shutdown is answered: {rest:?}");
    // A message with an id is still answered when it is invalid.
    let mut server = Server::spawn();
    server.send(&json!({"jsonrpc": "1.0", "id": 9, "method": "x"}));
    assert_eq!(server.answer(&json!(9))["error"]["code"], -32600);
}

fn get_entries_pages_always_advance() {
    let mut server = Server::spawn();
    server.initialize(json!({"deterministic": true}));
    let created = server.call(1, "session/create", json!({"cwd": "/p", "inMemory": true}));
    let session = created["sessionId"].as_str().unwrap().to_owned();
    for i in 0..3 {
        server.send(&append(10 + i, &session, user("x")));
        server.answer(&json!(10 + i));
    }
    server.send(&request(
        2,
        "session/getEntries",
        json!({"sessionId": session, "limit": 0}),
    ));
    let answer = server.answer(&json!(2));
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("limit")
    );
    // Following nextOffset with limit 1 ends, one entry a page.
    let (mut offset, mut pages) = (json!(0), 0);
    while !offset.is_null() {
        let page = server.call(
            3 + pages,
            "session/getEntries",
            json!({"sessionId": session, "offset": offset, "limit": 1}),
        );
        assert_eq!(page["entries"].as_array().unwrap().len(), 1);
        offset = page["nextOffset"].clone();
        pages += 1;
        assert!(pages <= 3);
    }
    assert_eq!(pages, 3);
}

// ---------------------------------------------------------------------------------------------
// Finding 2: durable everywhere

fn a_durable_pi_cli_session_has_its_first_user_message_on_disk_when_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("new/nested");
    let mut server = Server::spawn();
    server.initialize(json!({}));
    let created = server.call(
        1,
        "session/create",
        json!({"cwd": "/p", "sessionDir": sessions, "durable": true}),
    );
    let path = PathBuf::from(created["path"].as_str().unwrap());
    let session = created["sessionId"].as_str().unwrap().to_owned();
    let answer = server.call(
        2,
        "session/append",
        json!({"sessionId": session, "entry": user("hello")}),
    );
    let entry = answer["entryId"].as_str().unwrap().to_owned();
    server.kill9();
    assert!(
        ids_in_file(&path).contains(&entry),
        "an acknowledged durable entry is on disk after kill -9"
    );
}

fn fork_fork_from_and_continue_recent_take_durable_and_a_fork_inherits_it() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("s");
    let mut server = Server::spawn();
    server.initialize(json!({"sessionsRoot": dir.path().join("root")}));
    let created = server.call(
        1,
        "session/create",
        json!({"cwd": "/p", "sessionDir": sessions, "durable": true}),
    );
    let session = created["sessionId"].as_str().unwrap().to_owned();
    let first = server.call(
        2,
        "session/append",
        json!({"sessionId": session, "entry": user("one")}),
    );
    let first = first["entryId"].as_str().unwrap().to_owned();
    // A clone of a user-only durable session: pi-cli would hold it in memory; durable writes.
    let forked = server.call(
        3,
        "session/fork",
        json!({"sessionId": session, "entryId": first, "position": "at"}),
    );
    let fork = forked["session"]["sessionId"].as_str().unwrap().to_owned();
    let fork_path = PathBuf::from(forked["session"]["path"].as_str().unwrap());
    let in_fork = server.call(
        4,
        "session/append",
        json!({"sessionId": fork, "entry": user("two")}),
    );
    let in_fork = in_fork["entryId"].as_str().unwrap().to_owned();
    // forkFrom and continueRecent accept the option (unknown members are refused).
    let source = created["path"].as_str().unwrap();
    let copied = server.call(
        5,
        "session/forkFrom",
        json!({"sourcePath": source, "cwd": "/q", "sessionDir": dir.path().join("copy"), "durable": true}),
    );
    assert_eq!(copied["written"], true);
    let copy = copied["sessionId"].as_str().unwrap().to_owned();
    let copy_path = PathBuf::from(copied["path"].as_str().unwrap());
    let in_copy = server.call(
        6,
        "session/append",
        json!({"sessionId": copy, "entry": user("three")}),
    );
    let in_copy = in_copy["entryId"].as_str().unwrap().to_owned();
    let recent = server.call(
        7,
        "session/continueRecent",
        json!({"cwd": "/r", "sessionDir": dir.path().join("recent"), "durable": true}),
    );
    let recent_id = recent["sessionId"].as_str().unwrap().to_owned();
    let recent_path = PathBuf::from(recent["path"].as_str().unwrap());
    let in_recent = server.call(
        8,
        "session/append",
        json!({"sessionId": recent_id, "entry": user("four")}),
    );
    let in_recent = in_recent["entryId"].as_str().unwrap().to_owned();
    server.kill9();
    assert!(
        ids_in_file(&fork_path).contains(&in_fork),
        "fork inherits durable"
    );
    assert!(
        ids_in_file(&copy_path).contains(&in_copy),
        "forkFrom durable"
    );
    assert!(
        ids_in_file(&recent_path).contains(&in_recent),
        "continueRecent durable"
    );
}

// ---------------------------------------------------------------------------------------------
// kill -9 in the middle of pipelined appends: nothing acknowledged is missing

#[derive(Clone, Copy, Debug)]
struct KillProfile {
    profile: &'static str,
    durable: bool,
}

/// One run: pipelined appends (user, assistant, then a mix) while reading answers; kill -9
/// after a random delay; every acknowledged entry that the profile promises to have written
/// must be in the file. Returns (acknowledged, missing).
fn one_kill(rng: &mut StdRng, dir: &Path, run: usize, kp: KillProfile) -> (usize, usize) {
    let mut server = Server::spawn();
    server.initialize(json!({"sessionsRoot": dir}));
    let created = server.call(
        1,
        "session/create",
        json!({"cwd": "/p", "profile": kp.profile, "sessionDir": dir.join(format!("run{run}")),
               "durable": kp.durable}),
    );
    let session = created["sessionId"].as_str().unwrap().to_owned();
    let path = PathBuf::from(created["path"].as_str().unwrap());
    let count = rng.random_range(20..400);
    let mut batch = Vec::new();
    for i in 0..count {
        let entry = match i {
            0 => user("first"),
            1 => assistant("reply"),
            _ if i % 3 == 0 => assistant(&"a".repeat(rng.random_range(1..3000))),
            _ => user(&"u".repeat(rng.random_range(1..3000))),
        };
        batch.extend_from_slice(append(100 + i, &session, entry).to_string().as_bytes());
        batch.push(b'\n');
    }
    let stdin = server.stdin.take().unwrap();
    let writer = thread::spawn(move || {
        let mut stdin = stdin;
        let _ = stdin.write_all(&batch);
        stdin
    });
    let kill_at = Instant::now() + Duration::from_micros(rng.random_range(2_000..80_000));
    let mut acked: HashMap<u64, String> = HashMap::new();
    while Instant::now() < kill_at {
        match server.output.recv_timeout(Duration::from_micros(200)) {
            Ok((_, message)) => {
                if let (Some(id), Some(entry)) = (
                    message["id"].as_u64(),
                    message["result"]["entryId"].as_str(),
                ) {
                    acked.insert(id - 100, entry.to_owned());
                }
            }
            Err(_) => continue,
        }
    }
    server.kill9();
    // Answers already read from the pipe count as acknowledged too.
    for (_, message) in server.output.try_iter() {
        if let (Some(id), Some(entry)) = (
            message["id"].as_u64(),
            message["result"]["entryId"].as_str(),
        ) {
            acked.insert(id - 100, entry.to_owned());
        }
    }
    let _ = writer.join();
    let on_disk = ids_in_file(&path);
    let mut promised: Vec<(&u64, &String)> = acked.iter().collect();
    // pi-cli without durable holds entries in memory until the first assistant message (pi's
    // lazy first write): the user message is promised only once the assistant one is answered.
    if kp.profile == "pi-cli" && !kp.durable && !acked.contains_key(&1) {
        promised.retain(|(i, _)| **i != 0);
    }
    let missing: Vec<_> = promised
        .iter()
        .filter(|(_, entry)| !on_disk.contains(*entry))
        .collect();
    if !missing.is_empty() {
        let saved = std::env::temp_dir().join(format!("pi-session-kill-failure-{run}.jsonl"));
        let _ = std::fs::copy(&path, &saved);
        eprintln!(
            "{kp:?} run {run}: missing {missing:?}; file kept at {}",
            saved.display()
        );
    }
    (promised.len(), missing.len())
}

fn kill_9_during_pipelined_appends_loses_nothing_acknowledged() {
    let seed = seed("kill -9");
    let kills = env_number("RELIABILITY_KILLS", 100) as usize;
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let profiles = [
        KillProfile {
            profile: "pi-cli",
            durable: false,
        },
        KillProfile {
            profile: "pi-cli",
            durable: true,
        },
        KillProfile {
            profile: "harness",
            durable: false,
        },
        KillProfile {
            profile: "harness",
            durable: true,
        },
    ];
    let mut total_missing = 0;
    for (p, kp) in profiles.into_iter().enumerate() {
        let mut rng = StdRng::seed_from_u64(seed.wrapping_add(p as u64));
        let (mut acked, mut missing) = (0, 0);
        for run in 0..kills {
            let (a, m) = one_kill(&mut rng, dir.path(), p * kills + run, kp);
            acked += a;
            missing += m;
        }
        println!(
            "kill -9: {} durable={}: {kills} kills, {acked} acknowledged appends, {missing} missing",
            kp.profile, kp.durable
        );
        total_missing += missing;
    }
    println!("kill -9: {:.1} s in all", started.elapsed().as_secs_f64());
    assert_eq!(
        total_missing, 0,
        "acknowledged entries missing after kill -9"
    );
}

// ---------------------------------------------------------------------------------------------
// Mutational fuzz of frames

fn fuzz_corpus() -> Vec<Vec<u8>> {
    let messages = [
        request(
            1,
            "session/create",
            json!({"cwd": "/p", "inMemory": true, "id": "fz"}),
        ),
        append(2, "fz", user("hello")),
        append(3, "fz", assistant("world")),
        request(
            4,
            "session/getEntries",
            json!({"sessionId": "fz", "offset": 0, "limit": 2}),
        ),
        request(
            5,
            "session/buildContext",
            json!({"sessionId": "fz", "format": "llm"}),
        ),
        request(6, "session/getTree", json!({"sessionId": "fz"})),
        request(
            7,
            "session/navigateTree",
            json!({"sessionId": "fz", "targetId": "x"}),
        ),
        request("s", "session/getInfo", json!({"sessionId": "fz"})),
        json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}}),
        json!({"jsonrpc": "2.0", "id": "s1", "result": {"cancel": true}}),
        request(
            8,
            "session/branch",
            json!({"sessionId": "fz", "entryId": "nope"}),
        ),
        request(9, "session/list", json!({"cwd": "/nowhere-for-fuzz"})),
    ];
    messages
        .iter()
        .map(|m| m.to_string().into_bytes())
        .collect()
}

fn mutate(rng: &mut StdRng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let mut frame = corpus[rng.random_range(0..corpus.len())].clone();
    for _ in 0..rng.random_range(1..5) {
        let len = frame.len().max(1);
        match rng.random_range(0..7) {
            0 => {
                let at = rng.random_range(0..len).min(frame.len().saturating_sub(1));
                if let Some(b) = frame.get_mut(at) {
                    *b ^= 1 << rng.random_range(0..8);
                }
            }
            1 => {
                let at = rng.random_range(0..=frame.len());
                let bytes: &[u8] = [
                    b"{".as_slice(),
                    b"}",
                    b"[",
                    b"]",
                    b"\"",
                    b"\\",
                    b"\\u",
                    b"\xff",
                    b"\x00",
                    b"1e999",
                    b"-0",
                    b"null",
                    b"\r",
                    b"\xe2\x80\xa8",
                    b"Content-Length: 5\r\n\r\n",
                ][rng.random_range(0..15)];
                frame.splice(at..at, bytes.iter().copied());
            }
            2 if !frame.is_empty() => {
                let a = rng.random_range(0..frame.len());
                let b = rng.random_range(a..=frame.len().min(a + 16));
                frame.drain(a..b);
            }
            3 => {
                let other = &corpus[rng.random_range(0..corpus.len())];
                let cut = rng.random_range(0..=frame.len());
                let from = rng.random_range(0..=other.len());
                frame.truncate(cut);
                frame.extend_from_slice(&other[from..]);
            }
            4 if !frame.is_empty() => {
                let a = rng.random_range(0..frame.len());
                let b = rng.random_range(a..=frame.len().min(a + 32));
                let chunk = frame[a..b].to_vec();
                frame.splice(b..b, chunk);
            }
            5 => {
                let depth = rng.random_range(1..3000);
                let at = rng.random_range(0..=frame.len());
                let nest = "[".repeat(depth);
                frame.splice(at..at, nest.bytes());
            }
            _ => {
                // Numbers where ids and offsets go.
                let text = String::from_utf8_lossy(&frame).into_owned();
                let number = ["-1", "1.5", "18446744073709551616", "0", "1e3", "\"7\""]
                    [rng.random_range(0..6)];
                frame = text.replacen(char::is_numeric, number, 1).into_bytes();
            }
        }
    }
    frame
}

fn mutated_frames_never_crash_hang_or_corrupt_the_output() {
    let seed = seed("frame fuzz");
    let cases = env_number("FUZZ_CASES", 3000) as usize;
    let per_server = 250;
    let corpus = fuzz_corpus();
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut sent, mut answered, mut servers) = (0, 0, 0);
    let started = Instant::now();
    while sent < cases {
        let lsp = servers % 2 == 1;
        let mut input = Vec::new();
        let init = request(0, "initialize", json!({})).to_string();
        let mut frames = vec![init.into_bytes()];
        for _ in 0..per_server.min(cases - sent) {
            frames.push(mutate(&mut rng, &corpus));
            sent += 1;
        }
        for frame in &frames {
            if lsp {
                input.extend_from_slice(
                    format!("Content-Length: {}\r\n\r\n", frame.len()).as_bytes(),
                );
                input.extend_from_slice(frame);
            } else {
                input.extend_from_slice(frame);
                input.push(b'\n');
            }
        }
        let mut child = Command::new(BIN)
            .args(["--stdio", "--framing", if lsp { "lsp" } else { "ndjson" }])
            .env("PI_SESSION_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let feed = input.clone();
        let writer = thread::spawn(move || {
            let _ = stdin.write_all(&feed);
        });
        let waited = wait_with_output_timeout(child, Duration::from_secs(30));
        let _ = writer.join();
        let failure = match &waited {
            None => Some("hang".to_owned()),
            Some((code, stdout, stderr)) => {
                let frames_ok = if lsp {
                    parse_lsp(stdout)
                } else {
                    parse_ndjson(stdout)
                };
                match frames_ok {
                    Err(e) => Some(format!("bad output: {e}")),
                    Ok(n) => {
                        answered += n;
                        if !matches!(code, Some(0 | 1)) {
                            Some(format!("exit code {code:?}"))
                        } else if String::from_utf8_lossy(stderr).contains("panicked") {
                            Some("a panic was logged".to_owned())
                        } else {
                            None
                        }
                    }
                }
            }
        };
        if let Some(failure) = failure {
            let saved = std::env::temp_dir().join(format!("pi-session-fuzz-{seed}-{servers}.bin"));
            std::fs::write(&saved, &input).unwrap();
            panic!(
                "frame fuzz (seed {seed}, server {servers}): {failure}; input saved at {}",
                saved.display()
            );
        }
        servers += 1;
    }
    println!(
        "frame fuzz: {sent} mutated frames over {servers} servers, {answered} messages out, {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

type Waited = (Option<i32>, Vec<u8>, Vec<u8>);

fn wait_with_output_timeout(mut child: Child, limit: Duration) -> Option<Waited> {
    use std::io::Read;
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let err = thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        bytes
    });
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some((status.code(), out.join().unwrap(), err.join().unwrap()));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        thread::sleep(Duration::from_millis(5));
    }
}

fn parse_ndjson(stdout: &[u8]) -> Result<usize, String> {
    let text = std::str::from_utf8(stdout).map_err(|e| e.to_string())?;
    if !text.is_empty() && !text.ends_with('\n') {
        return Err("unterminated last line".into());
    }
    for line in text.lines() {
        let value: Value = serde_json::from_str(line).map_err(|e| format!("{e}: {line}"))?;
        if value["jsonrpc"] != "2.0" {
            return Err(format!("not JSON-RPC 2.0: {line}"));
        }
    }
    Ok(text.lines().count())
}

fn parse_lsp(mut stdout: &[u8]) -> Result<usize, String> {
    let mut count = 0;
    while !stdout.is_empty() {
        let end = stdout
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or("no header end")?;
        let header = std::str::from_utf8(&stdout[..end]).map_err(|e| e.to_string())?;
        let length: usize = header
            .strip_prefix("Content-Length: ")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("bad header {header:?}"))?;
        let body = stdout.get(end + 4..end + 4 + length).ok_or("short body")?;
        serde_json::from_slice::<Value>(body).map_err(|e| e.to_string())?;
        stdout = &stdout[end + 4 + length..];
        count += 1;
    }
    Ok(count)
}

// ---------------------------------------------------------------------------------------------
// Finding 7: backpressure

/// Peak memory allowed to a server that is held back (debug build; see the README figures).
const PEAK_RSS_LIMIT: u64 = 160 * 1024 * 1024;

fn a_client_that_stops_reading_does_not_grow_the_server() {
    let (mut server, go) = Server::spawn_not_reading();
    // Set up without reading answers: the frames are sent and the session id is fixed.
    server.send(&request(0, "initialize", json!({"deterministic": true})));
    let session = "slow".to_owned();
    server.send(&request(
        1,
        "session/create",
        json!({"cwd": "/p", "inMemory": true, "id": session}),
    ));
    // `create` runs beside later requests: let it finish before appending.
    thread::sleep(Duration::from_millis(300));
    // 16 entries of 64 KiB: every getEntries answer is about 1 MiB.
    for i in 0..16 {
        server.send(&append(10 + i, &session, user(&"x".repeat(64 * 1024))));
    }
    let requests = 200u64;
    let mut input = Vec::new();
    for i in 0..requests {
        input.extend_from_slice(
            request(
                1000 + i,
                "session/getEntries",
                json!({"sessionId": session}),
            )
            .to_string()
            .as_bytes(),
        );
        input.push(b'\n');
    }
    let stdin = server.stdin.take().unwrap();
    let writer = thread::spawn(move || {
        let mut stdin = stdin;
        let _ = stdin.write_all(&input);
        stdin
    });
    // Until the server has done all it will do for a client that does not read.
    wait_until_idle(server.pid(), Duration::from_secs(90));
    let held_back = server.peak_rss();
    println!(
        "slow reader: {requests} requests of ~1 MiB answers ({} MiB), client reading slowly: peak RSS {:.1} MiB",
        requests,
        mib(held_back)
    );
    // Now read everything: every request is answered.
    go.send(()).unwrap();
    let mut answered = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    while answered < requests {
        let left = deadline.saturating_duration_since(Instant::now());
        let (_, message) = server.output.recv_timeout(left).expect("all answers come");
        if message["id"].as_u64().is_some_and(|id| id >= 1000) {
            assert!(message.get("result").is_some(), "{message}");
            answered += 1;
        }
    }
    let mut stdin = writer.join().unwrap();
    let _ = writeln!(stdin, "{}", request(2, "shutdown", json!(null)));
    server.stdin = Some(stdin);
    server.answer(&json!(2));
    assert!(
        held_back < PEAK_RSS_LIMIT,
        "peak RSS {:.1} MiB with a client not reading",
        mib(held_back)
    );
}

fn pipelined_appends_far_past_the_bound_stay_within_bounded_memory() {
    let requests = env_number("PIPELINE_REQUESTS", 100_000);
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::spawn();
    server.initialize(json!({"deterministic": true}));
    let created = server.call(
        1,
        "session/create",
        json!({"cwd": "/p", "profile": "harness", "sessionDir": dir.path()}),
    );
    let session = created["sessionId"].as_str().unwrap().to_owned();
    let stdin = server.stdin.take().unwrap();
    let started = Instant::now();
    let writer = thread::spawn(move || {
        let mut stdin = std::io::BufWriter::with_capacity(1 << 20, stdin);
        for i in 0..requests {
            writeln!(stdin, "{}", append(1000 + i, &session, user("pipelined"))).unwrap();
        }
        stdin.into_inner().ok().unwrap()
    });
    let mut answered = 0;
    while answered < requests {
        let (_, message) = server
            .output
            .recv_timeout(Duration::from_secs(60))
            .expect("answers keep coming");
        assert!(message.get("result").is_some(), "{message}");
        answered += 1;
    }
    let elapsed = started.elapsed();
    server.stdin = Some(writer.join().unwrap());
    let peak = server.peak_rss();
    println!(
        "pipelining: {requests} appends in {:.1} s, peak RSS {:.1} MiB",
        elapsed.as_secs_f64(),
        mib(peak)
    );
    assert!(peak < PEAK_RSS_LIMIT, "peak RSS {:.1} MiB", mib(peak));
}

// ---------------------------------------------------------------------------------------------
// Finding 8: nothing slow on the event loop

fn a_durable_backlog_does_not_delay_independent_reads_or_hook_timers() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::spawn();
    server.initialize(json!({"hooks": ["session_before_tree"], "hookTimeoutMs": 2000}));
    let mut sessions = Vec::new();
    for i in 0..4 {
        let created = server.call(
            1 + i,
            "session/create",
            json!({"cwd": "/p", "profile": "harness", "sessionDir": dir.path(), "durable": true}),
        );
        sessions.push(created["sessionId"].as_str().unwrap().to_owned());
    }
    let free = server.call(10, "session/create", json!({"cwd": "/p", "inMemory": true}));
    let free = free["sessionId"].as_str().unwrap().to_owned();
    let a = server.call(
        11,
        "session/append",
        json!({"sessionId": free, "entry": user("a")}),
    );
    server.call(
        12,
        "session/append",
        json!({"sessionId": free, "entry": assistant("b")}),
    );
    let target = a["entryId"].as_str().unwrap().to_owned();
    let backlog = env_number("DURABLE_BACKLOG", 20_000);
    let mut input = Vec::new();
    for i in 0..backlog {
        let session = &sessions[i as usize % 4];
        input.extend_from_slice(
            append(100_000 + i, session, user("durable"))
                .to_string()
                .as_bytes(),
        );
        input.push(b'\n');
    }
    server.send_raw(&input).unwrap();
    // Right behind the backlog: an independent read and a navigation whose hook goes unanswered.
    let sent = Instant::now();
    server.send(&request(20, "session/getInfo", json!({"sessionId": free})));
    server.send(&request(
        21,
        "session/navigateTree",
        json!({"sessionId": free, "targetId": target}),
    ));
    let (mut info_at, mut hook_at, mut navigated_at, mut durable_done) = (None, None, None, 0);
    let deadline = Instant::now() + Duration::from_secs(300);
    while info_at.is_none() || navigated_at.is_none() || durable_done < backlog {
        let left = deadline.saturating_duration_since(Instant::now());
        let (at, message) = server.output.recv_timeout(left).expect("answers");
        match (&message["id"], message.get("method")) {
            (id, Some(_)) if id.is_string() => hook_at = Some(at),
            (id, None) if id == 20 => info_at = Some(at),
            (id, None) if id == 21 => navigated_at = Some(at),
            (id, None) if id.as_u64().is_some_and(|id| id >= 100_000) => durable_done += 1,
            _ => {}
        }
    }
    let backlog_time = sent.elapsed();
    let info = info_at.unwrap() - sent;
    let hook = hook_at.expect("the hook was sent");
    let timeout = navigated_at.unwrap() - hook;
    println!(
        "durable backlog: {backlog} durable appends on 4 sessions took {:.2} s; independent getInfo answered after {:.3} s; hook of 2 s timed out after {:.3} s",
        backlog_time.as_secs_f64(),
        info.as_secs_f64(),
        timeout.as_secs_f64()
    );
    assert!(
        info < Duration::from_millis(1000),
        "getInfo waited {info:?}"
    );
    // Measured from when the client read the hook, which may be a little after the server
    // sent it (and started its timer): the lower bound allows for that, the upper bound is
    // what the backlog must not stretch.
    assert!(
        timeout >= Duration::from_millis(1500) && timeout < Duration::from_millis(2600),
        "the hook timed out after {timeout:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Finding 9: the second signal

fn a_second_sigterm_ends_the_waiting_within_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, go) = Server::spawn_not_reading();
    go.send(()).unwrap();
    server.initialize(json!({}));
    let created = server.call(
        1,
        "session/create",
        json!({"cwd": "/p", "profile": "harness", "sessionDir": dir.path(), "durable": true}),
    );
    let session = created["sessionId"].as_str().unwrap().to_owned();
    let path = PathBuf::from(created["path"].as_str().unwrap());
    let backlog = env_number("STOP_BACKLOG", 60_000);
    let stdin = server.stdin.take().unwrap();
    // The signals must find requests waiting: wait until well over the server's read-ahead has
    // reached its pipe (on a loaded machine a fixed sleep was not enough).
    let flushed = Arc::new(AtomicU64::new(0));
    let writer = thread::spawn({
        let flushed = flushed.clone();
        move || {
            let mut stdin = std::io::BufWriter::with_capacity(1 << 16, stdin);
            for i in 0..backlog {
                if writeln!(stdin, "{}", append(1000 + i, &session, user("x"))).is_err() {
                    return;
                }
                if i % 256 == 255 {
                    if stdin.flush().is_err() {
                        return;
                    }
                    flushed.store(i + 1, Ordering::SeqCst);
                }
            }
            let _ = stdin.flush();
        }
    });
    let waiting_since = Instant::now();
    while flushed.load(Ordering::SeqCst) < backlog.min(4096) {
        assert!(
            waiting_since.elapsed() < Duration::from_secs(60),
            "the writer could not hand the server {} requests in 60 s",
            backlog.min(4096)
        );
        thread::sleep(Duration::from_millis(10));
    }
    thread::sleep(Duration::from_millis(200));
    server.signal(libc::SIGTERM);
    thread::sleep(Duration::from_millis(300));
    server.signal(libc::SIGTERM);
    let second = Instant::now();
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            second.elapsed() < Duration::from_secs(10),
            "still running 10 s after the second SIGTERM"
        );
        thread::sleep(Duration::from_millis(5));
    };
    let exited = second.elapsed();
    let _ = writer.join();
    thread::sleep(Duration::from_millis(100));
    let (mut ok, mut stopping) = (Vec::new(), 0);
    for (_, message) in server.output.try_iter() {
        if let Some(entry) = message["result"]["entryId"].as_str() {
            ok.push(entry.to_owned());
        } else if message["error"]["code"] == -32800 {
            assert!(
                message["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("stopping"),
                "{message}"
            );
            stopping += 1;
        }
    }
    let on_disk = ids_in_file(&path);
    println!(
        "second signal: exit {:.3} s after it ({status}); {} appends answered, {stopping} answered -32800 (not run), {} lines on disk",
        exited.as_secs_f64(),
        ok.len(),
        on_disk.len()
    );
    assert!(exited < Duration::from_millis(1200), "exit took {exited:?}");
    assert!(stopping > 0, "requests waiting were answered -32800");
    assert!(
        ok.iter().all(|id| on_disk.contains(id)),
        "an acknowledged append is missing"
    );
    // -32800 means nothing changed: nothing beyond the answered appends, except ones running
    // when the server left (whose answers could not be written), is on disk.
    assert!(
        on_disk.len() <= ok.len() + 64,
        "{} on disk, {} answered",
        on_disk.len(),
        ok.len()
    );
}

// ---------------------------------------------------------------------------------------------
// Finding 10: memory comes back after sessions close

fn current_rss(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap()
        * 1024
}

fn memory_is_returned_after_fifty_sessions_close() {
    let sessions = env_number("MEMORY_SESSIONS", 50);
    let entries = env_number("MEMORY_ENTRIES", 10_000);
    let dir = tempfile::tempdir().unwrap();
    let mut body = String::new();
    for i in 0..entries {
        let parent = if i == 0 {
            "null".to_owned()
        } else {
            format!("\"{:08x}\"", i - 1)
        };
        body.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"{i:08x}\",\"parentId\":{parent},\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"entry {i}\",\"timestamp\":1}}}}\n"
        ));
    }
    let mut paths = Vec::new();
    for s in 0..sessions {
        let path = dir.path().join(format!("s{s}.jsonl"));
        let header = format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"mem-{s}\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}}\n"
        );
        std::fs::write(&path, format!("{header}{body}")).unwrap();
        paths.push(path);
    }
    let mut server = Server::spawn();
    server.initialize(json!({}));
    // The baseline is taken after one session was opened and closed, so what the first open
    // sets up once for the process (worker threads, the index directory, lazy tables) is not
    // counted as memory the closes failed to give back.
    server.call(90, "session/open", json!({"path": paths[0]}));
    server.call(91, "session/close", json!({"sessionId": "mem-0"}));
    let before = current_rss(server.pid());
    for (i, path) in paths.iter().enumerate() {
        server.call(100 + i as u64, "session/open", json!({"path": path}));
    }
    let open = current_rss(server.pid());
    for i in 0..sessions {
        server.call(
            500 + i,
            "session/close",
            json!({"sessionId": format!("mem-{i}")}),
        );
    }
    let closed = current_rss(server.pid());
    println!(
        "memory: RSS {:.1} MiB at start, {:.1} MiB with {sessions} sessions of {entries} entries open, {:.1} MiB after closing them",
        mib(before),
        mib(open),
        mib(closed)
    );
    let grown = open.saturating_sub(before);
    assert!(
        // Without giving memory back (glibc keeps freed pages) about two fifths of the growth
        // stays (52.7 -> 32.6 MiB from 18.7 here, with the 40-byte index records); with it,
        // about a seventh.
        closed < before + grown / 4,
        "most memory stays after closing: {:.1} MiB -> {:.1} MiB -> {:.1} MiB",
        mib(before),
        mib(open),
        mib(closed)
    );
}

fn hook_answers_and_cancels_are_acted_on_while_work_is_held_back() {
    // Deterministic ids repeat: a first server tells the question's id.
    let question = {
        let mut probe = Server::spawn();
        probe.initialize(json!({"deterministic": true}));
        probe.call(
            1,
            "session/create",
            json!({"cwd": "/p", "inMemory": true, "id": "held"}),
        );
        let answer = probe.call(
            2,
            "session/append",
            json!({"sessionId": "held", "entry": user("question")}),
        );
        answer["entryId"].as_str().unwrap().to_owned()
    };
    let (mut server, go) = Server::spawn_not_reading();
    // Nothing is read from the server until `go`: ids and hook ids are known in advance.
    server.send(&request(
        0,
        "initialize",
        json!({"deterministic": true, "hooks": ["session_before_tree"], "hookTimeoutMs": 8000}),
    ));
    server.send(&request(
        1,
        "session/create",
        json!({"cwd": "/p", "inMemory": true, "id": "held"}),
    ));
    // `create` runs beside later requests: let it finish before appending.
    thread::sleep(Duration::from_millis(300));
    server.send(&append(2, "held", user("question")));
    server.send(&append(3, "held", assistant("answer")));
    for i in 0..64 {
        server.send(&append(10 + i, "held", user(&"x".repeat(16 * 1024))));
    }
    // Navigate to the question: its hook `s1` waits for an answer (8 s at most).
    server.send(&request(
        4,
        "session/navigateTree",
        json!({"sessionId": "held", "targetId": question}),
    ));
    let navigate_sent = Instant::now();
    thread::sleep(Duration::from_millis(3000));
    // ~1 MiB answers the client does not read: the output passes its bound.
    let mut flood = Vec::new();
    for i in 0..64u64 {
        flood.extend_from_slice(
            request(1000 + i, "session/getEntries", json!({"sessionId": "held"}))
                .to_string()
                .as_bytes(),
        );
        flood.push(b'\n');
    }
    server.send_raw(&flood).unwrap();
    thread::sleep(Duration::from_millis(1500));
    // Behind the held work: the hook's answer and a cancel of the last request.
    server.send(&json!({"jsonrpc": "2.0", "id": "s1", "result": {"cancel": true}}));
    server.send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1063}}));
    // Past the hook's timeout, then read everything.
    thread::sleep(Duration::from_millis(8500).saturating_sub(navigate_sent.elapsed()));
    go.send(()).unwrap();
    let (mut navigated, mut cancelled) = (None, None);
    while navigated.is_none() || cancelled.is_none() {
        let (_, message) = server
            .output
            .recv_timeout(Duration::from_secs(60))
            .expect("both answers come");
        match &message["id"] {
            id if *id == 4 && message.get("method").is_none() => navigated = Some(message),
            id if *id == 1063 => cancelled = Some(message),
            _ => {}
        }
    }
    let (navigated, cancelled) = (navigated.unwrap(), cancelled.unwrap());
    assert_eq!(
        navigated["result"]["cancelled"], true,
        "the hook answer was acted on before the timeout: {navigated}"
    );
    assert_eq!(cancelled["error"]["code"], -32800, "{cancelled}");
}

crate::tests! {
    messages_without_an_id_are_never_answered_and_exit_always_exits,
    get_entries_pages_always_advance,
    a_durable_pi_cli_session_has_its_first_user_message_on_disk_when_acknowledged,
    fork_fork_from_and_continue_recent_take_durable_and_a_fork_inherits_it,
    kill_9_during_pipelined_appends_loses_nothing_acknowledged,
    mutated_frames_never_crash_hang_or_corrupt_the_output,
    a_client_that_stops_reading_does_not_grow_the_server,
    pipelined_appends_far_past_the_bound_stay_within_bounded_memory,
    a_durable_backlog_does_not_delay_independent_reads_or_hook_timers,
    a_second_sigterm_ends_the_waiting_within_a_second,
    memory_is_returned_after_fifty_sessions_close,
    hook_answers_and_cancels_are_acted_on_while_work_is_held_back,
}
