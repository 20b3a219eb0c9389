//! The store's change log: what the index took in, in the order it took it in, so that the
//! live feed of the store (`session/watchStore`, `watch --all`) tells exactly that. One
//! mechanism with the index: each record is written in the transaction that files the rows it
//! tells of, so "what the index has taken in is what the feed has told", and a client's
//! cursor (a record's sequence number) stays good across crashes of either side.
//!
//! Records: `created` (a file indexed for the first time, entries `from..to`), `appended`
//! (entries `from..to` of the same content), `replaced` (the file was rewritten: entries
//! `0..to` under a new generation), `renamed` (the same file, by device and inode or header
//! id, under a new path), `deleted`. A content's generation is the sequence number of the
//! record that began it (`created` or `replaced`), so it is unique and grows.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::backend::{CatalogError, CatalogResult};
pub(crate) use super::backend::{FeedKind, LogRecord};

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS feed_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    kind TEXT NOT NULL,
    path TEXT NOT NULL,
    old_path TEXT,
    session_id TEXT NOT NULL,
    from_pos INTEGER NOT NULL,
    to_pos INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS feed_log_session ON feed_log(session, seq);
";

/// The `meta` key of the database's identity: a cursor names it, so a cursor from another
/// (or a rebuilt) index is refused instead of read against the wrong log.
const FEED_ID: &str = "feed id";

/// Makes the log's table and the database's identity (once).
pub(crate) fn create(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA)?;
    conn.execute(
        "INSERT OR IGNORE INTO meta(key, value) VALUES (?1, ?2)",
        params![FEED_ID, uuid::Uuid::new_v4().simple().to_string()],
    )?;
    Ok(())
}

fn current_generation(tx: &Transaction<'_>, session: i64) -> rusqlite::Result<i64> {
    Ok(tx
        .prepare_cached(
            "SELECT generation FROM feed_log WHERE session = ?1 ORDER BY seq DESC LIMIT 1",
        )?
        .query_row(params![session], |r| r.get(0))
        .optional()?
        .unwrap_or(0))
}

#[allow(clippy::too_many_arguments)]
fn write(
    tx: &Transaction<'_>,
    session: i64,
    kind: FeedKind,
    generation: Option<i64>,
    path: &str,
    old_path: Option<&str>,
    session_id: &str,
    from: u64,
    to: u64,
) -> rusqlite::Result<()> {
    let seq: i64 = tx
        .prepare_cached(
            "INSERT INTO feed_log(session, generation, kind, path, old_path, session_id,
               from_pos, to_pos)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING seq",
        )?
        .query_row(
            params![
                session,
                generation.unwrap_or(0),
                kind.name(),
                path,
                old_path,
                session_id,
                from as i64,
                to as i64
            ],
            |r| r.get(0),
        )?;
    if generation.is_none() {
        // A new content: its generation is its own record's number.
        tx.prepare_cached("UPDATE feed_log SET generation = seq WHERE seq = ?1")?
            .execute(params![seq])?;
    }
    Ok(())
}

/// Logs one file update being filed (in its transaction): `known` whether the file was in the
/// index before, `replace` whether its entries were filed anew, entries `from..to` filed.
#[allow(clippy::too_many_arguments)]
pub(crate) fn log_update(
    tx: &Transaction<'_>,
    session: i64,
    known: bool,
    replace: bool,
    path: &str,
    session_id: &str,
    from: u64,
    to: u64,
) -> rusqlite::Result<()> {
    match (known, replace) {
        (false, _) => write(
            tx,
            session,
            FeedKind::Created,
            None,
            path,
            None,
            session_id,
            0,
            to,
        ),
        (true, true) => write(
            tx,
            session,
            FeedKind::Replaced,
            None,
            path,
            None,
            session_id,
            0,
            to,
        ),
        (true, false) if to > from => {
            let generation = current_generation(tx, session)?;
            write(
                tx,
                session,
                FeedKind::Appended,
                Some(generation),
                path,
                None,
                session_id,
                from,
                to,
            )
        }
        (true, false) => Ok(()),
    }
}

/// Logs a file leaving the index (in the transaction that removes its rows).
pub(crate) fn log_deleted(tx: &Transaction<'_>, session: i64, path: &str) -> rusqlite::Result<()> {
    let session_id: String = tx
        .prepare_cached("SELECT session_id FROM sessions WHERE id = ?1")?
        .query_row(params![session], |r| r.get(0))?;
    let generation = current_generation(tx, session)?;
    write(
        tx,
        session,
        FeedKind::Deleted,
        Some(generation),
        path,
        None,
        &session_id,
        0,
        0,
    )
}

/// Moves a file's rows to its new path and logs the rename, in one transaction; `false` when
/// the index does not hold `from` or already holds `to`.
pub(crate) fn rename(
    conn: &mut Connection,
    from: &Path,
    to: &Path,
    project: Option<&str>,
) -> CatalogResult<bool> {
    let what = format!("renaming {} in the store index", from.display());
    let fail = |e: rusqlite::Error| CatalogError::new(format!("{what}: {e}"));
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(fail)?;
    let (from, to) = (from.to_string_lossy(), to.to_string_lossy());
    let taken: i64 = tx
        .query_row(
            "SELECT count(*) FROM sessions WHERE path = ?1",
            params![to],
            |r| r.get(0),
        )
        .map_err(fail)?;
    let row: Option<(i64, String, i64)> = tx
        .query_row(
            "SELECT id, session_id, entries FROM sessions WHERE path = ?1",
            params![from],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()
        .map_err(fail)?;
    let Some((session, session_id, entries)) = row.filter(|_| taken == 0) else {
        return Ok(false);
    };
    tx.execute(
        "UPDATE sessions SET path = ?2, project = coalesce(?3, project) WHERE id = ?1",
        params![session, to, project],
    )
    .map_err(fail)?;
    let generation = current_generation(&tx, session).map_err(fail)?;
    write(
        &tx,
        session,
        FeedKind::Renamed,
        Some(generation),
        &to,
        Some(&from),
        &session_id,
        entries as u64,
        entries as u64,
    )
    .map_err(fail)?;
    tx.commit().map_err(fail)?;
    Ok(true)
}

/// The database's identity.
pub(crate) fn feed_id(conn: &Connection) -> CatalogResult<String> {
    conn.query_row(
        "SELECT value FROM meta WHERE key = ?1",
        params![FEED_ID],
        |r| r.get(0),
    )
    .map_err(|e| CatalogError::new(format!("reading the store index's identity: {e}")))
}

/// The last record's number (0: none yet).
pub(crate) fn last_seq(conn: &Connection) -> CatalogResult<u64> {
    conn.query_row("SELECT COALESCE(max(seq), 0) FROM feed_log", [], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| n as u64)
    .map_err(|e| CatalogError::new(format!("reading the store's change log: {e}")))
}

/// Up to `limit` records from number `first` on, each with what the index holds of its file
/// now (read in one transaction, so records and rows agree).
pub(crate) fn records_from(
    conn: &mut Connection,
    first: u64,
    limit: usize,
) -> CatalogResult<Vec<LogRecord>> {
    let fail =
        |e: rusqlite::Error| CatalogError::new(format!("reading the store's change log: {e}"));
    let tx = conn.transaction().map_err(fail)?;
    let mut records = Vec::new();
    {
        let mut read = tx
            .prepare_cached(
                "SELECT l.seq, l.kind, l.path, l.old_path, l.session_id, l.generation,
                   l.from_pos, l.to_pos, l.session, s.path,
                   (SELECT generation FROM feed_log c WHERE c.session = l.session
                      ORDER BY c.seq DESC LIMIT 1)
                 FROM feed_log l LEFT JOIN sessions s ON s.id = l.session
                 WHERE l.seq >= ?1 ORDER BY l.seq LIMIT ?2",
            )
            .map_err(fail)?;
        let mut lines = tx
            .prepare_cached(
                "SELECT pos, line, entry_id FROM entries
                 WHERE session = ?1 AND pos >= ?2 AND pos < ?3 ORDER BY pos",
            )
            .map_err(fail)?;
        let mut rows = read
            .query(params![first as i64, limit as i64])
            .map_err(fail)?;
        while let Some(r) = rows.next().map_err(fail)? {
            let kind: String = r.get(1).map_err(fail)?;
            let Some(kind) = FeedKind::parse(&kind) else {
                return Err(CatalogError::new(format!(
                    "the store's change log holds an unknown kind {kind:?}"
                )));
            };
            let generation: i64 = r.get(5).map_err(fail)?;
            let (from, to): (i64, i64) = (r.get(6).map_err(fail)?, r.get(7).map_err(fail)?);
            let session: i64 = r.get(8).map_err(fail)?;
            let now_path: Option<String> = r.get(9).map_err(fail)?;
            let now_generation: Option<i64> = r.get(10).map_err(fail)?;
            let current = kind.has_entries()
                && now_generation == Some(generation)
                && now_path.is_some()
                // A deleted file's row id may be taken by a new file: its generation differs.
                ;
            let lines = match (current, now_path) {
                (true, Some(now)) => {
                    let found = lines
                        .query_map(params![session, from, to], |l| {
                            Ok((
                                l.get::<_, i64>(0)? as u64,
                                l.get::<_, i64>(1)? as u64,
                                l.get::<_, Option<String>>(2)?,
                            ))
                        })
                        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
                        .map_err(fail)?;
                    Some((PathBuf::from(now), found))
                }
                _ => None,
            };
            records.push(LogRecord {
                seq: r.get::<_, i64>(0).map_err(fail)? as u64,
                kind,
                path: PathBuf::from(r.get::<_, String>(2).map_err(fail)?),
                old_path: r
                    .get::<_, Option<String>>(3)
                    .map_err(fail)?
                    .map(PathBuf::from),
                session_id: r.get(4).map_err(fail)?,
                generation: generation as u64,
                from: from as u64,
                to: to as u64,
                lines,
            });
        }
    }
    tx.commit().map_err(fail)?;
    Ok(records)
}

impl super::Catalog {
    /// Files the index knows under a path that is gone, found again under a new path (same
    /// device and inode, else the header id a pi file name carries): their rows move to the
    /// new path, told as renames. `known` is updated; whether anything moved.
    pub(super) fn follow_renames(
        &mut self,
        known: &mut std::collections::HashMap<PathBuf, (super::change::FileStamp, u64)>,
        listed: &std::collections::HashSet<&Path>,
        files: &[super::files::StoreFile],
    ) -> CatalogResult<bool> {
        let vanished: Vec<PathBuf> = known
            .keys()
            .filter(|p| !listed.contains(p.as_path()))
            .cloned()
            .collect();
        if vanished.is_empty() {
            return Ok(false);
        }
        let mut moved = false;
        let unknown: Vec<_> = files
            .iter()
            .filter(|f| !known.contains_key(&f.path))
            .collect();
        for file in unknown {
            let Ok(Some(now)) = super::change::Observed::of(&file.path) else {
                continue;
            };
            let by_inode = vanished.iter().find(|old| {
                known
                    .get(*old)
                    .is_some_and(|(s, _)| (s.dev, s.ino) == (now.dev, now.ino))
            });
            let from = match by_inode {
                Some(old) => Some(old.clone()),
                None => header_id(&file.path).and_then(|id| {
                    vanished
                        .iter()
                        .find(|old| {
                            known.contains_key(*old) && file_name_id(old).as_ref() == Some(&id)
                        })
                        .cloned()
                }),
            };
            let Some(from) = from else { continue };
            if self
                .backend
                .rename(&from, &file.path, file.project.as_deref())?
            {
                if let Some(held) = known.remove(&from) {
                    known.insert(file.path.clone(), held);
                }
                moved = true;
            }
        }
        Ok(moved)
    }
}

/// The session id pi writes in a file's name (`<time>_<id>.jsonl`).
fn file_name_id(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    Some(stem.rsplit_once('_').map_or(stem, |(_, id)| id).to_string())
}

/// The `id` of a session file's header (its first line).
fn header_id(path: &Path) -> Option<String> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(path).ok()?;
    let mut first = String::new();
    std::io::BufReader::new(file.take(64 * 1024))
        .read_line(&mut first)
        .ok()?;
    let header: serde_json::Value = serde_json::from_str(first.trim_end()).ok()?;
    (header.get("type")?.as_str()? == "session")
        .then(|| header.get("id")?.as_str().map(str::to_string))
        .flatten()
}

impl super::Catalog {
    /// The change log's identity and last record number (`None`: the backend keeps none).
    pub(crate) fn feed_position(&mut self) -> CatalogResult<Option<(String, u64)>> {
        self.backend.feed_position()
    }

    /// Up to `limit` records of the change log from number `first` on.
    pub(crate) fn feed_records(
        &mut self,
        first: u64,
        limit: usize,
    ) -> CatalogResult<Vec<LogRecord>> {
        self.backend.feed_records(first, limit)
    }
}
