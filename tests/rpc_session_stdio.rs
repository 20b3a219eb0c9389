//! A whole session through the built binary over real pipes, in each framing: initialize with
//! hooks, create, append user/assistant/tool messages, label, navigate (the hook vetoes once,
//! then supplies the summary), fork, build the context, shutdown, exit 0. Every byte on stdout
//! must belong to a valid frame. The written files, opened by pi's own code (the oracle), must
//! give the same context as `session/buildContext`.

#[path = "support/comparisons.rs"]
mod comparisons;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Wire {
    Lsp,
    Ndjson,
}

/// A client over the child's pipes. A reader thread checks every byte of stdout as it parses
/// it into messages; anything that is not a valid frame holding a JSON-RPC object fails.
struct PipeClient {
    child: Child,
    stdin: Option<ChildStdin>,
    wire: Wire,
    messages: Receiver<Value>,
    reader: Option<JoinHandle<()>>,
    next_id: u64,
    /// Notifications received, in order.
    notifications: Vec<Value>,
}

impl PipeClient {
    fn spawn(wire: Wire) -> Self {
        let mut child = Command::new(BIN)
            .arg("--stdio")
            .env("PI_SESSION_LOG", "info")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
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

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        let bytes = match self.wire {
            Wire::Lsp => format!("Content-Length: {}\r\n\r\n{body}", body.len()),
            Wire::Ndjson => format!("{body}\n"),
        };
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes.as_bytes()).expect("write stdin");
        stdin.flush().expect("flush stdin");
    }

    fn recv(&mut self) -> Value {
        self.messages
            .recv_timeout(Duration::from_secs(20))
            .expect("a server message in time")
    }

    /// Sends a request and reads until its response, answering hooks with `hook(method,
    /// params)` and keeping notifications. Returns the whole response.
    fn call_with(
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
    fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.call_with(method, params, &mut |name, _| {
            panic!("unexpected hook {name}")
        });
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// `exit`, then the exit code; fails if stdout had anything after the last frame.
    fn exit(mut self) -> Option<i32> {
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

fn assistant(text: &str, tool_call: Option<&str>, timestamp: u64) -> Value {
    let mut content = vec![json!({"type": "text", "text": text})];
    if let Some(id) = tool_call {
        content.push(json!({"type": "toolCall", "id": id, "name": "read", "arguments": {"path": "notes.txt"}}));
    }
    json!({
        "role": "assistant", "content": content, "api": "anthropic-messages",
        "provider": "anthropic", "model": "claude-sonnet-4-5",
        "usage": {"input": 120, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150,
                  "cost": {"input": 0.00036, "output": 0.00045, "cacheRead": 0, "cacheWrite": 0, "total": 0.00081}},
        "stopReason": if tool_call.is_some() { "toolUse" } else { "stop" },
        "timestamp": timestamp
    })
}

fn message(session: &str, message: Value) -> Value {
    json!({"sessionId": session, "entry": {"type": "message", "message": message}})
}

/// What the scenario leaves behind for the oracle.
struct Outcome {
    /// `(file, context from session/buildContext)` for the session and its fork.
    contexts: Vec<(PathBuf, Value)>,
}

fn scenario(wire: Wire, root: &Path) -> Outcome {
    let mut client = PipeClient::spawn(wire);
    let init = client.call(
        "initialize",
        json!({
            "clientInfo": {"name": "pipes-test"},
            "hooks": ["session_before_tree", "session_before_fork"],
            "hookTimeoutMs": 10000,
            "sessionsRoot": root.join("sessions"),
        }),
    );
    let framing = match wire {
        Wire::Lsp => "lsp",
        Wire::Ndjson => "ndjson",
    };
    assert_eq!(init["settings"]["framing"], framing);
    client.send(&json!({"jsonrpc": "2.0", "method": "initialized"}));

    let created = client.call("session/create", json!({"cwd": root.join("project")}));
    let sid = created["sessionId"].as_str().unwrap().to_owned();
    let path = PathBuf::from(created["path"].as_str().unwrap());
    assert_eq!(created["written"], false);

    let append = |client: &mut PipeClient, params: Value| -> String {
        let result = client.call("session/append", params);
        assert_eq!(result["entryId"], result["leafId"]);
        result["entryId"].as_str().unwrap().to_owned()
    };
    let user1 = append(
        &mut client,
        message(
            &sid,
            json!({"role": "user", "content": "Summarize notes.txt", "timestamp": 1}),
        ),
    );
    assert!(
        !path.exists(),
        "pi-cli writes nothing before the first assistant message"
    );
    let tool_turn = append(
        &mut client,
        message(&sid, assistant("Reading it.", Some("call_1"), 2)),
    );
    assert!(path.exists(), "written at the first assistant message");
    append(
        &mut client,
        message(
            &sid,
            json!({"role": "toolResult", "toolCallId": "call_1", "toolName": "read",
                   "content": [{"type": "text", "text": "buy milk\ncall Bob"}], "isError": false,
                   "timestamp": 3}),
        ),
    );
    append(
        &mut client,
        message(&sid, assistant("Two items: milk and Bob.", None, 4)),
    );
    append(
        &mut client,
        message(
            &sid,
            json!({"role": "user", "content": [{"type": "text", "text": "Now in French"}], "timestamp": 5}),
        ),
    );
    append(
        &mut client,
        message(&sid, assistant("Deux choses : du lait et Bob.", None, 6)),
    );
    // The label entry becomes the leaf, as in pi.
    let old_leaf = append(
        &mut client,
        json!({"sessionId": sid, "entry": {"type": "label", "targetId": user1, "label": "start"}}),
    );

    // Navigate back to the tool turn: the hook vetoes the first time...
    let navigate = json!({"sessionId": sid, "targetId": tool_turn, "summarize": true});
    let mut hooks_seen = Vec::new();
    let vetoed = client.call_with(
        "session/navigateTree",
        navigate.clone(),
        &mut |name, params| {
            hooks_seen.push((
                name.to_owned(),
                params["preparation"]["entriesToSummarize"]
                    .as_array()
                    .map(Vec::len),
            ));
            json!({"cancel": true})
        },
    );
    assert_eq!(vetoed["result"]["cancelled"], true, "{vetoed}");
    assert!(
        client.notifications.is_empty(),
        "a vetoed navigation sends no session_tree"
    );
    // ... and supplies the summary the second time.
    let navigated = client.call_with("session/navigateTree", navigate, &mut |name, params| {
        hooks_seen.push((name.to_owned(), params["preparation"]["entriesToSummarize"].as_array().map(Vec::len)));
        json!({"summary": {"summary": "The user asked for a French version.", "details": {"readFiles": ["notes.txt"], "modifiedFiles": []}}})
    });
    // Abandoned: toolResult, the answer, the French request and its answer, the label.
    let expected_hook = ("session_before_tree".to_owned(), Some(5));
    assert_eq!(hooks_seen, [expected_hook.clone(), expected_hook]);
    let result = &navigated["result"];
    assert_eq!(result["cancelled"], false, "{navigated}");
    let summary = &result["summaryEntry"];
    assert_eq!(summary["type"], "branch_summary");
    assert_eq!(summary["parentId"], json!(tool_turn));
    assert_eq!(summary["fromHook"], true);
    assert_eq!(result["leafId"], summary["id"]);
    // The notification arrived before the response.
    let [notification] = client.notifications.as_slice() else {
        panic!(
            "one session_tree notification expected: {:?}",
            client.notifications
        );
    };
    assert_eq!(notification["method"], "session_tree");
    assert_eq!(
        notification["params"],
        json!({"sessionId": sid, "newLeafId": summary["id"], "oldLeafId": old_leaf,
               "summaryEntry": summary, "fromExtension": true})
    );

    // Go on from the summary, then fork before the new user message.
    let user3 = append(
        &mut client,
        message(
            &sid,
            json!({"role": "user", "content": "Read it again", "timestamp": 7}),
        ),
    );
    append(
        &mut client,
        message(&sid, assistant("Same two items.", None, 8)),
    );
    let mut fork_hooks = 0;
    let forked = client.call_with(
        "session/fork",
        json!({"sessionId": sid, "entryId": user3, "position": "before"}),
        &mut |name, params| {
            assert_eq!(name, "session_before_fork");
            assert_eq!(params["entryId"], json!(user3));
            fork_hooks += 1;
            json!({})
        },
    );
    assert_eq!(fork_hooks, 1);
    let forked = &forked["result"];
    assert_eq!(forked["cancelled"], false, "{forked}");
    assert_eq!(forked["selectedText"], "Read it again");
    let fork_id = forked["session"]["sessionId"].as_str().unwrap().to_owned();
    let fork_path = PathBuf::from(forked["session"]["path"].as_str().unwrap());
    assert_eq!(forked["session"]["header"]["parentSession"], json!(path));

    let context = client.call("session/buildContext", json!({"sessionId": sid}));
    let fork_context = client.call("session/buildContext", json!({"sessionId": fork_id}));
    let roles = |c: &Value| -> Vec<String> {
        c["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        roles(&context),
        ["user", "assistant", "branchSummary", "user", "assistant"]
    );
    assert_eq!(roles(&fork_context), ["user", "assistant", "branchSummary"]);

    let shutdown = client.call("shutdown", Value::Null);
    assert_eq!(shutdown, Value::Null);
    assert_eq!(client.exit(), Some(0));
    Outcome {
        contexts: vec![(path, context), (fork_path, fork_context)],
    }
}

/// `node target/oracle/pi-oracle.mjs`, when Node and the oracle's packages are installed.
fn oracle() -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/oracle/pi-oracle.mjs");
    let installed = script.with_file_name("node_modules").is_dir();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    (installed && node).then_some(script)
}

fn oracle_context(script: &Path, file: &Path) -> Value {
    let output = Command::new("node")
        .arg(script)
        .arg("context")
        .arg(file)
        .output()
        .expect("run the oracle");
    assert!(
        output.status.success(),
        "oracle failed on {}: {}",
        file.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let document: Value = serde_json::from_slice(&output.stdout).expect("oracle output is JSON");
    comparisons::count("rpc session stdio: context", 1);
    document["context"].clone()
}

fn run(wire: Wire) {
    let dir = tempfile::tempdir().unwrap();
    let outcome = scenario(wire, dir.path());
    let Some(script) = oracle() else {
        println!("skipped: the oracle comparison needs node and `bash scripts/setup-oracle.sh`");
        return;
    };
    for (file, context) in &outcome.contexts {
        assert_eq!(
            &oracle_context(&script, file),
            context,
            "pi sees another context in {}",
            file.display()
        );
    }
}

#[test]
fn a_whole_session_over_ndjson_matches_the_oracle() {
    run(Wire::Ndjson);
}

#[test]
fn a_whole_session_over_lsp_framing_matches_the_oracle() {
    run(Wire::Lsp);
}
