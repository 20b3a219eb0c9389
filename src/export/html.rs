//! The HTML page: a fixed skeleton, the session as JSON data in a
//! `<script type="application/json">` (never executed; `<` written `\u003c` so no text can end
//! the element), and the vendored libraries with the viewer's script inline. The viewer renders
//! the tree at once and the conversation lazily, so a 100 MB session opens in seconds.
//!
//! Session text is never markup: the viewer sets it as text, renders Markdown with raw HTML
//! shown as text, and the page's Content-Security-Policy lets only the inline scripts whose
//! hashes it names run and fetches nothing (`default-src 'none'`, images from `data:` only).

use std::io::Write;

use crate::format::json;
use crate::store::row_indents;
use crate::store::{Session, StoreResult};

use super::assets;
use super::output::write_error;

/// Writes the page for `session`, opening at `selected` (a position; `None`: no entry).
pub fn write_page(
    session: &Session,
    selected: Option<u32>,
    out: &mut dyn Write,
) -> StoreResult<()> {
    let title = session
        .session_name()
        .unwrap_or_else(|| format!("Session {}", session.session_id()));
    let csp = format!(
        "default-src 'none'; script-src {}; style-src 'unsafe-inline'; img-src data:; \
         base-uri 'none'; form-action 'none'",
        assets::script_hashes()
    );
    let mut head = String::with_capacity(64 * 1024);
    head.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    head.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"");
    // Our own text (base64 hashes): nothing to escape in a double-quoted attribute.
    head.push_str(&csp);
    head.push_str("\">\n<meta name=\"referrer\" content=\"no-referrer\">\n");
    head.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    head.push_str("<meta name=\"generator\" content=\"pi-session ");
    head.push_str(env!("CARGO_PKG_VERSION"));
    head.push_str("\">\n<title>");
    head.push_str(&escape_html(&title));
    head.push_str("</title>\n<style>\n");
    head.push_str(assets::HIGHLIGHT_LIGHT_CSS);
    head.push_str("\n@media (prefers-color-scheme: dark) {\n");
    head.push_str(assets::HIGHLIGHT_DARK_CSS);
    head.push_str("\n}\n");
    head.push_str(assets::VIEWER_CSS);
    head.push_str("</style>\n</head>\n<body>\n");
    head.push_str(SKELETON);
    head.push_str("<script type=\"application/json\" id=\"pi-session-data\">");
    out.write_all(head.as_bytes()).map_err(write_error)?;
    write_data(session, selected, &mut Escaping(out))?;
    let mut tail = String::from("</script>\n");
    for script in assets::SCRIPTS {
        tail.push_str("<script>");
        tail.push_str(script);
        tail.push_str("</script>\n");
    }
    tail.push_str("</body>\n</html>\n");
    out.write_all(tail.as_bytes()).map_err(write_error)?;
    Ok(())
}

/// The page around the data; the viewer fills it.
const SKELETON: &str = r#"<div id="app">
<aside id="side">
<header id="side-head">
<div id="title"></div>
<div id="meta"></div>
<input id="search" type="search" placeholder="Search the session" autocomplete="off" spellcheck="false">
<div id="search-status" aria-live="polite"></div>
</header>
<div id="results" hidden></div>
<div id="tree" role="tree" aria-label="Session tree"></div>
</aside>
<main id="main">
<div id="path-head"></div>
<div id="conversation"></div>
</main>
</div>
<noscript><p class="noscript">This page shows the session with its built-in script; allow scripts for this file to see it.</p></noscript>
"#;

/// The session as one JSON document: `{format, file, header, name, leaf, selected, ids,
/// parents, rows, previews, labels, entries}`. Entries are their lines' own bytes; positions
/// index `ids`, `parents` and `entries`; `rows` is the tree, `[position, indent, ...]` in
/// pre-order.
fn write_data(session: &Session, selected: Option<u32>, out: &mut dyn Write) -> StoreResult<()> {
    let mut text = String::with_capacity(1 << 20);
    let flush = |text: &mut String, out: &mut dyn Write| -> StoreResult<()> {
        out.write_all(text.as_bytes()).map_err(write_error)?;
        text.clear();
        Ok(())
    };
    text.push_str("{\"format\":1,\"file\":");
    let file = session
        .path()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    push_opt_string(&mut text, file.as_deref());
    text.push_str(",\"header\":");
    session.reported_header().write_compact(&mut text);
    text.push_str(",\"name\":");
    push_opt_string(&mut text, session.session_name().as_deref());
    let leaf = session.leaf_path(session.leaf()).positions.last().copied();
    text.push_str(",\"leaf\":");
    push_opt_position(&mut text, leaf);
    text.push_str(",\"selected\":");
    push_opt_position(&mut text, selected);
    let n = session.len() as u32;
    text.push_str(",\"ids\":[");
    for position in 0..n {
        if position > 0 {
            text.push(',');
        }
        push_opt_string(&mut text, session.record(position).id());
    }
    text.push_str("],\"parents\":[");
    for position in 0..n {
        if position > 0 {
            text.push(',');
        }
        push_opt_position(&mut text, session.parent_position(position));
    }
    text.push_str("],\"rows\":[");
    let rows = session.tree_rows();
    let indents = row_indents(&rows);
    for (i, (row, indent)) in rows.iter().zip(indents).enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!("{},{indent}", row.position));
    }
    text.push_str("],\"previews\":[");
    let facts = session.tree_facts()?;
    for position in 0..n {
        if position > 0 {
            text.push(',');
        }
        json::write_string(facts.preview(position), &mut text);
    }
    text.push_str("],\"labels\":{");
    for (i, (target, label, _)) in session.labels().enumerate() {
        if i > 0 {
            text.push(',');
        }
        json::write_string(target, &mut text);
        text.push(':');
        label.write_compact(&mut text);
    }
    text.push_str("},\"entries\":[");
    flush(&mut text, out)?;
    for position in 0..n {
        if position > 0 {
            text.push(',');
        }
        session.write_entry_json(position, &mut text)?;
        if text.len() > 1 << 20 {
            flush(&mut text, out)?;
        }
    }
    text.push_str("]}");
    flush(&mut text, out)
}

fn push_opt_string(text: &mut String, value: Option<&str>) {
    match value {
        Some(value) => json::write_string(value, text),
        None => text.push_str("null"),
    }
}

fn push_opt_position(text: &mut String, value: Option<u32>) {
    match value {
        Some(value) => text.push_str(&value.to_string()),
        None => text.push_str("null"),
    }
}

/// Writes JSON text into a script element: every `<` as `\u003c` (JSON text has `<` only
/// inside strings, where the escape reads back as the same character), so neither `</script>`
/// nor `<!--` can appear.
struct Escaping<'a>(&'a mut dyn Write);

impl Write for Escaping<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(at) = memchr::memchr(b'<', rest) {
            self.0.write_all(&rest[..at])?;
            self.0.write_all(b"\\u003c")?;
            rest = &rest[at + 1..];
        }
        self.0.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Text as HTML text or attribute value.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_data_cannot_close_its_script_element() {
        let mut out = Vec::new();
        Escaping(&mut out)
            .write_all(br#"{"t":"</script><script>alert(1)</script><!--"}"#)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains('<'), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["t"], "</script><script>alert(1)</script><!--");
    }

    #[test]
    fn export_titles_are_escaped() {
        assert_eq!(
            escape_html("<img src=x onerror='a'>&"),
            "&lt;img src=x onerror=&#39;a&#39;&gt;&amp;"
        );
    }
}
