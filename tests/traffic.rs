//! Real clients' traffic checked against `protocol/schema.json` (issue 18): the TypeScript
//! client's suite, the Python client's session tests, both front-end lifecycles of
//! `tests/packaging/`, the README's standard-library Python example and a plain LSP client
//! (vscode-jsonrpc over Content-Length framing) run against this binary in place of
//! `pi-session`. Run with the
//! variable `PI_SESSION_TRAFFIC_DIR` set, it is a recording proxy instead
//! (`support::traffic::proxy`): it runs the real server, passes every byte through both ways
//! and records them. Afterwards every message either way is checked against the schema of its
//! method, hook or notification (`support::traffic::problems`).
//!
//! `harness = false`: the proxy must own `main` (the test harness would print on stdout, which
//! is the protocol's). Otherwise `main` hands the tests to libtest-mimic, which takes libtest's
//! options and prints its lines.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use libtest_mimic::{Arguments, Trial};
use serde_json::json;
use support::process::run_bounded;
use support::traffic::{self, Recording, Seen, Side};

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

fn main() {
    if let Some(dir) = std::env::var_os(traffic::RECORD_DIR) {
        traffic::proxy(Path::new(&dir), Path::new(BIN));
    }
    // One at a time, as they always ran: the clients' suites each keep two cores busy.
    let mut args = Arguments::from_args();
    args.test_threads.get_or_insert(1);
    // A panic fails its test, as under libtest.
    let trial = |name: &str, test: fn()| {
        Trial::test(name, move || {
            test();
            Ok(())
        })
    };
    let tests = vec![
        trial(
            "a_planted_mismatch_fails_naming_the_method_the_message_and_the_schema_path",
            a_planted_mismatch_fails_naming_the_method_the_message_and_the_schema_path,
        ),
        trial(
            "the_proxy_passes_both_framings_through_unchanged_and_records_them",
            the_proxy_passes_both_framings_through_unchanged_and_records_them,
        ),
        trial(
            "a_real_lsp_clients_traffic_fits_the_schema",
            a_real_lsp_clients_traffic_fits_the_schema,
        ),
        trial(
            "the_typescript_clients_traffic_fits_the_schema",
            the_typescript_clients_traffic_fits_the_schema,
        ),
        trial(
            "the_python_clients_traffic_fits_the_schema",
            the_python_clients_traffic_fits_the_schema,
        ),
    ];
    libtest_mimic::run(&args, tests).exit();
}

/// A fresh folder for one test's recordings (`target/traffic/NAME`).
fn record_dir(test: &str) -> PathBuf {
    let dir = support::root().join("target/traffic").join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Points `command` at the proxy, recording into `dir`: `PI_SESSION_BIN` is this binary, by a
/// link named `pi-session` (a client looking for that name on `PATH` finds it too).
fn through_proxy(command: &mut Command, dir: &Path) {
    let bin_dir = support::root().join("target/traffic/bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let link = bin_dir.join("pi-session");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(std::env::current_exe().unwrap(), &link).unwrap();
    command
        .env("PI_SESSION_BIN", link)
        .env(traffic::RECORD_DIR, dir);
}

/// Checks every recording in `dir`; panics listing each problem. Returns what was seen.
fn check_recordings(what: &str, dir: &Path) -> Seen {
    let recordings = traffic::recordings(dir);
    let problems: Vec<String> = recordings
        .iter()
        .filter(|r| r.is_server())
        .flat_map(traffic::problems)
        .collect();
    assert!(
        problems.is_empty(),
        "{what}: {} message(s) do not fit protocol/schema.json:\n{}",
        problems.len(),
        problems.join("\n")
    );
    let seen = Seen::of(&recordings);
    support::notice(&format!(
        "{what}: {} messages of {} servers fit the schema ({} kinds: {})",
        seen.messages,
        seen.servers,
        seen.names.len(),
        seen.names
            .iter()
            .map(|(name, count)| format!("{name} x{count}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    seen
}

fn a_planted_mismatch_fails_naming_the_method_the_message_and_the_schema_path() {
    let open = json!({"jsonrpc": "2.0", "id": 1, "method": "session/open", "params": {"path": "/s.jsonl"}});
    let good = json!({"jsonrpc": "2.0", "id": 1, "result": {
        "sessionId": "s", "path": "/s.jsonl", "profile": "pi-cli",
        "header": {"type": "session", "version": 3, "id": "s", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/"},
        "leafId": null, "written": true, "warnings": [], "cursor": "c0-0000000000000000"
    }});
    let good_problems = traffic::problems(&Recording::of_messages(&[
        (Side::Client, open.clone()),
        (Side::Server, good.clone()),
    ]));
    assert_eq!(
        good_problems,
        Vec::<String>::new(),
        "the unplanted answer fits"
    );

    // The planted mismatch: `written` as a string.
    let mut bad = good.clone();
    bad["result"]["written"] = json!("yes");
    let problems = traffic::problems(&Recording::of_messages(&[
        (Side::Client, open.clone()),
        (Side::Server, bad),
    ]));
    assert_eq!(problems.len(), 1, "{problems:?}");
    let problem = &problems[0];
    for part in [
        "result of session/open",
        "\"yes\" is not of type \"boolean\"",
        "at '/written'",
        "schema methods.session/open.result",
        "/properties/written/type",
        "\"written\":\"yes\"",
    ] {
        assert!(problem.contains(part), "{part:?} is not in: {problem}");
    }

    // What has no schema, an answer to nothing, a client's bad hook answer, and a request the
    // schema refuses that the server accepted.
    let problems = traffic::problems(&Recording::of_messages(&[
        (
            Side::Server,
            json!({"jsonrpc": "2.0", "method": "session_renamed", "params": {}}),
        ),
        (
            Side::Server,
            json!({"jsonrpc": "2.0", "method": "session_before_rename", "id": "s1", "params": {}}),
        ),
        (
            Side::Server,
            json!({"jsonrpc": "2.0", "id": 7, "result": {}}),
        ),
        (
            Side::Server,
            json!({"jsonrpc": "2.0", "method": "session_before_fork", "id": "s2",
                   "params": {"sessionId": "s", "entryId": "e", "position": "at"}}),
        ),
        (
            Side::Client,
            json!({"jsonrpc": "2.0", "id": "s2", "result": {"cancel": "please"}}),
        ),
        (
            Side::Client,
            json!({"jsonrpc": "2.0", "id": 2, "method": "session/open", "params": {}}),
        ),
        (
            Side::Server,
            json!({"jsonrpc": "2.0", "id": 2, "result": good["result"]}),
        ),
        (
            Side::Server,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": 1004, "message": "x"}}),
        ),
    ]));
    let expected = [
        "no notification 'session_renamed' in the schema",
        "no hook 'session_before_rename' in the schema",
        "an answer to id 7, which no waiting request has",
        "answer to hook session_before_fork: {\"cancel\":\"please\"} is not valid under any of \
         the schemas listed in the 'anyOf' keyword at '' (schema \
         hooks.session_before_fork.result/anyOf)",
        "session/open was answered with a result, yet the schema refuses its request: \
         \"path\" is a required property",
        "application error 1004 without data.kind",
    ];
    assert_eq!(problems.len(), expected.len(), "{problems:#?}");
    for (problem, expected) in problems.iter().zip(expected) {
        assert!(
            problem.contains(expected),
            "{expected:?} is not in: {problem}"
        );
    }
}

/// The proxy itself: bytes both ways unchanged in either framing, the recording cut into the
/// same messages, the server's exit code passed on.
fn the_proxy_passes_both_framings_through_unchanged_and_records_them() {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
    let info = json!({"jsonrpc": "2.0", "id": 2, "method": "session/getInfo", "params": {"sessionId": "none"}});
    let shutdown = json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"});
    let exit = json!({"jsonrpc": "2.0", "method": "exit"});
    let messages = [&initialize, &info, &shutdown, &exit];
    for lsp in [false, true] {
        let dir = record_dir(if lsp { "proxy-lsp" } else { "proxy-ndjson" });
        let input: Vec<u8> = messages
            .iter()
            .flat_map(|m| {
                let body = m.to_string();
                if lsp {
                    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
                } else {
                    format!("{body}\n").into_bytes()
                }
            })
            .collect();
        let direct = run_with_input(Command::new(BIN).arg("--stdio"), &input);
        let mut proxied = Command::new(std::env::current_exe().unwrap());
        proxied.arg("--stdio").env(traffic::RECORD_DIR, &dir);
        let through = run_with_input(&mut proxied, &input);
        assert_eq!(through.0, direct.0, "exit code through the proxy");
        assert_eq!(
            String::from_utf8_lossy(&through.1),
            String::from_utf8_lossy(&direct.1),
            "the server's output through the proxy"
        );
        let recordings = traffic::recordings(&dir);
        assert_eq!(recordings.len(), 1);
        assert_eq!(recordings[0].args, ["--stdio"]);
        let recorded = recordings[0].messages();
        let client: Vec<_> = recorded
            .iter()
            .filter(|m| m.side == Side::Client)
            .map(|m| m.value.clone().unwrap())
            .collect();
        assert_eq!(client, messages.map(Clone::clone));
        let server: Vec<_> = recorded
            .iter()
            .filter(|m| m.side == Side::Server)
            .map(|m| m.value.clone().unwrap())
            .collect();
        assert_eq!(server.len(), 3, "{server:?}");
        assert_eq!(server[1]["error"]["code"], 1004);
        let problems = traffic::problems(&recordings[0]);
        assert!(problems.is_empty(), "{problems:#?}");
    }
}

/// The server's exit code and stdout for `input` on stdin, within 30 s.
fn run_with_input(command: &mut Command, input: &[u8]) -> (Option<i32>, Vec<u8>) {
    use std::io::Write;
    let mut child = command
        .env("PI_SESSION_LOG", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let pid = child.id();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if finished.recv_timeout(Duration::from_secs(30)).is_err() {
            // SAFETY: our own child, not yet waited for (the main thread is in its wait).
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    });
    let output = child.wait_with_output().unwrap();
    let _ = done.send(());
    watchdog.join().unwrap();
    (output.status.code(), output.stdout)
}

fn a_real_lsp_clients_traffic_fits_the_schema() {
    let Some(oracle) = support::oracle("a_real_lsp_clients_traffic_fits_the_schema") else {
        return;
    };
    let client_dir = support::root().join("target/lsp-client");
    support::oracle::install(&support::root().join("tests/lsp-client"), &client_dir);
    let dir = record_dir("lsp-client");
    let mut command = Command::new(oracle.node());
    command
        .arg(client_dir.join("lifecycle.mjs"))
        .current_dir(&client_dir);
    through_proxy(&mut command, &dir);
    let report = run_bounded(
        "the LSP client's lifecycle",
        &mut command,
        Duration::from_secs(120),
    );
    let seen = check_recordings("the LSP client", &dir);
    assert_eq!(seen.servers, 1, "{report}");
    // Every method answered, every hook and every notification but `$/cancelRequest` (a hook
    // timeout: the clients' suites have it) were checked.
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(support::root().join("protocol/schema.json")).unwrap(),
    )
    .unwrap();
    let names = |section: &str, kind: &str| -> Vec<String> {
        schema[section]
            .as_object()
            .unwrap()
            .keys()
            .filter(|name| *name != "$/cancelRequest")
            .map(|name| format!("{kind} {name}"))
            .collect()
    };
    let mut wanted = names("methods", "result");
    wanted.extend(names("hooks", "hook"));
    wanted.extend(names("notifications", "notification"));
    wanted.extend(["error session/getEntry", "error session/rename"].map(String::from));
    let missing: Vec<&String> = wanted.iter().filter(|name| !seen.has(name)).collect();
    assert!(
        missing.is_empty(),
        "the LSP client's run has no {missing:?}: {seen:?}"
    );
}

fn the_typescript_clients_traffic_fits_the_schema() {
    let Some(oracle) = support::oracle("the_typescript_clients_traffic_fits_the_schema") else {
        return;
    };
    let client_dir = support::root().join("target/node-clients/typescript");
    support::oracle::install(&support::root().join("clients/typescript"), &client_dir);
    let node = oracle.node();
    let tsc = "node_modules/typescript/bin/tsc";
    for (what, config) in [
        ("tsc (build)", "tsconfig.json"),
        ("tsc (tests to build/)", "tsconfig.build-tests.json"),
    ] {
        run_bounded(
            what,
            Command::new(node)
                .args([tsc, "-p", config])
                .current_dir(&client_dir),
            Duration::from_secs(300),
        );
    }
    let mut tests: Vec<String> = std::fs::read_dir(client_dir.join("build/test"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".test.js"))
        .map(|name| format!("build/test/{name}"))
        .collect();
    tests.sort();
    assert!(tests.len() >= 4, "compiled tests: {tests:?}");
    let dir = record_dir("typescript-client");
    let mut command = Command::new(node);
    command
        .args(["--test", "--test-timeout=60000", "--test-concurrency=1"])
        .args(&tests)
        .current_dir(&client_dir);
    through_proxy(&mut command, &dir);
    run_bounded(
        "the TypeScript client's tests through the proxy",
        &mut command,
        Duration::from_secs(300),
    );
    // The packaging test's front-end lifecycle, on this build of the package (it imports the
    // package by name, so it runs from inside the installed copy).
    let lifecycle = client_dir.join("lifecycle-traffic.mjs");
    std::fs::copy(
        support::root().join("tests/packaging/lifecycle.mjs"),
        &lifecycle,
    )
    .unwrap();
    let mut command = Command::new(node);
    command.arg(&lifecycle).current_dir(&client_dir);
    through_proxy(&mut command, &dir);
    run_bounded(
        "tests/packaging/lifecycle.mjs through the proxy",
        &mut command,
        Duration::from_secs(120),
    );
    let seen = check_recordings("the TypeScript client", &dir);
    assert!(seen.servers >= 5, "{seen:?}");
    for name in [
        "result initialize",
        "result session/append",
        "hook session_before_compact",
        "notification session_compact",
    ] {
        assert!(
            seen.has(name),
            "the TypeScript client's run has no {name}: {seen:?}"
        );
    }
}

fn the_python_clients_traffic_fits_the_schema() {
    let venv = support::python::venv("the_python_clients_traffic_fits_the_schema");
    let dir = record_dir("python-client");
    let mut command = venv.python();
    command.args([
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/test_scenarios.py",
        "tests/test_front_end.py",
        "tests/test_package.py::test_the_quick_start_runs",
    ]);
    through_proxy(&mut command, &dir);
    let report = run_bounded(
        "the Python client's tests through the proxy",
        &mut command,
        Duration::from_secs(300),
    );
    let summary = report.lines().last().unwrap_or_default();
    assert!(
        summary.contains(" passed") && !summary.contains("skipped") && !summary.contains("failed"),
        "unexpected pytest summary: {summary}\n{report}"
    );
    // The packaging test's front-end lifecycle on the client's sources, and the README's
    // standard-library example.
    let mut command = venv.python();
    command
        .arg(support::root().join("tests/packaging/lifecycle.py"))
        .env("PYTHONPATH", support::python::client_dir().join("src"));
    through_proxy(&mut command, &dir);
    run_bounded(
        "tests/packaging/lifecycle.py through the proxy",
        &mut command,
        Duration::from_secs(120),
    );
    let mut command = venv.python();
    command.arg(support::root().join("tests/python/client.py"));
    through_proxy(&mut command, &dir);
    let proxy = command
        .get_envs()
        .find(|(name, _)| *name == "PI_SESSION_BIN")
        .and_then(|(_, value)| value)
        .unwrap()
        .to_owned();
    command.arg(proxy);
    run_bounded(
        "tests/python/client.py through the proxy",
        &mut command,
        Duration::from_secs(60),
    );
    let seen = check_recordings("the Python client", &dir);
    assert!(seen.servers >= 5, "{seen:?}");
    for name in [
        "result initialize",
        "result session/append",
        "result shutdown",
    ] {
        assert!(
            seen.has(name),
            "the Python client's run has no {name}: {seen:?}"
        );
    }
}
