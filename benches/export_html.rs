//! The HTML export of a 100 MB session, as a user runs it: `pi-session export FILE -o OUT`
//! (the release binary, a fresh process), with no persisted index and with a current one,
//! beside pi's own HTML export of the same file (`exportFromFile` of the oracle's
//! pi-coding-agent 0.82.1, pi's `--export`), in the same run. Then each page is opened in
//! headless chromium (the test suite's driver, `tests/browser/time-open.mjs`) and timed from
//! the navigation until its conversation is on screen (ours: the first rendered entry; pi's:
//! its first message), and on ours an in-page search (`BENCH_QUERY`, default `compaction`) is
//! timed once the document is read. The page's size is set beside the session's own
//! `gzip -9` (the goal: at most 1.4 times).
//!
//! `cargo bench --bench export_html`; `BENCH_SIZE` (default 100MB) picks the generated file,
//! `BENCH_RUNS` (default 3) the runs of each side, `BENCH_OPEN_RUNS` (default 3) the browser
//! opens. Needs the oracle install (scripts/setup-oracle.sh) for pi's side and chromium with
//! the browser driver (installed by `cargo test --test suite -- export_browser::`) for the opens.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "support/side_by_side.rs"]
mod side_by_side;

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let (file, runs) = side_by_side::generated();
    let open_runs: usize = std::env::var("BENCH_OPEN_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let dir = root.join("target/bench");
    let index = dir.join("export-index");
    let ours_out = dir.join("export-ours.html");
    let pi_out = dir.join("export-pi.html");
    let oracle = root.join("target/oracle");
    let node = {
        let own = oracle.join("node_modules/node/bin/node");
        if own.exists() { own } else { "node".into() }
    };
    let ours = |with_index: bool| {
        let mut command = Command::new(BIN);
        command
            .args(["export"])
            .arg(&file)
            .arg("-o")
            .arg(&ours_out)
            .env("PI_SESSION_INDEX_DIR", &index)
            .env_remove("PI_SESSION_NO_INDEX");
        if !with_index {
            command.arg("--no-index");
        }
        command
    };
    println!(
        "`pi-session export FILE` vs pi's exportFromFile on {} ({:.1} MB), best of {runs}; load average {}",
        file.display(),
        std::fs::metadata(&file).unwrap().len() as f64 / 1e6,
        load_average()
    );
    let _ = std::fs::remove_dir_all(&index);
    let none = side_by_side::best(runs, || ours(false));
    side_by_side::best(1, || ours(true));
    let current = side_by_side::best(runs, || ours(true));
    let _ = std::fs::remove_dir_all(&index);
    let pi_ready = oracle
        .join("node_modules/@earendil-works/pi-coding-agent/dist/core/export-html")
        .exists();
    let pi = pi_ready.then(|| {
        side_by_side::best(runs, || {
            let mut command = Command::new(&node);
            command
                .arg(root.join("benches/pi-export-html.mjs"))
                .arg(&oracle)
                .arg(&file)
                .arg(&pi_out);
            command
        })
    });
    if !pi_ready {
        eprintln!("NOTICE: no oracle install in target/oracle; pi's figures are skipped");
    }
    println!(
        "{:<28} {:>10} {:>14} {:>10} {:>9}",
        "", "wall", "peak memory", "page", "vs pi"
    );
    let size = |path: &Path| std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6);
    let mut rows = vec![
        ("pi-session, no index", none, size(&ours_out)),
        ("pi-session, current index", current, size(&ours_out)),
    ];
    if let Some(pi) = pi {
        rows.push(("pi 0.82.1 (exportFromFile)", pi, size(&pi_out)));
    }
    let gzip9 = gzip9_len(&file);
    println!(
        "the session's own gzip -9: {:.1} MB; our page is {:.2}x that",
        gzip9 as f64 / 1e6,
        size(&ours_out) * 1e6 / gzip9 as f64
    );
    for (name, (wall, rss), page) in rows {
        let ratio = pi.map_or(String::new(), |pi| format!("{:.1}x", pi.0 / wall));
        println!(
            "{name:<28} {wall:>8.3} s {:>11.1} MB {page:>7.1} MB {ratio:>9}",
            rss as f64 / 1024.0
        );
    }

    // Opening the pages: until the conversation is on screen.
    let driver = root.join("target/browser/time-open.mjs");
    let chromium = ["chromium", "chromium-browser"]
        .iter()
        .find_map(|name| which(name));
    let (Some(chromium), true) = (chromium, driver.exists()) else {
        eprintln!(
            "NOTICE: chromium or the browser driver (target/browser: run `cargo test --test \
             export_browser` once) is missing; the opening times are skipped"
        );
        return;
    };
    // The driver is copied by the test's install; refresh it from the source tree.
    let _ = std::fs::copy(root.join("tests/browser/time-open.mjs"), &driver);
    let mut pages = vec![(
        "pi-session",
        ours_out.clone(),
        "#conversation .entry.filled",
    )];
    if pi.is_some() {
        pages.push(("pi 0.82.1", pi_out.clone(), "#messages > *"));
    }
    println!("\nopening in headless chromium until the conversation shows (best of {open_runs}):");
    let query = std::env::var("BENCH_QUERY").unwrap_or_else(|_| "compaction".into());
    for (name, page, selector) in pages {
        let mut best = f64::INFINITY;
        let mut search = f64::INFINITY;
        let mut status = String::new();
        for _ in 0..open_runs {
            let mut command = Command::new("node");
            command.arg(&driver).arg(&chromium).arg(&page).arg(selector);
            if name == "pi-session" {
                command.arg(&query);
            }
            let output = command.output().expect("node runs");
            assert!(
                output.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
            // `null`: the page did not show its conversation within the driver's 300 s.
            best = best.min(
                report["ms"]
                    .as_f64()
                    .map_or(f64::INFINITY, |ms| ms / 1000.0),
            );
            if name == "pi-session" {
                assert_eq!(
                    report["external"],
                    serde_json::json!([]),
                    "requests left our page"
                );
                if let Some(ms) = report["searchMs"].as_f64() {
                    search = search.min(ms / 1000.0);
                    status = report["searchStatus"].as_str().unwrap_or_default().into();
                }
            }
        }
        if best.is_finite() {
            println!("{name:<28} {best:>8.3} s");
        } else {
            println!("{name:<28} not shown within 300 s");
        }
        if search.is_finite() {
            println!(
                "{:<28} {search:>8.3} s  ({query:?}: {status})",
                "  in-page search"
            );
        }
    }
}

/// The size of `file` as `gzip -9` writes it.
fn gzip9_len(file: &Path) -> u64 {
    let mut encoder = flate2::write::GzEncoder::new(Counted(0), flate2::Compression::best());
    std::io::copy(&mut std::fs::File::open(file).unwrap(), &mut encoder).unwrap();
    encoder.finish().unwrap().0
}

/// Counts the bytes written to it.
struct Counted(u64);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

fn load_average() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}
