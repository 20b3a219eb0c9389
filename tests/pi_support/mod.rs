//! Running pi's own code from the differential tests: where the shared folder and the oracle
//! install are, whether Node can run them here, and the oracle's commands batched in one Node
//! process.
#![allow(dead_code)] // each test crate uses its own part

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use pi_session::format::json::{self, JsValue};

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The shared folder: `$PI_SHARED_DIR`, or `../shared` beside the checkout.
pub fn shared() -> Option<PathBuf> {
    let dir =
        std::env::var_os("PI_SHARED_DIR").map_or_else(|| root().join("../shared"), PathBuf::from);
    dir.canonicalize().ok()
}

pub fn oracle_dir() -> PathBuf {
    std::env::var_os("PI_ORACLE_DIR").map_or_else(|| root().join("target/oracle"), PathBuf::from)
}

pub fn notice(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "NOTICE {text}");
}

/// Why pi's code cannot run here (no Node, no shared folder, no oracle install), if it cannot.
/// Installs the oracle with `scripts/setup-oracle.sh` the first time it is asked.
pub fn pi_unavailable() -> Option<String> {
    static READY: OnceLock<Option<String>> = OnceLock::new();
    READY
        .get_or_init(|| {
            let node = Command::new("node").arg("--version").output();
            if !node.is_ok_and(|o| o.status.success()) {
                return Some("`node` is not installed".into());
            }
            let Some(shared) = shared() else {
                return Some("no shared folder (set PI_SHARED_DIR)".into());
            };
            let status = Command::new(root().join("scripts/setup-oracle.sh"))
                .env("PI_SHARED_DIR", &shared)
                .stdout(Stdio::null())
                .status();
            let module = oracle_dir()
                .join("node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js");
            if !status.is_ok_and(|s| s.success()) || !module.exists() {
                return Some(format!("no oracle install at {}", oracle_dir().display()));
            }
            None
        })
        .clone()
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

/// The oracle's commands (`pi-oracle.mjs ARGS`) in one Node process, through the conformance
/// suite's batch runner, working in `dir`: each job's stdout, or its stderr on failure.
pub fn oracle_commands(dir: &Path, jobs: &[Vec<String>]) -> Vec<Result<String, String>> {
    if jobs.is_empty() {
        return Vec::new();
    }
    let out = dir.join("oracle-out");
    std::fs::create_dir_all(&out).unwrap();
    let list: Vec<JsValue> = jobs
        .iter()
        .enumerate()
        .map(|(i, args)| {
            let mut job = json::JsObject::new();
            job.insert(
                "args".into(),
                JsValue::Array(args.iter().map(|a| JsValue::from(a.as_str())).collect()),
            );
            job.insert(
                "stdout".into(),
                JsValue::from(path_str(&out.join(format!("{i}.out")))),
            );
            JsValue::Object(job)
        })
        .collect();
    let jobs_file = dir.join("oracle-jobs.json");
    std::fs::write(&jobs_file, JsValue::Array(list).stringify()).unwrap();
    let output = Command::new("node")
        .arg(root().join("tests/conformance/oracle_batch.mjs"))
        .arg(oracle_dir().join("pi-oracle.mjs"))
        .arg(&jobs_file)
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "oracle batch failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results = parse(std::str::from_utf8(&output.stdout).unwrap().trim_end());
    let JsValue::Array(results) = results else {
        panic!("oracle batch printed no array")
    };
    assert_eq!(results.len(), jobs.len());
    results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if r.get("status") == Some(&JsValue::Number(0.0)) {
                Ok(std::fs::read_to_string(out.join(format!("{i}.out"))).unwrap())
            } else {
                Err(str_of(r, "stderr").unwrap_or_default())
            }
        })
        .collect()
}
