//! The whole `context` document, as a user gets it: `pi-session context FILE` (the release
//! binary, a fresh process, output to /dev/null) against pi's own code printing the same
//! document (`pi-oracle.mjs context FILE` from the oracle install), side by side in one run.
//! This program with no persisted index (`--no-index`) and with a current one (written by one
//! untimed run first, into `target/bench/`, not the user's cache).
//!
//! `cargo bench --bench context_document` generates (once) a 100 MB session with the generator
//! (`tests/oracle/gen-session.mjs`); `BENCH_SIZE=500MB` (or a list, `100MB,500MB`) changes the
//! files; `BENCH_RUNS` (default 5) is the number of runs of this program, `BENCH_PI_RUNS`
//! (default 2) of pi's; the best wall time and the largest peak RSS (`wait4`) of each. pi runs
//! on the oracle's own Node 22 (as the test suite runs it; `BENCH_NODE` names another). Then,
//! untimed, both documents are compared once: the same bytes, or at least the same JSON
//! (`BENCH_CHECK=0` skips it). `BENCH_BASELINE=PATH` times another build of `pi-session` (one
//! from before a change) the same way in the same run, for before/after figures under the same
//! load. Needs the oracle install (scripts/setup-oracle.sh).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pi_session::internal::format::json;

#[path = "support/side_by_side.rs"]
mod side_by_side;

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let env_number = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(default)
    };
    let runs = env_number("BENCH_RUNS", 5);
    let pi_runs = env_number("BENCH_PI_RUNS", 2);
    let check = std::env::var("BENCH_CHECK").map_or(true, |v| v != "0");
    let oracle = root.join("target/oracle");
    let pi_ready = oracle
        .join("node_modules/@earendil-works/pi-coding-agent")
        .exists();
    if !pi_ready {
        eprintln!(
            "NOTICE: no oracle install in target/oracle (run scripts/setup-oracle.sh); pi's figures are skipped"
        );
    }
    let node = std::env::var_os("BENCH_NODE").map_or_else(
        || {
            let own = oracle.join("node_modules/node/bin/node");
            if own.exists() { own } else { "node".into() }
        },
        PathBuf::from,
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "`pi-session context FILE` vs pi's `pi-oracle.mjs context FILE` (Node {}); best of {runs} \
         (pi: {pi_runs}); load average {}",
        node_version(&node),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let baseline = std::env::var_os("BENCH_BASELINE").map(PathBuf::from);
    if let Some(path) = &baseline {
        println!("baseline: {}", path.display());
    }
    let sizes = std::env::var("BENCH_SIZE").unwrap_or_else(|_| "100MB".into());
    for size in sizes.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let file = side_by_side::generated_of_size(size);
        let index = root.join(format!("target/bench/context-index-{size}"));
        let program = |bin: PathBuf, with_index: bool| {
            let (file, index) = (file.clone(), index.clone());
            move || {
                let mut command = Command::new(&bin);
                command
                    .arg("context")
                    .arg(&file)
                    .env("PI_SESSION_INDEX_DIR", &index)
                    .env_remove("PI_SESSION_NO_INDEX");
                if !with_index {
                    command.arg("--no-index");
                }
                command
            }
        };
        let ours = |with_index: bool| program(PathBuf::from(BIN), with_index);
        let pi = || {
            let mut command = Command::new(&node);
            command
                .arg(oracle.join("pi-oracle.mjs"))
                .arg("context")
                .arg(&file);
            command
        };
        // No index, then one untimed run writes the index and the timed ones find it current.
        let time = |bin: PathBuf| {
            let _ = std::fs::remove_dir_all(&index);
            let none = side_by_side::best(runs, program(bin.clone(), false));
            side_by_side::best(1, program(bin.clone(), true));
            assert!(
                std::fs::read_dir(&index).is_ok_and(|mut d| d.next().is_some()),
                "no index was written into {}",
                index.display()
            );
            let current = side_by_side::best(runs, program(bin, true));
            let _ = std::fs::remove_dir_all(&index);
            (none, current)
        };
        let baseline = baseline.clone().map(&time);
        let (none, current) = time(PathBuf::from(BIN));
        let pi_figures = pi_ready.then(|| side_by_side::best(pi_runs, pi));
        println!(
            "\n{} ({:.1} MB)",
            file.display(),
            std::fs::metadata(&file).unwrap().len() as f64 / 1e6
        );
        println!(
            "{:<28} {:>10} {:>14} {:>9}",
            "", "wall", "peak memory", "vs pi"
        );
        let mut rows = Vec::new();
        if let Some((none, current)) = baseline {
            rows.push(("baseline, no index", none));
            rows.push(("baseline, current index", current));
        }
        rows.push(("pi-session, no index", none));
        rows.push(("pi-session, current index", current));
        rows.extend(pi_figures.map(|pi| ("pi 0.82.1 (pi-oracle.mjs)", pi)));
        for (name, (wall, rss)) in rows {
            let ratio = pi_figures.map_or(String::new(), |pi| format!("{:.1}x", pi.0 / wall));
            println!(
                "{name:<28} {wall:>8.3} s {:>11.1} MB {ratio:>9}",
                rss as f64 / 1024.0
            );
        }
        if check && pi_ready {
            side_by_side::best(1, ours(true)); // the index again, for the second document
            let documents = compare([ours(false)(), ours(true)()], pi(), &root, size);
            println!("documents: {documents}");
            let _ = std::fs::remove_dir_all(&index);
        }
    }
}

fn node_version(node: &Path) -> String {
    Command::new(node)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "?".into())
}

/// Runs each once more, their documents into files, and says how ours (with no index and with
/// a current one: the same bytes) compare with pi's; panics when they differ in meaning.
fn compare(ours: [Command; 2], mut pi: Command, root: &Path, size: &str) -> String {
    let dir = root.join("target/bench");
    let document = |command: &mut Command, name: &str| {
        let path = dir.join(format!("context-{size}-{name}.json"));
        let status = command
            .stdout(std::fs::File::create(&path).unwrap())
            .stderr(Stdio::inherit())
            .status()
            .expect("the command runs");
        assert!(status.success(), "{name}'s document failed: {status}");
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        bytes
    };
    let [mut no_index, mut current] = ours;
    let a = document(&mut no_index, "ours");
    assert!(
        a == document(&mut current, "ours-indexed"),
        "our documents with no index and with a current one differ"
    );
    let b = document(&mut pi, "pi");
    let megabytes = a.len() as f64 / 1e6;
    if a == b {
        return format!("the same {megabytes:.1} MB, byte for byte");
    }
    let parse = |bytes: &[u8], who: &str| {
        json::parse(std::str::from_utf8(bytes).expect("UTF-8"))
            .unwrap_or_else(|e| panic!("{who}'s document is not JSON: {e}"))
    };
    // Objects compare without regard to key order.
    assert!(
        parse(&a, "ours") == parse(&b, "pi"),
        "the documents differ in meaning"
    );
    format!(
        "the same JSON ({megabytes:.1} MB ours, {:.1} MB pi's), not the same bytes",
        b.len() as f64 / 1e6
    )
}
