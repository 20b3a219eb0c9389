//! `pi-session export` and `session/export` without a browser: where the output goes, what the
//! Markdown and JSONL hold, and what is refused (a symlink target, an unknown entry, a session
//! held in memory without a path). The pages themselves are checked in a browser by
//! `tests/export_browser.rs`.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::path_str;
use support::pipe::{PipeClient, Wire};

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("PI_SESSION_NO_INDEX", "1")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A session with two branches under the first answer, a label and a name.
fn session(dir: &Path) -> PathBuf {
    let lines = [
        json!({"type":"session","version":3,"id":"5e55e55e-0000-4000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp/project"}),
        json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"Where do the **tests** go?","timestamp":1}}),
        json!({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","provider":"p","model":"m","stopReason":"stop","timestamp":2,"content":[{"type":"thinking","thinking":"They ask about layout."},{"type":"text","text":"In `tests/`, one file per area:\n\n```rust\n#[test]\nfn it_works() {}\n```"}]}}),
        json!({"type":"message","id":"u2","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"First branch question","timestamp":3}}),
        json!({"type":"message","id":"u3","parentId":"a1","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"Second branch question","timestamp":4}}),
        json!({"type":"message","id":"a3","parentId":"u3","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"assistant","provider":"p","model":"m","stopReason":"toolUse","timestamp":5,"content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls ```"}}]}}),
        json!({"type":"message","id":"t3","parentId":"a3","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","isError":false,"timestamp":6,"content":[{"type":"text","text":"Cargo.toml\nsrc"}]}}),
        json!({"type":"label","id":"l1","parentId":"t3","timestamp":"2026-01-01T00:00:07.000Z","targetId":"u3","label":"the good one"}),
        json!({"type":"session_info","id":"n1","parentId":"l1","timestamp":"2026-01-01T00:00:08.000Z","name":"Test layout"}),
    ];
    let file = dir.join("2026-01-01T00-00-00-000Z_5e55e55e-0000-4000-8000-000000000001.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    file
}

/// The page's packed skeleton, read back: base64, then gzip, then JSON.
fn skeleton(page: &str) -> Value {
    use base64::Engine;
    use std::io::Read;
    let open = "<script type=\"application/octet-stream\" id=\"pi-skeleton\">";
    let start = page.find(open).expect("a skeleton element") + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    let gzip = base64::engine::general_purpose::STANDARD
        .decode(&page[start..end])
        .unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gzip[..])
        .read_to_string(&mut text)
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn export_writes_html_named_after_the_session_in_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(dir.path());
    let out = tempfile::tempdir().unwrap();
    let result = run(&["export", path_str(&file)], out.path());
    assert!(result.status.success(), "{}", text(&result.stderr));
    let name = "pi-session-2026-01-01T00-00-00-000Z_5e55e55e-0000-4000-8000-000000000001.html";
    assert_eq!(text(&result.stdout), format!("./{name}\n"));
    let page = std::fs::read_to_string(out.path().join(name)).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("<title>Test layout</title>"));
    assert!(page.contains("script-src 'sha256-"));
    // The session is packed (gzip in base64); its skeleton carries the labels.
    assert_eq!(
        skeleton(&page)["labels"],
        json!({"u3": "the good one"}),
        "the skeleton's labels"
    );
    // Only the output itself is written, private to its owner as the session is.
    let names: Vec<_> = std::fs::read_dir(out.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
    let mode = std::fs::metadata(out.path().join(name))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // Run again: the file is replaced, not appended to.
    let again = run(&["export", path_str(&file)], out.path());
    assert!(again.status.success());
    assert_eq!(
        std::fs::read_to_string(out.path().join(name)).unwrap(),
        page
    );
}

fn export_markdown_is_the_selected_path_as_a_document() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(dir.path());
    let md = dir.path().join("out.md");
    let result = run(
        &[
            "export",
            path_str(&file),
            "--format",
            "md",
            "-o",
            path_str(&md),
        ],
        dir.path(),
    );
    assert!(result.status.success(), "{}", text(&result.stderr));
    let doc = std::fs::read_to_string(&md).unwrap();
    assert!(doc.starts_with("# Test layout\n"), "{doc}");
    for shown in [
        "Where do the **tests** go?",
        "<summary>Thinking</summary>",
        "```rust\n#[test]",
        "Second branch question",
        "<summary>Tool call: bash</summary>",
        "Cargo.toml\nsrc",
        "> Label on `u3`: the good one",
    ] {
        assert!(doc.contains(shown), "{shown:?} in {doc}");
    }
    assert!(
        !doc.contains("First branch question"),
        "another branch: {doc}"
    );
    // A fence around text holding three backticks is longer than three.
    assert!(
        doc.contains("````json\n{\n  \"command\": \"ls ```\"\n}\n````"),
        "{doc}"
    );

    let result = run(
        &[
            "export",
            path_str(&file),
            "--format",
            "md",
            "--leaf",
            "u2",
            "-o",
            path_str(&md),
        ],
        dir.path(),
    );
    assert!(result.status.success());
    let doc = std::fs::read_to_string(&md).unwrap();
    assert!(doc.contains("First branch question"), "{doc}");
    assert!(!doc.contains("Second branch question"), "{doc}");
}

fn export_jsonl_is_a_new_session_of_the_branch_beside_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(dir.path());
    let result = run(
        &[
            "export",
            path_str(&file),
            "--format",
            "jsonl",
            "--leaf",
            "t3",
        ],
        dir.path(),
    );
    assert!(result.status.success(), "{}", text(&result.stderr));
    let written = PathBuf::from(text(&result.stdout).trim_end());
    assert_eq!(written.parent().unwrap(), dir.path());
    assert!(written.to_string_lossy().ends_with(".jsonl"));
    let lines: Vec<Value> = std::fs::read_to_string(&written)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "session");
    assert_eq!(lines[0]["parentSession"], json!(path_str(&file)));
    assert_ne!(lines[0]["id"], "5e55e55e-0000-4000-8000-000000000001");
    let ids: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    // The path, then the label on a kept entry re-created at the end (pi's createBranchedSession).
    assert_eq!(&ids[..5], ["u1", "a1", "u3", "a3", "t3"]);
    assert_eq!(lines.len(), 7, "{lines:?}");
    assert_eq!(lines[6]["type"], "label");
    assert_eq!(lines[6]["targetId"], "u3");
    // The source is unchanged and the export reads back as the same branch.
    let tree = run(&["tree", path_str(&written)], dir.path());
    assert!(tree.status.success(), "{}", text(&tree.stderr));
    assert!(text(&tree.stdout).contains("[the good one]"));
}

fn export_refuses_what_it_must_not_write_or_cannot_find() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(dir.path());
    // A symlink at the target: refused, and what it points to is untouched.
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let link = dir.path().join("link.html");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let result = run(
        &["export", path_str(&file), "-o", path_str(&link)],
        dir.path(),
    );
    assert_eq!(result.status.code(), Some(1));
    let err = text(&result.stderr);
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // Nothing left beside it either.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");

    let result = run(&["export", path_str(&file), "--leaf", "nope"], dir.path());
    assert_eq!(result.status.code(), Some(1));
    assert!(text(&result.stderr).contains("Entry nope not found"));

    let result = run(&["export", path_str(&file), "--format", "pdf"], dir.path());
    assert_eq!(result.status.code(), Some(2));
    assert!(text(&result.stderr).contains("expected html, md or jsonl"));

    let result = run(
        &["export", path_str(&file), "-o", path_str(dir.path())],
        dir.path(),
    );
    assert_eq!(result.status.code(), Some(1));
    assert!(text(&result.stderr).contains("not a regular file"));
}

/// A request expected to fail; returns its `error`.
fn refused(client: &mut PipeClient, method: &str, params: Value) -> Value {
    let response = client.call_with(method, params, &mut |name, _| panic!("hook {name}"));
    assert!(response.get("result").is_none(), "{method}: {response}");
    response["error"].clone()
}

fn export_over_rpc_answers_the_path_and_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let file = session(dir.path());
    let mut client = PipeClient::spawn(Wire::Ndjson);
    let init = client.call("initialize", json!({"index": false}));
    assert_eq!(
        init["capabilities"]["exportFormats"],
        json!(["html", "md", "jsonl"])
    );
    assert!(
        init["methods"]
            .as_array()
            .unwrap()
            .contains(&json!("session/export"))
    );
    let opened = client.call("session/open", json!({"path": path_str(&file)}));
    let session = opened["sessionId"].as_str().unwrap().to_string();

    // Default: beside the session file.
    let result = client.call(
        "session/export",
        json!({"sessionId": session, "format": "html"}),
    );
    let path = PathBuf::from(result["path"].as_str().unwrap());
    assert_eq!(path.parent().unwrap(), dir.path());
    assert_eq!(
        result["bytes"].as_u64().unwrap(),
        std::fs::metadata(&path).unwrap().len()
    );
    assert_eq!(result["format"], "html");
    assert_eq!(result["leafId"], "n1");

    let md = dir.path().join("branch.md");
    let result = client.call(
        "session/export",
        json!({"sessionId": session, "format": "md", "leafId": "u2", "path": path_str(&md)}),
    );
    assert_eq!(result["path"], json!(path_str(&md)));
    assert_eq!(result["leafId"], "u2");
    assert!(
        std::fs::read_to_string(&md)
            .unwrap()
            .contains("First branch question")
    );

    let jsonl = dir.path().join("branch.jsonl");
    let result = client.call(
        "session/export",
        json!({"sessionId": session, "format": "jsonl", "path": path_str(&jsonl)}),
    );
    assert_eq!(result["format"], "jsonl");
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(&jsonl)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["parentSession"], json!(path_str(&file)));

    let error = refused(
        &mut client,
        "session/export",
        json!({"sessionId": session, "leafId": "missing"}),
    );
    assert_eq!(error["data"]["kind"], "entry_not_found", "{error}");
    let error = refused(
        &mut client,
        "session/export",
        json!({"sessionId": session, "format": "pdf"}),
    );
    assert!(
        error["message"].as_str().unwrap().contains("format"),
        "{error}"
    );

    // A session held in memory has no file to name the export after.
    let created = client.call(
        "session/create",
        json!({"cwd": path_str(dir.path()), "inMemory": true}),
    );
    let memory = created["sessionId"].as_str().unwrap().to_string();
    let error = refused(&mut client, "session/export", json!({"sessionId": memory}));
    assert!(
        error["message"].as_str().unwrap().contains("'path'"),
        "{error}"
    );
    client.call("shutdown", Value::Null);
    assert_eq!(client.exit(), Some(0));
}

crate::tests! {
    export_writes_html_named_after_the_session_in_the_current_directory,
    export_markdown_is_the_selected_path_as_a_document,
    export_jsonl_is_a_new_session_of_the_branch_beside_the_source,
    export_refuses_what_it_must_not_write_or_cannot_find,
    export_over_rpc_answers_the_path_and_its_size,
}
