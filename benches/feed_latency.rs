//! How soon a client of the store's live feed hears of pi's appends: pi's own SessionManager
//! (0.82.1, from Node, tests/oracle/pi-watch-append.mjs) appends one message at a time to one
//! session of a store of `FEED_FILES` sessions (default 200) that the server watches whole
//! (`session/watchStore`); taken: the time from pi's append returning to the `store_changed`
//! carrying it reaching the client, and (polled by this process, 1 ms apart, through SQLite)
//! to the entry being in the server's store index. Beside it, in the same run, the same appends
//! to a second file watched alone (`session/watch`), the single-session watch as the reference.
//! Then bursts: how many notifications carry 300 appends written at once.
//!
//! `cargo bench --bench feed_latency`; `FEED_APPENDS=N` (default 300). Needs the oracle install
//! in target/oracle (the test suite makes it on first use).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1000.0
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn session_text(id: &str) -> String {
    let assistant = json!({"type": "message", "id": "a0", "parentId": "u0",
        "timestamp": "2026-01-01T00:00:02.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop", "timestamp": 2}});
    format!(
        "{}\n{}\n{assistant}\n",
        json!({"type":"session","version":3,"id":id,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}),
        r#"{"type":"message","id":"u0","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
    )
}

struct Pi {
    child: std::process::Child,
    to: std::process::ChildStdin,
    from: BufReader<std::process::ChildStdout>,
}

impl Pi {
    fn new(node: &Path, oracle: &Path, root: &Path, file: &Path) -> Pi {
        let mut child = Command::new(node)
            .arg(root.join("tests/oracle/pi-watch-append.mjs"))
            .arg(oracle)
            .arg(file)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let to = child.stdin.take().unwrap();
        let from = BufReader::new(child.stdout.take().unwrap());
        Pi { child, to, from }
    }

    /// Appends `count` messages; their ids and when the last append returned.
    fn append(&mut self, count: usize, seed: usize) -> (Vec<String>, f64) {
        writeln!(self.to, "{}", json!({"count": count, "seed": seed})).unwrap();
        self.to.flush().unwrap();
        let mut line = String::new();
        self.from.read_line(&mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        let ids = answer["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        (ids, answer["at"].as_f64().unwrap())
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let oracle = root.join("target/oracle");
    let node = oracle.join("node_modules/node/bin/node");
    assert!(
        node.exists(),
        "no oracle install in {} (run the test suite once)",
        oracle.display()
    );
    let appends: usize = std::env::var("FEED_APPENDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let files: usize = std::env::var("FEED_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    println!("load average before: {}", load());
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let index = dir.path().join("index");
    for n in 0..files {
        let project = agent.join(format!("sessions/--p{}--", n % 10));
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(
            project.join(format!("2026_{n:04}.jsonl")),
            session_text(&format!("bench-{n:04}")),
        )
        .unwrap();
    }
    let followed = agent.join("sessions/--p0--/2026_0000.jsonl");
    // The reference: a file outside the store, watched alone.
    let alone = dir.path().join("alone.jsonl");
    std::fs::write(&alone, session_text("bench-alone")).unwrap();

    let mut server = Command::new(BIN)
        .args(["--stdio", "--framing", "ndjson"])
        .env("PI_SESSION_LOG", "error")
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("PI_SESSION_INDEX_DIR", &index)
        .env("HOME", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut to_server = server.stdin.take().unwrap();
    let from_server = server.stdout.take().unwrap();
    let (sender, messages) = mpsc::channel::<(f64, Value)>();
    std::thread::spawn(move || {
        for line in BufReader::new(from_server).lines() {
            let Ok(line) = line else { return };
            let value: Value = serde_json::from_str(&line).unwrap();
            if sender.send((now_ms(), value)).is_err() {
                return;
            }
        }
    });
    let mut call = |id: u64, method: &str, params: Value| {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(to_server, "{message}").unwrap();
        to_server.flush().unwrap();
        loop {
            let (_, answer) = messages.recv_timeout(Duration::from_secs(60)).unwrap();
            if answer["id"] == id {
                assert!(answer.get("error").is_none(), "{answer}");
                return answer["result"].clone();
            }
        }
    };
    call(1, "initialize", json!({}));
    let started = Instant::now();
    call(2, "session/watchStore", json!({}));
    println!(
        "watchStore answered after {:.0} ms (first index build of {files} files)",
        started.elapsed().as_secs_f64() * 1000.0
    );
    call(3, "session/open", json!({"path": alone}));
    call(4, "session/watch", json!({"sessionId": "bench-alone"}));
    let db = rusqlite::Connection::open_with_flags(
        index.join("store-index-pi-cli.sqlite3"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let indexed = |id: &str| -> bool {
        db.query_row(
            "SELECT count(*) FROM entries e JOIN sessions s ON s.id = e.session
             WHERE s.path = ?1 AND e.entry_id = ?2",
            rusqlite::params![followed.to_string_lossy(), id],
            |r| r.get::<_, i64>(0),
        )
        .unwrap_or(0)
            > 0
    };

    let mut pi = Pi::new(&node, &oracle, root, &followed);
    let mut pi_alone = Pi::new(&node, &oracle, root, &alone);
    // Entries told, notifications, when the last one came.
    let told = |method: &str, expected: usize| -> (usize, f64) {
        let (mut entries, mut notes, mut last) = (0, 0, 0.0);
        while entries < expected {
            let (at, message) = messages.recv_timeout(Duration::from_secs(10)).unwrap();
            assert_eq!(message["method"], method, "{message}");
            entries += message["params"]["entries"].as_array().unwrap().len();
            notes += 1;
            last = at;
        }
        (notes, last)
    };

    let (mut feed, mut in_index, mut single) = (Vec::new(), Vec::new(), Vec::new());
    for n in 0..appends {
        std::thread::sleep(Duration::from_millis(20 + (n as u64 * 7919) % 41));
        let (ids, at) = pi.append(1, n);
        // In the index: polled here while the server works.
        while !indexed(&ids[0]) {
            assert!(now_ms() - at < 10_000.0, "entry never indexed");
            std::thread::sleep(Duration::from_millis(1));
        }
        in_index.push(now_ms() - at);
        let (_, arrived) = told("store_changed", ids.len());
        feed.push(arrived - at);
        std::thread::sleep(Duration::from_millis(20 + (n as u64 * 104_729) % 41));
        let (ids, at) = pi_alone.append(1, n);
        let (_, arrived) = told("session_changed", ids.len());
        single.push(arrived - at);
    }
    for list in [&mut feed, &mut in_index, &mut single] {
        list.sort_by(f64::total_cmp);
    }
    let line = |what: &str, list: &[f64]| {
        println!(
            "{what}: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({appends} appends, one at a time)",
            percentile(list, 0.5),
            percentile(list, 0.99),
            list[list.len() - 1]
        );
    };
    line(
        "pi's append -> store_changed at the client (watchStore)",
        &feed,
    );
    line(
        "pi's append -> entry in the server's SQLite index",
        &in_index,
    );
    line(
        "pi's append -> session_changed at the client (session/watch, reference)",
        &single,
    );
    let mut notes = Vec::new();
    for n in 0..10 {
        let (ids, at) = pi.append(300, appends + n);
        let (count_notes, arrived) = told("store_changed", ids.len());
        notes.push((count_notes, arrived - at));
        std::thread::sleep(Duration::from_millis(50));
    }
    let most = notes.iter().map(|n| n.0).max().unwrap();
    let mut lasts: Vec<f64> = notes.iter().map(|n| n.1).collect();
    lasts.sort_by(f64::total_cmp);
    println!(
        "bursts of 300 appends: at most {most} store_changed each; the last entry told {:.1} ms (median) after pi's last append",
        percentile(&lasts, 0.5)
    );
    drop(pi.to);
    drop(pi_alone.to);
    let _ = pi.child.wait();
    let _ = pi_alone.child.wait();
    let _ = call(5, "shutdown", Value::Null);
    let _ = server.kill();
    let _ = server.wait();
    println!("load average after: {}", load());
}
