//! Listing rows written as JSON text, member by member: the one serialization of
//! [`SessionInfo`] as pi's `SessionInfo` JSON (which members, in which order, from which
//! field), in the two forms rows are sent in: the JSON-RPC answer's (compact, numbers and
//! strings as serde_json writes them) and `list --json`'s (`JSON.stringify(rows, null, 2)`).
//! `allMessagesText`, most of a row, is copied from its JSON literal as it is; the other
//! members are small and written as those two would write them.

use std::io;

use crate::format::js_date::JsDate;
use crate::format::json::{self, JsValue, write_number};
use crate::repo::session_info::{ListField, SessionInfo};

/// One member's value, in the form it is written from.
enum Member<'a> {
    Value(JsValue),
    Text(&'a str),
    /// `messageCount`: an integer in the answer, a JavaScript number in `list --json`.
    Count(u64),
    /// A JSON string literal, written as it is.
    Literal(&'a str),
}

/// The members of `info`'s row, in pi's key order, only `fields` when given.
fn members<'a>(
    info: &'a SessionInfo,
    fields: Option<&[ListField]>,
) -> Vec<(ListField, Member<'a>)> {
    let date = |d: JsDate| Member::Value(d.to_iso_string().map_or(JsValue::Null, JsValue::from));
    ListField::ALL
        .into_iter()
        .filter(|field| fields.is_none_or(|f| f.contains(field)))
        .filter_map(|field| {
            let member = match field {
                ListField::Path => match info.path.to_str() {
                    Some(path) => Member::Text(path),
                    None => Member::Value(JsValue::from(info.path.to_string_lossy().as_ref())),
                },
                ListField::Id => Member::Value(info.id.clone()?),
                ListField::Cwd => Member::Text(&info.cwd),
                ListField::Name => Member::Text(info.name.as_deref()?),
                ListField::ParentSessionPath => Member::Value(info.parent_session_path.clone()?),
                ListField::Created => date(info.created),
                ListField::Modified => date(info.modified),
                ListField::MessageCount => Member::Count(info.message_count),
                ListField::FirstMessage => Member::Text(&info.first_message),
                ListField::AllMessagesText => Member::Literal(info.all_messages_text.json()),
            };
            Some((field, member))
        })
        .collect()
}

/// Where rows go: a string (an answer), or a stream (`list --json` on stdout), so that
/// megabytes of text are not gathered first.
pub(crate) trait RowsOut {
    fn put(&mut self, text: &str) -> io::Result<()>;
}

impl RowsOut for String {
    fn put(&mut self, text: &str) -> io::Result<()> {
        self.push_str(text);
        Ok(())
    }
}

/// A [`RowsOut`] writing to `W`.
pub(crate) struct Stream<W: io::Write>(pub W);

impl<W: io::Write> RowsOut for Stream<W> {
    fn put(&mut self, text: &str) -> io::Result<()> {
        self.0.write_all(text.as_bytes())
    }
}

/// The rows as the JSON-RPC answer carries them: `[{...},{...}]`, compact.
pub(crate) fn write_compact(
    sessions: &[SessionInfo],
    fields: Option<&[ListField]>,
    out: &mut impl RowsOut,
) -> io::Result<()> {
    let mut part = String::from("[");
    for (i, info) in sessions.iter().enumerate() {
        if i > 0 {
            part.push(',');
        }
        part.push('{');
        for (j, (field, member)) in members(info, fields).into_iter().enumerate() {
            if j > 0 {
                part.push(',');
            }
            push_key(&mut part, field);
            part.push(':');
            match member {
                Member::Value(value) => {
                    let text = serde_json::to_string(&value.to_serde());
                    part.push_str(text.as_deref().unwrap_or("null"));
                }
                Member::Text(text) => json::write_string(text, &mut part),
                Member::Count(n) => part.push_str(&n.to_string()),
                Member::Literal(literal) => put_literal(out, &mut part, literal)?,
            }
        }
        part.push('}');
    }
    part.push(']');
    out.put(&part)
}

/// The rows as `JSON.stringify(rows, null, 2)` writes them.
pub(crate) fn write_pretty(
    sessions: &[SessionInfo],
    fields: Option<&[ListField]>,
    out: &mut impl RowsOut,
) -> io::Result<()> {
    const INDENT: usize = 2;
    let newline = |part: &mut String, level: usize| {
        part.push('\n');
        json::push_spaces(INDENT * level, part);
    };
    if sessions.is_empty() {
        return out.put("[]");
    }
    let mut part = String::from("[");
    for (i, info) in sessions.iter().enumerate() {
        if i > 0 {
            part.push(',');
        }
        newline(&mut part, 1);
        let members = members(info, fields);
        if members.is_empty() {
            part.push_str("{}");
            continue;
        }
        part.push('{');
        for (j, (field, member)) in members.into_iter().enumerate() {
            if j > 0 {
                part.push(',');
            }
            newline(&mut part, 2);
            push_key(&mut part, field);
            part.push_str(": ");
            match member {
                Member::Value(value) => value.write_pretty_at(&mut part, INDENT, 2),
                Member::Text(text) => json::write_string(text, &mut part),
                Member::Count(n) => write_number(n as f64, &mut part),
                Member::Literal(literal) => put_literal(out, &mut part, literal)?,
            }
        }
        newline(&mut part, 1);
        part.push('}');
    }
    newline(&mut part, 0);
    part.push(']');
    out.put(&part)
}

/// Writes what has gathered in `part`, then `literal` as it is.
fn put_literal(out: &mut impl RowsOut, part: &mut String, literal: &str) -> io::Result<()> {
    out.put(part)?;
    part.clear();
    out.put(literal)
}

/// About how long the rows are written out (the message texts are most of it), so that an
/// answer gathered in a string is not copied as it grows.
pub(crate) fn estimated_len(sessions: &[SessionInfo], fields: Option<&[ListField]>) -> usize {
    let texts = fields.is_none_or(|f| f.contains(&ListField::AllMessagesText));
    let text_len = |s: &SessionInfo| {
        if texts {
            s.all_messages_text.json().len()
        } else {
            0
        }
    };
    sessions.iter().map(|s| 512 + text_len(s)).sum()
}

fn push_key(out: &mut String, field: ListField) {
    out.push('"');
    out.push_str(field.name());
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn odd_row() -> SessionInfo {
        SessionInfo {
            path: PathBuf::from("/s/\"quoted\"\n.jsonl"),
            id: Some(json::parse(r#"{"b":[1,{"c":null}],"a":1.5e21,"e":{},"f":[]}"#).unwrap()),
            cwd: "/w\u{1}".into(),
            name: Some("tab\there".into()),
            parent_session_path: Some(json::parse(r#""x\ud83d""#).unwrap()),
            created: JsDate::from_millis(-3.0),
            modified: JsDate::INVALID,
            message_count: 3,
            first_message: "héllo \u{2028}".into(),
            all_messages_text: "héllo \u{2028} \"there\"\n\u{7f}\u{1f}".into(),
        }
    }

    fn plain_row() -> SessionInfo {
        SessionInfo {
            name: None,
            parent_session_path: None,
            id: None,
            ..odd_row()
        }
    }

    const PICKS: [&[ListField]; 4] = [
        &[],
        &[ListField::AllMessagesText],
        &[ListField::Modified, ListField::Path, ListField::Name],
        &ListField::ALL,
    ];

    /// What a row holds, as the test reads pi's `SessionInfo`: every member in pi's key order,
    /// `id`/`name`/`parentSessionPath` only when present, dates as ISO text (null if invalid).
    fn expected(info: &SessionInfo, fields: Option<&[ListField]>) -> serde_json::Value {
        use serde_json::{Value, json};
        let date = |d: JsDate| d.to_iso_string().map_or(Value::Null, Value::from);
        let all = [
            ("path", Some(json!(info.path.to_str().unwrap()))),
            ("id", info.id.as_ref().map(JsValue::to_serde)),
            ("cwd", Some(json!(info.cwd))),
            ("name", info.name.as_ref().map(|n| json!(n))),
            (
                "parentSessionPath",
                info.parent_session_path.as_ref().map(JsValue::to_serde),
            ),
            ("created", Some(date(info.created))),
            ("modified", Some(date(info.modified))),
            ("messageCount", Some(json!(info.message_count))),
            ("firstMessage", Some(json!(info.first_message))),
            (
                "allMessagesText",
                Some(json!(info.all_messages_text.as_str())),
            ),
        ];
        let wanted = |key: &str| fields.is_none_or(|f| f.iter().any(|f| f.name() == key));
        Value::Object(
            all.into_iter()
                .filter(|(key, _)| wanted(key))
                .filter_map(|(key, value)| Some((key.to_string(), value?)))
                .collect(),
        )
    }

    #[test]
    fn compact_rows_are_what_serde_json_writes_of_the_rows_values() {
        let rows = [odd_row(), plain_row()];
        for fields in PICKS.map(Some).into_iter().chain([None]) {
            let mut ours = String::new();
            write_compact(&rows, fields, &mut ours).unwrap();
            let read: serde_json::Value = serde_json::from_str(&ours).unwrap();
            let want: Vec<_> = rows.iter().map(|r| expected(r, fields)).collect();
            assert_eq!(read, serde_json::Value::from(want), "{fields:?}");
            assert_eq!(ours, serde_json::to_string(&read).unwrap(), "{fields:?}");
        }
        let mut empty = String::new();
        write_compact(&[], None, &mut empty).unwrap();
        assert_eq!(empty, "[]");
    }

    #[test]
    fn pretty_rows_are_what_json_stringify_writes_of_the_same_rows() {
        let rows = [odd_row(), plain_row()];
        for fields in PICKS.map(Some).into_iter().chain([None]) {
            let mut ours = String::new();
            write_pretty(&rows, fields, &mut ours).unwrap();
            let read = json::parse(&ours).unwrap();
            assert_eq!(ours, read.stringify_pretty(2), "{fields:?}");
            // JavaScript's text of the values keeps what serde_json's cannot (a lone surrogate,
            // `1.5e+21`); read back, both are the same rows.
            let want: Vec<_> = rows.iter().map(|r| expected(r, fields)).collect();
            assert_eq!(read.to_serde(), serde_json::Value::from(want), "{fields:?}");
        }
        assert!(
            {
                let mut ours = String::new();
                write_pretty(&rows, None, &mut ours).unwrap();
                ours.contains(r#""x\ud83d""#) && ours.contains("1.5e+21")
            },
            "the pretty rows are JavaScript's text"
        );
        let mut empty = String::new();
        write_pretty(&[], None, &mut empty).unwrap();
        assert_eq!(empty, "[]");
    }
}
