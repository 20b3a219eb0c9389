//! Compaction (issue 10) checked against pi's own compaction modules.
//!
//! `tests/oracle/pi-compaction.mjs` runs pi-coding-agent's `prepareCompaction` / `compact()`
//! (pi-cli rules) and pi-agent-core's harness copies (harness rules) with a fake model that
//! records its requests. This program runs the store's `prepare_compaction`, `requests` and
//! `context_usage` on the same files at the same leaves with the same settings, and every field
//! must be equal: the preparation byte for byte as `JSON.stringify` writes it, the file lists
//! and their text, each request's system prompt, text, `maxTokens` and `reasoning`, refusals,
//! and the context-usage figures. Sources: the hand-made edge files (`tests/files/compaction`:
//! split turns, a label before a user message, previous compactions, images, bash executions,
//! custom messages, an emoji cut at 2000 units), the real fixtures (migrated by pi), and
//! generated sessions of several sizes with compactions and branch summaries.
//!
//! with `PI_SESSION_NO_ORACLE=1` these tests fail, naming it.

use std::path::{Path, PathBuf};

use crate::harness::Shared;
use crate::support;
use libtest_mimic::Trial;

use support::compaction::{
    assert_same_estimate, assert_same_preparation, assert_same_request_text, pi_answers,
    run_pi_compaction, without_id_and_time,
};
use support::{Oracle, parse, path_str, root};

use pi_session::Profile;
use pi_session::compaction::{CompactionSettings, ModelOptions};
use pi_session::json::{JsValue, number_to_string};
use pi_session::session::{Leaf, Session, SessionOptions};

/// keepRecentTokens, reserveTokens, custom instructions, model (maxTokens, reasoning, level).
type Variant = (
    Option<f64>,
    Option<f64>,
    Option<&'static str>,
    Option<(f64, bool, &'static str)>,
);

struct Case {
    /// The source's name in the trial names (`edge::split-turn`, `real::<stem>`, `generated::2`).
    source: String,
    file: PathBuf,
    profile: Profile,
    leaf: Option<String>,
    keep: Option<f64>,
    reserve: Option<f64>,
    custom: Option<&'static str>,
    model: Option<(f64, bool, &'static str)>,
}

impl Case {
    fn settings(&self) -> CompactionSettings {
        let mut s = CompactionSettings::default();
        if let Some(k) = self.keep {
            s.keep_recent_tokens = k;
        }
        if let Some(r) = self.reserve {
            s.reserve_tokens = r;
        }
        s
    }

    fn to_value(&self, op: &str) -> JsValue {
        let mut text = format!(
            r#"{{"op":"{op}","file":{},"impl":"{}""#,
            JsValue::from(path_str(&self.file)).stringify(),
            if self.profile == Profile::Harness {
                "harness"
            } else {
                "manager"
            }
        );
        if let Some(leaf) = &self.leaf {
            text.push_str(&format!(
                r#","leaf":{}"#,
                JsValue::from(leaf.as_str()).stringify()
            ));
        }
        let mut compaction = Vec::new();
        if let Some(k) = self.keep {
            compaction.push(format!(r#""keepRecentTokens":{}"#, number_to_string(k)));
        }
        if let Some(r) = self.reserve {
            compaction.push(format!(r#""reserveTokens":{}"#, number_to_string(r)));
        }
        text.push_str(&format!(
            r#","settings":{{"compaction":{{{}}}}}"#,
            compaction.join(",")
        ));
        if let Some(c) = self.custom {
            text.push_str(&format!(
                r#","customInstructions":{}"#,
                JsValue::from(c).stringify()
            ));
        }
        if let Some((max, reasoning, level)) = self.model {
            text.push_str(&format!(
                r#","model":{{"maxTokens":{},"reasoning":{reasoning}}},"thinkingLevel":"{level}""#,
                number_to_string(max)
            ));
        }
        if op == "usage" {
            text.push_str(r#","window":30000"#);
        }
        text.push('}');
        parse(&text)
    }

    fn describe(&self) -> String {
        format!(
            "{} {:?} leaf {:?} keep {:?} reserve {:?} custom {:?} model {:?}",
            self.file.display(),
            self.profile,
            self.leaf,
            self.keep,
            self.reserve,
            self.custom,
            self.model
        )
    }
}

fn open(case: &Case) -> Session {
    let mut session =
        Session::open_read_only(&case.file, SessionOptions::with_profile(case.profile))
            .unwrap_or_else(|e| panic!("{}: {e:?}", case.file.display()));
    if let Some(leaf) = &case.leaf {
        session
            .set_leaf_for_reading(Leaf::Id(leaf.as_str().into()))
            .unwrap();
    }
    session
}

/// Compares one prepare case; returns the number of comparisons made.
fn check_prepare(case: &Case, pi: &JsValue) -> usize {
    let what = case.describe();
    let mut session = open(case);
    let leaf = session.leaf().clone();
    let ours = session.prepare_compaction(&leaf, case.settings());
    if let Some(refusal) = pi.get("refusal").and_then(JsValue::as_str) {
        let err = ours.expect_err(&format!("{what}: pi refuses with {refusal}"));
        assert_eq!(err.kind_name(), refusal, "{what}");
        return 1;
    }
    if let Some(kind) = pi.get("error").and_then(JsValue::as_str) {
        let err = ours.expect_err(&format!(
            "{what}: pi fails with {kind}: {:?}",
            pi.get("message")
        ));
        assert_eq!(
            err.kind_name(),
            "invalid_session",
            "{what}: {}",
            err.message
        );
        return 1;
    }
    let prep = ours.unwrap_or_else(|e| panic!("{what}: {e:?}; pi: {}", pi.stringify()));
    let expected = pi.get("preparation").and_then(JsValue::as_js_str).unwrap();
    assert_same_preparation(
        &prep.to_value().stringify(),
        &expected.to_string_lossy(),
        &what,
    );
    let (read, modified) = prep.file_lists();
    assert_eq!(Some(&JsValue::Array(read)), pi.get("readFiles"), "{what}");
    assert_eq!(
        Some(&JsValue::Array(modified)),
        pi.get("modifiedFiles"),
        "{what}"
    );
    assert_eq!(
        Some(&JsValue::String(prep.file_lists_text())),
        pi.get("fileListsText"),
        "{what}"
    );
    let thinking = match case.model {
        Some((_, _, level)) => Some(level.to_string()),
        None => session.compaction_thinking_level(&leaf).unwrap(),
    };
    let model = ModelOptions {
        max_tokens: case.model.map(|m| m.0),
        reasoning: case.model.is_some_and(|m| m.1),
        thinking_level: thinking,
    };
    let requests = prep.requests(case.custom, &model).unwrap();
    let theirs = pi.get("requests").and_then(JsValue::as_array).unwrap();
    assert_eq!(requests.len(), theirs.len(), "{what}: number of requests");
    for (ours, theirs) in requests.iter().zip(theirs) {
        assert_eq!(
            Some(ours.system_prompt.to_string()),
            theirs
                .get("systemPrompt")
                .and_then(JsValue::as_str)
                .map(|s| s.into_owned()),
            "{what}"
        );
        assert_same_request_text(ours, theirs, &what);
        let options = theirs.get("options").unwrap();
        assert_eq!(
            ours.max_tokens.map(JsValue::Number).as_ref(),
            options.get("maxTokens"),
            "{what}"
        );
        assert_eq!(
            ours.reasoning.as_deref().map(JsValue::from),
            options.get("reasoning").cloned(),
            "{what}"
        );
        assert_eq!(
            options.get("cacheRetention"),
            Some(&JsValue::from("none")),
            "{what}"
        );
    }
    4 + requests.len()
}

fn check_usage(case: &Case, pi: &JsValue) -> usize {
    let what = case.describe();
    let mut session = open(case);
    let leaf = session.leaf().clone();
    let usage = session.context_usage(&leaf).unwrap();
    assert_same_estimate(pi.get("estimate").unwrap(), &usage.estimate, &what);
    let should = case
        .settings()
        .should_compact(usage.estimate.tokens, 30000.0);
    assert_eq!(
        pi.get("shouldCompact"),
        Some(&JsValue::Bool(should)),
        "{what}"
    );
    5
}

/// Entry ids of a file, every `step`-th one.
fn some_ids(file: &Path, step: usize) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| pi_session::json::parse(l).ok())
        .filter(|e| e.get("type").and_then(JsValue::as_str).as_deref() != Some("leaf"))
        .filter_map(|e| {
            e.get("id")
                .and_then(JsValue::as_str)
                .map(|s| s.into_owned())
        })
        .step_by(step.max(1))
        .collect()
}

/// The hand-made edge files (`tests/files/compaction`), sorted.
fn edge_files() -> Vec<PathBuf> {
    let edge = root().join("tests/files/compaction");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&edge)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

fn stem(file: &Path) -> String {
    file.file_stem().unwrap().to_string_lossy().into_owned()
}

/// The generated sessions: seed, size, compaction every.
const GENERATED: [(u32, &str, &str); 3] = [
    (1, "60KB", "20KB"),
    (2, "300KB", "100KB"),
    (3, "1MB", "300KB"),
];

/// The names of the sources, known before pi's code runs (the trials' names): the edge files,
/// the real files, the generated sessions, in the order of [`sources`].
fn source_names() -> Vec<String> {
    let mut names: Vec<String> = edge_files()
        .iter()
        .map(|f| format!("edge::{}", stem(f)))
        .collect();
    names.extend(
        support::real_fixtures()
            .iter()
            .map(|f| format!("real::{}", stem(f))),
    );
    names.extend(
        GENERATED
            .iter()
            .map(|(seed, ..)| format!("generated::{seed}")),
    );
    names
}

/// The sources (file, the step between the leaves tried), in the order of [`source_names`].
fn sources(oracle: &Oracle, dir: &Path) -> Vec<(PathBuf, usize)> {
    let mut out = Vec::new();
    out.extend(edge_files().into_iter().map(|f| (f, 1)));
    // The real files are v1: pi migrates them (its ids), then both sides read the result.
    let mut migrations = Vec::new();
    for (i, real) in support::real_fixtures().into_iter().enumerate() {
        let migrated = dir.join(format!("real-{i}.jsonl"));
        migrations.push(parse(&format!(
            r#"{{"op":"migrate","file":{},"out":{}}}"#,
            JsValue::from(path_str(&real)).stringify(),
            JsValue::from(path_str(&migrated)).stringify()
        )));
        out.push((migrated, 97));
    }
    run_pi_compaction(oracle, &migrations);
    for (seed, size, every) in GENERATED {
        let file = dir.join(format!("generated-{seed}.jsonl"));
        let seed = seed.to_string();
        let args = [
            "file",
            "--out",
            path_str(&file),
            "--size",
            size,
            "--seed",
            &seed,
            "--compact-every",
            every,
            "--branch-every",
            "5",
            "--image-rate",
            "0.05",
            "--image-kb",
            "2",
            "--custom-rate",
            "0.2",
            "--label-rate",
            "0.2",
        ];
        support::generate(oracle, &args.map(std::ffi::OsStr::new));
        out.push((file, 41));
    }
    out
}

/// The sweep of preparations, requests and usage: its cases and pi's answers (a preparation and
/// a usage per case), made by one run of pi's code for all of them.
struct Preparations {
    _dir: tempfile::TempDir,
    cases: Vec<Case>,
    results: Vec<JsValue>,
}

static PREPARATIONS: Shared<Preparations> = Shared::new(prepare_all);

fn prepare_all() -> Preparations {
    let Some(oracle) = support::oracle("compaction_conformance::preparations") else {
        unreachable!("support::oracle never answers None");
    };
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    let sources = sources(oracle, dir.path());
    let names = source_names();
    assert_eq!(sources.len(), names.len(), "a source without a name");
    for ((file, step), source) in sources.into_iter().zip(names) {
        let mut leaves: Vec<Option<String>> = vec![None];
        leaves.extend(some_ids(&file, step).into_iter().map(Some));
        for profile in [Profile::PiCli, Profile::Harness] {
            for (i, leaf) in leaves.iter().enumerate() {
                let variants: Vec<Variant> = if i == 0 {
                    vec![
                        (None, None, None, None),
                        (Some(700.0), None, Some("focus on files"), None),
                        (
                            Some(1500.0),
                            Some(30000.0),
                            None,
                            Some((4000.0, true, "high")),
                        ),
                        (Some(5000.0), Some(1000.0), None, Some((0.0, true, "off"))),
                    ]
                } else {
                    vec![(Some(700.0), None, None, None), (None, None, None, None)]
                };
                for (keep, reserve, custom, model) in variants {
                    cases.push(Case {
                        source: source.clone(),
                        file: file.clone(),
                        profile,
                        leaf: leaf.clone(),
                        keep,
                        reserve,
                        custom,
                        model,
                    });
                }
            }
        }
    }
    let mut jobs = Vec::new();
    for case in &cases {
        jobs.push(case.to_value("prepare"));
        jobs.push(case.to_value("usage"));
    }
    let results = run_pi_compaction(oracle, &jobs);
    let mut kinds = std::collections::BTreeMap::new();
    for pair in results.chunks(2) {
        let kind = ["refusal", "error", "preparation"]
            .into_iter()
            .find(|k| pair[0].get(k).is_some())
            .unwrap_or("?");
        let split = pair[0]
            .get("requests")
            .and_then(JsValue::as_array)
            .is_some_and(|r| r.len() == 2);
        *kinds.entry((kind, split)).or_insert(0) += 1;
    }
    support::notice(&format!(
        "compaction cases by outcome (kind, split turn): {kinds:?}"
    ));
    Preparations {
        _dir: dir,
        cases,
        results,
    }
}

/// One trial per source and profile (`compaction_conformance::preparations::edge::split-turn::
/// pi-cli`): every leaf tried in it and every settings variant, compared with pi's answers
/// from the shared run.
fn preparation_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for source in source_names() {
        for profile in [Profile::PiCli, Profile::Harness] {
            let name = format!(
                "compaction_conformance::preparations::{source}::{}",
                profile.name()
            );
            let test = name.clone();
            let source = source.clone();
            trials.push(crate::with_pi(name, move || {
                preparations_are_pis(&test, &source, profile)
            }));
        }
    }
    trials
}

/// The preparations, requests and usage of one source in one profile are pi's.
fn preparations_are_pis(test: &str, source: &str, profile: Profile) {
    let sweep = PREPARATIONS.get();
    let mut compared = 0;
    let mut cases = 0;
    for (case, pair) in sweep.cases.iter().zip(sweep.results.chunks(2)) {
        if case.source != source || case.profile != profile {
            continue;
        }
        cases += 1;
        if pair[0].get("error").and_then(JsValue::as_str).as_deref() == Some("threw") {
            // pi crashes on this input (a malformed message, a file the harness refuses):
            // the store must refuse too, never answer.
            let mut session = match Session::open_read_only(
                &case.file,
                SessionOptions::with_profile(case.profile),
            ) {
                Ok(s) => s,
                Err(_) => {
                    compared += 1;
                    continue;
                }
            };
            if let Some(leaf) = &case.leaf {
                session
                    .set_leaf_for_reading(Leaf::Id(leaf.as_str().into()))
                    .unwrap();
            }
            let leaf = session.leaf().clone();
            assert!(
                session.prepare_compaction(&leaf, case.settings()).is_err(),
                "{}: pi throws {:?}",
                case.describe(),
                pair[0].get("message")
            );
            compared += 1;
            continue;
        }
        compared += check_prepare(case, &pair[0]);
        compared += check_usage(case, &pair[1]);
    }
    assert!(cases > 0, "{test}: no case made of this source");
    support::count(test, compared);
}

/// The sweep of written compactions: its cases (a source's leaves x keep, in both profiles) and
/// pi's answers with the line pi appended, made by one run of pi's code for all of them.
struct Written {
    dir: tempfile::TempDir,
    cases: Vec<Case>,
    results: Vec<JsValue>,
}

static WRITTEN: Shared<Written> = Shared::new(write_all);

fn write_all() -> Written {
    let Some(oracle) = support::oracle("compaction_conformance::written") else {
        unreachable!("support::oracle never answers None");
    };
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    let sources = sources(oracle, dir.path());
    let names = source_names();
    assert_eq!(sources.len(), names.len(), "a source without a name");
    for ((file, step), source) in sources.into_iter().zip(names) {
        let mut leaves: Vec<Option<String>> = vec![None];
        leaves.extend(some_ids(&file, step * 3).into_iter().take(6).map(Some));
        for profile in [Profile::PiCli, Profile::Harness] {
            for leaf in &leaves {
                for keep in [None, Some(700.0), Some(1500.0), Some(5000.0)] {
                    cases.push(Case {
                        source: source.clone(),
                        file: file.clone(),
                        profile,
                        leaf: leaf.clone(),
                        keep,
                        reserve: None,
                        custom: None,
                        model: None,
                    });
                }
            }
        }
    }
    let jobs: Vec<JsValue> = cases
        .iter()
        .map(|c| {
            let mut v = c.to_value("prepare");
            v.as_object_mut()
                .unwrap()
                .insert("append".into(), JsValue::Bool(true));
            v
        })
        .collect();
    let results = run_pi_compaction(oracle, &jobs);
    // The sweep as a whole must write: a change that makes pi refuse (almost) everything would
    // leave every trial comparing nothing.
    let written = results
        .iter()
        .filter(|pi| pi.get("line").and_then(JsValue::as_str).is_some())
        .count();
    assert!(written > 20, "only {written} compactions were written");
    Written {
        dir,
        cases,
        results,
    }
}

/// One trial per source and profile (`compaction_conformance::written::edge::split-turn::
/// pi-cli`): every leaf and keep tried in it, the compaction written from pi's answers compared
/// byte for byte with the line pi appended, from the shared run.
fn written_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for source in source_names() {
        for profile in [Profile::PiCli, Profile::Harness] {
            let name = format!(
                "compaction_conformance::written::{source}::{}",
                profile.name()
            );
            let test = name.clone();
            let source = source.clone();
            trials.push(crate::with_pi(name, move || {
                written_compactions_are_byte_for_byte_pis(&test, &source, profile)
            }));
        }
    }
    trials
}

/// The compactions written in one source and profile are pi's, byte for byte (but the id and
/// time).
fn written_compactions_are_byte_for_byte_pis(test: &str, source: &str, profile: Profile) {
    use pi_session::compaction::Summaries;
    let sweep = WRITTEN.get();
    let mut compared = 0;
    let mut cases = 0;
    for (n, (case, pi)) in sweep.cases.iter().zip(&sweep.results).enumerate() {
        if case.source != source || case.profile != profile {
            continue;
        }
        cases += 1;
        let what = case.describe();
        let Some(line) = pi.get("line").and_then(JsValue::as_str) else {
            continue; // refused: the preparations test checks refusals
        };
        // Named by the case's index: trials run in parallel, each with its own copies.
        let copy = sweep.dir.path().join(format!("copy-{n}.jsonl"));
        std::fs::copy(&case.file, &copy).unwrap();
        let mut session =
            Session::open(&copy, "/", SessionOptions::with_profile(case.profile)).unwrap();
        if let Some(leaf) = &case.leaf {
            session.branch(leaf).unwrap();
        }
        let leaf = session.leaf().clone();
        let prep = session.prepare_compaction(&leaf, case.settings()).unwrap();
        let answers = pi_answers(pi).expect("pi's answers");
        let purposes = prep.request_purposes();
        let mut summaries = Summaries::default();
        for (purpose, answer) in purposes.iter().zip(answers) {
            match *purpose {
                "history" => summaries.history = Some(answer),
                _ => summaries.turn_prefix = Some(answer),
            }
        }
        // Without every answer nothing can be written.
        if let Some(first) = purposes.first() {
            let mut partial = summaries.clone();
            match *first {
                "history" => partial.history = None,
                _ => partial.turn_prefix = None,
            }
            assert!(prep.entry_from_summaries(&partial).is_err(), "{what}");
        }
        let entry = prep.entry_from_summaries(&summaries).unwrap();
        let stored = session.append_compaction(entry).unwrap();
        let ours = stored.stringify();
        assert_eq!(
            without_id_and_time(&ours),
            without_id_and_time(&line),
            "{what}: the written compaction differs"
        );
        compared += 2;
    }
    assert!(cases > 0, "{test}: no case made of this source");
    crate::harness::tally("compaction_conformance::written", compared);
}

// ---------------------------------------------------------------------------------------------
// pi 1.6.0 (the pi-1.6 profile)

/// Sessions pi 1.6's own SessionManager wrote (`gen16`, seeded), and the hand-written pi 1.6
/// files. `PI16_COMPACTION_SEEDS=N` generates N sessions (default 3).
fn pi16_sources(oracle: &Oracle, dir: &Path) -> Vec<PathBuf> {
    let seeds: u32 = std::env::var("PI16_COMPACTION_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let mut jobs = Vec::new();
    let mut out = Vec::new();
    for seed in 1..=seeds {
        let file = dir.join(format!("pi16-{seed}.jsonl"));
        let turns = 30 + (seed * 37) % 90;
        jobs.push(parse(&format!(
            r#"{{"op":"gen16","out":{},"seed":{seed},"turns":{turns}}}"#,
            JsValue::from(path_str(&file)).stringify()
        )));
        out.push(file);
    }
    for result in run_pi_compaction(oracle, &jobs) {
        assert_eq!(result.get("done"), Some(&JsValue::Bool(true)), "{result:?}");
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/files"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("pi16-") && n.ends_with(".jsonl"))
        })
        .collect();
    files.sort();
    out.extend(files);
    out
}

fn pi16_case(file: &Path, leaf: &Option<String>, op: &str, extra: &str) -> JsValue {
    let leaf = leaf.as_ref().map_or(String::new(), |l| {
        format!(r#","leaf":{}"#, JsValue::from(l.as_str()).stringify())
    });
    parse(&format!(
        r#"{{"op":"{op}","impl":"pi16","file":{}{leaf}{extra}}}"#,
        JsValue::from(path_str(file)).stringify()
    ))
}

fn open16(file: &Path, leaf: &Option<String>) -> Session {
    let mut session =
        Session::open_read_only(file, SessionOptions::with_profile(Profile::Pi16)).unwrap();
    if let Some(leaf) = leaf {
        session
            .set_leaf_for_reading(Leaf::Id(leaf.as_str().into()))
            .unwrap();
    }
    session
}

fn settings_of(keep: Option<f64>) -> CompactionSettings {
    let mut s = CompactionSettings::default();
    if let Some(k) = keep {
        s.keep_recent_tokens = k;
    }
    s
}

/// A compaction line with what each side makes itself set aside: id, timestamp, the system
/// snapshot's time (the compaction's own) and a retain-none `firstKeptEntryId` (its own id).
fn pi16_line_shape(line: &str) -> String {
    let mut value = parse(line);
    let own = value.get("id").cloned();
    if let Some(map) = value.as_object_mut() {
        if own.is_some() && map.get("firstKeptEntryId") == own.as_ref() {
            map.insert("firstKeptEntryId".into(), JsValue::from("<own id>"));
        }
        for key in ["id", "timestamp"] {
            if map.contains_key(key) {
                map.insert(key.into(), JsValue::from("…"));
            }
        }
        if let Some(JsValue::Object(system)) = map.get_mut("systemMessage") {
            system.insert("timestamp".into(), JsValue::from("…"));
        }
    }
    value.stringify()
}

/// pi 1.6.0's context usage, preparation, requests, refusals of the model's answers and
/// written compaction lines, on sessions its own SessionManager wrote: context edits, system
/// messages and patches, usage entries, nested and retain-none compactions, branch summaries,
/// thinking blocks, codemode nested calls, aborted and failed turns with recovery omissions.
fn pi16_compact_all() -> Pi16Compactions {
    let Some(oracle) = support::oracle("compaction_conformance::pi16") else {
        unreachable!("support::oracle never answers None");
    };
    let dir = tempfile::tempdir().unwrap();
    let files = pi16_sources(oracle, dir.path());
    let source_names = pi16_source_names();
    assert_eq!(
        files.len(),
        source_names.len(),
        "a pi 1.6 source without a name"
    );
    // keep, custom instructions, model (reasoning, level), the model's answer
    type Pi16Variant = (
        Option<f64>,
        Option<&'static str>,
        Option<(bool, &'static str)>,
        Option<&'static str>,
    );
    let mut cases: Vec<Pi16Case> = Vec::new();
    let mut names = Vec::new();
    for (file, name) in files.iter().zip(&source_names) {
        let mut leaves: Vec<Option<String>> = vec![None];
        leaves.extend(some_ids(file, 13).into_iter().map(Some));
        for (i, leaf) in leaves.iter().enumerate() {
            let variants: &[Pi16Variant] = if i == 0 {
                &[
                    (None, None, None, None),
                    (Some(700.0), Some("focus on files"), None, None),
                    (Some(1500.0), None, Some((true, "high")), None),
                    (Some(300.0), Some("keep ids"), Some((true, "off")), None),
                    (Some(700.0), None, None, Some(r#"{"stopReason":"length"}"#)),
                    (
                        Some(700.0),
                        None,
                        None,
                        Some(r#"{"stopReason":"error","errorMessage":"quota"}"#),
                    ),
                    (Some(700.0), None, None, Some(r#"{"toolCall":true}"#)),
                ]
            } else {
                &[
                    (Some(700.0), None, None, None),
                    (Some(2500.0), Some("x"), None, None),
                ]
            };
            for &(keep, custom, model, answer) in variants {
                cases.push((file.clone(), leaf.clone(), keep, custom, model, answer));
                names.push(name.clone());
            }
        }
    }
    let mut jobs = Vec::new();
    for (file, leaf, keep, custom, model, answer) in &cases {
        let mut extra = String::new();
        if let Some(k) = keep {
            extra.push_str(&format!(
                r#","settings":{{"compaction":{{"keepRecentTokens":{}}}}}"#,
                number_to_string(*k)
            ));
        }
        if let Some(c) = custom {
            extra.push_str(&format!(
                r#","customInstructions":{}"#,
                JsValue::from(*c).stringify()
            ));
        }
        if let Some((reasoning, level)) = model {
            extra.push_str(&format!(
                r#","model":{{"reasoning":{reasoning}}},"thinkingLevel":"{level}""#
            ));
        }
        if let Some(a) = answer {
            extra.push_str(&format!(r#","answer":{a}"#));
        }
        extra.push_str(r#","append":true"#);
        jobs.push(pi16_case(file, leaf, "prepare", &extra));
        jobs.push(pi16_case(
            file,
            leaf,
            "usage",
            &format!(
                r#","window":{}"#,
                if keep.is_some() { "30000" } else { "8000" }
            ),
        ));
    }
    let results = run_pi_compaction(oracle, &jobs);
    Pi16Compactions {
        dir,
        names,
        cases,
        results,
    }
}

/// What the pi 1.6 cases compared, by kind, and the special cuts they reached.
#[derive(Default, Clone)]
struct Pi16Counts {
    usage: usize,
    prep: usize,
    refusal: usize,
    request: usize,
    failure: usize,
    line: usize,
    /// Cuts on an entry without messages, on an omitted attempt, after a compaction that kept
    /// nothing.
    reached: (usize, usize, usize),
}

impl Pi16Counts {
    fn add(&mut self, other: &Pi16Counts) {
        self.usage += other.usage;
        self.prep += other.prep;
        self.refusal += other.refusal;
        self.request += other.request;
        self.failure += other.failure;
        self.line += other.line;
        self.reached.0 += other.reached.0;
        self.reached.1 += other.reached.1;
        self.reached.2 += other.reached.2;
    }

    fn compared(&self) -> usize {
        self.usage + self.prep + self.refusal + self.request + self.failure + self.line
    }
}

/// One pi 1.6 case (its `n`th): usage, preparation, requests, the model's answers refused or
/// written, compared with pi's `pair` (prepare, usage).
fn pi16_check(n: usize, case: &Pi16Case, pair: &[JsValue], dir: &Path, counts: &mut Pi16Counts) {
    use pi_session::compaction::{Summaries, SummaryProblem, SummaryText};
    {
        let (file, leaf, keep, custom, model, answer) = case;
        let what = format!(
            "{} leaf {leaf:?} keep {keep:?} custom {custom:?} model {model:?} answer {answer:?}",
            file.display()
        );
        let (pi, pi_usage) = (&pair[0], &pair[1]);
        if pi.get("error").and_then(JsValue::as_str).as_deref() == Some("threw") {
            // pi 1.6 cannot build this context (an edit without a replacement): neither can we.
            let mut session = open16(file, leaf);
            let at = session.leaf().clone();
            assert!(
                session.prepare_compaction(&at, settings_of(*keep)).is_err(),
                "{what}: pi throws {:?}",
                pi.get("message")
            );
            counts.refusal += 1;
            return;
        }
        // Context usage.
        let mut session = open16(file, leaf);
        let at = session.leaf().clone();
        let window = if keep.is_some() { 30000.0 } else { 8000.0 };
        let usage = session.context_usage(&at).unwrap();
        assert_same_estimate(pi_usage.get("estimate").unwrap(), &usage.estimate, &what);
        let settings = settings_of(*keep);
        assert_eq!(
            pi_usage.get("shouldCompact"),
            Some(&JsValue::Bool(
                settings.should_compact(usage.estimate.tokens, window)
            )),
            "{what}"
        );
        let figures = pi_usage.get("contextUsage").unwrap();
        let tokens = (!usage.unknown_after_compaction).then_some(usage.estimate.tokens);
        assert_eq!(
            figures.get("tokens").and_then(JsValue::as_f64),
            tokens,
            "{what}"
        );
        counts.usage += 5;
        // The preparation.
        let ours = session.prepare_compaction(&at, settings);
        if let Some(refusal) = pi.get("refusal").and_then(JsValue::as_str) {
            let err = ours.expect_err(&format!("{what}: pi refuses with {refusal}"));
            assert_eq!(err.kind_name(), refusal, "{what}");
            counts.refusal += 1;
            return;
        }
        let prep = ours.unwrap_or_else(|e| panic!("{what}: {e:?}"));
        let expected = pi.get("preparation").and_then(JsValue::as_str).unwrap();
        assert_same_preparation(&prep.to_value().stringify(), &expected, &what);
        counts.prep += 1;
        // What the cases reach: a cut on an entry that projects to nothing, on an omitted
        // (recovery) attempt, after a compaction that kept nothing.
        let entries: Vec<JsValue> = std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .skip(1)
            .filter_map(|l| pi_session::json::parse(l).ok())
            .collect();
        let by_id = |id: &str| {
            entries
                .iter()
                .find(|e| e.get("id").and_then(JsValue::as_str).as_deref() == Some(id))
        };
        let first_kept = by_id(&prep.first_kept_entry_id);
        let kind = first_kept.and_then(|e| e.get("type").and_then(JsValue::as_str));
        if !matches!(
            kind.as_deref(),
            Some("message" | "custom_message" | "branch_summary")
        ) {
            counts.reached.0 += 1;
        }
        let omitted = entries.iter().any(|e| {
            e.get("type").and_then(JsValue::as_str).as_deref() == Some("context_edit")
                && e.get("replacement") == Some(&JsValue::Null)
                && e.get("targetId").and_then(JsValue::as_str).as_deref()
                    == Some(prep.first_kept_entry_id.as_str())
        });
        counts.reached.1 += usize::from(omitted);
        let retain_none = prep.previous_compaction_index.is_some_and(|i| {
            let id = prep.path_ids[i].clone().unwrap_or_default();
            by_id(&id)
                .and_then(|c| c.get("firstKeptEntryId").and_then(JsValue::as_str))
                .as_deref()
                == Some(id.as_str())
        });
        counts.reached.2 += usize::from(retain_none);
        // The requests, exactly as pi 1.6 sends them.
        let thinking = match model {
            Some((_, level)) => Some(level.to_string()),
            None => session.compaction_thinking_level(&at).unwrap(),
        };
        let options = ModelOptions {
            max_tokens: None,
            reasoning: model.is_some_and(|m| m.0),
            thinking_level: thinking,
        };
        let requests = prep.requests(*custom, &options).unwrap();
        let theirs = pi.get("requests").and_then(JsValue::as_array).unwrap();
        // A refused first answer stops pi before the second request.
        if pi.get("failure").is_none() {
            assert_eq!(requests.len(), theirs.len(), "{what}: number of requests");
        }
        for (ours, theirs) in requests.iter().zip(theirs) {
            let value = ours.to_value(0.0);
            let mut messages = value.get("messages").unwrap().as_array().unwrap().to_vec();
            let pi_messages = theirs.get("messages").and_then(JsValue::as_array).unwrap();
            assert_eq!(messages.len(), 2, "{what}");
            assert_eq!(
                Some(&messages[0]),
                pi_messages.first(),
                "{what}: system message"
            );
            assert_same_request_text(ours, theirs, &what);
            messages.truncate(1);
            let pi_options = theirs.get("options").unwrap().stringify();
            let mut our_options = pi_session::json::JsObject::new();
            if let Some(r) = value.get("reasoning") {
                our_options.insert("reasoning".into(), r.clone());
            }
            our_options.insert("cacheRetention".into(), JsValue::from("none"));
            assert_eq!(
                JsValue::Object(our_options).stringify(),
                pi_options,
                "{what}: request options"
            );
            assert!(value.get("maxTokens").is_none(), "{what}");
            counts.request += 1;
        }
        // The model's answers: refused as pi refuses them, or written as pi writes them.
        let answers = pi_answers(pi).unwrap_or_default();
        let purposes = prep.request_purposes();
        let mut summaries = Summaries::default();
        let override_answer = answer.map(parse);
        for (i, purpose) in purposes.iter().enumerate() {
            let mut text = answers.get(i).cloned().unwrap_or_else(|| SummaryText {
                text: format!("## Goal\nS{i} 😀"),
                ..SummaryText::default()
            });
            if let Some(a) = &override_answer {
                text.stop_reason = a
                    .get("stopReason")
                    .and_then(JsValue::as_str)
                    .map(|s| s.into_owned());
                text.error_message = a
                    .get("errorMessage")
                    .and_then(JsValue::as_str)
                    .map(|s| s.into_owned());
                text.calls_tool = a.get("toolCall").is_some();
            }
            match *purpose {
                "history" => summaries.history = Some(text),
                _ => summaries.turn_prefix = Some(text),
            }
        }
        let made = prep.entry_from_summaries(&summaries);
        if let Some(failure) = pi.get("failure").and_then(JsValue::as_str) {
            match made {
                Err(SummaryProblem::Failed(message)) => assert_eq!(message, *failure, "{what}"),
                other => panic!("{what}: pi refuses ({failure}), we made {other:?}"),
            }
            counts.failure += 1;
            return;
        }
        let entry = made.unwrap_or_else(|e| panic!("{what}: {e:?}"));
        let line = pi.get("line").and_then(JsValue::as_str).unwrap();
        let copy = dir.join(format!("copy-{n}.jsonl"));
        std::fs::copy(file, &copy).unwrap();
        let mut writer =
            Session::open(&copy, "/", SessionOptions::with_profile(Profile::Pi16)).unwrap();
        if let Some(leaf) = leaf {
            writer.branch(leaf).unwrap();
        }
        let stored = writer.append_compaction(entry).unwrap();
        assert_eq!(
            pi16_line_shape(&stored.stringify()),
            pi16_line_shape(&line),
            "{what}: the written compaction differs"
        );
        counts.line += 1;
    }
}

/// The pi 1.6 sweep: its cases, the name of each one's source, and pi 1.6's answers (a
/// preparation and a usage per case), made by one run of pi's code for all of them.
struct Pi16Compactions {
    dir: tempfile::TempDir,
    names: Vec<String>,
    cases: Vec<Pi16Case>,
    results: Vec<JsValue>,
}

/// (file, leaf, keep, custom, model, answer)
type Pi16Case = (
    PathBuf,
    Option<String>,
    Option<f64>,
    Option<&'static str>,
    Option<(bool, &'static str)>,
    Option<&'static str>,
);

static PI16_COMPACTIONS: Shared<Pi16Compactions> = Shared::new(pi16_compact_all);

/// Checks the cases of the sources `keep` accepts; what they compared.
fn pi16_check_sources(keep: impl Fn(&str) -> bool, copies: &str) -> Pi16Counts {
    let sweep = PI16_COMPACTIONS.get();
    let dir = sweep.dir.path().join(copies);
    std::fs::create_dir_all(&dir).unwrap();
    let mut counts = Pi16Counts::default();
    for (n, ((case, pair), name)) in sweep
        .cases
        .iter()
        .zip(sweep.results.chunks(2))
        .zip(&sweep.names)
        .enumerate()
    {
        if keep(name) {
            pi16_check(n, case, pair, &dir, &mut counts);
        }
    }
    counts
}

/// One trial per pi 1.6 source (`compaction_conformance::pi16::gen16::1`,
/// `compaction_conformance::pi16::file::pi16-...`), and `compaction_conformance::pi16::reach`,
/// which checks that the sweep as a whole still reaches pi's code and its special cuts.
fn pi16_trials() -> Vec<Trial> {
    let mut trials: Vec<Trial> = pi16_source_names()
        .into_iter()
        .map(|source| {
            let name = format!("compaction_conformance::pi16::{source}");
            let test = name.clone();
            crate::with_pi(name, move || pi16_compaction_is_pi16s(&test, &source))
        })
        .collect();
    trials.push(crate::with_pi(
        "compaction_conformance::pi16::reach",
        pi16_sweep_reaches_pi16s_special_cases,
    ));
    trials
}

/// What each pi 1.6 source's trial found, for [`pi16_sweep_reaches_pi16s_special_cases`].
static PI16_CHECKED: std::sync::Mutex<std::collections::BTreeMap<String, Pi16Counts>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// pi 1.6's compaction of one source is pi 1.6's.
fn pi16_compaction_is_pi16s(test: &str, source: &str) {
    let copies = format!("copies-{source}").replace("::", "-");
    let counts = pi16_check_sources(|name| name == source, &copies);
    assert!(
        counts.compared() > 0,
        "{test}: nothing compared in this source"
    );
    crate::harness::tally("compaction_conformance::pi16", counts.compared());
    PI16_CHECKED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(source.to_owned(), counts);
}

/// The sweep as a whole reaches pi 1.6's code and its special cuts: a change of seeds or of pi
/// that no longer does fails here, not silently. The sources whose trial has passed already
/// are taken from it; the others (filtered out, failed, or still running) are checked here
/// again, their comparisons not counted twice.
fn pi16_sweep_reaches_pi16s_special_cases() {
    let checked = PI16_CHECKED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let mut counts = pi16_check_sources(|name| !checked.contains_key(name), "copies-reach");
    for found in checked.values() {
        counts.add(found);
    }
    let Pi16Counts {
        usage: usage_n,
        prep: prep_n,
        refusal: refusal_n,
        request: request_n,
        failure: failure_n,
        line: line_n,
        reached,
    } = counts;
    support::notice(&format!(
        "pi 1.6 compaction: {usage_n} usage figures, {prep_n} preparations, {refusal_n} refusals, \
         {request_n} requests, {failure_n} refused answers, {line_n} written lines; cuts on an \
         entry without messages {}, on an omitted attempt {}, after a compaction that kept \
         nothing {}",
        reached.0, reached.1, reached.2
    ));
    assert!(
        prep_n > 20 && line_n > 10 && failure_n > 3,
        "too few cases reached pi's code"
    );
    assert!(
        reached.0 > 0 && reached.1 > 0 && reached.2 > 0,
        "the seeds no longer reach pi 1.6's special cuts: {reached:?}"
    );
}

/// The names of [`pi16_sources`], known before pi's code runs: `gen16::<seed>`, then the
/// hand-written files' stems.
fn pi16_source_names() -> Vec<String> {
    let seeds: u32 = std::env::var("PI16_COMPACTION_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let mut names: Vec<String> = (1..=seeds).map(|seed| format!("gen16::{seed}")).collect();
    let mut files: Vec<String> = std::fs::read_dir(root().join("tests/files"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter(|n| n.starts_with("pi16-") && n.ends_with(".jsonl"))
        .collect();
    files.sort();
    names.extend(
        files
            .into_iter()
            .map(|n| format!("file::{}", n.trim_end_matches(".jsonl"))),
    );
    names
}

/// The sweep of hook compactions: its cases (source name, file, leaf, firstKeptEntryId) and
/// pi 1.6's answers, made by one run of pi's code for all of them.
struct HookCompactions {
    dir: tempfile::TempDir,
    cases: Vec<(String, PathBuf, Option<String>, JsValue)>,
    results: Vec<JsValue>,
}

static HOOK_COMPACTIONS: Shared<HookCompactions> = Shared::new(hook_compact_all);

fn hook_compact_all() -> HookCompactions {
    let Some(oracle) = support::oracle("compaction_conformance::pi16 hook") else {
        unreachable!("support::oracle never answers None");
    };
    let dir = tempfile::tempdir().unwrap();
    let files = pi16_sources(oracle, dir.path());
    let names = pi16_source_names();
    assert_eq!(files.len(), names.len(), "a pi 1.6 source without a name");
    let mut cases = Vec::new();
    for (file, name) in files.iter().zip(names) {
        let ids = some_ids(file, 17);
        for (k, leaf) in std::iter::once(None)
            .chain(ids.iter().cloned().map(Some))
            .enumerate()
        {
            let first_kept = if k % 2 == 0 {
                JsValue::Null
            } else {
                JsValue::from(ids[k % ids.len()].as_str())
            };
            cases.push((name.clone(), file.clone(), leaf, first_kept));
        }
    }
    let jobs: Vec<JsValue> = cases
        .iter()
        .map(|(_, file, leaf, first_kept)| {
            let hook = format!(
                r#","settings":{{"compaction":{{"keepRecentTokens":700}}}},"append":true,"hookCompaction":{{"summary":"EXT 😀","firstKeptEntryId":{},"tokensBefore":42,"details":{{"readFiles":["x"],"modifiedFiles":[]}}}}"#,
                first_kept.stringify()
            );
            pi16_case(file, leaf, "prepare", &hook)
        })
        .collect();
    let results = run_pi_compaction(oracle, &jobs);
    // The sweep as a whole must store some: pi refusing everything would leave every trial
    // comparing nothing.
    let stored = results
        .iter()
        .filter(|pi| pi.get("line").and_then(JsValue::as_str).is_some())
        .count();
    assert!(stored > 5, "only {stored} hook compactions were stored");
    HookCompactions {
        dir,
        cases,
        results,
    }
}

/// One trial per pi 1.6 source (`compaction_conformance::pi16_hook::gen16::1`,
/// `compaction_conformance::pi16_hook::file::pi16-...`), from the shared run.
fn pi16_hook_trials() -> Vec<Trial> {
    pi16_source_names()
        .into_iter()
        .map(|source| {
            let name = format!("compaction_conformance::pi16_hook::{source}");
            let test = name.clone();
            crate::with_pi(name, move || {
                pi16_hook_compactions_are_stored_as_pi16_stores_them(&test, &source)
            })
        })
        .collect()
}

/// A `session_before_compact` hook's compaction in pi-1.6, stored as pi 1.6's `appendCompaction`
/// stores it (`fromHook: true`, the `systemMessage` snapshot), a retain-none one
/// (`firstKeptEntryId: null`, stored as the compaction's own id) included: the cases of one
/// source.
fn pi16_hook_compactions_are_stored_as_pi16_stores_them(test: &str, source: &str) {
    use pi_session::session::NewEntry;
    let sweep = HOOK_COMPACTIONS.get();
    let mut compared = 0;
    let mut cases = 0;
    for (i, ((name, file, leaf, first_kept), pi)) in
        sweep.cases.iter().zip(&sweep.results).enumerate()
    {
        if name != source {
            continue;
        }
        cases += 1;
        let what = format!("{} leaf {leaf:?} firstKept {first_kept:?}", file.display());
        let Some(line) = pi.get("line").and_then(JsValue::as_str) else {
            continue; // pi refused to prepare: the hook is never asked
        };
        let copy = sweep.dir.path().join(format!("hook-{i}.jsonl"));
        std::fs::copy(file, &copy).unwrap();
        let mut session =
            Session::open(&copy, "/", SessionOptions::with_profile(Profile::Pi16)).unwrap();
        if let Some(leaf) = leaf {
            session.branch(leaf).unwrap();
        }
        let entry = NewEntry::Compaction {
            summary: JsValue::from("EXT 😀"),
            first_kept_entry_id: (!matches!(first_kept, JsValue::Null)).then(|| first_kept.clone()),
            tokens_before: JsValue::Number(42.0),
            retained_tail: None,
            details: Some(parse(r#"{"readFiles":["x"],"modifiedFiles":[]}"#)),
            usage: None,
            from_hook: Some(JsValue::Bool(true)),
            system_message: None,
        };
        let stored = session.append_compaction(entry).unwrap();
        assert_eq!(
            pi16_line_shape(&stored.stringify()),
            pi16_line_shape(&line),
            "{what}: the stored hook compaction differs"
        );
        compared += 1;
    }
    assert!(cases > 0, "{test}: no case made of this source");
    crate::harness::tally("compaction_conformance::pi16_hook", compared);
}

crate::tests! {
    [preparation_trials, written_trials, pi16_trials, pi16_hook_trials]
}
