//! How soon a watching client hears of pi's appends: pi's own SessionManager (0.82.1, from
//! Node, tests/oracle/pi-watch-append.mjs) appends one message at a time to a session file
//! the server watches (`session/watch`), and the time from pi's append returning to the
//! `session_changed` carrying it reaching the client is taken (wall clock on both sides, no
//! request sent). Then bursts: how many notifications carry 300 appends written at once.
//!
//! `cargo bench --bench watch_latency`; `WATCH_APPENDS=N` (default 300). Needs the oracle
//! install in target/oracle (the test suite makes it on first use).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

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

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let oracle = root.join("target/oracle");
    let node = oracle.join("node_modules/node/bin/node");
    assert!(
        node.exists(),
        "no oracle install in {} (run the test suite once)",
        oracle.display()
    );
    let appends: usize = std::env::var("WATCH_APPENDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    println!("load average before: {}", load());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("watched.jsonl");
    let assistant = json!({"type": "message", "id": "a0", "parentId": "u0",
        "timestamp": "2026-01-01T00:00:02.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop", "timestamp": 2}});
    std::fs::write(
        &path,
        format!(
            "{}\n{}\n{assistant}\n",
            r#"{"type":"session","version":3,"id":"bench-watch","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
            r#"{"type":"message","id":"u0","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        ),
    )
    .unwrap();

    let mut server = Command::new(BIN)
        .args(["--stdio", "--framing", "ndjson", "--no-index"])
        .env("PI_SESSION_LOG", "error")
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
            let (_, answer) = messages.recv_timeout(Duration::from_secs(30)).unwrap();
            if answer["id"] == id {
                assert!(answer.get("error").is_none(), "{answer}");
                return answer["result"].clone();
            }
        }
    };
    call(1, "initialize", json!({}));
    call(2, "session/open", json!({"path": path}));
    call(3, "session/watch", json!({"sessionId": "bench-watch"}));

    let mut pi = Command::new(&node)
        .arg(root.join("tests/oracle/pi-watch-append.mjs"))
        .arg(&oracle)
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_pi = pi.stdin.take().unwrap();
    let mut from_pi = BufReader::new(pi.stdout.take().unwrap());
    let mut append = |count: usize, seed: usize| -> (usize, f64) {
        writeln!(to_pi, "{}", json!({"count": count, "seed": seed})).unwrap();
        to_pi.flush().unwrap();
        let mut line = String::new();
        from_pi.read_line(&mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        (
            answer["ids"].as_array().unwrap().len(),
            answer["at"].as_f64().unwrap(),
        )
    };
    let told = |expected: usize| -> (usize, f64) {
        let (mut entries, mut notes, mut last) = (0, 0, 0.0);
        while entries < expected {
            let (at, message) = messages.recv_timeout(Duration::from_secs(10)).unwrap();
            assert_eq!(message["method"], "session_changed", "{message}");
            entries += message["params"]["entriesAdded"].as_u64().unwrap() as usize;
            notes += 1;
            last = at;
        }
        (notes, last)
    };

    // One at a time, at pauses of 20-60 ms (a model streaming turns appends far less often).
    let mut latencies = Vec::new();
    for n in 0..appends {
        std::thread::sleep(Duration::from_millis(20 + (n as u64 * 7919) % 41));
        let (count, at) = append(1, n);
        let (_, arrived) = told(count);
        latencies.push(arrived - at);
    }
    latencies.sort_by(f64::total_cmp);
    println!(
        "pi's append -> session_changed at the client ({appends} appends, one at a time): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies[latencies.len() - 1]
    );
    let mut notes = Vec::new();
    for n in 0..10 {
        let (count, at) = append(300, appends + n);
        let (count_notes, arrived) = told(count);
        notes.push((count_notes, arrived - at));
        std::thread::sleep(Duration::from_millis(50));
    }
    let most = notes.iter().map(|n| n.0).max().unwrap();
    let mut lasts: Vec<f64> = notes.iter().map(|n| n.1).collect();
    lasts.sort_by(f64::total_cmp);
    println!(
        "bursts of 300 appends: at most {most} notification(s) each; the last entry told {:.1} ms (median) after pi's last append",
        percentile(&lasts, 0.5)
    );
    drop(to_pi);
    let _ = pi.wait();
    let _ = call(4, "shutdown", Value::Null);
    let _ = server.kill();
    let _ = server.wait();
    println!("load average after: {}", load());
}
