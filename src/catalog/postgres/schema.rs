//! The team database's tables, made and migrated by the program. The same columns as the
//! SQLite index, plus what a team needs: sessions keyed by their session id (a session copied
//! to two machines is one session), the machines each was seen on, each machine's files and
//! their stamps (the cursor a sync resumes from), the entries' folded text with `pg_trgm`
//! indexes, and a rollup of the figures kept in the same transaction as the entries.

use postgres::{Client, GenericClient};

use super::failed;
use crate::catalog::fold::FOLD_VERSION;
use crate::catalog::{CatalogError, CatalogResult};

/// The version this program reads and writes.
pub(crate) const SCHEMA_VERSION: i32 = 1;

/// Serializes schema changes between processes connecting at once.
const SCHEMA_LOCK: i64 = 0x7069_5f73_6368_656d;

/// A rollup bucket is this long: every time zone's offset is a multiple of it, so a bucket
/// falls on one day in any zone (days are told apart per zone at query time).
pub(crate) const BUCKET_MS: f64 = 15.0 * 60.0 * 1000.0;

/// The bucket of entries without a time.
pub(crate) const NO_TIME: i64 = i64::MIN;

/// Each migration takes the database from the version before it (index + 1) to the next.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1: the first schema.
    "
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE sessions (
    id BIGSERIAL PRIMARY KEY,
    session_id TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    cwd TEXT NOT NULL,
    name TEXT,
    path TEXT NOT NULL,
    parent_path TEXT,
    parent_file_id TEXT,
    parent_row BIGINT
);
CREATE TABLE session_machines (
    session BIGINT NOT NULL REFERENCES sessions(id),
    machine TEXT NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY (session, machine, path)
);
CREATE INDEX session_machines_machine ON session_machines(machine, path);
CREATE TABLE files (
    machine TEXT NOT NULL,
    path TEXT NOT NULL,
    session BIGINT NOT NULL REFERENCES sessions(id),
    dev BIGINT NOT NULL, ino BIGINT NOT NULL, size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL,
    entries BIGINT NOT NULL, head_hash BIGINT NOT NULL, tail_hash BIGINT NOT NULL,
    PRIMARY KEY (machine, path)
);
CREATE INDEX files_path ON files(path);
CREATE TABLE entries (
    session BIGINT NOT NULL REFERENCES sessions(id),
    entry_key TEXT NOT NULL,
    pos INTEGER NOT NULL,
    line BIGINT NOT NULL,
    entry_id TEXT,
    parent_id TEXT,
    kind TEXT,
    role TEXT,
    ts_ms DOUBLE PRECISION,
    provider TEXT,
    model TEXT,
    tools TEXT NOT NULL,
    assistant INTEGER NOT NULL,
    has_usage BOOLEAN NOT NULL,
    tool_calls BIGINT NOT NULL,
    input DOUBLE PRECISION NOT NULL, output DOUBLE PRECISION NOT NULL,
    cache_read DOUBLE PRECISION NOT NULL, cache_write DOUBLE PRECISION NOT NULL,
    cost DOUBLE PRECISION NOT NULL,
    on_path BOOLEAN NOT NULL,
    copied BOOLEAN NOT NULL,
    body TEXT NOT NULL,
    thinking TEXT NOT NULL,
    PRIMARY KEY (session, entry_key)
);
CREATE INDEX entries_body_trgm ON entries USING gin (body gin_trgm_ops);
CREATE INDEX entries_thinking_trgm ON entries USING gin (thinking gin_trgm_ops);
CREATE INDEX entries_copied ON entries(session) WHERE copied;
CREATE TABLE rollup (
    session BIGINT NOT NULL REFERENCES sessions(id),
    bucket_ms BIGINT NOT NULL,
    model TEXT NOT NULL,
    copied BOOLEAN NOT NULL,
    assistant_messages BIGINT NOT NULL,
    tool_calls BIGINT NOT NULL,
    input DOUBLE PRECISION NOT NULL, output DOUBLE PRECISION NOT NULL,
    cache_read DOUBLE PRECISION NOT NULL, cache_write DOUBLE PRECISION NOT NULL,
    cost DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (session, bucket_ms, model, copied)
);
",
];

/// Makes the tables of a new database, migrates an older one, and refuses a database of
/// another schema (a newer program's, or one folding text differently): one line naming both
/// versions. A current database is only read, so a role that may only read can query it.
pub(crate) fn prepare(client: &mut Client, shown: &str) -> CatalogResult<()> {
    let fail = failed(shown);
    let encoding: String = client
        .query_one("SHOW server_encoding", &[])
        .map_err(&fail)?
        .get(0);
    if encoding != "UTF8" {
        return Err(CatalogError::new(format!(
            "{shown}: the database's encoding is {encoding}; the store index needs UTF8 (createdb -E UTF8)"
        )));
    }
    if versions(client, shown)? == SCHEMA_VERSION {
        return Ok(());
    }
    // Made or migrated by one process at a time; the version is read again under the lock.
    let mut tx = client.transaction().map_err(&fail)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
        .map_err(&fail)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS pi_session_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    )
    .map_err(&fail)?;
    let version = versions(&mut tx, shown)?;
    for (from, step) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tracing::info!(
            "{shown}: migrating the store index from schema {from} to {}",
            from + 1
        );
        tx.batch_execute(step).map_err(&fail)?;
    }
    tx.execute(
        "INSERT INTO pi_session_meta(key, value) VALUES ('schema', $1), ('fold', $2)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        &[&SCHEMA_VERSION.to_string(), &FOLD_VERSION.to_string()],
    )
    .map_err(&fail)?;
    tx.commit().map_err(&fail)
}

/// The schema version of the database (0: none yet), refused when it is not one this program
/// can use or migrate.
fn versions(client: &mut impl GenericClient, shown: &str) -> CatalogResult<i32> {
    let fail = failed(shown);
    let present: bool = client
        .query_one("SELECT to_regclass('pi_session_meta') IS NOT NULL", &[])
        .map_err(&fail)?
        .get(0);
    if !present {
        return Ok(0);
    }
    let mut value = |key: &str| -> CatalogResult<Option<String>> {
        Ok(client
            .query_opt("SELECT value FROM pi_session_meta WHERE key = $1", &[&key])
            .map_err(&fail)?
            .map(|r| r.get(0)))
    };
    let schema = value("schema")?;
    let fold = value("fold")?;
    let version: i32 = match schema.as_deref() {
        None => return Ok(0),
        Some(text) => text.parse().map_err(|_| {
            CatalogError::new(format!(
                "{shown}: not a pi-session store index (its schema version is {text:?})"
            ))
        })?,
    };
    if version > SCHEMA_VERSION {
        return Err(CatalogError::new(format!(
            "{shown}: the database holds store index schema version {version}, newer than this pi-session's {SCHEMA_VERSION}; upgrade pi-session"
        )));
    }
    if fold.as_deref() != Some(&FOLD_VERSION.to_string()) {
        return Err(CatalogError::new(format!(
            "{shown}: the database's text was folded by fold version {}, this pi-session folds with version {FOLD_VERSION}; sync into a new database",
            fold.as_deref().unwrap_or("none")
        )));
    }
    Ok(version)
}
