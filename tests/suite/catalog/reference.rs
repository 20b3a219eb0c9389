//! The brute-force reference the store index is compared with: every session file read with
//! the store's reader (the profile's reading), each entry's text taken from its JSON by the
//! rules docs/store-index.md writes down, matched by plain substring search, and the branch
//! status found by walking `parentId` from the leaf.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use pi_session::Profile;
use pi_session::json::JsValue;
use pi_session::session::{Leaf, Session, SessionOptions};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// docs/store-index.md: a tool result's text is indexed up to 8 KiB.
pub const TOOL_RESULT_TEXT_MAX: usize = 8 * 1024;

#[derive(Debug, Clone)]
pub struct RefEntry {
    pub path: PathBuf,
    pub line: u64,
    pub id: Option<String>,
    pub role: Option<String>,
    pub on_path: bool,
    pub body: String,
    pub thinking: String,
    pub assistant_usage: Option<[f64; 5]>,
    pub tool_calls: u64,
    pub model: Option<String>,
    /// Tools called (toolCall names) or answered (toolName).
    pub tools: Vec<String>,
    pub timestamp_ms: Option<f64>,
}

pub fn fold(text: &str) -> String {
    text.nfkd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Every `*.jsonl` under the sessions root's project directories.
pub fn store_files(sessions_root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for project in std::fs::read_dir(sessions_root).unwrap().flatten() {
        if !project.file_type().unwrap().is_dir() {
            continue;
        }
        for file in std::fs::read_dir(project.path()).unwrap().flatten() {
            if file.file_type().unwrap().is_file()
                && file.file_name().to_string_lossy().ends_with(".jsonl")
            {
                files.push(file.path());
            }
        }
    }
    files.sort();
    files
}

fn text(value: Option<&JsValue>) -> Option<String> {
    value.and_then(JsValue::as_str).map(|s| s.into_owned())
}

fn join(parts: &mut String, piece: &str) {
    if piece.is_empty() {
        return;
    }
    if !parts.is_empty() {
        parts.push('\n');
    }
    parts.push_str(piece);
}

fn content(
    value: Option<&JsValue>,
    body: &mut String,
    thinking: &mut String,
    calls: &mut Vec<String>,
) {
    let Some(value) = value else { return };
    if let Some(s) = value.as_str() {
        join(body, &s);
        return;
    }
    for block in value.as_array().unwrap_or_default() {
        match text(block.get("type")).as_deref() {
            Some("text") => join(body, &text(block.get("text")).unwrap_or_default()),
            Some("thinking") => join(thinking, &text(block.get("thinking")).unwrap_or_default()),
            Some("toolCall") => {
                calls.push(text(block.get("name")).unwrap_or_default());
                join(body, &text(block.get("name")).unwrap_or_default());
                if let Some(arguments) = block.get("arguments") {
                    join(body, &arguments.stringify());
                }
            }
            _ => {}
        }
    }
}

fn cut(text: &mut String, max: usize) {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
}

/// The entries of `file` as `profile` reads it.
pub fn read_file(file: &Path, profile: Profile) -> Vec<RefEntry> {
    let Ok(session) = Session::open_read_only(file, SessionOptions::with_profile(profile)) else {
        return Vec::new();
    };
    let values: Vec<JsValue> = (0..session.len() as u32)
        .map(|p| session.entry_value(p).unwrap())
        .collect();
    // The path: from the leaf up through parentId (the last entry of an id wins, as pi's map).
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for (i, v) in values.iter().enumerate() {
        if let Some(id) = text(v.get("id")) {
            by_id.insert(id, i);
        }
    }
    let mut on_path = HashSet::new();
    let mut at = match session.leaf() {
        Leaf::Id(id) => by_id.get(&**id).copied(),
        Leaf::Null => None,
        Leaf::Undefined => values.len().checked_sub(1),
    };
    while let Some(i) = at {
        if !on_path.insert(i) {
            break;
        }
        at = text(values[i].get("parentId")).and_then(|p| by_id.get(&p).copied());
    }
    let mut entries = Vec::new();
    for (i, value) in values.iter().enumerate() {
        let mut body = String::new();
        let mut thinking = String::new();
        let mut calls = Vec::new();
        let role;
        let mut assistant_usage = None;
        let mut model = None;
        let mut tools = Vec::new();
        match text(value.get("type")).as_deref() {
            Some("message") => {
                let message = value.get("message").unwrap_or(&JsValue::Null);
                role = text(message.get("role"));
                model = text(message.get("model"));
                let mut main = String::new();
                if let Some(name) = text(message.get("toolName")) {
                    join(&mut body, &name);
                    tools.push(name);
                }
                if let Some(command) = text(message.get("command")) {
                    join(&mut body, &command);
                }
                content(message.get("content"), &mut main, &mut thinking, &mut calls);
                if let Some(output) = text(message.get("output")) {
                    join(&mut main, &output);
                }
                if matches!(role.as_deref(), Some("toolResult" | "bashExecution")) {
                    cut(&mut main, TOOL_RESULT_TEXT_MAX);
                }
                join(&mut body, &main);
                if role.as_deref() == Some("assistant")
                    && let Some(u) = message.get("usage")
                {
                    let n = |v: Option<&JsValue>| v.and_then(JsValue::as_f64).unwrap_or(0.0);
                    assistant_usage = Some([
                        n(u.get("input")),
                        n(u.get("output")),
                        n(u.get("cacheRead")),
                        n(u.get("cacheWrite")),
                        n(u.get("cost").and_then(|c| c.get("total"))),
                    ]);
                }
            }
            Some(kind @ ("compaction" | "branch_summary")) => {
                role = Some(kind.to_string());
                join(&mut body, &text(value.get("summary")).unwrap_or_default());
            }
            Some("custom_message") => {
                role = Some("custom_message".into());
                let mut unused = Vec::new();
                content(value.get("content"), &mut body, &mut thinking, &mut unused);
            }
            Some("label") => {
                role = Some("label".into());
                join(&mut body, &text(value.get("label")).unwrap_or_default());
            }
            Some("session_info") => {
                role = Some("session_info".into());
                join(&mut body, &text(value.get("name")).unwrap_or_default());
            }
            other => role = other.map(str::to_string),
        }
        entries.push(RefEntry {
            path: file.to_path_buf(),
            line: session.record(i as u32).line(),
            id: text(value.get("id")),
            role,
            on_path: on_path.contains(&i),
            body: fold(&body),
            thinking: fold(&thinking),
            assistant_usage,
            tool_calls: calls.len() as u64,
            model,
            tools: tools.into_iter().chain(calls).collect(),
            timestamp_ms: text(value.get("timestamp"))
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
                .map(|t| t.timestamp_millis() as f64),
        });
    }
    entries
}

/// The query's pieces as docs/store-index.md defines them: quoted phrases, other words.
pub fn pieces(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, part) in query.split('"').enumerate() {
        if i % 2 == 1 {
            out.push(fold(part));
        } else {
            out.extend(part.split_whitespace().map(fold));
        }
    }
    out.retain(|p| !p.trim().is_empty());
    out
}

/// Whether `entry` holds every piece (thinking too when asked).
pub fn matches(entry: &RefEntry, pieces: &[String], thinking: bool) -> bool {
    !pieces.is_empty()
        && pieces.iter().all(|p| {
            entry.body.contains(p.as_str()) || (thinking && entry.thinking.contains(p.as_str()))
        })
}

/// Usage of assistant messages, each counted once along `parentSession` chains: an entry
/// whose id an ancestor session (found by path, else by the id in its file name) holds is a
/// copy and is not counted.
pub fn counted_once(
    files: &[PathBuf],
    entries: &HashMap<PathBuf, Vec<RefEntry>>,
) -> ([f64; 5], u64, u64) {
    let header = |f: &Path| -> JsValue {
        let text = std::fs::read_to_string(f).unwrap();
        pi_session::json::parse(text.lines().next().unwrap()).unwrap()
    };
    let by_path: HashSet<&PathBuf> = files.iter().collect();
    let id_of_name = |p: &Path| {
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        stem.split_once('_')
            .map_or(stem.clone(), |(_, id)| id.to_string())
    };
    let parent = |f: &Path| -> Option<PathBuf> {
        let source = text(header(f).get("parentSession"))?;
        let source = PathBuf::from(source);
        if by_path.contains(&source) {
            return Some(source);
        }
        let id = id_of_name(&source);
        files
            .iter()
            .find(|g| text(header(g).get("id")).as_deref() == Some(id.as_str()))
            .cloned()
    };
    let mut sums = [0.0; 5];
    let mut messages = 0;
    let mut tool_calls = 0;
    for file in files {
        let mut ancestor_ids = HashSet::new();
        let mut seen = HashSet::new();
        let mut up = parent(file);
        while let Some(a) = up {
            if a == *file || !seen.insert(a.clone()) {
                break;
            }
            for e in &entries[&a] {
                if let Some(id) = &e.id {
                    ancestor_ids.insert(id.clone());
                }
            }
            up = parent(&a);
        }
        for e in &entries[file] {
            let Some(u) = e.assistant_usage else { continue };
            if e.id.as_ref().is_some_and(|id| ancestor_ids.contains(id)) {
                continue;
            }
            messages += 1;
            tool_calls += e.tool_calls;
            for k in 0..5 {
                sums[k] += u[k];
            }
        }
    }
    (sums, messages, tool_calls)
}
