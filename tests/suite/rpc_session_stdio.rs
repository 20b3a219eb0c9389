//! A whole session through the built binary over real pipes, in each framing: initialize with
//! hooks, create, append user/assistant/tool messages, label, navigate (the hook vetoes once,
//! then supplies the summary), fork, build the context, shutdown, exit 0. Every byte on stdout
//! must belong to a valid frame. The written files, opened by pi's own code (the oracle), must
//! give the same context as `session/buildContext`.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::Oracle;
use support::pipe::{PipeClient, Wire};

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
/// What pi's own code (the oracle's `context`) sees in `file`.
fn oracle_context(oracle: &Oracle, file: &Path) -> Value {
    let output = oracle
        .command("pi-oracle.mjs")
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
    support::count("rpc session stdio: context", 1);
    document["context"].clone()
}

fn run(wire: Wire, test: &str) {
    let dir = tempfile::tempdir().unwrap();
    let outcome = scenario(wire, dir.path());
    let Some(oracle) = support::oracle(test) else {
        return;
    };
    for (file, context) in &outcome.contexts {
        assert_eq!(
            &oracle_context(oracle, file),
            context,
            "pi sees another context in {}",
            file.display()
        );
    }
}

fn a_whole_session_over_ndjson_matches_the_oracle() {
    run(
        Wire::Ndjson,
        "a_whole_session_over_ndjson_matches_the_oracle",
    );
}

fn a_whole_session_over_lsp_framing_matches_the_oracle() {
    run(
        Wire::Lsp,
        "a_whole_session_over_lsp_framing_matches_the_oracle",
    );
}

crate::tests! {
    a_whole_session_over_ndjson_matches_the_oracle,
    a_whole_session_over_lsp_framing_matches_the_oracle,
}
