//! A session open in the sidecar while another program appends to its file (pi takes no lock):
//! the next request sees the new entries, with a warning in the log and a `session_changed`
//! notification before its answer, instead of failing.

use crate::support;

use std::io::Write;
use std::process::Stdio;

use serde_json::json;
use support::pipe::{PipeClient, Wire};

fn entries_another_program_appends_are_read_by_the_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            "\n"
        ),
    )
    .unwrap();
    let log = dir.path().join("stderr.log");
    let stderr = std::fs::File::create(&log).unwrap();
    let mut client = PipeClient::spawn_with(Wire::Ndjson, |command| {
        command
            .env("PI_SESSION_LOG", "warn")
            .stderr(Stdio::from(stderr));
    });
    client.call("initialize", json!({}));
    let opened = client.call("session/open", json!({"path": path}));
    let session = opened["sessionId"].as_str().unwrap().to_string();
    assert_eq!(opened["leafId"], "a1", "{opened}");

    // pi appends a whole line, then starts another it has not finished writing.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(
        file,
        r#"{{"type":"message","id":"b1","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"user","content":"from pi","timestamp":2}}}}"#
    )
    .unwrap();
    write!(file, r#"{{"type":"message","id":"half"#).unwrap();
    drop(file);

    let entries = client.call("session/getEntries", json!({"sessionId": session}));
    let ids: Vec<&str> = entries["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["a1", "b1"],
        "the whole new line is read, the half line is not there yet"
    );
    // The client heard of it before the answer that shows it, once, with the entry itself
    // and the cursors around it (`from`: after a1; `cursor`: after b1, where this page ends).
    let b1 = entries["entries"][1].clone();
    let from = client.call(
        "session/getEntries",
        json!({"sessionId": session, "limit": 1}),
    )["cursor"]
        .clone();
    assert_eq!(
        client.notifications,
        [json!({"jsonrpc": "2.0", "method": "session_changed",
                "params": {"sessionId": session, "entriesAdded": 1, "leafId": "a1",
                           "from": from, "cursor": entries["cursor"], "complete": true,
                           "entries": [b1]}})],
    );
    // The writer keeps the client's position: the leaf is where the client left it.
    let info = client.call("session/getInfo", json!({"sessionId": session}));
    assert_eq!(info["leafId"], "a1", "{info}");
    assert_eq!(info["entryCount"], 2, "{info}");
    assert_eq!(
        client.notifications.len(),
        1,
        "nothing new, no notification: {:?}",
        client.notifications
    );
    client.call("session/close", json!({"sessionId": session}));
    client.call("shutdown", serde_json::Value::Null);
    assert_eq!(client.exit(), Some(0));
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains("appended by another program"),
        "the log says what happened: {log}"
    );
}

crate::tests! {
    entries_another_program_appends_are_read_by_the_next_request,
}
