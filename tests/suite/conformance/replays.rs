//! The op scripts in `tests/ops/`, replayed with each profile by this program (with
//! `--deterministic`) and by the oracle: the replay documents, the written files (line by line,
//! ids and timestamps aside), and the written files read back by both profiles at many leaves,
//! by both programs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use pi_session::json::{self, JsObject, JsValue};

use crate::conformance::cases::{
    Answer, Case, PROFILES, check_trailing_leaf, implementation, is_leaf_entry_difference, path_str,
};
use crate::conformance::diff::Mismatches;
use crate::conformance::env::{self, Outcome};
use crate::conformance::leaves::{self, Leaf};
use crate::conformance::normalize::{self, Jsonl, Labels, object, relabel};
use crate::conformance::snapshot;

/// The seed of this program's replays (the snapshots depend on it).
const SEED: &str = "7";

fn ops_path(name: &str) -> PathBuf {
    env::root().join(format!("tests/ops/{name}.json"))
}

/// The names of the op scripts.
fn script_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(env::root().join("tests/ops"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.file_stem().unwrap().to_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

/// The oracle's side of one replay.
struct OracleReplay {
    /// How the replay command ended (the manager refuses harness-only scripts).
    outcome: Outcome,
    written: Option<Written>,
    /// The entries (positions) at which the written file is read back.
    picks: Vec<usize>,
    /// The oracle's `normalize` of its file.
    normalized: Option<JsValue>,
    /// Its answers to `written.cases(&picks)`.
    answers: Vec<Outcome>,
}

type OracleReplays = HashMap<(String, &'static str), OracleReplay>;

/// The oracle's replay of every script with every implementation, its files normalized and
/// read back: run once for all tests (two Node processes).
fn oracle_replays() -> Option<&'static OracleReplays> {
    static REPLAYS: OnceLock<Option<OracleReplays>> = OnceLock::new();
    REPLAYS
        .get_or_init(|| {
            let oracle = env::oracle()?;
            let dir = env::fresh_dir("oracle-replays");
            let keys: Vec<(String, &'static str)> = script_names()
                .into_iter()
                .flat_map(|name| PROFILES.map(|profile| (name.clone(), profile)))
                .collect();
            let out_dir = |name: &str, profile: &str| dir.join(name).join(profile);
            let jobs = keys
                .iter()
                .map(|(name, profile)| {
                    let (ops, out) = (ops_path(name), out_dir(name, profile));
                    let args = ["replay", path_str(&ops), path_str(&out), "--impl"];
                    let mut args: Vec<String> = args.map(String::from).to_vec();
                    args.push(implementation(profile).into());
                    args
                })
                .collect();
            let outcomes = oracle.start(jobs).wait();
            let mut replays: Vec<OracleReplay> = keys
                .iter()
                .zip(outcomes)
                .map(|((name, profile), outcome)| {
                    let written = (outcome.status == 0)
                        .then(|| Written::new(&outcome, out_dir(name, profile)));
                    let picks = written.as_ref().map_or(vec![], Written::spread);
                    OracleReplay {
                        outcome,
                        written,
                        picks,
                        normalized: None,
                        answers: vec![],
                    }
                })
                .collect();
            let mut jobs = Vec::new();
            for replay in &replays {
                if let Some(Written {
                    file: Some((path, _)),
                    ..
                }) = &replay.written
                {
                    jobs.push(vec!["normalize".to_string(), path_str(path).into()]);
                    let cases = replay.written.as_ref().unwrap().cases(&replay.picks);
                    jobs.extend(cases.iter().map(|(_, case)| case.oracle_args()));
                }
            }
            let mut outcomes = oracle.start(jobs).wait().into_iter();
            for replay in &mut replays {
                if let Some(written) = replay.written.as_ref().filter(|w| w.file.is_some()) {
                    replay.normalized = Some(outcomes.next().unwrap().doc());
                    let count = written.cases(&replay.picks).len();
                    replay.answers = outcomes.by_ref().take(count).collect();
                }
            }
            Some(keys.into_iter().zip(replays).collect())
        })
        .as_ref()
}

/// Whether only the harness can replay `script`: the manager refuses these ops and fields.
fn harness_only(script: &JsValue) -> bool {
    let ops = script.get("ops").and_then(JsValue::as_array).unwrap_or(&[]);
    script.get("metadata").is_some()
        || ops.iter().any(|op| {
            op.get("op").and_then(JsValue::as_str).as_deref() == Some("appendActiveToolsChange")
                || op.get("retainedTail").is_some()
        })
}

/// Whether only pi 1.6's manager can replay `script`: the oracle's other implementations
/// refuse what only pi 1.6 writes, and so do this program's other profiles.
fn pi16_only(script: &JsValue) -> bool {
    let ops = script.get("ops").and_then(JsValue::as_array).unwrap_or(&[]);
    ops.iter().any(|op| {
        let name = op.get("op").and_then(JsValue::as_str);
        let role = op
            .get("message")
            .and_then(|m| m.get("role"))
            .and_then(JsValue::as_str);
        matches!(name.as_deref(), Some("appendContextEdit" | "appendUsage"))
            || role.as_deref() == Some("system")
            || op.get("firstKeptEntryId") == Some(&JsValue::Null)
            || op.get("firstKeptEntryRef") == Some(&JsValue::Null)
    })
}

/// A replay's document and the file it wrote.
struct Written {
    /// The directory the replay wrote into.
    dir: PathBuf,
    doc: JsValue,
    file: Option<(PathBuf, Jsonl)>,
}

impl Written {
    fn new(outcome: &Outcome, dir: PathBuf) -> Written {
        let doc = outcome.doc();
        let written = doc.get("fileWritten") == Some(&JsValue::Bool(true));
        let file = written.then(|| {
            let path = PathBuf::from(doc.get("file").and_then(JsValue::as_str).unwrap().as_ref());
            let jsonl = Jsonl::read(&path);
            (path, jsonl)
        });
        Written { dir, doc, file }
    }

    /// The replay document with ids labelled in op order, timestamps `T`, and in the file
    /// name the clock reading and (unless the script fixed it) the session id replaced.
    fn normalized(&self, fixed_id: bool) -> JsValue {
        let mut doc = relabel(&self.doc, &Labels::from_replay(&self.doc), true);
        let file = doc
            .get("file")
            .and_then(JsValue::as_str)
            .unwrap()
            .into_owned();
        let relative = Path::new(&file)
            .strip_prefix(&self.dir)
            .map_or(file.clone(), |p| path_str(p).to_string());
        let (dir, name) = relative.rsplit_once('/').unwrap_or(("", &relative));
        let name = match name.split_once('_') {
            Some((stamp, rest)) if is_file_stamp(stamp) => {
                format!("T_{}", if fixed_id { rest } else { "S.jsonl" })
            }
            _ => name.to_string(),
        };
        let shown = if dir.is_empty() {
            name
        } else {
            format!("{dir}/{name}")
        };
        doc.as_object_mut()
            .unwrap()
            .insert("file".into(), JsValue::from(shown));
        doc
    }

    /// The entries to read the written file back at.
    fn spread(&self) -> Vec<usize> {
        self.file
            .as_ref()
            .map_or(vec![], |(_, jsonl)| leaves::spread(jsonl, 8))
    }

    /// The context questions for the written file: both profiles at its leaf, at `null`, at
    /// an unknown entry and at the entries `picks` (positions in the file). Each named so that
    /// the name holds in every file written by the same ops (`pi-cli e4`).
    fn cases(&self, picks: &[usize]) -> Vec<(String, Case)> {
        let Some((path, jsonl)) = &self.file else {
            return vec![];
        };
        let labels = Labels::from_file(jsonl);
        let ids = jsonl.ids();
        let mut leaves = vec![
            ("default".to_string(), Leaf::Default),
            ("null".to_string(), Leaf::Null),
            (
                "no-such-entry".to_string(),
                Leaf::Id("no-such-entry".into()),
            ),
        ];
        for &i in picks {
            let id = ids[i].clone().unwrap();
            leaves.push((labels.get(&id).unwrap().to_string(), Leaf::Id(id)));
        }
        let mut cases = Vec::new();
        for profile in PROFILES {
            for (name, leaf) in &leaves {
                let case = Case {
                    file: path.clone(),
                    profile,
                    leaf: leaf.clone(),
                };
                cases.push((format!("{profile} {name}"), case));
            }
        }
        cases
    }
}

/// `2026-01-01T00-00-00-000Z`, the clock reading in a session file name.
fn is_file_stamp(stamp: &str) -> bool {
    let shape = "0000-00-00T00-00-00-000Z";
    stamp.len() == shape.len()
        && stamp.bytes().zip(shape.bytes()).all(|(c, s)| {
            if s == b'0' {
                c.is_ascii_digit()
            } else {
                c == s
            }
        })
}

/// One script replayed with one profile, by this program and (with Node) by the oracle.
struct Replay {
    what: String,
    profile: &'static str,
    fixed_id: bool,
    ours: Written,
    /// The entries (positions) at which our file is read back; the oracle's file is read at
    /// the entries the same rule picks there.
    picks: Vec<usize>,
    theirs: Option<&'static OracleReplay>,
}

impl Replay {
    /// Compares everything; returns the snapshot documents (JSON, and the file text).
    /// `normalized` is the oracle's `normalize` of our file.
    fn compare(
        &self,
        found: &mut Mismatches,
        ours_on_ours: &[Outcome],
        ours_on_theirs: &[Outcome],
        normalized: Option<JsValue>,
    ) -> (JsValue, Option<String>) {
        let what = &self.what;
        let ours_doc = self.ours.normalized(self.fixed_id);
        let path = self
            .ours
            .doc
            .get("file")
            .and_then(JsValue::as_str)
            .unwrap()
            .into_owned();
        found.check(
            Path::new(&path).exists() == self.ours.file.is_some(),
            || format!("{what}: fileWritten does not say whether {path} exists"),
        );
        let mut our_answers: Vec<(String, &Path, Answer)> = Vec::new();
        if let Some((our_path, our_jsonl)) = &self.ours.file {
            let labels = Labels::from_file(our_jsonl);
            for ((name, case), outcome) in self.ours.cases(&self.picks).iter().zip(ours_on_ours) {
                if is_leaf_entry_difference(case, our_jsonl) {
                    let answer = Answer::ours(outcome, JsValue::clone);
                    check_trailing_leaf(found, our_jsonl, case, &answer, true);
                    continue;
                }
                let answer = Answer::ours(outcome, |d| relabel(d, &labels, true));
                our_answers.push((name.clone(), our_path, answer));
            }
        }
        let file_text = self
            .ours
            .file
            .as_ref()
            .map(|(_, jsonl)| normalize::file_text(jsonl));

        if let Some(theirs) = self.theirs {
            let Some(written) = &theirs.written else {
                found.check(false, || {
                    format!("{what}: the oracle failed: {:?}", theirs.outcome)
                });
                return (JsValue::Null, None);
            };
            found.compare(
                &format!("{what}: replay document"),
                &ours_doc,
                &written.normalized(self.fixed_id),
            );
            match (&self.ours.file, &written.file) {
                (Some(_), Some((_, their_jsonl))) => {
                    let theirs_normalized = theirs.normalized.as_ref().unwrap();
                    found.compare(
                        &format!("{what}: files, normalized by the oracle"),
                        &normalized.unwrap(),
                        theirs_normalized,
                    );
                    found.compare(
                        &format!("{what}: the oracle's file, normalized by this suite / by it"),
                        &normalize::normalize_file(their_jsonl),
                        theirs_normalized,
                    );
                    found.compare_lines(
                        &format!("{what}: file text with ids and timestamps replaced"),
                        file_text.as_ref().unwrap(),
                        &normalize::file_text(their_jsonl),
                    );
                }
                (None, None) => {}
                (ours, theirs) => found.check(false, || {
                    let ours = ours.as_ref().map(|f| &f.0);
                    let theirs = theirs.as_ref().map(|f| &f.0);
                    format!("{what}: ours wrote {ours:?}, the oracle {theirs:?}")
                }),
            }
            if let Some((_, their_jsonl)) = &written.file {
                found.check(theirs.picks == self.picks, || {
                    format!("{what}: the files are read back at different entries")
                });
                let their_labels = Labels::from_file(their_jsonl);
                let their_cases = written.cases(&theirs.picks);
                let asked = their_cases.iter().zip(ours_on_theirs).zip(&theirs.answers);
                for (((name, case), ours), oracle) in asked {
                    if is_leaf_entry_difference(case, their_jsonl) {
                        let ours = Answer::ours(ours, JsValue::clone);
                        check_trailing_leaf(found, their_jsonl, case, &ours, true);
                        let oracle = Answer::oracle(oracle, JsValue::clone);
                        check_trailing_leaf(found, their_jsonl, case, &oracle, false);
                        continue;
                    }
                    found.answers(
                        &format!("{what}: {}", case.describe()),
                        &Answer::ours(ours, JsValue::clone),
                        &Answer::oracle(oracle, JsValue::clone),
                    );
                    let normalized = Answer::oracle(oracle, |d| relabel(d, &their_labels, true));
                    match our_answers.iter().find(|(n, _, _)| n == name) {
                        Some((_, _, ours)) => found.answers(
                            &format!("{what}: {name}, ours on our file / the oracle on its file"),
                            ours,
                            &normalized,
                        ),
                        None => found.check(false, || {
                            format!("{what}: {name} was not asked of our file")
                        }),
                    }
                }
            }
        }
        let contexts: JsObject = our_answers
            .iter()
            .map(|(name, file, answer)| (name.as_str().into(), answer.snapshot(file)))
            .collect();
        let doc = object([
            ("replay", ours_doc),
            ("contexts", JsValue::Object(contexts)),
        ]);
        (doc, file_text.map(|lines| lines.join("\n")))
    }
}

fn replay_script(name: &str) {
    let ops = ops_path(name);
    let script = json::parse_bytes(&std::fs::read(&ops).unwrap()).unwrap();
    let mut found = Mismatches::default();
    // This program's side first, while the oracle's shared batch may still be running.
    let mut replays = Vec::new();
    let mut refusals = Vec::new();
    for profile in PROFILES {
        let what = format!("replay {name} --profile {profile}");
        let dir = env::fresh_dir(&format!("replays/{name}/{profile}"));
        let args = [
            "replay",
            path_str(&ops),
            path_str(&dir),
            "--profile",
            profile,
            "--deterministic",
            SEED,
        ];
        let ours = env::ours(&args);
        let refused = (harness_only(&script) && profile != "harness")
            || (pi16_only(&script) && profile != "pi-1.6");
        if refused {
            found.check(ours.status == 2, || {
                format!("{what}: ours must refuse the ops this profile cannot write, got {ours:?}")
            });
            refusals.push((what, profile));
            continue;
        }
        let ours = Written::new(&ours, dir);
        replays.push(Replay {
            what,
            profile,
            fixed_id: script.get("sessionId").is_some(),
            picks: ours.spread(),
            ours,
            theirs: None,
        });
    }
    let ask = |cases: Vec<(String, Case)>| cases.iter().map(|(_, c)| c.ours()).collect::<Vec<_>>();
    let ours_on_ours: Vec<Vec<Outcome>> = replays
        .iter()
        .map(|r| ask(r.ours.cases(&r.picks)))
        .collect();

    let oracle_replays = oracle_replays();
    if oracle_replays.is_none() {
        env::skipped("replaying the op scripts with pi");
    }
    let theirs = |profile| oracle_replays.map(|r| &r[&(name.to_string(), profile)]);
    for (what, profile) in refusals {
        if let Some(theirs) = theirs(profile) {
            let refused = theirs.outcome.status == 2;
            found.check(refused, || {
                format!("{what}: the oracle must refuse, got {:?}", theirs.outcome)
            });
        }
    }
    for replay in &mut replays {
        replay.theirs = theirs(replay.profile);
    }
    // The oracle normalizes our files (a quick job: no pi package is loaded for it).
    let with_file = |r: &&Replay| r.ours.file.is_some() && r.theirs.is_some();
    let pending = env::oracle().filter(|_| oracle_replays.is_some()).map(|o| {
        let files = replays
            .iter()
            .filter(with_file)
            .map(|r| &r.ours.file.as_ref().unwrap().0);
        o.start(
            files
                .map(|path| vec!["normalize".to_string(), path_str(path).into()])
                .collect(),
        )
    });
    let ours_on_theirs: Vec<Vec<Outcome>> = replays
        .iter()
        .map(|r| {
            match r
                .theirs
                .and_then(|t| t.written.as_ref().map(|w| (w, &t.picks)))
            {
                Some((written, picks)) => ask(written.cases(picks)),
                None => vec![],
            }
        })
        .collect();
    let mut normalized = pending.map(|p| p.wait()).unwrap_or_default().into_iter();

    let mut snapshots = Vec::new();
    for (i, replay) in replays.iter().enumerate() {
        let ours_normalized = with_file(&replay).then(|| normalized.next().unwrap().doc());
        let (doc, text) = replay.compare(
            &mut found,
            &ours_on_ours[i],
            &ours_on_theirs[i],
            ours_normalized,
        );
        snapshots.push((replay.profile, doc, text));
    }
    found.finish(&format!("replay {name}"));

    assert_snapshots(name, &snapshots);
}

/// The first profile's documents in full (`replay-<script>-<profile>`, `…-file`), the other's as
/// their differences from them (`replay-<script>-<other>-vs-<profile>`, `…-file`): the two are
/// near copies, and what differs between the profiles is what deserves to be read.
fn assert_snapshots(script: &str, snapshots: &[(&'static str, JsValue, Option<String>)]) {
    let Some((base, base_doc, _)) = snapshots.first() else {
        return;
    };
    let name = |profile: &str| format!("replay-{script}-{profile}");
    snapshot::assert_json(&name(base), base_doc);
    for (profile, doc, _) in &snapshots[1..] {
        snapshot::assert_json_diff(
            &format!("{}-vs-{base}", name(profile)),
            (base, base_doc),
            (profile, doc),
        );
    }
    // The file text: a profile may write none (a pi-cli session with no assistant message).
    let mut files = snapshots
        .iter()
        .filter_map(|(profile, _, text)| Some((*profile, text.as_ref()?)));
    let Some((base, base_text)) = files.next() else {
        return;
    };
    snapshot::assert_text(&format!("{}-file", name(base)), base_text);
    for (profile, text) in files {
        snapshot::assert_text_diff(
            &format!("{}-vs-{base}-file", name(profile)),
            (base, base_text),
            (profile, text),
        );
    }
}

macro_rules! replay_tests {
    ($($test:ident => $script:literal,)*) => {
        $(
            fn $test() {
                replay_script($script);
            }
        )*

        /// One trial per op script, and the check that every script has one.
        fn replay_trials() -> Vec<libtest_mimic::Trial> {
            crate::tests!(@vec $($test,)* every_op_script_has_a_test)
        }

        fn every_op_script_has_a_test() {
            assert_eq!(script_names(), [$($script),*]);
        }
    };
}

replay_tests! {
    branches => "branches",
    compaction => "compaction",
    conversation => "conversation",
    errors => "errors",
    harness_features => "harness-features",
    no_assistant => "no-assistant",
    pi16_kinds => "pi16-kinds",
    values => "values",
}

/// What an op script exercises: each op, each option, each message role and content block.
fn features(script: &JsValue) -> Vec<String> {
    let mut found: Vec<String> = ["sessionId", "parentSession", "metadata"]
        .into_iter()
        .filter(|key| script.get(key).is_some())
        .map(String::from)
        .collect();
    let ops = script.get("ops").and_then(JsValue::as_array).unwrap_or(&[]);
    let mut has_assistant = false;
    for op in ops {
        let kind = op.get("op").and_then(JsValue::as_str).unwrap().into_owned();
        found.push(kind.clone());
        for (key, value) in op
            .as_object()
            .unwrap()
            .iter()
            .filter(|(key, _)| key.escaped() != "op")
        {
            let key = key.escaped();
            found.push(format!("{kind}.{key}"));
            if matches!(value, JsValue::Null | JsValue::Bool(_)) {
                found.push(format!("{kind}.{key}={}", value.stringify()));
            }
        }
        if kind == "appendCustomEntry" && op.get("data").is_none() {
            found.push("appendCustomEntry without data".into());
        }
        let label = op.get("label");
        if kind == "appendLabelChange" && label.is_none_or(|l| !l.is_truthy()) {
            found.push("appendLabelChange clears".into());
        }
        if let Some(message) = op.get("message") {
            let role = message
                .get("role")
                .and_then(JsValue::as_str)
                .unwrap_or_default();
            has_assistant |= role == "assistant";
            found.push(format!("message role {role}"));
            for block in message
                .get("content")
                .and_then(JsValue::as_array)
                .unwrap_or(&[])
            {
                let block = block
                    .get("type")
                    .and_then(JsValue::as_str)
                    .unwrap_or_default();
                found.push(format!("{role} content {block}"));
            }
        }
    }
    if !has_assistant {
        found.push("no assistant message".into());
    }
    found
}

fn op_scripts_cover_every_op_of_the_replay_format() {
    let mut covered = std::collections::HashSet::new();
    for name in script_names() {
        let script = json::parse_bytes(&std::fs::read(ops_path(&name)).unwrap()).unwrap();
        covered.extend(features(&script));
    }
    let wanted = [
        "sessionId",
        "parentSession",
        "metadata",
        "no assistant message",
        "message role user",
        "message role assistant",
        "message role toolResult",
        "message role bashExecution",
        "message role custom",
        "assistant content thinking",
        "assistant content text",
        "assistant content toolCall",
        "user content image",
        "appendModelChange",
        "appendThinkingLevelChange",
        "appendCompaction.firstKeptEntryRef",
        "appendCompaction.firstKeptEntryId",
        "appendCompaction.details",
        "appendCompaction.fromHook",
        "appendCompaction.usage",
        "appendCompaction.retainedTail",
        "appendCustomEntry.data",
        "appendCustomEntry.data=null",
        "appendCustomEntry without data",
        "appendCustomMessageEntry.display=true",
        "appendCustomMessageEntry.display=false",
        "appendCustomMessageEntry.details",
        "appendLabelChange.label",
        "appendLabelChange clears",
        "appendLabelChange.targetId",
        "appendLabelChange.allowError=true",
        "appendSessionInfo",
        "appendActiveToolsChange",
        "branch",
        "branch.allowError=true",
        "resetLeaf",
        "branchWithSummary.targetRef=null",
        "branchWithSummary.targetId",
        "branchWithSummary.details",
        "branchWithSummary.fromHook",
        "branchWithSummary.usage",
        "message role system",
        "appendContextEdit.targetRef",
        "appendContextEdit.targetId",
        "appendContextEdit.replacement=null",
        "appendContextEdit.allowError=true",
        "appendUsage.note",
        "appendCompaction.firstKeptEntryRef=null",
    ];
    let missing: Vec<&str> = wanted
        .into_iter()
        .filter(|f| !covered.contains(*f))
        .collect();
    assert!(missing.is_empty(), "no op script covers: {missing:?}");
}

crate::tests! {
    [replay_trials]
    op_scripts_cover_every_op_of_the_replay_format,
}
