//! What the integration tests share:
//! - `oracle`, `batch`: pi's own code, installed on first use and run (singly or in batches);
//! - `comparisons`: counting every comparison with pi's output; `compaction`: the driver of
//!   pi's compaction code and the comparisons made of its answers;
//! - `python`: the Python client's venv (pytest, mypy, its generators), installed on first use;
//! - `pipe`: a client of the built binary over real pipes; `memory`: a client of the server
//!   on in-memory pipes;
//! - `files`, `listing`: builders of session files and directories, and listings run both
//!   here and by pi;
//! - `schema_check`: the server's messages checked against `protocol/schema.json`; `traffic`:
//!   a recording proxy in place of the binary, and real traffic checked against that schema;
//! - `postgres`: a throwaway PostgreSQL cluster (Debian's server, run as `postgres` when root);
//! - the real pi files (`tests/fixtures/real`) and the session generator.
//!
//! Two test crates include it, once each (`mod support;`, with `#[path]` from a folder):
//! `tests/suite/` (every integration test, one module per area) and `tests/traffic.rs` (the
//! recording proxy).
#![allow(dead_code, unused_imports)]

pub mod batch;
pub mod browser;
pub mod compaction;
pub mod comparisons;
pub mod files;
pub mod listing;
pub mod memory;
pub mod oracle;
pub mod pipe;
pub mod postgres;
pub mod process;
pub mod python;
pub mod schema_check;
pub mod traffic;

use std::io::Write;
use std::path::{Path, PathBuf};

use pi_session::json::{self, JsValue};

pub use comparisons::count;
pub use oracle::{Oracle, oracle};

/// The checkout.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Cargo's target directory for this build (`CARGO_TARGET_DIR`, a config's `build.target-dir`,
/// else `target/` in the checkout), as cargo told this test crate: the parent of
/// `CARGO_TARGET_TMPDIR`. Build outputs are found through cargo (`CARGO_BIN_EXE_*`, or `cargo
/// metadata` in scripts), never as `root()/target/...`.
pub fn target_dir() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is <target dir>/tmp")
}

/// Prints a line past the test harness's output capture.
pub fn notice(text: &str) {
    let _ = std::io::stderr().write_all(format!("NOTICE {text}\n").as_bytes());
}

pub fn path_str(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

pub fn parse(text: &str) -> JsValue {
    json::parse(text).unwrap_or_else(|e| panic!("not JSON ({e:?}): {text}"))
}

pub fn str_of(value: &JsValue, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(JsValue::as_str)
        .map(|s| s.into_owned())
}

/// The real files pi wrote that the suite reads (`tests/fixtures/real`), absolute.
pub fn real_fixtures_dir() -> PathBuf {
    root().join("tests/fixtures/real").canonicalize().unwrap()
}

/// The real pi files: those in the repository, then any other `*.jsonl` in
/// `$PI_SHARED_DIR/fixtures/real` (an optional extra input), sorted by name within each.
pub fn real_fixtures() -> Vec<PathBuf> {
    let mut files = jsonl_files(&real_fixtures_dir());
    if let Some(shared) = std::env::var_os("PI_SHARED_DIR") {
        let extra = PathBuf::from(shared).join("fixtures/real");
        if let Ok(extra) = extra.canonicalize() {
            for file in jsonl_files(&extra) {
                if !files.iter().any(|f| f.file_name() == file.file_name()) {
                    files.push(file);
                }
            }
        }
    }
    files
}

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

/// `gen-session.mjs ARGS` (the session generator in `tests/oracle/`), run on the oracle's Node.
/// Needs the oracle install; panics when the generator fails.
pub fn generate(oracle: &Oracle, args: &[&std::ffi::OsStr]) {
    let status = oracle
        .command("gen-session.mjs")
        .args(args)
        .arg("--quiet")
        .status()
        .expect("node runs");
    assert!(
        status.success(),
        "gen-session.mjs {args:?} failed: {status}"
    );
}
