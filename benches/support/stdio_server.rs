#![allow(dead_code)] // each benchmark uses part of it
//! A `pi-session --stdio` server for benchmarks, answering one request at a time.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

pub struct Server {
    pub child: std::process::Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Server {
    /// Starts `command` (the built server, with its arguments and environment) and
    /// initializes it.
    pub fn start(mut command: Command) -> Server {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
        let mut server = Server {
            child,
            input,
            output,
            next: 0,
        };
        server.call("initialize", json!({}));
        server
    }

    /// Sends one request and reads its answer line; the time covers writing and reading only.
    pub fn timed(&mut self, method: &str, params: Value) -> (f64, Vec<u8>) {
        self.next += 1;
        let request =
            json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        let mut bytes = request.to_string().into_bytes();
        bytes.push(b'\n');
        let mut line = Vec::new();
        let started = Instant::now();
        self.input.write_all(&bytes).unwrap();
        self.input.flush().unwrap();
        self.output.read_until(b'\n', &mut line).unwrap();
        (started.elapsed().as_secs_f64() * 1000.0, line)
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let (_, line) = self.timed(method, params);
        let answer: Value = serde_json::from_slice(&line).expect("a JSON answer");
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// A `/proc/PID/status` figure in KiB (`VmHWM`: the peak resident set; `VmRSS`: now).
    pub fn memory_kib(&self, field: &str) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0.0)
    }

    pub fn peak_rss_mb(&self) -> f64 {
        self.memory_kib("VmHWM") / 1024.0
    }

    /// Closes the server's input and waits for it to stop.
    pub fn stop(self) {
        drop(self.input);
        let mut child = self.child;
        let _ = child.wait();
    }
}
