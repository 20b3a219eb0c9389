//! Sweeps of forks over every kind of source, compared with pi.

use libtest_mimic::Trial;

use super::*;
use crate::harness::Shared;

/// The forks of the hand-made sources (built here, so the cases are named before pi runs):
/// `--at` every entry, `before` every user message and one entry of each other kind, and an
/// unknown id.
fn hand_made_cases(sources: &[Source]) -> Vec<ForkCase> {
    let mut cases: Vec<ForkCase> = (0..sources.len())
        .flat_map(|s| spread(sources, s, Spread::Every))
        .collect();
    for position in [Position::Before, Position::At] {
        cases.push(ForkCase {
            source: 0,
            index: 0,
            unknown_id: Some("nope".into()),
            position,
        });
    }
    cases
}

/// A fork's name among the trials: `<source>::<at|before>::<entry index>-<kind>`.
fn case_name(sources: &[Source], case: &ForkCase) -> String {
    let source = &sources[case.source];
    match &case.unknown_id {
        Some(id) => format!("{}::{}::unknown-{id}", source.name, case.position.name()),
        None => format!(
            "{}::{}::{:03}-{}",
            source.name,
            case.position.name(),
            case.index,
            source.entries[case.index].kind
        ),
    }
}

/// The hand-made sweep, made once: what the forks that agreed found, and each fork's outcome
/// by name.
struct HandMade {
    report: Report,
    cases: usize,
    outcomes: HashMap<String, Result<(), String>>,
}

static HAND_MADE: Shared<HandMade> = Shared::new(|| {
    assert!(pi_available(HAND_MADE_TEST));
    let scratch = Scratch::new();
    let sources = hand_made_sources(&scratch);
    let cases = hand_made_cases(&sources);
    let (report, outcomes) = compare_each_fork(&scratch, "hand", &sources, &cases);
    HandMade {
        report,
        cases: cases.len(),
        outcomes: cases
            .iter()
            .map(|case| case_name(&sources, case))
            .zip(outcomes)
            .collect(),
    }
});

const HAND_MADE_TEST: &str = "fork_conformance::sweeps::forks_of_hand_made_sessions_match_pi";

/// One trial per fork of a hand-made source
/// (`fork_conformance::sweeps::forks_of_hand_made_sessions_match_pi::kinds::at::004-label`),
/// and one for what the sweep as a whole must have covered.
fn hand_made_trials() -> Vec<Trial> {
    let scratch = Scratch::new();
    let sources = hand_made_sources(&scratch);
    let mut trials: Vec<Trial> = hand_made_cases(&sources)
        .iter()
        .map(|case| {
            let name = case_name(&sources, case);
            crate::with_pi(format!("{HAND_MADE_TEST}::{name}"), move || match HAND_MADE
                .get()
                .outcomes
                .get(&name)
            {
                Some(Ok(())) => {}
                Some(Err(message)) => panic!("{message}"),
                None => panic!("{name}: not among the forks the shared run made"),
            })
        })
        .collect();
    trials.push(crate::with_pi(
        format!("{HAND_MADE_TEST}::coverage"),
        hand_made_coverage,
    ));
    trials
}

/// What the hand-made sweep as a whole must have met: every kind forked at, forks before root
/// messages, labels re-created, refusals, written files, and the known differences each where
/// it is expected.
fn hand_made_coverage() {
    let sweep = HAND_MADE.get();
    let report = &sweep.report;
    assert_eq!(
        report.compared, sweep.cases,
        "forks that agreed with pi's (the others fail their own trials)"
    );
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

/// A sweep compared source by source: what the forks that agreed found, and the differences
/// found in each source's forks, by source name.
struct BySource {
    report: Report,
    failures: HashMap<String, Vec<String>>,
}

/// Makes and compares a sweep's forks (one run of pi's code for all), grouped by source.
fn by_source(
    test: &str,
    name: &str,
    make: fn(&Scratch) -> (Vec<Source>, Vec<ForkCase>),
) -> BySource {
    assert!(pi_available(test));
    let scratch = Scratch::new();
    let (sources, cases) = make(&scratch);
    let (report, outcomes) = compare_each_fork(&scratch, name, &sources, &cases);
    let mut failures: HashMap<String, Vec<String>> = sources
        .iter()
        .map(|s| (s.name.clone(), Vec::new()))
        .collect();
    for (case, outcome) in cases.iter().zip(outcomes) {
        if let Err(message) = outcome {
            failures
                .get_mut(&sources[case.source].name)
                .unwrap()
                .push(message);
        }
    }
    BySource { report, failures }
}

/// One trial per source of a sweep (`<test>::<source name>`: every fork made of it), a source
/// pi's code did not make reported as ignored, and one trial for the sweep's coverage.
fn source_trials(
    test: &'static str,
    sweep: &'static Shared<BySource>,
    names: Vec<String>,
    coverage: fn(&Report),
) -> Vec<Trial> {
    let mut trials: Vec<Trial> = names
        .into_iter()
        .map(|source| {
            crate::harness::with_pi_or_absent(
                format!("fork_conformance::sweeps::{test}::{source}"),
                move || {
                    let Some(failures) = sweep.get().failures.get(&source) else {
                        return Err(format!("pi's code made no session for {source}"));
                    };
                    assert!(
                        failures.is_empty(),
                        "{} forks of {source} differ:\n{}",
                        failures.len(),
                        failures.join("\n")
                    );
                    Ok(())
                },
            )
        })
        .collect();
    trials.push(crate::with_pi(
        format!("fork_conformance::sweeps::{test}::coverage"),
        move || coverage(&sweep.get().report),
    ));
    trials
}

static REPLAYED: Shared<BySource> = Shared::new(|| {
    by_source(
        "forks_of_replayed_sessions_match_pi",
        "replays",
        |scratch| {
            let sources = replay_sources(scratch);
            let cases = (0..sources.len())
                .flat_map(|s| spread(&sources, s, Spread::Every))
                .collect();
            (sources, cases)
        },
    )
});

/// The forks of pi's replays of `tests/ops`, one trial per op script.
fn replayed_trials() -> Vec<Trial> {
    let mut scripts = files_in(&root().join("tests/ops"));
    scripts.retain(|p| p.extension().is_some_and(|e| e == "json"));
    let names = scripts
        .iter()
        .map(|s| format!("replay of ops/{}", s.file_name().unwrap().to_str().unwrap()))
        .collect();
    source_trials(
        "forks_of_replayed_sessions_match_pi",
        &REPLAYED,
        names,
        |report| {
            assert!(report.written >= 30, "written forks: {}", report.written);
            assert!(
                report.labels_recreated >= 5,
                "labels re-created: {}",
                report.labels_recreated
            );
        },
    )
}

static GENERATED: Shared<BySource> = Shared::new(|| {
    by_source(
        "forks_of_generated_sessions_match_pi",
        "generated",
        |scratch| {
            let sources = generated_sources(scratch, &[3, 4]);
            let cases = (0..sources.len())
                .flat_map(|s| spread(&sources, s, Spread::Sample(10)))
                .collect();
            (sources, cases)
        },
    )
});

/// The forks of generated sessions, one trial per seed.
fn generated_trials() -> Vec<Trial> {
    source_trials(
        "forks_of_generated_sessions_match_pi",
        &GENERATED,
        [3, 4].map(|seed| format!("generated seed {seed}")).to_vec(),
        |report| {
            assert!(report.written >= 40, "written forks: {}", report.written);
            assert!(
                report.labels_recreated >= 40,
                "labels re-created: {}",
                report.labels_recreated
            );
        },
    )
}

static FIXTURES: Shared<BySource> = Shared::new(|| {
    by_source(
        "forks_of_the_real_fixtures_match_pi",
        "fixtures",
        |scratch| {
            // As they are (v1: both sides invent the ids) and as pi migrated them.
            let mut sources = fixture_sources();
            sources.extend(migrated_fixture_sources(scratch));
            // Fewer forks of the v1 files: this program forks them in this (debug) test process.
            let cases = (0..sources.len())
                .flat_map(|s| {
                    let n = if sources[s].v1 { 2 } else { 4 };
                    spread(&sources, s, Spread::Sample(n))
                })
                .collect();
            (sources, cases)
        },
    )
});

/// The forks of the real fixtures, as they are and as pi migrated them, one trial per file.
fn fixture_trials() -> Vec<Trial> {
    // The names `fixture_sources` gives, without reading the files.
    let names: Vec<String> = support::real_fixtures()
        .iter()
        .map(|path| format!("fixtures/{}", path.file_stem().unwrap().to_str().unwrap()))
        .collect();
    let migrated = names.iter().map(|n| format!("{n} (migrated by pi)"));
    let names = names.iter().cloned().chain(migrated).collect();
    source_trials(
        "forks_of_the_real_fixtures_match_pi",
        &FIXTURES,
        names,
        |report| {
            assert!(report.written >= 50, "written forks: {}", report.written);
        },
    )
}

/// Compactions whose kept entry is a label: pi 1.6's `createBranchedSession` repoints them to
/// the next entry kept after the label (the compaction itself when the labels are directly
/// before it); 0.82.1 keeps the dangling id. One compaction keeps its own id (retains nothing).
fn label_repoint_session() -> String {
    let compaction = |id: &str, parent: &str, second: u32, first_kept: &str| {
        format!(
            r#"{{"type":"compaction","id":"{id}","parentId":"{parent}","timestamp":"{}","summary":"summary {id}","firstKeptEntryId":"{first_kept}","tokensBefore":10}}"#,
            ts(second)
        )
    };
    file_text(&[
        header("repoint"),
        user("u1", None, 1, "first"),
        assistant("a1", Some("u1"), 2, "one"),
        label("l1", "a1", "u1", Some(r#""start""#), Some(3)),
        user("u2", Some("l1"), 4, "second"),
        assistant("a2", Some("u2"), 5, "two"),
        compaction("c1", "a2", 6, "l1"),
        label("l2", "c1", "a2", Some(r#""x""#), Some(7)),
        label("l3", "l2", "u2", Some(r#""y""#), Some(8)),
        compaction("c2", "l3", 9, "l2"),
        user("u3", Some("c2"), 10, "third"),
        compaction("c3", "u3", 11, "c3"),
        assistant("a3", Some("c3"), 12, "three"),
    ])
}

fn forks_match_pi_1_6() {
    if !pi_available("forks_match_pi_1_6") {
        return;
    }
    let scratch = Scratch::of(Profile::Pi16);
    let mut sources = hand_made_sources(&scratch);
    sources.push(Source::new(
        "label-repoint",
        scratch.write("hand/label-repoint.jsonl", &label_repoint_session()),
    ));
    sources.extend(replay_sources(&scratch));
    let cases: Vec<ForkCase> = (0..sources.len())
        .flat_map(|s| spread(&sources, s, Spread::Every))
        .collect();
    let report = compare_forks(&scratch, "pi-1.6", &sources, &cases);
    assert_eq!(report.compared, cases.len());
    assert!(report.written >= 60, "written forks: {}", report.written);
    assert!(
        report.labels_recreated >= 25,
        "labels re-created: {}",
        report.labels_recreated
    );
}

fn label_repointing_is_pi_1_6s_alone() {
    // The same branch in both profiles: only pi-1.6 moves c1's and c2's firstKeptEntryId.
    let scratch = Scratch::new();
    let path = scratch.write("repoint.jsonl", &label_repoint_session());
    let first_kept = |profile: Profile| -> Vec<(String, String)> {
        let mut session =
            Session::open_read_only(&path, SessionOptions::with_profile(profile)).unwrap();
        session
            .branched_entries("a3")
            .unwrap()
            .iter()
            .filter(|e| str_of(e, "type").as_deref() == Some("compaction"))
            .map(|e| {
                (
                    str_of(e, "id").unwrap(),
                    str_of(e, "firstKeptEntryId").unwrap(),
                )
            })
            .collect()
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        first_kept(Profile::Pi16),
        [pair("c1", "u2"), pair("c2", "c2"), pair("c3", "c3")]
    );
    assert_eq!(
        first_kept(Profile::PiCli),
        [pair("c1", "l1"), pair("c2", "l2"), pair("c3", "c3")]
    );
}

fn forks_of_generated_sessions_and_fixtures_match_pi_1_6() {
    if !pi_available("forks_of_generated_sessions_and_fixtures_match_pi_1_6") {
        return;
    }
    let scratch = Scratch::of(Profile::Pi16);
    let mut sources = generated_sources(&scratch, &[6]);
    sources.extend(migrated_fixture_sources(&scratch));
    let cases: Vec<ForkCase> = (0..sources.len())
        .flat_map(|s| spread(&sources, s, Spread::Sample(4)))
        .collect();
    let report = compare_forks(&scratch, "pi-1.6 generated", &sources, &cases);
    assert_eq!(report.compared, cases.len());
    assert!(report.written >= 10, "written forks: {}", report.written);
}

crate::tests! {
    [hand_made_trials, replayed_trials, generated_trials, fixture_trials]
    forks_match_pi_1_6,
    label_repointing_is_pi_1_6s_alone,
    forks_of_generated_sessions_and_fixtures_match_pi_1_6,
}
