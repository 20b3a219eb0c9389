//! A `context` question asked of both programs, and their answers made comparable.

use std::path::{Path, PathBuf};

use pi_session::json::{self, JsValue};

use crate::conformance::diff::Mismatches;
use crate::conformance::env::{self, Outcome};
use crate::conformance::leaves::Leaf;
use crate::conformance::normalize::{Jsonl, object};

pub const PROFILES: [&str; 3] = ["pi-cli", "harness", "pi-1.6"];

/// The oracle implementation a profile must match.
pub fn implementation(profile: &str) -> &'static str {
    match profile {
        "pi-cli" => "manager",
        "pi-1.6" => "manager-1.6",
        "harness" => "harness",
        other => panic!("unknown profile {other}"),
    }
}

pub fn path_str(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// One `context` question: a file read with a profile at a leaf.
pub struct Case {
    pub file: PathBuf,
    pub profile: &'static str,
    pub leaf: Leaf,
}

impl Case {
    pub fn ours(&self) -> Outcome {
        let mut args = vec!["context", path_str(&self.file), "--profile", self.profile];
        let leaf = self.leaf.args();
        args.extend(leaf.iter().map(String::as_str));
        env::ours(&args)
    }

    pub fn oracle_args(&self) -> Vec<String> {
        let mut args = vec![
            "context".to_string(),
            path_str(&self.file).into(),
            "--impl".into(),
            implementation(self.profile).into(),
        ];
        args.extend(self.leaf.args());
        args
    }

    pub fn describe(&self) -> String {
        let mut text = format!("context {} --profile {}", self.file.display(), self.profile);
        for arg in self.leaf.args() {
            text.push(' ');
            text.push_str(&arg);
        }
        text
    }
}

/// What a command answered, made comparable.
#[derive(Debug)]
pub enum Answer {
    Doc(JsValue),
    Failed { status: i32, message: String },
}

impl Answer {
    /// This program's answer: its document (through `prepare`) or its error line.
    pub fn ours(outcome: &Outcome, prepare: impl Fn(&JsValue) -> JsValue) -> Answer {
        if outcome.status == 0 {
            return Answer::Doc(prepare(&outcome.doc()));
        }
        Answer::Failed {
            status: outcome.status,
            message: outcome.stderr.trim_end().to_string(),
        }
    }

    /// The oracle's answer: its document (through `prepare`) or the `error` of its error line.
    pub fn oracle(outcome: &Outcome, prepare: impl Fn(&JsValue) -> JsValue) -> Answer {
        if outcome.status == 0 {
            return Answer::Doc(prepare(&outcome.doc()));
        }
        let error = json::parse(outcome.stderr.trim()).ok().and_then(|e| {
            e.get("error")
                .and_then(JsValue::as_str)
                .map(|s| s.into_owned())
        });
        Answer::Failed {
            status: outcome.status,
            message: error.unwrap_or_else(|| outcome.stderr.clone()),
        }
    }

    pub fn doc(&self) -> Option<&JsValue> {
        match self {
            Answer::Doc(doc) => Some(doc),
            Answer::Failed { .. } => None,
        }
    }

    /// For a snapshot; `file` (an absolute path in error messages) is shown as `FILE`.
    pub fn snapshot(&self, file: &Path) -> JsValue {
        match self {
            Answer::Doc(doc) => doc.clone(),
            Answer::Failed { status, message } => object([
                ("exit", JsValue::Number(f64::from(*status))),
                (
                    "error",
                    JsValue::from(message.replace(path_str(file), "FILE")),
                ),
            ]),
        }
    }
}

impl Mismatches {
    /// The same document, or both failing the same way: the oracle's exit status, and our
    /// error line (the last line on stderr; warnings may come before it) contains the
    /// oracle's message.
    pub fn answers(&mut self, what: &str, ours: &Answer, oracle: &Answer) {
        match (ours, oracle) {
            (Answer::Doc(a), Answer::Doc(b)) => self.compare(what, a, b),
            (
                Answer::Failed { status, message },
                Answer::Failed {
                    status: expected,
                    message: pi,
                },
            ) => self.check(
                status == expected && message.lines().last().is_some_and(|l| l.contains(pi)),
                || {
                    format!(
                        "{what}:\n    ours failed with exit {status}: {message}\n    \
                         the oracle with exit {expected}: {pi}"
                    )
                },
            ),
            _ => self.check(false, || {
                let text = format!("{what}:\n    ours:   {ours:?}\n    oracle: {oracle:?}");
                text.chars().take(2000).collect()
            }),
        }
    }
}

/// Whether `profile` is one of pi's SessionManagers (0.82.1's or 1.6's), not the harness.
pub fn is_session_manager(profile: &str) -> bool {
    profile != "harness"
}

/// A file ending with a `leaf` entry, read with a SessionManager profile at its leaf: this program takes
/// the entry's target (a fold over the file, as the harness does), pi's manager the entry
/// itself. A deliberate difference: not compared, but checked by [`check_trailing_leaf`].
pub fn is_leaf_entry_difference(case: &Case, file: &Jsonl) -> bool {
    is_session_manager(case.profile)
        && case.leaf == Leaf::Default
        && file.trailing_leaf_entry().is_some()
}

/// For such a case: our leaf is the `leaf` entry's target (`ours`), the oracle's the entry.
pub fn check_trailing_leaf(
    found: &mut Mismatches,
    file: &Jsonl,
    case: &Case,
    answer: &Answer,
    ours: bool,
) {
    let last = file.trailing_leaf_entry().unwrap();
    let expected = last.get(if ours { "targetId" } else { "id" });
    let leaf = answer.doc().and_then(|doc| doc.get("leafId"));
    found.check(leaf == expected, || {
        let who = if ours { "ours" } else { "the oracle" };
        format!(
            "{}: {who} should report leafId {expected:?}, got {leaf:?}",
            case.describe()
        )
    });
}
