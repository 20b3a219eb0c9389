//! Counting the comparisons with pi's output. Every site that compares something this program
//! produced with what pi's own code produced reports how many it made; the lines go to stderr
//! past the test harness's capture, so `cargo test 2>&1 | grep '^oracle comparisons:'` shows
//! them and `.ci/run` prints their sum.

use std::io::Write;

/// Reports `n` comparisons with pi's output made by `test`.
pub fn count(test: &str, n: usize) {
    // One write, so that the line is never torn by the harness's own output.
    let line = format!("oracle comparisons: {n} in {test}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}
