//! Which entries to build the context at: a spread over the tree that reaches the interesting
//! places (every entry kind, abandoned branches, a compaction's kept range).

use std::collections::{HashMap, HashSet};

use pi_session::json::JsValue;

use crate::conformance::normalize::{Jsonl, str_field};

/// Where to build the context.
#[derive(Clone, Debug, PartialEq)]
pub enum Leaf {
    /// The file's own leaf.
    Default,
    /// `--leaf null`.
    Null,
    /// `--leaf ID`.
    Id(String),
}

impl Leaf {
    pub fn args(&self) -> Vec<String> {
        match self {
            Leaf::Default => vec![],
            Leaf::Null => vec!["--leaf".into(), "null".into()],
            Leaf::Id(id) => vec!["--leaf".into(), id.clone()],
        }
    }
}

/// Kinds of which one entry (the last) is always picked.
const KINDS: [&str; 10] = [
    "compaction",
    "branch_summary",
    "label",
    "custom_message",
    "custom",
    "session_info",
    "model_change",
    "thinking_level_change",
    "leaf",
    "active_tools_change",
];

/// Up to `max` entries of `file`, as indexes into `file.entries`: the first and the middle
/// entry, the last entry of each kind, the first kept entry of the last compaction, entries
/// off the current path (first, middle and last of them), and the current leaf's parent.
/// Never an entry whose path to the root runs in a circle: pi loops forever on those.
pub fn spread(file: &Jsonl, max: usize) -> Vec<usize> {
    let entries: Vec<(usize, &JsValue)> = file
        .entries
        .iter()
        .enumerate()
        .filter_map(|(i, line)| line.value.as_ref().map(|v| (i, v)))
        .filter(|(_, v)| str_field(v, "id").is_some())
        .collect();
    if entries.is_empty() {
        return vec![];
    }
    let kind = |v: &JsValue| str_field(v, "type").unwrap_or_default();
    let position: HashMap<String, usize> = entries
        .iter()
        .map(|(i, v)| (str_field(v, "id").unwrap(), *i))
        .collect();
    let parent = |i: usize| {
        let value = file.entries[i].value.as_ref().unwrap();
        str_field(value, "parentId").and_then(|p| position.get(&p).copied())
    };
    let (last, last_value) = *entries.last().unwrap();
    let leaf = if kind(last_value) == "leaf" {
        str_field(last_value, "targetId").and_then(|t| position.get(&t).copied())
    } else {
        Some(last)
    };
    let mut on_path = HashSet::new();
    let mut at = leaf;
    while let Some(i) = at.filter(|i| on_path.insert(*i)) {
        at = parent(i);
    }

    let mut picks = vec![entries[0].0, entries[entries.len() / 2].0];
    for wanted in KINDS {
        picks.extend(
            entries
                .iter()
                .rev()
                .find(|(_, v)| kind(v) == wanted)
                .map(|(i, _)| *i),
        );
    }
    let last_compaction = entries.iter().rev().find(|(_, v)| kind(v) == "compaction");
    if let Some((_, compaction)) = last_compaction {
        picks.extend(
            str_field(compaction, "firstKeptEntryId").and_then(|id| position.get(&id).copied()),
        );
    }
    let off_path: Vec<usize> = entries
        .iter()
        .filter(|(i, v)| !on_path.contains(i) && kind(v) != "leaf")
        .map(|(i, _)| *i)
        .collect();
    if !off_path.is_empty() {
        picks.extend([
            off_path[0],
            off_path[off_path.len() / 2],
            off_path[off_path.len() - 1],
        ]);
    }
    picks.extend(leaf.and_then(parent));

    let reaches_root = |i: usize| {
        let mut visited = HashSet::new();
        let mut at = Some(i);
        while let Some(i) = at {
            if !visited.insert(i) {
                return false;
            }
            at = parent(i);
        }
        true
    };
    let mut seen = HashSet::new();
    picks.retain(|i| seen.insert(*i) && reaches_root(*i));
    picks.truncate(max);
    picks
}
