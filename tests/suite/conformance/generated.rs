//! Sessions of a few MB written by the generator (`tests/oracle/gen-session.mjs`): long, branched,
//! summarized, labelled and compacted. Both profiles, at the file's leaf, at `null` and at a
//! spread of entries.

use pi_session::json::JsValue;

use crate::conformance::cases::{Answer, Case, PROFILES};
use crate::conformance::diff::Mismatches;
use crate::conformance::env::{self, Outcome};
use crate::conformance::leaves::{self, Leaf};
use crate::conformance::normalize::Jsonl;

fn generated_session(name: &str, args: &[&str]) {
    let Some(oracle) = env::oracle() else {
        return env::skipped("generating sessions");
    };
    let file = env::generated(oracle, name, args);
    let jsonl = Jsonl::read(&file);
    let ids = jsonl.ids();
    let mut leaves = vec![Leaf::Default, Leaf::Null];
    let spread = leaves::spread(&jsonl, 8);
    leaves.extend(
        spread
            .into_iter()
            .map(|i| Leaf::Id(ids[i].clone().unwrap())),
    );
    let cases: Vec<Case> = PROFILES
        .iter()
        .flat_map(|profile| {
            leaves.iter().map(|leaf| Case {
                file: file.clone(),
                profile,
                leaf: leaf.clone(),
            })
        })
        .collect();
    let pending = oracle.start(cases.iter().map(Case::oracle_args).collect());
    let ours: Vec<Outcome> = cases.iter().map(Case::ours).collect();
    let mut found = Mismatches::default();
    for ((case, ours), theirs) in cases.iter().zip(&ours).zip(pending.wait()) {
        found.answers(
            &case.describe(),
            &Answer::ours(ours, JsValue::clone),
            &Answer::oracle(&theirs, JsValue::clone),
        );
    }
    found.finish(name);
}

fn many_branches_and_compactions() {
    generated_session(
        "seed1-3MB-branchy",
        &[
            "--size",
            "3MB",
            "--seed",
            "1",
            "--branch-every",
            "6",
            "--compact-every",
            "500KB",
            "--label-rate",
            "0.2",
            "--custom-rate",
            "0.2",
        ],
    );
}

fn deep_rewinds_and_summaries() {
    generated_session(
        "seed2-2MB-rewinds",
        &[
            "--size",
            "2MB",
            "--seed",
            "2",
            "--branch-every",
            "3",
            "--max-rewind",
            "6",
            "--summary-rate",
            "0.9",
            "--compact-every",
            "300KB",
            "--label-rate",
            "0.3",
        ],
    );
}

fn images_and_big_tool_results() {
    generated_session(
        "seed3-3MB-images",
        &[
            "--size",
            "3MB",
            "--seed",
            "3",
            "--tool-kb",
            "8",
            "--image-rate",
            "0.05",
            "--image-kb",
            "40",
            "--compact-every",
            "1MB",
            "--branch-every",
            "12",
        ],
    );
}

fn labels_and_customs_without_compaction() {
    generated_session(
        "seed4-2MB-labels",
        &[
            "--size",
            "2MB",
            "--seed",
            "4",
            "--branch-every",
            "8",
            "--summary-rate",
            "0",
            "--compact-every",
            "0",
            "--label-rate",
            "0.6",
            "--custom-rate",
            "0.5",
        ],
    );
}

crate::tests! {
    many_branches_and_compactions,
    deep_rewinds_and_summaries,
    images_and_big_tool_results,
    labels_and_customs_without_compaction,
}
