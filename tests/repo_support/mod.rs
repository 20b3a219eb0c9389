//! Shared by the `repo_*` integration tests: building session directories, running pi's own
//! listing through `tests/node/pi-listing.mjs`, and putting both results in one shape.
#![allow(dead_code)] // each test crate uses a different part

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use pi_session::format::json::JsValue;
use pi_session::repo::{CachePolicy, Listing, PathEnv, Repo, SessionInfo};
use serde_json::{Value, json};

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared` beside the project checkout (read-only fixtures, generator, oracle).
pub fn shared_dir() -> PathBuf {
    manifest_dir().join("../shared")
}

/// Prints a notice that stays visible even though the test harness captures test output.
pub fn notice(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "NOTICE {text}");
}

/// pi's code, runnable: `node` on the PATH and the oracle packages installed.
pub struct Oracle {
    script: PathBuf,
}

/// The oracle, or `None` after printing why the Node half of a test is skipped.
pub fn oracle(test: &str) -> Option<Oracle> {
    let node_ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !node_ok {
        notice(&format!(
            "{test}: `node` is not installed; the comparison with pi is skipped"
        ));
        return None;
    }
    let oracle_dir = std::env::var_os("PI_ORACLE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("target/oracle"));
    let module = oracle_dir
        .join("node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js");
    if !module.exists() {
        notice(&format!(
            "{test}: no oracle install at {} (see ../shared/oracle/README.md); the comparison with pi is skipped",
            oracle_dir.display()
        ));
        return None;
    }
    Some(Oracle {
        script: manifest_dir().join("tests/node/pi-listing.mjs"),
    })
}

/// Where a listing runs: a home directory, a process directory, maybe an agent directory.
pub struct World {
    pub root: tempfile::TempDir,
    pub home: PathBuf,
    pub work: PathBuf,
    pub agent_dir_setting: Option<String>,
}

impl World {
    pub fn new() -> World {
        let root = tempfile::tempdir().expect("temp dir");
        let home = root.path().join("home");
        let work = root.path().join("work");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&work).unwrap();
        World {
            root,
            home,
            work,
            agent_dir_setting: None,
        }
    }

    pub fn env(&self) -> PathEnv {
        PathEnv::new(
            self.home.to_str().unwrap(),
            self.work.to_str().unwrap(),
            self.agent_dir_setting.as_deref(),
        )
        .unwrap()
    }

    pub fn repo(&self, cache: CachePolicy) -> Repo {
        Repo::new(self.env()).with_cache(cache)
    }

    pub fn sessions_root(&self) -> PathBuf {
        PathBuf::from(self.env().sessions_root())
    }

    /// Runs the Node script in this world and returns its JSON document.
    pub fn pi(&self, oracle: &Oracle, args: &[&str]) -> Value {
        let mut command = Command::new("node");
        command
            .arg(&oracle.script)
            .args(args)
            .current_dir(&self.work)
            .env("HOME", &self.home)
            .env("TZ", "UTC")
            .env_remove("PI_CODING_AGENT_DIR");
        if let Some(dir) = &self.agent_dir_setting {
            command.env("PI_CODING_AGENT_DIR", dir);
        }
        let out = command.output().expect("run node");
        assert!(
            out.status.success(),
            "pi-listing {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Every listing document pi prints is compared with this program's.
        crate::comparisons::count(&format!("pi-listing {}", args[0]), 1);
        serde_json::from_slice(&out.stdout).expect("pi-listing prints JSON")
    }
}

/// A JSON value as the Node script reports it (strings made well-formed).
fn js_to_json(value: &JsValue) -> Value {
    match value {
        JsValue::Null => Value::Null,
        JsValue::Bool(b) => Value::Bool(*b),
        JsValue::Number(n) if n.is_finite() => json!(n),
        JsValue::Number(_) => Value::Null,
        JsValue::String(s) => Value::String(s.to_string_lossy().into_owned()),
        JsValue::Array(items) => Value::Array(items.iter().map(js_to_json).collect()),
        JsValue::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.to_string_lossy().into_owned(), js_to_json(v)))
                .collect(),
        ),
    }
}

/// One listing row in the Node script's shape.
pub fn row(info: &SessionInfo) -> Value {
    let mut row = serde_json::Map::new();
    row.insert("path".into(), json!(info.path.to_str().unwrap()));
    if let Some(id) = &info.id {
        row.insert("id".into(), js_to_json(id));
    }
    row.insert("cwd".into(), json!(info.cwd));
    if let Some(name) = &info.name {
        row.insert("name".into(), json!(name));
    }
    if let Some(parent) = &info.parent_session_path {
        row.insert("parentSessionPath".into(), js_to_json(parent));
    }
    row.insert("created".into(), json!(info.created.millis()));
    row.insert("modified".into(), json!(info.modified.millis()));
    row.insert("messageCount".into(), json!(info.message_count));
    row.insert("firstMessage".into(), json!(info.first_message));
    row.insert("allMessagesText".into(), json!(info.all_messages_text));
    Value::Object(row)
}

pub fn rows(listing: &Listing) -> Value {
    Value::Array(listing.sessions.iter().map(row).collect())
}

/// Normalizes numbers so that `1` and `1.0` compare equal.
pub fn canonical(value: &Value) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .map(|f| {
                if f.fract() == 0.0 && f.abs() < 9e15 {
                    json!(f as i64)
                } else {
                    json!(f)
                }
            })
            .unwrap_or(value.clone()),
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), canonical(v))).collect())
        }
        other => other.clone(),
    }
}

/// Asserts two listings are the same, naming the first differing row.
pub fn assert_same_rows(ours: &Value, pis: &Value, what: &str) {
    let (ours, pis) = (canonical(ours), canonical(pis));
    let (a, b) = (ours.as_array().unwrap(), pis.as_array().unwrap());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(x, y, "{what}: row {i} differs (ours left, pi's right)");
    }
    assert_eq!(
        a.len(),
        b.len(),
        "{what}: {} rows here, {} in pi; paths here {:?}, in pi {:?}",
        a.len(),
        b.len(),
        a.iter().map(|r| r["path"].clone()).collect::<Vec<_>>(),
        b.iter().map(|r| r["path"].clone()).collect::<Vec<_>>()
    );
}

/// Writes a file and gives it a modification time `seconds` after 2026-01-01.
pub fn write_file(path: &Path, content: impl AsRef<[u8]>, seconds: u64) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, content).unwrap();
    set_mtime(path, seconds);
}

pub fn set_mtime(path: &Path, seconds: u64) {
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(base + Duration::from_secs(seconds))
        .unwrap();
}

/// A header line.
pub fn header(id: &str, cwd: &str, timestamp: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{timestamp}","cwd":"{cwd}"}}"#
    )
}

/// A user or assistant message entry with string content.
pub fn message(id: &str, role: &str, text: &str, timestamp_ms: u64) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{{"role":"{role}","content":"{text}","timestamp":{timestamp_ms}}}}}"#
    )
}

/// `node ../shared/gen-session.mjs dir --out DIR --count N --size SIZE --seed SEED [--cwd CWD]`.
pub fn generate(out: &Path, count: usize, size: &str, seed: u64, cwd: Option<&str>) -> bool {
    let script = shared_dir().join("gen-session.mjs");
    if !script.exists() {
        eprintln!(
            "NOTICE: {} is missing; generated sessions skipped",
            script.display()
        );
        return false;
    }
    let mut command = Command::new("node");
    command
        .arg(&script)
        .args(["dir", "--out"])
        .arg(out)
        .args(["--count", &count.to_string(), "--size", size])
        .args(["--seed", &seed.to_string(), "--quiet"]);
    if let Some(cwd) = cwd {
        command.args(["--cwd", cwd]);
    }
    match command.status() {
        Ok(status) => {
            assert!(status.success(), "gen-session failed");
            true
        }
        Err(e) => {
            notice(&format!(
                "cannot run node ({e}); generated sessions skipped"
            ));
            false
        }
    }
}
