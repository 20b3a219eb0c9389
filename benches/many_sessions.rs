//! One server holding many sessions open: a generated 10 MB session (`MANY_SIZE`) copied to
//! 1,000 files (`MANY_COUNT`) under `target/bench/many-sessions/`, all opened by one
//! `pi-session --stdio` (`session/open`), first with no persisted index (each open reads its
//! file and writes its index), then again in a fresh server from the current indexes. Reports
//! the server's resident memory from /proc (`VmHWM`, the peak, and `VmRSS`) before and after,
//! and the memory each entry costs. The copies and their indexes are removed at the end.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use pi_session::internal::format::profile::Profile;
use pi_session::internal::store::{Session, SessionOptions};
use serde_json::{Value, json};

#[path = "support/side_by_side.rs"]
mod side_by_side;

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

struct Server {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Server {
    fn start(index_dir: &Path) -> Server {
        let mut child = Command::new(BIN)
            .arg("--stdio")
            .env("PI_SESSION_INDEX_DIR", index_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server {
            child,
            input,
            output,
            next: 0,
        };
        server.call("initialize", json!({}));
        server
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let request =
            json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        writeln!(self.input, "{request}").unwrap();
        self.input.flush().unwrap();
        let mut line = Vec::new();
        self.output.read_until(b'\n', &mut line).unwrap();
        let answer: Value = serde_json::from_slice(&line).expect("a JSON answer");
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// `VmHWM` and `VmRSS` in KiB.
    fn memory_kib(&self) -> (f64, f64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .unwrap_or(0.0)
        };
        (field("VmHWM:"), field("VmRSS:"))
    }

    fn stop(self) {
        drop(self.input);
        let mut child = self.child;
        let _ = child.wait();
    }
}

/// Opens every file in one fresh server and prints what it cost.
fn open_all(what: &str, files: &[PathBuf], entries: u64, index_dir: &Path) {
    let mut server = Server::start(index_dir);
    let (_, before) = server.memory_kib();
    let started = Instant::now();
    for file in files {
        server.call("session/open", json!({"path": file, "profile": "pi-cli"}));
    }
    let wall = started.elapsed().as_secs_f64();
    let (peak, now) = server.memory_kib();
    println!(
        "{what:<28} {:>8.2} s {:>9.1} MB {:>9.1} MB {:>9.1} MB {:>10} {:>9.1} B",
        wall,
        before / 1024.0,
        now / 1024.0,
        peak / 1024.0,
        entries,
        (now - before) * 1024.0 / entries as f64
    );
    server.stop();
}

fn main() {
    let size = std::env::var("MANY_SIZE").unwrap_or_else(|_| "10MB".into());
    let count: usize = std::env::var("MANY_COUNT")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(1000);
    let source = side_by_side::generated_of_size(&size);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench/many-sessions");
    let (sessions, index_dir) = (root.join("sessions"), root.join("index"));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&sessions).unwrap();
    let files: Vec<PathBuf> = (0..count)
        .map(|i| {
            let file = sessions.join(format!("session-{i:04}.jsonl"));
            std::fs::copy(&source, &file).expect("the copy is made");
            file
        })
        .collect();
    println!(
        "{count} sessions of {} ({:.1} MB each) open in one server over stdio",
        source.display(),
        std::fs::metadata(&source).unwrap().len() as f64 / 1e6
    );
    println!(
        "{:<28} {:>10} {:>12} {:>12} {:>12} {:>10} {:>11}",
        "", "wall", "RSS before", "RSS after", "peak RSS", "entries", "per entry"
    );
    // Every copy holds what the source does.
    let per_session = Session::open_read_only(&source, SessionOptions::with_profile(Profile::PiCli))
        .expect("the session opens")
        .len() as u64;
    let entries = per_session * count as u64;
    open_all("no index (reads, writes)", &files, entries, &index_dir);
    open_all("current index", &files, entries, &index_dir);
    let _ = std::fs::remove_dir_all(&root);
}
