//! Where things are, and how to run this program and the oracle's tools.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use pi_session::format::json::{self, JsValue};

use crate::oracle::Oracle;

/// The checkout.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The read-only shared folder (fixtures, oracle, generator): `$PI_SHARED_DIR`, or `../shared`
/// beside the checkout. Absolute and without `..`, as the oracle prints paths in messages.
pub fn shared() -> PathBuf {
    let dir = match std::env::var_os("PI_SHARED_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => root().join("../shared"),
    };
    std::fs::canonicalize(&dir).unwrap_or_else(|e| {
        panic!(
            "no shared folder at {} ({e}); set PI_SHARED_DIR",
            dir.display()
        )
    })
}

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

/// What a process printed and how it ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// What the command was, for messages.
    pub what: String,
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    /// The JSON document on stdout; panics with the command's stderr when there is none.
    pub fn doc(&self) -> JsValue {
        assert_eq!(
            self.status, 0,
            "{} failed (exit {}): {}",
            self.what, self.status, self.stderr
        );
        json::parse(&self.stdout)
            .unwrap_or_else(|e| panic!("{} printed no JSON document ({e})", self.what))
    }
}

/// Runs `pi-session ARGS`.
pub fn ours(args: &[&str]) -> Outcome {
    let output = Command::new(env!("CARGO_BIN_EXE_pi-session"))
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

/// The Node executable: `$PI_NODE`, or `node` (a path that does not exist runs the suite as
/// on a machine without Node).
pub fn node() -> std::ffi::OsString {
    std::env::var_os("PI_NODE").unwrap_or_else(|| "node".into())
}

/// The oracle, installed by `scripts/setup-oracle.sh`; `None` (with a notice) without Node.
pub fn oracle() -> Option<&'static Oracle> {
    static ORACLE: OnceLock<Option<Oracle>> = OnceLock::new();
    ORACLE
        .get_or_init(|| {
            if Command::new(node()).arg("--version").output().is_err() {
                return None;
            }
            let status = Command::new(root().join("scripts/setup-oracle.sh"))
                .env("PI_SHARED_DIR", shared())
                .status()
                .expect("scripts/setup-oracle.sh runs");
            assert!(status.success(), "scripts/setup-oracle.sh failed: {status}");
            Some(Oracle::new(root().join("target/oracle")))
        })
        .as_ref()
}

/// Says why a Node-dependent check did not run, past the test harness's output capture.
pub fn skipped(what: &str) {
    let notice = format!("skipped: node not found ({what} needs the oracle)\n");
    std::io::stderr().write_all(notice.as_bytes()).unwrap();
}

/// A session written by the shared generator, cached in `target/conformance/generated`.
/// Needs Node.
pub fn generated(name: &str, args: &[&str]) -> PathBuf {
    let dir = work_dir().join("generated");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.jsonl"));
    let recipe = dir.join(format!("{name}.args"));
    let wanted = args.join(" ");
    if file.exists() && std::fs::read_to_string(&recipe).is_ok_and(|r| r == wanted) {
        return file;
    }
    let partial = dir.join(format!("{name}.partial"));
    let status = Command::new(node())
        .arg(shared().join("gen-session.mjs"))
        .args(["file", "--out"])
        .arg(&partial)
        .args(args)
        .arg("--quiet")
        .status()
        .expect("node runs");
    assert!(
        status.success(),
        "gen-session.mjs {wanted} failed: {status}"
    );
    std::fs::rename(&partial, &file).unwrap();
    std::fs::write(&recipe, wanted).unwrap();
    file
}
