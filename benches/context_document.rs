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
//! untimed and in a child process, both documents are compared once: the same bytes, or at
//! least the same JSON (`BENCH_CHECK=0` skips it). `BENCH_BASELINE=PATH` times another build of
//! `pi-session` (one from before a change) the same way in the same run, for before/after
//! figures under the same load. Needs the oracle install (scripts/setup-oracle.sh).

use std::path::{Path, PathBuf};
use std::process::Command;

use pi_session::json;

#[path = "support/side_by_side.rs"]
mod side_by_side;

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

/// Set in the child that compares the documents of one size (see [`compare`]).
const COMPARE_ENV: &str = "PI_SESSION_BENCH_COMPARE";

/// One session file and what runs on it.
struct Sides {
    file: PathBuf,
    /// This program's persisted index for the file (removed before and after).
    index: PathBuf,
    node: PathBuf,
    oracle: PathBuf,
}

impl Sides {
    fn new(root: &Path, size: &str, node: &Path) -> Sides {
        Sides {
            file: side_by_side::generated_of_size(size),
            index: root.join(format!("target/bench/context-index-{size}")),
            node: node.to_path_buf(),
            oracle: root.join("target/oracle"),
        }
    }

    /// `BIN context FILE`, with the index in `target/bench/` or none.
    fn ours(&self, bin: &Path, with_index: bool) -> Command {
        let mut command = Command::new(bin);
        command
            .arg("context")
            .arg(&self.file)
            .env("PI_SESSION_INDEX_DIR", &self.index)
            .env_remove("PI_SESSION_NO_INDEX");
        if !with_index {
            command.arg("--no-index");
        }
        command
    }

    /// `node pi-oracle.mjs context FILE`: pi 0.82.1's SessionManager, the oracle's printer.
    fn pi(&self) -> Command {
        let mut command = Command::new(&self.node);
        command
            .arg(self.oracle.join("pi-oracle.mjs"))
            .arg("context")
            .arg(&self.file);
        command
    }

    fn clear_index(&self) {
        let _ = std::fs::remove_dir_all(&self.index);
    }

    /// Best of `runs` with no index, then (after one untimed run writes it) with a current one.
    fn time(&self, bin: &Path, runs: usize) -> ((f64, i64), (f64, i64)) {
        self.clear_index();
        let none = side_by_side::best(runs, || self.ours(bin, false));
        side_by_side::best(1, || self.ours(bin, true));
        assert!(
            std::fs::read_dir(&self.index).is_ok_and(|mut d| d.next().is_some()),
            "no index was written into {}",
            self.index.display()
        );
        let current = side_by_side::best(runs, || self.ours(bin, true));
        self.clear_index();
        (none, current)
    }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if let Ok(size) = std::env::var(COMPARE_ENV) {
        let node = PathBuf::from(std::env::var_os("BENCH_NODE").unwrap());
        let sides = Sides::new(&root, &size, &node);
        println!("documents: {}", compare(&sides, &root, &size));
        return;
    }
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
    println!(
        "`pi-session context FILE` vs pi's `pi-oracle.mjs context FILE` (Node {}); best of {runs} \
         (pi: {pi_runs}); load average {}",
        node_version(&node),
        load_average()
    );
    let baseline = std::env::var_os("BENCH_BASELINE").map(PathBuf::from);
    if let Some(path) = &baseline {
        println!("baseline: {}", path.display());
    }
    let sizes = std::env::var("BENCH_SIZE").unwrap_or_else(|_| "100MB".into());
    for size in sizes.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let sides = Sides::new(&root, size, &node);
        let before = baseline.as_deref().map(|bin| sides.time(bin, runs));
        let (none, current) = sides.time(Path::new(BIN), runs);
        let pi = pi_ready.then(|| side_by_side::best(pi_runs, || sides.pi()));
        println!(
            "\n{} ({:.1} MB), load average now {}",
            sides.file.display(),
            std::fs::metadata(&sides.file).unwrap().len() as f64 / 1e6,
            load_average()
        );
        println!(
            "{:<28} {:>10} {:>14} {:>9}",
            "", "wall", "peak memory", "vs pi"
        );
        let mut rows = Vec::new();
        if let Some((none, current)) = before {
            rows.push(("baseline, no index", none));
            rows.push(("baseline, current index", current));
        }
        rows.push(("pi-session, no index", none));
        rows.push(("pi-session, current index", current));
        rows.extend(pi.map(|pi| ("pi 0.82.1 (pi-oracle.mjs)", pi)));
        for (name, (wall, rss)) in rows {
            let ratio = pi.map_or(String::new(), |pi| format!("{:.1}x", pi.0 / wall));
            println!(
                "{name:<28} {wall:>8.3} s {:>11.1} MB {ratio:>9}",
                rss as f64 / 1024.0
            );
        }
        if check && pi_ready {
            // In a child: until it execs, a spawned process's peak RSS counts this one's pages
            // (the spawn shares them), so this process never holds a document.
            let status = Command::new(std::env::current_exe().unwrap())
                .env(COMPARE_ENV, size)
                .env("BENCH_NODE", &node)
                .status()
                .expect("the comparing child runs");
            assert!(status.success(), "the documents of {size} differ");
        }
    }
}

fn load_average() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn node_version(node: &Path) -> String {
    Command::new(node)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "?".into())
}

/// Runs each side once more, their documents into files, and says how ours (with no index and
/// with a current one: the same bytes) compare with pi's; panics when they differ in meaning.
fn compare(sides: &Sides, root: &Path, size: &str) -> String {
    let dir = root.join("target/bench");
    let document = |mut command: Command, name: &str| {
        let path = dir.join(format!("context-{size}-{name}.json"));
        let status = command
            .stdout(std::fs::File::create(&path).unwrap())
            .status()
            .expect("the command runs");
        assert!(status.success(), "{name}'s document failed: {status}");
        let bytes = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        bytes
    };
    sides.clear_index();
    let ours = document(sides.ours(Path::new(BIN), false), "ours");
    document(sides.ours(Path::new(BIN), true), "ours-writing-the-index");
    let indexed = document(sides.ours(Path::new(BIN), true), "ours-indexed");
    sides.clear_index();
    assert!(
        ours == indexed,
        "our documents with no index and with a current one differ"
    );
    let pi = document(sides.pi(), "pi");
    let megabytes = ours.len() as f64 / 1e6;
    if ours == pi {
        return format!("the same {megabytes:.1} MB, byte for byte");
    }
    let parse = |bytes: &[u8], who: &str| {
        json::parse(std::str::from_utf8(bytes).expect("UTF-8"))
            .unwrap_or_else(|e| panic!("{who}'s document is not JSON: {e}"))
    };
    // Objects compare without regard to key order.
    assert!(
        parse(&ours, "ours") == parse(&pi, "pi"),
        "the documents differ in meaning"
    );
    format!(
        "the same JSON ({megabytes:.1} MB ours, {:.1} MB pi's), not the same bytes",
        pi.len() as f64 / 1e6
    )
}
