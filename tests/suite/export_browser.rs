//! The HTML export in a real browser (headless chromium through puppeteer-core), on files pi
//! wrote, generated sessions with many branches and hostile text: every entry on the selected
//! path shown with its text, one tree row per entry (the tree is virtual: read screen by
//! screen, and the DOM never holds more than the rows on screen), clicking a node on another
//! branch shows that branch, `#leaf=` opens there, search finds text, every entry of a
//! generated session reached by `#leaf=` and by search, nothing in the session runs, the
//! Content-Security-Policy blocks nothing (the page never tries), and no request leaves the
//! page. And the JSONL export opened by pi's own SessionManager gives pi's context of that
//! branch.
//!
//! The generated session is 2 MB; `PI_SESSION_EXPORT_BROWSER_SIZE` (`100MB`, `1GB`, ...) and
//! `PI_SESSION_EXPORT_BROWSER_SEED` pick another, and `PI_SESSION_EXPORT_BROWSER_SAMPLE=N`
//! checks every N-th entry's reach instead of all (for the largest sizes).

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Command;

use pi_session::json::JsValue;
use pi_session::session::{Leaf, Session, SessionOptions};
use serde_json::{Value, json};
use support::browser::browser;
use support::{oracle, path_str, real_fixtures};

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

fn pi_session(args: &[&str]) -> String {
    let output = Command::new(BIN)
        .args(args)
        .env("PI_SESSION_NO_INDEX", "1")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "pi-session {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `pi-session export FILE --format FORMAT -o OUT [--leaf ID]`; returns OUT.
fn export(file: &Path, format: &str, out: &Path, leaf: Option<&str>) -> PathBuf {
    let mut args = vec![
        "export",
        path_str(file),
        "--format",
        format,
        "-o",
        path_str(out),
    ];
    if let Some(leaf) = leaf {
        args.extend(["--leaf", leaf]);
    }
    let printed = pi_session(&args);
    assert_eq!(printed.trim_end(), path_str(out));
    out.to_path_buf()
}

fn open(file: &Path) -> Session {
    Session::open_read_only(file, SessionOptions::default()).unwrap()
}

fn id_of(session: &Session, position: u32) -> String {
    session.record(position).id().unwrap().to_string()
}

fn path_ids(session: &Session, leaf: &Leaf) -> Vec<String> {
    let walk = session.leaf_path(leaf);
    walk.positions.iter().map(|&p| id_of(session, p)).collect()
}

/// A phrase from an entry's own text that its rendering keeps: the first run of up to three
/// plain words (letters and digits only) on one line of its first text; "" when it has none.
fn phrase(entry: &JsValue) -> String {
    for text in texts(entry) {
        for line in text.lines() {
            let mut run: Vec<&str> = Vec::new();
            for word in line.split_whitespace() {
                if word.chars().all(char::is_alphanumeric) && word.chars().count() >= 2 {
                    run.push(word);
                    if run.len() == 3 {
                        return run.join(" ");
                    }
                } else if !run.is_empty() {
                    break;
                }
            }
            if let Some(best) = run.first() {
                return run.join(" ").max(best.to_string());
            }
        }
    }
    String::new()
}

/// The texts a reader sees of an entry, in the order the page shows them.
fn texts(entry: &JsValue) -> Vec<String> {
    let s = |v: Option<&JsValue>| v.and_then(JsValue::as_str).map(|t| t.into_owned());
    let mut out = Vec::new();
    let message = entry.get("message");
    let content = message.map_or(entry.get("content"), |m| m.get("content"));
    match content {
        Some(JsValue::String(text)) => out.push(text.to_string_lossy().into_owned()),
        Some(JsValue::Array(blocks)) => {
            for block in blocks {
                out.extend(s(block.get("text")));
                out.extend(s(block.get("thinking")));
                out.extend(s(block.get("name")));
            }
        }
        _ => {}
    }
    for key in ["command", "output", "summary", "errorMessage"] {
        out.extend(s(message.and_then(|m| m.get(key))));
    }
    for key in [
        "summary",
        "name",
        "label",
        "thinkingLevel",
        "modelId",
        "customType",
    ] {
        out.extend(s(entry.get(key)));
    }
    out.retain(|t| !t.trim().is_empty());
    out
}

/// The expected text of every entry on `path`.
fn expected_texts(session: &Session, leaf: &Leaf) -> Value {
    let walk = session.leaf_path(leaf);
    let mut texts = serde_json::Map::new();
    for &position in &walk.positions {
        let entry = session.entry_value(position).unwrap();
        texts.insert(id_of(session, position), json!(phrase(&entry)));
    }
    Value::Object(texts)
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// What every export must give: nothing ran, nothing was fetched, no script error.
fn assert_inert(report: &Value, what: &str) {
    assert_eq!(report["pwned"], Value::Null, "{what}: session text ran");
    assert_eq!(report["dialogs"], json!([]), "{what}: a dialog opened");
    assert_eq!(
        report["external"],
        json!([]),
        "{what}: requests left the page"
    );
    assert_eq!(report["errors"], json!([]), "{what}: script errors");
    assert_eq!(
        report["cspViolations"],
        json!([]),
        "{what}: the page tried what its Content-Security-Policy forbids"
    );
}

/// The viewer's rows beyond the screen (its `OVERSCAN`, each side, plus one part-shown row).
const OVERSCAN_ROWS: u64 = 2 * 4 + 1;

/// The whole tree (one node per entry), the leaf's path with every entry's text, the active
/// path marked.
fn assert_shows_session(session: &Session, report: &Value, what: &str) {
    let mut tree = strings(&report["treeIds"]);
    let mut all: Vec<String> = (0..session.len() as u32)
        .map(|p| id_of(session, p))
        .collect();
    tree.sort();
    all.sort();
    assert_eq!(tree, all, "{what}: one tree row per entry");
    assert_eq!(report["treeRows"], json!(session.len()), "{what}: rows");
    let said = format!("{} rows in the tree", group_thousands(session.len()));
    assert_eq!(
        report["treeHead"],
        json!(said),
        "{what}: the page says how many"
    );
    // Only the rows on screen are in the DOM, at the opening and while scrolling.
    let screen = report["treeScreenRows"].as_u64().unwrap();
    for key in ["treeNodesAtOpen", "treeMostNodes"] {
        let nodes = report[key].as_u64().unwrap();
        assert!(
            nodes <= screen + OVERSCAN_ROWS,
            "{what}: {key} {nodes} tree nodes in the DOM for {screen} rows on screen"
        );
    }
    let active = path_ids(session, session.leaf());
    assert_eq!(
        strings(&report["pathIds"]),
        active,
        "{what}: the leaf's path"
    );
    let mut marked = strings(&report["activeIds"]);
    let mut expected = active.clone();
    marked.sort();
    expected.sort();
    assert_eq!(marked, expected, "{what}: the active path marked");
    assert_eq!(
        report["missingText"],
        json!([]),
        "{what}: entries without their text"
    );
    assert_eq!(
        report["invisible"],
        json!([]),
        "{what}: entries not visible"
    );
}

fn html_exports_of_real_sessions_show_every_entry_of_the_path() {
    let browser = browser();
    let dir = tempfile::tempdir().unwrap();
    let files = real_fixtures();
    assert!(!files.is_empty());
    for file in files {
        let session = open(&file);
        let html = export(&file, "html", &dir.path().join("real.html"), None);
        // `#leaf=` at the third entry: a path shorter than a screen.
        let early = id_of(&session, session.leaf_path(session.leaf()).positions[2]);
        let spec = json!({"texts": expected_texts(&session, session.leaf()), "hash": early});
        let report = browser.check(&html, &spec);
        let what = file.display().to_string();
        assert_shows_session(&session, &report, &what);
        assert_inert(&report, &what);
        assert_eq!(
            strings(&report["hashPathIds"]),
            path_ids(&session, &Leaf::Id(early.as_str().into())),
            "{what}: #leaf={early}"
        );
        assert_eq!(report["hashTarget"], json!(early));
        println!(
            "{what}: {} tree nodes, {} entries on the path, texts checked",
            report["treeIds"].as_array().unwrap().len(),
            report["pathIds"].as_array().unwrap().len()
        );
    }
}

fn group_thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A generated session with many branches (1 MB), in `dir`.
fn generated(dir: &Path, name: &str) -> PathBuf {
    generated_of(dir, name, "1MB", "7")
}

/// A generated session of `size` from `seed`, with many branches and small images.
fn generated_of(dir: &Path, name: &str, size: &str, seed: &str) -> PathBuf {
    let oracle = oracle("export_browser").expect("the generator runs on the oracle's Node");
    let file = dir.join(name);
    let args: Vec<&std::ffi::OsStr> = [
        "file",
        "--out",
        path_str(&file),
        "--size",
        size,
        "--seed",
        seed,
        "--branch-every",
        "4",
        "--image-rate",
        "0.05",
        "--image-kb",
        "2",
    ]
    .into_iter()
    .map(std::ffi::OsStr::new)
    .collect();
    support::generate(oracle, &args);
    file
}

/// Entries off the active path, latest first.
fn off_path(session: &Session) -> Vec<u32> {
    let on = session.leaf_path(session.leaf()).positions;
    (0..session.len() as u32)
        .rev()
        .filter(|p| !on.contains(p))
        .collect()
}

fn html_export_of_a_branching_session_follows_clicks_links_and_search() {
    let browser = browser();
    let dir = tempfile::tempdir().unwrap();
    let file = generated(dir.path(), "branches.jsonl");
    let session = open(&file);
    let off = off_path(&session);
    assert!(
        off.len() > 10,
        "the generated session has abandoned branches"
    );
    let clicked = id_of(&session, off[0]);
    let linked = id_of(&session, off[off.len() / 2]);
    // A phrase of an entry on an abandoned branch, found by the search.
    let (searched, phrase_text) = off
        .iter()
        .find_map(|&p| {
            let text = phrase(&session.entry_value(p).unwrap());
            (text.split(' ').count() == 3).then(|| (id_of(&session, p), text))
        })
        .expect("an abandoned entry with a phrase");
    let html = export(&file, "html", &dir.path().join("branches.html"), None);
    let spec = json!({
        "texts": expected_texts(&session, session.leaf()),
        "click": clicked,
        "hash": linked,
        "search": phrase_text,
    });
    let report = browser.check(&html, &spec);
    assert_shows_session(&session, &report, "generated");
    assert_inert(&report, "generated");
    let clicked_path = path_ids(&session, &Leaf::Id(clicked.as_str().into()));
    assert_eq!(
        strings(&report["clickedPathIds"]),
        clicked_path,
        "the clicked branch"
    );
    assert_eq!(report["clickedSelected"], json!(clicked));
    assert_eq!(report["clickedHash"], json!(format!("#leaf={clicked}")));
    assert_eq!(
        strings(&report["hashPathIds"]),
        path_ids(&session, &Leaf::Id(linked.as_str().into())),
        "#leaf= opens at that entry's path"
    );
    assert_eq!(report["hashTarget"], json!(linked));
    let hits = strings(&report["searchIds"]);
    assert!(
        hits.contains(&searched),
        "searching {phrase_text:?} finds {searched}: {hits:?} ({})",
        report["searchStatus"]
    );

    // --leaf: the page opens on that branch, with every entry's text.
    let leaf = Leaf::Id(clicked.as_str().into());
    let html = export(&file, "html", &dir.path().join("at.html"), Some(&clicked));
    let report = browser.check(&html, &json!({"texts": expected_texts(&session, &leaf)}));
    assert_eq!(strings(&report["pathIds"]), clicked_path, "--leaf");
    assert_eq!(report["missingText"], json!([]));
    assert_inert(&report, "--leaf");
}

/// Lines of a session whose text tries every way into the page.
fn hostile_session(dir: &Path) -> PathBuf {
    let attacks = [
        "<script>window.__pwned = 'script'; alert('script')</script>",
        "<img src=x onerror=\"window.__pwned = 'img'; alert('img')\">",
        "Markdown with raw html: <b onmouseover=\"window.__pwned='b'\">bold</b> <iframe src=\"https://example.com/\"></iframe>",
        "[a link](javascript:window.__pwned='link') and ![remote](https://example.com/track.png)",
        "</script><script>window.__pwned = 'close'</script><!--",
        "```html\n<script>window.__pwned = 'code'</script>\n```",
        "<svg onload=\"window.__pwned='svg'\"></svg><style>body{background:url(https://example.com/x)}</style>",
    ];
    let mut lines = vec![json!({
        "type": "session", "version": 3, "id": "0b7e8f7e-0000-4000-8000-000000000001",
        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp/<script>window.__pwned='cwd'</script>"
    })];
    let mut parent = Value::Null;
    let mut push = |lines: &mut Vec<Value>, id: &str, body: Value| {
        let mut entry =
            json!({"id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z"});
        entry
            .as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        lines.push(entry);
        parent = json!(id);
    };
    for (i, attack) in attacks.iter().enumerate() {
        push(
            &mut lines,
            &format!("u{i}"),
            json!({"type": "message", "message":
            {"role": "user", "content": attack, "timestamp": 1}}),
        );
        push(
            &mut lines,
            &format!("a{i}"),
            json!({"type": "message", "message": {
            "role": "assistant", "provider": "p", "model": "<img src=x onerror=alert(1)>", "stopReason": "toolUse",
            "timestamp": 2, "content": [
                {"type": "thinking", "thinking": attack},
                {"type": "text", "text": attack},
                {"type": "toolCall", "id": format!("c{i}"), "name": attack, "arguments": {"command": attack}}]}}),
        );
        push(
            &mut lines,
            &format!("t{i}"),
            json!({"type": "message", "message": {
            "role": "toolResult", "toolCallId": format!("c{i}"), "toolName": attack, "isError": i % 2 == 0,
            "timestamp": 3, "content": [{"type": "text", "text": attack},
                {"type": "image", "mimeType": "image/png\" onerror=\"window.__pwned='mime'", "data": "AAAA"}]}}),
        );
    }
    push(
        &mut lines,
        "b0",
        json!({"type": "message", "message": {"role": "bashExecution",
        "command": attacks[0], "output": attacks[1], "exitCode": 0, "timestamp": 4}}),
    );
    push(
        &mut lines,
        "m0",
        json!({"type": "custom_message", "customType": attacks[1],
        "content": attacks[0], "display": true}),
    );
    push(
        &mut lines,
        "c0",
        json!({"type": "compaction", "summary": attacks[4],
        "firstKeptEntryId": "u0", "tokensBefore": 10}),
    );
    push(
        &mut lines,
        "s0",
        json!({"type": "session_info", "name": attacks[0]}),
    );
    push(
        &mut lines,
        "l0",
        json!({"type": "label", "targetId": "u0", "label": attacks[1]}),
    );
    let file = dir.join("hostile.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    file
}

fn html_export_keeps_hostile_session_text_inert_and_shows_it_as_text() {
    let browser = browser();
    let dir = tempfile::tempdir().unwrap();
    let file = hostile_session(dir.path());
    let session = open(&file);
    let html = export(&file, "html", &dir.path().join("hostile.html"), None);
    let page = std::fs::read_to_string(&html).unwrap();
    // One script element per inline script, and the packed elements (base64: no `<`), so
    // nothing the session said can open or close an element.
    let packed = packed_texts(&page);
    assert_eq!(
        page.matches("</script>").count(),
        3 + packed.len(),
        "script elements in the page"
    );
    assert!(packed.len() >= 3, "skeleton, first chunk, a chunk");
    for text in &packed {
        assert!(
            text.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b))
        );
    }
    assert_csp(&page);
    let spec = json!({"texts": expected_texts(&session, session.leaf()), "bodyText": true});
    let report = browser.check(&html, &spec);
    assert_shows_session(&session, &report, "hostile");
    assert_inert(&report, "hostile");
    let body = report["bodyText"].as_str().unwrap();
    for shown in [
        "<script>window.__pwned = 'script'; alert('script')</script>",
        "<img src=x onerror=\"window.__pwned = 'img'; alert('img')\">",
        "<b onmouseover=\"window.__pwned='b'\">",
    ] {
        assert!(body.contains(shown), "{shown:?} shown as text");
    }
    assert!(
        report["title"].as_str().unwrap().contains("<script>"),
        "the session name as text: {}",
        report["title"]
    );
}

/// The text of every packed element (`<script type="application/octet-stream" …>`).
fn packed_texts(page: &str) -> Vec<&str> {
    let open = "<script type=\"application/octet-stream\"";
    page.match_indices(open)
        .map(|(at, _)| {
            let start = at + page[at..].find('>').unwrap() + 1;
            let end = start + page[start..].find("</script>").unwrap();
            &page[start..end]
        })
        .collect()
}

/// The page's policy: nothing by default, scripts only by their hashes, one per inline script.
fn assert_csp(page: &str) {
    let at = page
        .find("http-equiv=\"Content-Security-Policy\" content=\"")
        .unwrap();
    let rest = &page[at..];
    let start = rest.find("content=\"").unwrap() + "content=\"".len();
    let csp = &rest[start..start + rest[start..].find('"').unwrap()];
    assert!(csp.starts_with("default-src 'none';"), "{csp}");
    let scripts = csp
        .split(';')
        .find_map(|d| d.trim().strip_prefix("script-src "))
        .unwrap();
    let sources: Vec<&str> = scripts.split_whitespace().collect();
    assert_eq!(sources.len(), 3, "{csp}");
    assert!(sources.iter().all(|s| s.starts_with("'sha256-")), "{csp}");
    assert!(
        !csp.contains("unsafe-eval") && !csp.contains("connect-src"),
        "{csp}"
    );
}

/// The gzip -9 size of a file, as `gzip -9` makes it.
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

fn html_export_of_a_generated_session_reaches_every_entry_by_link_and_search() {
    let browser = browser();
    let size = std::env::var("PI_SESSION_EXPORT_BROWSER_SIZE").unwrap_or_else(|_| "2MB".into());
    let seed = std::env::var("PI_SESSION_EXPORT_BROWSER_SEED").unwrap_or_else(|_| "29".into());
    let every: usize = std::env::var("PI_SESSION_EXPORT_BROWSER_SAMPLE")
        .map(|n| {
            n.parse()
                .expect("PI_SESSION_EXPORT_BROWSER_SAMPLE: a number")
        })
        .unwrap_or(1);
    let dir = tempfile::tempdir().unwrap();
    let file = generated_of(dir.path(), "reach.jsonl", &size, &seed);
    let session = open(&file);
    let html = export(&file, "html", &dir.path().join("reach.html"), None);
    let page = std::fs::read_to_string(&html).unwrap();
    assert_csp(&page);
    // The packed session costs at most 1.4 times the file's own gzip -9.
    let packed: usize = packed_texts(&page).iter().map(|t| t.len()).sum();
    let gzip = gzip9_len(&file);
    assert!(
        packed as f64 <= 1.4 * gzip as f64,
        "packed {packed} bytes for a gzip -9 of {gzip}"
    );
    drop(page);
    let checked: Vec<u32> = (0..session.len() as u32).step_by(every).collect();
    let reach: Vec<String> = checked.iter().map(|&p| id_of(&session, p)).collect();
    // Each entry searched by the longest word of its text.
    let mut searched = serde_json::Map::new();
    for &position in &checked {
        let text = phrase(&session.entry_value(position).unwrap());
        if let Some(word) = text.split(' ').max_by_key(|w| w.chars().count())
            && !word.is_empty()
        {
            searched.insert(id_of(&session, position), json!(word));
        }
    }
    assert!(searched.len() * 2 > checked.len(), "most entries have text");
    let spec = json!({
        "texts": expected_texts(&session, session.leaf()),
        "reach": reach,
        "reachSearch": searched,
    });
    let report = browser.check(&html, &spec);
    let what = format!("generated {size}");
    assert_shows_session(&session, &report, &what);
    assert_inert(&report, &what);
    assert_eq!(
        report["unreached"],
        json!([]),
        "{what}: #leaf= reaches them"
    );
    assert_eq!(report["unfound"], json!([]), "{what}: search finds them");
    println!(
        "{what}: {} entries, {} reached by #leaf=, {} by search; packed {packed} bytes, gzip -9 {gzip}",
        session.len(),
        reach.len(),
        searched.len()
    );
}

fn jsonl_export_opens_in_pi_to_the_context_of_its_branch() {
    let Some(oracle) = oracle("jsonl_export_opens_in_pi_to_the_context_of_its_branch") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = generated(dir.path(), "source.jsonl");
    let session = open(&file);
    let off = off_path(&session);
    let leaf_id = id_of(
        &session,
        *session.leaf_path(session.leaf()).positions.last().unwrap(),
    );
    let mut leaves = vec![
        leaf_id,
        id_of(&session, off[0]),
        id_of(&session, off[off.len() / 2]),
    ];
    for fixture in real_fixtures() {
        let real = open(&fixture);
        let at = real.leaf_path(real.leaf()).positions;
        leaves.push(format!(
            "{}\t{}",
            fixture.display(),
            id_of(&real, at[at.len() / 2])
        ));
    }
    let mut compared = 0;
    for (i, leaf) in leaves.iter().enumerate() {
        let (source, leaf) = match leaf.split_once('\t') {
            Some((source, leaf)) => (PathBuf::from(source), leaf.to_string()),
            None => (file.clone(), leaf.clone()),
        };
        let out = dir.path().join(format!("branch-{i}.jsonl"));
        export(&source, "jsonl", &out, Some(&leaf));
        let header: Value = serde_json::from_str(
            std::fs::read_to_string(&out)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(header["parentSession"], json!(path_str(&source)));
        assert_ne!(
            header["id"],
            json!(open(&source).header().get("id").unwrap().to_js_string())
        );
        // pi's SessionManager reads the export; its context is ours at that leaf of the source.
        let output = oracle
            .command("pi-oracle.mjs")
            .args(["context", path_str(&out)])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let pi: Value = serde_json::from_slice(&output.stdout).unwrap();
        let ours: Value = serde_json::from_str(&pi_session(&[
            "context",
            path_str(&source),
            "--leaf",
            &leaf,
        ]))
        .unwrap();
        // (The entry ids differ only where pi's createBranchedSession re-creates labels.)
        assert_eq!(
            pi["context"],
            ours["context"],
            "the context at {leaf} of {}",
            source.display()
        );
        compared += 1;
    }
    support::count(
        "jsonl_export_opens_in_pi_to_the_context_of_its_branch",
        compared,
    );
}

crate::tests! {
    html_exports_of_real_sessions_show_every_entry_of_the_path,
    html_export_of_a_branching_session_follows_clicks_links_and_search,
    html_export_keeps_hostile_session_text_inert_and_shows_it_as_text,
    html_export_of_a_generated_session_reaches_every_entry_by_link_and_search,
    jsonl_export_opens_in_pi_to_the_context_of_its_branch,
}
