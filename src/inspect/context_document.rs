//! The `context` document: what pi sees in a session file, in the shape of the oracle's
//! `context` command (`header`, `leafId`, `contextEntryIds`, `context`, `labels`,
//! `sessionName`, `tree`), so the two can be compared field by field.

use crate::format::json::{JsObject, JsString, JsValue};
use crate::format::profile::Profile;
use crate::store::{Leaf, MessageFormat, Session, StoreResult};

/// Which leaf to report at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeafChoice {
    /// The leaf the file says.
    Current,
    /// Before the first entry (`--leaf null`).
    Root,
    Entry(String),
}

/// The leaf `choice` names, with the harness's refusal of a recorded leaf naming no entry.
fn chosen_leaf(session: &Session, choice: &LeafChoice) -> StoreResult<Leaf> {
    let profile = session.profile();
    let leaf = match choice {
        LeafChoice::Current => session.leaf().clone(),
        LeafChoice::Root => Leaf::Null,
        LeafChoice::Entry(id) => {
            if session.position(id).is_none() {
                return Err(crate::store::StoreError::entry_not_found(id));
            }
            Leaf::Id(id.as_str().into())
        }
    };
    if profile == Profile::Harness && choice == &LeafChoice::Current {
        // The harness refuses a recorded leaf that names no entry.
        if let Leaf::Id(id) = &leaf
            && session.position(id).is_none()
        {
            return Err(crate::store::StoreError::new(
                crate::store::ErrorKind::InvalidSession,
                format!("Entry {id} not found"),
            ));
        }
    }
    Ok(leaf)
}

/// Builds the document for `session` at `choice` whole (the streamed writer's reference).
#[cfg(test)]
fn context_document(
    session: &mut Session,
    choice: &LeafChoice,
    format: MessageFormat,
) -> StoreResult<JsValue> {
    let profile = session.profile();
    let leaf = chosen_leaf(session, choice)?;
    let context_entries = session.context_entries(&leaf)?;
    let context = session.build_context(&leaf, format)?;
    let mut doc = JsObject::new();
    let mut put = |k: &str, v: JsValue| {
        doc.insert(JsString::new(k), v);
    };
    put("header", session.reported_header());
    match &leaf {
        Leaf::Null => put("leafId", JsValue::Null),
        Leaf::Id(id) => put("leafId", JsValue::from(&**id)),
        Leaf::Undefined => {}
    }
    put(
        "contextEntryIds",
        JsValue::Array(
            context_entries
                .iter()
                .map(|&p| id_value(session, p))
                .collect(),
        ),
    );
    put("context", context.into_value(profile));
    let mut labels = JsObject::new();
    for (target, label, _) in session.labels() {
        labels.insert(JsString::new(target), label);
    }
    put("labels", JsValue::Object(labels));
    put(
        "sessionName",
        session.session_name().map_or(JsValue::Null, JsValue::from),
    );
    let rows = session
        .tree_rows()
        .into_iter()
        .map(|row| {
            let record = session.record(row.position);
            let mut map = JsObject::new();
            if let Some(id) = record.id() {
                map.insert(JsString::new("id"), JsValue::from(id));
            }
            if let Some(t) = record.type_name() {
                map.insert(JsString::new("type"), JsValue::from(t));
            }
            map.insert(
                JsString::new("depth"),
                JsValue::Number(f64::from(row.depth)),
            );
            JsValue::Object(map)
        })
        .collect();
    put("tree", JsValue::Array(rows));
    Ok(JsValue::Object(doc))
}

fn id_value(session: &Session, position: u32) -> JsValue {
    session
        .record(position)
        .id()
        .map_or(JsValue::Null, JsValue::from)
}

/// The value with every object's keys sorted by code point, as the oracle prints documents.
/// Sorted in place: a document of 300,000 messages is not copied.
pub fn sorted_keys(mut value: JsValue) -> JsValue {
    sort_keys(&mut value);
    value
}

fn sort_keys(value: &mut JsValue) {
    match value {
        JsValue::Array(items) => items.iter_mut().for_each(sort_keys),
        JsValue::Object(map) => {
            map.sort_by(|a, _, b, _| a.to_string_lossy().cmp(&b.to_string_lossy()));
            map.values_mut().for_each(sort_keys);
        }
        _ => {}
    }
}

/// Writes the document for `session` at `choice` exactly as
/// `sorted_keys(context_document(..)).stringify_pretty(2)` followed by a newline, piece by
/// piece: one message or tree row is held at a time, so the output of a 300,000-entry session
/// costs little beyond its index.
pub fn write_context_document(
    session: &mut Session,
    choice: &LeafChoice,
    format: MessageFormat,
    out: &mut dyn std::io::Write,
) -> StoreResult<()> {
    let profile = session.profile();
    let leaf = chosen_leaf(session, choice)?;
    let context_entries = session.context_entries(&leaf)?;
    let settings = session.context_settings(&leaf)?;
    let mut w = Pieces::new(out);
    w.push("{\n  \"context\": {");
    if profile == Profile::Harness {
        w.push("\n    \"activeToolNames\": ");
        let tools = settings.active_tool_names.clone().unwrap_or(JsValue::Null);
        w.value(sorted_keys(tools), 2);
        w.push(",");
    }
    w.push("\n    \"messages\": [");
    let mut count = 0usize;
    session.build_context_with(&leaf, format, |message| {
        w.push(if count == 0 { "\n      " } else { ",\n      " });
        w.value(sorted_keys(message), 3);
        count += 1;
        w.flush_if_large()
    })?;
    w.push(if count == 0 { "]" } else { "\n    ]" });
    w.push(",\n    \"model\": ");
    w.value(sorted_keys(settings.model), 2);
    if let Some(level) = settings.thinking_level {
        w.push(",\n    \"thinkingLevel\": ");
        w.value(sorted_keys(level), 2);
    }
    w.push("\n  },\n  \"contextEntryIds\": ");
    w.items(context_entries.iter().map(|&p| id_value(session, p)), 1)?;
    w.push(",\n  \"header\": ");
    w.value(sorted_keys(session.reported_header()), 1);
    let mut labels = JsObject::new();
    for (target, label, _) in session.labels() {
        labels.insert(JsString::new(target), label);
    }
    w.push(",\n  \"labels\": ");
    w.value(sorted_keys(JsValue::Object(labels)), 1);
    match &leaf {
        Leaf::Null => w.push(",\n  \"leafId\": null"),
        Leaf::Id(id) => {
            w.push(",\n  \"leafId\": ");
            w.value(JsValue::from(&**id), 1);
        }
        Leaf::Undefined => {}
    }
    w.push(",\n  \"sessionName\": ");
    w.value(
        session.session_name().map_or(JsValue::Null, JsValue::from),
        1,
    );
    w.push(",\n  \"tree\": ");
    let rows = session.tree_rows();
    w.items(rows.iter().map(|row| tree_row(session, row)), 1)?;
    w.push("\n}\n");
    w.flush()
}

/// A `tree` row of the document, keys sorted.
fn tree_row(session: &Session, row: &crate::store::TreeRow) -> JsValue {
    let record = session.record(row.position);
    let mut map = JsObject::new();
    map.insert(
        JsString::new("depth"),
        JsValue::Number(f64::from(row.depth)),
    );
    if let Some(id) = record.id() {
        map.insert(JsString::new("id"), JsValue::from(id));
    }
    if let Some(t) = record.type_name() {
        map.insert(JsString::new("type"), JsValue::from(t));
    }
    JsValue::Object(map)
}

/// Pretty-printed pieces of a document, buffered and written out as they grow.
struct Pieces<'a> {
    out: &'a mut dyn std::io::Write,
    buffer: String,
}

impl<'a> Pieces<'a> {
    fn new(out: &'a mut dyn std::io::Write) -> Self {
        Pieces {
            out,
            buffer: String::new(),
        }
    }

    fn push(&mut self, text: &str) {
        self.buffer.push_str(text);
    }

    /// A value sitting `level` levels deep.
    fn value(&mut self, value: JsValue, level: usize) {
        value.write_pretty_at(&mut self.buffer, 2, level);
    }

    /// An array sitting `level` levels deep, written item by item.
    fn items(&mut self, items: impl Iterator<Item = JsValue>, level: usize) -> StoreResult<()> {
        let indent = "  ".repeat(level + 1);
        let mut count = 0usize;
        self.push("[");
        for item in items {
            self.push(if count == 0 { "\n" } else { ",\n" });
            self.push(&indent);
            self.value(item, level + 1);
            count += 1;
            self.flush_if_large()?;
        }
        if count == 0 {
            self.push("]");
        } else {
            self.push("\n");
            self.push(&"  ".repeat(level));
            self.push("]");
        }
        Ok(())
    }

    fn flush_if_large(&mut self) -> StoreResult<()> {
        if self.buffer.len() >= 1 << 16 {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> StoreResult<()> {
        self.out
            .write_all(self.buffer.as_bytes())
            .and_then(|()| self.out.flush())
            .map_err(|e| {
                crate::store::StoreError::new(
                    crate::store::ErrorKind::Io,
                    format!("cannot write the output: {e}"),
                )
            })?;
        self.buffer.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SessionOptions;

    /// The streamed document is byte for byte the built one, on every hand-written file, in
    /// both profiles, at every kind of leaf.
    #[test]
    fn the_streamed_document_is_the_built_one() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/files");
        let mut compared = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            for profile in [Profile::PiCli, Profile::Harness] {
                for format in [MessageFormat::Agent, MessageFormat::Llm] {
                    let Ok(mut session) =
                        Session::open_read_only(&path, SessionOptions::with_profile(profile))
                    else {
                        continue;
                    };
                    let mut choices = vec![LeafChoice::Current, LeafChoice::Root];
                    if let Some(id) = session.entries().next().and_then(|r| r.id()) {
                        choices.push(LeafChoice::Entry(id.to_string()));
                    }
                    for choice in choices {
                        let built = context_document(&mut session, &choice, format)
                            .map(|doc| format!("{}\n", sorted_keys(doc).stringify_pretty(2)));
                        let mut streamed = Vec::new();
                        let written =
                            write_context_document(&mut session, &choice, format, &mut streamed);
                        match (built, written) {
                            (Ok(built), Ok(())) => {
                                assert_eq!(
                                    String::from_utf8(streamed).unwrap(),
                                    built,
                                    "{} {profile:?} {choice:?}",
                                    path.display()
                                );
                                compared += 1;
                            }
                            (Err(a), Err(b)) => assert_eq!(a, b),
                            (a, b) => panic!("{}: {a:?} vs {b:?}", path.display()),
                        }
                    }
                }
            }
        }
        assert!(compared > 50, "{compared}");
    }
}
