//! The reads a tree UI makes, over stdio, beside pi's in-memory figures in the same run: a
//! generated session (`BENCH_SIZE`, default 100 MB, made once under `target/bench/`) is opened
//! by the built server; `session/getTree` (all rows, a page, a window around the leaf in pi's
//! default filter), `session/getBranch` (whole and a page) and a `getEntries` page are each
//! timed from the request's first byte written to the answer's last byte read (the client does
//! not parse it within the timing), the first (which computes or reads the previews when no
//! earlier request did), best and median of `BENCH_RUNS` (default 5). The server's
//! peak RSS (`VmHWM`) is read from /proc after the open and after each request kind. pi's side:
//! `benches/pi-tree-reads.mjs` (getTree(), getBranch() and its `/tree` selector, in memory).

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

#[path = "support/side_by_side.rs"]
mod side_by_side;
#[path = "support/stdio_server.rs"]
mod stdio_server;

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let (file, runs) = side_by_side::generated_with_runs(5);
    let megabytes = std::fs::metadata(&file).unwrap().len() as f64 / 1e6;
    println!(
        "tree reads of {} ({megabytes:.1} MB), over stdio, best/median of {runs}",
        file.display()
    );

    let mut command = Command::new(BIN);
    command.arg("--stdio");
    let mut server = stdio_server::Server::start(command);
    let opened = server.call("session/open", json!({"path": file, "profile": "pi-cli"}));
    let session = opened["sessionId"].as_str().unwrap().to_string();
    let leaf = opened["leafId"].clone();
    println!("server peak RSS after open: {:.1} MB", server.peak_rss_mb());

    let requests: Vec<(&str, &str, Value)> = vec![
        (
            "getTree, all rows",
            "session/getTree",
            json!({"sessionId": session}),
        ),
        (
            "getTree, 50 rows at 1000",
            "session/getTree",
            json!({"sessionId": session, "offset": 1000, "limit": 50}),
        ),
        (
            "getTree, default filter, 50 around the leaf",
            "session/getTree",
            json!({"sessionId": session, "filter": "default", "around": leaf, "limit": 50}),
        ),
        (
            "getTree, default filter, all rows",
            "session/getTree",
            json!({"sessionId": session, "filter": "default"}),
        ),
        (
            "getBranch, whole",
            "session/getBranch",
            json!({"sessionId": session}),
        ),
        (
            "getBranch, 100 at 1000",
            "session/getBranch",
            json!({"sessionId": session, "offset": 1000, "limit": 100}),
        ),
        (
            "getEntries, 1000 at 0",
            "session/getEntries",
            json!({"sessionId": session, "limit": 1000}),
        ),
    ];
    println!(
        "{:<46} {:>10} {:>10} {:>10} {:>11} {:>12}",
        "request", "first", "best", "median", "answer", "peak RSS"
    );
    for (name, method, params) in requests {
        let mut times = Vec::new();
        let mut bytes = 0;
        for _ in 0..runs {
            let (ms, line) = server.timed(method, params.clone());
            let answer: Value = serde_json::from_slice(&line).expect("a JSON answer");
            assert!(answer.get("error").is_none(), "{name}: {answer}");
            bytes = line.len();
            times.push(ms);
        }
        let first = times[0];
        times.sort_by(f64::total_cmp);
        println!(
            "{name:<46} {first:>7.1} ms {:>7.1} ms {:>7.1} ms {:>8.2} MB {:>9.1} MB",
            times[0],
            times[times.len() / 2],
            bytes as f64 / 1e6,
            server.peak_rss_mb()
        );
    }
    server.stop();

    let pi = Command::new("node")
        .arg(root.join("benches/pi-tree-reads.mjs"))
        .arg(root.join("target/oracle"))
        .arg(&file)
        .arg(runs.to_string())
        .output()
        .expect("node runs pi's side");
    assert!(
        pi.status.success(),
        "pi's side failed: {}",
        String::from_utf8_lossy(&pi.stderr)
    );
    let pi: Value = serde_json::from_slice(&pi.stdout).expect("pi's figures");
    println!(
        "pi 0.82.1 in memory (best of {runs}): getTree() {:.1} ms, getBranch() {:.1} ms ({} entries), /tree selector (default filter, {} rows) {:.1} ms",
        pi["getTree"].as_f64().unwrap(),
        pi["getBranch"].as_f64().unwrap(),
        pi["branchEntries"],
        pi["selectorRows"],
        pi["selectorDefault"].as_f64().unwrap()
    );
}
