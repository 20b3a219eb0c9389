//! Forks as pi 0.82.1 makes them, checked against pi's own code.
//!
//! `/fork` and `/clone` (`pi-session fork FILE --entry ID [--at] --out DIR`) against pi's runtime
//! `fork` (its `createBranchedSession`), and `--fork` (`session/forkFrom` over `pi-session
//! --stdio`) against pi's `SessionManager.forkFrom`, both run by `tests/oracle/pi-fork.mjs`, for
//! sources built from the real fixtures, the oracle's replays of `tests/ops/`, generated
//! sessions, the edge-case files of `tests/files/` and hand-made files about labels.
//!
//! The new files must be the same after the oracle's `normalize` (ids relabelled by first
//! appearance, timestamps `T`), and byte for byte once pi's fresh ids are replaced by ours
//! (so key order, number formatting and the original timestamps of re-created labels count).
//! The header's `parentSession` is compared on its own: pi's driver forks a copy of the source.
//! v1 sources get fresh ids from both programs on every open, so their entries are named by
//! position and this program forks them through the library (its command line cannot name
//! them). Where this program differs from pi on purpose or does better, the test says so and
//! counts the cases.
//!
//! - `sweeps`: forks of every kind of source compared with pi's (`compare`: one fork by both;
//!   `sources`: what is forked; `pi`: running pi's side and normalizing files);
//! - `command`: the fork command alone, exact expected files and refusals;
//! - `fork_from`: `session/forkFrom` against pi's `SessionManager.forkFrom`.
//!
//! The suite installs pi's code itself (see `tests/support/oracle.rs`); with
//! `PI_SESSION_NO_ORACLE=1` a test that compares with pi fails, naming the variable, and the
//! tests of this program alone (exact expected files, errors) still run.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use pi_session::Profile;
use pi_session::json::{self, JsValue};
use pi_session::listing::session_file_name;
use pi_session::session::IdSource;
use pi_session::session::{ForkPosition, NewSession, Session, SessionOptions};

mod command;
mod compare;
mod fork_from;
mod pi;
mod sources;
use crate::support;
mod sweeps;

use compare::*;
use pi::*;
use sources::*;

use support::files::tree::*;
use support::pipe::{PipeClient, Wire};
use support::{Oracle, parse, path_str, root, str_of};

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");
const INVALID_FORK_TARGET: &str = "Invalid entry ID for forking";

// ---------------------------------------------------------------------------------------------
// Where things are

/// Whether pi's code runs in this suite: always `true` (with `PI_SESSION_NO_ORACLE` set the test
/// fails here, naming it; a machine without Node fails here, saying what to install).
fn pi_available(test: &str) -> bool {
    support::oracle(test).is_some()
}

/// The oracle, once a test found it available.
fn oracle() -> &'static Oracle {
    support::oracle("fork suite").expect("the test checked pi_available first")
}

/// A scratch directory, canonical (paths in files and messages are compared as text).
struct Scratch {
    dir: tempfile::TempDir,
    /// Whose forks are compared: pi-cli (pi 0.82.1) or pi-1.6, on both sides.
    profile: Profile,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch::of(Profile::PiCli)
    }

    fn of(profile: Profile) -> Scratch {
        Scratch {
            dir: tempfile::tempdir().unwrap(),
            profile,
        }
    }

    /// `relative` in the directory; `""`: the directory itself.
    fn path(&self, relative: &str) -> PathBuf {
        let dir = self.dir.path().canonicalize().unwrap();
        if relative.is_empty() {
            dir
        } else {
            dir.join(relative)
        }
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// The files in a directory (none when it does not exist).
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

crate::tests! {
    [command::trials, fork_from::trials, sweeps::trials]
}
