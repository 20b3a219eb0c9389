//! Tree navigation (`/tree`, spec section 8) checked against pi's own code.
//!
//! `tests/oracle/pi-navigate.mjs` runs pi's own `AgentSession.navigateTree` (on the oracle's Node
//! 22, which its module needs) with pi's `SessionManager` under it; a ready
//! summary stands in for the one a `session_before_tree` extension returns. This program runs
//! the store API (`prepare_tree`, `decide` with that summary as the hook's answer,
//! `apply_navigation`) on another copy of the same file. For the oracle's replays of
//! `tests/ops/` and a generated session, a spread of targets and four option sets, the common
//! ancestor, the abandoned entries, the editor text, the new leaf and the written files (after
//! the oracle's `normalize`) must be the same.
//!
//! The suite installs pi's code itself; with `PI_SESSION_NO_ORACLE=1` these tests fail, naming it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::harness::Shared;
use crate::support;
use libtest_mimic::Trial;

use support::{Oracle, notice, path_str, root, str_of};

use pi_session::Profile;
use pi_session::json::{self, JsValue};
use pi_session::session::IdSource;
use pi_session::session::{
    Session, SessionOptions, SummaryInput, TreeDecision, TreeHookAnswer, TreeRequest, decide,
};

const SUMMARY: &str = "What was left behind.";
const LABEL: &str = "bookmark";

/// The session files the oracle's `replay --impl manager` writes for `tests/ops/*.json`.
fn replay_sources(oracle: &Oracle, dir: &Path, profile: Profile) -> Vec<PathBuf> {
    let implementation = match profile {
        Profile::Pi16 => "manager-1.6",
        _ => "manager",
    };
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(root().join("tests/ops"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    scripts.sort();
    let outs: Vec<PathBuf> = scripts
        .iter()
        .map(|s| dir.join("replays").join(s.file_stem().unwrap()))
        .collect();
    let jobs: Vec<Vec<String>> = scripts
        .iter()
        .zip(&outs)
        .map(|(script, out)| {
            [
                "replay",
                path_str(script),
                path_str(out),
                "--impl",
                implementation,
            ]
            .map(str::to_string)
            .to_vec()
        })
        .collect();
    let _ = oracle.run(jobs);
    outs.iter()
        .filter_map(|out| {
            let entries = std::fs::read_dir(out).ok()?;
            entries
                .map(|e| e.unwrap().path())
                .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        })
        .collect()
}

/// A session from the generator (`tests/oracle/gen-session.mjs`).
fn generated_source(oracle: &Oracle, dir: &Path, seed: u32) -> PathBuf {
    let out = dir.join(format!("generated-{seed}.jsonl"));
    let seed = seed.to_string();
    let args = ["file", "--out", path_str(&out), "--size", "300KB"];
    let args = args
        .into_iter()
        .chain(["--seed", &seed, "--branch-every", "4"]);
    support::generate(oracle, &args.map(std::ffi::OsStr::new).collect::<Vec<_>>());
    out
}

/// One entry of a source file.
struct Entry {
    id: String,
    parent: Option<String>,
    /// `type`, or `message/<role>`.
    kind: String,
}

fn entries_of(file: &Path) -> Vec<Entry> {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .filter_map(|line| {
            let value = json::parse(line).ok()?;
            let kind = str_of(&value, "type").unwrap_or_default();
            let kind = match value.get("message").and_then(|m| str_of(m, "role")) {
                Some(role) if kind == "message" => format!("message/{role}"),
                _ => kind,
            };
            Some(Entry {
                id: str_of(&value, "id")?,
                parent: str_of(&value, "parentId"),
                kind,
            })
        })
        .collect()
}

/// The targets of a source: user messages on and off the current path, an assistant message, a
/// root user message, a custom message, the leaf, a compaction, a label, a branch summary.
/// The kinds of target, in the order [`targets`] picks them (the trials' names).
const TARGET_KINDS: [&str; 11] = [
    "first-user-on-path",
    "last-user-on-path",
    "user-off-path",
    "assistant-off-path",
    "assistant",
    "root-user",
    "custom-message",
    "leaf",
    "compaction",
    "label",
    "branch-summary",
];

/// The option sets (summarize, a summary given, a label), named.
const OPTION_SETS: [(&str, bool, bool, bool); 5] = [
    ("plain", false, false, false),
    ("summarized", true, true, false),
    ("labelled", false, false, true),
    ("summarized-labelled", true, true, true),
    ("summary-unasked", false, true, false),
];

/// Each kind of target: the entry picked (`Ok(id)`), or why there is none in this source
/// (`Err`): no such entry, or the one an earlier kind picked (compared under that name).
fn targets(entries: &[Entry]) -> Vec<(&'static str, Result<String, String>)> {
    let by_id: HashMap<&str, &Entry> = entries.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut on_path = HashSet::new();
    let mut current = entries.last().map(|e| e.id.as_str());
    while let Some(id) = current.filter(|id| on_path.insert(*id)) {
        current = by_id.get(id).and_then(|e| e.parent.as_deref());
    }
    let first = |pick: &dyn Fn(&Entry) -> bool| entries.iter().find(|e| pick(e));
    let user = |e: &Entry| e.kind == "message/user";
    let picks = [
        first(&|e| user(e) && e.parent.is_some() && on_path.contains(e.id.as_str())),
        entries
            .iter()
            .rev()
            .find(|e| user(e) && e.parent.is_some() && on_path.contains(e.id.as_str())),
        first(&|e| user(e) && !on_path.contains(e.id.as_str())),
        first(&|e| e.kind == "message/assistant" && !on_path.contains(e.id.as_str())),
        first(&|e| e.kind == "message/assistant"),
        first(&|e| user(e) && e.parent.is_none()),
        first(&|e| e.kind == "custom_message"),
        entries.last(),
        first(&|e| e.kind == "compaction"),
        first(&|e| e.kind == "label"),
        first(&|e| e.kind == "branch_summary"),
    ];
    let mut seen: HashMap<String, &str> = HashMap::new();
    TARGET_KINDS
        .into_iter()
        .zip(picks)
        .map(|(kind, pick)| {
            let target = match pick {
                None => Err(format!("no {kind} entry in this source")),
                Some(e) => match seen.get(&e.id) {
                    Some(first) => Err(format!("the entry {first} picked, compared there")),
                    None => {
                        seen.insert(e.id.clone(), kind);
                        Ok(e.id.clone())
                    }
                },
            };
            (kind, target)
        })
        .collect()
}

/// One navigation to compare.
struct Case {
    /// The trial's name: `<source>::<target kind>::<option set>`.
    key: String,
    source: PathBuf,
    target: String,
    summarize: bool,
    summary: bool,
    label: bool,
}

impl Case {
    fn what(&self) -> String {
        format!(
            "{} -> {} (summarize {}, summary {}, label {})",
            self.source.file_name().unwrap().to_string_lossy(),
            self.target,
            self.summarize,
            self.summary,
            self.label
        )
    }

    fn options(&self) -> JsValue {
        let mut map = json::JsObject::new();
        map.insert("summarize".into(), JsValue::Bool(self.summarize));
        if self.summary {
            map.insert("summary".into(), JsValue::from(SUMMARY));
        }
        if self.label {
            map.insert("label".into(), JsValue::from(LABEL));
        }
        JsValue::Object(map)
    }
}

/// What one program did, ids of new entries named by their line in the written file.
#[derive(Debug, PartialEq)]
struct Navigation {
    common_ancestor: Option<String>,
    abandoned: Vec<String>,
    editor_text: Option<String>,
    new_leaf: Option<String>,
    summary_entry: Option<String>,
    file: PathBuf,
}

/// `id` if the source has it, else `new@LINE` (its line in `file`), as fresh ids differ.
fn stable_id(id: Option<&str>, source: &HashSet<String>, file: &Path) -> Option<String> {
    let id = id?;
    if source.contains(id) {
        return Some(id.to_string());
    }
    let text = std::fs::read_to_string(file).unwrap();
    let needle = format!("\"id\":\"{id}\"");
    let line = text.lines().position(|l| l.contains(&needle));
    Some(format!("new@{line:?}"))
}

fn ours(
    case: &Case,
    copy: &Path,
    source_ids: &HashSet<String>,
    profile: Profile,
) -> Result<Navigation, String> {
    let options = SessionOptions {
        profile,
        ids: Arc::new(IdSource::system()),
        ..SessionOptions::default()
    };
    let mut session = Session::open(copy, "/", options).map_err(|e| e.to_string())?;
    let request = TreeRequest {
        target_id: case.target.clone(),
        summarize: case.summarize,
        label: case.label.then(|| LABEL.to_string()),
        ..TreeRequest::default()
    };
    let old_leaf = session.leaf().id().map(str::to_string);
    let Some(preparation) = session.prepare_tree(&request).map_err(|e| e.to_string())? else {
        return Ok(Navigation {
            common_ancestor: None,
            abandoned: Vec::new(),
            editor_text: None,
            new_leaf: old_leaf,
            summary_entry: None,
            file: copy.to_path_buf(),
        });
    };
    let hook = case.summary.then(|| TreeHookAnswer {
        summary: Some(SummaryInput {
            summary: JsValue::from(SUMMARY),
            details: None,
            usage: None,
        }),
        ..TreeHookAnswer::default()
    });
    let abandoned = preparation
        .entries_to_summarize
        .iter()
        .map(|&p| {
            let value = session.entry_value(p).map_err(|e| e.to_string())?;
            Ok(str_of(&value, "id").unwrap_or_default())
        })
        .collect::<Result<Vec<_>, String>>()?;
    let decision = decide(profile, &preparation, hook, None).map_err(|e| e.to_string())?;
    assert!(matches!(decision, TreeDecision::Proceed { .. }));
    let outcome = session
        .apply_navigation(&preparation, &decision)
        .map_err(|e| e.to_string())?
        .expect("not cancelled");
    drop(session);
    let summary_id = outcome.summary_entry.as_ref().and_then(|s| str_of(s, "id"));
    Ok(Navigation {
        common_ancestor: preparation.common_ancestor_id.clone(),
        abandoned,
        editor_text: outcome.editor_text.clone(),
        new_leaf: stable_id(outcome.new_leaf.id(), source_ids, copy),
        summary_entry: stable_id(summary_id.as_deref(), source_ids, copy),
        file: copy.to_path_buf(),
    })
}

fn pi(doc: &JsValue, source_ids: &HashSet<String>) -> Result<Navigation, String> {
    if let Some(error) = str_of(doc, "error") {
        return Err(error);
    }
    let file = PathBuf::from(str_of(doc, "copy").unwrap());
    let abandoned = match doc.get("entriesToSummarize") {
        Some(JsValue::Array(ids)) => ids
            .iter()
            .map(|v| v.as_str().unwrap().into_owned())
            .collect(),
        _ => Vec::new(),
    };
    Ok(Navigation {
        common_ancestor: str_of(doc, "commonAncestorId"),
        abandoned,
        editor_text: str_of(doc, "editorText"),
        new_leaf: stable_id(str_of(doc, "newLeafId").as_deref(), source_ids, &file),
        summary_entry: stable_id(str_of(doc, "summaryEntryId").as_deref(), source_ids, &file),
        file,
    })
}

/// The outcome of one case, decided in the shared run.
enum Outcome {
    /// Compared: the mismatches found (none: the same as pi), and the comparisons counted (both
    /// navigated: 1; both refused: 0, as before the sweep was split).
    Compared(Vec<String>, usize),
    /// pi throws on null content where this program navigates (a known divergence).
    Known(String),
    /// The case does not exist in this source (the reason).
    Absent(String),
}

/// A sweep's outcomes by case name (`<source>::<target kind>::<option set>`).
type Outcomes = HashMap<String, Outcome>;

static PI: Shared<Outcomes> =
    Shared::new(|| navigations("tree_navigation_matches_pi", Profile::PiCli));

/// The same cases in the pi-1.6 profile against pi 1.6's own `navigateTree` (its summary
/// entries record the old leaf in `fromId`), with the pi 1.6 op script's file among the sources.
static PI_16: Shared<Outcomes> =
    Shared::new(|| navigations("tree_navigation_matches_pi_16", Profile::Pi16));

/// The names of the sources, known before pi's code runs: the op scripts' stems, then the
/// generated session.
fn source_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("tests/ops"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names.push("generated-7".to_owned());
    names
}

/// The name of a source file: its op script's stem (the replay's folder), or its own stem.
fn source_name(file: &Path, dir: &Path) -> String {
    let parent = file.parent().unwrap();
    if parent.parent() == Some(&dir.join("replays")) {
        parent.file_name().unwrap().to_string_lossy().into_owned()
    } else {
        file.file_stem().unwrap().to_string_lossy().into_owned()
    }
}

/// One trial per case: `navigate_conformance::tree_navigation_matches_pi[_16]::<source>::
/// <target kind>::<option set>`; a case whose target this source lacks is reported as ignored,
/// with that reason.
fn navigation_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for (test, sweep) in [
        ("tree_navigation_matches_pi", &PI),
        ("tree_navigation_matches_pi_16", &PI_16),
    ] {
        for source in source_names() {
            for kind in TARGET_KINDS {
                for (option, ..) in OPTION_SETS {
                    let key = format!("{source}::{kind}::{option}");
                    let name = format!("navigate_conformance::{test}::{key}");
                    trials.push(crate::harness::with_pi_or_absent(name, move || {
                        check(test, sweep.get(), &key)
                    }));
                }
            }
        }
    }
    trials
}

fn check(test: &str, outcomes: &Outcomes, key: &str) -> Result<(), String> {
    match outcomes.get(key) {
        None => Err(format!("pi's replay wrote no session for {key}")),
        Some(Outcome::Absent(reason)) => Err(reason.clone()),
        Some(Outcome::Known(what)) => {
            notice(&format!(
                "{test}: {what}: pi throws on null content and this program navigates (known divergence)"
            ));
            Ok(())
        }
        Some(Outcome::Compared(mismatches, counted)) => {
            crate::harness::tally(test, *counted);
            assert!(
                mismatches.is_empty(),
                "{} mismatches:\n{}",
                mismatches.len(),
                mismatches.join("\n")
            );
            Ok(())
        }
    }
}

/// Runs every case of a sweep: pi's navigations in one Node process, this program's each on its
/// own copy, the written files normalized by one more run of pi's code.
fn navigations(test: &str, profile: Profile) -> Outcomes {
    let Some(oracle) = support::oracle(test) else {
        unreachable!("support::oracle never answers None");
    };
    let mut outcomes = Outcomes::new();
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().canonicalize().unwrap();
    let mut sources = replay_sources(oracle, &dir, profile);
    assert!(sources.len() >= 4, "the oracle replayed too few scripts");
    sources.push(generated_source(oracle, &dir, 7));

    let mut cases = Vec::new();
    let mut ids_of = HashMap::new();
    for source in &sources {
        let entries = entries_of(source);
        let name = source_name(source, &dir);
        ids_of.insert(
            source.clone(),
            entries.iter().map(|e| e.id.clone()).collect::<HashSet<_>>(),
        );
        for (kind, target) in targets(&entries) {
            for (option, summarize, summary, label) in OPTION_SETS {
                let key = format!("{name}::{kind}::{option}");
                let target = match &target {
                    Ok(target) => target,
                    Err(reason) => {
                        outcomes.insert(key, Outcome::Absent(reason.clone()));
                        continue;
                    }
                };
                cases.push(Case {
                    key,
                    source: source.clone(),
                    target: target.clone(),
                    summarize,
                    summary,
                    label,
                });
            }
        }
    }

    // pi, in one Node process.
    let jobs: Vec<JsValue> = cases
        .iter()
        .map(|c| {
            JsValue::Array(vec![
                JsValue::from(path_str(&c.source)),
                JsValue::from(c.target.as_str()),
                c.options(),
            ])
        })
        .collect();
    let jobs_file = dir.join("navigate-jobs.json");
    std::fs::write(&jobs_file, JsValue::Array(jobs).stringify()).unwrap();
    let mut command = oracle.command("pi-navigate.mjs");
    if profile == Profile::Pi16 {
        command.env("PI_NAVIGATE_VERSION", "1.6");
    }
    command.arg(oracle.dir()).arg("batch").arg(&jobs_file);
    let pi_docs = support::oracle::documents(command, "pi-navigate.mjs", cases.len());

    // This program, each on its own copy.
    let mut results = Vec::new();
    for (i, (case, pi_doc)) in cases.iter().zip(&pi_docs).enumerate() {
        let source_ids = &ids_of[&case.source];
        let copy = dir
            .join(format!("ours/{i}"))
            .join(case.source.file_name().unwrap());
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(&case.source, &copy).unwrap();
        results.push((
            pi(pi_doc, source_ids),
            ours(case, &copy, source_ids, profile),
        ));
    }

    // The written files, normalized by the oracle.
    let mut normalize_jobs = Vec::new();
    for (theirs, mine) in &results {
        if let (Ok(theirs), Ok(mine)) = (theirs, mine) {
            for file in [&theirs.file, &mine.file] {
                normalize_jobs.push(vec!["normalize".to_string(), path_str(file).to_string()]);
            }
        }
    }
    let mut normalized = oracle
        .run(normalize_jobs)
        .into_iter()
        .map(|outcome| outcome.result());

    let mut compared = 0;
    for (case, (theirs, mine)) in cases.iter().zip(&results) {
        let what = case.what();
        let mut mismatches = Vec::new();
        let mut counted = 0;
        match (theirs, mine) {
            (Ok(theirs), Ok(mine)) => {
                compared += 1;
                counted = 1;
                let pi_file = normalized.next().unwrap();
                let our_file = normalized.next().unwrap();
                let fields = [
                    (
                        "commonAncestorId",
                        format!("{:?}", theirs.common_ancestor),
                        format!("{:?}", mine.common_ancestor),
                    ),
                    (
                        "entriesToSummarize",
                        format!("{:?}", theirs.abandoned),
                        format!("{:?}", mine.abandoned),
                    ),
                    (
                        "editorText",
                        format!("{:?}", theirs.editor_text),
                        format!("{:?}", mine.editor_text),
                    ),
                    (
                        "newLeafId",
                        format!("{:?}", theirs.new_leaf),
                        format!("{:?}", mine.new_leaf),
                    ),
                    (
                        "summaryEntryId",
                        format!("{:?}", theirs.summary_entry),
                        format!("{:?}", mine.summary_entry),
                    ),
                    (
                        "normalized file",
                        format!("{pi_file:?}"),
                        format!("{our_file:?}"),
                    ),
                ];
                for (field, a, b) in fields {
                    if a != b {
                        let (a, b) = (clip(&a), clip(&b));
                        mismatches.push(format!("{what}: {field}: pi {a} / ours {b}"));
                    }
                }
            }
            (Err(a), Err(b)) => {
                if a != b {
                    mismatches.push(format!("{what}: errors differ: pi {a:?} / ours {b:?}"));
                }
            }
            // Known divergence: pi's `contentText` throws on a user / custom message whose
            // `content` is null (a TypeError, nothing written); this program navigates, with
            // editor text "". Counted and reported, not failed.
            (Err(a), Ok(_)) if a.starts_with("Cannot read properties of null") => {
                outcomes.insert(case.key.clone(), Outcome::Known(what));
                continue;
            }
            (a, b) => mismatches.push(format!(
                "{what}: pi {:?} / ours {:?}",
                a.as_ref().map(|_| "ok"),
                b.as_ref().map(|_| "ok")
            )),
        }
        outcomes.insert(case.key.clone(), Outcome::Compared(mismatches, counted));
    }
    notice(&format!(
        "{test}: {} sources, {} cases, {compared} compared",
        sources.len(),
        cases.len()
    ));
    outcomes
}

/// A long value cut for a message.
fn clip(text: &str) -> String {
    if text.len() <= 400 {
        return text.to_string();
    }
    let mut end = 400;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

crate::tests! {
    [navigation_trials]
}
