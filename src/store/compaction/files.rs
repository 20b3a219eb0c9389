//! File operations (`createFileOps`, `extractFileOpsFromMessage`, `computeFileLists`,
//! `formatFileOperations`): which files the summarized work read and changed.

use std::cmp::Ordering;

use crate::format::json::{JsString, JsValue};

use super::text::{self, JsText};

/// pi's `{read, written, edited}` Sets: insertion order, values compared as a Set compares
/// them (strings and numbers by value, objects never equal).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileOps {
    /// Files read.
    pub read: Vec<JsValue>,
    /// Files written.
    pub written: Vec<JsValue>,
    /// Files edited.
    pub edited: Vec<JsValue>,
}

fn same_value(a: &JsValue, b: &JsValue) -> bool {
    match (a, b) {
        (JsValue::Object(_) | JsValue::Array(_), _)
        | (_, JsValue::Object(_) | JsValue::Array(_)) => false,
        (JsValue::Number(x), JsValue::Number(y)) => x == y || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

fn add(set: &mut Vec<JsValue>, value: JsValue) {
    if !set.iter().any(|v| same_value(v, &value)) {
        set.push(value);
    }
}

impl FileOps {
    /// Adds the items of an array (a previous summary's `details` lists).
    pub fn add_all(set: &mut Vec<JsValue>, list: Option<&JsValue>) {
        if let Some(JsValue::Array(items)) = list {
            for item in items {
                add(set, item.clone());
            }
        }
    }

    /// Adds the file lists a pi-written summary (a compaction's or branch summary's `details`,
    /// not one a hook wrote) carries forward.
    pub fn add_carried(&mut self, summary: &JsValue) {
        let details = summary.get("details").filter(|d| d.is_truthy());
        if !summary.get("fromHook").is_some_and(JsValue::is_truthy)
            && let Some(details) = details
        {
            Self::add_all(&mut self.read, details.get("readFiles"));
            Self::add_all(&mut self.edited, details.get("modifiedFiles"));
        }
    }

    /// The files of a compaction window: those the previous compaction carries, then those of
    /// the messages summarized.
    pub fn of_window<'a>(
        previous: Option<&JsValue>,
        messages: impl IntoIterator<Item = &'a JsValue>,
        rules: super::estimate::CompactionRules,
    ) -> Self {
        let mut ops = FileOps::default();
        if let Some(previous) = previous {
            ops.add_carried(previous);
        }
        for message in messages {
            ops.extract(message, rules);
        }
        ops
    }

    /// `extractFileOpsFromMessage`: `read`/`write`/`edit` tool calls with a non-empty `path`;
    /// pi 1.6 also reads the calls a codemode script made (`toolResult.nestedCalls.calls`).
    pub fn extract(&mut self, message: &JsValue, rules: super::estimate::CompactionRules) {
        let role = message.get("role").and_then(JsValue::as_str);
        if rules == super::estimate::CompactionRules::Pi16 && role.as_deref() == Some("toolResult")
        {
            if let Some(JsValue::Array(calls)) =
                message.get("nestedCalls").and_then(|n| n.get("calls"))
            {
                for call in calls {
                    if let (Some(name), Some(args)) = (call.get("name"), call.get("arguments")) {
                        self.add_op(name, args);
                    }
                }
            }
            return;
        }
        if role.as_deref() != Some("assistant") {
            return;
        }
        let Some(JsValue::Array(blocks)) = message.get("content") else {
            return;
        };
        for block in blocks {
            let JsValue::Object(map) = block else {
                continue;
            };
            if map.get("type").and_then(JsValue::as_str).as_deref() != Some("toolCall") {
                continue;
            }
            let (Some(args), Some(name)) = (map.get("arguments"), map.get("name")) else {
                continue;
            };
            self.add_op(name, args);
        }
    }

    /// `addFileOp(name, args)`: a string, non-empty `args.path` of a read, write or edit.
    fn add_op(&mut self, name: &JsValue, args: &JsValue) {
        let Some(path @ JsValue::String(p)) = args.get("path") else {
            return;
        };
        if p.is_empty() {
            return;
        }
        let set = match name.as_js_str().map(JsString::escaped) {
            Some("read") => &mut self.read,
            Some("write") => &mut self.written,
            Some("edit") => &mut self.edited,
            _ => return,
        };
        add(set, path.clone());
    }

    /// `computeFileLists`: `(readFiles, modifiedFiles)`, each sorted as `Array.sort()` sorts.
    pub fn lists(&self) -> (Vec<JsValue>, Vec<JsValue>) {
        let mut modified = Vec::new();
        for v in self.edited.iter().chain(&self.written) {
            add(&mut modified, v.clone());
        }
        let mut read: Vec<JsValue> = self
            .read
            .iter()
            .filter(|f| !modified.iter().any(|m| same_value(m, f)))
            .cloned()
            .collect();
        sort(&mut read);
        sort(&mut modified);
        (read, modified)
    }

    /// The Sets as arrays, for the preparation (`{read, written, edited}`).
    pub fn to_value(&self) -> JsValue {
        let mut map = crate::format::json::JsObject::new();
        for (k, v) in [
            ("read", &self.read),
            ("written", &self.written),
            ("edited", &self.edited),
        ] {
            map.insert(JsString::new(k), JsValue::Array(v.clone()));
        }
        JsValue::Object(map)
    }
}

fn sort_key(v: &JsValue) -> JsString {
    match v {
        JsValue::String(s) => s.clone(),
        other => JsString::new(&other.to_js_string()),
    }
}

fn sort(list: &mut [JsValue]) {
    list.sort_by(|a, b| text::utf16_cmp(&sort_key(a), &sort_key(b)).then(Ordering::Equal));
}

/// `formatFileOperations(readFiles, modifiedFiles)`.
pub fn format_file_operations(read: &[JsValue], modified: &[JsValue]) -> JsString {
    let section = |tag: &str, items: &[JsValue]| {
        let mut t = JsText::new();
        t.text(&format!("<{tag}>\n"));
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                t.text("\n");
            }
            match item {
                JsValue::String(s) => t.js(s),
                JsValue::Null => &mut t,
                other => t.text(&other.to_js_string()),
            };
        }
        t.text(&format!("\n</{tag}>"));
        t.finish()
    };
    let mut sections = Vec::new();
    if !read.is_empty() {
        sections.push(section("read-files", read));
    }
    if !modified.is_empty() {
        sections.push(section("modified-files", modified));
    }
    if sections.is_empty() {
        return JsString::new("");
    }
    let mut t = JsText::new();
    t.text("\n\n").js(&text::join(&sections, "\n\n"));
    t.finish()
}
