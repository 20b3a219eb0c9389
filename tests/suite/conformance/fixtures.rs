//! The real sessions in `tests/fixtures/real/`: version 1 files, which the manager
//! migrates (inventing every entry id) and the harness refuses.

use pi_session::json::JsValue;

use crate::conformance::cases::{Answer, Case};
use crate::conformance::diff::Mismatches;
use crate::conformance::env::{self, Outcome};
use crate::conformance::leaves::Leaf;
use crate::conformance::normalize::{Labels, relabel};
use crate::conformance::snapshot;

const FIXTURES: [&str; 2] = ["pi-v1-before-compaction", "pi-v1-large-session"];

fn real_fixtures_read_as_pi_reads_them() {
    let mut cases = Vec::new();
    for name in FIXTURES {
        let file = crate::support::real_fixtures_dir().join(format!("{name}.jsonl"));
        // The migrated ids differ on every run, so only the leaves that name no entry can be
        // asked of both.
        for profile in ["pi-cli", "pi-1.6"] {
            for leaf in [Leaf::Default, Leaf::Null] {
                cases.push((
                    name,
                    Case {
                        file: file.clone(),
                        profile,
                        leaf,
                    },
                ));
            }
        }
        cases.push((
            name,
            Case {
                file,
                profile: "harness",
                leaf: Leaf::Default,
            },
        ));
    }
    let pending =
        env::oracle().map(|o| o.start(cases.iter().map(|(_, c)| c.oracle_args()).collect()));
    let relabelled = |doc: &JsValue| relabel(doc, &Labels::from_tree(doc), false);
    let ours: Vec<Answer> = cases
        .iter()
        .map(|(_, case)| Answer::ours(&without_id_collision(case), relabelled))
        .collect();

    let mut found = Mismatches::default();
    for ((_, case), answer) in cases.iter().zip(&ours) {
        if case.profile == "harness" {
            found.check(
                matches!(answer, Answer::Failed { status: 1, message }
                    if message.contains("unsupported session version")),
                || {
                    format!(
                        "{}: the harness refuses v1 files, got {answer:?}",
                        case.describe()
                    )
                },
            );
        }
    }
    match pending {
        None => env::skipped("comparing the real fixtures with pi"),
        Some(pending) => {
            for (((_, case), ours), theirs) in cases.iter().zip(&ours).zip(pending.wait()) {
                found.answers(&case.describe(), ours, &Answer::oracle(&theirs, relabelled));
            }
        }
    }
    found.finish("real fixtures");

    for ((name, case), answer) in cases.iter().zip(&ours) {
        let leaf = if case.leaf == Leaf::Null {
            "null"
        } else {
            "default"
        };
        snapshot::assert_json(
            &format!("fixture-{name}-{}-{leaf}", case.profile),
            &answer.snapshot(&case.file),
        );
    }
}

/// Our answer to `case`, asked again when the migration happened to give two entries the same
/// random id (about 1 in 8000 runs for these files). pi does not avoid such collisions either;
/// they turn the chain into a cycle.
fn without_id_collision(case: &Case) -> Outcome {
    for _ in 0..5 {
        let outcome = case.ours();
        if outcome.status != 0 || !has_duplicate_ids(&outcome.doc()) {
            return outcome;
        }
    }
    panic!("{}: migrated ids collided five times", case.describe());
}

fn has_duplicate_ids(doc: &JsValue) -> bool {
    let rows = doc.get("tree").and_then(JsValue::as_array).unwrap_or(&[]);
    let mut ids: Vec<_> = rows.iter().filter_map(|row| row.get("id")).collect();
    let count = ids.len();
    ids.sort_by_key(|id| id.stringify());
    ids.dedup();
    ids.len() != count
}

crate::tests! {
    real_fixtures_read_as_pi_reads_them,
}
