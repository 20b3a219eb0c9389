//! Append round trips over stdio: `session/append` to a file-backed session (pi-cli profile)
//! through the built binary, one request in flight at a time ("sequential") and with every
//! request written before the answers are read ("pipelined").
//!
//! `cargo bench --bench append_roundtrip` prints, in one run: the latency of sequential durable
//! and non-durable appends beside the disk's own floor (a 300-byte write + `fdatasync` loop on
//! a file in the same directory), taken in turn one by one in rotating order; the throughput of pipelined
//! durable appends with group commit and with one sync per append
//! (`PI_SESSION_NO_GROUP_COMMIT`); and non-durable appends per second in both framings. The
//! load average is printed before and after: figures from a loaded machine are not the
//! project's. `LATENCY_APPENDS=N` sets the timed and the pipelined durable appends (default
//! 2000), `APPENDS=N` the non-durable ones (default 20000).

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

/// A server with one file-backed pi-cli session in `dir`, driven one ndjson message at a time.
struct Served {
    child: std::process::Child,
    input: BufWriter<std::process::ChildStdin>,
    output: BufReader<ChildStdout>,
    session: String,
    next_id: u64,
}

impl Served {
    fn start(dir: &std::path::Path, durable: bool, group_commit: bool) -> Served {
        let mut command = Command::new(BIN);
        command
            .arg("--stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if !group_commit {
            command.env("PI_SESSION_NO_GROUP_COMMIT", "1");
        }
        let mut child = command.spawn().expect("spawn pi-session");
        let mut served = Served {
            input: BufWriter::new(child.stdin.take().unwrap()),
            output: BufReader::new(child.stdout.take().unwrap()),
            child,
            session: String::new(),
            next_id: 1,
        };
        served.call(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}));
        let created = served.call(
            json!({"jsonrpc": "2.0", "id": 0, "method": "session/create",
            "params": {"cwd": "/bench", "sessionDir": dir, "durable": durable}}),
        );
        served.session = created["result"]["sessionId"].as_str().unwrap().to_owned();
        // pi-cli writes the file at the first assistant message (a durable session at its
        // first entry): from then on every append is one line added to the file.
        let first = json!({"jsonrpc": "2.0", "id": 0, "method": "session/append", "params": {
            "sessionId": served.session, "entry": {"type": "message", "message": {
                "role": "assistant", "content": [], "provider": "p", "model": "m",
                "stopReason": "stop", "timestamp": 0}}}});
        assert!(served.call(first).get("result").is_some());
        served
    }

    fn call(&mut self, message: Value) -> Value {
        self.input
            .write_all(&frame(Wire::Ndjson, &message))
            .unwrap();
        self.input.flush().unwrap();
        read(Wire::Ndjson, &mut self.output)
    }

    /// One append, answered: its round trip in milliseconds.
    fn timed_append(&mut self) -> f64 {
        let id = self.next_id;
        self.next_id += 1;
        let started = Instant::now();
        let answer = self.call(append(id, &self.session));
        let ms = started.elapsed().as_secs_f64() * 1e3;
        assert_eq!(answer["id"], id, "{answer}");
        ms
    }

    /// `count` appends all written before any answer is read: appends per second.
    fn pipelined(&mut self, count: u64) -> f64 {
        let first = self.next_id;
        self.next_id += count;
        let mut batch = Vec::new();
        for id in first..first + count {
            batch.extend_from_slice(&frame(Wire::Ndjson, &append(id, &self.session)));
        }
        let started = Instant::now();
        std::thread::scope(|scope| {
            let input = &mut self.input;
            scope.spawn(move || {
                input.write_all(&batch).unwrap();
                input.flush().unwrap();
            });
            for id in first..first + count {
                let answer = read(Wire::Ndjson, &mut self.output);
                assert_eq!(answer["id"], id, "answers in request order: {answer}");
            }
        });
        count as f64 / started.elapsed().as_secs_f64()
    }

    fn finish(mut self) {
        self.call(json!({"jsonrpc": "2.0", "id": 0, "method": "shutdown"}));
        self.input
            .write_all(&frame(
                Wire::Ndjson,
                &json!({"jsonrpc": "2.0", "method": "exit"}),
            ))
            .unwrap();
        self.input.flush().unwrap();
        assert!(self.child.wait().unwrap().success());
    }
}

/// The disk's own floor: one 300-byte line appended and `fdatasync`ed, in milliseconds.
struct Floor(std::fs::File);

impl Floor {
    fn timed_append(&mut self) -> f64 {
        let line = [b'x'; 300];
        let started = Instant::now();
        self.0.write_all(&line).unwrap();
        self.0.sync_data().unwrap();
        started.elapsed().as_secs_f64() * 1e3
    }
}

/// Where the timed files go: `target/bench`, on the disk the project is built on.
fn bench_dir() -> tempfile::TempDir {
    let base = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(&base).expect("temp dir")
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

struct Percentiles(Vec<f64>);

impl std::fmt::Display for Percentiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut times = self.0.clone();
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
        // The quartiles too: on a disk shared with other writers a sync takes either about
        // 0.2 ms or about 4 ms, phases lasting seconds, and p50 alone flips between the two.
        write!(
            f,
            "p50 {:.3} ms   p99 {:.3} ms   max {:.3} ms   (p10 {:.3}  p25 {:.3}  p75 {:.3}  p90 {:.3})",
            at(0.5),
            at(0.99),
            times[times.len() - 1],
            at(0.1),
            at(0.25),
            at(0.75),
            at(0.9)
        )
    }
}

/// Sequential appends (one in flight) to a durable and a non-durable session, and the disk's
/// floor beside them, taken in turn one by one so that a change of load on the machine (or of
/// the disk's own pace, which changes by the second while other programs write) falls on all
/// three alike.
fn latencies(timed: u64) {
    let dir = bench_dir();
    let mut durable = Served::start(&dir.path().join("durable"), true, true);
    let mut plain = Served::start(&dir.path().join("plain"), false, true);
    let mut floor = Floor(
        std::fs::OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(dir.path().join("floor"))
            .unwrap(),
    );
    let (mut disk, mut synced, mut unsynced) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..timed {
        // A sync right after another one pays for it on this disk: the order rotates, so each
        // kind follows each other kind equally often.
        for kind in (0..3).map(|k| (k + i) % 3) {
            match kind {
                0 => disk.push(floor.timed_append()),
                1 => synced.push(durable.timed_append()),
                _ => unsynced.push(plain.timed_append()),
            }
        }
    }
    println!("  disk floor (write + fdatasync): {}", Percentiles(disk));
    println!("  durable append:                 {}", Percentiles(synced));
    println!(
        "  non-durable append:             {}",
        Percentiles(unsynced)
    );
    durable.finish();
    plain.finish();
}

/// Durable appends all written before any answer is read, with group commit and with every
/// append synced on its own: appends per second, taken in alternating rounds.
fn pipelined_durable(count: u64) {
    let dir = bench_dir();
    let mut grouped = Served::start(&dir.path().join("grouped"), true, true);
    let mut alone = Served::start(&dir.path().join("alone"), true, false);
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..4 {
        with.push(grouped.pipelined(count / 4));
        without.push(alone.pipelined(count / 4));
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    println!(
        "  group commit {:>8.0} appends/s   one sync per append {:>8.0} appends/s   ({:.1}x)",
        mean(&with),
        mean(&without),
        mean(&with) / mean(&without)
    );
    grouped.finish();
    alone.finish();
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
    println!("load average before: {}", load());
    println!(
        "session/append latency over stdio (ndjson, one at a time), {timed} appends each, files in target/bench"
    );
    latencies(timed);
    println!("durable session/append pipelined over stdio (ndjson), {timed} appends each");
    pipelined_durable(timed);
    println!("session/append round trips over stdio, {appends} appends each, no fsync");
    for (name, wire) in [("ndjson", Wire::Ndjson), ("lsp", Wire::Lsp)] {
        let figures = measure(wire, appends);
        println!(
            "{name:>6}: sequential {:>8.0} appends/s   pipelined {:>8.0} appends/s",
            figures.sequential, figures.pipelined
        );
    }
    println!("load average after: {}", load());
}
