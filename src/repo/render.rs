//! Listings for people and scripts: a table, and the JSON pi's `SessionInfo[]` stringifies to.

use chrono::{Local, TimeZone};

use crate::format::js_date::JsDate;
use crate::repo::rows;
use crate::repo::session_info::{ListField, SessionInfo};

/// The widest a title gets in the table before it is cut with `…`.
const TITLE_WIDTH: usize = 60;

/// `JSON.stringify(sessions, null, 2)` of pi's listing, plus a final newline.
pub fn listing_json(sessions: &[SessionInfo]) -> String {
    listing_json_of(sessions, None)
}

/// [`listing_json`] with only `fields` of each row.
pub fn listing_json_fields(sessions: &[SessionInfo], fields: &[ListField]) -> String {
    listing_json_of(sessions, Some(fields))
}

fn listing_json_of(sessions: &[SessionInfo], fields: Option<&[ListField]>) -> String {
    let mut out = String::with_capacity(rows::estimated_len(sessions, fields));
    // Writing to a string cannot fail.
    let _ = rows::write_pretty(sessions, fields, &mut out);
    out.push('\n');
    out
}

/// [`listing_json`] (only `fields` when given) written to `out` as it is made.
pub fn write_listing_json(
    sessions: &[SessionInfo],
    fields: Option<&[ListField]>,
    out: impl std::io::Write,
) -> std::io::Result<()> {
    let mut stream = rows::Stream(out);
    rows::write_pretty(sessions, fields, &mut stream)?;
    stream.0.write_all(b"\n")?;
    stream.0.flush()
}

/// A table with one session per line: title (name, else first message, on one line), message
/// count, modification time (local), path. An empty listing says so.
pub fn listing_table(sessions: &[SessionInfo]) -> String {
    if sessions.is_empty() {
        return "No sessions.\n".to_string();
    }
    let rows: Vec<[String; 4]> = sessions
        .iter()
        .map(|s| {
            [
                one_line_title(s.title()),
                s.message_count.to_string(),
                local_time(s.modified),
                s.path.display().to_string(),
            ]
        })
        .collect();
    let header = ["TITLE", "MSGS", "MODIFIED", "PATH"];
    let width = |col: usize| {
        rows.iter()
            .map(|r| r[col].chars().count())
            .chain([header[col].len()])
            .max()
            .unwrap_or(0)
    };
    let (title_w, count_w, time_w) = (width(0), width(1), width(2));
    let mut out = String::new();
    let mut line = |cells: [&str; 4]| {
        let pad = title_w - cells[0].chars().count();
        out.push_str(cells[0]);
        out.extend(std::iter::repeat_n(' ', pad + 2));
        out.push_str(&format!(
            "{:>count_w$}  {:<time_w$}  {}",
            cells[1], cells[2], cells[3]
        ));
        out.push('\n');
    };
    line(header);
    for row in &rows {
        line([&row[0], &row[1], &row[2], &row[3]]);
    }
    out
}

/// Whitespace runs (newlines included) become one space; long titles are cut with `…`.
fn one_line_title(title: &str) -> String {
    let flat = title.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= TITLE_WIDTH {
        return flat;
    }
    let mut cut: String = flat.chars().take(TITLE_WIDTH - 1).collect();
    cut.push('…');
    cut
}

fn local_time(date: JsDate) -> String {
    date.millis()
        .and_then(|ms| Local.timestamp_millis_opt(ms).single())
        .map_or_else(
            || "-".to_string(),
            |t| t.format("%Y-%m-%d %H:%M").to_string(),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::json::JsValue;
    use std::path::PathBuf;

    fn info(name: Option<&str>, first: &str, count: u64) -> SessionInfo {
        SessionInfo {
            path: PathBuf::from("/s/a.jsonl"),
            id: Some(JsValue::from("id-1")),
            cwd: "/w".into(),
            name: name.map(String::from),
            parent_session_path: None,
            created: JsDate::from_millis(0.0),
            modified: JsDate::INVALID,
            message_count: count,
            first_message: first.into(),
            all_messages_text: first.into(),
        }
    }

    #[test]
    fn json_has_pis_keys_in_pis_order() {
        let text = listing_json(&[info(Some("n"), "hi", 2)]);
        let expected = r#"[
  {
    "path": "/s/a.jsonl",
    "id": "id-1",
    "cwd": "/w",
    "name": "n",
    "created": "1970-01-01T00:00:00.000Z",
    "modified": null,
    "messageCount": 2,
    "firstMessage": "hi",
    "allMessagesText": "hi"
  }
]
"#;
        assert_eq!(text, expected);
        assert_eq!(listing_json(&[]), "[]\n");
    }

    #[test]
    fn table_rows_are_one_line_each() {
        let long = "word ".repeat(30);
        let table = listing_table(&[info(None, "two\nlines", 12), info(None, &long, 3)]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("TITLE"));
        assert!(lines[1].starts_with("two lines "));
        assert!(lines[1].contains("12  -"));
        assert!(lines[2].contains('…'));
        assert_eq!(listing_table(&[]), "No sessions.\n");
    }
}
