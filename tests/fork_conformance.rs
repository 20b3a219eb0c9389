//! Forks as pi 0.82.1 makes them, checked against pi's own code.
//!
//! `/fork` and `/clone` (`pi-session fork FILE --entry ID [--at] --out DIR`) against pi's runtime
//! `fork` (its `createBranchedSession`), and `--fork` (`session/forkFrom` over `pi-session
//! --stdio`) against pi's `SessionManager.forkFrom`, both run by `tests/oracle/pi-fork.mjs`, for
//! sources built from the real fixtures, the oracle's replays of `tests/ops/`, generated
//! sessions, the edge-case files of `tests/files/` and hand-made files about labels.
//!
//! The new files must be the same after the oracle's `normalize` (ids relabelled by first
//! appearance, timestamps `T`), and byte for byte once pi's fresh ids are replaced by ours
//! (so key order, number formatting and the original timestamps of re-created labels count).
//! The header's `parentSession` is compared on its own: pi's driver forks a copy of the source.
//! v1 sources get fresh ids from both programs on every open, so their entries are named by
//! position and this program forks them through the library (its command line cannot name
//! them). Where this program differs from pi on purpose or does better, the test says so and
//! counts the cases.
//!
//! The suite installs pi's code itself (see `tests/support/oracle.rs`); with
//! `PI_SESSION_NO_ORACLE=1` the comparisons are left out with a notice and the tests of this
//! program alone (exact expected files, errors) still run.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use pi_session::format::ids::IdSource;
use pi_session::format::json::{self, JsValue};
use pi_session::repo::session_file_name;
use pi_session::store::{ForkPosition, NewSession, Session, SessionOptions};

mod support;

use support::pipe::{PipeClient, Wire};
use support::{Oracle, parse, path_str, root, str_of};

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");
const INVALID_FORK_TARGET: &str = "Invalid entry ID for forking";

// ---------------------------------------------------------------------------------------------
// Where things are

/// Whether pi's code runs in this suite (it does unless `PI_SESSION_NO_ORACLE` is set; a
/// machine without Node fails here, saying what to install).
fn pi_available(test: &str) -> bool {
    support::oracle(test).is_some()
}

/// The oracle, once a test found it available.
fn oracle() -> &'static Oracle {
    support::oracle("fork suite").expect("the test checked pi_available first")
}

/// A scratch directory, canonical (paths in files and messages are compared as text).
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// `relative` in the directory; `""`: the directory itself.
    fn path(&self, relative: &str) -> PathBuf {
        let dir = self.dir.path().canonicalize().unwrap();
        if relative.is_empty() {
            dir
        } else {
            dir.join(relative)
        }
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }
}

// ---------------------------------------------------------------------------------------------
// Reading session files

/// The lines of a file as written (split at `\n`, the final newline dropped).
fn lines(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let text = text.strip_suffix('\n').unwrap_or(&text);
    text.split('\n').map(str::to_string).collect()
}

/// One entry of a source as pi's loader sees it.
#[derive(Debug, Clone)]
struct SourceEntry {
    id: Option<String>,
    parent: Option<String>,
    /// `targetId` (of labels and harness `leaf` entries).
    target: Option<String>,
    /// `type`, or `message/<role>` for messages.
    kind: String,
}

impl SourceEntry {
    fn is_user_message(&self) -> bool {
        self.kind == "message/user"
    }
}

/// The entries of a session file by pi's `loadEntriesFromFile` rules: lines split at `\n`,
/// blank, unparsable and falsy ones skipped, the first value must be a header with a string id.
fn source_entries(path: &Path) -> Vec<SourceEntry> {
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
fn path_cycles(entries: &[SourceEntry], id: &str) -> bool {
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
// Running pi

/// `tests/node/pi-fork.mjs batch`: every job in one Node process. Temporary copies go under
/// `scratch`.
fn pi_forks(scratch: &Scratch, name: &str, jobs: &[Vec<String>]) -> Vec<JsValue> {
    if jobs.is_empty() {
        return Vec::new();
    }
    let jobs_file = scratch.write(
        &format!("{name}-pi-jobs.json"),
        &JsValue::Array(
            jobs.iter()
                .map(|args| {
                    JsValue::Array(args.iter().map(|a| JsValue::from(a.as_str())).collect())
                })
                .collect(),
        )
        .stringify(),
    );
    let tmp = scratch.path("node-tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let output = oracle()
        .command("pi-fork.mjs")
        .arg(oracle().dir())
        .arg("batch")
        .arg(&jobs_file)
        .env("TMPDIR", &tmp)
        .env("HOME", scratch.path("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .current_dir(scratch.path(""))
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "pi-fork.mjs batch failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results = parse(std::str::from_utf8(&output.stdout).unwrap().trim_end());
    let results = results.as_array().expect("an array").to_vec();
    assert_eq!(results.len(), jobs.len());
    support::count(&format!("fork suite, {name}"), results.len());
    results
}

/// The oracle's commands in one Node process, in a scratch subdirectory named after `name`.
fn oracle_commands(
    scratch: &Scratch,
    name: &str,
    jobs: &[Vec<String>],
) -> Vec<Result<String, String>> {
    let _ = (scratch, name);
    oracle()
        .run(jobs.to_vec())
        .into_iter()
        .map(|outcome| outcome.result())
        .collect()
}

/// The oracle's `normalize FILE --with-map` of each file.
fn normalized(scratch: &Scratch, name: &str, files: &[PathBuf]) -> Vec<Normalized> {
    let jobs: Vec<Vec<String>> = files
        .iter()
        .map(|f| vec!["normalize".into(), path_str(f).into(), "--with-map".into()])
        .collect();
    oracle_commands(scratch, name, &jobs)
        .into_iter()
        .zip(files)
        .map(|(out, file)| {
            let text = out.unwrap_or_else(|e| panic!("normalize {}: {e}", file.display()));
            Normalized::new(&text)
        })
        .collect()
}

/// A `normalize --with-map` document, split into what is compared.
struct Normalized {
    header: JsValue,
    /// The entries, as the oracle printed them.
    entries: String,
    /// Label (`e1`, ...) -> id.
    id_map: Vec<(String, String)>,
}

impl Normalized {
    /// Splits the oracle's output (`JSON.stringify` of `{entries, header, idMap}` with sorted
    /// keys and an indent of 2) at its members: only a member of the document itself starts a
    /// line with two spaces and a quote. The entries are kept as printed.
    fn new(text: &str) -> Normalized {
        // (where the member's line starts, where its value starts)
        let member = |name: &str| {
            let marker = format!("\n  \"{name}\": ");
            let at = text
                .find(&marker)
                .unwrap_or_else(|| panic!("no {name} in the normalized document"));
            (at, at + marker.len())
        };
        let (entries, header, id_map) = (member("entries"), member("header"), member("idMap"));
        assert!(
            entries.0 < header.0 && header.0 < id_map.0,
            "members in sorted order"
        );
        let value = |from: usize, to: usize| text[from..to].trim_end().trim_end_matches(',');
        let last = text.trim_end().strip_suffix('}').expect("a document");
        let ids: Vec<(String, String)> = parse(&last[id_map.1..])
            .as_object()
            .unwrap()
            .iter()
            .map(|(label, id)| {
                (
                    label.to_string_lossy().into_owned(),
                    id.as_str().unwrap().into_owned(),
                )
            })
            .collect();
        Normalized {
            header: parse(value(header.1, id_map.0)),
            entries: value(entries.1, header.0).to_string(),
            id_map: ids,
        }
    }

    fn header_without_parent(&self) -> (JsValue, Option<String>) {
        let mut header = self.header.clone();
        let parent = header
            .as_object_mut()
            .and_then(|h| h.shift_remove("parentSession"))
            .and_then(|p| p.as_str().map(|s| s.into_owned()));
        (header, parent)
    }
}

/// pi's id -> our id, through the two files' normalization labels.
fn id_translation(pi: &Normalized, ours: &Normalized) -> HashMap<String, String> {
    let ours: HashMap<&str, &str> = ours
        .id_map
        .iter()
        .map(|(l, id)| (l.as_str(), id.as_str()))
        .collect();
    pi.id_map
        .iter()
        .filter_map(|(label, id)| {
            ours.get(label.as_str())
                .map(|o| (id.clone(), o.to_string()))
        })
        .collect()
}

const ID_FIELDS: [&str; 5] = ["id", "parentId", "targetId", "fromId", "firstKeptEntryId"];

/// An entry line of pi's with its ids replaced by ours, as `JSON.stringify` writes it.
fn translated(line: &str, ids: &HashMap<String, String>) -> String {
    let mut value = parse(line);
    if let Some(map) = value.as_object_mut() {
        for field in ID_FIELDS {
            if let Some(JsValue::String(id)) = map.get(field)
                && let Some(ours) = ids.get(id.to_string_lossy().as_ref())
            {
                let ours = JsValue::from(ours.as_str());
                map.insert(field.into(), ours);
            }
        }
    }
    value.stringify()
}

/// The line `base` with the members `keys` of `donor` (in `base`'s key order), as
/// `JSON.stringify` writes it.
fn with_values_of(base: &str, donor: &str, keys: &[&str]) -> String {
    let mut value = parse(base);
    let donor = parse(donor);
    let map = value.as_object_mut().unwrap();
    for key in keys {
        match donor.get(key) {
            Some(v) => {
                map.insert((*key).into(), v.clone());
            }
            None => {
                map.shift_remove(*key);
            }
        }
    }
    value.stringify()
}

/// The files in a directory (none when it does not exist).
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

// ---------------------------------------------------------------------------------------------
// /fork and /clone

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Position {
    Before,
    At,
}

impl Position {
    fn name(self) -> &'static str {
        match self {
            Position::Before => "before",
            Position::At => "at",
        }
    }
}

/// A session file forks are made from.
struct Source {
    name: String,
    path: PathBuf,
    /// v1: both programs give the entries fresh ids when they open the file, so entries are
    /// named by position, and this program is driven through the library (its command line
    /// cannot name an entry whose id it invents anew on every run).
    v1: bool,
    entries: Vec<SourceEntry>,
}

impl Source {
    /// The leaf this program reports where pi reports `pi_leaf`: the same, except that a
    /// harness `leaf` entry stands for its target (a deliberate difference, item 5 of
    /// protocol.md: pi's CLI takes the `leaf` line itself as the leaf).
    fn folded_leaf(&self, pi_leaf: Option<String>) -> Option<String> {
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

    fn new(name: &str, path: PathBuf) -> Source {
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

/// One fork to make with both programs.
#[derive(Debug, Clone)]
struct ForkCase {
    source: usize,
    /// The entry's position among the source's entries.
    index: usize,
    /// An id no entry has (error case), instead of `index`.
    unknown_id: Option<String>,
    position: Position,
}

/// How many forks to make from a source.
#[derive(Clone, Copy)]
enum Spread {
    /// `--at` every entry, `before` every user message and one entry of each other kind.
    Every,
    /// `--at` the first and last entry of each kind and `n` evenly spaced ones; `before` the
    /// first, the last and `n / 2` evenly spaced user messages, and entries of two other kinds.
    Sample(usize),
}

/// The forks worth making from a source (see [`Spread`]); never from an entry whose path
/// loops (pi would hang).
fn spread(sources: &[Source], source: usize, spread: Spread) -> Vec<ForkCase> {
    let entries = &sources[source].entries;
    let usable = |i: usize| {
        let entry = &entries[i];
        let Some(id) = entry.id.as_deref() else {
            return sources[source].v1;
        };
        !path_cycles(entries, id)
    };
    let mut at: Vec<usize> = Vec::new();
    let mut before: Vec<usize> = Vec::new();
    let users: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].is_user_message())
        .collect();
    let refused_kinds = match spread {
        Spread::Every => {
            at.extend(0..entries.len());
            before.extend(users.iter().copied());
            usize::MAX
        }
        Spread::Sample(n) => {
            let mut kinds: Vec<&str> = entries.iter().map(|e| e.kind.as_str()).collect();
            kinds.sort();
            kinds.dedup();
            for kind in kinds {
                let of_kind: Vec<usize> = (0..entries.len())
                    .filter(|&i| entries[i].kind == kind)
                    .collect();
                at.push(of_kind[0]);
                at.push(*of_kind.last().unwrap());
            }
            let count = entries.len();
            at.extend((1..=n).map(|k| k * (count - 1) / n));
            if !users.is_empty() {
                before.push(users[0]);
                before.push(*users.last().unwrap());
                let m = n / 2 + 1;
                before.extend((1..m).map(|k| users[k * (users.len() - 1) / m]));
            }
            2
        }
    };
    let mut kinds_refused = HashSet::new();
    for (i, entry) in entries.iter().enumerate() {
        if !entry.is_user_message()
            && kinds_refused.len() < refused_kinds
            && kinds_refused.insert(entry.kind.clone())
        {
            before.push(i);
        }
    }
    let mut cases = Vec::new();
    for (list, position) in [(at, Position::At), (before, Position::Before)] {
        let mut seen = HashSet::new();
        for index in list {
            // `before` walks up from the parent: it must not loop either.
            let parent_loops = position == Position::Before
                && entries[index]
                    .parent
                    .as_deref()
                    .is_some_and(|p| path_cycles(entries, p));
            if seen.insert(index) && usable(index) && !parent_loops {
                cases.push(ForkCase {
                    source,
                    index,
                    unknown_id: None,
                    position,
                });
            }
        }
    }
    cases
}

/// What one program did for one fork.
#[derive(Debug)]
enum Forked {
    Made {
        file: PathBuf,
        written: bool,
        leaf_id: Option<String>,
        selected_text: Option<JsValue>,
    },
    Refused(String),
}

/// `pi-session fork` on a v2/v3 source (the command line), or the same steps through the
/// library on a v1 source, whose entries only get ids when it is opened (`opened` keeps it
/// open, so that the ids stay the same).
fn our_fork(
    source: &Source,
    case: &ForkCase,
    out: &Path,
    opened: &mut HashMap<usize, Session>,
    workdir: &Path,
) -> Forked {
    if source.v1 && case.unknown_id.is_none() {
        let session = opened.entry(case.source).or_insert_with(|| {
            Session::open_read_only(&source.path, SessionOptions::default()).unwrap()
        });
        return library_fork(session, &source.path, case.index, case.position, out);
    }
    let entry = match &case.unknown_id {
        Some(id) => id.clone(),
        None => source.entries[case.index]
            .id
            .clone()
            .expect("an entry with an id"),
    };
    let mut command = Command::new(BIN);
    command
        .current_dir(workdir)
        .env("HOME", workdir.join("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .arg("fork")
        .arg(&source.path)
        .args(["--entry", &entry, "--out"])
        .arg(out);
    if case.position == Position::At {
        command.arg("--at");
    }
    let output = command.output().expect("pi-session runs");
    if !output.status.success() {
        assert!(
            output.stdout.is_empty(),
            "a failed fork prints nothing on stdout"
        );
        return Forked::Refused(String::from_utf8(output.stderr).unwrap());
    }
    let doc = parse(std::str::from_utf8(&output.stdout).unwrap());
    let file = PathBuf::from(str_of(&doc, "file").expect("file"));
    let session_id = str_of(&doc, "sessionId").expect("sessionId");
    assert!(
        file.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with(&format!("_{session_id}.jsonl")),
        "{} is named after session {session_id}",
        file.display()
    );
    Forked::Made {
        file,
        written: doc.get("written") == Some(&JsValue::Bool(true)),
        leaf_id: str_of(&doc, "leafId"),
        selected_text: doc.get("selectedText").cloned(),
    }
}

/// `fork_file`'s steps on the entry at `index` of `session`, opened from `path`.
fn library_fork(
    session: &mut Session,
    path: &Path,
    index: usize,
    position: Position,
    out: &Path,
) -> Forked {
    let ids = Arc::new(IdSource::system());
    let options = SessionOptions {
        ids: ids.clone(),
        ..SessionOptions::default()
    };
    let id = str_of(&session.entry_value(index as u32).unwrap(), "id").unwrap();
    let position = match position {
        Position::Before => ForkPosition::Before,
        Position::At => ForkPosition::At,
    };
    let selection = match session.fork_selection(&id, position) {
        Ok(selection) => selection,
        Err(e) => return Forked::Refused(e.message),
    };
    let entries = match &selection.leaf_id {
        Some(leaf) => session.branched_entries(leaf).unwrap(),
        None => Vec::new(),
    };
    std::fs::create_dir_all(out).unwrap();
    let session_id = ids.session_id();
    let timestamp = ids.now_iso();
    let file = out.join(session_file_name(&timestamp, &session_id));
    let new = NewSession {
        path: Some(file.clone()),
        cwd: pi_session::repo::paths::resolve_path(&session.cwd()),
        id: Some(session_id),
        timestamp: Some(timestamp),
        parent_session: Some(path_str(path).into()),
        metadata: None,
    };
    let forked = Session::from_entries(new, &entries, options, false).unwrap();
    Forked::Made {
        file,
        written: forked.is_written(),
        leaf_id: forked.leaf().id().map(str::to_string),
        selected_text: selection.selected_text.map(|t| JsValue::from(t.as_str())),
    }
}

fn pi_fork_args(source: &Source, case: &ForkCase, out: &Path) -> Vec<String> {
    let entry = match &case.unknown_id {
        Some(id) => id.clone(),
        None if source.v1 => format!("#{}", case.index),
        None => source.entries[case.index].id.clone().unwrap(),
    };
    vec![
        "fork".into(),
        path_str(&source.path).into(),
        entry,
        case.position.name().into(),
        path_str(out).into(),
    ]
}

fn describe(sources: &[Source], case: &ForkCase) -> String {
    let source = &sources[case.source];
    match &case.unknown_id {
        Some(id) => format!(
            "{}: {} unknown entry {id}",
            source.name,
            case.position.name()
        ),
        None => format!(
            "{}: {} entry #{} ({}, {:?})",
            source.name,
            case.position.name(),
            case.index,
            source.entries[case.index].kind,
            source.entries[case.index].id
        ),
    }
}

/// What comparing a batch of forks found.
#[derive(Default)]
struct Report {
    compared: usize,
    written: usize,
    refused: usize,
    /// `--at` forks made, by entry kind.
    kinds_at: HashSet<String>,
    /// The source had a label re-created in the fork.
    labels_recreated: usize,
    root_forks: usize,
    /// Forks at a harness `leaf` entry (where the leaves differ on purpose).
    leaf_entry_forks: usize,
    /// Forks before a user message without text content, where pi throws a TypeError.
    pi_crashes: Vec<String>,
    /// Selected texts with a lone surrogate (U+FFFD here).
    lone_surrogates: usize,
}

/// Makes every fork with both programs and compares what they wrote.
fn compare_forks(scratch: &Scratch, name: &str, sources: &[Source], cases: &[ForkCase]) -> Report {
    let out = |side: &str, i: usize| scratch.path(&format!("{name}-forks/{side}/{i}"));
    let pi_jobs: Vec<Vec<String>> = cases
        .iter()
        .enumerate()
        .map(|(i, case)| pi_fork_args(&sources[case.source], case, &out("pi", i)))
        .collect();
    let pi_results = pi_forks(scratch, name, &pi_jobs);
    let mut opened = HashMap::new();
    let ours: Vec<Forked> = cases
        .iter()
        .enumerate()
        .map(|(i, case)| {
            let workdir = scratch.path("");
            our_fork(
                &sources[case.source],
                case,
                &out("ours", i),
                &mut opened,
                &workdir,
            )
        })
        .collect();
    // Both files of every fork both wrote, normalized by the oracle.
    let mut files = Vec::new();
    for (pi, ours) in pi_results.iter().zip(&ours) {
        if let (
            Some(JsValue::Bool(true)),
            Forked::Made {
                file,
                written: true,
                ..
            },
        ) = (pi.get("written"), ours)
        {
            files.push(PathBuf::from(str_of(pi, "file").unwrap()));
            files.push(file.clone());
        }
    }
    let mut normalized = normalized(scratch, name, &files).into_iter();
    let mut report = Report::default();
    for (i, ((case, pi), ours)) in cases.iter().zip(&pi_results).zip(&ours).enumerate() {
        let what = describe(sources, case);
        let source = &sources[case.source];
        report.compared += 1;
        if let Some(message) = str_of(pi, "error") {
            // pi's runtime reads `message.content.filter` of the user message it forks before;
            // a user message without array or string content makes it throw a TypeError.
            // Here its text is "" and the fork goes on.
            if message.starts_with("Cannot read properties of")
                && message.ends_with("(reading 'filter')")
                && case.position == Position::Before
            {
                report.pi_crashes.push(what.clone());
                match ours {
                    Forked::Made { selected_text, .. } => {
                        assert_eq!(
                            selected_text,
                            &Some(JsValue::from("")),
                            "{what}: selectedText"
                        )
                    }
                    Forked::Refused(e) => {
                        panic!("{what}: pi crashed ({message}); refused here: {e}")
                    }
                }
                continue;
            }
            report.refused += 1;
            let expected = format!("pi-session: {}: {message}\n", source.path.display());
            match ours {
                Forked::Refused(ours) if source.v1 && case.unknown_id.is_none() => {
                    assert_eq!(ours, &message, "{what}: the error")
                }
                Forked::Refused(ours) => assert_eq!(ours, &expected, "{what}: the error"),
                Forked::Made { .. } => {
                    panic!("{what}: pi refused ({message}), this program forked: {ours:?}")
                }
            }
            assert_eq!(
                files_in(&out("ours", i)),
                Vec::<PathBuf>::new(),
                "{what}: nothing written"
            );
            continue;
        }
        let Forked::Made {
            file,
            written,
            leaf_id,
            selected_text,
        } = ours
        else {
            panic!("{what}: pi forked ({pi:?}), this program refused: {ours:?}");
        };
        let pi_written = pi.get("written") == Some(&JsValue::Bool(true));
        assert_eq!(*written, pi_written, "{what}: written");
        // Text is UTF-8 here: a lone surrogate in the forked message becomes U+FFFD.
        let pi_text = pi.get("selectedText").map(|t| {
            let lossy = t.as_str().unwrap();
            if JsValue::from(lossy.as_ref()) != *t {
                report.lone_surrogates += 1;
            }
            JsValue::from(lossy.as_ref())
        });
        assert_eq!(selected_text, &pi_text, "{what}: selectedText");
        let pi_file = PathBuf::from(str_of(pi, "file").unwrap());
        assert_eq!(
            file.parent(),
            Some(out("ours", i).as_path()),
            "{what}: our file's directory"
        );
        let pi_leaf = str_of(pi, "leafId");
        if pi_leaf.is_none() {
            report.root_forks += 1;
        }
        let folded = source.folded_leaf(pi_leaf.clone());
        if folded != pi_leaf {
            report.leaf_entry_forks += 1;
        }
        let pi_leaf = folded;
        if case.position == Position::At {
            report
                .kinds_at
                .insert(source.entries[case.index].kind.clone());
        }
        if !pi_written {
            assert!(
                !file.exists() && !pi_file.exists(),
                "{what}: neither writes a file"
            );
            assert_eq!(
                files_in(&out("ours", i)),
                Vec::<PathBuf>::new(),
                "{what}: nothing written"
            );
            let source_ids: HashSet<&str> = source
                .entries
                .iter()
                .filter_map(|e| e.id.as_deref())
                .collect();
            match (&pi_leaf, leaf_id) {
                (None, None) => {}
                (Some(pi_leaf), Some(ours)) if source_ids.contains(pi_leaf.as_str()) => {
                    assert_eq!(ours, pi_leaf, "{what}: leaf")
                }
                // A re-created label (or a v1 entry): a fresh id on each side.
                (Some(_), Some(ours)) => {
                    assert!(
                        !source_ids.contains(ours.as_str()),
                        "{what}: leaf {ours} is fresh too"
                    )
                }
                _ => panic!("{what}: leaf {leaf_id:?}, pi's {pi_leaf:?}"),
            }
            continue;
        }
        report.written += 1;
        let pi_norm = normalized.next().unwrap();
        let our_norm = normalized.next().unwrap();
        // The header: the same but for the parent, which names each side's source.
        let (pi_header, pi_parent) = pi_norm.header_without_parent();
        let (our_header, our_parent) = our_norm.header_without_parent();
        assert_eq!(our_header, pi_header, "{what}: normalized header");
        assert_eq!(
            pi_parent,
            str_of(pi, "source"),
            "{what}: pi's parentSession names its copy"
        );
        assert_eq!(
            our_parent.as_deref(),
            Some(path_str(&source.path)),
            "{what}: parentSession"
        );
        assert_eq!(
            our_norm.entries, pi_norm.entries,
            "{what}: normalized entries"
        );
        // Byte for byte, once pi's fresh ids are ours.
        let ids = id_translation(&pi_norm, &our_norm);
        let (pi_lines, our_lines) = (lines(&pi_file), lines(file));
        assert_eq!(our_lines.len(), pi_lines.len(), "{what}: line count");
        assert_eq!(
            our_lines[0],
            with_values_of(
                &pi_lines[0],
                &our_lines[0],
                &["id", "timestamp", "parentSession"]
            ),
            "{what}: header line"
        );
        for (n, (ours, pi)) in our_lines.iter().zip(&pi_lines).enumerate().skip(1) {
            if ours != pi {
                assert_eq!(ours, &translated(pi, &ids), "{what}: line {}", n + 1);
            }
        }
        let leaf = pi_leaf.map(|l| ids.get(&l).cloned().unwrap_or(l));
        assert_eq!(leaf_id, &leaf, "{what}: leaf");
        let source_ids: HashSet<&str> = source
            .entries
            .iter()
            .filter_map(|e| e.id.as_deref())
            .collect();
        report.labels_recreated += our_lines[1..]
            .iter()
            .map(|l| parse(l))
            .filter(|v| str_of(v, "type").as_deref() == Some("label"))
            .filter(|v| source.v1 || !source_ids.contains(str_of(v, "id").unwrap().as_str()))
            .count();
    }
    eprintln!(
        "{name}: {} forks compared, {} written, {} refused by both, {} labels re-created, {} before a root, {} at a leaf entry, {} texts with a lone surrogate, pi crashed on {:?}",
        report.compared,
        report.written,
        report.refused,
        report.labels_recreated,
        report.root_forks,
        report.leaf_entry_forks,
        report.lone_surrogates,
        report.pi_crashes
    );
    report
}

/// The kinds of entries every `--at` sweep over the hand-made, replayed and generated sources
/// must have covered.
const KINDS: [&str; 15] = [
    "branch_summary",
    "compaction",
    "custom",
    "custom_message",
    "label",
    "message/assistant",
    "message/bashExecution",
    "message/toolResult",
    "message/user",
    "model_change",
    "session_info",
    "thinking_level_change",
    "future_kind",
    "message/custom",
    "message/branchSummary",
];

// ---------------------------------------------------------------------------------------------
// Hand-made sources

fn ts(second: u32) -> String {
    format!("2026-02-01T00:{:02}:{:02}.000Z", second / 60, second % 60)
}

fn header(id: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{}","cwd":"/work/hand made"}}"#,
        ts(0)
    )
}

fn user(id: &str, parent: Option<&str>, second: u32, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{},"timestamp":"{}","message":{{"role":"user","content":[{{"type":"text","text":"{text}"}},{{"type":"image","data":"AA==","mimeType":"image/png"}},{{"type":"text","text":"!"}}],"timestamp":{}}}}}"#,
        parent_json(parent),
        ts(second),
        1_769_904_000_000u64 + u64::from(second) * 1000
    )
}

fn assistant(id: &str, parent: Option<&str>, second: u32, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{},"timestamp":"{}","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":1.5e-7,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{{"input":1e21,"output":0.1,"cacheRead":0,"cacheWrite":0,"total":100}}}},"stopReason":"stop","timestamp":{}}}}}"#,
        parent_json(parent),
        ts(second),
        1_769_904_000_000u64 + u64::from(second) * 1000
    )
}

/// A label entry; `label` is the JSON of its `label` member (`None`: no member), `second` its
/// timestamp (`None`: no member).
fn label(id: &str, parent: &str, target: &str, label: Option<&str>, second: Option<u32>) -> String {
    let mut text = format!(r#"{{"type":"label","id":"{id}","parentId":"{parent}""#);
    if let Some(second) = second {
        text.push_str(&format!(r#","timestamp":"{}""#, ts(second)));
    }
    text.push_str(&format!(r#","targetId":"{target}""#));
    if let Some(label) = label {
        text.push_str(&format!(r#","label":{label}"#));
    }
    text.push('}');
    text
}

fn parent_json(parent: Option<&str>) -> String {
    parent.map_or("null".into(), |p| format!("\"{p}\""))
}

fn file_text(lines: &[String]) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// Labels set, cleared and set again, re-set without a clear, set on entries of another
/// branch, by entries of another branch, in the middle of the path, without a timestamp, with
/// values that are not strings; a user message whose parent is a label.
fn labels_session() -> String {
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
fn kinds_session() -> String {
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
fn no_assistant_session() -> String {
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

fn hand_made_sources(scratch: &Scratch) -> Vec<Source> {
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
fn fixture_sources() -> Vec<Source> {
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
fn migrated_fixture_sources(scratch: &Scratch) -> Vec<Source> {
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
fn replay_sources(scratch: &Scratch) -> Vec<Source> {
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
fn generated_sources(scratch: &Scratch, seeds: &[u32]) -> Vec<Source> {
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

// ---------------------------------------------------------------------------------------------
// The fork tests

#[test]
fn forks_of_hand_made_sessions_match_pi() {
    if !pi_available("forks_of_hand_made_sessions_match_pi") {
        return;
    }
    let scratch = Scratch::new();
    let sources = hand_made_sources(&scratch);
    let mut cases: Vec<ForkCase> = (0..sources.len())
        .flat_map(|s| spread(&sources, s, Spread::Every))
        .collect();
    for position in [Position::Before, Position::At] {
        cases.push(ForkCase {
            source: 0,
            index: 0,
            unknown_id: Some("nope".into()),
            position,
        });
    }
    let report = compare_forks(&scratch, "hand", &sources, &cases);
    assert_eq!(report.compared, cases.len());
    for kind in KINDS {
        assert!(
            report.kinds_at.contains(kind),
            "no --at fork of a {kind} entry"
        );
    }
    assert!(
        report.root_forks >= 3,
        "forks before root messages: {}",
        report.root_forks
    );
    assert!(
        report.labels_recreated >= 20,
        "labels re-created: {}",
        report.labels_recreated
    );
    assert!(report.refused >= 20, "refused forks: {}", report.refused);
    assert!(report.written >= 40, "written forks: {}", report.written);
    // The known differences, each where it is expected.
    assert_eq!(
        report.lone_surrogates, 1,
        "the selected text with a lone surrogate"
    );
    assert_eq!(report.leaf_entry_forks, 3, "forks at a harness leaf entry");
    assert_eq!(report.pi_crashes.len(), 2, "{:?}", report.pi_crashes);
}

#[test]
fn forks_of_replayed_sessions_match_pi() {
    if !pi_available("forks_of_replayed_sessions_match_pi") {
        return;
    }
    let scratch = Scratch::new();
    let sources = replay_sources(&scratch);
    let cases: Vec<ForkCase> = (0..sources.len())
        .flat_map(|s| spread(&sources, s, Spread::Every))
        .collect();
    let report = compare_forks(&scratch, "replays", &sources, &cases);
    assert!(report.written >= 30, "written forks: {}", report.written);
    assert!(
        report.labels_recreated >= 5,
        "labels re-created: {}",
        report.labels_recreated
    );
}

#[test]
fn forks_of_generated_sessions_match_pi() {
    if !pi_available("forks_of_generated_sessions_match_pi") {
        return;
    }
    let scratch = Scratch::new();
    let sources = generated_sources(&scratch, &[3, 4]);
    let cases: Vec<ForkCase> = (0..sources.len())
        .flat_map(|s| spread(&sources, s, Spread::Sample(10)))
        .collect();
    let report = compare_forks(&scratch, "generated", &sources, &cases);
    assert!(report.written >= 40, "written forks: {}", report.written);
    assert!(
        report.labels_recreated >= 40,
        "labels re-created: {}",
        report.labels_recreated
    );
}

#[test]
fn forks_of_the_real_fixtures_match_pi() {
    if !pi_available("forks_of_the_real_fixtures_match_pi") {
        return;
    }
    let scratch = Scratch::new();
    // As they are (v1: both sides invent the ids) and as pi migrated them.
    let mut sources = fixture_sources();
    sources.extend(migrated_fixture_sources(&scratch));
    // Fewer forks of the v1 files: this program forks them in this (debug) test process.
    let cases: Vec<ForkCase> = (0..sources.len())
        .flat_map(|s| {
            let n = if sources[s].v1 { 2 } else { 4 };
            spread(&sources, s, Spread::Sample(n))
        })
        .collect();
    let report = compare_forks(&scratch, "fixtures", &sources, &cases);
    assert!(report.written >= 50, "written forks: {}", report.written);
}

// ---------------------------------------------------------------------------------------------
// The fork command alone (no Node needed)

/// `pi-session fork ARGS`: the JSON document it prints, or its exit code and stderr.
fn fork_command(args: &[&str]) -> Result<JsValue, (i32, String)> {
    let output = Command::new(BIN)
        .arg("fork")
        .args(args)
        .output()
        .expect("pi-session runs");
    if output.status.success() {
        Ok(parse(std::str::from_utf8(&output.stdout).unwrap()))
    } else {
        assert!(output.stdout.is_empty());
        Err((
            output.status.code().unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        ))
    }
}

/// A hand-made assistant line as `JSON.stringify` writes it back: the copy is re-serialized, so
/// `1e21` becomes `1e+21`.
fn restringified(line: &str) -> String {
    assert!(line.contains(r#""input":1e21,"#));
    line.replace(r#""input":1e21,"#, r#""input":1e+21,"#)
}

fn is_short_id(id: &str) -> bool {
    id.len() == 8
        && id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// The clone of the hand-made labels session at its last entry, into a directory that does not
/// exist yet, written out in full: the path without its label entries, re-chained, then the
/// labels still set on it in pi's order (where a target was first labelled, or labelled again
/// after a clear), each with the timestamp of the label entry that set it last (none when that
/// entry had none).
#[test]
fn a_clone_re_creates_the_labels_of_its_path_in_pis_order() {
    let scratch = Scratch::new();
    let source = scratch.write("labels.jsonl", &labels_session());
    let before = std::fs::read(&source).unwrap();
    let out = scratch.path("new/sessions");
    let doc = fork_command(&[
        "--entry",
        "a4",
        "--at",
        "--out",
        path_str(&out),
        path_str(&source),
    ])
    .unwrap();
    assert_eq!(
        std::fs::read(&source).unwrap(),
        before,
        "the source is never changed"
    );
    let file = PathBuf::from(str_of(&doc, "file").unwrap());
    assert_eq!(files_in(&out), vec![file.clone()]);
    assert_eq!(doc.get("written"), Some(&JsValue::Bool(true)));
    assert_eq!(doc.get("selectedText"), None);
    let lines = lines(&file);
    let ids: Vec<String> = lines[7..]
        .iter()
        .map(|l| str_of(&parse(l), "id").unwrap())
        .collect();
    assert!(
        ids.iter().all(|id| is_short_id(id)),
        "fresh entry ids: {ids:?}"
    );
    assert_eq!(
        ids.iter().collect::<HashSet<_>>().len(),
        5,
        "distinct ids: {ids:?}"
    );
    let header = parse(&lines[0]);
    let session_id = str_of(&doc, "sessionId").unwrap();
    assert_eq!(
        lines[0],
        format!(
            r#"{{"type":"session","version":3,"id":"{session_id}","timestamp":{},"cwd":"/work/hand made","parentSession":{}}}"#,
            header.get("timestamp").unwrap().stringify(),
            JsValue::from(path_str(&source)).stringify()
        )
    );
    let label_line = |n: usize, parent: &str, timestamp: Option<u32>, target: &str, label: &str| {
        let timestamp = timestamp.map_or(String::new(), |s| format!(r#","timestamp":"{}""#, ts(s)));
        format!(
            r#"{{"type":"label","id":"{}","parentId":"{parent}"{timestamp},"targetId":"{target}","label":{label}}}"#,
            ids[n]
        )
    };
    let expected = vec![
        lines[0].clone(),
        user("u1", None, 1, "first question"),
        restringified(&assistant("a1", Some("u1"), 2, "first answer")),
        user("u2", Some("a1"), 4, "second question"),
        restringified(&assistant("a2", Some("u2"), 5, "second answer")),
        user("u4", Some("a2"), 18, "third question"),
        restringified(&assistant("a4", Some("u4"), 21, "third answer")),
        label_line(0, "a4", None, "a1", "\"no time\""),
        label_line(1, &ids[0], Some(10), "a2", "\"changed\""),
        label_line(2, &ids[1], Some(9), "u1", "\"again\""),
        label_line(3, &ids[2], Some(17), "u2", "{\"nested\":[1,2]}"),
        label_line(4, &ids[3], Some(20), "u4", "true"),
    ];
    assert_eq!(lines, expected);
    assert_eq!(str_of(&doc, "leafId").as_deref(), Some(ids[4].as_str()));
}

/// `/fork` before a root user message starts an empty session (pi writes it at its first
/// reply), and gives the message's text blocks joined; before another user message, the path
/// up to its parent.
#[test]
fn a_fork_before_a_user_message_copies_the_path_to_its_parent() {
    let scratch = Scratch::new();
    let source = scratch.write("labels.jsonl", &labels_session());
    let out = scratch.path("out");
    let root =
        fork_command(&["--entry", "u1", "--out", path_str(&out), path_str(&source)]).unwrap();
    assert_eq!(root.get("written"), Some(&JsValue::Bool(false)));
    assert_eq!(root.get("leafId"), Some(&JsValue::Null));
    assert_eq!(
        str_of(&root, "selectedText").as_deref(),
        Some("first question!")
    );
    assert!(
        out.is_dir(),
        "the directory is made, as pi's SessionManager makes it"
    );
    assert_eq!(files_in(&out), Vec::<PathBuf>::new());

    let doc = fork_command(&["--entry", "u2", "--out", path_str(&out), path_str(&source)]).unwrap();
    assert_eq!(
        str_of(&doc, "selectedText").as_deref(),
        Some("second question!")
    );
    let file = PathBuf::from(str_of(&doc, "file").unwrap());
    let lines = lines(&file);
    assert_eq!(
        lines[1..3],
        [
            user("u1", None, 1, "first question"),
            restringified(&assistant("a1", Some("u1"), 2, "first answer"))
        ]
    );
    // The labels set on u1 and a1, the last one the leaf.
    let labels: Vec<JsValue> = lines[3..].iter().map(|l| parse(l)).collect();
    let targets: Vec<String> = labels
        .iter()
        .map(|l| str_of(l, "targetId").unwrap())
        .collect();
    assert_eq!(targets, ["a1", "u1"]);
    assert_eq!(doc.get("leafId"), labels[1].get("id"));
}

#[test]
fn forks_pi_refuses_are_refused_with_its_messages() {
    let scratch = Scratch::new();
    let labels = scratch.write("labels.jsonl", &labels_session());
    let quiet = scratch.write("quiet.jsonl", &no_assistant_session());
    let out = scratch.path("out");
    let refused = |file: &Path, entry: &str, at: bool| {
        let mut args = vec!["--entry", entry, "--out", path_str(&out), path_str(file)];
        if at {
            args.push("--at");
        }
        fork_command(&args).unwrap_err()
    };
    let message =
        |file: &Path, text: &str| (1, format!("pi-session: {}: {text}\n", file.display()));
    assert_eq!(
        refused(&labels, "nope", false),
        message(&labels, INVALID_FORK_TARGET)
    );
    assert_eq!(
        refused(&labels, "nope", true),
        message(&labels, INVALID_FORK_TARGET)
    );
    // Only user messages can be forked before.
    assert_eq!(
        refused(&labels, "a1", false),
        message(&labels, INVALID_FORK_TARGET)
    );
    assert_eq!(
        refused(&labels, "l1", false),
        message(&labels, INVALID_FORK_TARGET)
    );
    // A user message whose parent is gone: createBranchedSession finds no path.
    assert_eq!(
        refused(&quiet, "q5", false),
        message(&quiet, "Entry gone not found")
    );
    assert_eq!(files_in(&out), Vec::<PathBuf>::new());
    // A path without an assistant message is not written (pi writes it at the first reply).
    let doc = fork_command(&[
        "--entry",
        "q4",
        "--at",
        "--out",
        path_str(&out),
        path_str(&quiet),
    ])
    .unwrap();
    assert_eq!(doc.get("written"), Some(&JsValue::Bool(false)));
    assert!(!PathBuf::from(str_of(&doc, "file").unwrap()).exists());
    assert_eq!(files_in(&out), Vec::<PathBuf>::new());
}

// ---------------------------------------------------------------------------------------------
// forkFrom (pi's --fork), through `session/forkFrom`

/// `pi-session --stdio` (ndjson) started in `dir` with `dir/home` as its home: `initialize`,
/// then each `(method, params)` once the one before is answered, then `shutdown` and `exit`;
/// the answers to the requests.
fn rpc(dir: &Path, requests: &[(&str, serde_json::Value)]) -> Vec<serde_json::Value> {
    let mut client = PipeClient::spawn_with(Wire::Ndjson, |command| {
        command
            .current_dir(dir)
            .env("HOME", dir.join("home"))
            .env_remove("PI_CODING_AGENT_DIR");
    });
    let mut no_hooks = |hook: &str, _: &serde_json::Value| -> serde_json::Value {
        panic!("unexpected hook {hook}")
    };
    client.call("initialize", serde_json::json!({}));
    let answers = requests
        .iter()
        .map(|(method, params)| client.call_with(method, params.clone(), &mut no_hooks))
        .collect();
    assert_eq!(
        client.call("shutdown", serde_json::Value::Null),
        serde_json::Value::Null
    );
    assert!(
        client.notifications.is_empty(),
        "each answer comes next: {:?}",
        client.notifications
    );
    let status = client.exit();
    assert_eq!(status, Some(0), "pi-session --stdio exited with {status:?}");
    answers
}

fn fork_from_request(
    source: &Path,
    cwd: &str,
    dir: &Path,
    id: Option<&str>,
) -> (&'static str, serde_json::Value) {
    let mut params = serde_json::json!({"sourcePath": path_str(source), "cwd": cwd, "sessionDir": path_str(dir)});
    if let Some(id) = id {
        params["id"] = id.into();
    }
    ("session/forkFrom", params)
}

fn pi_fork_from_args(source: &Path, cwd: &str, dir: &Path, id: Option<&str>) -> Vec<String> {
    let mut args = vec![
        "forkFrom".into(),
        path_str(source).into(),
        cwd.into(),
        path_str(dir).into(),
    ];
    args.extend(id.map(str::to_string));
    args
}

/// The source's entries as pi's `forkFrom` copies them: every parsed, truthy value but those of
/// type "session", re-serialized.
fn copied_by_pi(source: &Path) -> Vec<String> {
    let bytes = std::fs::read(source).unwrap();
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| json::parse_bytes(line).ok())
        .filter(|v| v.is_truthy() && str_of(v, "type").as_deref() != Some("session"))
        .map(|v| v.stringify())
        .collect()
}

/// Header, a user message, a second `session` line, an assistant message.
fn two_headers_session() -> String {
    file_text(&[
        header("twice"),
        user("t1", None, 1, "before the second header"),
        header("second"),
        assistant("t2", Some("t1"), 2, "after it"),
    ])
}

const TARGET_CWD: &str = "/tmp/fork from/other project";

/// `forkFrom` of every kind of source: v3 (and v4) sources are copied entry for entry as pi
/// copies them; v1 and v2 sources are migrated first here, so the copy has ids (pi copies v1
/// entries without any, and v2 `hookMessage` roles under a v3 header): this program's copy is
/// pi's migration of the source, pi's copy the source's lines as they are.
#[test]
fn fork_from_matches_pi() {
    if !pi_available("fork_from_matches_pi") {
        return;
    }
    let scratch = Scratch::new();
    let mut sources = hand_made_sources(&scratch);
    sources.push(Source::new(
        "two headers",
        scratch.write("hand/two-headers.jsonl", &two_headers_session()),
    ));
    sources.push(Source::new(
        "empty",
        root()
            .join("tests/files/empty.jsonl")
            .canonicalize()
            .unwrap(),
    ));
    sources.extend(replay_sources(&scratch));
    sources.extend(generated_sources(&scratch, &[5]));
    sources.extend(fixture_sources());
    sources.extend(migrated_fixture_sources(&scratch));
    let version = |source: &Source| {
        let header = lines(&source.path).into_iter().find_map(|l| {
            json::parse(&l)
                .ok()
                .filter(|v| str_of(v, "type").as_deref() == Some("session"))
        });
        header.and_then(|h| h.get("version").and_then(JsValue::as_f64))
    };
    let out = |side: &str, i: usize| scratch.path(&format!("fork-from/{side}/{i}"));
    let pi_jobs: Vec<Vec<String>> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| pi_fork_from_args(&s.path, TARGET_CWD, &out("pi", i), None))
        .collect();
    let pi_results = pi_forks(&scratch, "fork-from", &pi_jobs);
    // pi's own migration of the v1 and v2 sources: what this program copies.
    let old: Vec<usize> = (0..sources.len())
        .filter(|&i| version(&sources[i]).is_none_or(|v| v < 3.0))
        .collect();
    let migrate_jobs: Vec<Vec<String>> = old
        .iter()
        .map(|&i| {
            let dir = scratch.path(&format!("fork-from/migrated/{i}"));
            vec![
                "migrated".into(),
                path_str(&sources[i].path).into(),
                path_str(&dir).into(),
            ]
        })
        .collect();
    let migrated: HashMap<usize, PathBuf> = old
        .iter()
        .zip(pi_forks(&scratch, "fork-from-migrated", &migrate_jobs))
        .map(|(&i, result)| (i, PathBuf::from(str_of(&result, "file").unwrap())))
        .collect();
    let requests: Vec<(&str, serde_json::Value)> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| fork_from_request(&s.path, TARGET_CWD, &out("ours", i), None))
        .collect();
    let answers = rpc(&scratch.path(""), &requests);
    let (mut same, mut migrated_here) = (0, 0);
    for (i, ((source, pi), answer)) in sources.iter().zip(&pi_results).zip(&answers).enumerate() {
        let what = format!("forkFrom {}", source.name);
        if let Some(message) = str_of(pi, "error") {
            assert_eq!(
                answer["error"]["message"],
                message.as_str(),
                "{what}: the error"
            );
            assert_eq!(
                files_in(&out("ours", i)),
                Vec::<PathBuf>::new(),
                "{what}: nothing written"
            );
            continue;
        }
        let result = &answer["result"];
        assert_eq!(result["written"], true, "{what}: {answer}");
        let file = PathBuf::from(result["path"].as_str().unwrap());
        assert_eq!(
            files_in(&out("ours", i)),
            vec![file.clone()],
            "{what}: the new file"
        );
        let pi_file = PathBuf::from(str_of(pi, "file").unwrap());
        assert_eq!(pi.get("written"), Some(&JsValue::Bool(true)));
        let (ours, pis) = (lines(&file), lines(&pi_file));
        // The header: a new id and timestamp, the target cwd, the source as the parent.
        assert_eq!(
            ours[0],
            with_values_of(&pis[0], &ours[0], &["id", "timestamp"]),
            "{what}: header"
        );
        let header = parse(&ours[0]);
        assert_eq!(str_of(&header, "cwd").as_deref(), Some(TARGET_CWD));
        assert_eq!(
            str_of(&header, "parentSession").as_deref(),
            Some(path_str(&source.path))
        );
        assert_eq!(
            str_of(&header, "id").as_deref(),
            result["sessionId"].as_str()
        );
        assert_eq!(
            pis[1..],
            copied_by_pi(&source.path),
            "{what}: pi copies the lines as they are"
        );
        let our_leaf = result["leafId"].as_str().map(str::to_string);
        match migrated.get(&i) {
            None => {
                same += 1;
                assert_eq!(ours.len(), pis.len(), "{what}: entries");
                for (n, (o, p)) in ours.iter().zip(&pis).enumerate().skip(1) {
                    assert_eq!(o, p, "{what}: line {}", n + 1);
                }
                assert_eq!(
                    our_leaf,
                    source.folded_leaf(str_of(pi, "leafId")),
                    "{what}: leaf"
                );
            }
            Some(migrated) => {
                migrated_here += 1;
                let expected = lines(migrated);
                assert_eq!(ours.len(), expected.len(), "{what}: entries");
                let ids: HashMap<String, String> = ours[1..]
                    .iter()
                    .zip(&expected[1..])
                    .map(|(o, m)| {
                        (
                            str_of(&parse(m), "id").unwrap(),
                            str_of(&parse(o), "id").unwrap(),
                        )
                    })
                    .collect();
                for (n, (o, m)) in ours.iter().zip(&expected).enumerate().skip(1) {
                    assert_eq!(
                        o,
                        &translated(m, &ids),
                        "{what}: line {} is pi's migration",
                        n + 1
                    );
                }
                assert_ne!(ours[1..], pis[1..], "{what}: pi's copy is not migrated");
                if version(source).is_none() {
                    assert!(
                        pis[1..].iter().all(|l| parse(l).get("id").is_none()),
                        "{what}: pi's v1 copy has no ids"
                    );
                    assert_eq!(pi.get("leafId"), Some(&JsValue::Null), "{what}: pi's leaf");
                } else {
                    assert!(
                        pis.iter().any(|l| l.contains(r#""role":"hookMessage""#)),
                        "{what}: pi keeps v2 roles"
                    );
                    assert!(
                        !ours.iter().any(|l| l.contains(r#""role":"hookMessage""#)),
                        "{what}: migrated"
                    );
                }
                assert_eq!(
                    our_leaf,
                    str_of(&parse(ours.last().unwrap()), "id"),
                    "{what}: leaf"
                );
            }
        }
    }
    eprintln!("forkFrom: {same} sources copied as pi copies them, {migrated_here} migrated first");
    assert!(
        same >= 20 && migrated_here >= 4,
        "{same} copied, {migrated_here} migrated"
    );
}

/// Sources pi cannot fork from, and session ids it refuses: the same errors here (without
/// Node, against pi's messages as written in its code).
#[test]
fn fork_from_errors_are_pis() {
    let scratch = Scratch::new();
    let invalid = |path: &Path| {
        format!(
            "Cannot fork: source session file is empty or invalid: {}",
            path.display()
        )
    };
    let bad_id = "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character";
    let good = scratch.write("good.jsonl", &labels_session());
    let cases: Vec<(PathBuf, Option<&str>, String)> = vec![
        (scratch.path("missing.jsonl"), None, invalid(&scratch.path("missing.jsonl"))),
        (scratch.write("empty.jsonl", ""), None, invalid(&scratch.path("empty.jsonl"))),
        (scratch.write("blank.jsonl", "\n  \n\t\n"), None, invalid(&scratch.path("blank.jsonl"))),
        (scratch.write("garbage.jsonl", "garbage\n{bad\n"), None, invalid(&scratch.path("garbage.jsonl"))),
        (
            scratch.write("no-header.jsonl", &file_text(&[user("m", None, 1, "x"), header("late")])),
            None,
            invalid(&scratch.path("no-header.jsonl")),
        ),
        (
            scratch.write("number-id.jsonl", r#"{"type":"session","version":3,"id":42,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#),
            None,
            invalid(&scratch.path("number-id.jsonl")),
        ),
        (good.clone(), Some("bad id"), bad_id.into()),
        (good.clone(), Some(""), bad_id.into()),
        (good.clone(), Some("-lead"), bad_id.into()),
        (good.clone(), Some("trail."), bad_id.into()),
    ];
    let out = |side: &str, i: usize| scratch.path(&format!("{side}/{i}"));
    let requests: Vec<_> = cases
        .iter()
        .enumerate()
        .map(|(i, (source, id, _))| fork_from_request(source, TARGET_CWD, &out("ours", i), *id))
        .collect();
    let answers = rpc(&scratch.path(""), &requests);
    for (i, ((source, id, message), answer)) in cases.iter().zip(&answers).enumerate() {
        let what = format!("forkFrom {} (id {id:?})", source.display());
        assert_eq!(
            answer["error"]["message"],
            message.as_str(),
            "{what}: {answer}"
        );
        let kind = if id.is_some() {
            "invalid_argument"
        } else {
            "invalid_session"
        };
        assert_eq!(answer["error"]["data"]["kind"], kind, "{what}");
        assert_eq!(
            files_in(&out("ours", i)),
            Vec::<PathBuf>::new(),
            "{what}: nothing written"
        );
    }
    // A valid id of the caller's names the session and its file.
    let answer = &rpc(
        &scratch.path(""),
        &[fork_from_request(
            &good,
            TARGET_CWD,
            &out("ours", 99),
            Some("a.b_c-9"),
        )],
    )[0];
    assert_eq!(answer["result"]["sessionId"], "a.b_c-9");
    let file = PathBuf::from(answer["result"]["path"].as_str().unwrap());
    assert!(
        file.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with("_a.b_c-9.jsonl")
    );
    assert_eq!(
        str_of(&parse(&lines(&file)[0]), "id").as_deref(),
        Some("a.b_c-9")
    );

    // A directory: pi fails reading it with Node's raw error (below); here an io error names it.
    let dir = scratch.path("dir.jsonl");
    std::fs::create_dir_all(&dir).unwrap();
    let answer = &rpc(
        &scratch.path(""),
        &[fork_from_request(&dir, TARGET_CWD, &out("ours", 100), None)],
    )[0];
    assert_eq!(
        answer["error"]["message"],
        format!("{}: is a directory", dir.display())
    );
    assert_eq!(answer["error"]["data"]["kind"], "io");

    if !pi_available("fork_from_errors_are_pis") {
        return;
    }
    let jobs: Vec<Vec<String>> = cases
        .iter()
        .enumerate()
        .map(|(i, (source, id, _))| pi_fork_from_args(source, TARGET_CWD, &out("pi", i), *id))
        .collect();
    for ((source, id, message), pi) in cases.iter().zip(pi_forks(&scratch, "errors", &jobs)) {
        assert_eq!(
            str_of(&pi, "error").as_deref(),
            Some(message.as_str()),
            "pi: forkFrom {} (id {id:?})",
            source.display()
        );
    }
    let pi = &pi_forks(
        &scratch,
        "directory",
        &[pi_fork_from_args(&dir, TARGET_CWD, &out("pi", 100), None)],
    )[0];
    assert_eq!(
        str_of(pi, "error").as_deref(),
        Some("EISDIR: illegal operation on a directory, read")
    );
}

/// `session/fork` of a pi-cli session: pi re-opens the file to fork it, so the new session's
/// cwd is the header's resolved (against the current directory, `~` against the home), as the
/// command line's fork has it (compared with pi's in `forks_of_hand_made_sessions_match_pi`).
#[test]
fn an_rpc_fork_resolves_the_header_cwd_as_pi_does() {
    use serde_json::json;
    let scratch = Scratch::new();
    let cases = [
        (
            "relative",
            r#""relative/dir""#,
            path_str(&scratch.path("relative/dir")).to_string(),
        ),
        (
            "home",
            r#""~/proj""#,
            path_str(&scratch.path("home/proj")).to_string(),
        ),
        (
            "dots",
            r#""/work/x/../hand made/./""#,
            "/work/hand made".to_string(),
        ),
        ("missing", "null", path_str(&scratch.path("")).to_string()),
    ];
    let mut requests = Vec::new();
    for (id, cwd, _) in &cases {
        let text = file_text(&[
            format!(
                r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{}","cwd":{cwd}}}"#,
                ts(0)
            ),
            user("c1", None, 1, "where am I"),
            assistant("c2", Some("c1"), 2, "here"),
        ]);
        let path = scratch.write(&format!("sessions/{id}.jsonl"), &text);
        requests.push(("session/open", json!({"path": path_str(&path)})));
        requests.push((
            "session/fork",
            json!({"sessionId": id, "entryId": "c2", "position": "at"}),
        ));
    }
    let answers = rpc(&scratch.path(""), &requests);
    for ((id, _, expected), answers) in cases.iter().zip(answers.chunks(2)) {
        assert_eq!(answers[0]["result"]["sessionId"], *id, "{answers:?}");
        let forked = &answers[1]["result"]["session"];
        assert_eq!(forked["written"], true, "{id}: {answers:?}");
        assert_eq!(forked["header"]["cwd"], expected.as_str(), "{id}");
        let file = PathBuf::from(forked["path"].as_str().unwrap());
        let header = parse(&lines(&file)[0]);
        assert_eq!(
            str_of(&header, "cwd").as_deref(),
            Some(expected.as_str()),
            "{id}"
        );
    }
}

/// Where `forkFrom` puts the copy and what its header says, for relative and `~` spellings
/// of the source, the target cwd and the session directory, and without a session directory
/// (the target cwd's directory under `~/.pi/agent/sessions`).
#[test]
fn fork_from_resolves_paths_as_pi_does() {
    if !pi_available("fork_from_resolves_paths_as_pi_does") {
        return;
    }
    let scratch = Scratch::new();
    scratch.write("src.jsonl", &labels_session());
    let source = Path::new("./src.jsonl");
    let cases: [(&str, Option<&str>); 5] = [
        ("rel/proj", None),
        ("~/proj", None),
        ("/a/../b/./", None),
        ("/x/y", Some("sd/rel")),
        ("/x/y", Some("~/sd")),
    ];
    let jobs: Vec<Vec<String>> = cases
        .iter()
        .map(|(cwd, dir)| {
            let mut args = vec![
                "forkFrom".to_string(),
                path_str(source).into(),
                cwd.to_string(),
            ];
            args.extend(dir.map(str::to_string));
            args
        })
        .collect();
    let pis = pi_forks(&scratch, "paths", &jobs);
    let requests: Vec<_> = cases
        .iter()
        .map(|(cwd, dir)| {
            let mut params = serde_json::json!({"sourcePath": path_str(source), "cwd": cwd});
            if let Some(dir) = dir {
                params["sessionDir"] = (*dir).into();
            }
            ("session/forkFrom", params)
        })
        .collect();
    let answers = rpc(&scratch.path(""), &requests);
    for (((cwd, dir), pi), answer) in cases.iter().zip(&pis).zip(&answers) {
        let what = format!("forkFrom cwd {cwd} session dir {dir:?}");
        let pi_file = PathBuf::from(str_of(pi, "file").unwrap_or_else(|| panic!("{what}: {pi:?}")));
        let file = PathBuf::from(answer["result"]["path"].as_str().unwrap());
        assert_eq!(file.parent(), pi_file.parent(), "{what}: the directory");
        let (ours, pis) = (lines(&file), lines(&pi_file));
        assert_eq!(
            ours[0],
            with_values_of(&pis[0], &ours[0], &["id", "timestamp"]),
            "{what}: header"
        );
        assert_eq!(ours[1..], pis[1..], "{what}: entries");
    }
    // The expected spellings, for the record.
    let home = scratch.path("home");
    let here = scratch.path("");
    let header =
        |n: usize| parse(&lines(Path::new(answers[n]["result"]["path"].as_str().unwrap()))[0]);
    assert_eq!(
        str_of(&header(0), "cwd"),
        Some(format!("{}/rel/proj", here.display()))
    );
    assert_eq!(
        str_of(&header(1), "cwd"),
        Some(format!("{}/proj", home.display()))
    );
    assert_eq!(str_of(&header(2), "cwd").as_deref(), Some("/b"));
    assert_eq!(
        str_of(&header(3), "parentSession"),
        Some(format!("{}/src.jsonl", here.display()))
    );
}
