//! Everything SQLite-only about the text: the FTS5 table with the `trigram` tokenizer, how
//! pieces become a MATCH expression (each a quoted string: FTS5 operators in the text stay
//! text), bm25 ranking and snippets. A PostgreSQL backend replaces this module (pg_trgm).

use rusqlite::{Connection, Transaction, params};

use crate::catalog::query::Piece;

/// The text table: rowid = `entries.rid`. The engine folds nothing (`case_sensitive 1`): the
/// text arrives folded.
pub(crate) const CREATE: &str = "CREATE VIRTUAL TABLE IF NOT EXISTS entry_text USING fts5(\
    body, thinking, tokenize = 'trigram case_sensitive 1')";

/// The marks around a match in a snippet.
pub(crate) const MARK_OPEN: &str = "«";
pub(crate) const MARK_CLOSE: &str = "»";

pub(crate) fn insert(
    tx: &Transaction<'_>,
    rid: i64,
    body: &str,
    thinking: &str,
) -> rusqlite::Result<()> {
    if body.is_empty() && thinking.is_empty() {
        return Ok(());
    }
    tx.prepare_cached("INSERT INTO entry_text(rowid, body, thinking) VALUES (?1, ?2, ?3)")?
        .execute(params![rid, body, thinking])?;
    Ok(())
}

pub(crate) fn delete_session(tx: &Transaction<'_>, session: i64) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "DELETE FROM entry_text WHERE rowid IN (SELECT rid FROM entries WHERE session = ?1)",
    )?
    .execute(params![session])?;
    Ok(())
}

/// The MATCH expression for the pieces the trigram index can find (three characters or
/// more), each a quoted string, all required; `None` when no piece is long enough.
pub(crate) fn match_expression(pieces: &[Piece], thinking: bool) -> Option<String> {
    let quoted: Vec<String> = pieces
        .iter()
        .filter(|p| p.indexed())
        .map(|p| format!("\"{}\"", p.text.replace('"', "\"\"")))
        .collect();
    if quoted.is_empty() {
        return None;
    }
    let all = quoted.join(" AND ");
    Some(if thinking {
        all
    } else {
        format!("body : ({all})")
    })
}

/// The SQL pieces of a text search: the FROM clause joining the text, the ranking and the
/// text the snippet is cut from, for a query with (`matched`) or without a MATCH expression.
pub(crate) struct TextSql {
    pub(crate) from: &'static str,
    pub(crate) snippet: &'static str,
    pub(crate) score: &'static str,
    pub(crate) order: &'static str,
    /// The same order over the chosen page (`page.score`, `page.ts`, `page.rid`).
    pub(crate) page_order: &'static str,
}

pub(crate) fn text_sql(matched: bool) -> TextSql {
    if matched {
        TextSql {
            from: "entry_text JOIN entries e ON e.rid = entry_text.rowid",
            snippet: "rtrim(entry_text.body || char(10) || entry_text.thinking, char(10))",
            score: "bm25(entry_text)",
            order: "bm25(entry_text), e.rid",
            page_order: "page.score, page.rid",
        }
    } else {
        TextSql {
            from: "entry_text JOIN entries e ON e.rid = entry_text.rowid",
            snippet: "rtrim(entry_text.body || char(10) || entry_text.thinking, char(10))",
            score: "NULL",
            order: "e.ts_ms DESC, e.rid",
            page_order: "page.ts DESC, page.rid",
        }
    }
}

/// The condition that `piece` (bound at `?N`) is in the searched columns.
pub(crate) fn contains(param: usize, thinking: bool) -> String {
    if thinking {
        format!(
            "(instr(entry_text.body, ?{param}) > 0 OR instr(entry_text.thinking, ?{param}) > 0)"
        )
    } else {
        format!("instr(entry_text.body, ?{param}) > 0")
    }
}

/// Whether the FTS5 module is compiled in (it is with rusqlite's `bundled`).
pub(crate) fn check(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("CREATE VIRTUAL TABLE temp.fts_probe USING fts5(x, tokenize='trigram'); DROP TABLE temp.fts_probe;")
}

/// A snippet of `text` around the first of `pieces` found, the piece marked whole (FTS5's
/// `snippet` marks trigrams within a token budget, and cuts a match at the window's end).
pub(crate) fn snippet(text: &str, pieces: &[Piece]) -> String {
    const AROUND: usize = 40;
    let Some((at, len)) = pieces
        .iter()
        .filter_map(|p| text.find(&p.text).map(|at| (at, p.text.len())))
        .min()
    else {
        return text.chars().take(AROUND * 2).collect();
    };
    let before: String = {
        let head: Vec<char> = text[..at].chars().rev().take(AROUND).collect();
        head.into_iter().rev().collect()
    };
    let after: String = text[at + len..].chars().take(AROUND).collect();
    let lead = if before.len() < at { "…" } else { "" };
    let tail = if at + len + after.len() < text.len() {
        "…"
    } else {
        ""
    };
    format!(
        "{lead}{before}{MARK_OPEN}{}{MARK_CLOSE}{after}{tail}",
        &text[at..at + len]
    )
}
