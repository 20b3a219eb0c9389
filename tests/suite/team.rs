//! The store index on PostgreSQL, for a team: `pi-session sync --to`, and `search`/`stats
//! --db`, against a real PostgreSQL cluster (tests/support/postgres.rs) shared by these tests,
//! each test in its own database. Seeded generators; every process bounded.
//!
//! The cluster is started by the first of these tests that runs (none is started by `--list`
//! or by a run that filters them all out), shared by the others, and stopped when the run ends
//! (`harness::on_exit`; its watchdog stops it if the test process is killed).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::support;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use support::postgres::{Cluster, PASSWORD};

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

// ---------------------------------------------------------------------------------------------
// Stores of sessions, written as pi writes them.

/// One machine's pi directory: sessions under `agent/sessions`, the local index in `cache`.
struct Store {
    dir: tempfile::TempDir,
}

impl Store {
    fn new() -> Store {
        Store {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn sessions_root(&self) -> PathBuf {
        self.dir.path().join("agent/sessions")
    }

    fn command(&self, args: &[&str]) -> Command {
        self.command_of(BIN, args)
    }

    /// The same command run by another build of the program.
    fn command_of(&self, program: &str, args: &[&str]) -> Command {
        let mut command = Command::new(program);
        command
            .args(args)
            .env("HOME", self.dir.path())
            .env("PI_CODING_AGENT_DIR", self.dir.path().join("agent"))
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            // Each store its own local index (the suite's cargo config shares one otherwise).
            .env("PI_SESSION_INDEX_DIR", self.dir.path().join("index"))
            .env_remove("PGPASSWORD")
            .env_remove("PGPASSFILE")
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .env_remove("PI_SESSION_LOG")
            .stdin(Stdio::null());
        command
    }

    /// Runs the program to its end (bounded: a run over two minutes is a failure).
    fn run(&self, args: &[&str]) -> Output {
        run_bounded(self.command(args))
    }

    fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(
            output.status.success(),
            "pi-session {args:?} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).unwrap()
    }
}

fn run_bounded(mut command: Command) -> Output {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id();
    let (done, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        if wait.recv_timeout(Duration::from_secs(120)).is_err() {
            // SAFETY: kill has no memory preconditions; the child is ours.
            unsafe { libc::kill(id as i32, libc::SIGKILL) };
        }
    });
    let output = child.wait_with_output().unwrap();
    let _ = done.send(());
    output
}

const WORDS: &[&str] = &[
    "parser",
    "Crème",
    "brûlée",
    "ÉCLAIR",
    "naïve",
    "日本語",
    "tokenizer",
    "ab",
    "x",
    "50%_off",
    "migration",
    "fichier",
    "ｆｕｌｌ",
    "compaction",
    "branch",
    "summary",
    "Straße",
    "index",
];
const MODELS: &[(&str, &str)] = &[
    ("anthropic", "claude-sonnet-4-5"),
    ("openai", "gpt-5"),
    ("google", "gemini-2.5-pro"),
];

fn words(rng: &mut StdRng, n: usize) -> String {
    (0..n)
        .map(|_| WORDS[rng.random_range(0..WORDS.len())])
        .collect::<Vec<_>>()
        .join(" ")
}

fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// A session file being written: its path, its id, and the last entry (the next one's parent).
struct SessionFile {
    path: PathBuf,
    id: String,
    last: Option<String>,
    clock_ms: i64,
    next_id: u32,
}

impl SessionFile {
    fn create(root: &Path, project: &str, rng: &mut StdRng) -> SessionFile {
        let id = format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            rng.random::<u32>(),
            rng.random::<u16>(),
            rng.random_range(0..0x1000u32),
            rng.random_range(0..0x1000u32),
            rng.random_range(0..1u64 << 48)
        );
        // Sessions spread over six weeks, at any minute of the day.
        let clock_ms = 1_767_225_600_000 + rng.random_range(0..42 * 86_400_000i64);
        let dir = root.join(format!("--work-{project}--"));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!(
            "{}_{id}.jsonl",
            iso(clock_ms).replace([':', '.'], "-")
        ));
        let header = format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{}","cwd":"/work/{project}"}}"#,
            iso(clock_ms)
        );
        std::fs::write(&path, header + "\n").unwrap();
        SessionFile {
            path,
            id,
            last: None,
            clock_ms,
            next_id: rng.random_range(0..1000),
        }
    }

    fn entry_id(&mut self) -> String {
        self.next_id += 1;
        format!("{:08x}", self.next_id.wrapping_mul(2_654_435_761))
    }

    /// Appends `turns` turns (a user message, an assistant answer with usage, sometimes a
    /// tool call and its result), as separate writes.
    fn append(&mut self, rng: &mut StdRng, turns: usize) {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .unwrap();
        for _ in 0..turns {
            let mut lines = Vec::new();
            self.clock_ms += rng.random_range(1_000..3_600_000);
            let user = self.entry_id();
            lines.push(format!(
                r#"{{"type":"message","id":"{user}","parentId":{},"timestamp":"{}","message":{{"role":"user","content":"{}","timestamp":{}}}}}"#,
                parent(&self.last),
                iso(self.clock_ms),
                words(rng, 6),
                self.clock_ms
            ));
            self.last = Some(user);
            let (provider, model) = MODELS[rng.random_range(0..MODELS.len())];
            let assistant = self.entry_id();
            let tool = rng.random_bool(0.4);
            let call = if tool {
                format!(
                    r#",{{"type":"toolCall","id":"call_{assistant}","name":"bash","arguments":{{"command":"grep {}"}}}}"#,
                    words(rng, 1)
                )
            } else {
                String::new()
            };
            let (input, output) = (rng.random_range(1..5000), rng.random_range(1..2000));
            let (cache_read, cache_write) = (rng.random_range(0..10000), rng.random_range(0..500));
            let cost = (input + output) as f64 * 0.000_003 + cache_read as f64 * 0.000_000_3;
            self.clock_ms += rng.random_range(500..60_000);
            lines.push(format!(
                r#"{{"type":"message","id":"{assistant}","parentId":{},"timestamp":"{}","message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"{}"}},{{"type":"text","text":"{}"}}{call}],"api":"x","provider":"{provider}","model":"{model}","usage":{{"input":{input},"output":{output},"cacheRead":{cache_read},"cacheWrite":{cache_write},"totalTokens":{},"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":{cost}}}}},"stopReason":"{}","timestamp":{}}}}}"#,
                parent(&self.last),
                iso(self.clock_ms),
                words(rng, 4),
                words(rng, 12),
                input + output + cache_read + cache_write,
                if tool { "toolUse" } else { "stop" },
                self.clock_ms
            ));
            self.last = Some(assistant.clone());
            if tool {
                let result = self.entry_id();
                lines.push(format!(
                    r#"{{"type":"message","id":"{result}","parentId":{},"timestamp":"{}","message":{{"role":"toolResult","toolCallId":"call_{assistant}","toolName":"bash","content":[{{"type":"text","text":"{}"}}],"isError":false,"timestamp":{}}}}}"#,
                    parent(&self.last),
                    iso(self.clock_ms),
                    words(rng, 8),
                    self.clock_ms
                ));
                self.last = Some(result);
            }
            for line in lines {
                file.write_all(format!("{line}\n").as_bytes()).unwrap();
            }
        }
    }
}

fn parent(last: &Option<String>) -> String {
    match last {
        Some(id) => format!("\"{id}\""),
        None => "null".into(),
    }
}

/// A store of `sessions` sessions over three projects, `turns` turns each.
fn fill(store: &Store, seed: u64, sessions: usize, turns: usize) -> Vec<SessionFile> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..sessions)
        .map(|i| {
            let mut file =
                SessionFile::create(&store.sessions_root(), &format!("p{}", i % 3), &mut rng);
            file.append(&mut rng, turns);
            file
        })
        .collect()
}

/// Every (session id, entry id) the store's files hold.
fn entries_in(store: &Store) -> BTreeSet<(String, String)> {
    let mut all = BTreeSet::new();
    for project in std::fs::read_dir(store.sessions_root()).unwrap() {
        for file in std::fs::read_dir(project.unwrap().path()).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            let mut lines = text.lines();
            let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
            let session = header["id"].as_str().unwrap().to_string();
            for line in lines {
                // A torn last line (a write under way) is not an entry yet.
                if let Ok(entry) = serde_json::from_str::<Value>(line) {
                    all.insert((session.clone(), entry["id"].as_str().unwrap().to_string()));
                }
            }
        }
    }
    all
}

// ---------------------------------------------------------------------------------------------
// What the database holds.

fn entries_in_db(cluster: &Cluster, db: &str) -> Vec<(String, String)> {
    cluster
        .client(db)
        .query(
            "SELECT s.session_id, e.entry_key FROM entries e JOIN sessions s ON s.id = e.session
             ORDER BY 1, 2",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

/// The rollup agrees with the entries it sums (kept in the same transactions).
fn assert_rollup_consistent(cluster: &Cluster, db: &str) {
    let row = cluster
        .client(db)
        .query_one(
            "SELECT (SELECT count(*) FROM entries),
                (SELECT COALESCE(sum(assistant), 0)::BIGINT FROM entries WHERE has_usage),
                (SELECT COALESCE(sum(assistant_messages), 0)::BIGINT FROM rollup),
                (SELECT COALESCE(sum(input + output), 0)::FLOAT8 FROM entries WHERE has_usage),
                (SELECT COALESCE(sum(input + output), 0)::FLOAT8 FROM rollup)",
            &[],
        )
        .unwrap();
    let (entries, a, b): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
    let (x, y): (f64, f64) = (row.get(3), row.get(4));
    assert!(entries > 0);
    assert_eq!(a, b, "assistant messages: entries vs rollup");
    assert_eq!(x, y, "tokens: entries vs rollup");
}

/// Search hits as a set: (session id, entry id, line).
fn hit_set(result: &Value) -> BTreeSet<(String, String, u64)> {
    result["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["sessionId"].as_str().unwrap().to_string(),
                h["entryId"].as_str().unwrap_or("-").to_string(),
                h["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// A stats report's groups as key -> figures (floats compared with a relative tolerance:
/// sums taken in another order may differ in the last bits).
fn figures(report: &Value) -> BTreeMap<String, BTreeMap<String, f64>> {
    let object = report.as_object().unwrap();
    let (array, rows) = object
        .iter()
        .find(|(_, v)| v.is_array())
        .expect("a groups array");
    let key = match array.as_str() {
        "daily" => "date",
        "weekly" => "week",
        "monthly" => "month",
        "models" => "model",
        "projects" => "project",
        _ => "sessionId",
    };
    let mut out: BTreeMap<String, BTreeMap<String, f64>> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g[key].as_str().unwrap().to_string(), numbers(g)))
        .collect();
    out.insert("(totals)".into(), numbers(&report["totals"]));
    out.insert(
        "(counted twice per file)".into(),
        numbers(&report["countedTwicePerFile"]),
    );
    out
}

fn numbers(value: &Value) -> BTreeMap<String, f64> {
    value
        .as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| v.as_f64().map(|n| (k.clone(), n)))
                .collect()
        })
        .unwrap_or_default()
}

/// Two hit sets equal, the differences shown when not.
fn assert_same_hits<T: Ord + std::fmt::Debug>(local: &BTreeSet<T>, team: &BTreeSet<T>, what: &str) {
    let only_local: Vec<_> = local.difference(team).take(5).collect();
    let only_team: Vec<_> = team.difference(local).take(5).collect();
    assert!(
        only_local.is_empty() && only_team.is_empty(),
        "{what}: {} vs {} hits; only local: {only_local:?}; only in the team database: {only_team:?}",
        local.len(),
        team.len()
    );
}

fn assert_same_figures(
    a: &BTreeMap<String, BTreeMap<String, f64>>,
    b: &BTreeMap<String, BTreeMap<String, f64>>,
    what: &str,
) {
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "{what}: groups"
    );
    for (key, fa) in a {
        let fb = &b[key];
        assert_eq!(
            fa.keys().collect::<Vec<_>>(),
            fb.keys().collect::<Vec<_>>(),
            "{what} {key}"
        );
        for (name, x) in fa {
            let y = fb[name];
            assert!(
                (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
                "{what} {key} {name}: {x} vs {y}"
            );
        }
    }
}

fn sum_figures(
    a: &BTreeMap<String, BTreeMap<String, f64>>,
    b: &BTreeMap<String, BTreeMap<String, f64>>,
) -> BTreeMap<String, BTreeMap<String, f64>> {
    let mut out = a.clone();
    for (key, fb) in b {
        let fa = out.entry(key.clone()).or_default();
        for (name, y) in fb {
            *fa.entry(name.clone()).or_default() += y;
        }
    }
    out
}

fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A failure as the program must report it: status 1, one line on stderr naming `problem`,
/// the password nowhere.
fn assert_one_line_failure(output: &Output, problem: &str) {
    let stderr = stderr_of(output);
    assert_eq!(output.status.code(), Some(1), "status; stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(problem), "{problem:?} in {stderr}");
    assert!(!stderr.contains(PASSWORD), "the password leaked: {stderr}");
    assert!(output.stdout.is_empty(), "nothing on stdout");
}

// ---------------------------------------------------------------------------------------------
// The tests.

const QUERIES: &[&[&str]] = &[
    &["parser"],
    &["creme brulee"],
    &["\"creme brulee\""],
    &["eclair", "--thinking"],
    &["ab"],
    &["x"],
    &["日本"],
    &["50%_"],
    &["full"],
    &["STRAßE"],
    &["grep", "--role", "assistant"],
    &["naive", "--tool", "bash"],
    &["index", "--model", "gpt-5"],
    &["index", "--model", "openai/gpt-5", "--on-path"],
    &[
        "migration",
        "--since",
        "2026-01-10",
        "--until",
        "2026-01-20",
    ],
];

const GROUPINGS: &[&[&str]] = &[
    &["--by", "day", "-z", "UTC"],
    &["--by", "day", "-z", "Asia/Kathmandu"],
    &["--by", "week", "-z", "America/St_Johns"],
    &["--by", "month", "-z", "UTC"],
    &["--by", "model"],
    &["--by", "project"],
    &["--by", "session"],
    &[
        "--by",
        "day",
        "-z",
        "UTC",
        "--since",
        "2026-01-05",
        "--until",
        "2026-01-25",
    ],
    &["--by", "model", "--per-file"],
];

fn with(args: &[&str], more: &[&str]) -> Vec<String> {
    args.iter().chain(more).map(|s| s.to_string()).collect()
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// A sync files every entry once; run again it files nothing; after appends it files only
/// what was appended; a session copied to another machine is not filed twice.
fn sync_is_exactly_once_and_resumable(cluster: &Cluster) {
    let db = cluster.database("once");
    let url = cluster.url(&db);
    let store = Store::new();
    let mut rng = StdRng::seed_from_u64(7);
    let mut files = fill(&store, 1, 12, 20);
    let first: Value =
        serde_json::from_str(&store.ok(&["sync", "--to", &url, "--machine", "a", "--json"]))
            .unwrap();
    let expected = entries_in(&store);
    assert_eq!(
        first["entriesIndexed"].as_u64(),
        Some(expected.len() as u64)
    );
    let db_entries = entries_in_db(cluster, &db);
    assert_eq!(
        db_entries.iter().cloned().collect::<BTreeSet<_>>(),
        expected
    );
    assert_eq!(db_entries.len(), expected.len(), "each entry once");

    let again: Value =
        serde_json::from_str(&store.ok(&["sync", "--to", &url, "--machine", "a", "--json"]))
            .unwrap();
    assert_eq!(again["entriesIndexed"].as_u64(), Some(0), "{again}");
    assert_eq!(entries_in_db(cluster, &db), db_entries);

    for file in files.iter_mut().take(5) {
        file.append(&mut rng, 3);
    }
    let grew: Value =
        serde_json::from_str(&store.ok(&["sync", "--to", &url, "--machine", "a", "--json"]))
            .unwrap();
    assert_eq!(grew["grew"].as_u64(), Some(5), "{grew}");
    let expected = entries_in(&store);
    let db_entries = entries_in_db(cluster, &db);
    assert_eq!(db_entries.len(), expected.len());
    assert_eq!(db_entries.into_iter().collect::<BTreeSet<_>>(), expected);

    // The same session on a second machine: tagged with both, filed once.
    let other = Store::new();
    let copy = other.sessions_root().join("--work-p0--");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::copy(
        &files[0].path,
        copy.join(files[0].path.file_name().unwrap()),
    )
    .unwrap();
    other.ok(&["sync", "--to", &url, "--machine", "b"]);
    assert_eq!(entries_in_db(cluster, &db).len(), expected.len());
    let machines: Vec<String> = cluster
        .client(&db)
        .query(
            "SELECT m.machine FROM session_machines m JOIN sessions s ON s.id = m.session
             WHERE s.session_id = $1 ORDER BY 1",
            &[&files[0].id],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(machines, ["a", "b"]);
    assert_rollup_consistent(cluster, &db);
}

/// `search --db` finds the same entries as the SQLite index, `stats --db` gives the same
/// figures, over the same sessions (forks included: copied entries count once in both).
fn search_and_stats_match_sqlite(cluster: &Cluster) {
    let db = cluster.database("same");
    let url = cluster.url(&db);
    let store = Store::new();
    let files = fill(&store, 2, 15, 25);
    // A fork: the source's first lines under a new header naming the source.
    let source = std::fs::read_to_string(&files[0].path).unwrap();
    let fork_id = "0f0f0f0f-0000-4000-8000-000000000001";
    let mut fork = format!(
        r#"{{"type":"session","version":3,"id":"{fork_id}","timestamp":"2026-01-03T00:00:00.000Z","cwd":"/work/p0","parentSession":"{}"}}"#,
        files[0].path.display()
    ) + "\n";
    for line in source.lines().skip(1).take(10) {
        fork.push_str(line);
        fork.push('\n');
    }
    std::fs::write(
        files[0]
            .path
            .with_file_name(format!("2026-01-03T00-00-00-000Z_{fork_id}.jsonl")),
        fork,
    )
    .unwrap();
    store.ok(&["sync", "--to", &url, "--machine", "m1"]);
    for query in QUERIES {
        let args = with(&["search"], query);
        let local = store.json(&strs(&with(&strs(&args), &["--json", "--limit", "100000"])));
        let team = store.json(&strs(&with(
            &strs(&args),
            &["--json", "--limit", "100000", "--db", &url],
        )));
        let (l, t) = (hit_set(&local), hit_set(&team));
        assert!(
            !l.is_empty() || query[0] == "x",
            "{query:?} finds something"
        );
        assert_same_hits(&l, &t, &format!("search {query:?}"));
    }
    for grouping in GROUPINGS {
        let args = with(&["stats", "--json"], grouping);
        let local = store.json(&strs(&args));
        let team = store.json(&strs(&with(&strs(&args), &["--db", &url])));
        assert_same_figures(
            &figures(&local),
            &figures(&team),
            &format!("stats {grouping:?}"),
        );
    }
    let twice = figures(&store.json(&["stats", "--json", "--by", "model", "--db", &url]));
    assert!(
        twice["(counted twice per file)"]["assistantMessages"] > 0.0,
        "the fork's copies are counted once"
    );
    assert_rollup_consistent(cluster, &db);
}

/// Two machines syncing into one database at once: the team's figures are the sum of each
/// store's, its hits the union, and `--machine` narrows to one store.
fn two_machines_at_once(cluster: &Cluster) {
    let db = cluster.database("two");
    let url = cluster.url(&db);
    let (a, b) = (Store::new(), Store::new());
    fill(&a, 3, 15, 20);
    fill(&b, 4, 15, 20);
    let runs: Vec<Child> = [(&a, "alpha"), (&b, "beta")]
        .iter()
        .map(|(store, machine)| {
            store
                .command(&["sync", "--to", &url, "--machine", machine])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for run in runs {
        let output = run.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", stderr_of(&output));
    }
    let expected: BTreeSet<_> = entries_in(&a).union(&entries_in(&b)).cloned().collect();
    assert_eq!(entries_in_db(cluster, &db).len(), expected.len());
    for grouping in [&["--by", "day", "-z", "UTC"][..], &["--by", "model"]] {
        let args = with(&["stats", "--json"], grouping);
        let sum = sum_figures(
            &figures(&a.json(&strs(&args))),
            &figures(&b.json(&strs(&args))),
        );
        let team = figures(&a.json(&strs(&with(&strs(&args), &["--db", &url]))));
        assert_same_figures(&sum, &team, "team = a + b");
        let only_a = figures(&b.json(&strs(&with(
            &strs(&args),
            &["--db", &url, "--machine", "alpha"],
        ))));
        assert_same_figures(&figures(&a.json(&strs(&args))), &only_a, "--machine alpha");
    }
    for query in [&["parser"][..], &["ab"], &["creme brulee", "--thinking"]] {
        let args = with(query, &["--json", "--limit", "100000"]);
        let union: BTreeSet<_> = hit_set(&a.json(&strs(&with(&["search"], &strs(&args)))))
            .union(&hit_set(&b.json(&strs(&with(&["search"], &strs(&args))))))
            .cloned()
            .collect();
        let team = hit_set(
            &a.json(&strs(&with(
                &with(&["search"], &strs(&args))
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
                &["--db", &url],
            ))),
        );
        assert_same_hits(&union, &team, &format!("search {query:?}"));
    }
    assert_rollup_consistent(cluster, &db);
}

/// Connection refused, a wrong password, a database of another schema version: one line
/// naming the problem, status 1, the password nowhere, nothing written.
fn errors_are_one_line_and_write_nothing(cluster: &Cluster) {
    let store = Store::new();
    fill(&store, 5, 3, 5);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let refused = format!("postgres://postgres:{PASSWORD}@127.0.0.1:{port}/x?sslmode=disable");
    let output = store.run(&["sync", "--to", &refused, "--machine", "m"]);
    assert_one_line_failure(
        &output,
        "cannot connect to postgres://postgres:***@127.0.0.1",
    );
    assert!(
        stderr_of(&output).to_lowercase().contains("refused"),
        "{}",
        stderr_of(&output)
    );

    let db = cluster.database("errors");
    let wrong = cluster.url(&db).replace(PASSWORD, "not-the-password");
    let output = store.run(&["sync", "--to", &wrong, "--machine", "m"]);
    assert_one_line_failure(&output, "password authentication failed");
    assert!(!stderr_of(&output).contains("not-the-password"));
    let output = store.run(&["search", "parser", "--db", &wrong]);
    assert_one_line_failure(&output, "password authentication failed");

    let url = cluster.url(&db);
    store.ok(&["sync", "--to", &url, "--machine", "m"]);
    let before = entries_in_db(cluster, &db);
    cluster
        .client(&db)
        .execute(
            "UPDATE pi_session_meta SET value = '99' WHERE key = 'schema'",
            &[],
        )
        .unwrap();
    fill(&store, 6, 2, 5);
    for args in [
        &["sync", "--to", &url, "--machine", "m"][..],
        &["stats", "--db", &url],
        &["search", "parser", "--db", &url],
    ] {
        let output = store.run(args);
        assert_one_line_failure(&output, "schema version 99");
    }
    assert_eq!(entries_in_db(cluster, &db), before, "nothing written");

    let output = store.run(&["sync", "--to", "mysql://db/x", "--machine", "m"]);
    assert_one_line_failure(&output, "not a PostgreSQL URL");
    let output = store.run(&[
        "sync",
        "--to",
        &format!("{url}?sslmode=maybe"),
        "--machine",
        "m",
    ]);
    assert_one_line_failure(&output, "sslmode=maybe");
}

/// A role that may only read the tables can search and ask for figures (a current database is
/// only read on connecting); it cannot sync, and says so in one line.
fn a_reading_role_queries(cluster: &Cluster) {
    let db = cluster.database("reader");
    let store = Store::new();
    fill(&store, 15, 4, 6);
    store.ok(&["sync", "--to", &cluster.url(&db), "--machine", "m"]);
    let mut admin = cluster.client(&db);
    admin
        .batch_execute(&format!(
            "DO $$ BEGIN
               IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'reader') THEN
                 CREATE ROLE reader LOGIN PASSWORD '{PASSWORD}';
               END IF;
             END $$;
             REVOKE CREATE ON SCHEMA public FROM PUBLIC;
             GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader;"
        ))
        .unwrap();
    let url = cluster.url(&db).replace("//postgres:", "//reader:");
    let local = figures(&store.json(&["stats", "--json", "--by", "model"]));
    let team = figures(&store.json(&["stats", "--json", "--by", "model", "--db", &url]));
    assert_same_figures(&local, &team, "stats as reader");
    let hits = hit_set(&store.json(&["search", "parser", "--json", "--db", &url]));
    assert!(!hits.is_empty());
    fill(&store, 16, 1, 2);
    let output = store.run(&["sync", "--to", &url, "--machine", "m"]);
    assert_one_line_failure(&output, "permission denied");
}

/// The password from PGPASSWORD or the pgpass file; never in the debug log.
fn password_sources_and_logs(cluster: &Cluster) {
    let db = cluster.database("secrets");
    let store = Store::new();
    fill(&store, 8, 3, 5);
    let url = cluster.url_without_password(&db);
    let output = store.run(&["sync", "--to", &url, "--machine", "m"]);
    assert_one_line_failure(&output, "password");

    let mut command = store.command(&["sync", "--to", &url, "--machine", "m"]);
    command
        .env("PGPASSWORD", PASSWORD)
        .env("PI_SESSION_LOG", "trace");
    let output = run_bounded(command);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let log = stderr_of(&output);
    assert!(log.contains("connected to"), "debug log written: {log}");
    assert!(!log.contains(PASSWORD), "the password is in the log");

    let passfile = store.dir.path().join("pgpass");
    std::fs::write(
        &passfile,
        format!("# the team\nlocalhost:*:{db}:postgres:{PASSWORD}\n"),
    )
    .unwrap();
    std::fs::set_permissions(
        &passfile,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let mut command = store.command(&["stats", "--db", &url, "--json"]);
    command
        .env("PGPASSFILE", &passfile)
        .env("PI_SESSION_LOG", "trace");
    let output = run_bounded(command);
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert!(!stderr_of(&output).contains(PASSWORD));
}

/// TLS through rustls: verify-full against the CA that signed the server's certificate
/// passes; against another CA it fails in one line.
fn tls_verify_full(cluster: &Cluster) {
    let db = cluster.database("tls");
    let store = Store::new();
    fill(&store, 9, 3, 5);
    let url = cluster.tls_url(&db, "verify-full", &cluster.ca_cert);
    store.ok(&["sync", "--to", &url, "--machine", "m"]);
    // The cluster takes TCP connections over TLS only (hostssl): without it, refused.
    let plain = cluster.tls_url(&db, "disable", &cluster.ca_cert);
    let output = store.run(&["sync", "--to", &plain, "--machine", "m"]);
    assert_one_line_failure(&output, "no encryption");
    let report = store.json(&["stats", "--db", &url, "--json", "--by", "model"]);
    assert!(report["totals"]["assistantMessages"].as_u64().unwrap() > 0);

    let other = tempfile::tempdir().unwrap();
    support::postgres::make_certificates(other.path(), "another CA");
    let wrong = cluster.tls_url(&db, "verify-full", &other.path().join("ca.crt"));
    let output = store.run(&["sync", "--to", &wrong, "--machine", "m"]);
    assert_one_line_failure(&output, "cannot connect");
    assert!(
        stderr_of(&output).to_lowercase().contains("certificate"),
        "{}",
        stderr_of(&output)
    );
    let missing = cluster.tls_url(&db, "verify-full", &other.path().join("none.crt"));
    let output = store.run(&["sync", "--to", &missing, "--machine", "m"]);
    assert_one_line_failure(&output, "none.crt");
}

/// kill -9 of `sync` at seeded random points while sessions grow: in the end every entry is
/// in the database exactly once, and the rollup agrees with the entries.
fn killed_sync_leaves_every_entry_once(cluster: &Cluster) {
    let db = cluster.database("killed");
    let url = cluster.url(&db);
    let store = Arc::new(Store::new());
    let files = fill(&store, 10, 30, 60);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        let mut files = files;
        std::thread::spawn(move || {
            let mut rng = StdRng::seed_from_u64(11);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let at = rng.random_range(0..files.len());
                files[at].append(&mut rng, 1);
                std::thread::sleep(Duration::from_millis(3));
            }
        })
    };
    let mut rng = StdRng::seed_from_u64(12);
    let mut killed = 0;
    for _ in 0..10 {
        // A following sync never ends by itself and files each growth as it comes (the writer
        // appends every few milliseconds), so each kill lands in the middle of its work
        // whatever the machine's speed; a one-shot sync of what grew could end first.
        let mut child = store
            .command(&[
                "sync",
                "--to",
                &url,
                "--machine",
                "m",
                "--follow",
                "--interval",
                "0.02",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.random_range(50..900)));
        if child.try_wait().unwrap().is_none() {
            killed += 1;
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    assert_eq!(
        killed, 10,
        "a following sync ended by itself before it was killed"
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    store.ok(&["sync", "--to", &url, "--machine", "m"]);
    let expected = entries_in(&store);
    let db_entries = entries_in_db(cluster, &db);
    assert_eq!(db_entries.len(), expected.len(), "each entry exactly once");
    assert_eq!(db_entries.into_iter().collect::<BTreeSet<_>>(), expected);
    assert_rollup_consistent(cluster, &db);
}

/// PostgreSQL restarted under `sync --follow`: it reconnects and files what was appended
/// meanwhile. A cluster of its own (the shared one stays up for the other tests).
fn follow_survives_a_restart(_: &Cluster) {
    let cluster = Cluster::start();
    let db = cluster.database("follow");
    let url = cluster.url(&db);
    let store = Store::new();
    let mut files = fill(&store, 13, 5, 10);
    let mut child = store
        .command(&[
            "sync",
            "--to",
            &url,
            "--machine",
            "m",
            "--follow",
            "--interval",
            "0.2",
        ])
        .env("PI_SESSION_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let wait_for = |count: usize| {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let now = postgres::Client::connect(&url, postgres::NoTls)
                .ok()
                .and_then(|mut c| c.query_one("SELECT count(*) FROM entries", &[]).ok())
                .map(|r| r.get::<_, i64>(0) as usize);
            if now == Some(count) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{now:?} entries, waiting for {count}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait_for(entries_in(&store).len());
    cluster.stop();
    let mut rng = StdRng::seed_from_u64(14);
    for file in files.iter_mut() {
        file.append(&mut rng, 2);
    }
    std::thread::sleep(Duration::from_millis(800));
    cluster.start_again();
    wait_for(entries_in(&store).len());
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    let log = stderr_of(&output);
    assert!(log.contains("reconnected"), "{log}");
    assert!(!log.contains(PASSWORD));
    assert_rollup_consistent(&cluster, &db);
}

/// Not a check, a measurement (run with `--ignored`): `sync` of a big store into an empty
/// database, against a bare binary COPY of the same entry rows into the same schema with its
/// indexes; and the sync's peak memory.
fn bench_sync_against_copy(cluster: &Cluster) {
    let store = Store::new();
    let started = Instant::now();
    fill(&store, 99, 150, 300);
    let bytes: u64 = walk_bytes(&store.sessions_root());
    support::notice(&format!(
        "bench: a store of {} MB made in {:.1?}",
        bytes / 1_000_000,
        started.elapsed()
    ));
    let db = cluster.database("bench");
    let url = cluster.url(&db);
    cluster
        .client("postgres")
        .batch_execute(&format!(
            "ALTER DATABASE {db} SET log_min_duration_statement = 0"
        ))
        .unwrap();
    // A release build measures what users run: PI_SESSION_BENCH_BIN=target/release/pi-session.
    let program = std::env::var("PI_SESSION_BENCH_BIN").unwrap_or_else(|_| BIN.to_string());
    support::notice(&format!("bench: running {program}"));
    let mut command = store.command_of(
        &program,
        &["sync", "--to", &url, "--machine", "m", "--json"],
    );
    command.stdout(Stdio::null()).stderr(Stdio::null());
    let started = Instant::now();
    let child = command.spawn().unwrap();
    let (status, peak_kb, cpu) = wait_with_peak_memory(child);
    let sync_time = started.elapsed();
    assert!(status, "sync failed");
    let rows = entries_in_db(cluster, &db).len();
    let log = cluster.log();
    let mut slow: Vec<&str> = log.lines().filter(|l| l.contains("duration:")).collect();
    slow.sort_by(|a, b| {
        let ms = |l: &str| -> f64 {
            l.split("duration: ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0.0)
        };
        ms(b).total_cmp(&ms(a))
    });
    let mut by_kind: BTreeMap<String, (usize, f64)> = BTreeMap::new();
    for line in &slow {
        let ms: f64 = line
            .split("duration: ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0.0);
        let what: String = line
            .split(" ms  ")
            .nth(1)
            .unwrap_or("")
            .split(':')
            .nth(1)
            .unwrap_or("")
            .trim()
            .chars()
            .take(30)
            .collect();
        let entry = by_kind.entry(what).or_default();
        entry.0 += 1;
        entry.1 += ms;
    }
    let mut kinds: Vec<_> = by_kind.into_iter().collect();
    kinds.sort_by(|a, b| b.1.1.total_cmp(&a.1.1));
    for (what, (n, ms)) in kinds.iter().take(8) {
        support::notice(&format!("server time: {ms:.0} ms in {n} x {what}"));
    }

    // The counterpart: the same rows, dumped, then copied into the same schema, empty.
    let mut client = cluster.client(&db);
    let mut dump = Vec::new();
    std::io::Read::read_to_end(
        &mut client
            .copy_out("COPY entries TO STDOUT (FORMAT binary)")
            .unwrap(),
        &mut dump,
    )
    .unwrap();
    let bare = cluster.database("bench_copy");
    // The schema, made by a sync of an empty store.
    Store::new().ok(&["sync", "--to", &cluster.url(&bare), "--machine", "empty"]);
    let mut target = cluster.client(&bare);
    target
        .batch_execute(
            "INSERT INTO sessions (id, session_id, project, cwd, path)
             SELECT g, 'bench-' || g, 'p', '/', '/' FROM generate_series(1, 100000) g
             ON CONFLICT DO NOTHING",
        )
        .unwrap();
    let started = Instant::now();
    let mut tx = target.transaction().unwrap();
    let mut sink = tx
        .copy_in("COPY entries FROM STDIN (FORMAT binary)")
        .unwrap();
    sink.write_all(&dump).unwrap();
    sink.finish().unwrap();
    tx.commit().unwrap();
    let copy_time = started.elapsed();
    support::notice(&format!(
        "bench: sync of {rows} entries ({} MB of session files): {:.2?} ({:.2?} of it the sync's own CPU), peak RSS {} MB; \
         bare binary COPY of the same rows into the same schema and indexes: {:.2?}; ratio {:.2}",
        bytes / 1_000_000,
        sync_time,
        cpu,
        peak_kb / 1024,
        copy_time,
        sync_time.as_secs_f64() / copy_time.as_secs_f64()
    ));
}

fn walk_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walk_bytes(&e.path())
            } else {
                e.metadata().unwrap().len()
            }
        })
        .sum()
}

/// Waits for `child`; its success, its peak resident memory (KiB) and CPU time (user +
/// system), from wait4's rusage.
fn wait_with_peak_memory(child: Child) -> (bool, i64, Duration) {
    let mut status = 0;
    // SAFETY: rusage is plain data, written by wait4 for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    (
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        usage.ru_maxrss,
        time(usage.ru_utime) + time(usage.ru_stime),
    )
}

/// The shared cluster, started on first use and shut down when the run ends.
fn cluster() -> &'static Cluster {
    static CLUSTER: OnceLock<Cluster> = OnceLock::new();
    static START: Mutex<()> = Mutex::new(());
    // One start at a time: a failed start (no PostgreSQL installed) fails each test that asks,
    // with its reason, rather than poisoning the lock.
    let _starting = START.lock().unwrap_or_else(|e| e.into_inner());
    CLUSTER.get_or_init(|| {
        let cluster = Cluster::start();
        crate::harness::on_exit(|| {
            if let Some(cluster) = CLUSTER.get() {
                cluster.shutdown();
            }
        });
        cluster
    })
}

/// One trial per test, and the measurement (ignored unless asked for with `--ignored`).
pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
    type Test = fn(&Cluster);
    let tests: &[(&str, Test)] = &[
        (
            "sync_is_exactly_once_and_resumable",
            sync_is_exactly_once_and_resumable,
        ),
        (
            "search_and_stats_match_sqlite",
            search_and_stats_match_sqlite,
        ),
        ("two_machines_at_once", two_machines_at_once),
        (
            "errors_are_one_line_and_write_nothing",
            errors_are_one_line_and_write_nothing,
        ),
        ("password_sources_and_logs", password_sources_and_logs),
        ("tls_verify_full", tls_verify_full),
        ("a_reading_role_queries", a_reading_role_queries),
        (
            "killed_sync_leaves_every_entry_once",
            killed_sync_leaves_every_entry_once,
        ),
        ("follow_survives_a_restart", follow_survives_a_restart),
    ];
    let measurements: &[(&str, Test)] = &[("bench_sync_against_copy", bench_sync_against_copy)];
    let trial = |&(name, test): &(&'static str, Test)| {
        crate::harness::test(module_path!(), name, move || test(cluster()))
    };
    tests
        .iter()
        .map(trial)
        .chain(
            measurements
                .iter()
                .map(|m| trial(m).with_ignored_flag(true)),
        )
        .collect()
}
