//! Listing benchmark (not a timed test): this program against pi's own `SessionManager.list`,
//! in the same run, on two generated directories:
//!
//! - small: 2,000 sessions of ~40 KB (`gen-session dir --count 2000 --size 40KB --seed 11`)
//! - large: 200 sessions of ~2 MB (`--count 200 --size 2MB --size-sigma 0.5 --seed 12`)
//!
//! For each: pi (Node, module already loaded, best of its runs), this program cold (cache file
//! removed before every run, so every file is read) and warm (cache in place). The OS page
//! cache is warm for everyone. Run with `cargo bench --bench listing`; the data is generated
//! once under `target/bench-data/` (set `BENCH_RUNS` to change the number of runs).
//!
//! Three ways of listing are timed: the library call (`Repo::list`, rows in memory), the whole
//! command `pi-session list --json` (a fresh process printing pi's rows), and `session/list`
//! over stdio to a running server, from the request written to the last byte of the answer
//! read (the client does not parse it), with pi's full rows and with `fields` (a picker's
//! members, no `allMessagesText`). The binary is the one cargo builds with this benchmark
//! (`CARGO_BIN_EXE_pi-session`: the bench profile, release code with symbols).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pi_session::listing::{CACHE_FILE_NAME, CachePolicy, PathEnv, Repo};
use serde_json::{Value, json};

#[path = "support/stdio_server.rs"]
mod stdio_server;
use stdio_server::Server;

const CWD: &str = "/home/dev/project";

struct Dataset {
    name: &'static str,
    generator_args: &'static [&'static str],
}

const DATASETS: &[Dataset] = &[
    Dataset {
        name: "small",
        generator_args: &["--count", "2000", "--size", "40KB", "--seed", "11"],
    },
    Dataset {
        name: "large",
        generator_args: &[
            "--count",
            "200",
            "--size",
            "2MB",
            "--size-sigma",
            "0.5",
            "--seed",
            "12",
        ],
    },
];

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let oracle_ready = root
        .join("target/oracle/node_modules/@earendil-works/pi-coding-agent")
        .exists();
    if !oracle_ready {
        eprintln!(
            "NOTICE: no oracle install in target/oracle (run scripts/setup-oracle.sh); pi's figures are skipped"
        );
    }
    println!("listing benchmark, {runs} runs each, {} threads", threads());
    println!(
        "{:<7} {:>6} {:>9} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}",
        "data", "files", "MB", "pi ms", "cold ms", "warm ms", "nocache ms", "cold x", "warm x"
    );
    for dataset in DATASETS {
        let dir = root
            .join("target/bench-data")
            .join(dataset.name)
            .join("--home-dev-project--");
        if !ensure_generated(&root, &dir, dataset.generator_args) {
            continue;
        }
        let (files, bytes) = dir_size(&dir);
        let dir_text = dir.to_str().expect("UTF-8 bench path");
        let env = PathEnv::new("/nonexistent-home", root.to_str().unwrap(), None).unwrap();
        let cached = Repo::new(env.clone()).with_cache(CachePolicy::ReadWrite);
        let uncached = Repo::new(env).with_cache(CachePolicy::Off);
        let list = |repo: &Repo| repo.list(CWD, Some(dir_text)).expect("list").sessions.len();

        let cold = time_runs(runs, || {
            let _ = std::fs::remove_file(dir.join(CACHE_FILE_NAME));
            list(&cached)
        });
        let warm = time_runs(runs, || list(&cached));
        let nocache = time_runs(runs, || list(&uncached));
        let pi = if oracle_ready {
            pi_runs(&root, dir_text, runs.min(3))
        } else {
            None
        };
        let (count, _) = warm;
        let pi_best = pi.as_ref().map(|(_, times)| best(times));
        if let Some((pi_count, _)) = &pi {
            assert_eq!(
                *pi_count, count,
                "pi and this program list the same sessions"
            );
        }
        let ratio = |ours: Duration| {
            pi_best.map_or("-".to_string(), |p| {
                format!("{:.0}x", p.as_secs_f64() / ours.as_secs_f64())
            })
        };
        let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1000.0);
        println!(
            "{:<7} {:>6} {:>9.0} {:>11} {:>11} {:>11} {:>11} {:>9} {:>9}",
            dataset.name,
            files,
            bytes as f64 / 1_048_576.0,
            pi_best.map_or("-".to_string(), ms),
            ms(median(&cold.1)),
            ms(median(&warm.1)),
            ms(median(&nocache.1)),
            ratio(median(&cold.1)),
            ratio(median(&warm.1)),
        );
        println!(
            "        runs (ms): pi {:?}  cold {:?}  warm {:?}",
            pi.as_ref()
                .map(|(_, t)| t.iter().map(|d| d.as_millis()).collect::<Vec<_>>()),
            cold.1.iter().map(|d| d.as_millis()).collect::<Vec<_>>(),
            warm.1
                .iter()
                .map(|d| d.as_micros() as f64 / 1000.0)
                .collect::<Vec<_>>(),
        );
    }
    println!("pi: best of its runs; this program: median. Ratios are pi / this program.");
    end_to_end(&root, runs);
}

/// Named ways of listing, each returning the bytes it produced.
type Cases<'a> = Vec<(&'a str, Box<dyn FnMut() -> usize + 'a>)>;

/// The fields a session picker asks for.
const PICKER_FIELDS: [&str; 6] = [
    "path",
    "id",
    "name",
    "modified",
    "messageCount",
    "firstMessage",
];

/// `list --json` as a process and `session/list` over stdio, cold and warm, beside pi.
fn end_to_end(root: &Path, runs: usize) {
    // The binary cargo built with this benchmark (the bench profile: release code, symbols
    // kept), wherever the target directory is.
    let binary = Path::new(env!("CARGO_BIN_EXE_pi-session"));
    println!();
    println!(
        "{:<7} {:<26} {:>9} {:>9} {:>9} {:>8} {:>8} {:>11}",
        "data", "what", "pi ms", "cold ms", "warm ms", "cold x", "warm x", "answer MB"
    );
    for dataset in DATASETS {
        let dir = root
            .join("target/bench-data")
            .join(dataset.name)
            .join("--home-dev-project--");
        if !dir.exists() {
            continue;
        }
        let dir_text = dir.to_str().unwrap();
        let pi = pi_runs(root, dir_text, runs.min(3)).map(|(_, t)| best(&t));
        let clear = || {
            let _ = std::fs::remove_file(dir.join(CACHE_FILE_NAME));
        };
        let cli = || {
            let out = Command::new(binary)
                .args(["list", "--json", "--cwd", CWD, "--session-dir", dir_text])
                .stderr(Stdio::null())
                .output()
                .expect("run pi-session list");
            assert!(out.status.success(), "pi-session list failed");
            out.stdout.len()
        };
        let mut server = start_server(binary);
        let list_full = json!({"cwd": CWD, "sessionDir": dir_text});
        let list_picker = json!({"cwd": CWD, "sessionDir": dir_text, "fields": PICKER_FIELDS});
        let cases: Cases<'_> = vec![
            ("list --json (process)", Box::new(cli)),
            (
                "session/list",
                Box::new(|| list_over_stdio(&mut server, &list_full)),
            ),
        ];
        report_cases(dataset.name, cases, runs, pi, &clear);
        let cases: Cases<'_> = vec![(
            "session/list fields",
            Box::new(|| list_over_stdio(&mut server, &list_picker)),
        )];
        report_cases(dataset.name, cases, runs, pi, &clear);
    }
    println!("cold: cache removed before each run; warm: cache in place. Ratios: pi / this.");
}

fn report_cases(name: &str, cases: Cases<'_>, runs: usize, pi: Option<Duration>, clear: &dyn Fn()) {
    let ms = |d: Duration| format!("{:.1}", d.as_secs_f64() * 1000.0);
    let ratio = |ours: Duration| {
        pi.map_or("-".to_string(), |p| {
            format!("{:.0}x", p.as_secs_f64() / ours.as_secs_f64())
        })
    };
    for (what, mut run) in cases {
        let cold = time_runs(runs, || {
            clear();
            run()
        });
        let warm = time_runs(runs, &mut run);
        println!(
            "{:<7} {:<26} {:>9} {:>9} {:>9} {:>8} {:>8} {:>11.1}",
            name,
            what,
            pi.map_or("-".to_string(), ms),
            ms(median(&cold.1)),
            ms(median(&warm.1)),
            ratio(median(&cold.1)),
            ratio(median(&warm.1)),
            warm.0 as f64 / 1_048_576.0,
        );
    }
}

/// The server started from `binary`, initialized.
fn start_server(binary: &Path) -> Server {
    let mut command = Command::new(binary);
    command.arg("--stdio");
    Server::start(command)
}

/// Sends `session/list` with `params` and reads its answer whole: the answer's length in bytes.
fn list_over_stdio(server: &mut Server, params: &Value) -> usize {
    let (_, line) = server.timed("session/list", params.clone());
    assert!(
        line.starts_with(br#"{"jsonrpc":"2.0","result":"#),
        "session/list failed: {}",
        String::from_utf8_lossy(&line[..line.len().min(300)])
    );
    line.len()
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn time_runs(runs: usize, mut f: impl FnMut() -> usize) -> (usize, Vec<Duration>) {
    let mut count = 0;
    let times = (0..runs)
        .map(|_| {
            let start = Instant::now();
            count = f();
            start.elapsed()
        })
        .collect();
    (count, times)
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

fn best(times: &[Duration]) -> Duration {
    times.iter().copied().min().unwrap_or_default()
}

/// pi's `SessionManager.list` timed inside Node, module loaded once.
fn pi_runs(root: &Path, dir: &str, runs: usize) -> Option<(usize, Vec<Duration>)> {
    let out = Command::new("node")
        .arg(root.join("target/oracle/pi-listing.mjs"))
        .args(["bench", "list", "--cwd", CWD, "--session-dir", dir])
        .args(["--runs", &runs.to_string()])
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "pi-listing failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let times = doc["millis"]
        .as_array()?
        .iter()
        .filter_map(|m| m.as_f64())
        .map(|m| Duration::from_secs_f64(m / 1000.0))
        .collect();
    Some((doc["sessions"].as_u64()? as usize, times))
}

fn ensure_generated(root: &Path, dir: &Path, args: &[&str]) -> bool {
    if dir.exists() {
        return true;
    }
    let script = root.join("tests/oracle/gen-session.mjs");
    println!("generating {} ...", dir.display());
    let status = Command::new("node")
        .arg(&script)
        .args(["dir", "--out"])
        .arg(dir)
        .args(args)
        .status();
    match status {
        Ok(s) if s.success() => true,
        _ => {
            eprintln!(
                "NOTICE: could not generate {} with {}",
                dir.display(),
                script.display()
            );
            false
        }
    }
}

fn dir_size(dir: &Path) -> (usize, u64) {
    let mut files = 0;
    let mut bytes = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().ends_with(".jsonl") {
            files += 1;
            bytes += entry.metadata().map_or(0, |m| m.len());
        }
    }
    (files, bytes)
}
