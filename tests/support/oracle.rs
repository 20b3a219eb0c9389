//! pi's own code, installed and run: the oracle.
//!
//! `tests/oracle/` holds the oracle's `package.json` (pi's packages and a Node 22 binary, pinned
//! by `package-lock.json`) and its driver scripts. On first use the suite copies that folder into
//! `target/oracle` and runs `npm ci` there; a stamp (the lockfile it installed from) makes later
//! runs skip the install, and a file lock keeps concurrent test binaries from installing at once.
//! Every driver then runs under that Node 22 (pi's `AgentSession` needs it), whatever Node
//! installed it.
//!
//! Without Node and npm the oracle tests fail, naming what to install. With
//! `PI_SESSION_NO_ORACLE=1` no comparison is made: a test of the suite that needs one fails,
//! naming the variable; a per-case trial of the suite is reported as ignored, with that reason.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use pi_session::json::JsValue;

use super::{notice, root};

/// The variable that lets the suite run without pi's code (never set in CI).
pub const OPT_OUT: &str = "PI_SESSION_NO_ORACLE";

/// An installed oracle: the folder with pi's packages and the drivers, and its Node.
pub struct Oracle {
    dir: PathBuf,
    node: PathBuf,
}

/// The oracle, installed on first use. A test that compares with pi cannot run without it, and
/// is never passed in silence: when [`OPT_OUT`] is set this panics, naming `test` and the
/// variable, so the test fails saying why (the per-case trials of the suite ask
/// [`available`] first and are reported as ignored, with that reason, instead). Never `None`;
/// an `Option` for the callers' `let ... else`. Panics, saying what to install, when Node or npm
/// is missing.
pub fn oracle(test: &str) -> Option<&'static Oracle> {
    if opted_out() {
        panic!(
            "{test}: compares with pi's code, and {OPT_OUT} is set, so it cannot run (a comparison \
             not made is not passed). Unset {OPT_OUT}, or leave the test out: cargo test -- --skip {test}"
        );
    }
    available()
}

/// The oracle, installed on first use (by the first caller; later ones share it); `None` when
/// [`OPT_OUT`] is set. For runners that report a trial as ignored: [`oracle`] otherwise.
pub fn available() -> Option<&'static Oracle> {
    static ORACLE: OnceLock<Option<Oracle>> = OnceLock::new();
    ORACLE
        .get_or_init(|| {
            if opted_out() {
                return None;
            }
            let dir = install_dir();
            install(&root().join("tests/oracle"), &dir);
            let node = dir.join("node_modules/node/bin/node");
            assert!(
                node.exists(),
                "the oracle install in {} has no Node 22 at {}",
                dir.display(),
                node.display()
            );
            Some(Oracle { dir, node })
        })
        .as_ref()
}

/// Why a comparison with pi is not made: the reason an ignored trial gives.
pub fn opt_out_reason() -> String {
    format!("{OPT_OUT} is set: the comparison with pi's code is not made")
}

/// Whether the suite was told to run without pi's code.
pub fn opted_out() -> bool {
    std::env::var_os(OPT_OUT).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Where the oracle is installed: `$PI_ORACLE_DIR`, or `target/oracle`.
pub fn install_dir() -> PathBuf {
    std::env::var_os("PI_ORACLE_DIR").map_or_else(|| root().join("target/oracle"), PathBuf::from)
}

impl Oracle {
    /// The install folder: the drivers, `node_modules`, pi's packages.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The Node 22 the oracle runs on.
    pub fn node(&self) -> &Path {
        &self.node
    }

    /// `node DRIVER`, for a driver script of `tests/oracle/` (as installed).
    pub fn command(&self, driver: &str) -> Command {
        let mut command = Command::new(&self.node);
        command.arg(self.dir.join(driver));
        command
    }
}

/// Runs a batch driver's `command` (it prints one JSON array, a document per job) and returns
/// its documents; fails the test with the driver's stderr when it fails, and when it answers
/// another number of documents than `jobs`.
pub fn documents(mut command: Command, driver: &str, jobs: usize) -> Vec<JsValue> {
    let output = command.output().expect("node runs");
    assert!(
        output.status.success(),
        "{driver} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let JsValue::Array(documents) = super::parse(&String::from_utf8(output.stdout).unwrap()) else {
        panic!("{driver} printed no array")
    };
    assert_eq!(documents.len(), jobs, "{driver}: one document per job");
    documents
}

/// Copies `source` (a folder with `package.json` and `package-lock.json`, and maybe subfolders
/// of sources: see [`copy_tree`]) into `dest` and runs `npm ci` there unless `dest` was
/// installed from the same lockfile. Safe to call from concurrent threads and processes.
pub fn install(source: &Path, dest: &Path) {
    let npm = Command::new("npm").arg("--version").output();
    if !npm.is_ok_and(|o| o.status.success()) {
        panic!(
            "the differential tests run pi's own JavaScript and need Node.js with npm (any \
             version >= 18; the suite installs its own Node 22 from the npm registry). Install \
             Node.js (https://nodejs.org, or `apt-get install nodejs npm`), or set {OPT_OUT}=1 \
             to run only the tests that need no pi"
        );
    }
    fs::create_dir_all(dest).unwrap();
    let lock = fs::File::create(dest.join(".install.lock")).unwrap();
    lock.lock().expect("locking the oracle install");
    copy_tree(source, dest, false);
    let stamp = dest.join("node_modules/.pi-session-installed-lock.json");
    let lockfile = fs::read(dest.join("package-lock.json")).unwrap();
    if fs::read(&stamp).ok() != Some(lockfile.clone()) {
        notice(&format!("npm ci in {} (once)", dest.display()));
        let output = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(dest)
            .output()
            .expect("npm runs");
        assert!(
            output.status.success(),
            "npm ci in {} failed: {}",
            dest.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        fs::write(&stamp, lockfile).unwrap();
    }
    lock.unlock().unwrap();
}

/// What a copy of a package leaves out: what npm installs and what the package builds.
const NOT_COPIED: [&str; 2] = ["node_modules", "dist"];

/// Copies the files of `source` into `dest`, writing only those that changed, and its
/// subfolders (but [`NOT_COPIED`]) likewise. Inside subfolders (`prune`), files and folders that
/// `source` no longer has are removed, so a deleted test or source does not live on in the
/// copy; the top folder keeps what else is there (the install's lock and whatever drivers
/// write).
fn copy_tree(source: &Path, dest: &Path, prune: bool) {
    fs::create_dir_all(dest).unwrap();
    let mut names = Vec::new();
    for entry in fs::read_dir(source).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_owned();
        let target = dest.join(&name);
        if path.is_file() {
            let text = fs::read(&path).unwrap();
            if fs::read(&target).ok().as_ref() != Some(&text) {
                fs::write(&target, text).unwrap();
            }
        } else if path.is_dir() && !NOT_COPIED.iter().any(|n| name == *n) {
            copy_tree(&path, &target, true);
        }
        names.push(name);
    }
    if prune {
        for entry in fs::read_dir(dest).unwrap() {
            let path = entry.unwrap().path();
            if !names.contains(&path.file_name().unwrap().to_owned()) {
                if path.is_dir() {
                    fs::remove_dir_all(&path).unwrap();
                } else {
                    fs::remove_file(&path).unwrap();
                }
            }
        }
    }
}
