//! `check`: every problem in a session file, each with its line.

use std::collections::HashMap;
use std::path::Path;

use crate::format::entry::{Kind, Ref};
use crate::store::{Session, SessionOptions, StoreError, Warning};

/// A finding: a line (0 when it is about the whole file) and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub line: u64,
    pub message: String,
    /// Notes describe what pi will do (a migration) without anything being wrong.
    pub is_note: bool,
}

/// Checks `path` as `options.profile` reads it. `Err` only when the file cannot be read as a
/// session at all (that error is itself the finding).
pub fn check_file(path: &Path, options: SessionOptions) -> Result<Vec<Finding>, StoreError> {
    let mut session = Session::open_read_only(path, options)?;
    let mut findings: Vec<Finding> = session.warnings().iter().map(warning_finding).collect();
    structure(&session, &mut findings);
    // Walking from the leaf finds cycles on the active path.
    let leaf = session.leaf().clone();
    let _ = session.context_entries(&leaf);
    for w in session.warnings() {
        if w.message.contains("loops back") && !findings.iter().any(|f| f.message == w.message) {
            findings.push(warning_finding(w));
        }
    }
    let last_line = session.entries().next_back().map_or(0, |r| r.line());
    // A torn last line that does not parse is already a warning naming its own line.
    let torn_line_reported = session.warnings().iter().any(|w| w.line > last_line);
    if session.has_torn_tail() && !torn_line_reported {
        findings.push(Finding {
            line: last_line,
            message: "the last line has no newline (a torn write?): pi would glue its next append onto it".into(),
            is_note: false,
        });
    }
    findings.sort_by_key(|f| f.line);
    Ok(findings)
}

fn warning_finding(w: &Warning) -> Finding {
    let is_note = w.message.contains("migrated");
    Finding {
        line: w.line,
        message: w.message.clone(),
        is_note,
    }
}

fn structure(session: &Session, findings: &mut Vec<Finding>) {
    let mut first_line: HashMap<&str, u64> = HashMap::new();
    for record in session.entries() {
        let line = record.line();
        let mut problem = |message: String| {
            findings.push(Finding {
                line,
                message,
                is_note: false,
            })
        };
        let Some(id) = record.id() else {
            problem("the entry has no string id".to_string());
            continue;
        };
        if let Some(first) = first_line.insert(id, line) {
            problem(format!(
                "id {id} repeats line {first}; the later entry wins"
            ));
        }
        match record.parent() {
            Ref::Id(parent) if parent == id => problem(format!("entry {id} is its own parent")),
            Ref::Id(parent) if session.position(parent).is_none() => {
                problem(format!("parent {parent} of entry {id} does not exist"));
            }
            Ref::Missing => problem(format!("entry {id} has no parentId")),
            Ref::Invalid => problem(format!("entry {id} has a parentId that is not a string")),
            _ => {}
        }
        if matches!(record.kind(), Kind::Label | Kind::Leaf)
            && let Ref::Id(target) = record.target()
            && session.position(target).is_none()
        {
            problem(format!("target {target} of entry {id} does not exist"));
        }
    }
}
