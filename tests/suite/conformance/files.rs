//! Small hand-written files in `tests/files/`, each about one reading rule where the two pi
//! implementations, or a careless reader, could differ: line endings, blank and broken lines,
//! JSON that is no entry, orphans, unknown kinds, labels, timestamps (sibling order, and the
//! formats JavaScript's `Date.parse` reads, each giving a derived message's time), null
//! content, v1/v2 migration, `leaf` entries, duplicate ids, header fields, versions, empty
//! files.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use pi_session::json::{self, JsValue};

use crate::conformance::cases::{
    Answer, Case, PROFILES, check_trailing_leaf, is_leaf_entry_difference,
};
use crate::conformance::diff::Mismatches;
use crate::conformance::env::{self, Outcome};
use crate::conformance::leaves::{self, Leaf};
use crate::conformance::normalize::{Jsonl, Labels, relabel};
use crate::conformance::snapshot;

fn file_path(name: &str) -> PathBuf {
    env::root().join(format!("tests/files/{name}.jsonl"))
}

/// The context questions for a file: both profiles at its leaf, at `null`, at an unknown
/// entry and at a spread of its entries.
fn file_cases(name: &str) -> Vec<(String, Case)> {
    let file = file_path(name);
    let jsonl = Jsonl::read(&file);
    let ids = jsonl.ids();
    let mut leaves = vec![
        ("default".to_string(), Leaf::Default),
        ("null".to_string(), Leaf::Null),
        (
            "no-such-entry".to_string(),
            Leaf::Id("no-such-entry".into()),
        ),
    ];
    for i in leaves::spread(&jsonl, 6) {
        let id = ids[i].clone().unwrap();
        leaves.push((id.clone(), Leaf::Id(id)));
    }
    let mut cases = Vec::new();
    for profile in PROFILES {
        for (leaf_name, leaf) in &leaves {
            let case = Case {
                file: file.clone(),
                profile,
                leaf: leaf.clone(),
            };
            cases.push((format!("{profile} {leaf_name}"), case));
        }
    }
    cases
}

/// The oracle's answers to every file's questions, asked once for all tests (one Node
/// process), by file name.
fn oracle_answers() -> Option<&'static HashMap<String, Vec<Outcome>>> {
    static ANSWERS: OnceLock<Option<HashMap<String, Vec<Outcome>>>> = OnceLock::new();
    ANSWERS
        .get_or_init(|| {
            let oracle = env::oracle()?;
            let names = file_names();
            let cases: Vec<Vec<(String, Case)>> = names.iter().map(|n| file_cases(n)).collect();
            let jobs = cases
                .iter()
                .flatten()
                .map(|(_, case)| case.oracle_args())
                .collect();
            let mut outcomes = oracle.start(jobs).wait().into_iter();
            let answers = names
                .into_iter()
                .zip(&cases)
                .map(|(name, cases)| (name, outcomes.by_ref().take(cases.len()).collect()))
                .collect();
            Some(answers)
        })
        .as_ref()
}

fn check_file(name: &str) {
    let jsonl = Jsonl::read(&file_path(name));
    let ids = jsonl.ids();
    let cases = file_cases(name);
    // pi invents the ids of v1 entries (which have none): label those by the tree.
    let migrated_v1 = ids.iter().all(Option::is_none);
    let prepare = |doc: &JsValue| {
        if migrated_v1 {
            relabel(doc, &Labels::from_tree(doc), false)
        } else {
            doc.clone()
        }
    };

    let ours: Vec<Outcome> = cases.iter().map(|(_, c)| c.ours()).collect();
    let mut found = Mismatches::default();
    check_pi16_warnings(&mut found, name, &cases, &ours);
    let mut compared = Vec::new();
    for ((key, case), outcome) in cases.iter().zip(&ours) {
        let answer = Answer::ours(outcome, JsValue::clone);
        if is_leaf_entry_difference(case, &jsonl) {
            check_trailing_leaf(&mut found, &jsonl, case, &answer, true);
        } else if refuses_empty_file(name, case) {
            found.check(
                matches!(&answer, Answer::Failed { status: 1, message } if message.contains("empty")),
                || format!("{}: ours should refuse the empty file, got {answer:?}", case.describe()),
            );
        } else {
            compared.push((key.as_str(), case, Answer::ours(outcome, prepare)));
        }
    }
    match oracle_answers() {
        None => env::skipped("reading the hand-written files with pi"),
        Some(answers) => {
            let theirs = &answers[name];
            for ((_, case), theirs) in cases.iter().zip(theirs) {
                if is_leaf_entry_difference(case, &jsonl) {
                    let answer = Answer::oracle(theirs, JsValue::clone);
                    check_trailing_leaf(&mut found, &jsonl, case, &answer, false);
                }
            }
            let compared_theirs = cases.iter().zip(theirs).filter(|((_, case), _)| {
                !is_leaf_entry_difference(case, &jsonl) && !refuses_empty_file(name, case)
            });
            for ((_, case, ours), (_, theirs)) in compared.iter().zip(compared_theirs) {
                let theirs = Answer::oracle(theirs, prepare);
                if reads_past_a_torn_line(name, case) {
                    found.check(
                        matches!(&theirs, Answer::Failed { message, .. } if message.contains("line 3 is not valid JSON"))
                            && !matches!(ours, Answer::Failed { message, .. } if message.contains("line 3 is not valid JSON")),
                        || format!("{}: the oracle should refuse line 3 and ours skip it: ours {ours:?}, oracle {theirs:?}", case.describe()),
                    );
                } else {
                    found.answers(&case.describe(), ours, &theirs);
                }
            }
        }
    }
    found.finish(name);
    let answers: json::JsObject = compared
        .iter()
        .map(|(key, case, answer)| ((*key).into(), answer.snapshot(&case.file)))
        .collect();
    snapshot::assert_json(&format!("file-{name}"), &JsValue::Object(answers));
}

/// No silent misreading: a file holding what only pi 1.6 writes, read in another profile, warns
/// naming the profile that reads it as pi 1.6 does; the pi-1.6 profile, and every profile on a
/// file without such lines, gives no such warning.
fn check_pi16_warnings(
    found: &mut Mismatches,
    name: &str,
    cases: &[(String, Case)],
    ours: &[Outcome],
) {
    let text = std::fs::read_to_string(file_path(name)).unwrap_or_default();
    let has_pi16 = text.lines().any(|line| {
        let Ok(value) = json::parse(line) else {
            return false;
        };
        let kind = value.get("type").and_then(JsValue::as_str);
        let role = value
            .get("message")
            .and_then(|m| m.get("role"))
            .and_then(JsValue::as_str);
        matches!(kind.as_deref(), Some("context_edit" | "usage"))
            || role.as_deref() == Some("system")
            || value.get("systemMessage").is_some_and(JsValue::is_truthy)
    });
    for ((_, case), outcome) in cases.iter().zip(ours) {
        let warned = outcome.stderr.contains("use profile pi-1.6");
        let expected = has_pi16 && case.profile != "pi-1.6";
        found.check(warned == expected, || {
            format!(
                "{}: expected {} warning naming profile pi-1.6, stderr: {}",
                case.describe(),
                if expected { "a" } else { "no" },
                outcome.stderr
            )
        });
    }
}

/// A line that is the beginning of JSON cut short is a torn write: pi's harness refuses the
/// file for good, this program skips the line with a warning in both profiles (a deliberate
/// difference: a torn write must never make a session unopenable; protocol.md, "Torn last
/// line"). `garbage-line.jsonl`'s line 3 is such a line.
fn reads_past_a_torn_line(name: &str, case: &Case) -> bool {
    name == "garbage-line" && case.profile == "harness"
}

/// pi's manager opens an empty file by writing a new header into it; this program never
/// changes a file it reads, and refuses an empty one (a deliberate difference).
fn refuses_empty_file(name: &str, case: &Case) -> bool {
    name == "empty" && crate::conformance::cases::is_session_manager(case.profile)
}

/// The names of the files in `tests/files/`.
fn file_names() -> Vec<String> {
    let dir: PathBuf = env::root().join("tests/files");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| p.file_stem().unwrap().to_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

macro_rules! file_tests {
    ($($test:ident => $file:literal,)*) => {
        $(
            fn $test() {
                check_file($file);
            }
        )*

        /// One trial per file, and the check that every file has one.
        pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
            crate::tests!(@vec $($test,)* every_file_has_a_test)
        }

        fn every_file_has_a_test() {
            assert_eq!(file_names(), [$($file),*]);
        }
    };
}

file_tests! {
    crlf_and_blank_lines => "crlf-and-blank-lines",
    dangling_leaf_entry => "dangling-leaf-entry",
    duplicate_ids => "duplicate-ids",
    empty => "empty",
    garbage_before_header => "garbage-before-header",
    garbage_line => "garbage-line",
    header_extras => "header-extras",
    header_only => "header-only",
    json_scalars_between_entries => "json-scalars-between-entries",
    leaf_entry_to_null => "leaf-entry-to-null",
    non_object_last_line => "non-object-last-line",
    null_content => "null-content",
    orphans_and_unknown_kinds => "orphans-and-unknown-kinds",
    pi16_compactions => "pi16-compactions",
    pi16_context_edits => "pi16-context-edits",
    pi16_edit_without_replacement => "pi16-edit-without-replacement",
    pi16_usage_torn_tail => "pi16-usage-torn-tail",
    timestamp_formats => "timestamp-formats",
    timestamps_out_of_order => "timestamps-out-of-order",
    v1_first_kept_index => "v1-first-kept-index",
    v2_hook_message => "v2-hook-message",
    version_4 => "version-4",
}
