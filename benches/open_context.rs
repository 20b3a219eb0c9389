//! Open a large session and build its context, with this program and with pi, side by side;
//! this program with no persisted index, with a fresh one (written by the run) and with a
//! current one; then `getInfo`'s figures (stats) with a current index.
//!
//! `cargo bench --bench open_context` generates (once) a 100 MB session with the generator
//! (`tests/oracle/gen-session.mjs`), then runs each side in a fresh process several times and
//! prints the best wall time and the peak resident memory of each, and their ratios.
//! `BENCH_SIZE=500MB` changes the file; `BENCH_RUNS` the number of runs. Needs Node and the
//! oracle install (scripts/setup-oracle.sh).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use pi_session::Profile;
use pi_session::session::{MessageFormat, Session, SessionOptions};

#[path = "support/side_by_side.rs"]
mod side_by_side;

const MODE_ENV: &str = "PI_SESSION_BENCH_MODE";
const INDEX_ENV: &str = "PI_SESSION_BENCH_INDEX";

fn main() {
    if let Some(file) = side_by_side::child_file() {
        return child(&file);
    }
    let (file, runs) = side_by_side::generated();
    let index = file.with_extension("index");
    println!(
        "open + build context of {} ({:.1} MB), best of {runs} runs",
        file.display(),
        std::fs::metadata(&file).unwrap().len() as f64 / 1e6
    );
    let ours = |mode: &'static str| {
        let (file, index) = (file.clone(), index.clone());
        move || {
            let mut command = side_by_side::child(&file);
            command.env(MODE_ENV, mode).env(INDEX_ENV, &index);
            command
        }
    };
    let clear = || {
        let _ = std::fs::remove_dir_all(&index);
    };
    let none = side_by_side::best(runs, ours("none"));
    let fresh = side_by_side::best_after(runs, clear, ours("index"));
    let current = side_by_side::best(runs, ours("index"));
    let info = side_by_side::best(runs, ours("info"));
    let pi = side_by_side::pi_side("pi-open-context.mjs", &file, runs);
    println!("{:<34} {:>10} {:>14}", "", "wall", "peak memory");
    for (name, (wall, rss)) in [
        ("pi-session, no index", none),
        ("pi-session, fresh index (written)", fresh),
        ("pi-session, current index", current),
        ("pi 0.82.1", pi),
    ] {
        println!(
            "{name:<34} {wall:>8.3} s {:>11.1} MB  {:>6.1}x",
            rss as f64 / 1024.0,
            pi.0 / wall
        );
    }
    println!(
        "open + stats (getInfo's figures), current index: {:.3} s, {:.1} MB (process)",
        info.0,
        info.1 as f64 / 1024.0
    );
    let _ = std::fs::remove_dir_all(&index);
}

/// The child side: open and build the context (or the stats) in this process.
fn child(file: &Path) {
    let mode = std::env::var(MODE_ENV).unwrap_or_default();
    let index_dir = std::env::var_os(INDEX_ENV).map(PathBuf::from);
    let options = SessionOptions {
        index_dir: (mode != "none")
            .then(|| index_dir.map(|d| Arc::from(d.as_path())))
            .flatten(),
        ..SessionOptions::with_profile(Profile::PiCli)
    };
    let started = Instant::now();
    let mut session = Session::open_read_only(file, options).expect("session opens");
    if mode == "info" {
        let opened = started.elapsed();
        let stats = session.stats().expect("stats");
        assert!(stats.message_count > 0);
        eprintln!(
            "  (in process: open {:.1} ms, stats {:.2} ms)",
            opened.as_secs_f64() * 1e3,
            (started.elapsed() - opened).as_secs_f64() * 1e3
        );
        return;
    }
    let leaf = session.leaf().clone();
    let context = session
        .build_context(&leaf, MessageFormat::Agent)
        .expect("context builds");
    assert!(!context.messages.is_empty());
}
