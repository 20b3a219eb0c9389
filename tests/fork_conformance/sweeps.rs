//! Sweeps of forks over every kind of source, compared with pi.

use super::*;

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
