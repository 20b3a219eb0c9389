//! The built binary over real pipes: `pi-session --stdio` in both framings. Exit codes follow
//! the lifecycle, stdout carries nothing but valid frames (logs go to stderr or the log file),
//! and SIGTERM takes the graceful way out.

use std::io::{Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

fn spawn(args: &[&str]) -> Child {
    Command::new(BIN)
        .arg("--stdio")
        .args(args)
        .env("PI_SESSION_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn pi-session")
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn exit() -> Value {
    json!({"jsonrpc": "2.0", "method": "exit"})
}

fn ndjson(messages: &[Value]) -> Vec<u8> {
    messages
        .iter()
        .flat_map(|m| format!("{m}\n").into_bytes())
        .collect()
}

fn lsp(messages: &[Value]) -> Vec<u8> {
    messages
        .iter()
        .flat_map(|m| {
            let body = m.to_string();
            format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
        })
        .collect()
}

/// Parses all of stdout as ndjson; fails on anything that is not one JSON object per line.
fn parse_ndjson(stdout: &[u8]) -> Vec<Value> {
    let text = std::str::from_utf8(stdout).expect("stdout is UTF-8");
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "unterminated line: {text:?}"
    );
    text.lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:?}"));
            assert!(value.is_object(), "not a message: {line}");
            value
        })
        .collect()
}

/// Parses all of stdout as LSP frames; fails on anything else.
fn parse_lsp(mut stdout: &[u8]) -> Vec<Value> {
    let mut messages = Vec::new();
    while !stdout.is_empty() {
        let header_end = stdout
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(stdout)));
        let header = std::str::from_utf8(&stdout[..header_end]).expect("ASCII header");
        let length: usize = header
            .strip_prefix("Content-Length: ")
            .unwrap_or_else(|| panic!("unexpected header {header:?}"))
            .parse()
            .expect("numeric length");
        let body = &stdout[header_end + 4..header_end + 4 + length];
        messages.push(serde_json::from_slice(body).expect("frame body is JSON"));
        stdout = &stdout[header_end + 4 + length..];
    }
    messages
}

struct Finished {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: String,
}

/// Writes `input`, closes stdin, and waits (at most 20 s) for the exit.
fn run(args: &[&str], input: &[u8]) -> Finished {
    let mut child = spawn(args);
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input).expect("write stdin");
    drop(stdin);
    wait(child)
}

fn wait(mut child: Child) -> Finished {
    // Read both pipes on their own threads so a full pipe can never stall the child.
    let stdout = child.stdout.take().map(|mut out| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            out.read_to_end(&mut bytes).expect("read stdout");
            bytes
        })
    });
    let mut err = child.stderr.take().expect("stderr");
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        err.read_to_string(&mut text).expect("read stderr");
        text
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("pi-session did not exit in time");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Finished {
        status,
        stdout: stdout.map_or_else(Vec::new, |t| t.join().expect("stdout thread")),
        stderr: stderr.join().expect("stderr thread"),
    }
}

fn ids(messages: &[Value]) -> Vec<Value> {
    messages.iter().map(|m| m["id"].clone()).collect()
}

fn ndjson_initialize_shutdown_exit_gives_zero() {
    let done = run(
        &[],
        &ndjson(&[
            request(1, "initialize", json!({"clientInfo": {"name": "pipes"}})),
            json!({"jsonrpc": "2.0", "method": "initialized"}),
            request(2, "shutdown", json!(null)),
            exit(),
        ]),
    );
    let messages = parse_ndjson(&done.stdout);
    assert_eq!(ids(&messages), [json!(1), json!(2)]);
    assert_eq!(messages[0]["result"]["serverInfo"]["name"], "pi-session");
    assert_eq!(
        messages[0]["result"]["settings"]["framing"], "ndjson",
        "answered in the client's framing"
    );
    assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
    assert!(
        done.stderr.contains("initialized"),
        "debug logs on stderr: {}",
        done.stderr
    );
}

fn lsp_initialize_shutdown_exit_gives_zero() {
    let done = run(
        &[],
        &lsp(&[
            request(1, "initialize", json!({})),
            request(2, "shutdown", json!(null)),
            exit(),
        ]),
    );
    let messages = parse_lsp(&done.stdout);
    assert_eq!(ids(&messages), [json!(1), json!(2)]);
    assert_eq!(messages[0]["result"]["settings"]["framing"], "lsp");
    assert_eq!(done.status.code(), Some(0), "stderr: {}", done.stderr);
}

fn end_of_input_without_shutdown_gives_one_in_both_framings() {
    let init = [request(1, "initialize", json!({}))];
    let done = run(&[], &ndjson(&init));
    assert_eq!(ids(&parse_ndjson(&done.stdout)), [json!(1)]);
    assert_eq!(done.status.code(), Some(1));
    let done = run(&[], &lsp(&init));
    assert_eq!(ids(&parse_lsp(&done.stdout)), [json!(1)]);
    assert_eq!(done.status.code(), Some(1));
    let done = run(&[], b"");
    assert!(done.stdout.is_empty());
    assert_eq!(done.status.code(), Some(1));
}

fn garbage_never_reaches_stdout_unframed() {
    let mut input = b"not json\n\xff\xfe\n[]\n".to_vec();
    input.extend(ndjson(&[
        request(1, "initialize", json!({})),
        request(2, "no/such", json!({})),
        request(3, "shutdown", json!(null)),
        exit(),
    ]));
    let done = run(&["--framing", "ndjson"], &input);
    let messages = parse_ndjson(&done.stdout);
    let codes: Vec<Value> = messages
        .iter()
        .map(|m| m["error"]["code"].clone())
        .collect();
    assert_eq!(
        codes,
        [
            json!(-32700),
            json!(-32700),
            json!(-32600),
            json!(null),
            json!(-32601),
            json!(null)
        ]
    );
    assert_eq!(done.status.code(), Some(0));
}

fn forced_lsp_framing_and_a_frame_limit() {
    let mut input = b"Content-Length: 5000\r\n\r\n".to_vec();
    input.extend([b'x'; 5000]);
    input.extend(lsp(&[
        request(1, "initialize", json!({})),
        request(2, "shutdown", json!(null)),
        exit(),
    ]));
    let done = run(&["--framing", "lsp", "--max-frame-bytes", "1000"], &input);
    let messages = parse_lsp(&done.stdout);
    assert_eq!(messages[0]["error"]["code"], -32600);
    assert_eq!(messages[1]["result"]["capabilities"]["maxFrameBytes"], 1000);
    assert_eq!(done.status.code(), Some(0));
}

fn logs_go_to_the_log_file_when_asked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("sidecar.log");
    let log_arg = log.to_str().expect("UTF-8 path");
    let done = run(
        &["--log-file", log_arg, "--deterministic"],
        &ndjson(&[request(1, "initialize", json!({})), exit()]),
    );
    let messages = parse_ndjson(&done.stdout);
    assert_eq!(
        messages[0]["result"]["settings"]["deterministic"],
        json!({"seed": 0, "startTime": "2025-01-01T00:00:00.000Z"})
    );
    assert_eq!(done.status.code(), Some(1));
    assert!(
        done.stderr.is_empty(),
        "stderr should be empty: {}",
        done.stderr
    );
    let logged = std::fs::read_to_string(&log).expect("log file");
    assert!(logged.contains("stopping: exit notification"), "{logged}");
}

fn sigterm_takes_the_graceful_way_out() {
    for (shutdown_first, code) in [(false, 1), (true, 0)] {
        let mut child = spawn(&[]);
        let mut stdin = child.stdin.take().expect("stdin");
        let mut messages = vec![request(1, "initialize", json!({}))];
        if shutdown_first {
            messages.push(request(2, "shutdown", json!(null)));
        }
        stdin.write_all(&ndjson(&messages)).expect("write");
        stdin.flush().expect("flush");
        // Wait for the answers so the signal arrives while the server is idle, stdin open.
        let mut stdout = child.stdout.take().expect("stdout");
        let mut seen = Vec::new();
        let mut byte = [0u8; 1];
        while seen.iter().filter(|&&b| b == b'\n').count() < messages.len() {
            assert_eq!(
                stdout.read(&mut byte).expect("read"),
                1,
                "stdout closed early"
            );
            seen.push(byte[0]);
        }
        let pid = i32::try_from(child.id()).expect("pid");
        // SAFETY: sending SIGTERM to the child we spawned and still own.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        let mut rest = Vec::new();
        stdout.read_to_end(&mut rest).expect("read rest");
        let done = wait(child);
        drop(stdin);
        seen.extend(rest);
        assert_eq!(parse_ndjson(&seen).len(), messages.len());
        assert_eq!(done.status.code(), Some(code), "stderr: {}", done.stderr);
        assert!(done.stderr.contains("signal SIGTERM"), "{}", done.stderr);
    }
}

fn without_stdio_it_says_what_to_do() {
    let output = Command::new(BIN).output().expect("run pi-session");
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--stdio"));
}

fn stdin_from_a_file_and_stdout_to_a_file_work_too() {
    // Pipes are read and written without blocking; anything else takes tokio's blocking path.
    let dir = tempfile::tempdir().expect("temp dir");
    let script = dir.path().join("script.ndjson");
    let out = dir.path().join("out.ndjson");
    std::fs::write(
        &script,
        ndjson(&[
            request(1, "initialize", json!({})),
            request(2, "shutdown", json!(null)),
            exit(),
        ]),
    )
    .unwrap();
    let status = Command::new(BIN)
        .arg("--stdio")
        .stdin(std::fs::File::open(&script).unwrap())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::null())
        .status()
        .expect("run pi-session");
    assert_eq!(status.code(), Some(0));
    let messages = parse_ndjson(&std::fs::read(&out).unwrap());
    assert_eq!(ids(&messages), [json!(1), json!(2)]);
}

crate::tests! {
    ndjson_initialize_shutdown_exit_gives_zero,
    lsp_initialize_shutdown_exit_gives_zero,
    end_of_input_without_shutdown_gives_one_in_both_framings,
    garbage_never_reaches_stdout_unframed,
    forced_lsp_framing_and_a_frame_limit,
    logs_go_to_the_log_file_when_asked,
    sigterm_takes_the_graceful_way_out,
    without_stdio_it_says_what_to_do,
    stdin_from_a_file_and_stdout_to_a_file_work_too,
}
