//! The team backend: one PostgreSQL database holding the store index of many machines. Each
//! session is filed once under its session id, each entry once under (session, entry id), so a
//! session copied to two machines counts once and a sync run again files nothing twice; each
//! machine's files and their stamps (the cursor a sync resumes from) are written in the same
//! transaction as the entries they account for, and so is the figures' rollup.
//!
//! - `target`: the URL, its password sources, masking; `tls`: rustls per `sslmode`;
//! - `schema`: the tables, their migrations and the version check; `text`: matching, snippets.

mod schema;
pub(crate) mod target;
mod text;
mod tls;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{ToSql, Type};
use postgres::{Client, Row};

use super::backend::{
    Backend, CatalogError, CatalogResult, FileUpdate, HitRow, KnownFile, SearchSpec, UsageRow,
};
use super::change::FileStamp;
pub(crate) use target::{PgEnv, Target};

/// Filing takes it shared, linking forks exclusively: linking rewrites flags and rollups
/// across sessions, and must not interleave with a file being filed.
const LINK_LOCK: i64 = 0x7069_5f6c_696e_6b73;

/// The columns of `entries` in the order the COPY writes them.
const ENTRY_COLUMNS: &str = "session, entry_key, pos, line, entry_id, parent_id, kind, role, \
    ts_ms, provider, model, tools, assistant, has_usage, tool_calls, input, output, cache_read, \
    cache_write, cost, on_path, copied, body, thinking";

const ENTRY_TYPES: &[Type] = &[
    Type::INT8,
    Type::TEXT,
    Type::INT4,
    Type::INT8,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::FLOAT8,
    Type::TEXT,
    Type::TEXT,
    Type::TEXT,
    Type::INT4,
    Type::BOOL,
    Type::INT8,
    Type::FLOAT8,
    Type::FLOAT8,
    Type::FLOAT8,
    Type::FLOAT8,
    Type::FLOAT8,
    Type::BOOL,
    Type::BOOL,
    Type::TEXT,
    Type::TEXT,
];

/// The rollup of the figures of the entry rows of `source` (with `entries`' figure columns) that meet
/// `condition`, added to what the rollup holds.
fn rollup_upsert(source: &str, condition: &str) -> String {
    format!(
        "INSERT INTO rollup (session, bucket_ms, model, copied, assistant_messages, tool_calls,
            input, output, cache_read, cache_write, cost)
         SELECT session,
            COALESCE((floor(ts_ms / {bucket}) * {bucket})::BIGINT, {none}),
            COALESCE(model, ''), copied, sum(assistant), sum(tool_calls),
            sum(input), sum(output), sum(cache_read), sum(cache_write), sum(cost)
         FROM {source} WHERE has_usage AND {condition}
         GROUP BY 1, 2, 3, 4
         ON CONFLICT (session, bucket_ms, model, copied) DO UPDATE SET
            assistant_messages = rollup.assistant_messages + EXCLUDED.assistant_messages,
            tool_calls = rollup.tool_calls + EXCLUDED.tool_calls,
            input = rollup.input + EXCLUDED.input,
            output = rollup.output + EXCLUDED.output,
            cache_read = rollup.cache_read + EXCLUDED.cache_read,
            cache_write = rollup.cache_write + EXCLUDED.cache_write,
            cost = rollup.cost + EXCLUDED.cost",
        bucket = schema::BUCKET_MS,
        none = schema::NO_TIME,
    )
}

/// A PostgreSQL error as one line, prefixed with what was being done (URLs masked).
pub(crate) fn failed(what: &str) -> impl Fn(postgres::Error) -> CatalogError + '_ {
    move |e| CatalogError::new(format!("{what}: {}", describe(&e)))
}

fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = cause.source();
    }
    text.lines().collect::<Vec<_>>().join(" ")
}

/// The store index in a team's PostgreSQL database.
pub(crate) struct Postgres {
    client: Client,
    shown: String,
    /// Syncing: the machine whose files are filed. Querying: only its sessions (`None`: all).
    machine: Option<String>,
    /// Whether this connection is set up for filing (made on the first file: a connection
    /// that only queries needs no temporary table).
    staged: bool,
}

impl Postgres {
    /// Connects, makes or migrates the tables, and checks their version.
    pub(crate) fn connect(target: &Target, machine: Option<String>) -> CatalogResult<Postgres> {
        let connector = tls::connector(target)?;
        let shown = target.shown.clone();
        let mut client = target.config.connect(connector).map_err(|e| {
            CatalogError::new(format!("cannot connect to {shown}: {}", describe(&e)))
        })?;
        schema::prepare(&mut client, &shown)?;
        tracing::debug!("connected to {shown}");
        Ok(Postgres {
            client,
            shown,
            machine,
            staged: false,
        })
    }

    /// Sets the connection up for filing: the stage table, and commits that do not wait for
    /// the server's disk flush (a commit lost to a server crash takes its stamps with it,
    /// so the next sync files those entries again: waiting buys nothing here).
    fn stage(&mut self) -> CatalogResult<()> {
        if !self.staged {
            self.client
                .batch_execute(
                    "SET synchronous_commit = off;
                     CREATE TEMP TABLE IF NOT EXISTS stage (LIKE entries) ON COMMIT DELETE ROWS;",
                )
                .map_err(failed(&self.shown))?;
            self.staged = true;
        }
        Ok(())
    }

    fn syncing_machine(&self) -> CatalogResult<String> {
        self.machine
            .clone()
            .ok_or_else(|| CatalogError::new("syncing needs a machine name"))
    }
}

fn stamp_of(row: &Row, at: usize) -> FileStamp {
    FileStamp {
        dev: row.get::<_, i64>(at) as u64,
        ino: row.get::<_, i64>(at + 1) as u64,
        size: row.get::<_, i64>(at + 2) as u64,
        mtime_ns: row.get(at + 3),
        entries: row.get::<_, i64>(at + 4) as u64,
        head_hash: row.get::<_, i64>(at + 5) as u64,
        tail_hash: row.get::<_, i64>(at + 6) as u64,
    }
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

impl Backend for Postgres {
    fn known_files(&mut self) -> CatalogResult<Vec<KnownFile>> {
        let machine = self.syncing_machine()?;
        let rows = self
            .client
            .query(
                "SELECT path, dev, ino, size, mtime_ns, entries, head_hash, tail_hash
                 FROM files WHERE machine = $1",
                &[&machine],
            )
            .map_err(failed(&self.shown))?;
        Ok(rows
            .iter()
            .map(|r| KnownFile {
                path: PathBuf::from(r.get::<_, String>(0)),
                stamp: stamp_of(r, 1),
                // A sync always files the text with the figures.
                text_entries: stamp_of(r, 1).entries,
            })
            .collect())
    }

    fn apply(&mut self, update: &FileUpdate) -> CatalogResult<bool> {
        let machine = self.syncing_machine()?;
        self.stage()?;
        let path = path_text(&update.facts.path);
        let what = format!("{}: filing {path}", self.shown);
        let fail = failed(&what);
        let mut tx = self.client.transaction().map_err(&fail)?;
        tx.execute("SELECT pg_advisory_xact_lock_shared($1)", &[&LINK_LOCK])
            .map_err(&fail)?;
        let existing = tx
            .query_opt(
                "SELECT dev, ino, size, mtime_ns, entries, head_hash, tail_hash
                 FROM files WHERE machine = $1 AND path = $2 FOR UPDATE",
                &[&machine, &path],
            )
            .map_err(&fail)?
            .map(|r| stamp_of(&r, 0));
        if existing != update.previous {
            // Another sync of this machine filed this file meanwhile.
            return Ok(false);
        }
        let facts = &update.facts;
        // A header without an id cannot be recognised on another machine: it is this file's.
        let session_key = if facts.session_id.is_empty() {
            format!("{machine}:{path}")
        } else {
            facts.session_id.clone()
        };
        // The upsert locks the session's row: two machines filing one session take turns.
        // `xmax = 0` tells a row this statement inserted from one it updated.
        let session_row = tx
            .query_one(
                "INSERT INTO sessions (session_id, project, cwd, name, path, parent_path,
                    parent_file_id)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)
                 ON CONFLICT (session_id) DO UPDATE
                    SET name = COALESCE(EXCLUDED.name, sessions.name)
                 RETURNING id, (xmax = 0)",
                &[
                    &session_key,
                    &text::storable(&facts.project),
                    &text::storable(&facts.cwd),
                    &facts.name.as_deref().map(text::storable),
                    &path,
                    &facts.parent_path.as_deref().map(text::storable),
                    &facts.parent_file_id.as_deref().map(text::storable),
                ],
            )
            .map_err(&fail)?;
        let session: i64 = session_row.get(0);
        // A session new to the database has no entries yet: its rows go straight into
        // `entries` (one write); others go through `stage`, so that entries another machine
        // or an earlier copy filed are skipped.
        let new_session: bool = session_row.get(1);
        let s = &update.stamp;
        tx.execute(
            "INSERT INTO files (machine, path, session, dev, ino, size, mtime_ns, entries,
                head_hash, tail_hash)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (machine, path) DO UPDATE SET session = EXCLUDED.session,
                dev = EXCLUDED.dev, ino = EXCLUDED.ino, size = EXCLUDED.size,
                mtime_ns = EXCLUDED.mtime_ns, entries = EXCLUDED.entries,
                head_hash = EXCLUDED.head_hash, tail_hash = EXCLUDED.tail_hash",
            &[
                &machine,
                &path,
                &session,
                &(s.dev as i64),
                &(s.ino as i64),
                &(s.size as i64),
                &s.mtime_ns,
                &(s.entries as i64),
                &(s.head_hash as i64),
                &(s.tail_hash as i64),
            ],
        )
        .map_err(&fail)?;
        tx.execute(
            "DELETE FROM session_machines WHERE machine = $1 AND path = $2 AND session <> $3",
            &[&machine, &path, &session],
        )
        .map_err(&fail)?;
        tx.execute(
            "INSERT INTO session_machines (session, machine, path) VALUES ($1, $2, $3)
             ON CONFLICT DO NOTHING",
            &[&session, &machine, &path],
        )
        .map_err(&fail)?;
        if !update.rows.is_empty() {
            let sink = tx
                .copy_in(&format!(
                    "COPY {} ({ENTRY_COLUMNS}) FROM STDIN BINARY",
                    if new_session { "entries" } else { "stage" }
                ))
                .map_err(&fail)?;
            let mut writer = BinaryCopyInWriter::new(sink, ENTRY_TYPES);
            // A file naming one id twice keeps its first entry of that id.
            let mut keys = HashSet::with_capacity(update.rows.len());
            // The rows carry no text: it comes beside them, by position (a sync asks for it).
            let texts: HashMap<u32, (&str, &str)> = update
                .texts
                .iter()
                .flatten()
                .map(|(position, body, thinking)| (*position, (body.as_str(), thinking.as_str())))
                .collect();
            for row in &update.rows {
                let (body, thinking) = texts.get(&row.position).copied().unwrap_or(("", ""));
                let u = &row.usage;
                let has_usage = u.assistant_messages > 0
                    || u.tool_calls > 0
                    || u.total_tokens != 0.0
                    || u.cost_total != 0.0;
                let tools = if row.tools.is_empty() {
                    String::new()
                } else {
                    format!("|{}|", row.tools.join("|"))
                };
                // Entries without an id (unknown kinds, old files) are told apart by line.
                let key = match &row.entry_id {
                    Some(id) => text::storable(id).into_owned(),
                    None => format!("#{}", row.line),
                };
                if !keys.insert(key.clone()) {
                    continue;
                }
                let values: [&(dyn ToSql + Sync); 24] = [
                    &session,
                    &key,
                    &(row.position as i32),
                    &(row.line as i64),
                    &row.entry_id.as_deref().map(text::storable),
                    &row.parent_id.as_deref().map(text::storable),
                    &row.kind,
                    &row.role.as_deref().map(text::storable),
                    &row.timestamp_ms,
                    &row.provider.as_deref().map(text::storable),
                    &row.model.as_deref().map(text::storable),
                    &text::storable(&tools),
                    &(u.assistant_messages as i32),
                    &has_usage,
                    &(u.tool_calls as i64),
                    &u.input_tokens,
                    &u.output_tokens,
                    &u.cache_read_tokens,
                    &u.cache_write_tokens,
                    &u.cost_total,
                    &update.on_path.binary_search(&row.position).is_ok(),
                    &false,
                    &text::storable(body),
                    &text::storable(thinking),
                ];
                writer.write(&values).map_err(&fail)?;
            }
            writer.finish().map_err(&fail)?;
            let filing = if new_session {
                rollup_upsert("entries", &format!("session = {session}"))
            } else {
                // Only the entries not filed before (from this machine or another) count.
                format!(
                    "WITH filed AS (
                    INSERT INTO entries ({ENTRY_COLUMNS}) SELECT {ENTRY_COLUMNS} FROM stage
                    ON CONFLICT (session, entry_key) DO NOTHING
                    RETURNING session, ts_ms, model, copied, has_usage, assistant, tool_calls,
                        input, output, cache_read, cache_write, cost)
                 {}",
                    rollup_upsert("filed", "true")
                )
            };
            tx.batch_execute(&filing).map_err(&fail)?;
        }
        // New rows arrived with their status; only older rows whose status changed (the leaf
        // moved to another branch) are rewritten, so the text indexes are not touched again.
        let on_path: Vec<i32> = update.on_path.iter().map(|p| *p as i32).collect();
        tx.execute(
            "UPDATE entries SET on_path = (pos = ANY($2))
             WHERE session = $1 AND on_path IS DISTINCT FROM (pos = ANY($2))",
            &[&session, &on_path],
        )
        .map_err(&fail)?;
        tx.commit().map_err(&fail)?;
        Ok(true)
    }

    /// The file is no longer on this machine: it is untagged from it. Its entries stay, as
    /// another machine may hold the session too; the team database is an archive.
    fn remove(&mut self, path: &Path) -> CatalogResult<()> {
        let machine = self.syncing_machine()?;
        let path = path_text(path);
        let what = format!("{}: forgetting {path}", self.shown);
        let fail = failed(&what);
        let mut tx = self.client.transaction().map_err(&fail)?;
        tx.execute(
            "DELETE FROM files WHERE machine = $1 AND path = $2",
            &[&machine, &path],
        )
        .map_err(&fail)?;
        tx.execute(
            "DELETE FROM session_machines WHERE machine = $1 AND path = $2",
            &[&machine, &path],
        )
        .map_err(&fail)?;
        tx.commit().map_err(&fail)
    }

    fn link_copies(&mut self) -> CatalogResult<()> {
        let what = format!("{}: linking forks to their sources", self.shown);
        let fail = failed(&what);
        let mut tx = self.client.transaction().map_err(&fail)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LINK_LOCK])
            .map_err(&fail)?;
        // The source by the session id its file name carries (sessions are keyed by id here),
        // else by its path on any machine.
        tx.batch_execute(&format!(
            "UPDATE sessions s SET parent_row = p.parent
             FROM (SELECT c.id, COALESCE(
                     (SELECT p.id FROM sessions p WHERE p.session_id = c.parent_file_id
                        AND p.id <> c.id),
                     (SELECT min(f.session) FROM files f WHERE f.path = c.parent_path
                        AND f.session <> c.id)) AS parent
                   FROM sessions c
                   WHERE c.parent_path IS NOT NULL OR c.parent_row IS NOT NULL) p
             WHERE s.id = p.id AND s.parent_row IS DISTINCT FROM p.parent;
             CREATE TEMP TABLE copied_now ON COMMIT DROP AS
             WITH RECURSIVE up(session, ancestor) AS (
               SELECT id, parent_row FROM sessions WHERE parent_row IS NOT NULL
               UNION
               SELECT up.session, s.parent_row FROM up JOIN sessions s ON s.id = up.ancestor
               WHERE s.parent_row IS NOT NULL
             )
             SELECT DISTINCT e.session, e.entry_key
             FROM up JOIN entries e ON e.session = up.session
             JOIN entries a ON a.session = up.ancestor AND a.entry_key = e.entry_id
             WHERE e.has_usage AND e.entry_id IS NOT NULL AND up.ancestor <> e.session;
             CREATE TEMP TABLE changed ON COMMIT DROP AS
             SELECT DISTINCT session FROM (
               (SELECT session, entry_key FROM entries WHERE copied
                EXCEPT SELECT session, entry_key FROM copied_now)
               UNION ALL
               (SELECT session, entry_key FROM copied_now
                EXCEPT SELECT session, entry_key FROM entries WHERE copied)) d;
             UPDATE entries SET copied = false
             WHERE copied AND session IN (SELECT session FROM changed);
             UPDATE entries e SET copied = true FROM copied_now c
             WHERE e.session = c.session AND e.entry_key = c.entry_key;
             DELETE FROM rollup WHERE session IN (SELECT session FROM changed);
             {}",
            rollup_upsert("entries", "session IN (SELECT session FROM changed)")
        ))
        .map_err(&fail)?;
        tx.commit().map_err(&fail)
    }

    fn search(&mut self, spec: &SearchSpec) -> CatalogResult<Vec<HitRow>> {
        let mut values: Vec<Box<dyn ToSql + Sync>> = Vec::new();
        let mut bind = |value: Box<dyn ToSql + Sync>| {
            values.push(value);
            values.len()
        };
        let mut conditions = Vec::new();
        for piece in &spec.pieces {
            let at = bind(Box::new(text::contains_pattern(piece)));
            conditions.push(if spec.thinking {
                format!("(e.body LIKE ${at} OR e.thinking LIKE ${at})")
            } else {
                format!("e.body LIKE ${at}")
            });
        }
        if let Some(project) = &spec.project {
            let at = bind(Box::new(project.clone()));
            conditions.push(format!("s.project = ${at}"));
        }
        if let Some(role) = &spec.role {
            let at = bind(Box::new(role.clone()));
            conditions.push(format!("COALESCE(e.role, e.kind) = ${at}"));
        }
        if let Some(since) = spec.since_ms {
            let at = bind(Box::new(since));
            conditions.push(format!("e.ts_ms >= ${at}"));
        }
        if let Some(until) = spec.until_ms {
            let at = bind(Box::new(until));
            conditions.push(format!("e.ts_ms < ${at}"));
        }
        if let Some(model) = &spec.model {
            let at = bind(Box::new(model.clone()));
            conditions.push(format!(
                "(e.model = ${at} OR (e.provider || '/' || e.model) = ${at})"
            ));
        }
        if let Some(tool) = &spec.tool {
            let at = bind(Box::new(format!("|{tool}|")));
            conditions.push(format!("strpos(e.tools, ${at}) > 0"));
        }
        if spec.on_path_only {
            conditions.push("e.on_path".into());
        }
        let machine = bind(Box::new(self.machine.clone()));
        conditions.push(format!(
            "(${machine}::TEXT IS NULL OR EXISTS (SELECT 1 FROM session_machines m
               WHERE m.session = s.id AND m.machine = ${machine}))"
        ));
        let words: Vec<&str> = spec.pieces.iter().map(|p| p.text.as_str()).collect();
        let query = bind(Box::new(words.join(" ")));
        let limit = bind(Box::new(spec.limit.min(i64::MAX as u64) as i64));
        let offset = bind(Box::new(spec.offset.min(i64::MAX as u64) as i64));
        let sql = format!(
            "SELECT COALESCE((SELECT min(m.path) FROM session_machines m
                    WHERE m.session = s.id AND m.machine = ${machine}), s.path),
                s.session_id, s.name, e.entry_id, e.line, COALESCE(e.role, e.kind), e.ts_ms,
                e.on_path, e.body, e.thinking, -similarity(e.body, ${query})::FLOAT8 AS score
             FROM entries e JOIN sessions s ON s.id = e.session
             WHERE {}
             ORDER BY score, s.id, e.pos LIMIT ${limit} OFFSET ${offset}",
            conditions.join(" AND ")
        );
        let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
        let what = format!("{}: searching", self.shown);
        let rows = self.client.query(&sql, &params).map_err(failed(&what))?;
        Ok(rows
            .iter()
            .map(|r| HitRow {
                session_path: PathBuf::from(r.get::<_, String>(0)),
                session_id: r.get(1),
                session_name: r.get(2),
                entry_id: r.get(3),
                line: r.get::<_, i64>(4) as u64,
                role: r.get(5),
                timestamp_ms: r.get(6),
                on_path: r.get(7),
                snippet: text::snippet(r.get(8), r.get(9), &spec.pieces),
                score: Some(r.get(10)),
            })
            .collect())
    }

    /// The rollup's rows, each one bucket of one session and model: figures are never summed
    /// from the entries at query time.
    fn usage(&mut self, project: Option<&str>) -> CatalogResult<Vec<UsageRow>> {
        let what = format!("{}: reading figures", self.shown);
        let rows = self
            .client
            .query(
                "SELECT COALESCE((SELECT min(m.path) FROM session_machines m
                        WHERE m.session = s.id AND m.machine = $2), s.path),
                    s.session_id, s.project,
                    CASE WHEN r.bucket_ms = $3 THEN NULL ELSE r.bucket_ms::FLOAT8 END,
                    NULLIF(r.model, ''), r.assistant_messages, r.tool_calls, r.input, r.output,
                    r.cache_read, r.cache_write, r.cost, r.copied
                 FROM rollup r JOIN sessions s ON s.id = r.session
                 WHERE ($1::TEXT IS NULL OR s.project = $1)
                   AND ($2::TEXT IS NULL OR EXISTS (SELECT 1 FROM session_machines m
                         WHERE m.session = s.id AND m.machine = $2))
                 ORDER BY r.session, r.bucket_ms, r.model, r.copied",
                &[&project, &self.machine, &schema::NO_TIME],
            )
            .map_err(failed(&what))?;
        Ok(rows
            .iter()
            .map(|r| UsageRow {
                session_path: PathBuf::from(r.get::<_, String>(0)),
                session_id: r.get(1),
                project: r.get(2),
                timestamp_ms: r.get(3),
                model: r.get(4),
                assistant_messages: r.get::<_, i64>(5) as u64,
                tool_calls: r.get::<_, i64>(6) as u64,
                input: r.get(7),
                output: r.get(8),
                cache_read: r.get(9),
                cache_write: r.get(10),
                cost: r.get(11),
                copied: r.get(12),
            })
            .collect())
    }
}
