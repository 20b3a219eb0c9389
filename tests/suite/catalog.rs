//! The store index (`search`, `stats`) against references: every search result equals a
//! brute-force reading of the same store through the profile's reader; `stats --per-file`
//! equals pi's own `getSessionStats` of each file, summed; the default `stats` counts each
//! entry a fork copied once, and ccusage's pi report on the same store is compared with both;
//! and the index survives what can happen to it (killed mid-build, damaged, locked, on a
//! directory it cannot write), grows with the files, and treats query text as data.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use pi_session::Profile;
use serde_json::Value;

use crate::support;

mod reference;
mod rpc;

use reference::RefEntry;

/// ccusage, pinned: 19.0.3 is the last release that runs from its JavaScript (20.x ships
/// native binaries only, as optional packages), on Node >= 20 through `dist/main.node.js`.
const CCUSAGE: &str = "19.0.3";

/// A store the test made: `agent/sessions/<project>/*.jsonl`, and a cache directory.
struct Store {
    _dir: tempfile::TempDir,
    agent: PathBuf,
    index: PathBuf,
}

impl Store {
    fn empty() -> Store {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let index = dir.path().join("cache");
        std::fs::create_dir_all(agent.join("sessions")).unwrap();
        Store {
            _dir: dir,
            agent,
            index,
        }
    }

    /// pi's SessionManager writing a seeded store (tests/suite/catalog/pi-store.mjs).
    fn generated(oracle: &support::Oracle, seed: u64, flags: &[&str]) -> Store {
        let store = Store::empty();
        let output = Command::new(oracle.node())
            .arg(support::root().join("tests/suite/catalog/pi-store.mjs"))
            .arg(oracle.dir())
            .arg(&store.agent)
            .arg(seed.to_string())
            .args(flags)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "pi-store.mjs failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        store
    }

    /// The real files pi wrote, in one project directory.
    fn real() -> Store {
        let store = Store::empty();
        let project = store.sessions().join("--fixtures--");
        std::fs::create_dir_all(&project).unwrap();
        for file in support::real_fixtures() {
            std::fs::copy(&file, project.join(file.file_name().unwrap())).unwrap();
        }
        store
    }

    fn sessions(&self) -> PathBuf {
        self.agent.join("sessions")
    }

    fn files(&self) -> Vec<PathBuf> {
        reference::store_files(&self.sessions())
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_pi-session"));
        command
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.agent.parent().unwrap())
            .env("PI_CODING_AGENT_DIR", &self.agent)
            .env("PI_SESSION_INDEX_DIR", &self.index)
            .stdin(Stdio::null());
        command
    }

    /// Runs the command (at most a minute) and returns its output.
    fn run(&self, args: &[&str]) -> Output {
        run_bounded(self.command(args), Duration::from_secs(60))
    }

    /// Runs a command that must succeed with a JSON document on stdout.
    fn json(&self, args: &[&str]) -> Value {
        let output = self.run(args);
        assert!(
            output.status.success(),
            "pi-session {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!(
                "pi-session {args:?}: not JSON ({e}): {}",
                String::from_utf8_lossy(&output.stdout)
            )
        })
    }

    fn reference(&self, profile: Profile) -> HashMap<PathBuf, Vec<RefEntry>> {
        self.files()
            .into_iter()
            .map(|f| {
                let entries = reference::read_file(&f, profile);
                (f, entries)
            })
            .collect()
    }
}

fn run_bounded(mut command: Command, limit: Duration) -> Output {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pi-session starts");
    let id = child.id();
    let (done, waited) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match waited.recv_timeout(limit) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            // Only the child this test started.
            unsafe { libc::kill(id as i32, libc::SIGKILL) };
            panic!("{command:?} did not finish within {limit:?}");
        }
    }
}

/// A hit or reference entry as compared: file, line, branch status.
type Key = (PathBuf, u64, bool);

fn hit_keys(found: &Value) -> BTreeSet<Key> {
    found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                PathBuf::from(h["sessionPath"].as_str().unwrap()),
                h["line"].as_u64().unwrap(),
                h["onPath"].as_bool().unwrap(),
            )
        })
        .collect()
}

const QUERIES: &[&str] = &[
    "parser",
    "pars",
    "PARS",
    "creme",
    "Crème brûlée",
    "\"creme brulee\"",
    "\"brûlée crème\"",
    "eclair naive",
    "日本",
    "検",
    "語 検索",
    "a",
    "x y",
    "ok is",
    "NEAR",
    "NEAR(a b)",
    "col:x",
    "body:parser",
    "*",
    "pars*",
    "\"quoted\"",
    "DROP TABLE",
    "'; DROP TABLE entries; --",
    "%",
    "_",
    "--",
    "SELECT * FROM entries",
    "straße",
    "ﬁle",
    "file",
    "émoji😀",
    "tailmarker",
    "secretthought",
    "label",
    "summary",
    "custom",
    "read",
    "\"/src/\"",
    "zebra quantum flux",
    "^",
    "parser AND NOT flux",
    "\"\"",
];

/// Each query's hits are exactly the entries holding every piece, with their branch status.
fn search_equals_reference(store: &Store, profile: Profile, queries: &[&str]) -> usize {
    let reference = store.reference(profile);
    let all: Vec<&RefEntry> = reference.values().flatten().collect();
    let mut compared = 0;
    let mut failures = Vec::new();
    for query in queries {
        for (extra, thinking, on_path_only, role) in [
            (vec![], false, false, None),
            (vec!["--thinking"], true, false, None),
            (
                vec!["--on-path", "--role", "assistant"],
                false,
                true,
                Some("assistant"),
            ),
        ] {
            let mut args = vec![
                "search",
                "--json",
                "--limit",
                "1000000",
                "--profile",
                profile.name(),
            ];
            args.extend(extra.iter().copied());
            // After `--`: a query may start with a dash.
            args.extend(["--", query]);
            let pieces = reference::pieces(query);
            let output = store.run(&args);
            if pieces.is_empty() {
                assert!(
                    !output.status.success()
                        && String::from_utf8_lossy(&output.stderr).contains("empty"),
                    "{query:?}: an empty query must be refused, saying so"
                );
                continue;
            }
            assert!(
                output.status.success(),
                "search {query:?} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let found: Value = serde_json::from_slice(&output.stdout).unwrap();
            let expected: BTreeSet<Key> = all
                .iter()
                .filter(|e| reference::matches(e, &pieces, thinking))
                .filter(|e| !on_path_only || e.on_path)
                .filter(|e| role.is_none() || e.role.as_deref() == role)
                .map(|e| (e.path.clone(), e.line, e.on_path))
                .collect();
            let got = hit_keys(&found);
            compared += 1;
            if got != expected {
                failures.push(format!(
                    "{query:?} {extra:?}: missing {:?}, extra {:?}",
                    expected.difference(&got).take(3).collect::<Vec<_>>(),
                    got.difference(&expected).take(3).collect::<Vec<_>>()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    compared
}

fn search_equals_a_brute_force_reading_on_generated_stores() {
    let Some(oracle) = support::oracle("catalog search") else {
        panic!("the generated stores need pi's SessionManager (the oracle)");
    };
    let mut compared = 0;
    for seed in [1, 2] {
        let store = Store::generated(oracle, seed, &[]);
        if seed == 2 {
            // `stats` files the figures only; the search then files the text it left.
            let figures = store.json(&["stats", "--json"]);
            assert!(figures["totals"].is_object());
        }
        compared += search_equals_reference(&store, Profile::PiCli, QUERIES);
        // A second run answers from the persisted index, unchanged.
        compared += search_equals_reference(&store, Profile::PiCli, &QUERIES[..6]);
    }
    let pi16 = Store::generated(oracle, 3, &["--pi16"]);
    compared += search_equals_reference(&pi16, Profile::Pi16, QUERIES);
    compared += search_equals_reference(&pi16, Profile::Harness, &QUERIES[..10]);
    support::count("catalog search (generated)", compared);
    assert!(compared > 200);
}

fn search_equals_a_brute_force_reading_on_the_real_files() {
    let store = Store::real();
    assert!(!store.files().is_empty(), "no real fixtures to search");
    let mut queries: Vec<&str> = QUERIES.to_vec();
    queries.extend([
        "the",
        "error",
        "function",
        "\"cargo test\"",
        "compact",
        "rs",
    ]);
    let compared = search_equals_reference(&store, Profile::PiCli, &queries);
    support::count("catalog search (real files)", compared);
}

fn search_filters_equal_the_reference() {
    let Some(oracle) = support::oracle("catalog filters") else {
        panic!("the generated store needs the oracle");
    };
    let store = Store::generated(oracle, 21, &[]);
    let reference = store.reference(Profile::PiCli);
    let all: Vec<&RefEntry> = reference.values().flatten().collect();
    let project = |e: &RefEntry| {
        e.path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    type Filter = Box<dyn Fn(&RefEntry) -> bool>;
    let cases: Vec<(Vec<&str>, Filter)> = vec![
        (
            vec!["--cwd", "/work/beta"],
            Box::new(move |e| project(e) == "--work-beta--"),
        ),
        (
            vec!["--model", "gpt-5"],
            Box::new(|e| e.model.as_deref() == Some("gpt-5")),
        ),
        (
            vec!["--model", "openai/gpt-5"],
            Box::new(|e| e.model.as_deref() == Some("gpt-5")),
        ),
        (
            vec!["--tool", "bash"],
            Box::new(|e| e.tools.iter().any(|t| t == "bash")),
        ),
        (
            vec!["--role", "toolResult", "--tool", "read"],
            Box::new(|e| {
                e.role.as_deref() == Some("toolResult") && e.tools.iter().any(|t| t == "read")
            }),
        ),
        (
            vec!["--since", "2000-01-01", "--until", "2100-01-01"],
            Box::new(|e| e.timestamp_ms.is_some()),
        ),
        (vec!["--until", "2000-01-01"], Box::new(|_| false)),
    ];
    let mut compared = 0;
    let mut non_empty = 0;
    for query in ["parser", "a", "\"/src/\"", "creme brulee"] {
        let pieces = reference::pieces(query);
        for (flags, keep) in &cases {
            let mut args = vec!["search", "--json", "--limit", "1000000"];
            args.extend(flags.iter().copied());
            args.extend(["--", query]);
            let got = hit_keys(&store.json(&args));
            let expected: BTreeSet<Key> = all
                .iter()
                .filter(|e| reference::matches(e, &pieces, false) && keep(e))
                .map(|e| (e.path.clone(), e.line, e.on_path))
                .collect();
            assert_eq!(got, expected, "{query:?} {flags:?}");
            compared += 1;
            non_empty += usize::from(!expected.is_empty());
        }
    }
    // Every filter but the empty range found something for some query.
    assert!(
        non_empty >= 2 * (cases.len() - 1),
        "only {non_empty} non-empty answers"
    );
    support::count("catalog search filters", compared);
}

fn a_search_hit_carries_what_a_front_end_needs() {
    let Some(oracle) = support::oracle("catalog hit") else {
        panic!("the generated store needs the oracle");
    };
    let store = Store::generated(oracle, 4, &[]);
    let found = store.json(&["search", "parser", "--json", "--limit", "5"]);
    let hits = found["hits"].as_array().unwrap();
    assert!(!hits.is_empty());
    let mut last = f64::NEG_INFINITY;
    for hit in hits {
        for member in [
            "sessionPath",
            "sessionId",
            "entryId",
            "role",
            "timestamp",
            "snippet",
        ] {
            assert!(hit[member].is_string(), "{member} in {hit}");
        }
        assert!(
            hit["snippet"].as_str().unwrap().contains("«parser»"),
            "{hit}"
        );
        let score = hit["score"].as_f64().unwrap();
        assert!(score >= last, "ranked by bm25: {hits:?}");
        last = score;
    }
    assert_eq!(found["index"]["files"], store.files().len());
}

fn query_syntax_is_text_or_a_clear_error() {
    let store = Store::empty();
    let output = store.run(&["search", "ab \"cd", "--json"]);
    assert_eq!(output.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("position 4"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // NUL cannot be passed on a command line; the operation refuses it, naming the position.
    let scope = store_scope(&store);
    let input = pi_session::store_index::SearchInput {
        query: "abc\0".into(),
        ..Default::default()
    };
    let error = pi_session::store_index::search(&scope, input, &pi_session::store_index::Quiet)
        .unwrap_err();
    assert!(
        error.to_string().contains("NUL character at position 4"),
        "{error}"
    );
}

fn store_scope(store: &Store) -> pi_session::store_index::Scope {
    let vars = [
        ("HOME", store.agent.parent().unwrap().to_str().unwrap()),
        ("PI_CODING_AGENT_DIR", store.agent.to_str().unwrap()),
        ("PI_SESSION_INDEX_DIR", store.index.to_str().unwrap()),
    ];
    let config = pi_session::store_index::Config::from_vars(&vars, "/", None).unwrap();
    pi_session::store_index::Scope::new(config)
}

fn totals(report: &Value) -> [f64; 6] {
    let t = &report["totals"];
    let n = |k: &str| t[k].as_f64().unwrap_or_else(|| panic!("{k} in {t}"));
    [
        n("inputTokens"),
        n("outputTokens"),
        n("cacheReadTokens"),
        n("cacheCreationTokens"),
        n("totalCost"),
        n("totalTokens"),
    ]
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn assert_close(what: &str, ours: &[f64], theirs: &[f64]) {
    assert!(
        ours.iter().zip(theirs).all(|(a, b)| close(*a, *b)),
        "{what}: ours {ours:?}, theirs {theirs:?}"
    );
}

fn stats_per_file_equals_pi_get_session_stats_summed() {
    let Some(oracle) = support::oracle("catalog stats --per-file") else {
        panic!("the comparison needs pi's getSessionStats (the oracle)");
    };
    let mut compared = 0;
    for (store, implementation, profile) in [
        (Store::generated(oracle, 5, &[]), "manager", "pi-cli"),
        (
            Store::generated(oracle, 6, &["--pi16"]),
            "manager-1.6",
            "pi-1.6",
        ),
        (Store::real(), "manager", "pi-cli"),
    ] {
        let files = store.files();
        let jobs = files
            .iter()
            .map(|f| {
                vec![
                    "stats".to_string(),
                    support::path_str(f).into(),
                    "--impl".into(),
                    implementation.into(),
                ]
            })
            .collect();
        let outcomes = oracle.start(jobs).wait();
        let mut pi = [0.0; 7];
        for (file, outcome) in files.iter().zip(outcomes) {
            assert_eq!(
                outcome.status,
                0,
                "pi's getSessionStats of {}",
                file.display()
            );
            let doc = outcome.doc();
            let n = |v: Option<&pi_session::json::JsValue>| v.and_then(|v| v.as_f64()).unwrap();
            let tokens = doc.get("tokens");
            pi[0] += n(tokens.and_then(|t| t.get("input")));
            pi[1] += n(tokens.and_then(|t| t.get("output")));
            pi[2] += n(tokens.and_then(|t| t.get("cacheRead")));
            pi[3] += n(tokens.and_then(|t| t.get("cacheWrite")));
            pi[4] += n(doc.get("cost"));
            pi[5] += n(doc.get("assistantMessages"));
            pi[6] += n(doc.get("toolCalls"));
            compared += 1;
        }
        let report = store.json(&[
            "stats",
            "--per-file",
            "--json",
            "--profile",
            profile,
            "-z",
            "UTC",
        ]);
        let t = totals(&report);
        let ours = [
            t[0],
            t[1],
            t[2],
            t[3],
            t[4],
            report["totals"]["assistantMessages"].as_f64().unwrap(),
            report["totals"]["toolCalls"].as_f64().unwrap(),
        ];
        assert_close(&format!("{profile} per file"), &ours, &pi);
    }
    support::count("catalog stats --per-file", compared);
}

/// ccusage, installed once into target/ccusage from the npm registry.
fn ccusage() -> (PathBuf, PathBuf) {
    let dir = support::root().join("target/ccusage");
    let main = dir.join("node_modules/ccusage/dist/main.node.js");
    let lock = std::fs::File::create(support::root().join("target/.ccusage.lock")).unwrap();
    lock.lock().unwrap();
    let installed = std::fs::read_to_string(dir.join("node_modules/ccusage/package.json"))
        .is_ok_and(|p| p.contains(&format!("\"version\": \"{CCUSAGE}\"")));
    if !installed {
        support::notice(&format!(
            "npm install ccusage@{CCUSAGE} into {}",
            dir.display()
        ));
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
            .expect("npm runs (ccusage is installed from the npm registry)");
        assert!(status.success(), "npm install ccusage@{CCUSAGE} failed");
    }
    assert!(main.exists(), "no {} after the install", main.display());
    let node = support::oracle("ccusage")
        .map(|o| o.node().to_path_buf())
        .unwrap_or_else(|| PathBuf::from("node"));
    (node, main)
}

fn ccusage_daily(store: &Store) -> Value {
    let (node, main) = ccusage();
    let mut command = Command::new(node);
    command
        .arg(main)
        .args([
            "pi",
            "daily",
            "--json",
            "--offline",
            "-z",
            "UTC",
            "--pi-path",
        ])
        .arg(store.sessions())
        .env("CCUSAGE_JSONL_WORKER_THREADS", "1");
    let output = run_bounded(command, Duration::from_secs(120));
    assert!(
        output.status.success(),
        "ccusage failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn stats_count_each_copied_entry_once_and_agree_with_ccusage() {
    let Some(oracle) = support::oracle("catalog stats") else {
        panic!("the stores need pi's SessionManager (the oracle)");
    };
    let mut compared = 0;
    for seed in [7, 8, 9] {
        let store = Store::generated(oracle, seed, &["--assistant-usage-only"]);
        let reference = store.reference(Profile::PiCli);
        let (once, messages, tool_calls) = reference::counted_once(&store.files(), &reference);
        let report = store.json(&["stats", "--json", "-z", "UTC"]);
        let t = totals(&report);
        assert_close("counted once", &t[..5], &once);
        assert_eq!(report["totals"]["assistantMessages"], messages);
        assert_eq!(report["totals"]["toolCalls"], tool_calls);
        let twice = &report["countedTwicePerFile"];
        assert!(
            twice["assistantMessages"].as_u64().unwrap() > 0,
            "the store has forks"
        );
        // ccusage 19.0.3 counts every copy in each file (its key is the file's session id):
        // its totals are the per-file sums (docs/store-index.md).
        let per_file = store.json(&["stats", "--per-file", "--json", "-z", "UTC"]);
        let theirs = ccusage_daily(&store);
        assert_close(
            "ccusage = per file",
            &totals(&per_file)[..5],
            &totals(&theirs)[..5],
        );
        compared += 2;
    }
    // Without forks, the three agree, and so do the days.
    let store = Store::generated(oracle, 10, &["--assistant-usage-only", "--no-forks"]);
    let ours = store.json(&["stats", "--json", "-z", "UTC"]);
    let theirs = ccusage_daily(&store);
    assert_close("ccusage, no forks", &totals(&ours), &totals(&theirs));
    let days = |r: &Value| -> Vec<String> {
        r["daily"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["date"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(days(&ours), days(&theirs));
    support::count("catalog stats (ccusage)", compared + 1);
}

fn index_file(store: &Store) -> PathBuf {
    store.index.join("store-index-pi-cli.sqlite3")
}

/// The answer from a scan with no persisted index, to compare a damaged index's answers with.
fn scanned(store: &Store, args: &[&str]) -> Value {
    let mut all = vec!["--no-index"];
    all.extend(args);
    store.json(&all)
}

fn a_damaged_locked_or_unwritable_index_is_rebuilt_or_bypassed() {
    let Some(oracle) = support::oracle("catalog damaged") else {
        panic!("the store needs the oracle");
    };
    let store = Store::generated(oracle, 11, &[]);
    let args = ["stats", "--json", "-z", "UTC"];
    let expected = scanned(&store, &args);
    assert_eq!(store.json(&args), expected);
    let db = index_file(&store);
    assert!(db.exists());
    // Not SQLite at all.
    std::fs::write(&db, b"this is not a database, just text").unwrap();
    let _ = std::fs::remove_file(db.with_extension("sqlite3-wal"));
    assert_eq!(store.json(&args), expected);
    // Truncated.
    let len = std::fs::metadata(&db).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
    file.set_len(len / 2).unwrap();
    drop(file);
    assert_eq!(store.json(&args), expected);
    // Locked by another process's write transaction: waited for a while, then answered from
    // a scan, saying why.
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let started = Instant::now();
    // A file that grew needs a write.
    append_user_message(&store.files()[0], "lockedwrite");
    let output = store.run(&["search", "lockedwrite", "--json"]);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("answering from a scan"),
        "says why: {stderr}"
    );
    let found: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(found["hits"].as_array().unwrap().len(), 1, "{found}");
    drop(holder);
    // Released: the persisted index catches up.
    let found = store.json(&["search", "lockedwrite", "--json"]);
    assert_eq!(found["index"]["grew"], 1);
    assert_eq!(found["note"], Value::Null);
    // An index directory that cannot be made (its parent is a file).
    let mut blocked = store.command(&args);
    let not_a_dir = store.agent.parent().unwrap().join("plain-file");
    std::fs::write(&not_a_dir, "x").unwrap();
    blocked.env("PI_SESSION_INDEX_DIR", not_a_dir.join("cache"));
    let output = run_bounded(blocked, Duration::from_secs(60));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("answering from a scan"),
        "says why: {stderr}"
    );
    let got: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(got["totals"], expected["totals"]);
}

/// Appends a user message line as pi writes one, after the file's last entry.
fn append_user_message(file: &Path, text: &str) -> String {
    let content = std::fs::read_to_string(file).unwrap();
    let last = content
        .lines()
        .rev()
        .find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            (v["type"] != "session").then(|| v["id"].as_str().map(str::to_string))?
        })
        .unwrap();
    let id = format!("{:08x}", rand_id(text));
    let line = serde_json::json!({
        "type": "message", "id": id, "parentId": last, "timestamp": "2026-02-01T00:00:00.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1_769_904_000_000u64}
    });
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    writeln!(f, "{line}").unwrap();
    id
}

fn rand_id(text: &str) -> u32 {
    text.bytes().fold(2_166_136_261u32, |h, b| {
        (h ^ b as u32).wrapping_mul(16_777_619)
    })
}

fn a_file_that_grew_is_read_from_where_it_was_left() {
    let Some(oracle) = support::oracle("catalog incremental") else {
        panic!("the store needs the oracle");
    };
    let store = Store::generated(oracle, 12, &[]);
    let first = store.json(&["search", "parser", "--json"]);
    let files = store.files().len() as u64;
    assert_eq!(first["index"]["new"], files);
    let file = &store.files()[1];
    let id = append_user_message(file, "freshlyappended words");
    append_user_message(file, "second appended");
    let found = store.json(&["search", "freshlyappended", "--json"]);
    assert_eq!(found["index"]["grew"], 1, "{}", found["index"]);
    assert_eq!(found["index"]["new"], 0);
    assert_eq!(
        found["index"]["entriesIndexed"], 2,
        "only what grew is read"
    );
    let hits = found["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["entryId"], id.as_str());
    assert_eq!(hits[0]["onPath"], true, "the new leaf's path");
    // The leaf moved: entries of the old path that are not on the new one are now abandoned.
    let unchanged = store.json(&["search", "freshlyappended", "--json"]);
    assert_eq!(unchanged["index"]["entriesIndexed"], 0);
    // Rewritten (same name, other bytes): read again; deleted: removed.
    let text = std::fs::read_to_string(file)
        .unwrap()
        .replace("freshlyappended", "rewrittenword!!");
    std::fs::write(file, text).unwrap();
    let again = store.json(&["search", "rewrittenword", "--json"]);
    assert_eq!(again["index"]["replaced"], 1);
    assert_eq!(again["hits"].as_array().unwrap().len(), 1);
    assert!(
        store.json(&["search", "freshlyappended", "--json"])["hits"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    std::fs::remove_file(file).unwrap();
    let gone = store.json(&["search", "rewrittenword", "--json"]);
    assert_eq!(gone["index"]["removed"], 1);
    assert!(gone["hits"].as_array().unwrap().is_empty());
    // And the whole answer equals the brute-force reading afterwards.
    search_equals_reference(&store, Profile::PiCli, &QUERIES[..8]);
}

fn killed_while_indexing_leaves_a_usable_index() {
    let Some(oracle) = support::oracle("catalog kill") else {
        panic!("the store needs the oracle");
    };
    let store = Store::generated(oracle, 13, &[]);
    // More files, so that a kill lands mid-build.
    for seed in 14..18 {
        let more = Store::generated(oracle, seed, &[]);
        for file in more.files() {
            let project = file.parent().unwrap().file_name().unwrap();
            let dest = store.sessions().join(project);
            std::fs::create_dir_all(&dest).unwrap();
            std::fs::copy(&file, dest.join(file.file_name().unwrap())).unwrap();
        }
    }
    let args = ["stats", "--json", "-z", "UTC", "--by", "session"];
    let expected = scanned(&store, &args);
    for delay_ms in [5, 20, 60, 120, 250] {
        let _ = std::fs::remove_dir_all(&store.index);
        let mut child = store
            .command(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        // SIGKILL to the child this test started (std's kill sends SIGKILL).
        let _ = child.kill();
        let _ = child.wait();
        let after = store.json(&args);
        assert_eq!(
            after["totals"], expected["totals"],
            "after a kill at {delay_ms} ms"
        );
        assert_eq!(after["sessions"], expected["sessions"]);
    }
}

fn two_processes_indexing_one_store_agree() {
    let Some(oracle) = support::oracle("catalog concurrent") else {
        panic!("the store needs the oracle");
    };
    let store = Store::generated(oracle, 20, &[]);
    let args = ["stats", "--json", "-z", "UTC", "--by", "session"];
    let expected = scanned(&store, &args);
    let children: Vec<_> = (0..2)
        .map(|_| {
            store
                .command(&args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let got: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(got["sessions"], expected["sessions"]);
    }
    // Each entry filed once: a third run reads nothing and answers the same.
    let after = store.json(&args);
    assert_eq!(after["sessions"], expected["sessions"]);
    let search = store.json(&["search", "parser", "--json", "--limit", "100000"]);
    let keys = hit_keys(&search);
    assert_eq!(
        keys.len(),
        search["hits"].as_array().unwrap().len(),
        "no hit twice"
    );
}

fn each_profile_has_its_own_index() {
    let Some(oracle) = support::oracle("catalog profiles") else {
        panic!("the store needs the oracle");
    };
    let store = Store::generated(oracle, 19, &["--pi16"]);
    store.json(&["search", "parser", "--json", "--profile", "pi-1.6"]);
    store.json(&["search", "parser", "--json", "--profile", "pi-cli"]);
    assert!(store.index.join("store-index-pi-1.6.sqlite3").exists());
    assert!(store.index.join("store-index-pi-cli.sqlite3").exists());
    // --no-index writes no store index.
    let other = Store::real();
    other.json(&["--no-index", "search", "the", "--json"]);
    assert!(!other.index.join("store-index-pi-cli.sqlite3").exists());
}

/// The hits' file names and lines (the directory differs between layouts).
fn named_hits(found: &Value) -> BTreeSet<(String, u64)> {
    found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let path = PathBuf::from(h["sessionPath"].as_str().unwrap());
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                h["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn a_flat_session_dir_is_read_as_pi_reads_it() {
    let Some(oracle) = support::oracle("catalog session dir") else {
        panic!("the store needs the oracle");
    };
    let store = Store::generated(oracle, 23, &[]);
    let query = ["search", "--json", "--limit", "100000", "--", "parser"];
    let expected = named_hits(&store.json(&query));
    assert!(!expected.is_empty());
    let stats = ["stats", "--json", "-z", "UTC", "--by", "project"];
    let expected_stats = store.json(&stats);
    // The same files in one flat directory, as pi's --session-dir writes them.
    let flat = store.agent.parent().unwrap().join("flat");
    std::fs::create_dir_all(&flat).unwrap();
    for file in store.files() {
        std::fs::copy(&file, flat.join(file.file_name().unwrap())).unwrap();
    }
    let flat_text = flat.to_str().unwrap();
    let mut with_flag = query.to_vec();
    with_flag.splice(1..1, ["--session-dir", flat_text]);
    let found = store.json(&with_flag);
    assert_eq!(named_hits(&found), expected, "--session-dir");
    assert!(found["pending"].is_null());
    // $PI_CODING_AGENT_SESSION_DIR, as pi's command line reads it.
    let output = run_bounded(
        {
            let mut command = store.command(&query);
            command.env("PI_CODING_AGENT_SESSION_DIR", &flat);
            command
        },
        Duration::from_secs(60),
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let found: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(named_hits(&found), expected, "PI_CODING_AGENT_SESSION_DIR");
    // Its own index: the sessions root's is left as it was.
    let databases: Vec<_> = std::fs::read_dir(&store.index)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("store-index-pi-cli") && n.ends_with(".sqlite3"))
        .collect();
    assert_eq!(databases.len(), 2, "{databases:?}");
    // A session's project is the directory pi would give its header's cwd: the figures by
    // project are the same.
    let mut flat_stats = stats.to_vec();
    flat_stats.extend(["--session-dir", flat_text]);
    let by_project = store.json(&flat_stats);
    assert_eq!(by_project["projects"], expected_stats["projects"]);
}

crate::tests! {
    [rpc::trials]
    search_equals_a_brute_force_reading_on_generated_stores,
    search_equals_a_brute_force_reading_on_the_real_files,
    search_filters_equal_the_reference,
    a_search_hit_carries_what_a_front_end_needs,
    query_syntax_is_text_or_a_clear_error,
    stats_per_file_equals_pi_get_session_stats_summed,
    stats_count_each_copied_entry_once_and_agree_with_ccusage,
    a_damaged_locked_or_unwritable_index_is_rebuilt_or_bypassed,
    a_file_that_grew_is_read_from_where_it_was_left,
    killed_while_indexing_leaves_a_usable_index,
    two_processes_indexing_one_store_agree,
    each_profile_has_its_own_index,
    a_flat_session_dir_is_read_as_pi_reads_it,
}
