//! Branch summaries (`/tree` with a summary pi's own summarizer writes) checked against pi.
//!
//! `tests/oracle/pi-navigate.mjs` runs pi's own `AgentSession.navigateTree` with no extension
//! summary, so pi's `generateBranchSummary` runs against a fake model (a `streamFn` that
//! records the request and answers a fixed text with a fixed usage). This program runs the
//! store API on another copy of the same file: `prepare_tree`, `branch_summary_plan`, its
//! request, `model_summary` with the same text and usage, `decide`, `apply_navigation`. The
//! captured prompt (system prompt, user text, `maxTokens`) must be the one this program
//! builds, and the written files (after the oracle's `normalize`) the same, for the replays of
//! `tests/ops/`, seeded random op scripts and generated sessions, over several budgets and
//! instructions.
//!
//! The suite installs pi's code itself; with `PI_SESSION_NO_ORACLE=1` these tests fail, naming it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::harness::Shared;
use crate::support;
use libtest_mimic::Trial;

use support::compaction::{run_pi_compaction, without_id_and_time};
use support::{Oracle, notice, parse, path_str, root, str_of};

use pi_session::Profile;
use pi_session::compaction::BranchBudget;
use pi_session::json::{self, JsObject, JsValue};
use pi_session::session::IdSource;
use pi_session::session::{
    Session, SessionOptions, TreeDecision, TreeRequest, decide, model_summary,
};

const MODEL_TEXT: &str = "## Goal\nExplore the other branch 😀";
const USAGE: &str = r#"{"input":900,"output":120,"cacheRead":0,"cacheWrite":0,"totalTokens":1020,"cost":{"input":0.001,"output":0.002,"cacheRead":0,"cacheWrite":0,"total":0.003}}"#;

/// A small seeded generator (xorshift), so a failing script can be made again.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const FILES: [&str; 6] = [
    "src/a.rs",
    "src/b.rs",
    "README.md",
    "docs/x y.md",
    "src/ü.rs",
    "Cargo.toml",
];

/// A random op script for the oracle's `replay --impl manager`: turns with tool calls on a few
/// files, rewinds, branch summaries with file lists (pi-generated or from a hook), compactions,
/// custom messages and labels.
fn random_script(seed: u64) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut ops: Vec<String> = Vec::new();
    // Ops that made an entry (indices usable as refs).
    let mut entries: Vec<usize> = Vec::new();
    let mut t: u64 = 1_767_225_600_000;
    let push = |ops: &mut Vec<String>, entries: &mut Vec<usize>, op: String, entry: bool| {
        if entry {
            entries.push(ops.len());
        }
        ops.push(op);
    };
    for turn in 0..(12 + rng.below(14)) {
        t += 1000;
        let text = format!("step {turn}: {}", "word ".repeat(rng.below(60)));
        push(
            &mut ops,
            &mut entries,
            format!(
                r#"{{"op":"appendMessage","message":{{"role":"user","content":{},"timestamp":{t}}}}}"#,
                JsValue::from(text.as_str()).stringify()
            ),
            true,
        );
        let mut calls = Vec::new();
        for c in 0..rng.below(3) {
            let tool = ["read", "write", "edit", "bash"][rng.below(4)];
            let path = FILES[rng.below(FILES.len())];
            calls.push(format!(
                r#"{{"type":"toolCall","id":"c{turn}-{c}","name":"{tool}","arguments":{{"path":{}}}}}"#,
                JsValue::from(path).stringify()
            ));
        }
        let mut content = vec![format!(
            r#"{{"type":"text","text":"answer {turn} {}"}}"#,
            "x".repeat(rng.below(400))
        )];
        content.extend(calls.iter().cloned());
        t += 1000;
        push(
            &mut ops,
            &mut entries,
            format!(
                r#"{{"op":"appendMessage","message":{{"role":"assistant","content":[{}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{USAGE},"stopReason":"{}","timestamp":{t}}}}}"#,
                content.join(","),
                if calls.is_empty() { "stop" } else { "toolUse" }
            ),
            true,
        );
        for c in 0..calls.len() {
            push(
                &mut ops,
                &mut entries,
                format!(
                    r#"{{"op":"appendMessage","message":{{"role":"toolResult","toolCallId":"c{turn}-{c}","toolName":"read","content":[{{"type":"text","text":"ok"}}],"isError":false,"timestamp":{t}}}}}"#
                ),
                true,
            );
        }
        let pick = |rng: &mut Rng, entries: &[usize]| entries[rng.below(entries.len())];
        match rng.below(10) {
            0 | 1 if entries.len() > 3 => {
                let target = pick(&mut rng, &entries);
                push(
                    &mut ops,
                    &mut entries,
                    format!(r#"{{"op":"branch","targetRef":{target}}}"#),
                    false,
                );
            }
            2 if entries.len() > 3 => {
                let target = pick(&mut rng, &entries);
                let read = FILES[rng.below(FILES.len())];
                let modified = FILES[rng.below(FILES.len())];
                let from_hook = ["", r#","fromHook":true"#, r#","fromHook":false"#][rng.below(3)];
                push(
                    &mut ops,
                    &mut entries,
                    format!(
                        r#"{{"op":"branchWithSummary","targetRef":{target},"summary":"earlier {turn}","details":{{"readFiles":[{}],"modifiedFiles":[{}]}}{from_hook}}}"#,
                        JsValue::from(read).stringify(),
                        JsValue::from(modified).stringify()
                    ),
                    true,
                );
            }
            3 if entries.len() > 3 => {
                let kept = pick(&mut rng, &entries);
                push(
                    &mut ops,
                    &mut entries,
                    format!(
                        r#"{{"op":"appendCompaction","summary":"compacted {turn}","firstKeptEntryRef":{kept},"tokensBefore":{}}}"#,
                        rng.below(50_000)
                    ),
                    true,
                );
            }
            4 => push(
                &mut ops,
                &mut entries,
                format!(
                    r#"{{"op":"appendCustomMessageEntry","customType":"note","content":"custom {turn}","display":true}}"#
                ),
                true,
            ),
            5 if !entries.is_empty() => {
                let target = pick(&mut rng, &entries);
                push(
                    &mut ops,
                    &mut entries,
                    format!(
                        r#"{{"op":"appendLabelChange","targetRef":{target},"label":"l{turn}"}}"#
                    ),
                    true,
                );
            }
            _ => {}
        }
    }
    format!(
        r#"{{"cwd":"/tmp/pi-session-branch-summaries","ops":[{}]}}"#,
        ops.join(",\n")
    )
}

/// The files the oracle's `replay --impl manager` writes for `scripts`.
fn replays(oracle: &Oracle, dir: &Path, scripts: &[PathBuf]) -> Vec<PathBuf> {
    let outs: Vec<PathBuf> = scripts
        .iter()
        .map(|s| dir.join("replays").join(s.file_stem().unwrap()))
        .collect();
    let jobs = scripts
        .iter()
        .zip(&outs)
        .map(|(script, out)| {
            [
                "replay",
                path_str(script),
                path_str(out),
                "--impl",
                "manager",
            ]
            .map(str::to_string)
            .to_vec()
        })
        .collect();
    // Some of tests/ops are for other implementations (harness, pi 1.6): those fail here.
    for (outcome, script) in oracle.run(jobs).into_iter().zip(scripts) {
        let random = script
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .starts_with("random");
        if let (true, Err(e)) = (random, outcome.result()) {
            panic!("the oracle could not replay {}: {e}", script.display());
        }
    }
    outs.iter()
        .filter_map(|out| {
            std::fs::read_dir(out)
                .ok()?
                .map(|e| e.unwrap().path())
                .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        })
        .collect()
}

fn sources(oracle: &Oracle, dir: &Path) -> Vec<PathBuf> {
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(root().join("tests/ops"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| !p.file_stem().unwrap().to_string_lossy().starts_with("pi16"))
        .collect();
    scripts.sort();
    let base: u64 = std::env::var("PI_SESSION_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_201);
    notice(&format!(
        "branch summaries: random op scripts from seed {base} (PI_SESSION_SEED)"
    ));
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    for k in 0..4 {
        let script = dir.join(format!("scripts/random-{}.json", base + k));
        std::fs::write(&script, random_script(base + k)).unwrap();
        scripts.push(script);
    }
    let mut out = replays(oracle, dir, &scripts);
    assert!(out.len() >= 8, "the oracle replayed too few scripts");
    for seed in [7u32, 8] {
        let file = dir.join(format!("generated-{seed}.jsonl"));
        let seed = seed.to_string();
        let args = ["file", "--out", path_str(&file), "--size", "200KB"];
        let args = args
            .into_iter()
            .chain(["--seed", &seed, "--branch-every", "4"]);
        support::generate(oracle, &args.map(std::ffi::OsStr::new).collect::<Vec<_>>());
        out.push(file);
    }
    out
}

/// A spread of entries of `file` to navigate to (about ten).
fn targets(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let ids: Vec<String> = text
        .lines()
        .skip(1)
        .filter_map(|l| json::parse(l).ok())
        .filter_map(|v| str_of(&v, "id"))
        .collect();
    let step = (ids.len() / 10).max(1);
    ids.iter().step_by(step).cloned().collect()
}

/// One set of options: the model's window, the settings' reserve, the instructions, a label.
#[derive(Clone, Copy)]
struct Options {
    window: Option<f64>,
    reserve: Option<f64>,
    custom: Option<&'static str>,
    replace: Option<bool>,
    label: Option<&'static str>,
}

const OPTION_SETS: [Options; 4] = [
    Options {
        window: None,
        reserve: None,
        custom: None,
        replace: None,
        label: None,
    },
    Options {
        window: Some(17_000.0),
        reserve: None,
        custom: Some("Focus on the files."),
        replace: None,
        label: Some("bookmark"),
    },
    Options {
        window: Some(20_000.0),
        reserve: Some(19_000.0),
        custom: Some("Only list the files."),
        replace: Some(true),
        label: None,
    },
    Options {
        window: Some(0.0),
        reserve: Some(200_000.0),
        custom: None,
        replace: Some(false),
        label: None,
    },
];

impl Options {
    fn to_value(self) -> JsValue {
        let mut map = JsObject::new();
        let mut put = |k: &str, v: JsValue| {
            map.insert(k.into(), v);
        };
        put("summarize", JsValue::Bool(true));
        put("modelText", JsValue::from(MODEL_TEXT));
        put("usage", parse(USAGE));
        if let Some(w) = self.window {
            put("contextWindow", JsValue::Number(w));
        }
        if let Some(r) = self.reserve {
            put("reserveTokens", JsValue::Number(r));
        }
        if let Some(c) = self.custom {
            put("customInstructions", JsValue::from(c));
        }
        if let Some(r) = self.replace {
            put("replaceInstructions", JsValue::Bool(r));
        }
        if let Some(l) = self.label {
            put("label", JsValue::from(l));
        }
        JsValue::Object(map)
    }

    fn budget(self) -> BranchBudget {
        let d = BranchBudget::default();
        BranchBudget {
            context_window: self.window.unwrap_or(d.context_window),
            reserve_tokens: self.reserve.unwrap_or(d.reserve_tokens),
        }
    }
}

/// What this program did: the requests it would send, in pi's captured shape.
fn ours(copy: &Path, target: &str, options: Options) -> Result<Vec<String>, String> {
    let session_options = SessionOptions {
        profile: Profile::PiCli,
        ids: Arc::new(IdSource::system()),
        ..SessionOptions::default()
    };
    let mut session = Session::open(copy, "/", session_options).map_err(|e| e.to_string())?;
    let request = TreeRequest {
        target_id: target.to_string(),
        summarize: true,
        custom_instructions: options.custom.map(str::to_string),
        replace_instructions: options.replace,
        label: options.label.map(str::to_string),
    };
    let Some(preparation) = session.prepare_tree(&request).map_err(|e| e.to_string())? else {
        return Ok(Vec::new());
    };
    let plan = session
        .branch_summary_plan(&preparation, options.budget())
        .map_err(|e| e.to_string())?;
    let mut requests = Vec::new();
    let supplied = match &plan {
        None => None,
        Some(plan) => {
            if let Some(r) = plan
                .request(options.custom, options.replace)
                .map_err(|m| m.0)?
            {
                requests.push(request_doc(
                    &JsValue::from(r.system_prompt),
                    &JsValue::String(r.text.clone()),
                    r.max_tokens.unwrap_or(f64::NAN),
                ));
            }
            Some(model_summary(plan, MODEL_TEXT, Some(parse(USAGE))))
        }
    };
    let decision =
        decide(Profile::PiCli, &preparation, None, supplied).map_err(|e| e.to_string())?;
    assert!(matches!(decision, TreeDecision::Proceed { .. }));
    session
        .apply_navigation(&preparation, &decision)
        .map_err(|e| e.to_string())?;
    Ok(requests)
}

fn request_doc(system: &JsValue, text: &JsValue, max_tokens: f64) -> String {
    format!(
        "system {} / maxTokens {max_tokens} / text {}",
        system.stringify(),
        text.stringify()
    )
}

/// pi's captured requests, in the same shape.
fn theirs(doc: &JsValue) -> Result<Vec<String>, String> {
    if let Some(error) = str_of(doc, "error") {
        return Err(error);
    }
    let Some(JsValue::Array(requests)) = doc.get("requests") else {
        return Ok(Vec::new());
    };
    Ok(requests
        .iter()
        .map(|r| {
            let options = r.get("options").unwrap();
            assert_eq!(
                str_of(options, "cacheRetention").as_deref(),
                Some("none"),
                "pi's summary requests keep no cache"
            );
            let max = match options.get("maxTokens") {
                Some(JsValue::Number(n)) => *n,
                other => panic!("maxTokens {other:?}"),
            };
            request_doc(r.get("systemPrompt").unwrap(), r.get("text").unwrap(), max)
        })
        .collect())
}

/// The sweep of `branch_summaries_are_pis`, by case (`<source>::set-<n>`): the mismatches
/// and the comparisons made; and over the whole sweep, the navigations with a model request and
/// the summaries written.
struct Summaries {
    cases: HashMap<String, (Vec<String>, usize)>,
    with_request: usize,
    summaries_written: usize,
}

static SUMMARIES: Shared<Summaries> = Shared::new(summaries);

/// The seed of the random op scripts (`PI_SESSION_SEED`).
fn base_seed() -> u64 {
    std::env::var("PI_SESSION_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_201)
}

/// The names of the sources, known before pi's code runs, in the order of [`sources`]: the op
/// scripts' stems, the random scripts', the generated sessions'.
fn source_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("tests/ops"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|stem| !stem.starts_with("pi16"))
        .collect();
    names.sort();
    names.extend((0..4).map(|k| format!("random-{}", base_seed() + k)));
    names.extend(["generated-7".to_owned(), "generated-8".to_owned()]);
    names
}

/// The name of a source file: its script's stem (the replay's folder), or its own stem.
fn source_name(file: &Path, dir: &Path) -> String {
    let parent = file.parent().unwrap();
    if parent.parent() == Some(&dir.join("replays")) {
        parent.file_name().unwrap().to_string_lossy().into_owned()
    } else {
        file.file_stem().unwrap().to_string_lossy().into_owned()
    }
}

/// One trial per source and option set (`branch_summary_conformance::branch_summaries_are_pis::
/// <source>::set-<n>`, each over about ten targets), and one for what the sweep as a whole
/// must have exercised.
fn summary_trials() -> Vec<Trial> {
    let test = "branch_summaries_are_pis";
    let mut trials = Vec::new();
    for source in source_names() {
        for set in 0..OPTION_SETS.len() {
            let key = format!("{source}::set-{set}");
            let name = format!("branch_summary_conformance::{test}::{key}");
            trials.push(crate::harness::with_pi_or_absent(name, move || {
                let Some((mismatches, compared)) = SUMMARIES.get().cases.get(&key) else {
                    return Err(format!("pi's replay wrote no session for {key}"));
                };
                crate::harness::tally(test, *compared);
                assert_no_mismatches(mismatches);
                Ok(())
            }));
        }
    }
    trials.push(crate::with_pi(
        format!("branch_summary_conformance::{test}::coverage"),
        || {
            let sweep = SUMMARIES.get();
            assert!(
                sweep.with_request > 0 && sweep.summaries_written > sweep.with_request / 2,
                "{} navigations with a model request, {} summaries written",
                sweep.with_request,
                sweep.summaries_written
            );
        },
    ));
    trials
}

fn summaries() -> Summaries {
    let test = "branch_summaries_are_pis";
    let Some(oracle) = support::oracle(test) else {
        unreachable!("support::oracle never answers None");
    };
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().canonicalize().unwrap();
    let sources = sources(oracle, &dir);

    let mut cases = Vec::new();
    for source in &sources {
        let name = source_name(source, &dir);
        for target in targets(source) {
            for (set, options) in OPTION_SETS.into_iter().enumerate() {
                let key = format!("{name}::set-{set}");
                cases.push((key, source.clone(), target.clone(), options));
            }
        }
    }
    let jobs: Vec<JsValue> = cases
        .iter()
        .map(|(_, source, target, options)| {
            JsValue::Array(vec![
                JsValue::from(path_str(source)),
                JsValue::from(target.as_str()),
                options.to_value(),
            ])
        })
        .collect();
    let jobs_file = dir.join("jobs.json");
    std::fs::write(&jobs_file, JsValue::Array(jobs).stringify()).unwrap();
    let mut command = oracle.command("pi-navigate.mjs");
    command.arg(oracle.dir()).arg("batch").arg(&jobs_file);
    let pi_docs = support::oracle::documents(command, "pi-navigate.mjs", cases.len());

    let mut by_case: HashMap<String, (Vec<String>, usize)> = HashMap::new();
    let mut files = Vec::new();
    let mut compared = 0;
    let mut with_request = 0;
    let mut summaries_written = 0;
    let mut refused = 0;
    let mut known = 0;
    for (i, ((key, source, target, options), pi_doc)) in cases.iter().zip(&pi_docs).enumerate() {
        let what = format!(
            "{} -> {target} ({key})",
            source.file_name().unwrap().to_string_lossy(),
        );
        let (mismatches, counted) = by_case.entry(key.clone()).or_default();
        let copy = dir
            .join(format!("ours/{i}"))
            .join(source.file_name().unwrap());
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(source, &copy).unwrap();
        let mine = ours(&copy, target, *options);
        let pi = theirs(pi_doc);
        match (&pi, &mine) {
            (Ok(a), Ok(b)) => {
                compared += 1;
                *counted += 1;
                with_request += usize::from(!a.is_empty());
                if a != b {
                    mismatches.push(format!("{what}: requests: pi {a:?} / ours {b:?}"));
                }
                if pi_doc.get("summaryEntryId").is_some_and(|v| v.is_truthy()) {
                    summaries_written += 1;
                }
                files.push((key.clone(), what, str_of(pi_doc, "copy").unwrap(), copy));
            }
            // pi throws a TypeError on a message its summarizer cannot read; this program
            // refuses with a message naming the problem. Neither writes anything.
            (Err(_), Err(b)) if b.starts_with("pi cannot summarize this branch") => {
                compared += 1;
                *counted += 1;
                refused += 1;
            }
            // The known divergence of tests/navigate_conformance.rs: pi's `contentText` throws
            // on a target whose content is null; this program navigates (editor text "").
            (Err(a), Ok(_)) if a.starts_with("Cannot read properties of null") => known += 1,
            (a, b) => mismatches.push(format!("{what}: pi {a:?} / ours {b:?}")),
        }
    }
    let jobs = files
        .iter()
        .flat_map(|(_, _, a, b)| {
            [a.clone(), path_str(b).to_string()].map(|f| vec!["normalize".to_string(), f])
        })
        .collect();
    let mut normalized = oracle.run(jobs).into_iter().map(|o| o.result());
    for (key, what, _, _) in &files {
        let (a, b) = (normalized.next().unwrap(), normalized.next().unwrap());
        compared += 1;
        let (mismatches, counted) = by_case.get_mut(key).unwrap();
        *counted += 1;
        if a != b {
            mismatches.push(format!(
                "{what}: written files differ:\npi   {a:?}\nours {b:?}"
            ));
        }
    }
    notice(&format!(
        "{test}: {} sources, {} navigations, {with_request} with a model request, {summaries_written} summaries written, {refused} refused by both, {known} known divergences, {compared} compared",
        sources.len(),
        cases.len()
    ));
    Summaries {
        cases: by_case,
        with_request,
        summaries_written,
    }
}

/// Fails with the first mismatches (each clipped) when there are any.
fn assert_no_mismatches(mismatches: &[String]) {
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches
            .iter()
            .take(20)
            .map(|m| clip(m))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn clip(text: &str) -> String {
    if text.len() <= 1500 {
        return text.to_string();
    }
    let mut end = 1500;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

/// The harness profile against pi-agent-core 0.82.1's own `collectEntriesForBranchSummary` and
/// `generateBranchSummary` (fake `models.completeSimple`) and the entry `AgentHarness`'s
/// `navigateTree` then writes: the abandoned entries, the request, and the written
/// `branch_summary` byte for byte (ids and times aside), on the harness replays of seeded
/// random op scripts and a generated session.
fn harness_branch_summaries_are_pi_agent_cores() {
    let test = "harness_branch_summaries_are_pi_agent_cores";
    let Some(oracle) = support::oracle(test) else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().canonicalize().unwrap();
    let base: u64 = std::env::var("PI_SESSION_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_201);
    notice(&format!(
        "{test}: random op scripts from seed {base} (PI_SESSION_SEED)"
    ));
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    let scripts: Vec<PathBuf> = (0..4)
        .map(|k| {
            let script = dir.join(format!("scripts/random-{}.json", base + 100 + k));
            std::fs::write(&script, random_script(base + 100 + k)).unwrap();
            script
        })
        .collect();
    let outs: Vec<PathBuf> = scripts
        .iter()
        .map(|s| dir.join("replays").join(s.file_stem().unwrap()))
        .collect();
    let jobs = scripts
        .iter()
        .zip(&outs)
        .map(|(s, o)| {
            ["replay", path_str(s), path_str(o), "--impl", "harness"]
                .map(str::to_string)
                .to_vec()
        })
        .collect();
    for outcome in oracle.run(jobs) {
        if let Err(e) = outcome.result() {
            panic!("the oracle could not replay a script for the harness: {e}");
        }
    }
    let mut sources: Vec<PathBuf> = outs
        .iter()
        .filter_map(|out| {
            walk(out)
                .into_iter()
                .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        })
        .collect();
    assert_eq!(sources.len(), scripts.len(), "every script gave a file");
    let generated = dir.join("generated-9.jsonl");
    let args = [
        "file",
        "--out",
        path_str(&generated),
        "--size",
        "150KB",
        "--seed",
        "9",
    ];
    support::generate(oracle, &args.map(std::ffi::OsStr::new));
    sources.push(generated);

    let windows = [None, Some(17_000.0), Some(16_900.0)];
    let mut cases = Vec::new();
    for source in &sources {
        for (k, target) in targets(source).into_iter().enumerate() {
            let window = windows[k % windows.len()];
            let custom = (k % 2 == 1).then_some("Name the files.");
            let replace = (k % 4 == 3).then_some(true);
            cases.push((source.clone(), target, window, custom, replace));
        }
    }
    let docs: Vec<JsValue> = cases
        .iter()
        .enumerate()
        .map(|(i, (source, target, window, custom, replace))| {
            let copy = dir.join(format!("pi/{i}.jsonl"));
            std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
            std::fs::copy(source, &copy).unwrap();
            let mut map = JsObject::new();
            map.insert("op".into(), JsValue::from("branch"));
            map.insert("file".into(), JsValue::from(path_str(&copy)));
            map.insert("target".into(), JsValue::from(target.as_str()));
            if let Some(w) = window {
                map.insert("contextWindow".into(), JsValue::Number(*w));
            }
            if let Some(c) = custom {
                map.insert("customInstructions".into(), JsValue::from(*c));
            }
            if let Some(r) = replace {
                map.insert("replaceInstructions".into(), JsValue::Bool(*r));
            }
            JsValue::Object(map)
        })
        .collect();
    let results = run_pi_compaction(oracle, &docs);

    let mut mismatches = Vec::new();
    let (mut compared, mut with_request, mut refused) = (0, 0, 0);
    for (i, ((source, target, window, custom, replace), pi)) in
        cases.iter().zip(&results).enumerate()
    {
        let what = format!(
            "{} -> {target}",
            source.file_name().unwrap().to_string_lossy()
        );
        let copy = dir.join(format!("ours/{i}.jsonl"));
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(source, &copy).unwrap();
        let options = SessionOptions {
            profile: Profile::Harness,
            ids: Arc::new(IdSource::system()),
            ..SessionOptions::default()
        };
        let mut session = Session::open(&copy, "/", options).unwrap();
        let request = TreeRequest {
            target_id: target.clone(),
            summarize: true,
            custom_instructions: custom.map(str::to_string),
            replace_instructions: *replace,
            label: None,
        };
        let budget = BranchBudget {
            context_window: window.unwrap_or(0.0),
            ..BranchBudget::default()
        };
        let ours = session.prepare_tree(&request).and_then(|p| {
            let p = p.expect("the target is not the leaf");
            let plan = session.branch_summary_plan(&p, budget)?;
            Ok((p, plan))
        });
        if let Some(message) = str_of(pi, "message") {
            match ours {
                Err(e) if e.message.starts_with("pi cannot summarize this branch") => {
                    refused += 1;
                }
                _ => mismatches.push(format!("{what}: pi refused ({message}); ours did not")),
            }
            continue;
        }
        let (preparation, plan) = match ours {
            Ok(x) => x,
            Err(e) => {
                mismatches.push(format!("{what}: ours refused ({e}); pi summarized"));
                continue;
            }
        };
        let plan = plan.expect("a summary is wanted and something is abandoned");
        compared += 1;
        let ids: Vec<String> = preparation
            .entries_to_summarize
            .iter()
            .map(|&p| str_of(&session.entry_value(p).unwrap(), "id").unwrap())
            .collect();
        let pi_ids: Vec<String> = match pi.get("entryIds") {
            Some(JsValue::Array(a)) => a.iter().map(|v| v.as_str().unwrap().into_owned()).collect(),
            _ => panic!("{what}: no entryIds in {pi:?}"),
        };
        if ids != pi_ids {
            mismatches.push(format!(
                "{what}: abandoned entries: pi {pi_ids:?} / ours {ids:?}"
            ));
        }
        let mine = plan.request(*custom, *replace).unwrap().map(|r| {
            request_doc(
                &JsValue::from(r.system_prompt),
                &JsValue::String(r.text.clone()),
                r.max_tokens.unwrap_or(f64::NAN),
            )
        });
        let theirs = match pi.get("requests") {
            Some(JsValue::Array(r)) if r.is_empty() => None,
            Some(JsValue::Array(r)) => {
                let max = match r[0].get("options").and_then(|o| o.get("maxTokens")) {
                    Some(JsValue::Number(n)) => *n,
                    other => panic!("maxTokens {other:?}"),
                };
                Some(request_doc(
                    r[0].get("systemPrompt").unwrap(),
                    r[0].get("text").unwrap(),
                    max,
                ))
            }
            _ => panic!("{what}: no requests"),
        };
        with_request += usize::from(theirs.is_some());
        compared += 1;
        if mine != theirs {
            mismatches.push(format!("{what}: request: pi {theirs:?} / ours {mine:?}"));
        }
        let (text, usage) = match pi.get("answers") {
            Some(JsValue::Array(a)) if !a.is_empty() => {
                (str_of(&a[0], "text").unwrap(), a[0].get("usage").cloned())
            }
            _ => (String::new(), None),
        };
        let supplied = model_summary(&plan, &text, usage);
        let decision = decide(Profile::Harness, &preparation, None, Some(supplied)).unwrap();
        let outcome = session
            .apply_navigation(&preparation, &decision)
            .unwrap()
            .expect("not cancelled");
        let line = outcome
            .summary_entry
            .expect("a summary was written")
            .stringify();
        compared += 1;
        let pi_line = str_of(pi, "line").unwrap();
        if without_id_and_time(&line) != without_id_and_time(&pi_line) {
            mismatches.push(format!(
                "{what}: written entry:\npi   {pi_line}\nours {line}"
            ));
        }
    }
    support::count(test, compared);
    notice(&format!(
        "{test}: {} sources, {} navigations, {with_request} with a model request, {refused} refused by both, {compared} compared",
        sources.len(),
        cases.len()
    ));
    assert!(with_request > 5, "too few requests compared");
    assert_no_mismatches(&mismatches);
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// pi 1.6.0 (the pi-1.6 profile)

/// pi 1.6.0's branch summaries (`generateBranchSummary` as `navigateTree` runs it) on sessions
/// its SessionManager wrote: the abandoned entries, the request (context edits applied, no
/// output cap, `reasoning` from the thinking level, thinking blocks left out), the refusal of
/// a cut-off or tool-calling answer, and the written `branch_summary` line (`fromId` the old
/// leaf). `PI16_BRANCH_SEEDS=N` generates N sessions (default 3).
fn pi16_branch_summaries_are_pi16s() {
    use pi_session::compaction::{ModelOptions, SummaryText, Verdict};
    let Some(oracle) = support::oracle("branch_summary_conformance::pi16") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let seeds: u32 = std::env::var("PI16_BRANCH_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let mut gen_jobs = Vec::new();
    let mut files = Vec::new();
    for seed in 1..=seeds {
        let file = dir.path().join(format!("pi16-{seed}.jsonl"));
        gen_jobs.push(parse(&format!(
            r#"{{"op":"gen16","out":{},"seed":{},"turns":{}}}"#,
            JsValue::from(path_str(&file)).stringify(),
            100 + seed,
            25 + seed * 11
        )));
        files.push(file);
    }
    run_pi_compaction(oracle, &gen_jobs);
    // (file, leaf, target, window, reserve, custom, replace, reasoning level, answer)
    type Pi16Branch = (
        PathBuf,
        String,
        String,
        Option<f64>,
        Option<&'static str>,
        Option<bool>,
        Option<&'static str>,
        Option<&'static str>,
    );
    let mut cases: Vec<Pi16Branch> = Vec::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for file in &files {
        let ids: Vec<String> = std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .skip(1)
            .map(parse)
            .filter_map(|e| str_of(&e, "id"))
            .collect();
        for k in 0..40 {
            let leaf = ids[rng.below(ids.len())].clone();
            let target = ids[rng.below(ids.len())].clone();
            if leaf == target {
                continue;
            }
            let window = [None, Some(20000.0), Some(17500.0)][k % 3];
            let custom = [None, Some("focus on tests")][k % 2];
            let replace = (k % 5 == 0).then_some(true);
            let level = [None, Some("high"), Some("off")][k % 3];
            let answer = match k % 9 {
                3 => Some(r#"{"stopReason":"length"}"#),
                5 => Some(r#"{"toolCall":true}"#),
                7 => Some(r#"{"stopReason":"aborted"}"#),
                _ => None,
            };
            cases.push((
                file.clone(),
                leaf,
                target,
                window,
                custom,
                replace,
                level,
                answer,
            ));
        }
    }
    let jobs: Vec<JsValue> = cases
        .iter()
        .map(
            |(file, leaf, target, window, custom, replace, level, answer)| {
                let mut text = format!(
                    r#"{{"op":"branch16","file":{},"leaf":{},"target":{}"#,
                    JsValue::from(path_str(file)).stringify(),
                    JsValue::from(leaf.as_str()).stringify(),
                    JsValue::from(target.as_str()).stringify()
                );
                if let Some(w) = window {
                    text.push_str(&format!(r#","contextWindow":{w}"#));
                }
                if let Some(c) = custom {
                    text.push_str(&format!(r#","customInstructions":"{c}""#));
                }
                if let Some(r) = replace {
                    text.push_str(&format!(r#","replaceInstructions":{r}"#));
                }
                if let Some(l) = level {
                    text.push_str(&format!(
                        r#","model":{{"reasoning":true}},"thinkingLevel":"{l}""#
                    ));
                }
                if let Some(a) = answer {
                    text.push_str(&format!(r#","answer":{a}"#));
                }
                text.push('}');
                parse(&text)
            },
        )
        .collect();
    let results = run_pi_compaction(oracle, &jobs);
    let (mut entries_n, mut requests_n, mut refusals_n, mut lines_n) = (0, 0, 0, 0);
    let mut edited_n = 0;
    for (i, (case, pi)) in cases.iter().zip(&results).enumerate() {
        let (file, leaf, target, window, custom, replace, level, answer) = case;
        let what = format!("{} leaf {leaf} target {target} case {i}", file.display());
        assert!(pi.get("error").is_none(), "{what}: pi threw {pi:?}");
        let copy = dir.path().join(format!("b{i}.jsonl"));
        std::fs::copy(file, &copy).unwrap();
        let options = SessionOptions {
            profile: Profile::Pi16,
            ids: Arc::new(IdSource::deterministic(7, 1_767_225_600_000)),
            ..SessionOptions::default()
        };
        let mut session = Session::open(&copy, "/", options).unwrap();
        session.branch(leaf).unwrap();
        let request = TreeRequest {
            target_id: target.clone(),
            summarize: true,
            custom_instructions: custom.map(str::to_string),
            replace_instructions: *replace,
            label: None,
        };
        let preparation = session.prepare_tree(&request).unwrap().unwrap();
        let ids: Vec<JsValue> = preparation
            .entries_to_summarize
            .iter()
            .map(|&p| session.entry_value(p).unwrap().get("id").cloned().unwrap())
            .collect();
        assert_eq!(Some(&JsValue::Array(ids)), pi.get("entryIds"), "{what}");
        entries_n += 1;
        let with_edit = preparation.entries_to_summarize.iter().any(|&p| {
            str_of(&session.entry_value(p).unwrap(), "type").as_deref() == Some("context_edit")
        });
        let budget = BranchBudget {
            context_window: window.unwrap_or(0.0),
            reserve_tokens: 16384.0,
        };
        let plan = session.branch_summary_plan(&preparation, budget).unwrap();
        let Some(plan) = plan else {
            assert!(pi.get("line").is_none(), "{what}: pi wrote {pi:?}");
            continue;
        };
        let model = ModelOptions {
            max_tokens: None,
            reasoning: level.is_some(),
            thinking_level: match level {
                Some(l) => Some(l.to_string()),
                None => {
                    let at = session.leaf().clone();
                    session.compaction_thinking_level(&at).unwrap()
                }
            },
        };
        let ours = plan.request_for(*custom, *replace, &model).unwrap();
        let theirs = pi.get("requests").and_then(JsValue::as_array).unwrap();
        assert_eq!(ours.is_some() as usize, theirs.len(), "{what}: requests");
        if let (Some(ours), Some(theirs)) = (&ours, theirs.first()) {
            let value = ours.to_value(0.0);
            let messages = value.get("messages").and_then(JsValue::as_array).unwrap();
            let pi_messages = theirs.get("messages").and_then(JsValue::as_array).unwrap();
            assert_eq!(
                messages.first(),
                pi_messages.first(),
                "{what}: system message"
            );
            let text = theirs.get("text").and_then(JsValue::as_js_str).unwrap();
            assert!(
                ours.text == *text,
                "{what}: request text differs:\n ours: {:?}\n pi:   {:?}",
                ours.text,
                text
            );
            let mut expected = JsObject::new();
            if let Some(r) = value.get("reasoning") {
                expected.insert("reasoning".into(), r.clone());
            }
            expected.insert("cacheRetention".into(), JsValue::from("none"));
            assert_eq!(
                Some(JsValue::Object(expected).stringify()),
                theirs.get("options").map(JsValue::stringify),
                "{what}: request options"
            );
            requests_n += 1;
            edited_n += usize::from(with_edit);
        }
        let pi_answer = pi
            .get("answers")
            .and_then(JsValue::as_array)
            .and_then(|a| a.first().cloned());
        let mut answer_text = SummaryText {
            text: pi_answer
                .as_ref()
                .and_then(|a| str_of(a, "text"))
                .unwrap_or_default(),
            usage: pi_answer.as_ref().and_then(|a| a.get("usage").cloned()),
            ..SummaryText::default()
        };
        if let Some(a) = answer.map(parse) {
            answer_text.stop_reason = str_of(&a, "stopReason");
            answer_text.calls_tool = a.get("toolCall").is_some();
        }
        if !plan.no_content() {
            match answer_text.verdict(
                pi_session::compaction::CompactionRules::Pi16,
                "branchSummary",
            ) {
                Verdict::Accept => {}
                Verdict::Aborted => {
                    assert_eq!(pi.get("aborted"), Some(&JsValue::Bool(true)), "{what}");
                    refusals_n += 1;
                    continue;
                }
                Verdict::Failed(message) => {
                    assert_eq!(str_of(pi, "failure"), Some(message), "{what}");
                    refusals_n += 1;
                    continue;
                }
            }
        }
        let supplied = model_summary(&plan, &answer_text.text, answer_text.usage.clone());
        let decision = decide(Profile::Pi16, &preparation, None, Some(supplied)).unwrap();
        let outcome = session
            .apply_navigation(&preparation, &decision)
            .unwrap()
            .unwrap();
        let line = str_of(pi, "line").unwrap_or_else(|| panic!("{what}: pi wrote nothing: {pi:?}"));
        let ours = outcome.summary_entry.unwrap().stringify();
        assert_eq!(
            without_id_and_time(&ours),
            without_id_and_time(&line),
            "{what}: the branch summary line differs"
        );
        lines_n += 1;
    }
    notice(&format!(
        "pi 1.6 branch summaries: {entries_n} abandoned-entry lists, {requests_n} requests \
         ({edited_n} over context edits), {refusals_n} refused answers, {lines_n} written lines"
    ));
    assert!(
        requests_n > 20 && lines_n > 20 && refusals_n > 5 && edited_n > 3,
        "too few cases reached pi's code"
    );
    support::count(
        "branch_summary_conformance::pi16_branch_summaries_are_pi16s",
        entries_n + requests_n + refusals_n + lines_n,
    );
}

crate::tests! {
    [summary_trials]
    harness_branch_summaries_are_pi_agent_cores,
    pi16_branch_summaries_are_pi16s,
}
