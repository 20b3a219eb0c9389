//! The Python client (`clients/python/`): its pytest suite against the built binary (whole
//! sessions, the drift check of its generated modules, `mypy --strict`, the quick start, the
//! wheel), run in the venv `tests/support/python.rs` installs, and the README's quick start.
//!
//! After a protocol change: `UPDATE_PYTHON_CLIENT=1 cargo test --test suite -- python_client::`
//! regenerates `clients/python/src/pi_session/{schema,_tables}.py` before the suite runs.

use crate::support;

use std::time::Duration;

use support::process::run_bounded;
use support::python;

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

fn the_python_client_suite_passes() {
    let venv = python::venv("the_python_client_suite_passes");
    if std::env::var_os("UPDATE_PYTHON_CLIENT").is_some_and(|v| v == "1") {
        let output = venv
            .python()
            .arg("tools/generate.py")
            .output()
            .expect("run the generator");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        support::notice(String::from_utf8_lossy(&output.stdout).trim());
    }
    // Bounded: a client that hangs fails the test instead of holding up the suite.
    let stdout = run_bounded(
        "the Python client's tests",
        venv.python()
            .args(["-m", "pytest", "-q", "-rfEs"])
            .env("PI_SESSION_BIN", BIN),
        Duration::from_secs(600),
    );
    let summary = stdout.lines().last().unwrap_or_default();
    // No test of the client may be skipped: the summary counts passes (and warnings) only.
    let not_run = ["skipped", "xfailed", "xpassed", "deselected", "error"];
    assert!(
        summary.contains(" passed") && !not_run.iter().any(|word| summary.contains(word)),
        "unexpected pytest summary: {summary}\n{stdout}"
    );
    support::notice(&format!("python client: {summary}"));
}

fn the_readme_shows_the_python_quick_start_as_it_is_tested() {
    let root = support::root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let example =
        std::fs::read_to_string(python::client_dir().join("examples/quickstart.py")).unwrap();
    assert!(
        readme.contains(&format!("```python\n{example}```\n")),
        "README.md must show clients/python/examples/quickstart.py verbatim in a python code block"
    );
}

/// The generated types know pi's format: `mypy --strict` accepts a program that narrows entries
/// on `entry["type"]`, messages on `role` and content blocks on `type` without a cast, calls
/// methods with snake_case keywords and appends what the entry builders make
/// (`typecheck/narrows.py`), and refuses one that reads a key the narrowed tag does not have, a
/// result by a snake_case key, or passes a builder's message where an entry goes
/// (`typecheck/misreads.py`), with the errors this test names.
fn the_python_types_narrow_on_pi_tags() {
    let venv = python::venv("the_python_types_narrow_on_pi_tags");
    let cache = support::root().join("target/python-client/mypy-cache");
    let mypy = |file: &str| {
        venv.python()
            .args(["-m", "mypy", "--strict", "--cache-dir"])
            .arg(&cache)
            .arg(file)
            .env("MYPYPATH", "src")
            .output()
            .expect("run mypy")
    };
    let accepted = mypy("typecheck/narrows.py");
    assert!(
        accepted.status.success(),
        "mypy --strict refused typecheck/narrows.py:\n{}",
        String::from_utf8_lossy(&accepted.stdout)
    );
    let refused = mypy("typecheck/misreads.py");
    let report = String::from_utf8_lossy(&refused.stdout);
    assert!(
        !refused.status.success(),
        "mypy --strict accepted typecheck/misreads.py"
    );
    for expected in [
        "typecheck/misreads.py:10: error: TypedDict \"LabelEntry\" has no key \"summary\"",
        "typecheck/misreads.py:14: error: TypedDict \"UserMessage\" has no key \"toolName\"",
        "typecheck/misreads.py:20: error: TypedDict \"OpenedSession\" has no key \"session_id\"",
        "typecheck/misreads.py:22: error: Argument \"entry\" to \"append\" of \"SessionMethods\" \
         has incompatible type \"UserMessage | AssistantMessage",
        "typecheck/misreads.py:24: error: List item 0 has incompatible type \"ToolCall\"; \
         expected \"TextContent | ImageContent\"",
    ] {
        assert!(
            report.contains(expected),
            "mypy did not say {expected:?}:\n{report}"
        );
    }
    assert!(
        report.contains("Found 5 errors"),
        "only the marked lines fail:\n{report}"
    );
}

fn a_client_run_that_overruns_its_bound_is_killed_and_fails() {
    let started = std::time::Instant::now();
    let overrun = std::panic::catch_unwind(|| {
        run_bounded(
            "a sleeper",
            std::process::Command::new("sleep").arg("30"),
            Duration::from_millis(300),
        )
    });
    let message = *overrun
        .expect_err("a run over its bound must fail")
        .downcast::<String>()
        .unwrap();
    assert!(message.contains("a sleeper ran over"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "not killed in time"
    );
    let failed = std::panic::catch_unwind(|| {
        run_bounded(
            "a failing run",
            std::process::Command::new("sh").args(["-c", "echo said; exit 3"]),
            Duration::from_secs(30),
        )
    });
    let message = *failed.unwrap_err().downcast::<String>().unwrap();
    assert!(
        message.contains("a failing run failed") && message.contains("said"),
        "{message}"
    );
}

crate::tests! {
    the_python_client_suite_passes,
    the_readme_shows_the_python_quick_start_as_it_is_tested,
    the_python_types_narrow_on_pi_tags,
    a_client_run_that_overruns_its_bound_is_killed_and_fails,
}
