//! Where things are, and how to run this program and the oracle's tools.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};

pub use crate::support::batch::Outcome;
use crate::support::{self, Oracle, notice};
pub use support::root;

/// Scratch space of this suite, kept between runs (generated sessions are cached here).
pub fn work_dir() -> PathBuf {
    root().join("target/conformance")
}

/// A fresh, empty directory under [`work_dir`].
pub fn fresh_dir(name: &str) -> PathBuf {
    let dir = work_dir().join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `pi-session ARGS`.
pub fn ours(args: &[&str]) -> Outcome {
    // Every answer of the suite goes through the persisted index (fresh at a file's first
    // read, current at the next); `index.rs` compares with and without it.
    let output = Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .env("PI_SESSION_INDEX_DIR", work_dir().join("index-suite"))
        .args(args)
        .output()
        .expect("pi-session runs");
    Outcome {
        what: format!("pi-session {}", args.join(" ")),
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).expect("pi-session prints UTF-8"),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The oracle (installed on first use); never `None`: opted out of, `support::oracle` fails the
/// test, naming the variable.
pub fn oracle() -> Option<&'static Oracle> {
    support::oracle("conformance")
}

/// Says which check did not run because the suite opted out of the oracle.
pub fn skipped(what: &str) {
    notice(&format!(
        "{what}: not compared with pi ({} is set)",
        support::oracle::OPT_OUT
    ));
}

/// A session written by the generator (`tests/oracle/gen-session.mjs`), cached in
/// `target/conformance/generated`.
pub fn generated(oracle: &Oracle, name: &str, args: &[&str]) -> PathBuf {
    // Tests of one binary run in parallel and several ask for the same session: one lock per
    // name makes the second wait for the first's file instead of racing it to the rename.
    static WRITING: Mutex<BTreeMap<String, Arc<Mutex<()>>>> = Mutex::new(BTreeMap::new());
    let lock = Arc::clone(
        WRITING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(name.to_owned())
            .or_default(),
    );
    let _writing = lock.lock().unwrap_or_else(|e| e.into_inner());
    let dir = work_dir().join("generated");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.jsonl"));
    let recipe = dir.join(format!("{name}.args"));
    let wanted = args.join(" ");
    if file.exists() && std::fs::read_to_string(&recipe).is_ok_and(|r| r == wanted) {
        return file;
    }
    let partial = dir.join(format!("{name}.partial"));
    let mut all = vec!["file".as_ref(), "--out".as_ref(), partial.as_os_str()];
    all.extend(args.iter().map(std::ffi::OsStr::new));
    support::generate(oracle, &all);
    std::fs::rename(&partial, &file).unwrap();
    std::fs::write(&recipe, wanted).unwrap();
    file
}
