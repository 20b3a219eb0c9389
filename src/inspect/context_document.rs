//! The `context` document: what pi sees in a session file, in the shape of the oracle's
//! `context` command (`header`, `leafId`, `contextEntryIds`, `context`, `labels`,
//! `sessionName`, `tree`), so the two can be compared field by field.

use crate::format::json::{self, JsObject, JsString, JsValue};
use crate::store::{ContextMessage, Leaf, MessageFormat, Session, StoreResult, TreeRow};

pub(crate) use crate::ops::LeafChoice;

/// The leaf `choice` names, as every front door chooses it.
fn chosen_leaf(session: &Session, choice: &LeafChoice) -> StoreResult<Leaf> {
    crate::ops::leaf(session, choice)
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

#[cfg(test)]
fn id_value(session: &Session, position: u32) -> JsValue {
    session
        .record(position)
        .id()
        .map_or(JsValue::Null, JsValue::from)
}

/// The value with every object's keys in the order the oracle prints them (sorted by code
/// point, array indexes first: [`JsValue::sort_keys`]).
pub(crate) fn sorted_keys(mut value: JsValue) -> JsValue {
    value.sort_keys();
    value
}

/// Writes the document for `session` at `choice` exactly as
/// `sorted_keys(context_document(..)).stringify_pretty(2)` followed by a newline, piece by
/// piece: one message or tree row is held at a time, so the output of a 300,000-entry session
/// costs little beyond its index.
pub(crate) fn write_context_document(
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
    // Only the harness keeps active tools in its context.
    if !profile.is_session_manager() {
        w.push("\n    \"activeToolNames\": ");
        let tools = settings.active_tool_names.clone().unwrap_or(JsValue::Null);
        w.value(sorted_keys(tools), 2);
        w.push(",");
    }
    w.push("\n    \"messages\": [");
    let mut count = 0usize;
    session.build_context_lines(&leaf, format, |message| {
        w.push(if count == 0 { "\n      " } else { ",\n      " });
        match message {
            ContextMessage::Value(value) => w.value(sorted_keys(value), 3),
            ContextMessage::Line(line) => line.write_sorted_pretty(&mut w.buffer, 2, 3)?,
        }
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
    w.items(
        context_entries.iter(),
        1,
        |out, &position, _| match session.record(position).id() {
            Some(id) => json::write_string(id, out),
            None => out.push_str("null"),
        },
    )?;
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
    w.items(rows.iter(), 1, |out, row, level| {
        write_tree_row(out, session, row, level)
    })?;
    w.push("\n}\n");
    w.flush()
}

/// A `tree` row of the document sitting `level` levels deep, keys sorted, written as its
/// value would be: `{"depth", "id", "type"}` without the ones the entry lacks.
fn write_tree_row(out: &mut String, session: &Session, row: &TreeRow, level: usize) {
    let record = session.record(row.position);
    let indent = |out: &mut String, level: usize| json::push_spaces(2 * level, out);
    out.push_str("{\n");
    indent(out, level + 1);
    out.push_str("\"depth\": ");
    json::write_integer(i64::from(row.depth), out);
    for (key, text) in [("id", record.id()), ("type", record.type_name())] {
        if let Some(text) = text {
            out.push_str(",\n");
            indent(out, level + 1);
            out.push('"');
            out.push_str(key);
            out.push_str("\": ");
            json::write_string(text, out);
        }
    }
    out.push('\n');
    indent(out, level);
    out.push('}');
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

    /// An array sitting `level` levels deep, written item by item by `write(out, item,
    /// level of the item)`.
    fn items<T>(
        &mut self,
        items: impl Iterator<Item = T>,
        level: usize,
        mut write: impl FnMut(&mut String, T, usize),
    ) -> StoreResult<()> {
        let indent = "  ".repeat(level + 1);
        let mut count = 0usize;
        self.push("[");
        for item in items {
            self.push(if count == 0 { "\n" } else { ",\n" });
            self.push(&indent);
            write(&mut self.buffer, item, level + 1);
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
    use crate::format::profile::Profile;
    use crate::store::SessionOptions;

    /// Compares the streamed document with the built one for `path` in every profile and
    /// format, at the file's leaf, at `null` and at its first entry; the number compared.
    fn compare_streamed_with_built(path: &std::path::Path) -> usize {
        let mut compared = 0;
        for profile in Profile::ALL {
            for format in [MessageFormat::Agent, MessageFormat::Llm] {
                let Ok(mut session) =
                    Session::open_read_only(path, SessionOptions::with_profile(profile))
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
                                "{} {profile:?} {format:?} {choice:?}",
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
        compared
    }

    /// The streamed document is byte for byte the built one, on every hand-written file, in
    /// every profile, at every kind of leaf.
    #[test]
    fn the_streamed_document_is_the_built_one() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/files");
        let mut compared = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            compared += compare_streamed_with_built(&entry.unwrap().path());
        }
        assert!(compared > 100, "{compared}");
    }

    /// Messages copied from their lines are the built ones even where the line's bytes are
    /// not what `JSON.stringify` writes, where keys repeat or hold escapes, and where a role
    /// or content is repaired or converted.
    #[test]
    fn messages_from_lines_are_the_built_ones() {
        let entry = |n: u32, message: &str| {
            let parent = if n == 1 {
                "null".to_string()
            } else {
                format!("\"m{}\"", n - 1)
            };
            format!(
                r#"{{"type":"message","id":"m{n}","parentId":{parent},"timestamp":"2026-01-01T00:00:{n:02}.000Z","message":{message}}}"#
            )
        };
        let messages = [
            r#"{"role":"user","content":"a\/b \u00e9 \u001F \u001f \ud83d\ude00 \ud800 x\u2028\u007f	tab","timestamp":1}"#,
            r#" { "role" : "assistant" , "content" : [ { "type" : "text" , "text" : "hi" } , { } , [ ] ] , "provider" : "p" , "model" : "m" , "usage" : { "input" : 1.0 , "output" : -0 , "cost" : 1e400 , "e" : 1E2 , "big" : 12345678901234567890 , "f" : 0.1 , "tiny" : 5e-324 } , "timestamp" : 2.0 } "#,
            r#"{"role":"user","content":"first","content":"second","timestamp":3}"#,
            r#"{"r\u006fle":"user","content":null,"timestamp":4}"#,
            r#"{"role":"us\u0065r","content":null,"timestamp":5}"#,
            r#"{"role":"user","timestamp":6,"Z":1,"é":2,"a":3,"10":4,"2":5,"_":6,"😀":7,"｡":8}"#,
            r#"{"role":"toolResult","toolCallId":"t","toolName":"bash","content":null,"isError":false,"timestamp":7}"#,
            r#"{"role":"system","content":null,"timestamp":8}"#,
            r#"{"role":"system","content":"be brief","timestamp":9}"#,
            r#"{"role":"bashExecution","command":"ls","output":"x","exitCode":1,"cancelled":false,"truncated":false,"timestamp":10}"#,
            r#"{"role":"custom","customType":"c","content":"x","display":true,"timestamp":11}"#,
            r#"{"role":7,"content":"odd role","timestamp":12}"#,
            r#"{"content":"no role","timestamp":13}"#,
        ];
        let mut lines = vec![
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.to_string(),
        ];
        for (i, message) in messages.iter().enumerate() {
            lines.push(entry(i as u32 + 1, message));
        }
        let n = messages.len() as u32;
        // A line naming its message twice: `JSON.parse` keeps the last.
        lines.push(format!(
            r#"{{"type":"message","id":"m{}","parentId":"m{n}","timestamp":"2026-01-01T00:00:50.000Z","message":{{"role":"user","content":"dropped","timestamp":50}},"message":{{"role":"user","content":"kept","timestamp":51}}}}"#,
            n + 1
        ));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        // Some profiles refuse some leaves (alike in both); every profile answers some.
        assert!(compare_streamed_with_built(&path) >= 12);
    }

    /// A message as a random line holds it: a role pi treats in its own way (or an odd one),
    /// content missing, null, a string or blocks, tricky members, and keys in any order.
    fn random_message(tricky: &mut crate::format::tricky_json::Tricky) -> String {
        let mut members: Vec<String> = Vec::new();
        let role = [
            Some(r#""user""#),
            Some(r#""assistant""#),
            Some(r#""toolResult""#),
            Some(r#""system""#),
            Some(r#""custom""#),
            Some(r#""bashExecution""#),
            Some(r#""branchSummary""#),
            Some(r#""compactionSummary""#),
            Some(r#""hookMessage""#),
            Some(r#""us\u0065r""#),
            Some("7"),
            Some("null"),
            None,
        ][tricky.below(13)];
        if let Some(role) = role {
            members.push(format!(r#""role":{role}"#));
        }
        let value = |tricky: &mut crate::format::tricky_json::Tricky, depth| {
            let mut out = String::new();
            tricky.value(depth, &mut out);
            out
        };
        match tricky.below(6) {
            0 => {}
            1 => members.push(r#""content":null"#.into()),
            2 => {
                let mut text = String::new();
                tricky.string(&mut text);
                members.push(format!(r#""content":{text}"#));
            }
            3 => {
                let mut text = String::new();
                tricky.string(&mut text);
                members.push(format!(
                    r#""content":[{{"type":"text","text":{text}}},{}]"#,
                    value(tricky, 2)
                ));
            }
            _ => members.push(format!(r#""content":{}"#, value(tricky, 3))),
        }
        for key in [
            "timestamp",
            "command",
            "output",
            "exitCode",
            "summary",
            "details",
        ] {
            if tricky.chance(300) {
                members.push(format!(r#""{key}":{}"#, value(tricky, 2)));
            }
        }
        for _ in 0..tricky.below(4) {
            let mut key = String::new();
            tricky.key(&mut key);
            members.push(format!("{key}:{}", value(tricky, 3)));
        }
        // Any order, now and then a member twice.
        for i in (1..members.len()).rev() {
            members.swap(i, tricky.below(i + 1));
        }
        if !members.is_empty() && tricky.chance(100) {
            members.push(members[tricky.below(members.len())].clone());
        }
        let mut out = String::from("{");
        for (i, member) in members.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            tricky.whitespace(&mut out);
            out.push_str(member);
            tricky.whitespace(&mut out);
        }
        out.push('}');
        out
    }

    /// Seeded random sessions of message entries (and a few others), their lines' members
    /// in any order: the streamed document is the built one in every profile and format, and
    /// most messages were written from their lines.
    #[test]
    fn random_messages_from_lines_are_the_built_ones() {
        let mut tricky = crate::format::tricky_json::Tricky::new(0x5eed_c0de);
        tricky.escaped_keys_per_mille = 5;
        let dir = tempfile::tempdir().unwrap();
        let (mut compared, mut from_lines, mut built) = (0, 0, 0);
        for file in 0..6 {
            let mut lines = vec![
                r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.to_string(),
            ];
            for n in 1..=80u32 {
                let parent = if n == 1 {
                    "null".to_string()
                } else {
                    format!("\"m{}\"", n - 1)
                };
                let mut members = vec![
                    r#""type":"message""#.to_string(),
                    format!(r#""id":"m{n}""#),
                    format!(r#""parentId":{parent}"#),
                    format!(
                        r#""timestamp":"2026-01-01T00:{:02}:{:02}.000Z""#,
                        n / 60,
                        n % 60
                    ),
                    format!(r#""message":{}"#, random_message(&mut tricky)),
                ];
                match tricky.below(20) {
                    // A message named twice (JSON.parse keeps the last), or a type twice.
                    0 => members.insert(0, format!(r#""message":{}"#, random_message(&mut tricky))),
                    1 => members.insert(0, r#""type":"custom_message""#.into()),
                    2 => members[0] = r#""type":"mess\u0061ge""#.into(),
                    3 => {
                        members[0] = format!(
                            r#""type":"custom_message","customType":"c","content":{},"display":true"#,
                            random_message(&mut tricky)
                        )
                    }
                    _ => {}
                }
                for i in (2..members.len()).rev() {
                    members.swap(i, 1 + tricky.below(i));
                }
                let mut line = String::from("{");
                for (i, member) in members.iter().enumerate() {
                    if i > 0 {
                        line.push(',');
                    }
                    tricky.whitespace(&mut line);
                    line.push_str(member);
                }
                line.push('}');
                lines.push(line.replace(['\n', '\r'], " "));
            }
            let path = dir.path().join(format!("s{file}.jsonl"));
            std::fs::write(&path, lines.join("\n") + "\n").unwrap();
            compared += compare_streamed_with_built(&path);
            let mut session =
                Session::open_read_only(&path, SessionOptions::with_profile(Profile::PiCli))
                    .unwrap();
            let leaf = session.leaf().clone();
            session
                .build_context_lines(&leaf, MessageFormat::Agent, |message| {
                    match message {
                        ContextMessage::Line(_) => from_lines += 1,
                        ContextMessage::Value(_) => built += 1,
                    }
                    Ok(())
                })
                .unwrap();
        }
        eprintln!("{compared} compared, {from_lines} from lines, {built} built");
        assert!(compared >= 6 * 12, "{compared}");
        assert!(
            from_lines > 2 * built && built > 20,
            "{from_lines} from lines, {built} built"
        );
    }
}
