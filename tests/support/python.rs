//! The Python client's development environment, installed and run.
//!
//! `clients/python/requirements-dev.txt` pins (with hashes) what the client is generated and
//! tested with: datamodel-code-generator, pytest, mypy, the build backend. On first use the
//! suite makes a venv in `target/python-client/venv` with `python3 -m venv` and `pip install`s
//! that file from PyPI; a stamp (the requirements and the Python version it installed for)
//! makes later runs skip the install, and a file lock keeps concurrent test binaries from
//! installing at once (as `oracle.rs` does for npm).
//!
//! Without python3 (3.11 or later) with `venv` and pip the Python tests fail, naming what to
//! install. `PI_SESSION_NO_PYTHON=1` does not make them pass: each fails at once, naming the
//! variable and how to leave it out (`cargo test -- --skip NAME`), since a test not run is not
//! passed.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::{notice, root};

/// The variable that lets the suite run without Python (never set in CI).
pub const OPT_OUT: &str = "PI_SESSION_NO_PYTHON";

/// The Python client's folder in the checkout.
pub fn client_dir() -> PathBuf {
    root().join("clients/python")
}

/// An installed venv.
pub struct Venv {
    dir: PathBuf,
}

impl Venv {
    /// `python` of the venv, run in `clients/python`, writing no bytecode into the checkout.
    pub fn python(&self) -> Command {
        let mut command = Command::new(self.dir.join("bin/python"));
        command
            .current_dir(client_dir())
            .env("PYTHONDONTWRITEBYTECODE", "1");
        command
    }
}

/// Whether the suite was told to run without Python.
pub fn opted_out() -> bool {
    std::env::var_os(OPT_OUT).is_some_and(|v| !v.is_empty() && v != "0")
}

/// python3 itself, for the tests that need only the standard library. Panics, saying what
/// to install, without it, and naming the variable when [`OPT_OUT`] is set.
pub fn python3(test: &str) -> Command {
    assert!(
        !opted_out(),
        "{test}: needs Python, and {OPT_OUT} is set, so it cannot run (a test not run is not \
         passed). Unset {OPT_OUT}, or leave the test out: cargo test -- --skip {test}"
    );
    let ok = Command::new("python3")
        .args([
            "-c",
            "import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{test}: the Python client's tests need python3 >= 3.11 with its venv and ensurepip \
         modules (Debian: `apt-get install python3 python3-venv python3-pip`), or set \
         `cargo test -- --skip {test}` to run the rest of the suite without them"
    );
    Command::new("python3")
}

/// The dev venv, installed on first use. Panics, saying what to install, when python3 or the
/// install fails, and naming the variable when [`OPT_OUT`] is set.
pub fn venv(test: &str) -> &'static Venv {
    static VENV: OnceLock<Venv> = OnceLock::new();
    python3(test);
    VENV.get_or_init(|| install(&root().join("target/python-client")))
}

fn install(dest: &Path) -> Venv {
    fs::create_dir_all(dest).unwrap();
    let lock = fs::File::create(dest.join(".install.lock")).unwrap();
    lock.lock().expect("locking the Python venv install");
    let venv = dest.join("venv");
    let requirements = client_dir().join("requirements-dev.txt");
    let version = Command::new("python3")
        .arg("--version")
        .output()
        .expect("python3 runs");
    let mut wanted = fs::read(&requirements).unwrap();
    wanted.extend_from_slice(&version.stdout);
    let stamp = venv.join(".pi-session-installed-requirements.txt");
    if fs::read(&stamp).ok() != Some(wanted.clone()) {
        notice(&format!(
            "python3 -m venv {} and pip install (once)",
            venv.display()
        ));
        if venv.exists() {
            fs::remove_dir_all(&venv).unwrap();
        }
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
        run(Command::new(venv.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--require-hashes",
                "-r",
            ])
            .arg(&requirements));
        fs::write(&stamp, wanted).unwrap();
    }
    lock.unlock().unwrap();
    Venv { dir: venv }
}

fn run(command: &mut Command) {
    let output = command.output().expect("the command runs");
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
