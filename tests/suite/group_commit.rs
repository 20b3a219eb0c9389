//! Group commit of durable appends: appends written while a sync is in flight share the next
//! one, answers leave in request order and only after the sync that covers them, and what was
//! acknowledged is in the file (tests/reliability.rs kills the server mid-stream as well).

use crate::support;

use std::path::Path;
use std::sync::Arc;

use pi_session::Profile;
use pi_session::json::parse;
use pi_session::jsonrpc::{RequestContext, RpcError, ServerOptions, WireFraming};
use pi_session::session::IdSource;
use pi_session::session::NewEntry;
use pi_session::session::{NewSession, Session, SessionOptions};
use pi_session::sidecar::session_server;
use serde_json::{Value, json};
use support::memory::TestClient;

fn user(text: &str) -> NewEntry {
    NewEntry::Message {
        message: parse(&format!(
            r#"{{"role":"user","content":"{text}","timestamp":1}}"#
        ))
        .unwrap(),
    }
}

/// `(id, parentId)` of every entry in the file, in file order.
fn entries_in_file(path: &Path) -> Vec<(String, Option<String>)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| {
            let entry: Value = serde_json::from_str(line).unwrap();
            let id = entry["id"].as_str().unwrap().to_owned();
            (id, entry["parentId"].as_str().map(str::to_owned))
        })
        .collect()
}

fn appends_made_with_the_sync_deferred_share_one_sync_and_are_on_disk_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let options = SessionOptions {
        profile: Profile::Harness,
        durable: true,
        ids: Arc::new(IdSource::deterministic(1, 1_767_225_600_000)),
        ..SessionOptions::default()
    };
    let new = NewSession {
        path: Some(path.clone()),
        cwd: "/w".into(),
        ..NewSession::default()
    };
    let mut session = Session::create(new, options).unwrap();
    session.append(user("alone")).unwrap();
    assert_eq!(
        session.syncs(),
        1,
        "an ordinary durable append syncs before it returns"
    );
    let (ids, unsynced) = session
        .with_sync_deferred(|session| {
            (0..3)
                .map(|i| session.append(user(&format!("grouped {i}"))))
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap();
    assert_eq!(session.syncs(), 1, "written, not yet synced");
    unsynced.wait().unwrap();
    assert_eq!(session.syncs(), 2, "one sync for the three");
    let in_file: Vec<String> = entries_in_file(&path)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(&in_file[1..], &ids[..]);
    // A change that fails after writing has what it wrote synced, as without deferral.
    let failed = session.with_sync_deferred(|session| {
        session.append(user("kept"))?;
        session.branch("no-such-entry")
    });
    assert!(failed.is_err());
    assert_eq!(session.syncs(), 3);
    assert_eq!(entries_in_file(&path).len(), 5);
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct SyncsParams {
    session_id: String,
}

/// The sidecar's methods and `test/syncs`, which tells how many syncs a session's appends had.
fn methods_with_a_sync_count() -> pi_session::jsonrpc::Methods<session_server::Sidecar> {
    let mut methods = session_server::methods();
    methods.add(
        "test/syncs",
        |ctx: RequestContext<session_server::Sidecar>, p: SyncsParams| async move {
            let cell = ctx.state().session(&p.session_id)?;
            let syncs = cell.lock().unwrap().syncs();
            Ok::<_, RpcError>(syncs)
        },
    );
    methods
}

async fn call(client: &mut TestClient, id: u64, method: &str, params: Value) -> Value {
    client
        .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .await;
    let answer = client.recv().await;
    assert_eq!(answer["id"], id, "{answer}");
    answer["result"].clone()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_durable_appends_share_syncs_and_answer_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = TestClient::start(
        session_server::Sidecar::default(),
        methods_with_a_sync_count(),
        ServerOptions::default(),
        WireFraming::Ndjson,
    );
    call(
        &mut client,
        1,
        "initialize",
        json!({"sessionsRoot": dir.path()}),
    )
    .await;
    let created = call(
        &mut client,
        2,
        "session/create",
        json!({"cwd": "/p", "profile": "harness", "sessionDir": dir.path(), "durable": true}),
    )
    .await;
    let session = created["sessionId"].as_str().unwrap().to_owned();
    let path = created["path"].as_str().unwrap().to_owned();
    const APPENDS: u64 = 200;
    let mut batch = Vec::new();
    for id in 100..100 + APPENDS {
        let append = json!({"jsonrpc": "2.0", "id": id, "method": "session/append", "params": {
            "sessionId": session,
            "entry": {"type": "message", "message": {
                "role": "user", "content": format!("message {id}"), "timestamp": id}}}});
        batch.extend_from_slice(append.to_string().as_bytes());
        batch.push(b'\n');
    }
    // A change of another kind queued behind them: a harness leaf entry.
    let reset = json!({"jsonrpc": "2.0", "id": 100 + APPENDS, "method": "session/resetLeaf",
                       "params": {"sessionId": session}});
    batch.extend_from_slice(reset.to_string().as_bytes());
    batch.push(b'\n');
    client.send_raw(&batch).await;
    let mut answered = Vec::new();
    for id in 100..100 + APPENDS {
        let answer = client.recv().await;
        assert_eq!(answer["id"], id, "answers leave in request order: {answer}");
        let entry = answer["result"]["entryId"].as_str().unwrap().to_owned();
        // Acknowledged means in the file (a sync covered it before the answer left).
        let in_file = std::fs::read_to_string(&path).unwrap();
        assert!(
            in_file.contains(&entry),
            "entry {entry} acknowledged before it was written"
        );
        answered.push(entry);
    }
    let reset = client.recv().await;
    assert_eq!(
        reset["id"],
        100 + APPENDS,
        "the reset answers after every append: {reset}"
    );
    assert_eq!(reset["result"]["leafId"], Value::Null, "{reset}");
    let syncs = call(&mut client, 3, "test/syncs", json!({"sessionId": session}))
        .await
        .as_u64()
        .unwrap();
    println!("{APPENDS} pipelined durable appends: {syncs} syncs");
    // One sync each would be APPENDS; how many share one depends on the disk and the load
    // (tests/group_commit's store test and src/store/sync.rs show the sharing exactly).
    assert!(
        (1..APPENDS).contains(&syncs),
        "{syncs} syncs for {APPENDS} pipelined appends: appends queued behind a sync share the next"
    );
    // Each append was made on the one before it: the changes ran one at a time, in order.
    let mut entries = entries_in_file(Path::new(&path));
    let leaf = entries.pop().expect("the reset's leaf entry");
    assert_eq!(
        leaf.1.as_ref(),
        answered.last(),
        "the leaf entry follows the last append"
    );
    let ids: Vec<&String> = entries.iter().map(|(id, _)| id).collect();
    assert_eq!(ids, answered.iter().collect::<Vec<_>>());
    for pair in entries.windows(2) {
        assert_eq!(
            pair[1].1.as_ref(),
            Some(&pair[0].0),
            "parent of {}",
            pair[1].0
        );
    }
    call(
        &mut client,
        4,
        "session/close",
        json!({"sessionId": session}),
    )
    .await;
    client.finish().await;
}

crate::tests! {
    appends_made_with_the_sync_deferred_share_one_sync_and_are_on_disk_after_it,
    pipelined_durable_appends_share_syncs_and_answer_in_order,
}
