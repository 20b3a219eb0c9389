//! One client of `pi-session --stdio` over real pipes, in either framing. A reader thread checks
//! every byte of stdout as it parses it into messages; anything that is not a valid frame holding
//! a JSON-RPC object fails the test.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Wire {
    Lsp,
    Ndjson,
}

/// A client over the child's pipes. A reader thread checks every byte of stdout as it parses
/// it into messages; anything that is not a valid frame holding a JSON-RPC object fails.
pub struct PipeClient {
    child: Child,
    stdin: Option<ChildStdin>,
    wire: Wire,
    messages: Receiver<Value>,
    reader: Option<JoinHandle<()>>,
    next_id: u64,
    /// Notifications received, in order.
    pub notifications: Vec<Value>,
}

impl PipeClient {
    /// `pi-session --stdio`, its stderr dropped.
    pub fn spawn(wire: Wire) -> Self {
        Self::spawn_with(wire, |command| {
            command.env("PI_SESSION_LOG", "info").stderr(Stdio::null());
        })
    }

    /// `pi-session --stdio` with the process set up by `configure` (directory, environment).
    pub fn spawn_with(wire: Wire, configure: impl FnOnce(&mut Command)) -> Self {
        let mut command = Command::new(BIN);
        command.arg("--stdio");
        configure(&mut command);
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn pi-session");
        let stdout = child.stdout.take().expect("stdout");
        let (send, messages) = channel();
        let reader = std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            while let Some(message) = read_frame(&mut stdout, wire) {
                if send.send(message).is_err() {
                    return;
                }
            }
        });
        PipeClient {
            stdin: child.stdin.take(),
            child,
            wire,
            messages,
            reader: Some(reader),
            next_id: 1,
            notifications: Vec::new(),
        }
    }

    pub fn send(&mut self, message: &Value) {
        let body = message.to_string();
        let bytes = match self.wire {
            Wire::Lsp => format!("Content-Length: {}\r\n\r\n{body}", body.len()),
            Wire::Ndjson => format!("{body}\n"),
        };
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes.as_bytes()).expect("write stdin");
        stdin.flush().expect("flush stdin");
    }

    pub fn recv(&mut self) -> Value {
        self.messages
            .recv_timeout(Duration::from_secs(20))
            .expect("a server message in time")
    }

    /// The next server message if one comes within `limit` (a notification nothing asked for).
    pub fn recv_within(&mut self, limit: Duration) -> Option<Value> {
        self.messages.recv_timeout(limit).ok()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends a request and reads until its response, answering hooks with `hook(method,
    /// params)` and keeping notifications. Returns the whole response.
    pub fn call_with(
        &mut self,
        method: &str,
        params: Value,
        hook: &mut dyn FnMut(&str, &Value) -> Value,
    ) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.recv();
            assert_eq!(message["jsonrpc"], "2.0", "{message}");
            if message["id"] == json!(id) {
                return message;
            }
            match (message.get("method"), message.get("id")) {
                (Some(hook_name), Some(hook_id)) => {
                    let answer = hook(hook_name.as_str().unwrap(), &message["params"]);
                    let reply = json!({"jsonrpc": "2.0", "id": hook_id, "result": answer});
                    self.send(&reply);
                }
                (Some(_), None) => self.notifications.push(message),
                _ => panic!("unexpected message while waiting for {id}: {message}"),
            }
        }
    }

    /// A request that must succeed and sends no hook; returns its result.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.call_with(method, params, &mut |name, _| {
            panic!("unexpected hook {name}")
        });
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// `exit`, then the exit code; fails if stdout had anything after the last frame.
    pub fn exit(mut self) -> Option<i32> {
        self.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait for pi-session");
        self.reader
            .take()
            .unwrap()
            .join()
            .expect("stdout was not all valid frames");
        if let Ok(extra) = self.messages.try_recv() {
            panic!("unread server message: {extra}");
        }
        status.code()
    }
}

/// One frame from stdout, checked strictly; `None` at a clean end of output.
fn read_frame(stdout: &mut BufReader<impl Read>, wire: Wire) -> Option<Value> {
    let body = match wire {
        Wire::Ndjson => {
            let mut line = String::new();
            if stdout.read_line(&mut line).expect("read stdout") == 0 {
                return None;
            }
            assert!(line.ends_with('\n'), "unterminated output line {line:?}");
            line.pop();
            line.into_bytes()
        }
        Wire::Lsp => {
            let mut header = String::new();
            if stdout.read_line(&mut header).expect("read stdout") == 0 {
                return None;
            }
            let length: usize = header
                .strip_prefix("Content-Length: ")
                .and_then(|rest| rest.strip_suffix("\r\n"))
                .unwrap_or_else(|| panic!("bad header line {header:?}"))
                .parse()
                .expect("numeric Content-Length");
            let mut blank = String::new();
            stdout.read_line(&mut blank).expect("read stdout");
            assert_eq!(blank, "\r\n", "the header block ends with a blank line");
            let mut body = vec![0; length];
            stdout.read_exact(&mut body).expect("a whole frame body");
            body
        }
    };
    let message: Value = serde_json::from_slice(&body).unwrap_or_else(|e| {
        panic!(
            "frame is not JSON ({e}): {:?}",
            String::from_utf8_lossy(&body)
        )
    });
    assert!(message.is_object(), "not a JSON-RPC message: {message}");
    Some(message)
}

/// The `protocolVersion` the binary's `initialize` answers.
pub fn protocol_version(binary: &str) -> String {
    use std::io::Write;
    let mut child = Command::new(binary)
        .args(["--stdio", "--framing", "ndjson"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run the binary");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let first = String::from_utf8(output.stdout).unwrap();
    let answer: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    answer["result"]["protocolVersion"]
        .as_str()
        .unwrap()
        .to_owned()
}
