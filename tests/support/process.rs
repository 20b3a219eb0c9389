//! Child processes a test waits for, bounded: one that hangs fails the test with its output
//! instead of holding up the suite.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `command` to its end within `limit`, stdin closed; panics with its output (stdout and
/// stderr, interleaved) unless it succeeds in time. Returns that output.
pub fn run_bounded(what: &str, command: &mut Command, limit: Duration) -> String {
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut child = command
        .stdout(log.reopen().unwrap())
        .stderr(log.reopen().unwrap())
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = std::fs::read_to_string(log.path()).unwrap_or_default();
    let Some(status) = status else {
        panic!("{what} ran over {limit:?} and was killed:\n{output}");
    };
    assert!(status.success(), "{what} failed ({status}):\n{output}");
    output
}
