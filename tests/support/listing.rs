//! Listings of session directories: a world (home, process directory, agent directory) in
//! which both this program and pi's listing code (`pi-listing.mjs`) run, and both results put
//! in one shape.

use std::fs;
use std::path::PathBuf;

use pi_session::Profile;
use pi_session::json::JsValue;
use pi_session::listing::{CachePolicy, Listing, PathEnv, Repo, SessionInfo};
use serde_json::{Value, json};

use super::Oracle;

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

    /// Runs pi's listing code (`pi-listing.mjs ARGS`) in this world: its JSON document.
    pub fn pi(&self, oracle: &Oracle, args: &[&str]) -> Value {
        self.pi_of(oracle, Profile::PiCli, args)
    }

    /// [`World::pi`] with the code of `profile`'s pi: 0.82.1 for pi-cli, 1.6.0 for pi-1.6.
    pub fn pi_of(&self, oracle: &Oracle, profile: Profile, args: &[&str]) -> Value {
        let mut command = oracle.command("pi-listing.mjs");
        if profile == Profile::Pi16 {
            command.args(["--version", "1.6"]);
        }
        command
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
        super::count(&format!("pi-listing {} ({})", args[0], profile.name()), 1);
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
