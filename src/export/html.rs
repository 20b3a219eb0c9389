//! The HTML page: a fixed skeleton of markup, then the session packed (see [`packed`]): the
//! tree's skeleton, then the chunk holding the last page of the path the page opens at, then
//! the vendored libraries with the viewer's script inline, then every other entry in chunks of
//! about a megabyte. The viewer runs as soon as what it first shows has been read, while the
//! browser still reads the rest; it decodes a chunk when an entry in it is shown or searched.
//! The session streams from the store to the output: nothing holds its whole text.
//!
//! Session text is never markup: the viewer sets it as text, renders Markdown with raw HTML
//! shown as text, and the page's Content-Security-Policy lets only the inline scripts whose
//! hashes it names run and fetches nothing (`default-src 'none'`, images from `data:` only).

use std::io::Write;

use crate::store::{Session, StoreResult};

use super::assets;
use super::output::write_error;
use super::packed::PackedElement;
use super::skeleton;

/// The entries the viewer shows of a path at first, its last ones (the viewer's `PAGE`).
const FIRST_PAGE: usize = 150;

/// Entries' JSON per chunk (before compression): big enough that a search decodes few
/// elements, small enough that showing one entry decodes little.
const CHUNK_BYTES: u64 = 1 << 20;

/// Writes the page for `session`, opening at `selected` (a position; `None`: no entry).
pub(crate) fn write_page(
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
    out.write_all(head.as_bytes()).map_err(write_error)?;

    let first = first_chunk(session, selected);
    let mut element = PackedElement::open(out, "id=\"pi-skeleton\"").map_err(write_error)?;
    skeleton::write(session, selected, &first, &mut element)?;
    element.finish().map_err(write_error)?;
    let mut element = PackedElement::open(out, "id=\"pi-chunk-first\"").map_err(write_error)?;
    let mut line = String::new();
    for (i, &position) in first.iter().enumerate() {
        write_entry(session, position, i > 0, &mut line, &mut element)?;
    }
    element.finish().map_err(write_error)?;

    let mut scripts = String::new();
    for script in assets::SCRIPTS {
        scripts.push_str("<script>");
        scripts.push_str(script);
        scripts.push_str("</script>\n");
    }
    out.write_all(scripts.as_bytes()).map_err(write_error)?;

    write_chunks(session, &first, out)?;
    out.write_all(b"</body>\n</html>\n").map_err(write_error)?;
    Ok(())
}

/// The positions the first chunk holds: the last page of the path to `selected`.
fn first_chunk(session: &Session, selected: Option<u32>) -> Vec<u32> {
    let Some(selected) = selected else {
        return Vec::new();
    };
    let mut path = Vec::new();
    let mut at = Some(selected);
    while let Some(position) = at {
        if path.len() == FIRST_PAGE || path.contains(&position) {
            break;
        }
        path.push(position);
        at = session.parent_position(position);
    }
    path.reverse();
    path
}

/// Every entry not in `first`, in order, in chunks of about [`CHUNK_BYTES`]; each chunk
/// element names the first position it covers (`data-from`); it covers the positions up to
/// the next chunk's.
fn write_chunks(session: &Session, first: &[u32], out: &mut dyn Write) -> StoreResult<()> {
    let mut in_first = vec![false; session.len()];
    for &position in first {
        in_first[position as usize] = true;
    }
    let mut line = String::new();
    let mut position = 0;
    let n = session.len() as u32;
    while position < n {
        let from = position;
        let attributes = format!("class=\"pi-chunk\" data-from=\"{from}\"");
        let mut element = PackedElement::open(out, &attributes).map_err(write_error)?;
        let mut lines = 0;
        while position < n && element.raw_len() < CHUNK_BYTES {
            if !in_first[position as usize] {
                write_entry(session, position, lines > 0, &mut line, &mut element)?;
                lines += 1;
            }
            position += 1;
        }
        element.finish().map_err(write_error)?;
    }
    Ok(())
}

/// One entry's JSON as one line of a chunk (`newline`: after another).
fn write_entry(
    session: &Session,
    position: u32,
    newline: bool,
    line: &mut String,
    out: &mut dyn Write,
) -> StoreResult<()> {
    line.clear();
    if newline {
        line.push('\n');
    }
    session.write_entry_json(position, line)?;
    // JSON holds a raw line break only as whitespace between tokens; a space reads the same
    // and keeps one entry per line.
    let start = usize::from(newline);
    if memchr::memchr(b'\n', &line.as_bytes()[start..]).is_some() {
        let json = line[start..].replace('\n', " ");
        line.truncate(start);
        line.push_str(&json);
    }
    out.write_all(line.as_bytes()).map_err(write_error)
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
<div id="tree-head"></div>
<div id="tree" role="tree" aria-label="Session tree"><div id="tree-rows"></div></div>
</aside>
<main id="main">
<div id="path-head"></div>
<div id="conversation"></div>
</main>
</div>
<noscript><p class="noscript">This page shows the session with its built-in script; allow scripts for this file to see it.</p></noscript>
"#;

/// Text as HTML text or attribute value.
pub(crate) fn escape_html(text: &str) -> String {
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
    fn export_titles_are_escaped() {
        assert_eq!(
            escape_html("<img src=x onerror='a'>&"),
            "&lt;img src=x onerror=&#39;a&#39;&gt;&amp;"
        );
    }
}
