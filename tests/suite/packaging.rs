//! The release artifacts as people get them. `scripts/package.sh` builds them once per run into
//! `package/out` of cargo's target directory (a release build: cargo reuses it while the
//! sources are unchanged); each
//! is then installed into a fresh folder with neither cargo nor rustc on `PATH` and no
//! `PI_SESSION_BIN`, and a front-end's whole lifecycle (`tests/packaging/lifecycle.*`: hooks,
//! navigation with a summary, compaction, fork, listing, errors, a server that dies) and the
//! README's first examples run through each client:
//! - npm: `npm install --offline` of the two tarballs (the client bundles its one dependency),
//!   `npx pi-session --version`, the lifecycle on Node 20 (this machine's, when it has one) and
//!   on the suite's Node 22; without the platform package, the shim's error names the platform
//!   and the override;
//! - PyPI: `pip install --no-index` of the wheel into a fresh venv: `pi-session` lands in the
//!   venv's `bin/`, and the client finds it there without the venv on `PATH`;
//! - the sdist holds the crate, its lockfile and the client (building it is a release build
//!   with cargo; not repeated here).
//!
//! Needs npm, Node >= 20 and python3 >= 3.11 with venv (as the rest of the suite does), and
//! PyPI for maturin (pinned with hashes) the first time.

use crate::support;

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The artifacts, built by `scripts/package.sh` once for every test of this binary.
fn artifacts() -> &'static Path {
    static OUT: OnceLock<PathBuf> = OnceLock::new();
    OUT.get_or_init(|| {
        let out = support::target_dir().join("package/out");
        if out.exists() {
            fs::remove_dir_all(&out).unwrap();
        }
        let started = Instant::now();
        let mut command = Command::new("bash");
        command
            .arg(support::root().join("scripts/package.sh"))
            .arg(&out)
            .env_remove("PI_SESSION_TARGET");
        let output = run_bounded(&mut command, Duration::from_secs(1800));
        assert!(
            output.status.success(),
            "scripts/package.sh failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        support::notice(&format!(
            "scripts/package.sh built the artifacts in {:.0} s",
            started.elapsed().as_secs_f64()
        ));
        out
    })
}

fn artifact(name: &str) -> PathBuf {
    let path = artifacts().join(name);
    assert!(path.exists(), "package.sh made no {name}");
    path
}

fn wheel() -> PathBuf {
    let wheels: Vec<PathBuf> = fs::read_dir(artifacts())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension() == Some(OsStr::new("whl")))
        .collect();
    assert_eq!(wheels.len(), 1, "one wheel: {wheels:?}");
    let name = wheels[0].file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with(&format!("pi_session-{VERSION}-py3-none-")) && name.contains("x86_64"),
        "{name}"
    );
    wheels[0].clone()
}

/// Runs `command`, killing it after `limit`; its output. The watchdog stops as soon as the child
/// is reaped: the suite is one long-lived process, and a watchdog left probing a pid that the
/// system gives to another process would kill that one at its deadline.
fn run_bounded(command: &mut Command, limit: Duration) -> Output {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let id = child.id();
    let reaped = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let reaped = Arc::clone(&reaped);
        std::thread::spawn(move || {
            let deadline = Instant::now() + limit;
            while Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(200));
                if reaped.load(Ordering::SeqCst) {
                    return;
                }
            }
            if !reaped.load(Ordering::SeqCst) {
                // SAFETY: the child is ours, not reaped yet (the flag is set only after the
                // wait), and still running past its limit.
                unsafe { libc::kill(id as i32, libc::SIGKILL) };
            }
        })
    };
    let output = child.wait_with_output().unwrap();
    reaped.store(true, Ordering::SeqCst);
    watchdog.join().unwrap();
    output
}

fn succeed(what: &str, command: &mut Command) -> String {
    let output = run_bounded(command, Duration::from_secs(300));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stdout}{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// A fresh folder under `package/try/` of cargo's target directory.
fn fresh(name: &str) -> PathBuf {
    let dir = support::target_dir().join("package/try").join(name);
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap();
    }
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The full path of `program` on this process's PATH.
fn which(program: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} is not on PATH"))
}

/// A `PATH` of one folder holding links to `programs` only (so no cargo, no rustc, no
/// pi-session from a developer's install); checked.
fn bare_path(name: &str, programs: &[(&str, &Path)]) -> PathBuf {
    let dir = fresh(&format!("path-{name}"));
    for (program, target) in programs {
        std::os::unix::fs::symlink(target, dir.join(program)).unwrap();
    }
    for forbidden in ["cargo", "rustc", "pi-session"] {
        assert!(!dir.join(forbidden).exists());
    }
    dir
}

/// A command with the bare `PATH` and no `PI_SESSION_BIN`.
fn bare(program: impl AsRef<OsStr>, path: &Path, cwd: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .current_dir(cwd)
        .env("PATH", path)
        .env_remove("PI_SESSION_BIN")
        .env_remove("PI_SESSION_LOG")
        .env_remove("NODE_PATH")
        .env_remove("PYTHONPATH")
        .env("npm_config_update_notifier", "false");
    command
}

/// Node's major version.
fn node_major(node: &Path) -> u32 {
    let version =
        String::from_utf8(Command::new(node).arg("--version").output().unwrap().stdout).unwrap();
    version
        .trim()
        .trim_start_matches('v')
        .split('.')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

const LIFECYCLE_TS: &str = "binary from: package
protocol: {PROTOCOL}
compacted: Compacted by the front-end. fromHook true
navigated: Read notes.txt / 8 entries left behind
forked: true
listed: 1 sessions
events: compact fromExtension=true, tree fromExtension=true
error: true session_not_found
exit: 0
died: initialize: the pi-session server died (it exited with code 2) before answering; its last log lines:
its stderr quoted: true
";

const LIFECYCLE_PY: &str = "binary from the scripts folder: True
protocol: {PROTOCOL}
compacted: Compacted by the front-end. fromHook true
navigated: Read notes.txt / 8 entries left behind
forked: true
listed: 1 sessions
events: compact fromExtension=True, tree fromExtension=True
error: true session_not_found
exit: 0
died: the pi-session server died (exit status 2): its last log lines:
its stderr quoted: true
";

const FIRST_STEPS: &str = "What is 2+2? | Asked 2+2, got 4.\n";

/// Installs `tarballs` (offline: nothing but the tarballs) into a fresh project.
fn npm_install(name: &str, tarballs: &[PathBuf], path: &Path) -> PathBuf {
    let project = fresh(name);
    fs::write(
        project.join("package.json"),
        r#"{"private": true, "type": "module"}"#,
    )
    .unwrap();
    succeed(
        "npm install --offline",
        bare(which("npm"), path, &project)
            .args([
                "install",
                "--offline",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
            ])
            .args(tarballs),
    );
    project
}

fn the_npm_packages_install_offline_and_run_a_whole_session() {
    let client = artifact(&format!("pi-session-{VERSION}.tgz"));
    let platform = artifact(&format!("pi-session-linux-x64-gnu-{VERSION}.tgz"));
    let system_node = which("node");
    let path = bare_path(
        "npm",
        &[
            ("node", &system_node),
            ("npm", &which("npm")),
            ("npx", &which("npx")),
            ("sh", Path::new("/bin/sh")),
        ],
    );
    let project = npm_install("npm", &[client, platform], &path);
    assert!(
        project
            .join("node_modules/@pi-session/linux-x64-gnu/bin/pi-session")
            .exists()
    );
    let version = succeed(
        "npx pi-session --version",
        bare(which("npx"), &path, &project).args(["--offline", "pi-session", "--version"]),
    );
    assert_eq!(version, format!("pi-session {VERSION}\n"));

    fs::copy(
        support::root().join("tests/packaging/lifecycle.mjs"),
        project.join("lifecycle.mjs"),
    )
    .unwrap();
    fs::copy(
        support::root().join("clients/typescript/examples/first-steps.mjs"),
        project.join("first-steps.mjs"),
    )
    .unwrap();
    // Node 20 (engines says >= 20) when this machine has it, and the suite's Node 22.
    let mut nodes = Vec::new();
    if node_major(&system_node) >= 20 {
        nodes.push(system_node.clone());
    }
    if let Some(oracle) =
        support::oracle("the_npm_packages_install_offline_and_run_a_whole_session")
    {
        nodes.push(oracle.node().to_path_buf());
    }
    assert!(!nodes.is_empty(), "no Node >= 20 to run the client on");
    for node in &nodes {
        let what = format!(
            "the lifecycle on {} (v{})",
            node.display(),
            node_major(node)
        );
        let out = succeed(&what, bare(node, &path, &project).arg("lifecycle.mjs"));
        assert_eq!(
            out,
            LIFECYCLE_TS.replace(
                "{PROTOCOL}",
                &support::pipe::protocol_version(env!("CARGO_BIN_EXE_pi-session"))
            ),
            "{what}"
        );
        let out = succeed(
            "the README's TypeScript example",
            bare(node, &path, &project).arg("first-steps.mjs"),
        );
        assert_eq!(out, FIRST_STEPS);
    }
}

fn without_its_platform_package_the_npm_shim_names_the_platform_and_the_override() {
    let client = artifact(&format!("pi-session-{VERSION}.tgz"));
    let path = bare_path(
        "npm-alone",
        &[
            ("node", &which("node")),
            ("npm", &which("npm")),
            ("npx", &which("npx")),
            ("sh", Path::new("/bin/sh")),
        ],
    );
    // Offline, npm cannot fetch the platform packages: optional, they are left out.
    let project = npm_install("npm-alone", &[client], &path);
    assert!(!project.join("node_modules/@pi-session").exists());
    let output = run_bounded(
        bare(which("npx"), &path, &project).args(["--offline", "pi-session", "--version"]),
        Duration::from_secs(120),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no pi-session binary for linux-x64-gnu")
            && stderr.contains("@pi-session/linux-x64-gnu is not installed")
            && stderr.contains("set PI_SESSION_BIN"),
        "{stderr}"
    );
}

fn the_wheel_installs_with_pip_and_runs_a_whole_session() {
    let mut python3 = support::python::python3("the_wheel_installs_with_pip");
    let wheel = wheel();
    let real_python = PathBuf::from(
        succeed(
            "python3",
            python3.args(["-c", "import sys; print(sys.executable)"]),
        )
        .trim(),
    );
    let dir = fresh("pip");
    let path = bare_path("pip", &[("python3", &real_python)]);
    succeed(
        "python3 -m venv",
        bare(&real_python, &path, &dir).args(["-m", "venv", "venv"]),
    );
    let python = dir.join("venv/bin/python");
    succeed(
        "pip install the wheel",
        bare(&python, &path, &dir)
            .args([
                "-m",
                "pip",
                "install",
                "--no-index",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(&wheel),
    );
    // The binary is on the venv's PATH...
    let version = succeed(
        "pi-session --version",
        bare(dir.join("venv/bin/pi-session"), &path, &dir).arg("--version"),
    );
    assert_eq!(version, format!("pi-session {VERSION}\n"));
    // ...and the client finds it beside its Python without that PATH.
    let lifecycle = support::root().join("tests/packaging/lifecycle.py");
    let out = succeed(
        "the Python lifecycle",
        bare(&python, &path, &dir).arg(&lifecycle),
    );
    assert_eq!(
        out,
        LIFECYCLE_PY.replace(
            "{PROTOCOL}",
            &support::pipe::protocol_version(env!("CARGO_BIN_EXE_pi-session"))
        )
    );
    let example = support::root().join("clients/python/examples/first_steps.py");
    let out = succeed(
        "the README's Python example",
        bare(&python, &path, &dir).arg(&example),
    );
    assert_eq!(out, FIRST_STEPS);
}

fn the_sdist_holds_the_crate_its_lockfile_and_the_client() {
    let sdist = artifact(&format!("pi_session-{VERSION}.tar.gz"));
    let listing = succeed("tar tzf", Command::new("tar").arg("tzf").arg(&sdist));
    let prefix = format!("pi_session-{VERSION}/");
    for member in [
        "pyproject.toml",
        "PKG-INFO",
        "Cargo.toml",
        "Cargo.lock",
        "src/bin/pi-session.rs",
        "src/lib.rs",
        "clients/python/src/pi_session/client.py",
        "clients/python/src/pi_session/py.typed",
    ] {
        assert!(
            listing.lines().any(|l| l == format!("{prefix}{member}")),
            "the sdist has no {member}:\n{listing}"
        );
    }
}

fn the_readme_opens_with_the_two_examples_as_they_are_tested() {
    let readme = fs::read_to_string(support::root().join("README.md")).unwrap();
    // The first screens: what it is, how to install it, the test command, the commands, the
    // first use.
    let first_screen: String = readme.lines().take(125).collect::<Vec<_>>().join("\n") + "\n";
    for (fence, file) in [
        ("js", "clients/typescript/examples/first-steps.mjs"),
        ("python", "clients/python/examples/first_steps.py"),
    ] {
        let example = fs::read_to_string(support::root().join(file)).unwrap();
        assert!(
            first_screen.contains(&format!("```{fence}\n{example}```\n")),
            "README.md's first screen must show {file} verbatim in a {fence} code block"
        );
    }
    // How to install from this checkout, as the tests above install: the binary with cargo, the
    // npm tarballs and the wheel from package.sh's output folder (globs naming exactly the
    // artifacts this file checks).
    for command in [
        "cargo install --locked --path .",
        "scripts/package.sh dist",
        "npm install CHECKOUT/dist/pi-session-*.tgz",
        "pip install CHECKOUT/dist/pi_session-*.whl",
        "cargo test",
    ] {
        assert!(
            first_screen.contains(command),
            "README.md's first screen must say `{command}`"
        );
    }
    // The registry commands (nothing is published yet) only where they are said not to work.
    for line in first_screen.lines() {
        if line.contains("npm install pi-session") || line.contains("pip install pi-session") {
            assert!(
                first_screen.contains("**Not yet working** (for when the packages are published"),
                "README.md offers a registry install without saying it does not work yet: {line}"
            );
        }
    }
}

/// The README's install globs name exactly the artifacts a newcomer installs: the client and
/// this platform's package for npm (not the sdist), the one wheel for pip.
fn the_readmes_install_globs_match_the_artifacts() {
    let names: Vec<String> = fs::read_dir(artifacts())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    let mut npm: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("pi-session-") && n.ends_with(".tgz"))
        .collect();
    npm.sort();
    assert_eq!(
        npm,
        [
            &format!("pi-session-{VERSION}.tgz"),
            &format!("pi-session-linux-x64-gnu-{VERSION}.tgz")
        ],
        "{names:?}"
    );
    let wheels = names
        .iter()
        .filter(|n| n.starts_with("pi_session-") && n.ends_with(".whl"))
        .count();
    assert_eq!(wheels, 1, "{names:?}");
}

crate::tests! {
    the_npm_packages_install_offline_and_run_a_whole_session,
    without_its_platform_package_the_npm_shim_names_the_platform_and_the_override,
    the_wheel_installs_with_pip_and_runs_a_whole_session,
    the_sdist_holds_the_crate_its_lockfile_and_the_client,
    the_readme_opens_with_the_two_examples_as_they_are_tested,
    the_readmes_install_globs_match_the_artifacts,
}
