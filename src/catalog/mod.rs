//! The whole store at once: one index of every entry of every session, for search and usage
//! figures across sessions. Derived data: deleting it costs one rebuild.
//!
//! - `files`: which session files the store holds;
//! - `change`: what happened to a file since it was indexed (new, grew, replaced, gone);
//! - `extract`: what is kept of an entry, read through the store's own reader and profile;
//! - `fold`, `query`: text folded once in Rust, queries cut into pieces;
//! - `backend`: the interface every backend implements; `sqlite`: the embedded one;
//!   `postgres`: a team's server database.

pub(crate) mod backend;
pub(crate) mod change;
pub(crate) mod extract;
pub(crate) mod feed;
pub(crate) mod files;
pub(crate) mod fold;
pub(crate) mod postgres;
pub(crate) mod query;
pub(crate) mod sqlite;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::format::profile::Profile;
use crate::store::{Session, SessionOptions};

use crate::store::index_file::STORE_INDEX_PREFIX as PREFIX;
pub(crate) use backend::{
    Backend, CatalogError, CatalogResult, FileUpdate, SearchSpec, SessionFacts, UsageRow,
};
use change::{Change, Observed};
pub(crate) use files::Layout;
use files::StoreFile;

/// The database file of `profile`'s index in the index directory: one for the sessions root,
/// one per flat sessions directory (named by a hash of its path), so that moving between them
/// never makes one index forget the other's files.
pub fn database_path(index_dir: &Path, profile: Profile, layout: &Layout) -> PathBuf {
    match layout {
        Layout::Root(_) => index_dir.join(format!("{PREFIX}{}.sqlite3", profile.name())),
        Layout::Flat(dir) => {
            let hash = xxhash_rust::xxh3::xxh3_64(dir.as_os_str().as_encoded_bytes());
            index_dir.join(format!(
                "{PREFIX}{}-dir-{hash:016x}.sqlite3",
                profile.name()
            ))
        }
    }
}

/// How the first build shows its progress (a bar on a terminal; nothing elsewhere).
pub trait Progress: Sync {
    /// `bytes` of session files are about to be read.
    fn start(&self, files: u64, bytes: u64);
    /// `bytes` more have been read.
    fn advance(&self, bytes: u64);
    /// The build is done.
    fn finish(&self);
}

/// Shows nothing.
pub struct Quiet;

impl Progress for Quiet {
    fn start(&self, _: u64, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

/// What bringing the index up to date did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport {
    pub files: u64,
    pub new: u64,
    pub grew: u64,
    pub replaced: u64,
    pub removed: u64,
    /// Entries read and filed in this run.
    pub entries_indexed: u64,
    /// Session files that could not be read (path: reason); they are left out.
    pub skipped: Vec<String>,
    /// What is not indexed yet, when another process was building the index and the answer
    /// did not wait for it (a search); `None` when the index was brought up to date.
    #[serde(skip)]
    pub pending: Option<Pending>,
}

/// What the index does not hold yet: the answer came from the rest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    /// Session files new, grown or changed since they were indexed (or whose text is not).
    pub files: u64,
    /// About how many bytes of them are still to read.
    pub bytes: u64,
}

/// Whether an answer waits for another process building the same index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhileBuilding {
    /// Wait for it, then bring the index up to date (figures must be whole).
    Wait,
    /// Answer at once from what is indexed, and say how much is left (a search).
    AnswerNow,
}

/// The lock a process building an index holds (one builder at a time; readers never wait).
enum BuildLock {
    Held(#[allow(dead_code)] std::fs::File),
    /// Another process is building.
    Busy,
    /// No lock file can be used (an index in memory, a read-only directory).
    Unlocked,
}

fn build_lock(database: Option<&Path>, wait: bool) -> BuildLock {
    let Some(database) = database else {
        return BuildLock::Unlocked;
    };
    let mut name = database.as_os_str().to_owned();
    name.push(".lock");
    let file = match std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(PathBuf::from(name))
    {
        Ok(file) => file,
        Err(e) => {
            tracing::debug!("store index lock: {e}");
            return BuildLock::Unlocked;
        }
    };
    let taken = if wait {
        file.lock().map_err(std::fs::TryLockError::Error)
    } else {
        file.try_lock()
    };
    match taken {
        Ok(()) => BuildLock::Held(file),
        Err(std::fs::TryLockError::WouldBlock) => BuildLock::Busy,
        Err(std::fs::TryLockError::Error(e)) => {
            tracing::debug!("store index lock: {e}");
            BuildLock::Unlocked
        }
    }
}

/// The store index of one profile.
pub struct Catalog {
    backend: Box<dyn Backend + Send>,
    /// The database file, when the index is persisted.
    path: Option<PathBuf>,
    /// Why the database file could not be used, when the index lives in memory instead.
    pub note: Option<String>,
    /// The most entries one batch of a file holds (see [`Job::read`]).
    batch_entries: u64,
}

impl Catalog {
    /// The index in `index_dir` (`None`: in memory, read from scratch). A database file that
    /// cannot be used (read-only directory, locked past the wait, not creatable) leaves the
    /// index in memory, with the reason in `note`; one that is not ours or damaged is rebuilt.
    pub fn open(
        index_dir: Option<&Path>,
        profile: Profile,
        layout: &Layout,
    ) -> CatalogResult<Catalog> {
        let Some(dir) = index_dir else {
            return Ok(Catalog {
                backend: Box::new(sqlite::Sqlite::in_memory()?),
                path: None,
                note: None,
                batch_entries: BATCH_ENTRIES,
            });
        };
        let path = database_path(dir, profile, layout);
        match sqlite::Sqlite::open(&path) {
            Ok(db) => Ok(Catalog {
                backend: Box::new(db),
                path: Some(path),
                note: None,
                batch_entries: BATCH_ENTRIES,
            }),
            Err(e) => Ok(Catalog {
                backend: Box::new(sqlite::Sqlite::in_memory()?),
                path: None,
                note: Some(format!("{e}; answering from a scan of the files instead")),
                batch_entries: BATCH_ENTRIES,
            }),
        }
    }

    /// The index in another backend (a team's PostgreSQL database).
    pub fn with_backend(backend: Box<dyn Backend + Send>) -> Catalog {
        Catalog {
            backend,
            path: None,
            note: None,
            batch_entries: BATCH_ENTRIES,
        }
    }

    /// Batches of at most `entries` entries (tests: a small file in many batches).
    #[cfg(test)]
    pub(crate) fn with_batch_entries(mut self, entries: u64) -> Catalog {
        self.batch_entries = entries.max(1);
        self
    }

    /// Brings the index up to date with the session files under `root`, read as `options`
    /// says (profile, persisted per-session index). The figures always; the text index too
    /// `with_text` (a search): `stats` does not wait for the folding and the FTS insert.
    pub fn sync(
        &mut self,
        root: &Layout,
        options: &SessionOptions,
        with_text: bool,
        progress: &dyn Progress,
    ) -> CatalogResult<SyncReport> {
        self.sync_while(root, options, with_text, WhileBuilding::Wait, progress)
    }

    /// [`Catalog::sync`], saying what to do when another process is building the index:
    /// with `AnswerNow`, nothing is indexed and the report says what is left (`pending`).
    pub fn sync_while(
        &mut self,
        root: &Layout,
        options: &SessionOptions,
        with_text: bool,
        mode: WhileBuilding,
        progress: &dyn Progress,
    ) -> CatalogResult<SyncReport> {
        let mut lock = build_lock(self.path.as_deref(), false);
        if matches!(lock, BuildLock::Busy) {
            // Another process is building: what would this one have to do?
            let report = self.pass(root, options, with_text, true, progress)?;
            if report.pending.is_none() || mode == WhileBuilding::AnswerNow {
                return Ok(report);
            }
            tracing::info!("another process is building the store index: waiting for it");
            lock = build_lock(self.path.as_deref(), true);
        }
        let report = self.pass(root, options, with_text, false, progress);
        drop(lock);
        // The database counts in the index directory's bound: the per-session indexes make
        // room for it when it grew.
        if let (Some(database), Ok(report)) = (&self.path, &report)
            && (report.entries_indexed > 0 || report.removed > 0)
            && let Some(dir) = database.parent()
        {
            crate::store::index_file::prune(dir, options.index_max_bytes);
        }
        report
    }

    /// One pass over the store: with `busy` (another process holds the build lock), nothing
    /// is written and the report says what is left to index (`pending`, `None`: nothing).
    fn pass(
        &mut self,
        root: &Layout,
        options: &SessionOptions,
        with_text: bool,
        busy: bool,
        progress: &dyn Progress,
    ) -> CatalogResult<SyncReport> {
        let mut report = SyncReport::default();
        let files = files::layout_files(root, |dir, e| {
            report
                .skipped
                .push(format!("{}: cannot read the directory: {e}", dir.display()));
        });
        report.files = files.len() as u64;
        let mut known: HashMap<PathBuf, (change::FileStamp, u64)> = self
            .backend
            .known_files()?
            .into_iter()
            .map(|k| (k.path, (k.stamp, k.text_entries)))
            .collect();
        let listed: std::collections::HashSet<&Path> =
            files.iter().map(|f| f.path.as_path()).collect();
        // A busy pass writes nothing: renames are followed by the pass that holds the lock.
        let mut changed = match busy {
            true => false,
            false => self.follow_renames(&mut known, &listed, &files)?,
        };
        for path in known
            .keys()
            .filter(|p| !busy && !listed.contains(p.as_path()))
        {
            self.backend.remove(path)?;
            report.removed += 1;
            changed = true;
        }
        let mut work = Vec::new();
        for file in files {
            let previous = known.get(&file.path).copied();
            let stamp = previous.map(|(stamp, _)| stamp);
            let text_entries = previous.map_or(0, |(_, text)| text);
            let job = |change, observed| Job {
                file: file.clone(),
                change,
                observed,
                previous: stamp,
                previous_text: text_entries,
                with_text,
            };
            match change::detect(&file.path, stamp.as_ref()) {
                Ok((Change::Unchanged, Some(observed))) => {
                    if with_text && stamp.is_some_and(|s| text_entries < s.entries) {
                        work.push(job(Change::Unchanged, observed));
                    }
                }
                Ok((Change::Gone, _)) => {
                    if previous.is_some() && !busy {
                        self.backend.remove(&file.path)?;
                        report.removed += 1;
                        changed = true;
                    }
                }
                Ok((change, Some(observed))) => work.push(job(change, observed)),
                Ok((_, None)) => {}
                Err(e) => report.skipped.push(format!("{}: {e}", file.path.display())),
            }
        }
        if busy && !work.is_empty() {
            report.pending = Some(Pending {
                files: work.len() as u64,
                bytes: work.iter().map(Job::bytes).sum(),
            });
            return Ok(report);
        }
        if work.is_empty() {
            if changed {
                self.backend.link_copies()?;
            }
            return Ok(report);
        }
        let bytes: u64 = work.iter().map(Job::bytes).sum();
        progress.start(work.len() as u64, bytes);
        // Files are read and folded on the other cores while this thread writes (SQLite has
        // one writer); the biggest files first, so one big file does not start last. A
        // bounded channel keeps at most a few files' rows in memory.
        work.sort_by_key(|job| std::cmp::Reverse(job.bytes()));
        let readers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 8)
            .min(work.len());
        let queue = std::sync::Mutex::new(work.into_iter());
        let (sender, receiver) = std::sync::mpsc::sync_channel::<Read>(2);
        let batch_entries = self.batch_entries;
        let outcome = std::thread::scope(|scope| -> CatalogResult<()> {
            for _ in 0..readers {
                let sender = sender.clone();
                let queue = &queue;
                scope.spawn(move || {
                    loop {
                        let job = match queue.lock() {
                            Ok(mut jobs) => jobs.next(),
                            Err(_) => None,
                        };
                        let Some(job) = job else { return };
                        let mut open = true;
                        job.read(options, batch_entries, &mut |outcome, bytes, last| {
                            open = sender
                                .send(Read {
                                    change: job.change,
                                    bytes,
                                    last,
                                    outcome,
                                })
                                .is_ok();
                            open
                        });
                        if !open {
                            return;
                        }
                    }
                });
            }
            drop(sender);
            for read in receiver {
                progress.advance(read.bytes);
                match read.outcome {
                    Ok(update) => {
                        let rows = update.rows.len() as u64;
                        if self.backend.apply(&update)? {
                            changed |= !update.rows.is_empty() || update.replace;
                            report.entries_indexed += rows;
                            if !read.last {
                                continue;
                            }
                            match read.change {
                                Change::New => report.new += 1,
                                Change::Grew { .. } => report.grew += 1,
                                Change::Unchanged => {}
                                _ => report.replaced += 1,
                            }
                        }
                    }
                    Err(reason) => report.skipped.push(reason),
                }
            }
            Ok(())
        });
        progress.finish();
        outcome?;
        if changed {
            self.backend.link_copies()?;
        }
        Ok(report)
    }

    /// Brings the index up to date, then asks it `query`. When the database file fails on the
    /// way, the answer still comes: a damaged file is deleted and built again; any other
    /// failure (locked past the wait, disk full) leaves the answer to an index in memory,
    /// with the reason in `note`. What was filed before the failure stays for the next run.
    pub fn answer<T>(
        &mut self,
        root: &Layout,
        options: &SessionOptions,
        progress: &dyn Progress,
        with_text: bool,
        mode: WhileBuilding,
        mut query: impl FnMut(&mut dyn Backend) -> CatalogResult<T>,
    ) -> CatalogResult<(T, SyncReport)> {
        let mut attempt = |catalog: &mut Catalog| -> CatalogResult<(T, SyncReport)> {
            let report = catalog.sync_while(root, options, with_text, mode, progress)?;
            Ok((query(catalog.backend.as_mut())?, report))
        };
        let error = match attempt(self) {
            Ok(answer) => return Ok(answer),
            Err(e) => e,
        };
        let Some(path) = self.path.take() else {
            return Err(error);
        };
        if error.damaged {
            tracing::warn!("{}; rebuilding the store index", error.message);
            sqlite::delete(&path);
            if let Ok(db) = sqlite::Sqlite::open(&path) {
                self.backend = Box::new(db);
                if let Ok(answer) = attempt(self) {
                    return Ok(answer);
                }
            }
        }
        self.backend = Box::new(sqlite::Sqlite::in_memory()?);
        let note = format!(
            "{}; answering from a scan of the files instead",
            error.message
        );
        tracing::warn!("{note}");
        self.note = Some(note);
        attempt(self)
    }

    #[cfg(test)]
    pub(crate) fn search(&mut self, spec: &SearchSpec) -> CatalogResult<Vec<backend::HitRow>> {
        self.backend.search(spec)
    }

    #[cfg(test)]
    pub(crate) fn usage(&mut self, project: Option<&str>) -> CatalogResult<Vec<UsageRow>> {
        self.backend.usage(project)
    }
}

/// One batch of a file read, for the writer.
struct Read {
    change: Change,
    bytes: u64,
    /// The file's last batch.
    last: bool,
    outcome: Result<FileUpdate, String>,
}

/// One file to read: what changed, what the index holds of it.
struct Job {
    file: StoreFile,
    change: Change,
    observed: Observed,
    previous: Option<change::FileStamp>,
    previous_text: u64,
    with_text: bool,
}

impl Job {
    /// The bytes this job reads anew (for the progress bar).
    fn bytes(&self) -> u64 {
        match (self.change, self.previous) {
            // Only the text of the entries past `previous_text` is missing.
            (Change::Unchanged, Some(p)) if p.entries > 0 => {
                let missing = p.entries.saturating_sub(self.previous_text);
                (u128::from(self.observed.size) * u128::from(missing) / u128::from(p.entries))
                    as u64
            }
            (Change::Grew { .. }, Some(p))
                if !self.with_text || self.previous_text >= p.entries =>
            {
                self.observed.size - p.size
            }
            _ => self.observed.size,
        }
    }

    /// Reads the file and hands its entries to `send` in bounded batches (at most
    /// `BATCH_ENTRIES` entries or `BATCH_BYTES` of their lines each), in order, so that a
    /// big file is never held whole and each batch is committed on its own: a build stopped
    /// halfway (kill -9) goes on from the last batch filed, as from a file that grew. `send`
    /// returns false to stop. An error is sent once, as the last thing sent.
    fn read(
        &self,
        options: &SessionOptions,
        batch_entries: u64,
        send: &mut dyn FnMut(Result<FileUpdate, String>, u64, bool) -> bool,
    ) {
        if let Err(reason) = self.read_batches(options, batch_entries, send) {
            send(Err(reason), 0, true);
        }
    }

    fn read_batches(
        &self,
        options: &SessionOptions,
        batch_entries: u64,
        send: &mut dyn FnMut(Result<FileUpdate, String>, u64, bool) -> bool,
    ) -> Result<(), String> {
        let file = &self.file;
        let failed = |e: &dyn std::fmt::Display| format!("{}: {e}", file.path.display());
        let session =
            Session::open_read_only(&file.path, options.clone()).map_err(|e| failed(&e.message))?;
        for warning in session.warnings() {
            tracing::debug!("{}: {}", file.path.display(), warning.message);
        }
        let len = session.len() as u64;
        // Which entries are new, and up to where the file is taken.
        let (mut rows_from, mut upto, mut replace) = match (self.change, self.previous) {
            (Change::Grew { from_entry }, _) => (from_entry, len, false),
            // Only the text was missing: the entries the index holds, no more.
            (Change::Unchanged, Some(p)) => (p.entries, p.entries.min(len), false),
            _ => (0, len, true),
        };
        if rows_from > upto {
            // Fewer entries than indexed: the reading changed under us; read it all again.
            (rows_from, upto, replace) = (0, len, true);
        }
        let text_from = if replace { 0 } else { self.previous_text };
        let first = rows_from.min(if self.with_text { text_from } else { rows_from });
        let final_stamp = match (self.change, self.previous) {
            (Change::Unchanged, Some(p)) if !replace => p,
            _ => change::stamp(&file.path, self.observed, upto).map_err(|e| failed(&e))?,
        };
        let helpers = std::thread::available_parallelism().map_or(1, |n| n.get().clamp(1, 8));
        // Every batch carries the whole path (up to where the file is taken): a batch that
        // only adds text still compares the older entries' status with all of it.
        let on_path: Vec<u32> = session
            .on_leaf_path()
            .iter()
            .take(upto as usize)
            .enumerate()
            .filter(|(_, on)| **on)
            .map(|(i, _)| i as u32)
            .collect();
        let facts = facts(file, &session);
        // Where each batch's last line ends: the size its stamp is taken at.
        let line_end = |position: u64| session.line_end(position as u32);
        let mut previous = self.previous;
        let mut previous_text = self.previous_text;
        let mut position = first;
        let mut first_batch = true;
        loop {
            // This batch: [position, end).
            let mut end = position;
            let mut line_bytes = 0u64;
            while end < upto && end - position < batch_entries && line_bytes < BATCH_BYTES {
                line_bytes += session.line_len(end as u32) + 1;
                end += 1;
            }
            // A batch cut where the stamp cannot say where it ends goes on to the end.
            let cut_at = if end < upto && end > rows_from {
                match line_end(end - 1) {
                    Some(at) => Some(at),
                    None => {
                        end = upto;
                        None
                    }
                }
            } else {
                None
            };
            let mut rows = Vec::with_capacity(end.saturating_sub(position.max(rows_from)) as usize);
            let mut texts = self.with_text.then(Vec::new);
            let with_text = self.with_text;
            let read = |from: u64, to: u64| {
                (from as u32..to as u32)
                    .map(|at| {
                        let wants_text = with_text && u64::from(at) >= text_from;
                        extract::entry_row(&session, at, wants_text)
                    })
                    .collect::<Result<Vec<_>, _>>()
            };
            // The batch's entries are read on every core: one big file, the last one left,
            // is not read by one thread while the others wait.
            let chunk = (end - position).div_ceil(helpers as u64).max(MIN_CHUNK);
            let parts = if end - position <= chunk {
                vec![read(position, end)]
            } else {
                std::thread::scope(|scope| {
                    let read = &read;
                    let handles: Vec<_> = (position..end)
                        .step_by(chunk as usize)
                        .map(|from| scope.spawn(move || read(from, (from + chunk).min(end))))
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                        .collect()
                })
            };
            let mut at = position as u32;
            for part in parts {
                for mut row in part.map_err(|e| failed(&e.message))? {
                    let wants_text = self.with_text && u64::from(at) >= text_from;
                    if let Some(texts) = texts.as_mut().filter(|_| wants_text) {
                        // Moved, not copied: the rows' text fields are unused.
                        texts.push((
                            at,
                            std::mem::take(&mut row.body),
                            std::mem::take(&mut row.thinking),
                        ));
                    }
                    if u64::from(at) >= rows_from {
                        rows.push(row);
                    }
                    at += 1;
                }
            }
            let stamp = if end == upto {
                final_stamp
            } else if end <= rows_from {
                // Only text of entries already filed: the stamp stays.
                previous.unwrap_or(final_stamp)
            } else {
                let mut observed = self.observed;
                observed.size = cut_at.unwrap_or(observed.size).min(observed.size);
                change::stamp(&file.path, observed, end).map_err(|e| failed(&e))?
            };
            let text_entries = match texts {
                Some(_) => end,
                None if replace => 0,
                None => self.previous_text,
            };
            let on_path = on_path.clone();
            let update = FileUpdate {
                facts: facts.clone(),
                previous,
                previous_text,
                stamp,
                text_entries,
                replace: replace && first_batch,
                check_old_path: first_batch,
                rows,
                texts,
                on_path,
            };
            let last = end >= upto;
            if !send(Ok(update), line_bytes, last) || last {
                return Ok(());
            }
            previous = Some(stamp);
            previous_text = text_entries;
            position = end;
            first_batch = false;
        }
    }
}

/// A batch holds at most this many entries...
const BATCH_ENTRIES: u64 = 8192;
/// ... or about this many bytes of their lines (a few batches are in memory at once).
const BATCH_BYTES: u64 = 8 << 20;
/// A batch is read by several threads in parts of at least this many entries.
const MIN_CHUNK: u64 = 512;

fn facts(file: &StoreFile, session: &Session) -> SessionFacts {
    let header = session.header();
    let parent_path = header
        .get("parentSession")
        .and_then(|p| p.as_str())
        .map(|p| p.into_owned())
        .filter(|p| !p.is_empty());
    let parent_file_id = parent_path.as_deref().map(|p| {
        let name = Path::new(p)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match name.split_once('_') {
            Some((_, id)) => id.to_string(),
            None => name,
        }
    });
    let project = file
        .project
        .clone()
        .unwrap_or_else(|| crate::repo::paths::encode_cwd(&session.cwd()));
    SessionFacts {
        path: file.path.clone(),
        project,
        session_id: session.session_id().into_owned(),
        cwd: session.cwd().into_owned(),
        name: session.session_name(),
        parent_path,
        parent_file_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A pi session of `n` entries: users and assistants with usage, one branch abandoned.
    fn write_session(path: &Path, n: usize) {
        let mut out = String::from(
            "{\"type\":\"session\",\"version\":3,\"id\":\"0b1e0000-0000-4000-8000-000000000009\",\
             \"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/work/p\"}\n",
        );
        let mut parent = String::from("null");
        for i in 0..n {
            let id = format!("{:08x}", 0x1000 + i);
            // Entry 10 starts a branch that entry 12 abandons (it goes back to entry 9).
            let from = if i == 12 {
                format!("\"{:08x}\"", 0x1000 + 9)
            } else {
                parent.clone()
            };
            let minute = i % 60;
            let line = if i % 2 == 0 {
                format!(
                    "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{from},\
                     \"timestamp\":\"2026-01-01T{:02}:{minute:02}:00.000Z\",\
                     \"message\":{{\"role\":\"user\",\"content\":\"needle{i} parser words\"}}}}\n",
                    i / 60
                )
            } else {
                format!(
                    "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{from},\
                     \"timestamp\":\"2026-01-01T{:02}:{minute:02}:00.000Z\",\
                     \"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\
                     \"text\":\"answer {i}\"}},{{\"type\":\"toolCall\",\"id\":\"c{i}\",\
                     \"name\":\"read\",\"arguments\":{{\"path\":\"f{i}\"}}}}],\
                     \"provider\":\"p\",\"model\":\"m{}\",\"usage\":{{\"input\":{i},\
                     \"output\":2,\"cacheRead\":3,\"cacheWrite\":4,\"totalTokens\":{},\
                     \"cost\":{{\"input\":0.5,\"output\":0.25,\"cacheRead\":0,\
                     \"cacheWrite\":0,\"total\":0.75}}}},\"stopReason\":\"toolUse\",\
                     \"timestamp\":0}}}}\n",
                    i / 60,
                    i % 3,
                    i + 9
                )
            };
            out.push_str(&line);
            parent = format!("\"{id}\"");
        }
        std::fs::write(path, out).unwrap();
    }

    fn store(n: usize) -> (tempfile::TempDir, Layout) {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("sessions/--work-p--");
        std::fs::create_dir_all(&project).unwrap();
        write_session(
            &project.join("2026-01-01T00-00-00-000Z_0b1e0000-0000-4000-8000-000000000009.jsonl"),
            n,
        );
        (dir, Layout::Root(project.parent().unwrap().to_path_buf()))
    }

    fn spec(word: &str) -> SearchSpec {
        SearchSpec {
            pieces: query::parse(word).unwrap(),
            limit: 1000,
            ..SearchSpec::default()
        }
    }

    /// What an index answers: every figure row and the hits of two searches, in order.
    /// Hits as (line, on the current path).
    type Hits = Vec<(u64, bool)>;

    fn answers(catalog: &mut Catalog) -> (Vec<UsageRow>, Hits, Hits) {
        let usage = catalog.usage(None).unwrap();
        let mut hits = |word: &str| {
            let mut keys: Vec<(u64, bool)> = catalog
                .search(&spec(word))
                .unwrap()
                .into_iter()
                .map(|h| (h.line, h.on_path))
                .collect();
            keys.sort();
            keys
        };
        (usage, hits("parser"), hits("needle1"))
    }

    fn built(layout: &Layout, index: &Path, batch: u64) -> Catalog {
        let mut catalog = Catalog::open(Some(index), Profile::PiCli, layout)
            .unwrap()
            .with_batch_entries(batch);
        let options = SessionOptions::default();
        let report = catalog.sync(layout, &options, true, &Quiet).unwrap();
        assert!(report.skipped.is_empty(), "{:?}", report.skipped);
        catalog
    }

    #[test]
    fn a_file_filed_in_small_batches_answers_as_one_batch() {
        let (dir, layout) = store(95);
        let mut whole = built(&layout, &dir.path().join("whole"), 100_000);
        let mut batched = built(&layout, &dir.path().join("batched"), 7);
        let expected = answers(&mut whole);
        assert_eq!(expected.1.len(), 48, "every user entry says parser");
        assert!(
            expected.1.iter().any(|(_, on)| !on),
            "a branch was abandoned"
        );
        assert_eq!(answers(&mut batched), expected);
        // Appended to: the grown part is read in batches too, from where the file was left.
        let file = layout_files(&layout);
        let mut append = std::fs::OpenOptions::new()
            .append(true)
            .open(&file[0].path)
            .unwrap();
        writeln!(
            append,
            "{{\"type\":\"message\",\"id\":\"ffff0001\",\"parentId\":\"{:08x}\",\
             \"timestamp\":\"2026-01-02T00:00:00.000Z\",\
             \"message\":{{\"role\":\"user\",\"content\":\"parser again\"}}}}",
            0x1000 + 94
        )
        .unwrap();
        drop(append);
        let options = SessionOptions::default();
        for catalog in [&mut whole, &mut batched] {
            let report = catalog.sync(&layout, &options, true, &Quiet).unwrap();
            assert_eq!((report.grew, report.entries_indexed), (1, 1));
        }
        assert_eq!(answers(&mut batched), answers(&mut whole));
    }

    fn layout_files(layout: &Layout) -> Vec<StoreFile> {
        files::layout_files(layout, |_, e| panic!("{e}"))
    }

    /// A backend that fails after `left` updates, as a process killed between two batches.
    struct Stopping {
        inner: sqlite::Sqlite,
        left: usize,
    }

    impl Backend for Stopping {
        fn known_files(&mut self) -> CatalogResult<Vec<backend::KnownFile>> {
            self.inner.known_files()
        }
        fn apply(&mut self, update: &FileUpdate) -> CatalogResult<bool> {
            if self.left == 0 {
                return Err(CatalogError::new("stopped"));
            }
            self.left -= 1;
            self.inner.apply(update)
        }
        fn remove(&mut self, path: &Path) -> CatalogResult<()> {
            self.inner.remove(path)
        }
        fn link_copies(&mut self) -> CatalogResult<()> {
            self.inner.link_copies()
        }
        fn search(&mut self, spec: &SearchSpec) -> CatalogResult<Vec<backend::HitRow>> {
            self.inner.search(spec)
        }
        fn usage(&mut self, project: Option<&str>) -> CatalogResult<Vec<UsageRow>> {
            self.inner.usage(project)
        }
    }

    #[test]
    fn a_build_stopped_between_batches_goes_on_from_the_last_one() {
        let (dir, layout) = store(95);
        let mut whole = built(&layout, &dir.path().join("whole"), 100_000);
        let expected = answers(&mut whole);
        let options = SessionOptions::default();
        for (stop, with_text) in [(3, false), (5, true), (1, true)] {
            let index = dir.path().join(format!("stopped-{stop}-{with_text}"));
            std::fs::create_dir_all(&index).unwrap();
            let database = database_path(&index, Profile::PiCli, &layout);
            let stopping = Stopping {
                inner: sqlite::Sqlite::open(&database).unwrap(),
                left: stop,
            };
            let mut first = Catalog::with_backend(Box::new(stopping)).with_batch_entries(7);
            assert!(first.sync(&layout, &options, with_text, &Quiet).is_err());
            drop(first);
            // What was filed answers for the entries filed: no figure counted twice later.
            let mut next = Catalog::open(Some(&index), Profile::PiCli, &layout)
                .unwrap()
                .with_batch_entries(7);
            let report = next.sync(&layout, &options, true, &Quiet).unwrap();
            assert_eq!(report.grew, 1, "went on from the last batch filed");
            assert_eq!(answers(&mut next), expected, "stopped after {stop} batches");
        }
    }

    #[test]
    fn a_search_while_another_process_builds_answers_at_once_with_what_is_left() {
        let (dir, layout) = store(40);
        let index = dir.path().join("index");
        std::fs::create_dir_all(&index).unwrap();
        let database = database_path(&index, Profile::PiCli, &layout);
        // Another builder holds the lock.
        let held = build_lock(Some(&database), false);
        assert!(matches!(held, BuildLock::Held(_)));
        let mut catalog = Catalog::open(Some(&index), Profile::PiCli, &layout).unwrap();
        let options = SessionOptions::default();
        let report = catalog
            .sync_while(&layout, &options, true, WhileBuilding::AnswerNow, &Quiet)
            .unwrap();
        let size = std::fs::metadata(&layout_files(&layout)[0].path)
            .unwrap()
            .len();
        assert_eq!(
            report.pending,
            Some(Pending {
                files: 1,
                bytes: size
            })
        );
        assert_eq!(report.entries_indexed, 0);
        assert!(catalog.search(&spec("parser")).unwrap().is_empty());
        drop(held);
        let report = catalog
            .sync_while(&layout, &options, true, WhileBuilding::AnswerNow, &Quiet)
            .unwrap();
        assert_eq!(report.pending, None);
        assert_eq!(catalog.search(&spec("parser")).unwrap().len(), 20);
    }
}
