//! `pi-session test FILE...` as a tester meets it: the real binary plays transcripts against
//! a fresh `pi-session --stdio` each (or another server with `--bin`), prints a report naming
//! the file, line, message and member of every failed expectation, and exits 0 / 1 / 2.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn pi_session(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn transcripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// A transcript of the sidecar: initialize, `middle` (steps, comma-terminated), shutdown, exit.
fn sidecar_transcript(middle: &str) -> String {
    format!(
        r#"{{
  "description": "a test of pi-session test",
  "steps": [
    {{"request": [1, "initialize", {{"deterministic": true, "sessionsRoot": "${{tmp}}/sessions"}}]}},
    {{"expect": [{{"id": 1, "result": {{"protocolVersion": "${{any}}"}}}}]}},
    {middle}
    {{"request": [9, "shutdown", null]}},
    {{"expect": [{{"id": 9, "result": null}}]}},
    {{"notify": ["exit", null]}}
  ]
}}
"#
    )
}

fn a_wrong_expectation_exits_1_with_a_report_naming_file_line_message_and_member() {
    let file = transcripts_dir().join("must_fail/wrong_expectation.json");
    let out = pi_session(&["test", file.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    let wanted = [
        &format!(
            "FAIL {}:10: step 6 (expect): message 1 of 1 expected here",
            file.display()
        ),
        "server message 3, the response to request 3 (session/append)): 2 member(s) differ",
        "  member `result.entryId`\n    expected: \"not-the-id\"\n    actual:   \"",
        "  member `result.wrongMember`\n    expected: true\n    actual:   (missing)\n",
        "1 transcript(s): 0 passed, 1 failed\n",
    ];
    for part in wanted {
        assert!(stdout.contains(part), "{part:?} not in:\n{stdout}");
    }
    print!("{stdout}");
}

/// One format, one runner: every sidecar transcript of the project passes through the real
/// binary and gives the exchange its snapshot (made in memory on a paused clock) records.
fn every_sidecar_transcript_passes_through_the_binary_with_its_snapshots_exchange() {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(transcripts_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let transcript: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        if transcript["server"]["state"] != "test" {
            files.push(path.to_str().unwrap().to_owned());
        }
    }
    files.sort();
    assert!(
        files.len() >= 60,
        "only {} sidecar transcripts",
        files.len()
    );
    // A loaded machine (2 cores, several builds) must not turn a slow answer into a failure.
    let mut args = vec!["test", "--json", "--timeout", "60"];
    args.extend(files.iter().map(String::as_str));
    let out = pi_session(&args);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    let failures: Vec<String> = report["transcripts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["passed"] != true)
        .map(|t| format!("{}:{}: {}", t["file"], t["line"], t["failure"]))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(report["passed"], files.len());

    for played in report["transcripts"].as_array().unwrap() {
        let file = Path::new(played["file"].as_str().unwrap());
        let name = file.file_stem().unwrap().to_str().unwrap();
        let snap = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
            "tests/suite/snapshots/suite__rpc_transcripts__{name}.snap"
        ));
        let snap = std::fs::read_to_string(&snap).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (run cargo test --test suite -- rpc_transcripts::)",
                snap.display()
            )
        });
        // An insta snapshot: a `---` header, then the JSON.
        let body = snap.splitn(3, "---\n").nth(2).expect("a snapshot header");
        let mut recorded: Value = serde_json::from_str(body).unwrap();
        // The process gives no in-memory stop reason, only the exit status.
        for step in recorded.as_array_mut().unwrap() {
            if let Some(exit) = step.get_mut("exit").and_then(Value::as_object_mut) {
                exit.remove("reason");
            }
        }
        let mut played = played["exchange"].clone();
        hide_version(&mut played);
        assert_eq!(
            played, recorded,
            "{name}: the binary's exchange differs from the snapshot"
        );
    }
}

/// As the snapshots show it.
fn hide_version(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, member) in map.iter_mut() {
                if key == "serverInfo"
                    && let Some(version) = member.get_mut("version")
                {
                    *version = Value::from("[version]");
                } else {
                    hide_version(member);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(hide_version),
        _ => {}
    }
}

fn a_directory_plays_its_transcripts_and_a_filter_picks_some() {
    let dir = tempfile::tempdir().unwrap();
    // A clean shutdown and exit: status 0, as the transcript says.
    let good = sidecar_transcript("").replacen("\"steps\"", "\"exitCode\": 0, \"steps\"", 1);
    write(dir.path(), "good.json", &good);
    write(
        dir.path(),
        "bad.json",
        &sidecar_transcript(
            r#"{"request": [2, "session/create", {"cwd": "/w", "id": "s", "inMemory": true}]},
    {"expect": [{"id": 2, "result": {"sessionId": "t"}}]},"#,
        ),
    );
    write(dir.path(), "notes.txt", "not a transcript");
    let out = pi_session(&["test", dir.path().to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("bad.json:7: step 4 (expect)"), "{stdout}");
    assert!(
        stdout.contains("  member `result.sessionId`\n    expected: \"t\"\n    actual:   \"s\"\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ok   ") && stdout.contains("good.json ("),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("2 transcript(s): 1 passed, 1 failed\n"),
        "{stdout}"
    );

    let out = pi_session(&["test", "--filter", "good", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).ends_with("1 transcript(s): 1 passed, 0 failed\n"));

    let out = pi_session(&["test", "--filter", "nothing", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no transcript's path contains \"nothing\""));
}

fn an_unreadable_transcript_exits_2_naming_its_file_and_line_and_nothing_is_played() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.json", &sidecar_transcript(""));
    let syntax = write(
        dir.path(),
        "syntax.json",
        "{\n  \"description\": \"x\",\n  \"steps\": [\n    {\"request\": [1, \"initialize\", {]}\n  ]\n}\n",
    );
    let unknown = write(
        dir.path(),
        "unknown.json",
        &sidecar_transcript(r#"{"expekt": 1},"#),
    );
    let missing = dir.path().join("missing.json");
    let out = pi_session(&["test", &good, &syntax, &unknown, missing.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(text(&out.stdout), "", "nothing is played");
    assert!(
        stderr.contains(&format!("pi-session: {syntax}:4:")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("pi-session: {unknown}:6:"))
            && stderr.contains("unknown variant `expekt`"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("pi-session: {}: No such file", missing.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("3 transcript(s) cannot be played; none was played"),
        "{stderr}"
    );
}

fn a_transcript_for_the_projects_test_server_is_refused_with_exit_2() {
    let file = transcripts_dir().join("hooks.json");
    let out = pi_session(&["test", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("{}:3: server.state \"test\"", file.display())),
        "{stderr}"
    );
}

fn unread_messages_a_wrong_exit_status_and_a_silent_server_fail_the_transcript() {
    let dir = tempfile::tempdir().unwrap();
    // The shutdown answer is never read.
    let unread = write(
        dir.path(),
        "unread.json",
        r#"{"description": "d", "steps": [
  {"request": [1, "initialize", {"deterministic": true}]}, {"expect": 1},
  {"request": [2, "shutdown", null]}, {"notify": ["exit", null]}]}"#,
    );
    // A clean shutdown exits 0, not 1.
    let status = write(
        dir.path(),
        "status.json",
        &sidecar_transcript("").replacen("\"steps\"", "\"exitCode\": 1, \"steps\"", 1),
    );
    // A second answer that never comes.
    let silent = write(
        dir.path(),
        "silent.json",
        r#"{"description": "d", "steps": [
  {"request": [1, "initialize", {"deterministic": true}]},
  {"expect": 2}]}"#,
    );
    let started = std::time::Instant::now();
    let out = pi_session(&["test", "--timeout", "0.5", &unread, &status, &silent]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(&format!("FAIL {unread}: the server sent 1 message(s) that no expect step read:\n  {{\"jsonrpc\":\"2.0\",\"result\":null,\"id\":2}}")), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "FAIL {status}: the server exited with status 0; the transcript expects 1"
        )),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("FAIL {silent}:3: step 2 (expect): message 2 of 2 expected here (server message 2): no server message within 500ms")), "{stdout}");
    assert!(
        stdout.ends_with("3 transcript(s): 0 passed, 3 failed\n"),
        "{stdout}"
    );
    assert!(
        started.elapsed().as_secs() < 8,
        "the timeout bounds the wait"
    );
}

/// A shell script standing in for another server: it answers the first request with the
/// arguments it was started with, then exits at the end of its input.
fn fake_server(dir: &Path) -> String {
    let script = write(
        dir,
        "fake-server",
        "#!/bin/sh\nread line\nprintf '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"args\":\"%s\"}}\\n' \"$*\"\necho 'about to stop' >&2\nwhile read line; do :; done\n",
    );
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

fn bin_tests_another_server_started_with_stdio_and_the_transcripts_server_options() {
    let dir = tempfile::tempdir().unwrap();
    let bin = fake_server(dir.path());
    let passes = write(
        dir.path(),
        "passes.json",
        r#"{"description": "d", "server": {"maxFrameBytes": 4096}, "steps": [
  {"request": [1, "initialize", {}]},
  {"expect": [{"id": 1, "result": {"args": "--stdio --max-frame-bytes 4096"}}]}]}"#,
    );
    let fails = write(
        dir.path(),
        "fails.json",
        r#"{"description": "d", "steps": [
  {"request": [1, "initialize", {}]},
  {"expect": [{"id": 1, "result": {"args": "--stdio", "protocolVersion": "${any}"}}]}]}"#,
    );
    let out = pi_session(&["test", "--bin", &bin, &passes, &fails]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains(&format!("ok   {passes}")), "{stdout}");
    assert!(
        stdout.contains(
            "  member `result.protocolVersion`\n    expected: \"${any}\"\n    actual:   (missing)\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("  the server's stderr (its last lines):\n    about to stop\n"),
        "{stdout}"
    );

    // A relative path is the tester's, not the transcript directory's.
    let out = Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .args(["test", "--bin", "./fake-server", "passes.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );

    // A server that cannot start is misuse, not a failed transcript.
    let missing = dir.path().join("no-such-server");
    let out = pi_session(&["test", "--bin", missing.to_str().unwrap(), &passes]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains(&format!("cannot start {}", missing.display())));
}

fn a_server_that_dies_fails_the_transcript_naming_the_step() {
    let dir = tempfile::tempdir().unwrap();
    let bin = write(
        dir.path(),
        "dies",
        "#!/bin/sh\necho 'crashed' >&2\nexit 3\n",
    );
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = write(dir.path(), "t.json", &sidecar_transcript(""));
    let out = pi_session(&["test", "--bin", &bin, &file]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    // Either the write or the read sees it first; both name the step.
    assert!(
        stdout.contains(&format!("FAIL {file}:4: step 1 (request): cannot write to the server"))
            || stdout.contains(&format!("FAIL {file}:5: step 2 (expect): message 1 of 1 expected here (server message 1): the server closed its output")),
        "{stdout}"
    );
    assert!(stdout.contains("    crashed\n"), "{stdout}");
}

fn help_and_completions_offer_the_command() {
    let help = text(&pi_session(&["--help"]).stdout);
    assert!(
        help.contains("test ") && help.contains("Play transcripts"),
        "{help}"
    );
    let help = text(&pi_session(&["test", "--help"]).stdout);
    assert!(
        help.contains("Exit status:\n  0  every transcript passed\n"),
        "{help}"
    );
    for option in ["--bin", "--filter", "--fixtures", "--timeout", "--json"] {
        assert!(help.contains(option), "{option} not in:\n{help}");
    }
    let bash = text(&pi_session(&["completions", "bash"]).stdout);
    assert!(
        bash.contains("pi__session__subcmd__test"),
        "no test in the bash completions"
    );
    assert!(
        bash.contains("--filter"),
        "no test options in the bash completions"
    );
    let out = pi_session(&["test"]);
    assert_eq!(out.status.code(), Some(2), "FILE is required");
}

fn a_server_that_never_stops_talking_is_bounded_by_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let bin = write(
        dir.path(),
        "chatty",
        "#!/bin/sh\nexec yes '{\"jsonrpc\":\"2.0\",\"method\":\"spam\"}'\n",
    );
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = write(
        dir.path(),
        "t.json",
        r#"{"description": "d", "steps": [{"request": [1, "initialize", {}]}, {"expect": 1}]}"#,
    );
    let started = std::time::Instant::now();
    let out = pi_session(&["test", "--timeout", "0.5", "--bin", &bin, &file]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "message(s) that no expect step read:\n  {\"jsonrpc\":\"2.0\",\"method\":\"spam\"}\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("  ... and "),
        "only the first unread messages are kept: {stdout}"
    );
    assert!(
        started.elapsed().as_secs() < 5,
        "the drain and the wait are bounded"
    );
}

crate::tests! {
    a_wrong_expectation_exits_1_with_a_report_naming_file_line_message_and_member,
    every_sidecar_transcript_passes_through_the_binary_with_its_snapshots_exchange,
    a_directory_plays_its_transcripts_and_a_filter_picks_some,
    an_unreadable_transcript_exits_2_naming_its_file_and_line_and_nothing_is_played,
    a_transcript_for_the_projects_test_server_is_refused_with_exit_2,
    unread_messages_a_wrong_exit_status_and_a_silent_server_fail_the_transcript,
    bin_tests_another_server_started_with_stdio_and_the_transcripts_server_options,
    a_server_that_dies_fails_the_transcript_naming_the_step,
    help_and_completions_offer_the_command,
    a_server_that_never_stops_talking_is_bounded_by_the_timeout,
}
