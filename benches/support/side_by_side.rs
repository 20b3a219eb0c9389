#![allow(dead_code)] // each benchmark uses part of it
//! One session-file benchmark, this program and pi side by side: a generated session (made
//! once, `BENCH_SIZE`, default 100 MB), each side run in fresh processes (`BENCH_RUNS`,
//! default 3), the best wall time and the peak resident memory of each, and their ratios.
//! Needs Node and the oracle install (scripts/setup-oracle.sh).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const CHILD_ENV: &str = "PI_SESSION_BENCH_CHILD";

/// Runs the benchmark: `what` names the work, `ours` does it in this process on the file,
/// `pi_script` (under `benches/`) does it with pi's code (`node SCRIPT ORACLE_DIR FILE`).
pub fn run(what: &str, pi_script: &str, ours: fn(&Path)) {
    if let Ok(file) = std::env::var(CHILD_ENV) {
        return ours(Path::new(&file));
    }
    let (file, runs) = generated();
    let bytes = std::fs::metadata(&file).unwrap().len();
    println!(
        "{what} of {} ({:.1} MB), best of {runs} runs",
        file.display(),
        bytes as f64 / 1e6
    );
    let ours = best(runs, || child(&file));
    let pi = pi_side(pi_script, &file, runs);
    println!("{:<12} {:>10} {:>14}", "", "wall", "peak memory");
    for (name, (wall, rss)) in [("pi-session", ours), ("pi 0.82.1", pi)] {
        println!("{name:<12} {wall:>8.3} s {:>11.1} MB", rss as f64 / 1024.0);
    }
    println!(
        "speed-up {:.1}x, memory {:.1}% of pi's",
        pi.0 / ours.0,
        100.0 * ours.1 as f64 / pi.1 as f64
    );
}

/// The child side of a benchmark, when this process is one: the file it works on.
pub fn child_file() -> Option<PathBuf> {
    std::env::var_os(CHILD_ENV).map(PathBuf::from)
}

/// This benchmark's executable as a child working on `file`.
pub fn child(file: &Path) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.env(CHILD_ENV, file);
    command
}

/// pi's side: `node benches/SCRIPT ORACLE_DIR FILE`, best of `runs`.
pub fn pi_side(pi_script: &str, file: &Path, runs: usize) -> (f64, i64) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let oracle = root.join("target/oracle");
    best(runs, || {
        let mut command = Command::new("node");
        command
            .arg(root.join("benches").join(pi_script))
            .arg(&oracle)
            .arg(file);
        command
    })
}

/// The generated session of `BENCH_SIZE` (made once) and `BENCH_RUNS`.
pub fn generated() -> (PathBuf, usize) {
    generated_with_runs(3)
}

/// [`generated`], with another default number of runs.
pub fn generated_with_runs(default_runs: usize) -> (PathBuf, usize) {
    let size = std::env::var("BENCH_SIZE").unwrap_or_else(|_| "100MB".into());
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(default_runs);
    (generated_of_size(&size), runs)
}

/// The generated session of `size` (`10MB`, `100MB`, ...), made once under `target/bench/`.
pub fn generated_of_size(size: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let file = root.join(format!("target/bench/session-{size}.jsonl"));
    if !file.exists() {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let status = Command::new("node")
            .arg(root.join("tests/oracle/gen-session.mjs"))
            .args(["file", "--out"])
            .arg(&file)
            .args(["--size", size, "--seed", "100", "--quiet"])
            .status()
            .expect("node runs the session generator");
        assert!(status.success(), "generating {size} failed");
    }
    file
}

/// Best wall time (s) and largest peak RSS (KiB) over `runs` fresh processes.
pub fn best(runs: usize, make: impl Fn() -> Command) -> (f64, i64) {
    best_after(runs, || {}, make)
}

/// [`best`], calling `before` ahead of each run (not timed).
#[allow(clippy::zombie_processes)] // reaped by wait4, which also reports the peak RSS
pub fn best_after(runs: usize, before: impl Fn(), make: impl Fn() -> Command) -> (f64, i64) {
    let mut wall = f64::MAX;
    let mut peak = 0;
    for _ in 0..runs {
        before();
        let started = Instant::now();
        let child = make()
            .stdout(Stdio::null())
            .spawn()
            .expect("benchmark process starts");
        let (status, rss) = wait_with_rusage(child.id() as libc::pid_t);
        assert!(status == 0, "benchmark process failed ({status})");
        wall = wall.min(started.elapsed().as_secs_f64());
        peak = peak.max(rss);
    }
    (wall, peak)
}

fn wait_with_rusage(pid: libc::pid_t) -> (i32, i64) {
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child, not yet reaped; both pointers are valid for the call.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4 failed");
    (status, usage.ru_maxrss)
}
