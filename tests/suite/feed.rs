//! The store's live feed (`pi-session watch --all --json`, `session/watchStore`): each kind of
//! event told (created, appended, replaced, renamed, deleted), a torn last line told once when
//! completed, a client killed with SIGKILL coming back with its last cursor and getting exactly
//! what came after it (files created meanwhile included), a cursor of another index refused in
//! one line; and the reliability case: pi's own SessionManager appending to five sessions and
//! creating three while the client is killed at twenty seeded random points, every entry
//! delivered exactly once, in order per file.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support;
use crate::support::files::tree;

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

/// How long an event may take to come (generous: the machine may be loaded).
const WITHIN: Duration = Duration::from_secs(10);

struct Store {
    dir: tempfile::TempDir,
    agent: PathBuf,
    index: PathBuf,
}

impl Store {
    fn new() -> Store {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let index = dir.path().join("cache");
        std::fs::create_dir_all(agent.join("sessions")).unwrap();
        Store { dir, agent, index }
    }

    fn sessions(&self) -> PathBuf {
        self.agent.join("sessions")
    }

    fn command(&self) -> Command {
        let mut command = Command::new(BIN);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("PI_CODING_AGENT_DIR", &self.agent)
            .env("PI_SESSION_INDEX_DIR", &self.index)
            .env("PI_SESSION_LOG", "off");
        command
    }

    /// `watch --all --json` (after `since`), its stdout lines read on a thread.
    fn watch(&self, since: Option<&str>, poll: bool) -> Client {
        let mut command = self.command();
        command.args(["watch", "--all", "--json"]);
        if let Some(since) = since {
            command.args(["--since", since]);
        }
        if poll {
            command.arg("--poll");
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("pi-session runs");
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                // A line cut by the kill (no newline) is not an event the client saw.
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) if !line.ends_with('\n') => return,
                    Ok(_) => {
                        if send.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Client { child, lines }
    }
}

struct Client {
    child: Child,
    lines: Receiver<String>,
}

impl Client {
    /// The next event, within `within`; `None` when none came.
    fn try_event(&self, within: Duration) -> Option<Value> {
        match self.lines.recv_timeout(within) {
            Ok(line) => Some(serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("not a JSON line: {e}: {line:?}");
            })),
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    fn event(&self) -> Value {
        self.try_event(WITHIN).expect("an event within the bound")
    }

    /// SIGKILL, and the events it printed before (whole lines only).
    fn kill9(mut self) -> Vec<Value> {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGKILL) };
        let _ = self.child.wait();
        let mut rest = Vec::new();
        while let Some(event) = self.try_event(Duration::from_millis(200)) {
            rest.push(event);
        }
        rest
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn append(path: &Path, text: &str) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

fn ids(event: &Value) -> Vec<String> {
    event["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect()
}

fn kind(event: &Value) -> &str {
    event["kind"].as_str().unwrap()
}

fn every_kind(poll: bool) {
    let store = Store::new();
    let client = store.watch(Some("0"), poll);
    let project = store.sessions().join("--work-a--");
    std::fs::create_dir_all(&project).unwrap();
    let file = project.join("2026-01-01T00-00-00-000Z_aaaa.jsonl");
    let lines = [
        tree::header("aaaa"),
        tree::user("u1", None, 1, "first"),
        tree::assistant("a1", Some("u1"), 2, "answer"),
    ];
    std::fs::write(&file, tree::file_text(&lines)).unwrap();
    let created = client.event();
    assert_eq!(kind(&created), "created", "{created}");
    assert_eq!(ids(&created), ["u1", "a1"]);
    assert_eq!(created["path"], Value::from(support::path_str(&file)));
    assert_eq!(
        (created["from"].as_u64(), created["to"].as_u64()),
        (Some(0), Some(2))
    );

    append(
        &file,
        &format!("{}\n", tree::user("u2", Some("a1"), 3, "second")),
    );
    let appended = client.event();
    assert_eq!(kind(&appended), "appended", "{appended}");
    assert_eq!(ids(&appended), ["u2"]);
    assert_eq!(appended["from"].as_u64(), Some(2));
    assert_eq!(appended["generation"], created["generation"]);

    // A torn last line: nothing until it is completed, then told once.
    let torn = tree::user("u3", Some("u2"), 4, "third");
    let (head, tail) = torn.split_at(torn.len() / 2);
    append(&file, head);
    assert!(
        client.try_event(Duration::from_millis(700)).is_none(),
        "a torn line is not an entry yet"
    );
    append(&file, &format!("{tail}\n"));
    let completed = client.event();
    assert_eq!(kind(&completed), "appended", "{completed}");
    assert_eq!(ids(&completed), ["u3"]);

    let moved = project.join("2026-01-02T00-00-00-000Z_aaaa.jsonl");
    std::fs::rename(&file, &moved).unwrap();
    let renamed = client.event();
    assert_eq!(kind(&renamed), "renamed", "{renamed}");
    assert_eq!(renamed["oldPath"], Value::from(support::path_str(&file)));
    assert_eq!(renamed["path"], Value::from(support::path_str(&moved)));
    assert_eq!(renamed["generation"], created["generation"]);

    // Rewritten in place (as pi's migration or a truncation does): replaced, then its entries
    // again under a new generation.
    let rewritten = [tree::header("aaaa"), tree::user("n1", None, 9, "all new")];
    std::fs::write(&moved, tree::file_text(&rewritten)).unwrap();
    let replaced = client.event();
    assert_eq!(kind(&replaced), "replaced", "{replaced}");
    assert_eq!(ids(&replaced), ["n1"]);
    assert!(replaced["generation"].as_u64() > created["generation"].as_u64());

    std::fs::remove_file(&moved).unwrap();
    let deleted = client.event();
    assert_eq!(kind(&deleted), "deleted", "{deleted}");
    assert_eq!(deleted["path"], Value::from(support::path_str(&moved)));
    assert!(
        client.try_event(Duration::from_millis(500)).is_none(),
        "nothing told twice"
    );
}

fn every_kind_of_change_is_told_in_order() {
    every_kind(false);
}

fn every_kind_of_change_is_told_when_polled() {
    every_kind(true);
}

fn a_client_killed_gets_exactly_what_came_after_its_cursor() {
    let store = Store::new();
    let project = store.sessions().join("--work-b--");
    std::fs::create_dir_all(&project).unwrap();
    let first = project.join("one_bbbb.jsonl");
    std::fs::write(
        &first,
        tree::file_text(&[tree::header("bbbb"), tree::user("u1", None, 1, "one")]),
    )
    .unwrap();
    let client = store.watch(Some("0"), false);
    let created = client.event();
    assert_eq!(ids(&created), ["u1"]);
    let cursor = created["cursor"].as_str().unwrap().to_string();
    assert!(client.kill9().is_empty());

    // While nobody watches: appends, a new file, a torn last line.
    append(
        &first,
        &format!("{}\n", tree::assistant("a1", Some("u1"), 2, "two")),
    );
    let second = project.join("two_cccc.jsonl");
    std::fs::write(
        &second,
        tree::file_text(&[tree::header("cccc"), tree::user("v1", None, 3, "other")]),
    )
    .unwrap();
    let torn = tree::user("u2", Some("a1"), 4, "three");
    let (head, tail) = torn.split_at(10);
    append(&first, head);

    let client = store.watch(Some(&cursor), false);
    let mut told: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for _ in 0..2 {
        let event = client.event();
        let path = event["path"].as_str().unwrap().to_string();
        told.entry(path).or_default().extend(ids(&event));
    }
    assert_eq!(told[support::path_str(&first)], ["a1"]);
    assert_eq!(told[support::path_str(&second)], ["v1"]);
    append(&first, &format!("{tail}\n"));
    let completed = client.event();
    assert_eq!(ids(&completed), ["u2"], "{completed}");
    assert!(client.try_event(Duration::from_millis(500)).is_none());
    // Without a cursor: from now on, nothing of the past.
    let fresh = store.watch(None, false);
    assert!(fresh.try_event(Duration::from_millis(700)).is_none());
}

fn a_cursor_of_another_index_is_refused_in_one_line() {
    let store = Store::new();
    for cursor in ["0123456789abcdef0123456789abcdef.3", "not a cursor"] {
        let output = store
            .command()
            .args(["watch", "--all", "--json", "--since", cursor])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("since"), "{stderr}");
        assert!(output.stdout.is_empty());
    }
}

/// The entries of a session file, by id, in file order (header left out).
fn file_ids(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            entry["id"].as_str().unwrap().to_string()
        })
        .collect()
}

/// What a consumer keeps: per file, its entries, built from the events alone.
#[derive(Default)]
struct Consumer {
    files: HashMap<String, Vec<String>>,
    /// Every entry id delivered, how many times.
    delivered: HashMap<String, usize>,
    cursor: Option<String>,
}

impl Consumer {
    fn take(&mut self, event: &Value) {
        let path = event["path"].as_str().unwrap().to_string();
        let got = ids(event);
        for id in &got {
            *self.delivered.entry(format!("{path} {id}")).or_default() += 1;
        }
        match kind(event) {
            "created" | "replaced" => {
                self.files.insert(path, got);
            }
            "appended" => {
                let held = self.files.entry(path).or_default();
                assert_eq!(
                    event["from"].as_u64(),
                    Some(held.len() as u64),
                    "an append goes on where the file's entries end: {event}"
                );
                held.extend(got);
            }
            "renamed" => {
                let old = event["oldPath"].as_str().unwrap();
                let held = self.files.remove(old).unwrap_or_default();
                self.files.insert(path, held);
            }
            "deleted" => {
                self.files.remove(&path);
            }
            other => panic!("unknown kind {other}"),
        }
        self.cursor = Some(event["cursor"].as_str().unwrap().to_string());
    }
}

/// xorshift64*, seeded: the kill points.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

fn pi_writing_while_the_client_is_killed_twenty_times_every_entry_once_in_order() {
    let Some(oracle) = support::oracle("feed reliability") else {
        panic!("the writer is pi's SessionManager (the oracle)");
    };
    let store = Store::new();
    let started = Instant::now();
    let mut writer = Command::new(oracle.node())
        .arg(support::root().join("tests/suite/feed/pi-writer.mjs"))
        .arg(oracle.dir())
        .arg(&store.agent)
        .arg("28")
        .arg("600")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node runs");
    let mut consumer = Consumer::default();
    let mut seed = 0x5eed_0028_u64;
    let mut kills = 0;
    let mut kills_while_writing = 0;
    while kills < 20 {
        let client = store.watch(Some(consumer.cursor.as_deref().unwrap_or("0")), false);
        // Killed after 50-450 ms: mid-read, mid-transaction, mid-print, or idle.
        let life = Duration::from_millis(50 + next(&mut seed) % 400);
        let until = Instant::now() + life;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match client.try_event(left) {
                Some(event) => consumer.take(&event),
                None => break,
            }
        }
        if writer.try_wait().unwrap().is_none() {
            kills_while_writing += 1;
        }
        for event in client.kill9() {
            consumer.take(&event);
        }
        kills += 1;
    }
    assert!(
        kills_while_writing >= 10,
        "the kills fall while pi writes ({kills_while_writing} of 20 did)"
    );
    assert!(consumer.cursor.is_some(), "the killed clients told events");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "bounded: {:?}",
        started.elapsed()
    );
    let output = writer.wait_with_output().unwrap();
    assert!(output.status.success(), "the writer failed");
    let files: Vec<PathBuf> = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(files.len(), 8, "five sessions and three created");
    // Last, a client that stays until it has caught up with every file.
    let client = store.watch(consumer.cursor.as_deref(), false);
    let expected: HashMap<String, Vec<String>> = files
        .iter()
        .map(|f| (support::path_str(f).to_string(), file_ids(f)))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while consumer.files != expected && Instant::now() < deadline {
        if let Some(event) = client.try_event(Duration::from_millis(500)) {
            consumer.take(&event);
        }
    }
    assert_eq!(consumer.files.len(), 8);
    for (path, ids) in &expected {
        assert_eq!(
            consumer.files.get(path),
            Some(ids),
            "{path}: every entry, in file order"
        );
    }
    let total: usize = expected.values().map(Vec::len).sum();
    assert_eq!(consumer.delivered.len(), total);
    let twice: Vec<_> = consumer
        .delivered
        .iter()
        .filter(|(_, n)| **n != 1)
        .collect();
    assert!(twice.is_empty(), "delivered more than once: {twice:?}");
    assert!(client.try_event(Duration::from_millis(500)).is_none());
}

/// The next `store_changed` of `client` (kept notifications first), within the bound.
fn store_changed(client: &mut crate::support::pipe::PipeClient) -> Value {
    if let Some(at) = client
        .notifications
        .iter()
        .position(|n| n["method"] == "store_changed")
    {
        return client.notifications.remove(at)["params"].clone();
    }
    loop {
        let message = client.recv_within(WITHIN).expect("a store_changed in time");
        if message["method"] == "store_changed" {
            return message["params"].clone();
        }
    }
}

fn session_watch_store_tells_the_same_events_over_rpc_and_stops_on_unwatch() {
    use crate::support::pipe::{PipeClient, Wire};
    use serde_json::json;
    let store = Store::new();
    let project = store.sessions().join("--work-r--");
    std::fs::create_dir_all(&project).unwrap();
    let file = project.join("one_rrrr.jsonl");
    std::fs::write(
        &file,
        tree::file_text(&[tree::header("rrrr"), tree::user("u1", None, 1, "one")]),
    )
    .unwrap();
    let mut client = PipeClient::spawn_with(Wire::Ndjson, |command| {
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", store.dir.path())
            .env("PI_CODING_AGENT_DIR", &store.agent)
            .env("PI_SESSION_INDEX_DIR", &store.index)
            .env("PI_SESSION_LOG", "off")
            .stderr(Stdio::null());
    });
    let init = client.call("initialize", json!({}));
    assert_eq!(init["protocolVersion"], "0.9");
    assert_eq!(
        init["capabilities"]["watchStore"]["pollIntervalMs"],
        json!(500),
        "{init}"
    );
    let refused = client.call_with(
        "session/watchStore",
        json!({"since": "feedfeed.1"}),
        &mut |_, _| Value::Null,
    );
    assert_eq!(refused["error"]["code"], json!(1009), "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("since"),
        "{refused}"
    );
    let answer = client.call("session/watchStore", json!({"since": "0"}));
    let watch_id = answer["watchId"].as_str().unwrap().to_string();
    assert_eq!(answer["polled"], json!(false));
    let created = store_changed(&mut client);
    assert_eq!(created["watchId"], json!(watch_id));
    assert_eq!(kind(&created), "created");
    assert_eq!(ids(&created), ["u1"]);
    append(
        &file,
        &format!("{}\n", tree::assistant("a1", Some("u1"), 2, "two")),
    );
    let appended = store_changed(&mut client);
    assert_eq!(kind(&appended), "appended");
    assert_eq!(ids(&appended), ["a1"]);
    // A second watch of one project, from the first one's cursor: the same rest.
    let other = client.call(
        "session/watchStore",
        json!({"since": created["cursor"], "dir": project}),
    );
    let again = store_changed(&mut client);
    assert_eq!(again["watchId"], other["watchId"]);
    assert_eq!(ids(&again), ["a1"]);
    for id in [&watch_id, other["watchId"].as_str().unwrap()] {
        let ended = client.call("session/unwatchStore", json!({"watchId": id}));
        assert_eq!(ended["ended"], json!(true));
    }
    let ended = client.call("session/unwatchStore", json!({"watchId": watch_id}));
    assert_eq!(ended["ended"], json!(false));
    append(
        &file,
        &format!("{}\n", tree::user("u2", Some("a1"), 3, "three")),
    );
    assert!(
        client.recv_within(Duration::from_millis(700)).is_none(),
        "nothing after unwatch"
    );
    let refused = client.call_with(
        "session/watchStore",
        json!({"dir": store.dir.path()}),
        &mut |_, _| Value::Null,
    );
    assert_eq!(refused["error"]["code"], json!(1009), "{refused}");
}

crate::tests! {
    every_kind_of_change_is_told_in_order,
    every_kind_of_change_is_told_when_polled,
    a_client_killed_gets_exactly_what_came_after_its_cursor,
    a_cursor_of_another_index_is_refused_in_one_line,
    pi_writing_while_the_client_is_killed_twenty_times_every_entry_once_in_order,
    session_watch_store_tells_the_same_events_over_rpc_and_stops_on_unwatch,
}
