//! The fork command alone: exact expected files and pi's refusals (no Node needed).

use super::*;

/// `pi-session fork ARGS`: the JSON document it prints, or its exit code and stderr.
pub(crate) fn fork_command(args: &[&str]) -> Result<JsValue, (i32, String)> {
    let output = Command::new(BIN)
        .arg("fork")
        .args(args)
        .output()
        .expect("pi-session runs");
    if output.status.success() {
        Ok(parse(std::str::from_utf8(&output.stdout).unwrap()))
    } else {
        assert!(output.stdout.is_empty());
        Err((
            output.status.code().unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        ))
    }
}

/// A hand-made assistant line as `JSON.stringify` writes it back: the copy is re-serialized, so
/// `1e21` becomes `1e+21`.
pub(crate) fn restringified(line: &str) -> String {
    assert!(line.contains(r#""input":1e21,"#));
    line.replace(r#""input":1e21,"#, r#""input":1e+21,"#)
}

pub(crate) fn is_short_id(id: &str) -> bool {
    id.len() == 8
        && id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// The clone of the hand-made labels session at its last entry, into a directory that does not
/// exist yet, written out in full: the path without its label entries, re-chained, then the
/// labels still set on it in pi's order (where a target was first labelled, or labelled again
/// after a clear), each with the timestamp of the label entry that set it last (none when that
/// entry had none).
fn a_clone_re_creates_the_labels_of_its_path_in_pis_order() {
    let scratch = Scratch::new();
    let source = scratch.write("labels.jsonl", &labels_session());
    let before = std::fs::read(&source).unwrap();
    let out = scratch.path("new/sessions");
    let doc = fork_command(&[
        "--entry",
        "a4",
        "--at",
        "--out",
        path_str(&out),
        path_str(&source),
    ])
    .unwrap();
    assert_eq!(
        std::fs::read(&source).unwrap(),
        before,
        "the source is never changed"
    );
    let file = PathBuf::from(str_of(&doc, "file").unwrap());
    assert_eq!(files_in(&out), vec![file.clone()]);
    assert_eq!(doc.get("written"), Some(&JsValue::Bool(true)));
    assert_eq!(doc.get("selectedText"), None);
    let lines = lines(&file);
    let ids: Vec<String> = lines[7..]
        .iter()
        .map(|l| str_of(&parse(l), "id").unwrap())
        .collect();
    assert!(
        ids.iter().all(|id| is_short_id(id)),
        "fresh entry ids: {ids:?}"
    );
    assert_eq!(
        ids.iter().collect::<HashSet<_>>().len(),
        5,
        "distinct ids: {ids:?}"
    );
    let header = parse(&lines[0]);
    let session_id = str_of(&doc, "sessionId").unwrap();
    assert_eq!(
        lines[0],
        format!(
            r#"{{"type":"session","version":3,"id":"{session_id}","timestamp":{},"cwd":"/work/hand made","parentSession":{}}}"#,
            header.get("timestamp").unwrap().stringify(),
            JsValue::from(path_str(&source)).stringify()
        )
    );
    let label_line = |n: usize, parent: &str, timestamp: Option<u32>, target: &str, label: &str| {
        let timestamp = timestamp.map_or(String::new(), |s| format!(r#","timestamp":"{}""#, ts(s)));
        format!(
            r#"{{"type":"label","id":"{}","parentId":"{parent}"{timestamp},"targetId":"{target}","label":{label}}}"#,
            ids[n]
        )
    };
    let expected = vec![
        lines[0].clone(),
        user("u1", None, 1, "first question"),
        restringified(&assistant("a1", Some("u1"), 2, "first answer")),
        user("u2", Some("a1"), 4, "second question"),
        restringified(&assistant("a2", Some("u2"), 5, "second answer")),
        user("u4", Some("a2"), 18, "third question"),
        restringified(&assistant("a4", Some("u4"), 21, "third answer")),
        label_line(0, "a4", None, "a1", "\"no time\""),
        label_line(1, &ids[0], Some(10), "a2", "\"changed\""),
        label_line(2, &ids[1], Some(9), "u1", "\"again\""),
        label_line(3, &ids[2], Some(17), "u2", "{\"nested\":[1,2]}"),
        label_line(4, &ids[3], Some(20), "u4", "true"),
    ];
    assert_eq!(lines, expected);
    assert_eq!(str_of(&doc, "leafId").as_deref(), Some(ids[4].as_str()));
}

/// `/fork` before a root user message starts an empty session (pi writes it at its first
/// reply), and gives the message's text blocks joined; before another user message, the path
/// up to its parent.
fn a_fork_before_a_user_message_copies_the_path_to_its_parent() {
    let scratch = Scratch::new();
    let source = scratch.write("labels.jsonl", &labels_session());
    let out = scratch.path("out");
    let root =
        fork_command(&["--entry", "u1", "--out", path_str(&out), path_str(&source)]).unwrap();
    assert_eq!(root.get("written"), Some(&JsValue::Bool(false)));
    assert_eq!(root.get("leafId"), Some(&JsValue::Null));
    assert_eq!(
        str_of(&root, "selectedText").as_deref(),
        Some("first question!")
    );
    assert!(
        out.is_dir(),
        "the directory is made, as pi's SessionManager makes it"
    );
    assert_eq!(files_in(&out), Vec::<PathBuf>::new());

    let doc = fork_command(&["--entry", "u2", "--out", path_str(&out), path_str(&source)]).unwrap();
    assert_eq!(
        str_of(&doc, "selectedText").as_deref(),
        Some("second question!")
    );
    let file = PathBuf::from(str_of(&doc, "file").unwrap());
    let lines = lines(&file);
    assert_eq!(
        lines[1..3],
        [
            user("u1", None, 1, "first question"),
            restringified(&assistant("a1", Some("u1"), 2, "first answer"))
        ]
    );
    // The labels set on u1 and a1, the last one the leaf.
    let labels: Vec<JsValue> = lines[3..].iter().map(|l| parse(l)).collect();
    let targets: Vec<String> = labels
        .iter()
        .map(|l| str_of(l, "targetId").unwrap())
        .collect();
    assert_eq!(targets, ["a1", "u1"]);
    assert_eq!(doc.get("leafId"), labels[1].get("id"));
}

fn forks_pi_refuses_are_refused_with_its_messages() {
    let scratch = Scratch::new();
    let labels = scratch.write("labels.jsonl", &labels_session());
    let quiet = scratch.write("quiet.jsonl", &no_assistant_session());
    let out = scratch.path("out");
    let refused = |file: &Path, entry: &str, at: bool| {
        let mut args = vec!["--entry", entry, "--out", path_str(&out), path_str(file)];
        if at {
            args.push("--at");
        }
        fork_command(&args).unwrap_err()
    };
    let message =
        |file: &Path, text: &str| (1, format!("pi-session: {}: {text}\n", file.display()));
    assert_eq!(
        refused(&labels, "nope", false),
        message(&labels, INVALID_FORK_TARGET)
    );
    assert_eq!(
        refused(&labels, "nope", true),
        message(&labels, INVALID_FORK_TARGET)
    );
    // Only user messages can be forked before.
    assert_eq!(
        refused(&labels, "a1", false),
        message(&labels, INVALID_FORK_TARGET)
    );
    assert_eq!(
        refused(&labels, "l1", false),
        message(&labels, INVALID_FORK_TARGET)
    );
    // A user message whose parent is gone: createBranchedSession finds no path.
    assert_eq!(
        refused(&quiet, "q5", false),
        message(&quiet, "Entry gone not found")
    );
    assert_eq!(files_in(&out), Vec::<PathBuf>::new());
    // A path without an assistant message is not written (pi writes it at the first reply).
    let doc = fork_command(&[
        "--entry",
        "q4",
        "--at",
        "--out",
        path_str(&out),
        path_str(&quiet),
    ])
    .unwrap();
    assert_eq!(doc.get("written"), Some(&JsValue::Bool(false)));
    assert!(!PathBuf::from(str_of(&doc, "file").unwrap()).exists());
    assert_eq!(files_in(&out), Vec::<PathBuf>::new());
}

crate::tests! {
    a_clone_re_creates_the_labels_of_its_path_in_pis_order,
    a_fork_before_a_user_message_copies_the_path_to_its_parent,
    forks_pi_refuses_are_refused_with_its_messages,
}
