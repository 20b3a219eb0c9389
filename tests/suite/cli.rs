//! The offline commands as people and scripts meet them: exact output, exit status, and one
//! clear line on stderr for every bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn pi_session(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn files() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/files")
}

/// A session with a branch, a label and a summary, small enough to read in the assertions.
fn branched_session(dir: &Path) -> PathBuf {
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"Hello there","timestamp":1}}"#,
        r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Hi!"}],"provider":"p","model":"m","stopReason":"stop","timestamp":2}}"#,
        r#"{"type":"message","id":"u2","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":[{"type":"text","text":"First try"}],"timestamp":3}}"#,
        r#"{"type":"branch_summary","id":"b1","parentId":"a1","timestamp":"2026-01-01T00:00:04.000Z","fromId":"a1","summary":"Tried something."}"#,
        r#"{"type":"label","id":"l1","parentId":"b1","timestamp":"2026-01-01T00:00:05.000Z","targetId":"u1","label":"start"}"#,
        r#"{"type":"message","id":"u3","parentId":"l1","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"user","content":"Second try","timestamp":4}}"#,
    ];
    let path = dir.join("s.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn tree_shows_branches_labels_and_the_leaf() {
    let dir = tempfile::tempdir().unwrap();
    let path = branched_session(dir.path());
    let out = pi_session(&["tree", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        concat!(
            "| u1 user: \"Hello there\"  [start]\n",
            "| a1 assistant: \"Hi!\"\n",
            "    u2 user: \"First try\"\n",
            "| b1 branch summary: \"Tried something.\"\n",
            "| l1 label u1 -> start\n",
            "* u3 user: \"Second try\"  <- leaf\n",
        )
    );
}

fn context_prints_one_document_with_the_oracles_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = branched_session(dir.path());
    let out = pi_session(&["context", path.to_str().unwrap(), "--leaf", "u2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "context",
            "contextEntryIds",
            "header",
            "labels",
            "leafId",
            "sessionName",
            "tree"
        ]
    );
    assert_eq!(
        doc["contextEntryIds"],
        serde_json::json!(["u1", "a1", "u2"])
    );
    assert_eq!(doc["labels"], serde_json::json!({"u1": "start"}));
    assert_eq!(
        doc["context"]["model"],
        serde_json::json!({"modelId": "m", "provider": "p"})
    );
    let llm = pi_session(&["context", path.to_str().unwrap(), "--llm"]);
    let doc: serde_json::Value = serde_json::from_slice(&llm.stdout).unwrap();
    let summary = &doc["context"]["messages"][2];
    assert_eq!(summary["role"], "user");
    assert_eq!(
        summary["content"][0]["text"],
        "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nTried something.</summary>"
    );
}

fn check_lists_every_problem_with_its_line() {
    let path = files().join("orphans-and-unknown-kinds.jsonl");
    let out = pi_session(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let shown = path.display().to_string();
    assert_eq!(
        text(&out.stdout),
        format!(
            "{shown}:4: problem: parent nowhere1 of entry eeee0003 does not exist\n\
             {shown}:6: problem: entry eeee0005 is its own parent\n\
             {shown}:8: problem: target ghost000 of entry eeee0007 does not exist\n\
             {shown}: 3 problem(s)\n"
        )
    );
    let dir = tempfile::tempdir().unwrap();
    let clean = branched_session(dir.path());
    let out = pi_session(&["check", clean.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), format!("{}: ok\n", clean.display()));
}

fn bad_inputs_fail_with_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.jsonl");
    std::fs::write(&garbage, [0u8, 159, 146, 150, 255, b'\n', 7]).unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let missing = dir.path().join("missing.jsonl");
    let directory = dir.path().to_path_buf();
    let cases = [
        (
            missing.clone(),
            format!(
                "pi-session: {}: cannot open: No such file or directory (os error 2)",
                missing.display()
            ),
        ),
        (
            directory.clone(),
            format!("pi-session: {}: is a directory", directory.display()),
        ),
        (
            garbage.clone(),
            format!(
                "pi-session: Session file is not a valid pi session: {}",
                garbage.display()
            ),
        ),
        (
            empty.clone(),
            format!(
                "pi-session: {}: empty file, not a pi session (it has no header line)",
                empty.display()
            ),
        ),
    ];
    for command in ["context", "tree", "check"] {
        for (path, message) in &cases {
            let out = pi_session(&[command, path.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(1), "{command} {}", path.display());
            assert!(out.stdout.is_empty(), "{command}: nothing on stdout");
            assert_eq!(
                text(&out.stderr),
                format!("{message}\n"),
                "{command} {}",
                path.display()
            );
        }
    }
    let session = branched_session(dir.path());
    let out = pi_session(&["context", session.to_str().unwrap(), "--leaf", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("pi-session: {}: Entry nope not found\n", session.display())
    );
}

fn fork_copies_the_path_and_leaves_the_source_alone() {
    let dir = tempfile::tempdir().unwrap();
    let source = branched_session(dir.path());
    let before = std::fs::read(&source).unwrap();
    let out_dir = dir.path().join("forks");
    std::fs::create_dir(&out_dir).unwrap();
    let out = pi_session(&[
        "fork",
        source.to_str().unwrap(),
        "--entry",
        "u3",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["selectedText"], "Second try");
    assert_eq!(doc["written"], true);
    let written = std::fs::read_to_string(doc["file"].as_str().unwrap()).unwrap();
    let ids: Vec<String> = written
        .lines()
        .skip(1)
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    // The path before u3 without its label entry, then the label re-created with a new id.
    assert_eq!(&ids[..3], ["u1", "a1", "b1"]);
    assert_eq!(ids.len(), 4);
    assert_eq!(std::fs::read(&source).unwrap(), before);
    let out = pi_session(&["fork", source.to_str().unwrap(), "--entry", "a1"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "pi-session: {}: Invalid entry ID for forking\n",
            source.display()
        )
    );
}

/// A session of `entries` user messages in a chain.
fn long_session(dir: &Path, entries: usize) -> PathBuf {
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"big","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
    );
    text.push('\n');
    let mut parent = "null".to_string();
    for i in 0..entries {
        text += &format!(
            r#"{{"type":"message","id":"e{i}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"entry {i} {}","timestamp":1}}}}"#,
            "x".repeat(60)
        );
        text.push('\n');
        parent = format!("\"e{i}\"");
    }
    let path = dir.join("big.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

fn a_reader_that_goes_away_ends_the_program_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let big = long_session(dir.path(), 20_000);
    for command in ["tree", "context", "check"] {
        // `pi-session tree BIG | head -1`: read one line, then close the pipe.
        let mut child = Command::new(env!("CARGO_BIN_EXE_pi-session"))
            .args([command, big.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty(), "{command}");
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{command}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stderr), "", "{command}: nothing on stderr");
    }
}

fn help_documents_the_exit_statuses() {
    let out = pi_session(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    assert!(help.contains("Exit status:"), "{help}");
    for code in ["  0  ", "  1  ", "  2  "] {
        assert!(help.contains(code), "{code:?} in {help}");
    }
    // Misuse is status 2, with clap's own message.
    let out = pi_session(&["tree"]);
    assert_eq!(out.status.code(), Some(2));
    let out = pi_session(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr).lines().count(),
        1,
        "{}",
        text(&out.stderr)
    );
}

fn completions_come_from_the_argument_definitions() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef pi-session"),
        ("fish", "complete -c pi-session"),
    ] {
        let out = pi_session(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        assert!(script.contains(marker), "{shell}: {script}");
        for word in [
            "context",
            "tree",
            "check",
            "list",
            "fork",
            "replay",
            "deterministic",
        ] {
            assert!(script.contains(word), "{shell} completes {word}");
        }
    }
    let out = pi_session(&["completions", "no-such-shell"]);
    assert_eq!(out.status.code(), Some(2));
}

fn every_error_is_one_line_naming_the_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let session = branched_session(dir.path());
    let cases: [(Vec<&str>, &Path); 3] = [
        (
            vec!["fork", missing.to_str().unwrap(), "--entry", "u1"],
            &missing,
        ),
        (
            vec!["fork", session.to_str().unwrap(), "--entry", "nope"],
            &session,
        ),
        (vec!["tree", missing.to_str().unwrap()], &missing),
    ];
    for (args, file) in &cases {
        let out = pi_session(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = text(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("pi-session: "), "{stderr}");
        let shown = file.display().to_string();
        assert_eq!(stderr.matches(&shown).count(), 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// `compact-plan` on pi's split-turn quirk (a cut at a user message right after a label moves
/// back onto the label, so the previous turn becomes the turn prefix; the differential test
/// checks the rule against pi, this one the command's output and refusals).
fn compact_plan_shows_where_pi_would_cut_and_why_it_would_not() {
    let file = files().join("compaction/label-before-user.jsonl");
    let file = file.to_str().unwrap();
    let out = pi_session(&["compact-plan", file, "--keep", "2500", "--window", "4000"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["preparation"]["firstKeptEntryId"], "e003");
    assert_eq!(doc["preparation"]["isSplitTurn"], true);
    assert_eq!(doc["turnStartId"], "e001");
    assert_eq!(
        doc["entryIds"],
        serde_json::json!({"history": [], "turnPrefix": ["e001", "e002"], "kept": ["e003", "e004", "e005", "e006"]})
    );
    // Brief by default: roles and token counts, request texts as lengths.
    assert_eq!(doc["preparation"]["turnPrefixMessages"][0]["role"], "user");
    assert!(doc["preparation"]["turnPrefixMessages"][0]["tokens"].is_number());
    assert_eq!(doc["requests"][0]["purpose"], "turnPrefix");
    assert!(doc["requests"][0]["textLength"].is_number());
    assert_eq!(doc["shouldCompact"], true);

    let full = pi_session(&["compact-plan", file, "--keep", "2500", "--full"]);
    let full: serde_json::Value = serde_json::from_slice(&full.stdout).unwrap();
    let text_sent = full["requests"][0]["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        text_sent.starts_with("<conversation>\n[User]: first first"),
        "{text_sent}"
    );

    let refused = pi_session(&["compact-plan", file]);
    assert!(refused.status.success());
    let refused: serde_json::Value = serde_json::from_slice(&refused.stdout).unwrap();
    assert_eq!(refused["refusal"], "nothing_to_compact");
    assert_eq!(refused["message"], "Nothing to compact (session too small)");

    let missing = pi_session(&["compact-plan", file, "--leaf", "nope"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("Entry nope not found"));
}

crate::tests! {
    tree_shows_branches_labels_and_the_leaf,
    context_prints_one_document_with_the_oracles_keys,
    check_lists_every_problem_with_its_line,
    bad_inputs_fail_with_one_line_naming_the_file,
    fork_copies_the_path_and_leaves_the_source_alone,
    a_reader_that_goes_away_ends_the_program_quietly,
    help_documents_the_exit_statuses,
    completions_come_from_the_argument_definitions,
    every_error_is_one_line_naming_the_file_once,
    compact_plan_shows_where_pi_would_cut_and_why_it_would_not,
}
