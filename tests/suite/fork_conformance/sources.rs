//! The sources forked: their entries as read here, the hand-made sessions, the real fixtures (as
//! they are and as pi migrated them), the oracle's replays of `tests/ops/` and generated sessions.

use super::*;

/// A session file forks are made from.
pub(crate) struct Source {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    /// v1: both programs give the entries fresh ids when they open the file, so entries are
    /// named by position, and this program is driven through the library (its command line
    /// cannot name an entry whose id it invents anew on every run).
    pub(crate) v1: bool,
    pub(crate) entries: Vec<SourceEntry>,
}

impl Source {
    /// The leaf this program reports where pi reports `pi_leaf`: the same, except that a
    /// harness `leaf` entry stands for its target (a deliberate difference, item 5 of
    /// protocol.md: pi's CLI takes the `leaf` line itself as the leaf).
    pub(crate) fn folded_leaf(&self, pi_leaf: Option<String>) -> Option<String> {
        let entry = self
            .entries
            .iter()
            .rev()
            .find(|e| e.id.is_some() && e.id == pi_leaf);
        match entry {
            Some(entry) if entry.kind == "leaf" => entry.target.clone(),
            _ => pi_leaf,
        }
    }

    pub(crate) fn new(name: &str, path: PathBuf) -> Source {
        let header = lines(&path).into_iter().find_map(|l| {
            json::parse(&l)
                .ok()
                .filter(|v| str_of(v, "type").as_deref() == Some("session"))
        });
        let version = header.and_then(|h| h.get("version").and_then(JsValue::as_f64));
        Source {
            name: name.into(),
            v1: version.is_none(),
            entries: source_entries(&path),
            path,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reading session files

/// The lines of a file as written (split at `\n`, the final newline dropped).
pub(crate) fn lines(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let text = text.strip_suffix('\n').unwrap_or(&text);
    text.split('\n').map(str::to_string).collect()
}

/// One entry of a source as pi's loader sees it.
#[derive(Debug, Clone)]
pub(crate) struct SourceEntry {
    pub(crate) id: Option<String>,
    pub(crate) parent: Option<String>,
    /// `targetId` (of labels and harness `leaf` entries).
    pub(crate) target: Option<String>,
    /// `type`, or `message/<role>` for messages.
    pub(crate) kind: String,
}

impl SourceEntry {
    pub(crate) fn is_user_message(&self) -> bool {
        self.kind == "message/user"
    }
}

/// The entries of a session file by pi's `loadEntriesFromFile` rules: lines split at `\n`,
/// blank, unparsable and falsy ones skipped, the first value must be a header with a string id.
pub(crate) fn source_entries(path: &Path) -> Vec<SourceEntry> {
    let bytes = std::fs::read(path).unwrap();
    let values: Vec<JsValue> = bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| json::parse_bytes(line).ok())
        .filter(JsValue::is_truthy)
        .collect();
    let is_header = values.first().is_some_and(|h| {
        str_of(h, "type").as_deref() == Some("session")
            && h.get("id").and_then(JsValue::as_js_str).is_some()
    });
    if !is_header {
        return Vec::new();
    }
    values[1..]
        .iter()
        .map(|value| {
            let kind = str_of(value, "type").unwrap_or_default();
            let kind = match value.get("message").and_then(|m| str_of(m, "role")) {
                Some(role) if kind == "message" => format!("message/{role}"),
                _ => kind,
            };
            SourceEntry {
                id: str_of(value, "id"),
                parent: str_of(value, "parentId"),
                target: str_of(value, "targetId"),
                kind,
            }
        })
        .collect()
}

/// Whether walking up from `id` loops (pi's `getBranch` would never return).
pub(crate) fn path_cycles(entries: &[SourceEntry], id: &str) -> bool {
    let by_id: HashMap<&str, &SourceEntry> = entries
        .iter()
        .filter_map(|e| e.id.as_deref().map(|id| (id, e)))
        .collect();
    let mut seen = HashSet::new();
    let mut current = by_id.get(id).copied();
    while let Some(entry) = current {
        if !seen.insert(entry.id.as_deref().unwrap()) {
            return true;
        }
        current = entry
            .parent
            .as_deref()
            .filter(|p| !p.is_empty())
            .and_then(|p| by_id.get(p).copied());
    }
    false
}

// ---------------------------------------------------------------------------------------------
// Hand-made sources (built with `support::files::tree`)

/// Labels set, cleared and set again, re-set without a clear, set on entries of another
/// branch, by entries of another branch, in the middle of the path, without a timestamp, with
/// values that are not strings; a user message whose parent is a label.
pub(crate) fn labels_session() -> String {
    file_text(&[
        header("labels"),
        user("u1", None, 1, "first question"),
        assistant("a1", Some("u1"), 2, "first answer"),
        label("l1", "a1", "u1", Some("\"start\""), Some(3)),
        // A user message whose parent is a label entry: the copy re-chains it to a1.
        user("u2", Some("l1"), 4, "second question"),
        assistant("a2", Some("u2"), 5, "second answer"),
        label("l2", "a2", "a1", Some("\"answer\""), Some(6)),
        label("l3", "l2", "u1", Some("\"\""), Some(7)),
        label("l4", "l3", "a2", Some("\"  spaced  \""), Some(8)),
        label("l5", "l4", "u1", Some("\"again\""), Some(9)),
        label("l6", "l5", "a2", Some("\"changed\""), Some(10)),
        // A side branch from a1, and labels from there on entries of the main path.
        user("u3", Some("a1"), 11, "side question"),
        assistant("a3", Some("u3"), 12, "side answer"),
        label("l7", "a3", "u2", Some("7"), Some(13)),
        label("l8", "l7", "a3", Some("\"side\""), Some(14)),
        label("l9", "l8", "ghost", Some("\"on nothing\""), Some(15)),
        // Labels on a label entry of the main path, and on a target that is not a string.
        label("l15", "l9", "l1", Some("\"on a label\""), Some(15)),
        r#"{"type":"label","id":"l16","parentId":"l15","timestamp":"2026-02-01T00:00:15.000Z","targetId":5,"label":"on a number"}"#.to_string(),
        // Back on the main path: a label without a timestamp, a cleared-by-absence one.
        label("l10", "l6", "a1", Some("\"no time\""), None),
        label("l11", "l10", "u2", None, Some(16)),
        label("l12", "l11", "u2", Some("{\"nested\":[1,2]}"), Some(17)),
        user("u4", Some("l12"), 18, "third question"),
        label("l13", "u4", "u4", Some("0"), Some(19)),
        label("l14", "l13", "u4", Some("true"), Some(20)),
        assistant("a4", Some("l14"), 21, "third answer"),
    ])
}

/// Every kind of entry pi knows (and one it does not), on one path, with a branch.
pub(crate) fn kinds_session() -> String {
    let line = |s: &str| s.to_string();
    file_text(&[
        header("kinds"),
        user("k1", None, 1, "question"),
        line(
            r#"{"type":"model_change","id":"k2","parentId":"k1","timestamp":"2026-02-01T00:00:02.000Z","provider":"openai","modelId":"gpt-5"}"#,
        ),
        line(
            r#"{"type":"thinking_level_change","id":"k3","parentId":"k2","timestamp":"2026-02-01T00:00:03.000Z","thinkingLevel":"high"}"#,
        ),
        assistant("k4", Some("k3"), 4, "answer"),
        line(
            r#"{"type":"message","id":"k5","parentId":"k4","timestamp":"2026-02-01T00:00:05.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":1769904005000}}"#,
        ),
        line(
            r#"{"type":"message","id":"k6","parentId":"k5","timestamp":"2026-02-01T00:00:06.000Z","message":{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1769904006000}}"#,
        ),
        line(
            r#"{"type":"custom","id":"k7","parentId":"k6","timestamp":"2026-02-01T00:00:07.000Z","customType":"ext","data":{"x":[1,{"y":null}]}}"#,
        ),
        line(
            r#"{"type":"custom_message","id":"k8","parentId":"k7","timestamp":"2026-02-01T00:00:08.000Z","customType":"ext","content":"shown","display":true,"details":{"d":1}}"#,
        ),
        line(
            r#"{"type":"message","id":"k9","parentId":"k8","timestamp":"2026-02-01T00:00:09.000Z","message":{"role":"custom","customType":"ext","content":"as a message","display":false,"timestamp":1769904009000}}"#,
        ),
        line(
            r#"{"type":"compaction","id":"k10","parentId":"k9","timestamp":"2026-02-01T00:00:10.000Z","summary":"so far","firstKeptEntryId":"k4","tokensBefore":1234,"details":{"readFiles":[]}}"#,
        ),
        line(
            r#"{"type":"branch_summary","id":"k11","parentId":"k10","timestamp":"2026-02-01T00:00:11.000Z","fromId":"k4","summary":"left a branch"}"#,
        ),
        line(
            r#"{"type":"message","id":"k12","parentId":"k11","timestamp":"2026-02-01T00:00:12.000Z","message":{"role":"branchSummary","summary":"as a message","fromId":"k4","timestamp":1769904012000}}"#,
        ),
        line(
            r#"{"type":"session_info","id":"k13","parentId":"k12","timestamp":"2026-02-01T00:00:13.000Z","name":"Kinds"}"#,
        ),
        line(
            r#"{"type":"future_kind","id":"k14","parentId":"k13","timestamp":"2026-02-01T00:00:14.000Z","payload":{"n":1.0,"big":12345678901234567890}}"#,
        ),
        label("k15", "k14", "k4", Some("\"kept\""), Some(15)),
        user("k16", Some("k15"), 16, "after the label"),
        // A branch off the compaction.
        user("k17", Some("k10"), 17, "another way"),
        assistant("k18", Some("k17"), 18, "another answer"),
        // Text blocks: one with a lone surrogate, one whose text is not a string.
        line(
            r#"{"type":"message","id":"k19","parentId":"k18","timestamp":"2026-02-01T00:00:19.000Z","message":{"role":"user","content":[{"type":"text","text":"cut \ud83d here"},{"type":"text","text":5},{"type":"text","text":" ok \u00e9"}],"timestamp":1769904019000}}"#,
        ),
    ])
}

/// Paths without an assistant message (pi writes nothing), a user message whose parent is
/// gone, and a root message whose content is a plain string.
pub(crate) fn no_assistant_session() -> String {
    let line = |s: &str| s.to_string();
    file_text(&[
        header("quiet"),
        line(
            r#"{"type":"message","id":"q1","parentId":null,"timestamp":"2026-02-01T00:00:01.000Z","message":{"role":"user","content":"plain string","timestamp":1769904001000}}"#,
        ),
        line(
            r#"{"type":"custom_message","id":"q2","parentId":"q1","timestamp":"2026-02-01T00:00:02.000Z","customType":"ext","content":"note","display":true}"#,
        ),
        label("q3", "q2", "q1", Some("\"marked\""), Some(3)),
        user("q4", Some("q3"), 4, "still no answer"),
        user("q5", Some("gone"), 5, "orphan"),
        line(
            r#"{"type":"message","id":"q6","parentId":"q5","timestamp":"2026-02-01T00:00:06.000Z","message":{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","stopReason":"stop","timestamp":1769904006000}}"#,
        ),
    ])
}

pub(crate) fn hand_made_sources(scratch: &Scratch) -> Vec<Source> {
    let mut sources = vec![
        Source::new(
            "labels",
            scratch.write("hand/labels.jsonl", &labels_session()),
        ),
        Source::new("kinds", scratch.write("hand/kinds.jsonl", &kinds_session())),
        Source::new(
            "no-assistant",
            scratch.write("hand/no-assistant.jsonl", &no_assistant_session()),
        ),
    ];
    // Header cwds pi resolves (against the current directory, the same for both programs).
    for (name, cwd) in [
        ("cwd-unnormalized", Some(r#""/work/x/../hand made/./""#)),
        ("cwd-relative", Some(r#""relative/dir""#)),
        ("cwd-home", Some(r#""~/proj""#)),
        ("cwd-empty", Some(r#""""#)),
        ("cwd-number", Some("7")),
        ("cwd-missing", None),
    ] {
        let cwd = cwd.map_or(String::new(), |c| format!(r#","cwd":{c}"#));
        let text = file_text(&[
            format!(
                r#"{{"type":"session","version":3,"id":"c","timestamp":"{}"{cwd}}}"#,
                ts(0)
            ),
            user("c1", None, 1, "where am I"),
            assistant("c2", Some("c1"), 2, "here"),
        ]);
        let path = scratch.write(&format!("hand/{name}.jsonl"), &text);
        sources.push(Source::new(name, path));
    }
    let mut names: Vec<PathBuf> = files_in(&root().join("tests/files"));
    names.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
    for path in names {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let source = Source::new(&format!("tests/files/{name}"), path.canonicalize().unwrap());
        if !source.entries.is_empty() {
            sources.push(source);
        }
    }
    sources
}

// ---------------------------------------------------------------------------------------------
// Other sources: the fixtures, the oracle's replays, generated sessions

/// The real v1 fixtures, as they are.
pub(crate) fn fixture_sources() -> Vec<Source> {
    support::real_fixtures()
        .into_iter()
        .map(|path| {
            let name = format!("fixtures/{}", path.file_stem().unwrap().to_str().unwrap());
            let source = Source::new(&name, path);
            assert!(source.v1, "{name} is a v1 file");
            source
        })
        .collect()
}

/// The fixtures as pi migrated them (a copy opened by pi's SessionManager): v3 with ids.
pub(crate) fn migrated_fixture_sources(scratch: &Scratch) -> Vec<Source> {
    let fixtures = fixture_sources();
    let jobs: Vec<Vec<String>> = fixtures
        .iter()
        .map(|f| {
            let dir = scratch.path(&format!("migrated/{}", f.name));
            vec![
                "migrated".into(),
                path_str(&f.path).into(),
                path_str(&dir).into(),
            ]
        })
        .collect();
    pi_forks(scratch, "migrated", &jobs)
        .into_iter()
        .zip(fixtures)
        .map(|(result, fixture)| {
            let file = PathBuf::from(str_of(&result, "file").expect("a migrated copy"));
            let source = Source::new(&format!("{} (migrated by pi)", fixture.name), file);
            assert!(!source.v1);
            source
        })
        .collect()
}

/// The files the oracle's `replay --impl manager` writes for `tests/ops/*.json`.
pub(crate) fn replay_sources(scratch: &Scratch) -> Vec<Source> {
    let mut scripts = files_in(&root().join("tests/ops"));
    scripts.retain(|p| p.extension().is_some_and(|e| e == "json"));
    let out = |script: &Path| {
        scratch.path(&format!(
            "replays/{}",
            script.file_stem().unwrap().to_str().unwrap()
        ))
    };
    let jobs: Vec<Vec<String>> = scripts
        .iter()
        .map(|s| {
            [
                "replay",
                path_str(s),
                path_str(&out(s)),
                "--impl",
                "manager",
            ]
            .map(String::from)
            .to_vec()
        })
        .collect();
    let mut sources = Vec::new();
    for (script, result) in scripts
        .iter()
        .zip(oracle_commands(scratch, "replays", &jobs))
    {
        // The manager refuses harness-only scripts.
        let Ok(doc) = result else { continue };
        let doc = parse(&doc);
        if doc.get("fileWritten") == Some(&JsValue::Bool(true)) {
            let name = format!(
                "replay of ops/{}",
                script.file_name().unwrap().to_str().unwrap()
            );
            sources.push(Source::new(
                &name,
                PathBuf::from(str_of(&doc, "file").unwrap()),
            ));
        }
    }
    assert!(
        sources.len() >= 5,
        "the oracle replayed the op scripts: {} files",
        sources.len()
    );
    sources
}

/// `gen-session.mjs file --size 1MB --branch-every 6 --label-rate 0.3` with each seed.
pub(crate) fn generated_sources(scratch: &Scratch, seeds: &[u32]) -> Vec<Source> {
    seeds
        .iter()
        .map(|seed| {
            let file = scratch.path(&format!("generated/seed-{seed}.jsonl"));
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            let seed_text = seed.to_string();
            let args = ["--size", "1MB", "--seed", &seed_text, "--branch-every", "6"];
            let mut all = vec!["file".as_ref(), "--out".as_ref(), file.as_os_str()];
            all.extend(args.iter().chain(&["--label-rate", "0.3"]).map(OsStr::new));
            support::generate(oracle(), &all);
            Source::new(&format!("generated seed {seed}"), file)
        })
        .collect()
}
