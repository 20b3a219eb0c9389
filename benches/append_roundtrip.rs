//! Append round trips over stdio: `session/append` to a file-backed session (pi-cli profile,
//! no fsync) through the built binary, one request in flight at a time ("sequential") and with
//! every request written before the answers are read ("pipelined"), in both framings.
//!
//! `cargo bench --bench append_roundtrip` prints appends per second. `APPENDS=N` sets the
//! number of appends per measurement (default 20000).

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::process::{ChildStdout, Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

#[derive(Clone, Copy)]
enum Wire {
    Ndjson,
    Lsp,
}

fn frame(wire: Wire, message: &Value) -> Vec<u8> {
    let body = message.to_string();
    match wire {
        Wire::Ndjson => format!("{body}\n").into_bytes(),
        Wire::Lsp => format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes(),
    }
}

fn read(wire: Wire, out: &mut BufReader<ChildStdout>) -> Value {
    let mut line = String::new();
    match wire {
        Wire::Ndjson => {
            out.read_line(&mut line).expect("read");
            serde_json::from_str(&line).expect("a JSON message")
        }
        Wire::Lsp => {
            out.read_line(&mut line).expect("read");
            let length: usize = line["Content-Length: ".len()..]
                .trim()
                .parse()
                .expect("length");
            line.clear();
            out.read_line(&mut line).expect("read");
            let mut body = vec![0; length];
            out.read_exact(&mut body).expect("read body");
            serde_json::from_slice(&body).expect("a JSON message")
        }
    }
}

fn append(id: u64, session: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/append", "params": {
        "sessionId": session,
        "entry": {"type": "message", "message": {
            "role": "user", "content": format!("message number {id}, a line of ordinary length"),
            "timestamp": id}}}})
}

struct Figures {
    sequential: f64,
    pipelined: f64,
}

fn measure(wire: Wire, appends: u64) -> Figures {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(BIN)
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn pi-session");
    let mut input = BufWriter::new(child.stdin.take().unwrap());
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let send = |input: &mut BufWriter<_>, message: &Value, flush: bool| {
        input.write_all(&frame(wire, message)).unwrap();
        if flush {
            input.flush().unwrap();
        }
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}});
    send(&mut input, &init, true);
    read(wire, &mut output);
    let create = json!({"jsonrpc": "2.0", "id": 0, "method": "session/create",
                        "params": {"cwd": "/bench", "sessionDir": dir.path()}});
    send(&mut input, &create, true);
    let session = read(wire, &mut output)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    // pi-cli writes the file at the first assistant message; from then on every append is a
    // write to the file.
    let first = json!({"jsonrpc": "2.0", "id": 0, "method": "session/append", "params": {
        "sessionId": session, "entry": {"type": "message", "message": {
            "role": "assistant", "content": [], "provider": "p", "model": "m",
            "stopReason": "stop", "timestamp": 0}}}});
    send(&mut input, &first, true);
    assert!(read(wire, &mut output).get("result").is_some());

    let started = Instant::now();
    for id in 1..=appends {
        send(&mut input, &append(id, &session), true);
        let answer = read(wire, &mut output);
        assert_eq!(answer["id"], id, "{answer}");
    }
    let sequential = appends as f64 / started.elapsed().as_secs_f64();

    let started = Instant::now();
    let writer = std::thread::spawn({
        let session = session.clone();
        move || {
            for id in appends + 1..=2 * appends {
                input
                    .write_all(&frame(wire, &append(id, &session)))
                    .unwrap();
            }
            input.flush().unwrap();
            input
        }
    });
    for id in appends + 1..=2 * appends {
        let answer = read(wire, &mut output);
        assert_eq!(answer["id"], id, "{answer}");
    }
    let pipelined = appends as f64 / started.elapsed().as_secs_f64();
    let mut input = writer.join().unwrap();

    let shutdown = json!({"jsonrpc": "2.0", "id": 0, "method": "shutdown"});
    input.write_all(&frame(wire, &shutdown)).unwrap();
    input
        .write_all(&frame(wire, &json!({"jsonrpc": "2.0", "method": "exit"})))
        .unwrap();
    input.flush().unwrap();
    read(wire, &mut output);
    assert!(child.wait().unwrap().success());
    let file = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let lines = std::fs::read_to_string(file).unwrap().lines().count() as u64;
    assert_eq!(lines, 2 * appends + 2, "header + assistant + every append");
    Figures {
        sequential,
        pipelined,
    }
}

/// Per-request latency of sequential `session/append`s (ndjson), durable or not: the session's
/// file in `target/bench` (this disk), each append acknowledged after its fsync when durable.
/// Returns the sorted latencies in milliseconds.
fn latencies(durable: bool, appends: u64) -> Vec<f64> {
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    std::fs::create_dir_all(&base).unwrap();
    let dir = tempfile::tempdir_in(&base).expect("temp dir");
    let mut child = Command::new(BIN)
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn pi-session");
    let mut input = BufWriter::new(child.stdin.take().unwrap());
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut call = |message: Value| {
        input.write_all(&frame(Wire::Ndjson, &message)).unwrap();
        input.flush().unwrap();
        read(Wire::Ndjson, &mut output)
    };
    call(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}));
    let created = call(
        json!({"jsonrpc": "2.0", "id": 0, "method": "session/create",
        "params": {"cwd": "/bench", "sessionDir": dir.path(), "durable": durable}}),
    );
    let session = created["result"]["sessionId"].as_str().unwrap().to_owned();
    let mut times = Vec::with_capacity(appends as usize);
    for id in 1..=appends {
        let started = Instant::now();
        let answer = call(append(id, &session));
        times.push(started.elapsed().as_secs_f64() * 1e3);
        assert_eq!(answer["id"], id, "{answer}");
    }
    call(json!({"jsonrpc": "2.0", "id": 0, "method": "shutdown"}));
    input
        .write_all(&frame(
            Wire::Ndjson,
            &json!({"jsonrpc": "2.0", "method": "exit"}),
        ))
        .unwrap();
    input.flush().unwrap();
    assert!(child.wait().unwrap().success());
    times.sort_by(f64::total_cmp);
    times
}

fn main() {
    let appends: u64 = std::env::var("APPENDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let timed: u64 = std::env::var("LATENCY_APPENDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2_000);
    println!("session/append latency over stdio (ndjson, one at a time), {timed} appends each");
    for durable in [false, true] {
        let times = latencies(durable, timed);
        let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
        println!(
            "  durable {durable:<5}: p50 {:.3} ms   p99 {:.3} ms   max {:.3} ms",
            at(0.5),
            at(0.99),
            times[times.len() - 1]
        );
    }
    println!("session/append round trips over stdio, {appends} appends each, no fsync");
    for (name, wire) in [("ndjson", Wire::Ndjson), ("lsp", Wire::Lsp)] {
        let figures = measure(wire, appends);
        println!(
            "{name:>6}: sequential {:>8.0} appends/s   pipelined {:>8.0} appends/s",
            figures.sequential, figures.pipelined
        );
    }
}
