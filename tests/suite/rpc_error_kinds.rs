//! The error kinds a client sees where the store, the repo and the wire once disagreed
//! (issue 8, item 10; issue 7, the one error story): each case answered with the kind
//! protocol.md's table documents, and nothing written where the request is refused.

use crate::support;

use pi_session::jsonrpc::{ServerOptions, WireFraming};
use pi_session::sidecar::session_server;
use serde_json::{Value, json};
use support::memory::TestClient;

struct Client {
    inner: TestClient,
    next_id: u64,
}

impl Client {
    async fn start(root: &std::path::Path) -> Client {
        let inner = TestClient::start(
            session_server::Sidecar::default(),
            session_server::methods(),
            ServerOptions::default(),
            WireFraming::Ndjson,
        );
        let mut client = Client { inner, next_id: 0 };
        client
            .call(
                "initialize",
                json!({"sessionsRoot": root, "deterministic": true}),
            )
            .await
            .expect("initialize");
        client
    }

    /// The result, or the error object.
    async fn call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.inner
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = self.inner.recv().await;
        assert_eq!(answer["id"], json!(id), "{answer}");
        match answer.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(answer["result"].clone()),
        }
    }

    /// Ends the server, failing on any message left unread.
    async fn finish(self) {
        self.inner.finish().await;
    }

    async fn kind_of(&mut self, method: &str, params: Value) -> (String, i64) {
        let error = self
            .call(method, params.clone())
            .await
            .expect_err(&format!("{method} {params} must fail"));
        (
            error["data"]["kind"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            error["code"].as_i64().unwrap(),
        )
    }
}

fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found
}

#[tokio::main(flavor = "current_thread")]
async fn session_ids_that_cannot_name_a_file_are_refused_in_every_profile() {
    let root = tempfile::tempdir().unwrap();
    let mut client = Client::start(root.path()).await;
    for id in ["", ".", "..", "a/b", "a\nb", "../escape"] {
        let (kind, code) = client
            .kind_of(
                "session/create",
                json!({"cwd": "/w", "profile": "harness", "id": id}),
            )
            .await;
        assert_eq!((kind.as_str(), code), ("invalid_argument", 1009), "{id:?}");
    }
    // A pi-cli id pi accepts, but too long for a file name: refused up front, not at every
    // later write.
    let long = "a".repeat(300);
    for profile in ["pi-cli", "harness"] {
        let (kind, _) = client
            .kind_of(
                "session/create",
                json!({"cwd": "/w", "profile": profile, "id": long}),
            )
            .await;
        assert_eq!(kind, "invalid_argument", "{profile}");
        let (kind, _) = client
            .kind_of(
                "session/forkFrom",
                json!({"sourcePath": "/nonexistent.jsonl", "cwd": "/w", "id": long}),
            )
            .await;
        assert_eq!(kind, "invalid_session", "the source is checked first");
    }
    assert_eq!(files_under(root.path()), Vec::<std::path::PathBuf>::new());
    // The longest id that fits still works.
    let fits = "b".repeat(224);
    let created = client
        .call(
            "session/create",
            json!({"cwd": "/w", "profile": "harness", "id": fits}),
        )
        .await
        .unwrap();
    assert!(std::path::Path::new(created["path"].as_str().unwrap()).exists());
    client.finish().await;
}

/// A user message, then an assistant message: pi-cli's first write.
async fn first_write(client: &mut Client, session: &str) -> Result<Value, Value> {
    client
        .call(
            "session/append",
            json!({"sessionId": session, "entry": {"type": "message",
                "message": {"role": "user", "content": "hi", "timestamp": 1}}}),
        )
        .await?;
    client
        .call(
            "session/append",
            json!({"sessionId": session, "entry": {"type": "message",
                "message": {"role": "assistant", "content": [], "provider": "p", "model": "m",
                            "stopReason": "stop", "timestamp": 2}}}),
        )
        .await
}

#[tokio::main(flavor = "current_thread")]
async fn a_missing_directory_is_io_not_a_missing_session() {
    let root = tempfile::tempdir().unwrap();
    let mut client = Client::start(root.path()).await;
    // Created in a directory that is gone by the first write.
    let dir = root.path().join("gone");
    let created = client
        .call("session/create", json!({"cwd": "/w", "sessionDir": dir}))
        .await
        .unwrap();
    std::fs::remove_dir(&dir).unwrap();
    let session = created["sessionId"].as_str().unwrap().to_string();
    let error = first_write(&mut client, &session).await.unwrap_err();
    assert_eq!(error["data"]["kind"], "io", "{error}");
    assert_eq!(error["code"], 1006);
    // Opened at a path whose directory does not exist.
    let path = root.path().join("missing/dir/s.jsonl");
    let opened = client
        .call("session/open", json!({"path": path, "cwd": "/w"}))
        .await
        .unwrap();
    let session = opened["sessionId"].as_str().unwrap().to_string();
    let error = first_write(&mut client, &session).await.unwrap_err();
    assert_eq!(error["data"]["kind"], "io", "{error}");
    // A missing session file stays session_not_found.
    let (kind, code) = client
        .kind_of(
            "session/open",
            json!({"path": root.path().join("none.jsonl"), "profile": "harness"}),
        )
        .await;
    assert_eq!((kind.as_str(), code), ("session_not_found", 1004));
    client.finish().await;
}

#[tokio::main(flavor = "current_thread")]
async fn a_file_that_is_not_a_session_is_invalid_session() {
    let root = tempfile::tempdir().unwrap();
    let mut client = Client::start(root.path()).await;
    let notes = root.path().join("notes.txt");
    std::fs::write(&notes, "keep me").unwrap();
    let (kind, code) = client
        .kind_of("session/delete", json!({"path": notes}))
        .await;
    assert_eq!((kind.as_str(), code), ("invalid_session", 1001));
    assert!(notes.exists());
    client.finish().await;
}

#[tokio::main(flavor = "current_thread")]
async fn header_metadata_with_pi_cli_is_an_invalid_argument() {
    let root = tempfile::tempdir().unwrap();
    let mut client = Client::start(root.path()).await;
    let (kind, code) = client
        .kind_of(
            "session/create",
            json!({"cwd": "/w", "profile": "pi-cli", "metadata": {"a": 1}}),
        )
        .await;
    assert_eq!((kind.as_str(), code), ("invalid_argument", 1009));
    client.finish().await;
}

/// The sidecar reads its own `initialize` members (the generic server knows none of them):
/// a bad `defaultProfile` fails `initialize` naming the member, and a retry succeeds and is
/// echoed in `settings`.
#[tokio::main(flavor = "current_thread")]
async fn the_sidecar_reads_and_echoes_its_own_initialize_settings() {
    let mut client = Client {
        inner: TestClient::start(
            session_server::Sidecar::default(),
            session_server::methods(),
            ServerOptions::default(),
            WireFraming::Ndjson,
        ),
        next_id: 0,
    };
    let error = client
        .call("initialize", json!({"defaultProfile": "emacs"}))
        .await
        .unwrap_err();
    assert_eq!(error["code"], -32602, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid params: 'defaultProfile': unknown variant 'emacs'"),
        "{error}"
    );
    let result = client
        .call(
            "initialize",
            json!({"defaultProfile": "harness", "sessionsRoot": "/tmp/s"}),
        )
        .await
        .unwrap();
    assert_eq!(result["settings"]["defaultProfile"], "harness");
    assert_eq!(result["settings"]["sessionsRoot"], "/tmp/s");
    let created = client
        .call("session/create", json!({"cwd": "/w", "inMemory": true}))
        .await
        .unwrap();
    assert_eq!(created["profile"], "harness");
    client.finish().await;
}

crate::tests! {
    session_ids_that_cannot_name_a_file_are_refused_in_every_profile,
    a_missing_directory_is_io_not_a_missing_session,
    a_file_that_is_not_a_session_is_invalid_session,
    header_metadata_with_pi_cli_is_an_invalid_argument,
    the_sidecar_reads_and_echoes_its_own_initialize_settings,
}
