//! Real clients in other languages drive the built binary: the Python example from the README
//! (standard library only) and a Node program on vscode-jsonrpc, the library under VS Code's
//! language client. The Python one fails without python3 (unless `PI_SESSION_NO_PYTHON=1`,
//! see `tests/support/python.rs`); the Node one runs on the oracle's Node (installed by the
//! suite, see `tests/support/oracle.rs`). The typed Python client is `tests/python_client.rs`.

mod support;

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn the_python_example_runs() {
    let Some(mut python3) = support::python::python3("the_python_example_runs") else {
        return;
    };
    let output = python3
        .arg(Path::new(ROOT).join("tests/python/client.py"))
        .arg(BIN)
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Deterministic mode: the same ids every run.
    assert_eq!(
        stdout,
        "notification: session_tree 13790312\n\
         editor text: What is 2+2?\n\
         context: ['user']\n"
    );
}

#[test]
fn the_readme_shows_the_python_example_as_it_is_tested() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let example = std::fs::read_to_string(Path::new(ROOT).join("tests/python/client.py")).unwrap();
    assert!(
        readme.contains(&format!("```python\n{example}```\n")),
        "README.md must show tests/python/client.py verbatim in a python code block"
    );
}

#[test]
fn the_vscode_jsonrpc_client_runs() {
    let Some(oracle) = support::oracle("the_vscode_jsonrpc_client_runs") else {
        return;
    };
    let dir = Path::new(ROOT).join("target/node-clients/vscode-client");
    support::oracle::install(&Path::new(ROOT).join("tests/node/vscode-client"), &dir);
    let output = Command::new(oracle.node())
        .arg(dir.join("client.mjs"))
        .arg(BIN)
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(stdout, "vscode-jsonrpc client: ok\n");
}
