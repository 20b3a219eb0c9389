//! Making two documents comparable where pi invents ids or reads the clock: entry ids become
//! labels by first appearance (`e1`, `e2`, ...; `leaf` entries `L1`, ...), the session id `S`,
//! timestamps `T`. The rules for files are those of the oracle's `normalize` command, so the
//! two can be checked against each other.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use pi_session::json::{self, JsObject, JsString, JsValue};

/// Fields of an entry that name another entry.
const ID_REF_FIELDS: [&str; 4] = ["parentId", "targetId", "fromId", "firstKeptEntryId"];
/// Message roles whose `timestamp` pi derives from the entry's.
const DERIVED_ROLES: [&str; 3] = ["custom", "branchSummary", "compactionSummary"];

/// One non-blank line of a session file.
pub struct Line {
    pub text: String,
    /// `None` when the line is not JSON.
    pub value: Option<JsValue>,
}

/// A session file read as plain JSONL, without any session logic.
pub struct Jsonl {
    pub header: Option<Line>,
    pub entries: Vec<Line>,
}

impl Jsonl {
    pub fn read(path: &Path) -> Jsonl {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let mut lines: Vec<Line> = text
            .split('\n')
            .filter(|line| !line.trim().is_empty())
            .map(|line| Line {
                text: line.strip_suffix('\r').unwrap_or(line).to_string(),
                value: json::parse(line).ok(),
            })
            .collect();
        let is_header = lines.first().is_some_and(|line| {
            line.value.as_ref().is_some_and(|v| {
                v.get("type").and_then(JsValue::as_str).as_deref() == Some("session")
            })
        });
        let header = is_header.then(|| lines.remove(0));
        Jsonl {
            header,
            entries: lines,
        }
    }

    /// Entry objects in file order.
    pub fn values(&self) -> impl Iterator<Item = &JsValue> {
        self.entries.iter().filter_map(|line| line.value.as_ref())
    }

    /// The last entry, when it is a harness `leaf` entry.
    pub fn trailing_leaf_entry(&self) -> Option<&JsValue> {
        let last = self.entries.last()?.value.as_ref()?;
        let is_leaf = last.get("type").and_then(JsValue::as_str).as_deref() == Some("leaf");
        is_leaf.then_some(last)
    }

    /// The `id` of each entry, in file order.
    pub fn ids(&self) -> Vec<Option<String>> {
        self.entries
            .iter()
            .map(|line| line.value.as_ref().and_then(|v| str_field(v, "id")))
            .collect()
    }
}

pub fn str_field(value: &JsValue, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(JsValue::as_str)
        .map(|s| s.into_owned())
}

/// Entry id -> label.
#[derive(Default)]
pub struct Labels {
    map: HashMap<String, String>,
    counts: HashMap<&'static str, usize>,
    /// Ids that some entry defines (so that a `fromId` of `"root"` may be an entry).
    defined: HashSet<String>,
}

impl Labels {
    /// The oracle's rule: in file order, each entry's `id` (`L` for `leaf` entries), then the
    /// ids it refers to.
    pub fn from_file(file: &Jsonl) -> Labels {
        let mut labels = Labels {
            defined: file.values().filter_map(|v| str_field(v, "id")).collect(),
            ..Labels::default()
        };
        for entry in file.values() {
            let is_leaf = entry.get("type").and_then(JsValue::as_str).as_deref() == Some("leaf");
            labels.see(entry.get("id"), if is_leaf { "L" } else { "e" });
            for field in ID_REF_FIELDS {
                if field == "fromId" && labels.is_root_marker(entry.get(field)) {
                    continue;
                }
                labels.see(entry.get(field), "e");
            }
        }
        labels
    }

    /// By first appearance in a `context` document's `tree` rows.
    pub fn from_tree(doc: &JsValue) -> Labels {
        let mut labels = Labels::default();
        for row in array(doc, "tree") {
            let is_leaf = row.get("type").and_then(JsValue::as_str).as_deref() == Some("leaf");
            labels.see(row.get("id"), if is_leaf { "L" } else { "e" });
        }
        labels
    }

    /// By first appearance in a `replay` document: `refs` (op order), then the leaf and the
    /// context entries.
    pub fn from_replay(doc: &JsValue) -> Labels {
        let mut labels = Labels::default();
        for id in array(doc, "refs") {
            labels.see(Some(id), "e");
        }
        labels.see(doc.get("leafId"), "e");
        for id in array(doc, "contextEntryIds") {
            labels.see(Some(id), "e");
        }
        labels
    }

    fn see(&mut self, id: Option<&JsValue>, namespace: &'static str) {
        let Some(id) = id.and_then(JsValue::as_str) else {
            return;
        };
        if !self.map.contains_key(id.as_ref()) {
            let n = self.counts.entry(namespace).or_default();
            *n += 1;
            self.map.insert(id.into_owned(), format!("{namespace}{n}"));
        }
    }

    fn is_root_marker(&self, value: Option<&JsValue>) -> bool {
        value.and_then(JsValue::as_str).as_deref() == Some("root") && !self.defined.contains("root")
    }

    pub fn get(&self, id: &str) -> Option<&str> {
        self.map.get(id).map(String::as_str)
    }

    /// `value` with a known id replaced by its label; anything else unchanged.
    fn label(&self, value: &JsValue) -> JsValue {
        match value.as_str().and_then(|id| self.map.get(id.as_ref())) {
            Some(label) => JsValue::from(label.as_str()),
            None => value.clone(),
        }
    }
}

fn array<'a>(doc: &'a JsValue, key: &str) -> &'a [JsValue] {
    doc.get(key).and_then(JsValue::as_array).unwrap_or(&[])
}

/// The oracle's `normalize FILE` document: `{header, entries}`, as the oracle prints it: its
/// printer rebuilds objects by assignment, where a `__proto__` key sets the prototype, so such
/// keys vanish from its output (pi itself writes them to files like any other key).
pub fn normalize_file(file: &Jsonl) -> JsValue {
    without_proto_keys(&normalized_file(file))
}

fn without_proto_keys(value: &JsValue) -> JsValue {
    match value {
        JsValue::Array(items) => JsValue::Array(items.iter().map(without_proto_keys).collect()),
        JsValue::Object(map) => JsValue::Object(
            map.iter()
                .filter(|(key, _)| key.escaped() != "__proto__")
                .map(|(key, value)| (key.clone(), without_proto_keys(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn normalized_file(file: &Jsonl) -> JsValue {
    let labels = Labels::from_file(file);
    let header = match &file.header {
        Some(line) => {
            let mut header = line.value.clone().unwrap();
            let map = header.as_object_mut().unwrap();
            replace(map, "id", JsValue::from("S"));
            replace(map, "timestamp", JsValue::from("T"));
            header
        }
        None => JsValue::Null,
    };
    let entries = file
        .entries
        .iter()
        .map(|line| match &line.value {
            None => object([("_unparsed", JsValue::from(line.text.as_str()))]),
            Some(JsValue::Object(entry)) => {
                let mut entry = entry.clone();
                if let Some(id) = entry.get("id").map(|id| labels.label(id)) {
                    entry.insert("id".into(), id);
                }
                for field in ID_REF_FIELDS {
                    if field == "fromId" && labels.is_root_marker(entry.get(field)) {
                        continue;
                    }
                    if let Some(id) = entry.get(field).map(|id| labels.label(id)) {
                        entry.insert(field.into(), id);
                    }
                }
                replace(&mut entry, "timestamp", JsValue::from("T"));
                if let Some(JsValue::Object(system)) = entry.get_mut("systemMessage") {
                    // pi 1.6 stamps a compaction's system snapshot with the compaction's time.
                    replace(system, "timestamp", JsValue::from("T"));
                }
                JsValue::Object(entry)
            }
            Some(other) => other.clone(),
        })
        .collect();
    object([("header", header), ("entries", JsValue::Array(entries))])
}

/// The file's lines with every string that is an entry id replaced by its label, the session
/// id by `S`, and each line's own `timestamp` by `T`, leaving every other byte as written: two
/// files written by the same ops must give identical lines (key order and number formatting
/// included).
pub fn file_text(file: &Jsonl) -> Vec<String> {
    let labels = Labels::from_file(file);
    let mut out = Vec::new();
    if let Some(header) = &file.header {
        let value = header.value.as_ref().unwrap();
        let mut names = HashMap::new();
        if let Some(id) = str_field(value, "id") {
            names.insert(id, "S");
        }
        if let Some(ts) = str_field(value, "timestamp") {
            names.insert(ts, "T");
        }
        out.push(replace_strings(&header.text, |s| names.get(s).copied()));
    }
    for line in &file.entries {
        let timestamp = line.value.as_ref().and_then(|v| str_field(v, "timestamp"));
        let text = replace_strings(&line.text, |s| {
            labels
                .get(s)
                .or_else(|| (Some(s) == timestamp.as_deref()).then_some("T"))
        });
        out.push(match snapshot_millis(line, timestamp.as_deref()) {
            // pi 1.6's compaction system snapshot: its last key, stamped with the entry's time.
            Some(millis) => {
                let stamp = format!("\"timestamp\":{}}}}}", json::number_to_string(millis));
                match text.strip_suffix(&stamp) {
                    Some(head) => format!("{head}\"timestamp\":\"T\"}}}}"),
                    None => text,
                }
            }
            None => text,
        });
    }
    out
}

/// The time in milliseconds a compaction's `systemMessage` carries when pi 1.6 stamped it with
/// the entry's own `timestamp`.
fn snapshot_millis(line: &Line, timestamp: Option<&str>) -> Option<f64> {
    let system = line.value.as_ref()?.get("systemMessage")?;
    let millis = pi_session::session::parse_date_millis(timestamp?);
    (system.get("timestamp") == Some(&JsValue::Number(millis))).then_some(millis)
}

/// `text` (one JSON line) with each string token whose escaped body `rename` maps replaced.
fn replace_strings<'a>(text: &str, rename: impl Fn(&str) -> Option<&'a str>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('"') {
        out.push_str(&rest[..=open]);
        let body = &rest[open + 1..];
        let mut end = 0;
        let bytes = body.as_bytes();
        while end < bytes.len() && bytes[end] != b'"' {
            end += if bytes[end] == b'\\' { 2 } else { 1 };
        }
        let end = end.min(body.len());
        out.push_str(rename(&body[..end]).unwrap_or(&body[..end]));
        rest = &body[end..];
        if let Some(close) = rest.strip_prefix('"') {
            out.push('"');
            rest = close;
        }
    }
    out.push_str(rest);
    out
}

/// A `context` or `replay` document with ids replaced by `labels`, and, where pi `invented`
/// the session (a new header, entries stamped by the clock), the header id `S`, the header
/// timestamp and the pi-derived message timestamps `T`.
pub fn relabel(doc: &JsValue, labels: &Labels, invented: bool) -> JsValue {
    let mut doc = doc.clone();
    let map = doc.as_object_mut().expect("a document is an object");
    if invented && let Some(JsValue::Object(header)) = map.get_mut("header") {
        replace(header, "id", JsValue::from("S"));
        replace(header, "timestamp", JsValue::from("T"));
    }
    if let Some(leaf) = map.get_mut("leafId") {
        *leaf = labels.label(leaf);
    }
    for key in ["contextEntryIds", "refs"] {
        if let Some(JsValue::Array(ids)) = map.get_mut(key) {
            ids.iter_mut().for_each(|id| *id = labels.label(id));
        }
    }
    // Errors that name an entry (pi 1.6's context edit refusals): the id as its label.
    if let Some(JsValue::Array(errors)) = map.get_mut("errors") {
        for error in errors.iter_mut().filter_map(JsValue::as_object_mut) {
            if let Some(text) = error.get("error").and_then(JsValue::as_str) {
                let words: Vec<&str> = text
                    .split(' ')
                    .map(|word| labels.get(word).unwrap_or(word))
                    .collect();
                let relabelled = JsValue::from(words.join(" "));
                error.insert("error".into(), relabelled);
            }
        }
    }
    if let Some(JsValue::Array(rows)) = map.get_mut("tree") {
        for row in rows {
            let row = row.as_object_mut().unwrap();
            if let Some(id) = row.get("id").map(|id| labels.label(id)) {
                row.insert("id".into(), id);
            }
        }
    }
    if let Some(JsValue::Object(by_id)) = map.get_mut("labels") {
        *by_id = by_id
            .iter()
            .map(|(id, label)| {
                let id = labels.label(&JsValue::String(id.clone()));
                (id.as_js_str().unwrap().clone(), label.clone())
            })
            .collect();
    }
    let messages = map
        .get_mut("context")
        .and_then(|c| c.as_object_mut())
        .and_then(|c| c.get_mut("messages"));
    if let Some(JsValue::Array(messages)) = messages {
        let roles: Vec<Option<String>> = messages
            .iter()
            .map(|m| {
                m.get("role")
                    .and_then(JsValue::as_str)
                    .map(|r| r.into_owned())
            })
            .collect();
        for (i, message) in messages.iter_mut().enumerate() {
            // pi 1.6 projects a compaction as its system snapshot (stamped by the clock when
            // the compaction was appended) followed by its summary.
            let snapshot = roles[i].as_deref() == Some("system")
                && roles.get(i + 1).and_then(Option::as_deref) == Some("compactionSummary");
            let Some(message) = message.as_object_mut() else {
                continue;
            };
            if invented && snapshot {
                replace(message, "timestamp", JsValue::from("T"));
            }
            let role = message
                .get("role")
                .and_then(JsValue::as_str)
                .map(|r| r.into_owned());
            let role = role.as_deref().unwrap_or_default();
            if role == "branchSummary"
                && let Some(from) = message.get("fromId").map(|id| labels.label(id))
            {
                message.insert("fromId".into(), from);
            }
            if invented && DERIVED_ROLES.contains(&role) {
                replace(message, "timestamp", JsValue::from("T"));
            }
        }
    }
    doc
}

/// Sets `key` to `value` where it is present.
fn replace(map: &mut JsObject, key: &str, value: JsValue) {
    if let Some(slot) = map.get_mut(key) {
        *slot = value;
    }
}

pub fn object<const N: usize>(fields: [(&str, JsValue); N]) -> JsValue {
    JsValue::Object(
        fields
            .into_iter()
            .map(|(k, v)| (JsString::new(k), v))
            .collect(),
    )
}
