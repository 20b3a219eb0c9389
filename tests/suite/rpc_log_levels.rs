//! What the server writes on stderr at its default log level: a front-end's users share that
//! terminal, so expected events (a hook answered after its timeout) stay below it, and a
//! client's real mistake (an answer to an id the server never sent) is still reported.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

fn a_late_hook_answer_is_not_on_stderr_but_an_unknown_id_is() {
    let mut child = Command::new(BIN)
        .args(["--stdio", "--framing", "ndjson"])
        .env_remove("PI_SESSION_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |message: Value| writeln!(input, "{message}").unwrap();
    // The next message from the server that answers `id` (hooks and notifications kept aside).
    let mut next = |want: &dyn Fn(&Value) -> bool| loop {
        let line = output.next().expect("the server answers").unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        if want(&message) {
            return message;
        }
    };
    let answer_to = |id: i64| move |m: &Value| m["id"] == json!(id) && m.get("method").is_none();

    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"hooks": ["session_before_tree"], "hookTimeoutMs": 50}}));
    next(&answer_to(1));
    send(json!({"jsonrpc": "2.0", "method": "initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/create",
        "params": {"cwd": "/tmp/project", "inMemory": true}}),
    );
    let session = next(&answer_to(2))["result"]["sessionId"].clone();
    let mut ids = Vec::new();
    for (id, role) in [(3, "user"), (4, "assistant")] {
        send(
            json!({"jsonrpc": "2.0", "id": id, "method": "session/append", "params": {
            "sessionId": session,
            "entry": {"type": "message", "message": {"role": role, "content": "x", "timestamp": id}}}}),
        );
        ids.push(next(&answer_to(id))["result"]["entryId"].clone());
    }
    send(
        json!({"jsonrpc": "2.0", "id": 5, "method": "session/navigateTree",
        "params": {"sessionId": session, "targetId": ids[0]}}),
    );
    let hook = next(&|m: &Value| m["method"] == "session_before_tree");
    // Not answered in time: the navigation goes on without it.
    assert_eq!(next(&answer_to(5))["result"]["cancelled"], json!(false));
    send(json!({"jsonrpc": "2.0", "id": hook["id"], "result": {"cancel": true}}));
    send(json!({"jsonrpc": "2.0", "id": "never-sent", "result": {}}));
    send(json!({"jsonrpc": "2.0", "id": 6, "method": "shutdown"}));
    next(&answer_to(6));
    send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(child.wait().unwrap().success());
    let hook_id = hook["id"].as_str().unwrap();
    assert!(
        !stderr.contains(hook_id) && !stderr.contains("timed out"),
        "the late answer and the timeout reached stderr:\n{stderr}"
    );
    assert!(
        stderr.contains("ignoring an answer with id \"never-sent\": no hook is waiting for it"),
        "an answer to an id never sent is reported:\n{stderr}"
    );
}

crate::tests! {
    a_late_hook_answer_is_not_on_stderr_but_an_unknown_id_is,
}
