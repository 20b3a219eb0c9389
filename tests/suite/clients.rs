//! Real clients in other languages drive the built binary: the Python example from the README
//! (standard library only) and the TypeScript client of `clients/typescript/` (on
//! vscode-jsonrpc, the library under VS Code's language client). The Python one fails without
//! python3 (unless `PI_SESSION_NO_PYTHON=1`, see `tests/support/python.rs`); the TypeScript one
//! runs on the oracle's Node (installed by the suite, see `tests/support/oracle.rs`) and fails
//! without npm. The typed Python client is `tests/python_client.rs`.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn the_python_example_runs() {
    let mut python3 = support::python::python3("the_python_example_runs");
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

fn the_readme_shows_the_python_example_as_it_is_tested() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let example = std::fs::read_to_string(Path::new(ROOT).join("tests/python/client.py")).unwrap();
    assert!(
        readme.contains(&format!("```python\n{example}```\n")),
        "README.md must show tests/python/client.py verbatim in a python code block"
    );
}

/// The TypeScript client (`clients/typescript/`), installed into `target/node-clients/typescript`
/// (`npm ci` once per lockfile, like the oracle) and run on the oracle's Node 22.
struct TypeScriptClient {
    dir: PathBuf,
    node: &'static Path,
}

impl TypeScriptClient {
    /// Never `None`: with `PI_SESSION_NO_ORACLE=1` the test fails, naming it (the client runs on
    /// the oracle's Node); without npm it fails, saying what to install.
    fn install(test: &str) -> Option<Self> {
        let oracle = support::oracle(test)?;
        let dir = Path::new(ROOT).join("target/node-clients/typescript");
        support::oracle::install(&Path::new(ROOT).join("clients/typescript"), &dir);
        Some(TypeScriptClient {
            dir,
            node: oracle.node(),
        })
    }

    /// Runs `node ARGS` in the installed package; panics with its output unless it succeeds.
    fn run(&self, what: &str, args: &[&str]) -> String {
        self.run_on(self.node, what, args)
    }

    /// [`Self::run`] on another Node.
    fn run_on(&self, node: &Path, what: &str, args: &[&str]) -> String {
        let output = Command::new(node)
            .args(args)
            .current_dir(&self.dir)
            .env("PI_SESSION_BIN", BIN)
            .output()
            .expect("run node");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{what} failed:\n{stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout.into_owned()
    }
}

/// `clients/typescript/src/generated/protocol.ts` is what the generator makes from the
/// committed `protocol/schema.json`: a method added in Rust (and to the schema) without
/// regenerating the client fails here, naming the command to run.
fn the_typescript_client_is_generated_from_the_committed_schema() {
    let Some(client) =
        TypeScriptClient::install("the_typescript_client_is_generated_from_the_committed_schema")
    else {
        return;
    };
    let root = Path::new(ROOT);
    let schema = root.join("protocol/schema.json");
    let generated = root.join("clients/typescript/src/generated/protocol.ts");
    client.run(
        "the TypeScript client's drift check (run `npm run generate` in clients/typescript)",
        &[
            "scripts/generate.mjs",
            "--check",
            "--schema",
            support::path_str(&schema),
            "--out",
            support::path_str(&generated),
        ],
    );
}

/// The TypeScript client builds (`tsc`, declarations included), its tests and the README's
/// quick start typecheck (`tsc --noEmit`), and its suite (`node --test`) drives this binary
/// through whole scenarios: hooks, events, errors, cancellation, hook timeouts, dispose.
fn the_typescript_client_suite_passes() {
    let Some(client) = TypeScriptClient::install("the_typescript_client_suite_passes") else {
        return;
    };
    let tsc = "node_modules/typescript/bin/tsc";
    client.run("tsc (build)", &[tsc, "-p", "tsconfig.json"]);
    assert!(
        client.dir.join("dist/index.d.ts").exists(),
        "tsc wrote no declarations"
    );
    client.run("tsc --noEmit (tests)", &[tsc, "-p", "tsconfig.test.json"]);
    // Compiled to build/ (as `npm test` does), so that they run on Node 20 too: engines says
    // >= 20, and Node 20 cannot run .ts files.
    client.run(
        "tsc (tests to build/)",
        &[tsc, "-p", "tsconfig.build-tests.json"],
    );
    let tests: Vec<String> = std::fs::read_dir(client.dir.join("build/test"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".test.js"))
        .map(|name| format!("build/test/{name}"))
        .collect();
    assert!(tests.len() >= 4, "compiled tests: {tests:?}");
    let mut nodes = vec![client.node.to_path_buf()];
    if let Some(node20) = system_node_20() {
        nodes.push(node20);
    }
    for node in nodes {
        let mut args = vec!["--test", "--test-timeout=60000"];
        args.extend(tests.iter().map(String::as_str));
        let report = client.run_on(&node, "the TypeScript client's tests", &args);
        let passed = report
            .lines()
            .find_map(|l| l.strip_prefix("# pass "))
            .and_then(|n| n.trim().parse::<u32>().ok());
        assert!(
            passed.is_some_and(|n| n >= 10),
            "expected the whole suite to run on {}:\n{report}",
            node.display()
        );
    }
}

/// This machine's `node` when it is Node 20 (the oldest `engines` allows), else `None`.
fn system_node_20() -> Option<PathBuf> {
    let output = Command::new("node").arg("--version").output().ok()?;
    let version = String::from_utf8(output.stdout).ok()?;
    version
        .trim()
        .starts_with("v20.")
        .then(|| PathBuf::from("node"))
}

/// protocol.md's header names the version `initialize` answers.
fn protocol_md_names_the_protocol_version_initialize_answers() {
    let protocol = std::fs::read_to_string(Path::new(ROOT).join("protocol/protocol.md")).unwrap();
    let header = protocol
        .lines()
        .find(|l| l.contains("Protocol version:"))
        .expect("protocol.md says its version");
    let version = support::pipe::protocol_version(BIN);
    assert!(
        header.contains(&format!("Protocol version: `{version}`")),
        "protocol.md's header says {header:?}, initialize answers {version}"
    );
}

/// The generated types know pi's format: `tsc --strict` accepts a program that narrows entries
/// on `type`, messages on `role` and content blocks on `type` without a cast and appends what
/// the entry builders make (`typecheck/narrows.ts`), and refuses one that reads a member the
/// narrowed tag does not have or misuses a builder (`typecheck/misreads.ts`), with the errors
/// this test names.
fn the_typescript_types_narrow_on_pi_tags() {
    let Some(client) = TypeScriptClient::install("the_typescript_types_narrow_on_pi_tags") else {
        return;
    };
    let tsc = |file: &str| {
        Command::new(client.node)
            .args([
                "node_modules/typescript/bin/tsc",
                "--noEmit",
                "--strict",
                "--module",
                "nodenext",
                "--moduleResolution",
                "nodenext",
                "--target",
                "es2022",
                "--skipLibCheck",
                file,
            ])
            .current_dir(&client.dir)
            .output()
            .expect("run tsc")
    };
    let accepted = tsc("typecheck/narrows.ts");
    assert!(
        accepted.status.success(),
        "tsc --strict refused typecheck/narrows.ts:\n{}",
        String::from_utf8_lossy(&accepted.stdout)
    );
    let refused = tsc("typecheck/misreads.ts");
    let report = String::from_utf8_lossy(&refused.stdout);
    assert!(
        !refused.status.success(),
        "tsc --strict accepted typecheck/misreads.ts"
    );
    for expected in [
        "misreads.ts(11,18): error TS2339: Property 'summary' does not exist on type 'LabelEntry'.",
        "misreads.ts(14,26): error TS2339: Property 'toolName' does not exist on type 'UserMessage'.",
        "misreads.ts(18,46): error TS2339: Property 'arguments' does not exist on type 'TextContent'.",
        // The entry builders return the generated types: a built message is no entry, a built
        // user message has no tool result's members, a tool result holds no tool call.
        "misreads.ts(25,40): error TS2322: Type 'UserMessage' is not assignable to type 'NewEntry'.",
        "misreads.ts(26,42): error TS2339: Property 'toolName' does not exist on type 'UserMessage'.",
        "misreads.ts(27,52): error TS2322: Type '\"toolCall\"' is not assignable to type '\"text\" | \"image\"'.",
    ] {
        assert!(
            report.contains(expected),
            "tsc did not say {expected:?}:\n{report}"
        );
    }
    assert_eq!(
        report.matches("error TS").count(),
        6,
        "only the marked lines fail:\n{report}"
    );
}

fn the_readme_shows_the_typescript_quick_start_as_it_is_tested() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let example =
        std::fs::read_to_string(Path::new(ROOT).join("clients/typescript/examples/quickstart.ts"))
            .unwrap();
    assert!(
        readme.contains(&format!("```ts\n{example}```\n")),
        "README.md must show clients/typescript/examples/quickstart.ts verbatim in a ts code block"
    );
}

crate::tests! {
    the_python_example_runs,
    the_readme_shows_the_python_example_as_it_is_tested,
    the_typescript_client_is_generated_from_the_committed_schema,
    the_typescript_client_suite_passes,
    protocol_md_names_the_protocol_version_initialize_answers,
    the_typescript_types_narrow_on_pi_tags,
    the_readme_shows_the_typescript_quick_start_as_it_is_tested,
}
