//! Pages, windows and filters of the large reads, through the built binary over pipes:
//! every page of `session/getTree`, `getBranch` and `buildContextEntries` must be the slice of
//! the whole answer it names; `around` windows are placed as pi's selector scrolls; the
//! `filter` modes show exactly the rows pi 0.82.1's own `/tree` selector shows (its
//! `TreeSelectorComponent`, run by `tests/oracle/pi-tree-filter.mjs`); entries with lone
//! surrogate escapes reach the client byte for byte as the file holds them.

use crate::support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::pipe::{PipeClient, Wire};

const MODES: [&str; 5] = ["default", "no-tools", "user-only", "labeled-only", "all"];

/// The sessions the tests read: generated ones (branched, labeled, with tool-only assistant
/// turns and settings entries), the real pi files and the edge files.
fn sessions(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(oracle) = support::oracle::oracle("rpc_tree_pages") {
        for (seed, size) in [("3", "80KB"), ("11", "60KB")] {
            let file = dir.join(format!("generated-{seed}.jsonl"));
            support::generate(
                oracle,
                &[
                    "file".as_ref(),
                    "--out".as_ref(),
                    file.as_os_str(),
                    "--size".as_ref(),
                    size.as_ref(),
                    "--seed".as_ref(),
                    seed.as_ref(),
                    "--branch-every".as_ref(),
                    "3".as_ref(),
                    "--label-rate".as_ref(),
                    "0.3".as_ref(),
                    "--custom-rate".as_ref(),
                    "0.2".as_ref(),
                ],
            );
            files.push(file);
        }
    }
    let edge = [
        "duplicate-ids.jsonl",
        "orphans-and-unknown-kinds.jsonl",
        "timestamps-out-of-order.jsonl",
        "null-content.jsonl",
        "leaf-entry-to-null.jsonl",
    ]
    .map(|name| support::root().join("tests/files").join(name));
    // Copies: opening takes the file's write lock, and the tests run beside each other.
    for (i, source) in support::real_fixtures().into_iter().chain(edge).enumerate() {
        let copy = dir.join(format!(
            "{i}-{}",
            source.file_name().unwrap().to_string_lossy()
        ));
        std::fs::copy(&source, &copy).unwrap();
        files.push(copy);
    }
    files
}

/// The sessions whose opening changes nothing: pi's migration of a v1/v2 file makes random
/// ids (and rewrites it), so only files with ids compare by id or from one process to the next.
fn current_sessions(dir: &Path) -> Vec<PathBuf> {
    sessions(dir)
        .into_iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            let first = text.lines().next().unwrap_or_default();
            first.contains("\"version\":3") || !first.contains("\"type\":\"session\"")
        })
        .collect()
}

fn open(client: &mut PipeClient, file: &Path) -> String {
    let opened = client.call(
        "session/open",
        json!({"path": file, "profile": "pi-cli", "cwd": "/tmp"}),
    );
    opened["sessionId"].as_str().unwrap().to_owned()
}

fn client() -> PipeClient {
    let mut client = PipeClient::spawn(Wire::Ndjson);
    client.call("initialize", json!({}));
    client
}

/// A small seeded generator (the seed is printed), so failures repeat.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

fn seed() -> u64 {
    let seed = std::env::var("PI_SESSION_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    println!("seed {seed} (PI_SESSION_SEED repeats it)");
    seed
}

fn pages_are_slices_of_the_whole_answer() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed());
    let mut client = client();
    let mut pages = 0;
    for file in sessions(dir.path()) {
        let sid = open(&mut client, &file);
        for filter in [None, Some("default")] {
            let mut params = json!({"sessionId": sid});
            if let Some(filter) = filter {
                params["filter"] = json!(filter);
            }
            let whole = client.call("session/getTree", params.clone());
            let rows = whole["rows"].as_array().unwrap().clone();
            assert_eq!(whole["total"], rows.len(), "{}", file.display());
            assert_eq!(whole["offset"], 0);
            for _ in 0..5 {
                let offset = rng.below(rows.len() + 2);
                let limit = rng.below(rows.len() + 2);
                let mut page_params = params.clone();
                page_params["offset"] = json!(offset);
                page_params["limit"] = json!(limit);
                let page = client.call("session/getTree", page_params);
                let start = offset.min(rows.len());
                let end = (start + limit).min(rows.len());
                assert_eq!(
                    page["rows"],
                    json!(rows[start..end]),
                    "{} {filter:?} {offset}+{limit}",
                    file.display()
                );
                assert_eq!(page["total"], rows.len());
                assert_eq!(page["offset"], start);
                assert_eq!(page["leafId"], whole["leafId"]);
                pages += 1;
            }
        }
        for method in ["session/getBranch", "session/buildContextEntries"] {
            let whole = client.call(method, json!({"sessionId": sid}));
            let entries = whole["entries"].as_array().unwrap().clone();
            assert!(whole.get("total").is_none(), "a whole answer is as before");
            for _ in 0..6 {
                let offset = rng.below(entries.len() + 2);
                let limit = rng.below(entries.len() + 2);
                let page = client.call(
                    method,
                    json!({"sessionId": sid, "offset": offset, "limit": limit}),
                );
                let start = offset.min(entries.len());
                let end = (start + limit).min(entries.len());
                assert_eq!(
                    page["entries"],
                    json!(entries[start..end]),
                    "{method} {offset}+{limit}"
                );
                assert_eq!(page["total"], entries.len());
                assert_eq!(page["offset"], start);
                pages += 1;
            }
            let tail = client.call(method, json!({"sessionId": sid, "offset": 1}));
            assert_eq!(tail["entries"], json!(entries[1.min(entries.len())..]));
        }
        // getEntries pages put together are every entry, each as getEntry gives it.
        let mut offset = Some(0);
        let mut all = Vec::new();
        while let Some(at) = offset {
            let page = client.call(
                "session/getEntries",
                json!({"sessionId": sid, "offset": at, "limit": 7}),
            );
            all.extend(page["entries"].as_array().unwrap().iter().cloned());
            offset = page["nextOffset"].as_u64().map(|n| n as usize);
        }
        for entry in all.iter().filter(|e| e["id"].is_string()).take(20) {
            let one = client.call(
                "session/getEntry",
                json!({"sessionId": sid, "entryId": entry["id"]}),
            );
            if one["id"] == entry["id"] && one == *entry {
                continue;
            }
            // Entries sharing an id: getEntry names the last of them.
            assert!(all.contains(&one), "{one}");
        }
        client.call("session/close", json!({"sessionId": sid}));
    }
    println!("{pages} pages compared with slices of their whole answers");
    client.call("shutdown", Value::Null);
    assert_eq!(client.exit(), Some(0));
}

/// pi's selector: the cursor row in the middle of `limit` rows, clamped to the ends.
fn pi_window(total: usize, anchor: usize, limit: usize) -> (usize, usize) {
    let limit = limit.min(total);
    let start = (anchor as i64 - (limit / 2) as i64)
        .min(total as i64 - limit as i64)
        .max(0) as usize;
    (start, start + limit)
}

fn windows_around_an_entry_are_placed_as_pi_scrolls() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(seed());
    let mut client = client();
    let mut windows = 0;
    for file in sessions(dir.path()) {
        let sid = open(&mut client, &file);
        let every = client.call("session/getTree", json!({"sessionId": sid}));
        let ids: Vec<Value> = every["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].clone())
            .collect();
        for filter in ["default", "user-only", "labeled-only"] {
            let whole = client.call(
                "session/getTree",
                json!({"sessionId": sid, "filter": filter}),
            );
            let rows = whole["rows"].as_array().unwrap().clone();
            for _ in 0..4 {
                let Some(id) = ids.get(rng.below(ids.len())).filter(|id| id.is_string()) else {
                    continue;
                };
                let limit = 1 + rng.below(12);
                let window = client.call(
                    "session/getTree",
                    json!({"sessionId": sid, "filter": filter, "around": id, "limit": limit}),
                );
                if rows.is_empty() {
                    assert_eq!(window["anchor"], Value::Null);
                    assert_eq!(window["rows"], json!([]));
                    continue;
                }
                let anchor = window["anchor"].as_u64().expect("an anchor row") as usize;
                // The anchor is the entry itself when shown, else a shown ancestor, else the
                // last row (pi's findNearestVisibleIndex).
                let shown = rows.iter().rposition(|r| r["id"] == *id);
                match shown {
                    Some(i) => assert_eq!(anchor, i, "{id} shown in {filter}"),
                    None => assert!(anchor < rows.len()),
                }
                let (start, end) = pi_window(rows.len(), anchor, limit);
                assert_eq!(window["offset"], start);
                assert_eq!(
                    window["rows"],
                    json!(rows[start..end]),
                    "{id} {filter} {limit}"
                );
                windows += 1;
            }
        }
        let unknown = client.call_with(
            "session/getTree",
            json!({"sessionId": sid, "around": "no-such-entry", "limit": 5}),
            &mut |_, _| Value::Null,
        );
        assert_eq!(
            unknown["error"]["data"]["kind"], "entry_not_found",
            "{unknown}"
        );
        let both = client.call_with(
            "session/getTree",
            json!({"sessionId": sid, "around": ids[0], "offset": 1}),
            &mut |_, _| Value::Null,
        );
        assert_eq!(both["error"]["code"], -32602, "{both}");
        client.call("session/close", json!({"sessionId": sid}));
    }
    println!("{windows} windows compared");
    client.call("shutdown", Value::Null);
    assert_eq!(client.exit(), Some(0));
}

fn filters_show_what_pis_tree_selector_shows() {
    let Some(oracle) = support::oracle::oracle("filters_show_what_pis_tree_selector_shows") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let files = current_sessions(dir.path());
    let output = oracle
        .command("pi-tree-filter.mjs")
        .arg(oracle.dir())
        .args(&files)
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let theirs: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let mut client = client();
    let mut compared = 0;
    let mut hidden = HashMap::new();
    for (file, pi) in files.iter().zip(&theirs) {
        let sid = open(&mut client, file);
        let every = client.call("session/getTree", json!({"sessionId": sid}));
        for mode in MODES {
            let ours = client.call("session/getTree", json!({"sessionId": sid, "filter": mode}));
            let mut our_ids: Vec<String> = ours["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].to_string())
                .collect();
            // pi's selector lists the active branch first; the rows shown are what must agree.
            let mut pi_ids: Vec<String> = pi["modes"][mode]
                .as_array()
                .unwrap()
                .iter()
                .map(Value::to_string)
                .collect();
            our_ids.sort();
            pi_ids.sort();
            assert_eq!(our_ids, pi_ids, "{} in mode {mode}", file.display());
            *hidden.entry(mode).or_insert(0) +=
                every["rows"].as_array().unwrap().len() - ours["rows"].as_array().unwrap().len();
            compared += 1;
        }
        client.call("session/close", json!({"sessionId": sid}));
    }
    // Every mode must have hidden something somewhere, or the comparison proves little.
    for mode in MODES {
        assert!(hidden[mode] > 0, "mode {mode} hid nothing in any session");
    }
    support::comparisons::count("filters_show_what_pis_tree_selector_shows", compared);
    client.call("shutdown", Value::Null);
    assert_eq!(client.exit(), Some(0));
}

/// Every tree answer (whole, pages, windows, in every filter mode) without the persisted
/// index, with a fresh one (the previews are computed, then filed beside it) and with a
/// current one (the second process reads the filed previews and computes none): the same.
fn tree_answers_are_the_same_with_and_without_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let files = current_sessions(dir.path());
    let index = dir.path().join("index");
    let log = dir.path().join("log");
    let answers = |indexed: bool| -> Vec<Value> {
        let mut client = PipeClient::spawn_with(Wire::Ndjson, |command| {
            match indexed {
                true => command
                    .env("PI_SESSION_INDEX_DIR", &index)
                    .env("PI_SESSION_LOG", "pi_session::store=debug"),
                false => command.env("PI_SESSION_NO_INDEX", "1"),
            };
            command.stderr(std::fs::File::create(&log).unwrap());
        });
        client.call("initialize", json!({}));
        let mut out = Vec::new();
        for file in &files {
            let sid = open(&mut client, file);
            // A page first: before anything computed the previews, its rows are read alone.
            let page = json!({"sessionId": sid, "offset": 1, "limit": 3});
            out.push(client.call("session/getTree", page));
            let every = client.call("session/getTree", json!({"sessionId": sid}));
            let rows = every["rows"].as_array().unwrap();
            let ids: Vec<Value> = [0, rows.len() / 2, rows.len().saturating_sub(1)]
                .iter()
                .filter_map(|&i| rows.get(i).map(|r| r["id"].clone()))
                .filter(Value::is_string)
                .collect();
            out.push(every.clone());
            for filter in MODES.map(Some).into_iter().chain([None]) {
                let mut params = json!({"sessionId": sid});
                if let Some(filter) = filter {
                    params["filter"] = json!(filter);
                }
                out.push(client.call("session/getTree", params.clone()));
                let mut page = params.clone();
                page["offset"] = json!(1);
                page["limit"] = json!(3);
                out.push(client.call("session/getTree", page));
                for id in &ids {
                    let mut window = params.clone();
                    window["around"] = id.clone();
                    window["limit"] = json!(5);
                    out.push(client.call("session/getTree", window));
                }
            }
            client.call("session/close", json!({"sessionId": sid}));
        }
        client.call("shutdown", Value::Null);
        assert_eq!(client.exit(), Some(0));
        out
    };
    let log_lines = |what: &str| -> usize {
        let text = std::fs::read_to_string(&log).unwrap();
        text.lines().filter(|l| l.contains(what)).count()
    };
    const READ: &str = "read from beside the index";
    const COMPUTED: &str = "computed after";
    let without = answers(false);
    assert!(without.len() > 100, "{} answers", without.len());
    assert_eq!(answers(true), without, "a fresh index");
    assert_eq!(log_lines(READ), 0);
    assert!(log_lines(COMPUTED) >= files.len() / 2, "previews computed");
    assert_eq!(answers(true), without, "a current index");
    assert!(log_lines(READ) >= files.len() / 2, "previews read back");
    assert_eq!(
        log_lines(COMPUTED),
        0,
        "a current index computes no preview: {}",
        std::fs::read_to_string(&log).unwrap()
    );
}

fn entries_with_lone_surrogates_reach_the_client_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("surrogates.jsonl");
    let header = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}"#;
    let user = r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"half \ud83d of a pair, \udc00 and a whole \ud83d\ude00","timestamp":1}}"#;
    let label = r#"{"type":"label","id":"l1","parentId":"u1","timestamp":"2025-01-01T00:00:02.000Z","targetId":"u1","label":"mark \udfff"}"#;
    std::fs::write(&file, format!("{header}\n{user}\n{label}\n")).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .arg("--stdio")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = std::io::BufReader::new(child.stdout.take().unwrap());
    // Messages are written as text: a serde_json value cannot hold a lone surrogate.
    let mut exchange_text = |message: &str| -> String {
        use std::io::{BufRead, Write};
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        line
    };
    exchange_text(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).to_string(),
    );
    let opened = exchange_text(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "session/open", "params": {"path": file}})
            .to_string(),
    );
    assert!(opened.contains(r#""sessionId":"s1""#), "{opened}");
    // JSON.stringify writes the whole pair as the character it is, the halves as escapes.
    let user_text = r#""content":"half \ud83d of a pair, \udc00 and a whole 😀""#;
    for (method, params) in [
        (
            "session/getEntry",
            json!({"sessionId": "s1", "entryId": "u1"}),
        ),
        ("session/getEntries", json!({"sessionId": "s1"})),
        (
            "session/getBranch",
            json!({"sessionId": "s1", "entryId": "u1"}),
        ),
        ("session/buildContextEntries", json!({"sessionId": "s1"})),
        ("session/buildContext", json!({"sessionId": "s1"})),
    ] {
        let answer = exchange_text(
            &json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params}).to_string(),
        );
        assert!(answer.contains(user_text), "{method}: {answer}");
        assert!(!answer.contains('\u{fffd}'), "{method}: {answer}");
    }
    let tree = exchange_text(&json!({"jsonrpc": "2.0", "id": 4, "method": "session/getTree", "params": {"sessionId": "s1"}}).to_string());
    assert!(tree.contains(r#""label":"mark \udfff""#), "{tree}");
    // A client echoes an entry back, lone surrogates and all: it is written and read back
    // exactly (and the character the server stands them in with comes through as it was).
    let echoed = r#"{"jsonrpc":"2.0","id":5,"method":"session/append","params":{"sessionId":"s1","entry":{"type":"custom","customType":"echo","data":{"text":"half \ud83d of a pair, \udc00","\udfff":"key","mark":"\udbff\udffe\udbff\udffe"}}}}"#;
    let appended = exchange_text(echoed);
    assert!(appended.contains(r#""entryId""#), "{appended}");
    let id = appended
        .split(r#""entryId":""#)
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let data = r#""data":{"text":"half \ud83d of a pair, \udc00","\udfff":"key","mark":"#;
    let entry = exchange_text(&json!({"jsonrpc": "2.0", "id": 6, "method": "session/getEntry", "params": {"sessionId": "s1", "entryId": id}}).to_string());
    assert!(entry.contains(data), "{entry}");
    assert!(
        entry.contains("\"mark\":\"\u{10FFFE}\u{10FFFE}\""),
        "{entry}"
    );
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.lines().last().unwrap().contains(data), "{written}");
    exchange_text(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "shutdown", "params": null}).to_string(),
    );
    // The exit notification has no answer: the read ends with the output.
    exchange_text(&json!({"jsonrpc": "2.0", "method": "exit"}).to_string());
    assert!(child.wait().unwrap().success());
}

crate::tests! {
    pages_are_slices_of_the_whole_answer,
    windows_around_an_entry_are_placed_as_pi_scrolls,
    filters_show_what_pis_tree_selector_shows,
    tree_answers_are_the_same_with_and_without_the_index,
    entries_with_lone_surrogates_reach_the_client_exactly,
}
