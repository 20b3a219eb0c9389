//! The store index side by side with ccusage, as processes: a store generated once under
//! `target/bench/store-index/` by `tests/oracle/gen-session.mjs` (one file of `BENCH_BIG`,
//! default 200MB, and `BENCH_COUNT` files of 2MB, default 60, in one project), then
//!
//! - the first index build (`stats`, no index yet), its MB/s of session file and of text;
//! - `stats --by day` warm, beside `ccusage pi daily --json --offline` on the same store;
//! - `search`, 10 rare and 10 common queries, warm, top 20;
//! - the database's size against the text it indexes;
//! - the same searches with pi 0.82.1's /resume search (`SessionManager.listAll` then its
//!   `filterAndSortSessions`, `tests/oracle/pi-resume-search.mjs`), a process each;
//! - a bare FTS5 insert of the same folded text, beside the first search's text build.
//!
//! Best wall time and peak memory of `BENCH_RUNS` (default 3) fresh processes each. Needs Node
//! and npm (ccusage 19.0.3 is installed into target/ccusage when missing).

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "support/side_by_side.rs"]
mod side_by_side;

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");
const CCUSAGE: &str = "19.0.3";

const RARE: [&str; 10] = [
    "zqxj",
    "\"exit code 137\"",
    "segfault",
    "kubectl",
    "flamegraph",
    "deadlock detected",
    "wasm32",
    "proptest",
    "borrowck",
    "tokio::select",
];
const COMMON: [&str; 10] = [
    "the", "error", "file", "test", "function", "return", "read", "line", "value", "use",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where the store and its index are made: `BENCH_DIR` (a disk with room, e.g. /tmp), else
/// target/bench/store-index.
fn bench_dir() -> PathBuf {
    std::env::var_os("BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/bench/store-index"))
}

fn store() -> PathBuf {
    let big = std::env::var("BENCH_BIG").unwrap_or_else(|_| "200MB".into());
    let count = std::env::var("BENCH_COUNT").unwrap_or_else(|_| "60".into());
    let agent = bench_dir().join(format!("{big}-{count}/agent"));
    let project = agent.join("sessions/--home-dev-project--");
    if !project.exists() {
        std::fs::create_dir_all(&project).unwrap();
        let generator = root().join("tests/oracle/gen-session.mjs");
        let big_file =
            project.join("2026-01-01T00-00-00-000Z_0b1e0000-0000-4000-8000-000000000000.jsonl");
        for args in [
            vec![
                "file",
                "--out",
                big_file.to_str().unwrap(),
                "--size",
                &big,
                "--seed",
                "3",
            ],
            vec![
                "dir",
                "--out",
                project.to_str().unwrap(),
                "--count",
                &count,
                "--size",
                "2MB",
                "--seed",
                "5",
            ],
        ] {
            let status = Command::new("node")
                .arg(&generator)
                .args(&args)
                .arg("--quiet")
                .status()
                .expect("node runs the session generator");
            assert!(status.success(), "gen-session.mjs {args:?} failed");
        }
    }
    agent
}

fn ccusage_main() -> PathBuf {
    let dir = root().join("target/ccusage");
    let main = dir.join("node_modules/ccusage/dist/main.node.js");
    if !main.exists() {
        let status = Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(&dir)
            .arg(format!("ccusage@{CCUSAGE}"))
            .status()
            .expect("npm runs");
        assert!(status.success(), "npm install ccusage@{CCUSAGE} failed");
    }
    main
}

fn ours(agent: &Path, index: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env("HOME", agent.parent().unwrap())
        .env("PI_CODING_AGENT_DIR", agent)
        .env("PI_SESSION_INDEX_DIR", index);
    command
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| match e.file_type() {
                    Ok(t) if t.is_dir() => dir_bytes(&e.path()),
                    _ => e.metadata().map_or(0, |m| m.len()),
                })
                .sum()
        })
        .unwrap_or(0)
}

fn row(what: &str, (wall, rss): (f64, i64)) {
    println!("{what:<44} {wall:>9.3} s {:>10.1} MB", rss as f64 / 1024.0);
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let agent = store();
    let sessions = agent.join("sessions");
    let store_bytes = dir_bytes(&sessions);
    let index = bench_dir().join("cache");
    println!(
        "store: {} ({:.1} MB), best of {runs} runs, load before: {}",
        sessions.display(),
        store_bytes as f64 / 1e6,
        load()
    );
    let first = side_by_side::best_after(
        runs,
        || {
            let _ = std::fs::remove_dir_all(&index);
        },
        || ours(&agent, &index, &["stats", "--json", "-q", "-z", "UTC"]),
    );
    row("first index build (stats, no index)", first);
    println!(
        "  {:.1} MB/s of session file",
        store_bytes as f64 / 1e6 / first.0,
    );
    let warm = side_by_side::best(runs, || {
        ours(&agent, &index, &["stats", "--json", "-z", "UTC"])
    });
    row("stats --by day, warm", warm);
    let main = ccusage_main();
    let ccusage = side_by_side::best(runs, || {
        let mut command = Command::new("node");
        command
            .arg(&main)
            .args([
                "pi",
                "daily",
                "--json",
                "--offline",
                "-z",
                "UTC",
                "--pi-path",
            ])
            .arg(&sessions);
        command
    });
    row(
        &format!("ccusage {CCUSAGE} pi daily --json --offline"),
        ccusage,
    );
    println!(
        "  stats warm is {:.1}x faster than ccusage, at {:.2} of its memory",
        ccusage.0 / warm.0,
        warm.1 as f64 / ccusage.1.max(1) as f64
    );
    // The first search files the text `stats` left out: the text index is built here.
    let first_search = side_by_side::best(1, || {
        ours(
            &agent,
            &index,
            &["search", "--json", "-q", "--limit", "20", "--", "parser"],
        )
    });
    row("first search (files the text)", first_search);
    let db = index.join("store-index-pi-cli.sqlite3");
    let db_bytes = std::fs::metadata(&db).map_or(0, |m| m.len());
    let text_bytes: u64 = {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.query_row(
            "SELECT coalesce(sum(length(CAST(body AS BLOB)) + length(CAST(thinking AS BLOB))), 0) FROM entry_text",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap() as u64
    };
    println!(
        "  {:.1} MB/s of text ({:.1} MB); database {:.1} MB = {:.2}x the text",
        text_bytes as f64 / 1e6 / first_search.0,
        text_bytes as f64 / 1e6,
        db_bytes as f64 / 1e6,
        db_bytes as f64 / text_bytes.max(1) as f64
    );
    for (name, queries) in [("rare", RARE), ("common", COMMON)] {
        let mut walls: Vec<f64> = queries
            .iter()
            .map(|q| {
                side_by_side::best(runs, || {
                    ours(
                        &agent,
                        &index,
                        &["search", "--json", "--limit", "20", "--", q],
                    )
                })
                .0
            })
            .collect();
        walls.sort_by(f64::total_cmp);
        println!(
            "search, 10 {name} queries, top 20, warm: p50 {:.1} ms, max {:.1} ms",
            walls[walls.len() / 2] * 1e3,
            walls[walls.len() - 1] * 1e3
        );
    }
    // pi 0.82.1's /resume search over every project: SessionManager.listAll, then its
    // filterAndSortSessions, a process per query (BENCH_PI_QUERIES of each kind, default 2:
    // each reads the whole store).
    let pi_queries: usize = std::env::var("BENCH_PI_QUERIES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2);
    let resume = root().join("target/oracle/pi-resume-search.mjs");
    if !resume.exists() {
        let _ = std::fs::copy(root().join("tests/oracle/pi-resume-search.mjs"), &resume);
    }
    for query in RARE[..pi_queries].iter().chain(&COMMON[..pi_queries]) {
        let pi = side_by_side::best(1, || {
            let mut command = Command::new("node");
            command
                .arg(&resume)
                .arg(query)
                .env("HOME", agent.parent().unwrap())
                .env("PI_CODING_AGENT_DIR", &agent);
            command
        });
        let us = side_by_side::best(runs, || {
            ours(
                &agent,
                &index,
                &["search", "--json", "--limit", "20", "--", query],
            )
        });
        println!(
            "search {query:?}: pi /resume {:.3} s, pi-session {:.1} ms ({:.0}x)",
            pi.0,
            us.0 * 1e3,
            pi.0 / us.0
        );
    }
    // The text index against a bare FTS5 insert of the same folded text into an empty table
    // of the same definition, one transaction, in this process.
    let bare = {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let mut statement = conn
            .prepare("SELECT rowid, body, thinking FROM entry_text ORDER BY rowid")
            .unwrap();
        let rows: Vec<(i64, String, String)> = statement
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let target = bench_dir().join("bare-fts.sqlite3");
        let _ = std::fs::remove_file(&target);
        let mut bare = rusqlite::Connection::open(&target).unwrap();
        bare.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
             CREATE VIRTUAL TABLE entry_text USING fts5(body, thinking,
               tokenize = 'trigram case_sensitive 1');",
        )
        .unwrap();
        let started = std::time::Instant::now();
        let tx = bare.transaction().unwrap();
        {
            let mut insert = tx
                .prepare("INSERT INTO entry_text(rowid, body, thinking) VALUES (?1, ?2, ?3)")
                .unwrap();
            for (rowid, body, thinking) in &rows {
                insert
                    .execute(rusqlite::params![rowid, body, thinking])
                    .unwrap();
            }
        }
        tx.commit().unwrap();
        let took = started.elapsed().as_secs_f64();
        let _ = std::fs::remove_file(&target);
        took
    };
    println!(
        "bare FTS5 insert of the same text: {bare:.3} s; the first search's whole text build \
         (reading, folding, filing) is {:.2}x that",
        first_search.0 / bare
    );
    println!("load after: {}", load());
}
