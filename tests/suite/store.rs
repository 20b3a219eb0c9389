//! The store on real files: both write profiles byte for byte, the safety guarantees, and
//! every bad input with its exact error.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_session::Profile;
use pi_session::json::{JsValue, parse};
use pi_session::session::IdSource;
use pi_session::session::NewEntry;
use pi_session::session::{
    ErrorKind, ForkPosition, Leaf, MessageFormat, NewSession, Session, SessionOptions,
    SummaryInput, TreeDecision, TreeHookAnswer, TreeRequest, decide,
};

const START: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00.000Z

fn options(profile: Profile) -> SessionOptions {
    SessionOptions {
        profile,
        ids: Arc::new(IdSource::deterministic(1, START)),
        ..SessionOptions::default()
    }
}

fn js(text: &str) -> JsValue {
    parse(text).unwrap()
}

fn user(text: &str) -> NewEntry {
    NewEntry::Message {
        message: js(&format!(
            r#"{{"role":"user","content":"{text}","timestamp":1}}"#
        )),
    }
}

fn assistant(text: &str) -> NewEntry {
    NewEntry::Message {
        message: js(&format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"provider":"anthropic","model":"m1","stopReason":"stop","timestamp":2}}"#
        )),
    }
}

fn new_session(dir: &Path, profile: Profile) -> Session {
    let new = NewSession {
        path: Some(dir.join("s.jsonl")),
        cwd: "/w".into(),
        id: Some("sid".into()),
        ..NewSession::default()
    };
    Session::create(new, options(profile)).unwrap()
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

fn pi_cli_writes_nothing_until_the_first_assistant_message_then_everything() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = new_session(dir.path(), Profile::PiCli);
    let path = dir.path().join("s.jsonl");
    let u = session.append(user("hi")).unwrap();
    session
        .append(NewEntry::Custom {
            custom_type: js("\"ext\""),
            data: None,
        })
        .unwrap();
    assert!(!path.exists(), "no file before an assistant message");
    let a = session.append(assistant("hello")).unwrap();
    let written = lines(&path);
    assert_eq!(written.len(), 4);
    assert_eq!(
        written[0],
        r#"{"type":"session","version":3,"id":"sid","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#
    );
    assert_eq!(
        written[1],
        format!(
            r#"{{"type":"message","id":"{u}","parentId":null,"timestamp":"2026-01-01T00:00:00.001Z","message":{{"role":"user","content":"hi","timestamp":1}}}}"#
        )
    );
    assert!(
        written[2].starts_with(r#"{"type":"custom","customType":"ext","id":""#),
        "{}",
        written[2]
    );
    assert!(written[3].contains(&format!(r#""id":"{a}""#)));
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // After the first write every append goes straight to disk.
    session.append(user("more")).unwrap();
    assert_eq!(lines(&path).len(), 5);
    // branch and resetLeaf write nothing in pi-cli.
    session.branch(&u).unwrap();
    session.reset_leaf().unwrap();
    assert_eq!(lines(&path).len(), 5);
    assert_eq!(session.leaf(), &Leaf::Null);
}

fn harness_writes_the_header_at_once_and_a_leaf_entry_for_every_move() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = new_session(dir.path(), Profile::Harness);
    let path = dir.path().join("s.jsonl");
    assert_eq!(lines(&path).len(), 1);
    let u = session.append(user("hi")).unwrap();
    session
        .append(NewEntry::Custom {
            custom_type: js("\"ext\""),
            data: Some(js("{\"n\":1}")),
        })
        .unwrap();
    session.branch(&u).unwrap();
    let summary = session
        .branch_with_summary(None, js("\"gone\""), None, None, None)
        .unwrap();
    let written = lines(&path);
    assert_eq!(written.len(), 6);
    assert!(
        written[2].starts_with(r#"{"type":"custom","id":""#),
        "harness key order: {}",
        written[2]
    );
    assert!(
        written[3].starts_with(r#"{"type":"leaf","id":""#)
            && written[3].ends_with(&format!(r#""targetId":"{u}"}}"#))
    );
    assert!(written[4].ends_with(r#""targetId":null}"#));
    assert!(
        written[5].contains(r#""type":"branch_summary""#)
            && written[5].contains(r#""parentId":null"#)
    );
    assert_eq!(session.leaf(), &Leaf::Id(summary.as_str().into()));
    // Reopening folds the leaf entries back to the same leaf.
    drop(session);
    let reopened = Session::open(&path, "/w", options(Profile::Harness)).unwrap();
    assert_eq!(reopened.leaf(), &Leaf::Id(summary.into()));
}

fn an_append_after_a_torn_last_line_is_not_lost() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "torn.jsonl",
        concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"x"}}"#,
            "\n",
            r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:00.000Z","mess"#,
        ),
    );
    let mut session = Session::open(&path, "/w", options(Profile::PiCli)).unwrap();
    assert_eq!(session.warnings()[0].line, 3);
    let id = session.append(user("after the tear")).unwrap();
    drop(session);
    let mut reopened = Session::open_read_only(&path, options(Profile::PiCli)).unwrap();
    assert_eq!(reopened.leaf(), &Leaf::Id(id.as_str().into()));
    let leaf = reopened.leaf().clone();
    let context = reopened.build_context(&leaf, MessageFormat::Agent).unwrap();
    assert_eq!(context.messages.len(), 2);
    assert_eq!(
        context.messages[1].get("content"),
        Some(&js("\"after the tear\""))
    );
}

fn a_second_writer_gets_a_locked_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = new_session(dir.path(), Profile::Harness);
    first.append(user("hi")).unwrap();
    let path = dir.path().join("s.jsonl");
    let error = Session::open(&path, "/w", options(Profile::Harness)).unwrap_err();
    assert_eq!(error.kind, ErrorKind::Locked);
    assert_eq!(
        error.message,
        format!(
            "{}: another process has this session open for writing",
            path.display()
        )
    );
    // Readers are never refused.
    assert!(Session::open_read_only(&path, options(Profile::Harness)).is_ok());
    drop(first);
    assert!(Session::open(&path, "/w", options(Profile::Harness)).is_ok());
}

fn cycles_and_self_parents_end_the_walk_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "cycle.jsonl",
        concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":"b","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"A"}}"#,
            "\n",
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"B"}}"#,
            "\n",
            r#"{"type":"message","id":"c","parentId":"c","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"C"}}"#,
            "\n",
        ),
    );
    for profile in [Profile::PiCli, Profile::Harness] {
        let mut session = Session::open_read_only(&path, options(profile)).unwrap();
        let context = session
            .build_context(&Leaf::Id("b".into()), MessageFormat::Agent)
            .unwrap();
        assert_eq!(context.messages.len(), 2, "{profile:?}");
        let context = session
            .build_context(&Leaf::Id("c".into()), MessageFormat::Agent)
            .unwrap();
        assert_eq!(context.messages.len(), 1, "{profile:?}");
        let warnings: Vec<&str> = session
            .warnings()
            .iter()
            .map(|w| w.message.as_str())
            .collect();
        assert_eq!(
            warnings,
            [
                "the parent chain of entry b loops back on itself; the walk stops there",
                "the parent chain of entry c loops back on itself; the walk stops there"
            ]
        );
        // The self-parent is a root of the tree; the two-entry loop is reachable from no root.
        let rows: Vec<u32> = session.tree_rows().iter().map(|r| r.position).collect();
        assert_eq!(rows, [2]);
    }
}

fn bad_inputs_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(PathBuf, ErrorKind, String)> = vec![
        {
            let p = dir.path().join("missing.jsonl");
            let m = format!(
                "{}: cannot open: No such file or directory (os error 2)",
                p.display()
            );
            (p, ErrorKind::SessionNotFound, m)
        },
        {
            let p = dir.path().to_path_buf();
            (
                p.clone(),
                ErrorKind::Io,
                format!("{}: is a directory", p.display()),
            )
        },
        {
            let p = dir.path().join("garbage.jsonl");
            std::fs::write(&p, [0u8, 159, 146, 150, 255, b'\n', 1, 2, 3]).unwrap();
            (
                p.clone(),
                ErrorKind::InvalidSession,
                format!("Session file is not a valid pi session: {}", p.display()),
            )
        },
        {
            let p = write(dir.path(), "empty.jsonl", "");
            (
                p.clone(),
                ErrorKind::InvalidSession,
                format!(
                    "{}: empty file, not a pi session (it has no header line)",
                    p.display()
                ),
            )
        },
        {
            let p = write(
                dir.path(),
                "entry-first.jsonl",
                "{\"type\":\"message\",\"id\":\"a\"}\n",
            );
            (
                p.clone(),
                ErrorKind::InvalidSession,
                format!("Session file is not a valid pi session: {}", p.display()),
            )
        },
    ];
    for (path, kind, message) in cases {
        let error = Session::open_read_only(&path, options(Profile::PiCli)).unwrap_err();
        assert_eq!(
            (error.kind, error.message.as_str()),
            (kind, message.as_str()),
            "{}",
            path.display()
        );
    }
    let huge = write(
        dir.path(),
        "huge.jsonl",
        &format!(
            "{}\n{}\n",
            r#"{"type":"session","id":"s"}"#,
            "x".repeat(5000)
        ),
    );
    let small_lines = SessionOptions {
        max_line_bytes: 4096,
        ..options(Profile::PiCli)
    };
    let error = Session::open_read_only(&huge, small_lines).unwrap_err();
    assert_eq!((error.kind, error.line), (ErrorKind::LineTooLong, Some(2)));
    assert_eq!(
        error.message,
        format!("{}: line 2 is longer than 4096 bytes", huge.display())
    );
}

fn the_harness_profile_rejects_what_the_harness_rejects() {
    let dir = tempfile::tempdir().unwrap();
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"}"#;
    let cases = [
        ("\n  \n", "missing session header"),
        (
            "{\"type\":\"session\",\"id\":\"s\"}\n",
            "unsupported session version",
        ),
        (
            "{\"type\":\"session\",\"version\":3,\"id\":\"\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n",
            "session header is missing id",
        ),
        (
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"cwd\":\"/\"}\n",
            "session header is missing timestamp",
        ),
        (
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\",\"metadata\":[]}\n",
            "session header metadata must be an object",
        ),
        ("[1]\n", "first line is not a valid session header"),
    ];
    for (content, reason) in cases {
        let path = write(dir.path(), "h.jsonl", content);
        let error = Session::open_read_only(&path, options(Profile::Harness)).unwrap_err();
        assert_eq!(error.kind, ErrorKind::InvalidSession);
        assert_eq!(
            error.message,
            format!("Invalid JSONL session file {}: {reason}", path.display())
        );
    }
    let entries = [
        // (A line cut short is a torn write, skipped with a warning: see the torn-tail tests.)
        ("{\"type\":\"message\"]", "line 3 is not valid JSON"),
        ("null", "line 3 is not a valid session entry"),
        ("[]", "line 3 is missing entry type"),
        ("{\"type\":\"x\",\"id\":\"\"}", "line 3 is missing entry id"),
        (
            "{\"type\":\"x\",\"id\":\"b\"}",
            "line 3 has invalid parentId",
        ),
        (
            "{\"type\":\"x\",\"id\":\"b\",\"parentId\":null}",
            "line 3 is missing timestamp",
        ),
        (
            "{\"type\":\"leaf\",\"id\":\"b\",\"parentId\":null,\"timestamp\":\"t\"}",
            "line 3 has invalid targetId",
        ),
    ];
    for (line, reason) in entries {
        // A blank line before the bad one: the harness numbers non-blank lines only.
        let content = format!(
            "{header}\n{{\"type\":\"x\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"t\"}}\n\n{line}\n"
        );
        let path = write(dir.path(), "h.jsonl", &content);
        let error = Session::open_read_only(&path, options(Profile::Harness)).unwrap_err();
        assert_eq!(
            (error.kind, error.line),
            (ErrorKind::InvalidEntry, Some(4)),
            "{line}"
        );
        assert_eq!(
            error.message,
            format!("Invalid JSONL session file {}: {reason}", path.display())
        );
    }
}

fn migration_rewrites_the_file_and_keeps_the_original_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let original = concat!(
        r#"{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#,
        "\n",
        "not json\n",
        r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"q"}}"#,
        "\n",
        r#"{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"hookMessage","content":"h"}}"#,
        "\n",
    );
    let path = write(dir.path(), "v1.jsonl", original);
    let session = Session::open(&path, "/w", options(Profile::PiCli)).unwrap();
    let backup = dir.path().join("v1.jsonl.v1.bak");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);
    let written = lines(&path);
    assert_eq!(written.len(), 3);
    assert_eq!(
        written[0],
        r#"{"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w","version":3}"#
    );
    let first = js(&written[1]);
    let second = js(&written[2]);
    assert_eq!(second.get("parentId"), first.get("id"));
    assert_eq!(
        second.get("message").and_then(|m| m.get("role")),
        Some(&js("\"custom\""))
    );
    assert_eq!(
        session.leaf().id(),
        second.get("id").and_then(JsValue::as_str).as_deref()
    );
    let messages: Vec<&str> = session
        .warnings()
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        messages[0],
        "line 2 skipped: is not valid JSON (unexpected token at byte 0)"
    );
    assert!(
        messages[2].starts_with("version 1 file migrated to version 3; the original is kept at")
    );
}

fn labels_follow_each_profile() {
    let dir = tempfile::tempdir().unwrap();
    for profile in [Profile::PiCli, Profile::Harness] {
        let sub = dir.path().join(profile.name());
        std::fs::create_dir_all(&sub).unwrap();
        let mut session = new_session(&sub, profile);
        let u = session.append(user("hi")).unwrap();
        session.append(assistant("yo")).unwrap();
        session
            .append(NewEntry::Label {
                target_id: u.clone(),
                label: Some(js("\"  pad  \"")),
            })
            .unwrap();
        let expected = if profile == Profile::PiCli {
            "\"  pad  \""
        } else {
            "\"pad\""
        };
        assert_eq!(session.label(&u), Some(js(expected)));
        session
            .append(NewEntry::Label {
                target_id: u.clone(),
                label: Some(js("\"   \"")),
            })
            .unwrap();
        let expected = if profile == Profile::PiCli {
            Some(js("\"   \""))
        } else {
            None
        };
        assert_eq!(session.label(&u), expected);
        session
            .append(NewEntry::Label {
                target_id: u.clone(),
                label: None,
            })
            .unwrap();
        assert_eq!(session.label(&u), None);
        let error = session
            .append(NewEntry::Label {
                target_id: "nope".into(),
                label: None,
            })
            .unwrap_err();
        assert_eq!(
            (error.kind, error.message.as_str()),
            (ErrorKind::EntryNotFound, "Entry nope not found")
        );
    }
}

/// u1 a1 u2 a2 on the main line; the leaf at a2.
fn conversation(dir: &Path, profile: Profile) -> (Session, [String; 4]) {
    let mut session = new_session(dir, profile);
    let u1 = session.append(user("first")).unwrap();
    let a1 = session.append(assistant("one")).unwrap();
    let u2 = session.append(user("second")).unwrap();
    let a2 = session.append(assistant("two")).unwrap();
    (session, [u1, a1, u2, a2])
}

fn navigating_to_a_user_message_lands_on_its_parent_and_returns_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let (mut session, [_u1, a1, u2, a2]) = conversation(dir.path(), Profile::PiCli);
    let request = TreeRequest {
        target_id: u2.clone(),
        label: Some("here".into()),
        ..TreeRequest::default()
    };
    let preparation = session.prepare_tree(&request).unwrap().unwrap();
    // The target is an ancestor of the old leaf: it is the common ancestor, and not summarized.
    assert_eq!(preparation.common_ancestor_id.as_deref(), Some(u2.as_str()));
    assert_eq!(preparation.entries_to_summarize.len(), 1);
    let decision = decide(Profile::PiCli, &preparation, None, None).unwrap();
    let outcome = session
        .apply_navigation(&preparation, &decision)
        .unwrap()
        .unwrap();
    assert_eq!(outcome.editor_text.as_deref(), Some("second"));
    assert_eq!(outcome.old_leaf, Leaf::Id(a2.as_str().into()));
    // The label goes on the target and, being an append, becomes the leaf under a1.
    let label_entry = session
        .entry_value(session.position(outcome.new_leaf.id().unwrap()).unwrap())
        .unwrap();
    assert_eq!(
        label_entry.get("parentId"),
        Some(&JsValue::from(a1.as_str()))
    );
    assert_eq!(
        label_entry.get("targetId"),
        Some(&JsValue::from(u2.as_str()))
    );
    assert_eq!(outcome.from_extension, None);
    assert_eq!(outcome.summary_entry, None);
}

fn a_wanted_summary_comes_from_the_hook_or_the_caller_or_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (mut session, [u1, a1, _u2, _a2]) = conversation(dir.path(), Profile::PiCli);
    let before = lines(&dir.path().join("s.jsonl")).len();
    let request = TreeRequest {
        target_id: a1.clone(),
        summarize: true,
        ..TreeRequest::default()
    };
    let preparation = session.prepare_tree(&request).unwrap().unwrap();
    assert_eq!(preparation.entries_to_summarize.len(), 2);
    let error = decide(Profile::PiCli, &preparation, None, None).unwrap_err();
    assert_eq!(error.kind, ErrorKind::SummaryRequired);
    assert_eq!(lines(&dir.path().join("s.jsonl")).len(), before);
    // A veto writes nothing either.
    let veto = TreeHookAnswer {
        cancel: true,
        ..TreeHookAnswer::default()
    };
    assert!(matches!(
        decide(Profile::PiCli, &preparation, Some(veto), None).unwrap(),
        TreeDecision::Cancel
    ));
    // The hook's summary wins over the caller's and is marked as the extension's.
    let hook = TreeHookAnswer {
        summary: Some(SummaryInput {
            summary: js("\"from hook\""),
            details: None,
            usage: None,
        }),
        label: Some("lbl".into()),
        ..TreeHookAnswer::default()
    };
    let supplied = SummaryInput {
        summary: js("\"from caller\""),
        details: None,
        usage: None,
    };
    let decision = decide(Profile::PiCli, &preparation, Some(hook), Some(supplied)).unwrap();
    let outcome = session
        .apply_navigation(&preparation, &decision)
        .unwrap()
        .unwrap();
    let summary = outcome.summary_entry.unwrap();
    assert_eq!(summary.get("summary"), Some(&js("\"from hook\"")));
    assert_eq!(summary.get("fromId"), Some(&JsValue::from(a1.as_str())));
    assert_eq!(summary.get("fromHook"), Some(&JsValue::Bool(true)));
    assert_eq!(outcome.from_extension, Some(true));
    // The label is on the summary entry, and the label entry is the new leaf.
    let summary_id = summary
        .get("id")
        .and_then(JsValue::as_str)
        .unwrap()
        .into_owned();
    assert_eq!(session.label(&summary_id), Some(js("\"lbl\"")));
    assert_ne!(outcome.new_leaf.id(), Some(summary_id.as_str()));
    let _ = u1;
}

fn forks_check_their_target_and_branched_copies_recreate_labels() {
    let dir = tempfile::tempdir().unwrap();
    let (mut session, [u1, a1, u2, a2]) = conversation(dir.path(), Profile::PiCli);
    session
        .append(NewEntry::Label {
            target_id: a1.clone(),
            label: Some(js("\"mark\"")),
        })
        .unwrap();
    let after_label = session.append(user("third")).unwrap();
    let error = session
        .fork_selection(&a1, ForkPosition::Before)
        .unwrap_err();
    assert_eq!(
        (error.kind, error.message.as_str()),
        (ErrorKind::InvalidForkTarget, "Invalid entry ID for forking")
    );
    let selection = session.fork_selection(&u2, ForkPosition::Before).unwrap();
    assert_eq!(
        (
            selection.leaf_id.as_deref(),
            selection.selected_text.as_deref()
        ),
        (Some(a1.as_str()), Some("second"))
    );
    let root = session.fork_selection(&u1, ForkPosition::Before).unwrap();
    assert_eq!(root.leaf_id, None);
    let entries = session.branched_entries(&after_label).unwrap();
    let ids: Vec<String> = entries
        .iter()
        .map(|e| e.get("id").and_then(JsValue::as_str).unwrap().into_owned())
        .collect();
    assert_eq!(
        &ids[..5],
        [
            u1.as_str(),
            a1.as_str(),
            u2.as_str(),
            a2.as_str(),
            after_label.as_str()
        ]
    );
    // The label entry was dropped from the path; the entry after it is re-chained to a2.
    assert_eq!(
        entries[4].get("parentId"),
        Some(&JsValue::from(a2.as_str()))
    );
    let label = &entries[5];
    assert_eq!(label.get("targetId"), Some(&JsValue::from(a1.as_str())));
    assert_eq!(
        label.get("parentId"),
        Some(&JsValue::from(after_label.as_str()))
    );
    assert_eq!(
        label.get("timestamp"),
        Some(&js("\"2026-01-01T00:00:00.005Z\""))
    );
    let copy_path = dir.path().join("copy.jsonl");
    let new = NewSession {
        path: Some(copy_path.clone()),
        cwd: "/w".into(),
        parent_session: Some("/p".into()),
        ..NewSession::default()
    };
    let copy = Session::from_entries(new, &entries, options(Profile::PiCli), false).unwrap();
    assert_eq!(
        copy.leaf().id(),
        label.get("id").and_then(JsValue::as_str).as_deref()
    );
    assert_eq!(lines(&copy_path).len(), 7);
}

fn reading_a_v1_file_migrates_in_memory_and_leaves_the_file_alone() {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/real/pi-v1-large-session.jsonl"),
    )
    .unwrap();
    let path = dir.path().join("v1.jsonl");
    std::fs::write(&path, &original).unwrap();
    let mut session = Session::open_read_only(&path, options(Profile::PiCli)).unwrap();
    let leaf = session.leaf().clone();
    assert!(
        !session
            .build_context(&leaf, MessageFormat::Agent)
            .unwrap()
            .messages
            .is_empty()
    );
    assert_eq!(session.header().get("version"), Some(&JsValue::Number(3.0)));
    assert_eq!(std::fs::read(&path).unwrap(), original);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no backup, no rewrite"
    );
}

fn durable_sessions_sync_each_append_and_keep_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let new = NewSession {
        path: Some(dir.path().join("d.jsonl")),
        cwd: "/w".into(),
        ..NewSession::default()
    };
    let durable = SessionOptions {
        durable: true,
        ..options(Profile::Harness)
    };
    let mut session = Session::create(new, durable).unwrap();
    for i in 0..3 {
        session.append(user(&format!("line {i}"))).unwrap();
    }
    assert_eq!(lines(&dir.path().join("d.jsonl")).len(), 4);
}

crate::tests! {
    pi_cli_writes_nothing_until_the_first_assistant_message_then_everything,
    harness_writes_the_header_at_once_and_a_leaf_entry_for_every_move,
    an_append_after_a_torn_last_line_is_not_lost,
    a_second_writer_gets_a_locked_error,
    cycles_and_self_parents_end_the_walk_with_a_warning,
    bad_inputs_are_clear_errors,
    the_harness_profile_rejects_what_the_harness_rejects,
    migration_rewrites_the_file_and_keeps_the_original_beside_it,
    labels_follow_each_profile,
    navigating_to_a_user_message_lands_on_its_parent_and_returns_its_text,
    a_wanted_summary_comes_from_the_hook_or_the_caller_or_nothing_is_written,
    forks_check_their_target_and_branched_copies_recreate_labels,
    reading_a_v1_file_migrates_in_memory_and_leaves_the_file_alone,
    durable_sessions_sync_each_append_and_keep_every_line,
}
