//! The embedded backend: one SQLite database (WAL) per profile. The tables other than the text
//! are plain SQL a server database can hold as written (see docs/store-index.md); the FTS5
//! parts are in `fts`.

mod fts;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, params, params_from_iter};

use super::backend::{
    Backend, CatalogError, CatalogResult, FileUpdate, HitRow, KnownFile, SearchSpec, UsageRow,
};
use super::change::FileStamp;
use super::fold::FOLD_VERSION;

/// Bumped when the tables change: an index of another version is rebuilt.
pub const SCHEMA_VERSION: u32 = 4;

/// How long a write waits for another process's transaction before giving up.
const BUSY_WAIT: Duration = Duration::from_secs(5);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    session_id TEXT NOT NULL,
    cwd TEXT NOT NULL,
    name TEXT,
    parent_path TEXT,
    parent_file_id TEXT,
    parent_row INTEGER,
    dev INTEGER NOT NULL, ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    entries INTEGER NOT NULL, head_hash INTEGER NOT NULL, tail_hash INTEGER NOT NULL,
    text_entries INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_session_id ON sessions(session_id);
CREATE TABLE IF NOT EXISTS entries (
    rid INTEGER PRIMARY KEY,
    session INTEGER NOT NULL,
    pos INTEGER NOT NULL,
    line INTEGER NOT NULL,
    entry_id TEXT,
    parent_id TEXT,
    kind TEXT,
    role TEXT,
    ts_ms REAL,
    provider TEXT,
    model TEXT,
    tools TEXT NOT NULL,
    assistant INTEGER NOT NULL,
    has_usage INTEGER NOT NULL,
    tool_calls INTEGER NOT NULL,
    input REAL NOT NULL, output REAL NOT NULL, cache_read REAL NOT NULL,
    cache_write REAL NOT NULL, cost REAL NOT NULL,
    on_path INTEGER NOT NULL,
    copied INTEGER NOT NULL,
    UNIQUE (session, pos)
);
CREATE INDEX IF NOT EXISTS entries_session_id ON entries(session, entry_id);
CREATE INDEX IF NOT EXISTS entries_figures ON entries(has_usage, session);
CREATE TABLE IF NOT EXISTS usage_rollup (
    session INTEGER NOT NULL,
    bucket_ms INTEGER,
    model TEXT,
    copied INTEGER NOT NULL,
    assistant INTEGER NOT NULL,
    tool_calls INTEGER NOT NULL,
    input REAL NOT NULL, output REAL NOT NULL, cache_read REAL NOT NULL,
    cache_write REAL NOT NULL, cost REAL NOT NULL
);
";

/// The figures rollup's bucket: 15 minutes, so that a day in any zone whose offset is a
/// multiple of 15 minutes (every zone in use since the 1980s) is a whole number of buckets.
pub(crate) const BUCKET_MS: i64 = 15 * 60 * 1000;

/// `meta` key present while `usage_rollup` lags the entries (set in the transaction that
/// changes them; the next `usage` rebuilds the rollup and removes it).
const ROLLUP_STALE: &str = "rollup stale";

/// A page of a search without filters that ends within its first `RANK_CAP_PAGE` hits is
/// chosen by bm25 among the last `RANK_CAP` matches filed (highest rowid), not among all of
/// them; deeper pages rank every match.
const RANK_CAP: i64 = 2000;
const RANK_CAP_PAGE: u64 = 100;

/// The SQLite store index.
pub(crate) struct Sqlite {
    conn: Connection,
}

fn failed(what: &str) -> impl Fn(rusqlite::Error) -> CatalogError + '_ {
    move |e| error(what, e)
}

/// `e` while doing `what`, marked damaged when SQLite says the file is.
fn error(what: &str, e: rusqlite::Error) -> CatalogError {
    use rusqlite::ErrorCode::*;
    let damaged = matches!(e.sqlite_error_code(), Some(NotADatabase | DatabaseCorrupt));
    CatalogError {
        message: format!("{what}: {e}"),
        damaged,
    }
}

impl Sqlite {
    /// The index at `path`, made when missing; one that is not a current index of ours
    /// (another schema, another folding, not SQLite at all) is deleted and made anew. Damage
    /// deeper in the file shows when a page is read (`CatalogError::damaged`): no check reads
    /// the whole database on open, which would cost a second per hundred megabytes.
    pub(crate) fn open(path: &Path) -> CatalogResult<Sqlite> {
        match Sqlite::open_once(path) {
            Ok(db) => Ok(db),
            Err(Reopen::Rebuild(why)) => {
                tracing::warn!("store index {}: {why}; rebuilding it", path.display());
                delete(path);
                Sqlite::open_once(path).map_err(|e| match e {
                    Reopen::Rebuild(m) | Reopen::Fail(m) => CatalogError::new(m),
                })
            }
            Err(Reopen::Fail(message)) => Err(CatalogError::new(message)),
        }
    }

    /// An index held in memory only (`--no-index`, or when no database file is usable).
    pub(crate) fn in_memory() -> CatalogResult<Sqlite> {
        let conn = Connection::open_in_memory().map_err(failed("in-memory index"))?;
        let db = Sqlite { conn };
        db.create().map_err(failed("in-memory index"))?;
        Ok(db)
    }

    fn open_once(path: &Path) -> Result<Sqlite, Reopen> {
        let fail = |e: rusqlite::Error| classify(path, e);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                Reopen::Fail(format!("cannot make the directory {}: {e}", dir.display()))
            })?;
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(fail)?;
        conn.busy_timeout(BUSY_WAIT).map_err(fail)?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(fail)?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::debug!("store index {}: journal mode {mode}", path.display());
        }
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF;")
            .map_err(fail)?;
        let db = Sqlite { conn };
        let has_meta: bool = db
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'meta'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map_err(fail)?
            > 0;
        if has_meta {
            let version: Option<String> = db
                .conn
                .query_row("SELECT value FROM meta WHERE key = 'version'", [], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(fail)?;
            if version.as_deref() != Some(&version_text()) {
                return Err(Reopen::Rebuild(format!(
                    "made by another version ({})",
                    version.as_deref().unwrap_or("none")
                )));
            }
        }
        db.create().map_err(fail)?;
        Ok(db)
    }

    fn create(&self) -> rusqlite::Result<()> {
        fts::check(&self.conn)?;
        self.conn.execute_batch(SCHEMA)?;
        self.conn.execute_batch(fts::CREATE)?;
        super::feed::create(&self.conn)?;
        // Written once: an open that finds it writes nothing (a reader is never made to wait).
        self.conn.execute(
            "INSERT OR IGNORE INTO meta(key, value) VALUES ('version', ?1)",
            params![version_text()],
        )?;
        Ok(())
    }

    fn session_row(
        tx: &Transaction<'_>,
        path: &str,
    ) -> rusqlite::Result<Option<(i64, FileStamp, u64)>> {
        tx.prepare_cached(
            "SELECT id, dev, ino, size, mtime_ns, entries, head_hash, tail_hash, text_entries
             FROM sessions WHERE path = ?1",
        )?
        .query_row(params![path], |r| {
            Ok((r.get(0)?, stamp_of(r, 1)?, r.get::<_, i64>(8)? as u64))
        })
        .optional()
    }
}

/// Deletes the database at `path` and its journal files.
pub(crate) fn delete(path: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(file));
    }
}

enum Reopen {
    /// Not a usable index of ours: delete it and make it again.
    Rebuild(String),
    /// The place itself is unusable (read-only, locked, ...).
    Fail(String),
}

fn classify(path: &Path, e: rusqlite::Error) -> Reopen {
    use rusqlite::ErrorCode::*;
    let message = format!("store index {}: {e}", path.display());
    match e.sqlite_error_code() {
        Some(NotADatabase | DatabaseCorrupt) => Reopen::Rebuild(e.to_string()),
        _ => Reopen::Fail(message),
    }
}

fn version_text() -> String {
    format!("schema {SCHEMA_VERSION}, fold {FOLD_VERSION}")
}

fn stamp_of(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<FileStamp> {
    Ok(FileStamp {
        dev: r.get::<_, i64>(at)? as u64,
        ino: r.get::<_, i64>(at + 1)? as u64,
        size: r.get::<_, i64>(at + 2)? as u64,
        mtime_ns: r.get(at + 3)?,
        entries: r.get::<_, i64>(at + 4)? as u64,
        head_hash: r.get::<_, i64>(at + 5)? as u64,
        tail_hash: r.get::<_, i64>(at + 6)? as u64,
    })
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

impl Backend for Sqlite {
    fn known_files(&mut self) -> CatalogResult<Vec<KnownFile>> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT path, dev, ino, size, mtime_ns, entries, head_hash, tail_hash, text_entries
                 FROM sessions",
            )
            .map_err(failed("reading the store index"))?;
        let rows = statement
            .query_map([], |r| {
                Ok(KnownFile {
                    path: PathBuf::from(r.get::<_, String>(0)?),
                    stamp: stamp_of(r, 1)?,
                    text_entries: r.get::<_, i64>(8)? as u64,
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(failed("reading the store index"))?;
        Ok(rows)
    }

    fn apply(&mut self, update: &FileUpdate) -> CatalogResult<bool> {
        let what = format!("indexing {}", update.facts.path.display());
        let fail = |e: rusqlite::Error| error(&what, e);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(fail)?;
        let path = path_text(&update.facts.path);
        let existing = Sqlite::session_row(&tx, &path).map_err(fail)?;
        let held = existing.as_ref().map(|(_, s, text)| (*s, *text));
        let expected = update.previous.map(|s| (s, update.previous_text));
        if held != expected {
            // Another process brought this file up to date meanwhile.
            return Ok(false);
        }
        let facts = &update.facts;
        let stamp = &update.stamp;
        let text_entries = update.text_entries;
        if let (Some((id, _, _)), true) = (&existing, update.replace) {
            fts::delete_session(&tx, *id).map_err(fail)?;
            tx.execute("DELETE FROM entries WHERE session = ?1", params![id])
                .map_err(fail)?;
        }
        // One statement for a new file and a known one (its row keeps its id).
        let session: i64 = tx
            .query_row(
                "INSERT INTO sessions(path, project, session_id, cwd, name, parent_path,
                   parent_file_id, dev, ino, size, mtime_ns, entries, head_hash, tail_hash,
                   text_entries)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
                 ON CONFLICT(path) DO UPDATE SET project = excluded.project,
                   session_id = excluded.session_id, cwd = excluded.cwd, name = excluded.name,
                   parent_path = excluded.parent_path, parent_file_id = excluded.parent_file_id,
                   dev = excluded.dev, ino = excluded.ino, size = excluded.size,
                   mtime_ns = excluded.mtime_ns, entries = excluded.entries,
                   head_hash = excluded.head_hash, tail_hash = excluded.tail_hash,
                   text_entries = excluded.text_entries
                 RETURNING id",
                params![
                    path,
                    facts.project,
                    facts.session_id,
                    facts.cwd,
                    facts.name,
                    facts.parent_path,
                    facts.parent_file_id,
                    stamp.dev as i64,
                    stamp.ino as i64,
                    stamp.size as i64,
                    stamp.mtime_ns,
                    stamp.entries as i64,
                    stamp.head_hash as i64,
                    stamp.tail_hash as i64,
                    text_entries as i64
                ],
                |row| row.get(0),
            )
            .map_err(fail)?;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO entries(session, pos, line, entry_id, parent_id, kind, role,
                       ts_ms, provider, model, tools, assistant, has_usage, tool_calls, input,
                       output, cache_read, cache_write, cost, on_path, copied)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                       ?16, ?17, ?18, ?19, ?20, 0)",
                )
                .map_err(fail)?;
            for row in &update.rows {
                let u = &row.usage;
                let tools = if row.tools.is_empty() {
                    String::new()
                } else {
                    format!("|{}|", row.tools.join("|"))
                };
                let has_usage = u.assistant_messages > 0
                    || u.tool_calls > 0
                    || u.total_tokens != 0.0
                    || u.cost_total != 0.0;
                insert
                    .execute(params![
                        session,
                        row.position,
                        row.line as i64,
                        row.entry_id,
                        row.parent_id,
                        row.kind,
                        row.role,
                        row.timestamp_ms,
                        row.provider,
                        row.model,
                        tools,
                        u.assistant_messages as i64,
                        has_usage,
                        u.tool_calls as i64,
                        u.input_tokens,
                        u.output_tokens,
                        u.cache_read_tokens,
                        u.cache_write_tokens,
                        u.cost_total,
                        update.on_path.binary_search(&row.position).is_ok()
                    ])
                    .map_err(fail)?;
            }
            let mut rid_of = tx
                .prepare_cached("SELECT rid FROM entries WHERE session = ?1 AND pos = ?2")
                .map_err(fail)?;
            for (position, body, thinking) in update.texts.iter().flatten() {
                let rid: i64 = rid_of
                    .query_row(params![session, position], |r| r.get(0))
                    .map_err(fail)?;
                fts::insert(&tx, rid, body, thinking).map_err(fail)?;
            }
        }
        // The path: new entries came with their status; of the older ones (the leaf may have
        // moved), only those whose status changed are written.
        let older = update
            .rows
            .first()
            .map_or(u32::MAX, |row| row.position)
            .min(if update.check_old_path { u32::MAX } else { 0 });
        let was: HashSet<u32> = if older == 0 || update.replace {
            HashSet::new()
        } else {
            tx.prepare_cached(
                "SELECT pos FROM entries WHERE session = ?1 AND on_path = 1 AND pos < ?2",
            )
            .and_then(|mut s| {
                s.query_map(params![session, older], |r| r.get::<_, u32>(0))?
                    .collect::<Result<_, _>>()
            })
            .map_err(fail)?
        };
        let now: HashSet<u32> = if older == 0 || update.replace {
            HashSet::new()
        } else {
            update
                .on_path
                .iter()
                .copied()
                .filter(|p| *p < older)
                .collect()
        };
        {
            let mut set = tx
                .prepare_cached("UPDATE entries SET on_path = ?3 WHERE session = ?1 AND pos = ?2")
                .map_err(fail)?;
            for pos in was.difference(&now) {
                set.execute(params![session, pos, 0]).map_err(fail)?;
            }
            for pos in now.difference(&was) {
                set.execute(params![session, pos, 1]).map_err(fail)?;
            }
        }
        if update.replace || !update.rows.is_empty() {
            mark_rollup_stale(&tx).map_err(fail)?;
        }
        // The store's change log, in the same transaction (see `catalog::feed`).
        super::feed::log_update(
            &tx,
            session,
            existing.is_some(),
            update.replace,
            &path,
            &facts.session_id,
            update.previous.map_or(0, |p| p.entries),
            stamp.entries,
        )
        .map_err(fail)?;
        tx.commit().map_err(fail)?;
        Ok(true)
    }

    fn remove(&mut self, path: &Path) -> CatalogResult<()> {
        let what = format!("removing {} from the store index", path.display());
        let fail = |e: rusqlite::Error| error(&what, e);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(fail)?;
        if let Some((id, _, _)) = Sqlite::session_row(&tx, &path_text(path)).map_err(fail)? {
            super::feed::log_deleted(&tx, id, &path_text(path)).map_err(fail)?;
            fts::delete_session(&tx, id).map_err(fail)?;
            tx.execute("DELETE FROM entries WHERE session = ?1", params![id])
                .map_err(fail)?;
            tx.execute("DELETE FROM sessions WHERE id = ?1", params![id])
                .map_err(fail)?;
            mark_rollup_stale(&tx).map_err(fail)?;
        }
        tx.commit().map_err(fail)
    }

    fn link_copies(&mut self) -> CatalogResult<()> {
        let fail = failed("linking forks to their sources");
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&fail)?;
        // The source by its path, else by the session id its file name carries (moved files).
        tx.execute_batch(
            "UPDATE sessions SET parent_row = COALESCE(
               (SELECT p.id FROM sessions p WHERE p.path = sessions.parent_path
                  AND p.id <> sessions.id),
               (SELECT min(p.id) FROM sessions p WHERE p.session_id = sessions.parent_file_id
                  AND p.id <> sessions.id))
             WHERE parent_path IS NOT NULL;
             UPDATE sessions SET parent_row = NULL WHERE parent_path IS NULL;
             UPDATE entries SET copied = 0 WHERE copied = 1;
             WITH RECURSIVE up(session, ancestor) AS (
               SELECT id, parent_row FROM sessions WHERE parent_row IS NOT NULL
               UNION
               SELECT up.session, s.parent_row FROM up JOIN sessions s ON s.id = up.ancestor
               WHERE s.parent_row IS NOT NULL
             )
             UPDATE entries SET copied = 1
             WHERE has_usage = 1 AND entry_id IS NOT NULL AND EXISTS (
               SELECT 1 FROM up JOIN entries a ON a.session = up.ancestor
                 AND a.entry_id = entries.entry_id
               WHERE up.session = entries.session AND up.ancestor <> entries.session);",
        )
        .map_err(&fail)?;
        mark_rollup_stale(&tx).map_err(&fail)?;
        tx.commit().map_err(&fail)
    }

    fn search(&mut self, spec: &SearchSpec) -> CatalogResult<Vec<HitRow>> {
        let expression = fts::match_expression(&spec.pieces, spec.thinking);
        let text = fts::text_sql(expression.is_some());
        let match_text = expression.clone();
        let mut conditions: Vec<String> = Vec::new();
        let mut values: Vec<rusqlite::types::Value> = Vec::new();
        let mut bind = |value: rusqlite::types::Value| {
            values.push(value);
            values.len()
        };
        use rusqlite::types::Value;
        if let Some(expression) = expression {
            let at = bind(Value::Text(expression));
            conditions.push(format!("entry_text MATCH ?{at}"));
        }
        for piece in spec.pieces.iter().filter(|p| !p.indexed()) {
            let at = bind(Value::Text(piece.text.clone()));
            conditions.push(fts::contains(at, spec.thinking));
        }
        if let Some(project) = &spec.project {
            let at = bind(Value::Text(project.clone()));
            conditions.push(format!("s.project = ?{at}"));
        }
        if let Some(role) = &spec.role {
            let at = bind(Value::Text(role.clone()));
            conditions.push(format!("COALESCE(e.role, e.kind) = ?{at}"));
        }
        if let Some(since) = spec.since_ms {
            let at = bind(Value::Real(since));
            conditions.push(format!("e.ts_ms >= ?{at}"));
        }
        if let Some(until) = spec.until_ms {
            let at = bind(Value::Real(until));
            conditions.push(format!("e.ts_ms < ?{at}"));
        }
        if let Some(model) = &spec.model {
            let at = bind(Value::Text(model.clone()));
            conditions.push(format!(
                "(e.model = ?{at} OR (e.provider || '/' || e.model) = ?{at})"
            ));
        }
        if let Some(tool) = &spec.tool {
            let at = bind(Value::Text(format!("|{tool}|")));
            conditions.push(format!("instr(e.tools, ?{at}) > 0"));
        }
        if spec.on_path_only {
            conditions.push("e.on_path = 1".into());
        }
        // Only the words, no filter: the page is chosen from the text table alone, without
        // joining every match to its entry and session (common words match most entries).
        let bare = spec.pieces.iter().all(|p| p.indexed())
            && conditions.len() == 1
            && conditions[0].starts_with("entry_text MATCH");
        // A short page of a common word ranks the last RANK_CAP matches filed, not every
        // match: bm25 over tens of thousands of rows was most of the time of a common search.
        if let Some(match_text) =
            match_text.filter(|_| bare && spec.limit.saturating_add(spec.offset) <= RANK_CAP_PAGE)
        {
            let floor: Option<i64> = self
                .conn
                .prepare_cached(
                    "SELECT rowid FROM entry_text WHERE entry_text MATCH ?1
                     ORDER BY rowid DESC LIMIT 1 OFFSET ?2",
                )
                .and_then(|mut s| {
                    s.query_row(params![match_text, RANK_CAP - 1], |r| r.get(0))
                        .optional()
                })
                .map_err(failed("searching"))?;
            if let Some(floor) = floor {
                let at = bind(Value::Integer(floor));
                conditions.push(format!("entry_text.rowid >= ?{at}"));
            }
        }
        let limit = bind(Value::Integer(spec.limit.min(i64::MAX as u64) as i64));
        let offset = bind(Value::Integer(spec.offset.min(i64::MAX as u64) as i64));
        let (page_from, page_rid, page_ts, order) = if bare {
            (
                "entry_text".to_string(),
                "entry_text.rowid",
                "NULL",
                "bm25(entry_text), entry_text.rowid",
            )
        } else {
            (
                format!("{} JOIN sessions s ON s.id = e.session", text.from),
                "e.rid",
                "e.ts_ms",
                text.order,
            )
        };
        // The page is chosen first (ids and ranks only), then its rows and text are read: a
        // sort over every match carrying its whole text made common words slow.
        let sql = format!(
            "SELECT s.path, s.session_id, s.name, e.entry_id, e.line, COALESCE(e.role, e.kind),
               e.ts_ms, e.on_path, {snippet}, page.score
             FROM (SELECT {page_rid} AS rid, {score} AS score, {page_ts} AS ts
                   FROM {page_from}
                   WHERE {conditions}
                   ORDER BY {order} LIMIT ?{limit} OFFSET ?{offset}) AS page
             JOIN entries e ON e.rid = page.rid
             JOIN sessions s ON s.id = e.session
             JOIN entry_text ON entry_text.rowid = page.rid
             ORDER BY {page_order}",
            snippet = text.snippet,
            score = text.score,
            page_order = text.page_order,
            conditions = conditions.join(" AND "),
        );
        let mut statement = self.conn.prepare(&sql).map_err(failed("searching"))?;
        let hits = statement
            .query_map(params_from_iter(values.iter()), |r| {
                let snippet: String = r.get(8)?;
                Ok(HitRow {
                    session_path: PathBuf::from(r.get::<_, String>(0)?),
                    session_id: r.get(1)?,
                    session_name: r.get(2)?,
                    entry_id: r.get(3)?,
                    line: r.get::<_, i64>(4)? as u64,
                    role: r.get(5)?,
                    timestamp_ms: r.get(6)?,
                    on_path: r.get(7)?,
                    snippet: fts::snippet(&snippet, &spec.pieces),
                    score: r.get(9)?,
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(failed("searching"))?;
        Ok(hits)
    }

    fn rename(&mut self, from: &Path, to: &Path, project: Option<&str>) -> CatalogResult<bool> {
        super::feed::rename(&mut self.conn, from, to, project)
    }

    fn feed_position(&mut self) -> CatalogResult<Option<(String, u64)>> {
        Ok(Some((
            super::feed::feed_id(&self.conn)?,
            super::feed::last_seq(&self.conn)?,
        )))
    }

    fn feed_records(
        &mut self,
        first: u64,
        limit: usize,
    ) -> CatalogResult<Vec<super::backend::LogRecord>> {
        super::feed::records_from(&mut self.conn, first, limit)
    }

    fn usage(&mut self, project: Option<&str>) -> CatalogResult<Vec<UsageRow>> {
        self.refresh_rollup()?;
        let mut statement = self
            .conn
            .prepare(
                "SELECT s.path, s.session_id, s.project, r.bucket_ms, r.model, r.assistant,
                   r.tool_calls, r.input, r.output, r.cache_read, r.cache_write, r.cost, r.copied
                 FROM usage_rollup r JOIN sessions s ON s.id = r.session
                 WHERE ?1 IS NULL OR s.project = ?1
                 ORDER BY s.path, r.bucket_ms, r.model, r.copied",
            )
            .map_err(failed("reading figures"))?;
        let rows = statement
            .query_map(params![project], |r| {
                Ok(UsageRow {
                    session_path: PathBuf::from(r.get::<_, String>(0)?),
                    session_id: r.get(1)?,
                    project: r.get(2)?,
                    timestamp_ms: r.get::<_, Option<i64>>(3)?.map(|ms| ms as f64),
                    model: r.get(4)?,
                    assistant_messages: r.get::<_, i64>(5)? as u64,
                    tool_calls: r.get::<_, i64>(6)? as u64,
                    input: r.get(7)?,
                    output: r.get(8)?,
                    cache_read: r.get(9)?,
                    cache_write: r.get(10)?,
                    cost: r.get(11)?,
                    copied: r.get(12)?,
                })
            })
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(failed("reading figures"))?;
        Ok(rows)
    }
}

fn mark_rollup_stale(tx: &Transaction<'_>) -> rusqlite::Result<()> {
    tx.prepare_cached("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, '1')")?
        .execute(params![ROLLUP_STALE])?;
    Ok(())
}

/// The start of the rollup bucket `millis` falls in.
fn bucket_of(millis: f64) -> i64 {
    // Valid times are within ±8.64e15 ms (ECMAScript's range); the clamp keeps the product
    // from overflowing on anything else.
    (millis.clamp(-8.64e15, 8.64e15).floor() as i64).div_euclid(BUCKET_MS) * BUCKET_MS
}

/// One rollup row being summed.
#[derive(Default)]
struct Sums {
    assistant: i64,
    tool_calls: i64,
    input: f64,
    output: f64,
    cache_read: f64,
    cache_write: f64,
    cost: f64,
}

impl Sqlite {
    /// Rebuilds `usage_rollup` when the entries changed since it was made: the figures summed
    /// per session, 15-minute bucket, model and copied-or-not, in each session's entry order,
    /// so a warm `stats` reads a few rows per session instead of every entry with figures.
    fn refresh_rollup(&mut self) -> CatalogResult<()> {
        let fail = failed("summing figures");
        let stale = |conn: &Connection| {
            conn.query_row(
                "SELECT count(*) FROM meta WHERE key = ?1",
                params![ROLLUP_STALE],
                |r| r.get::<_, i64>(0),
            )
        };
        if stale(&self.conn).map_err(&fail)? == 0 {
            return Ok(());
        }
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(&fail)?;
        if stale(&tx).map_err(&fail)? == 0 {
            // Another process rebuilt it meanwhile.
            return Ok(());
        }
        tx.execute("DELETE FROM usage_rollup", []).map_err(&fail)?;
        {
            let mut read = tx
                .prepare(
                    "SELECT session, ts_ms, model, copied, assistant, tool_calls, input, output,
                       cache_read, cache_write, cost
                     FROM entries WHERE has_usage = 1 ORDER BY session, pos",
                )
                .map_err(&fail)?;
            let mut write = tx
                .prepare(
                    "INSERT INTO usage_rollup(session, bucket_ms, model, copied, assistant,
                       tool_calls, input, output, cache_read, cache_write, cost)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                )
                .map_err(&fail)?;
            type Key = (Option<i64>, Option<String>, bool);
            let mut session: Option<i64> = None;
            let mut groups: std::collections::BTreeMap<Key, Sums> = Default::default();
            let mut flush = |session: i64,
                             groups: &mut std::collections::BTreeMap<Key, Sums>|
             -> rusqlite::Result<()> {
                for ((bucket, model, copied), g) in std::mem::take(groups) {
                    write.execute(params![
                        session,
                        bucket,
                        model,
                        copied,
                        g.assistant,
                        g.tool_calls,
                        g.input,
                        g.output,
                        g.cache_read,
                        g.cache_write,
                        g.cost
                    ])?;
                }
                Ok(())
            };
            let mut rows = read.query([]).map_err(&fail)?;
            while let Some(r) = rows.next().map_err(&fail)? {
                let at: i64 = r.get(0).map_err(&fail)?;
                if session.is_some_and(|s| s != at) {
                    flush(session.unwrap_or_default(), &mut groups).map_err(&fail)?;
                }
                session = Some(at);
                let ts: Option<f64> = r.get(1).map_err(&fail)?;
                let key = (
                    ts.map(bucket_of),
                    r.get::<_, Option<String>>(2).map_err(&fail)?,
                    r.get::<_, bool>(3).map_err(&fail)?,
                );
                let g = groups.entry(key).or_default();
                g.assistant += r.get::<_, i64>(4).map_err(&fail)?;
                g.tool_calls += r.get::<_, i64>(5).map_err(&fail)?;
                g.input += r.get::<_, f64>(6).map_err(&fail)?;
                g.output += r.get::<_, f64>(7).map_err(&fail)?;
                g.cache_read += r.get::<_, f64>(8).map_err(&fail)?;
                g.cache_write += r.get::<_, f64>(9).map_err(&fail)?;
                g.cost += r.get::<_, f64>(10).map_err(&fail)?;
            }
            if let Some(at) = session {
                flush(at, &mut groups).map_err(&fail)?;
            }
        }
        tx.execute("DELETE FROM meta WHERE key = ?1", params![ROLLUP_STALE])
            .map_err(&fail)?;
        tx.commit().map_err(&fail)
    }
}
