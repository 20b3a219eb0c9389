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
pub(crate) mod files;
pub(crate) mod fold;
pub(crate) mod postgres;
pub(crate) mod query;
pub(crate) mod sqlite;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::format::profile::Profile;
use crate::store::{Session, SessionOptions};

pub(crate) use backend::{
    Backend, CatalogError, CatalogResult, FileUpdate, SearchSpec, SessionFacts, UsageRow,
};
use change::{Change, Observed};
use files::StoreFile;

/// The database file of `profile`'s index in the index directory.
pub fn database_path(index_dir: &Path, profile: Profile) -> PathBuf {
    index_dir.join(format!("store-index-{}.sqlite3", profile.name()))
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
}

/// The store index of one profile.
pub struct Catalog {
    backend: Box<dyn Backend + Send>,
    /// The database file, when the index is persisted.
    path: Option<PathBuf>,
    /// Why the database file could not be used, when the index lives in memory instead.
    pub note: Option<String>,
}

impl Catalog {
    /// The index in `index_dir` (`None`: in memory, read from scratch). A database file that
    /// cannot be used (read-only directory, locked past the wait, not creatable) leaves the
    /// index in memory, with the reason in `note`; one that is not ours or damaged is rebuilt.
    pub fn open(index_dir: Option<&Path>, profile: Profile) -> CatalogResult<Catalog> {
        let Some(dir) = index_dir else {
            return Ok(Catalog {
                backend: Box::new(sqlite::Sqlite::in_memory()?),
                path: None,
                note: None,
            });
        };
        let path = database_path(dir, profile);
        match sqlite::Sqlite::open(&path) {
            Ok(db) => Ok(Catalog {
                backend: Box::new(db),
                path: Some(path),
                note: None,
            }),
            Err(e) => Ok(Catalog {
                backend: Box::new(sqlite::Sqlite::in_memory()?),
                path: None,
                note: Some(format!("{e}; answering from a scan of the files instead")),
            }),
        }
    }

    /// The index in another backend (a team's PostgreSQL database).
    pub fn with_backend(backend: Box<dyn Backend + Send>) -> Catalog {
        Catalog {
            backend,
            path: None,
            note: None,
        }
    }

    /// Brings the index up to date with the session files under `root`, read as `options`
    /// says (profile, persisted per-session index). The figures always; the text index too
    /// `with_text` (a search): `stats` does not wait for the folding and the FTS insert.
    pub fn sync(
        &mut self,
        root: &Path,
        options: &SessionOptions,
        with_text: bool,
        progress: &dyn Progress,
    ) -> CatalogResult<SyncReport> {
        let mut report = SyncReport::default();
        let files = files::store_files(root, |dir, e| {
            report
                .skipped
                .push(format!("{}: cannot read the directory: {e}", dir.display()));
        });
        report.files = files.len() as u64;
        let known: HashMap<PathBuf, (change::FileStamp, u64)> = self
            .backend
            .known_files()?
            .into_iter()
            .map(|k| (k.path, (k.stamp, k.text_entries)))
            .collect();
        let listed: std::collections::HashSet<&Path> =
            files.iter().map(|f| f.path.as_path()).collect();
        let mut changed = false;
        for path in known.keys().filter(|p| !listed.contains(p.as_path())) {
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
                    if previous.is_some() {
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
                        let read = Read {
                            change: job.change,
                            bytes: job.bytes(),
                            outcome: job.read(options),
                        };
                        if sender.send(read).is_err() {
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
        root: &Path,
        options: &SessionOptions,
        progress: &dyn Progress,
        with_text: bool,
        mut query: impl FnMut(&mut dyn Backend) -> CatalogResult<T>,
    ) -> CatalogResult<(T, SyncReport)> {
        let mut attempt = |catalog: &mut Catalog| -> CatalogResult<(T, SyncReport)> {
            let report = catalog.sync(root, options, with_text, progress)?;
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
}

/// One file read for the writer.
struct Read {
    change: Change,
    bytes: u64,
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
            (Change::Grew { .. }, Some(p))
                if !self.with_text || self.previous_text >= p.entries =>
            {
                self.observed.size - p.size
            }
            _ => self.observed.size,
        }
    }

    fn read(&self, options: &SessionOptions) -> Result<FileUpdate, String> {
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
        let mut rows = Vec::with_capacity((upto - rows_from) as usize);
        let mut texts = self.with_text.then(Vec::new);
        let first = rows_from.min(if self.with_text { text_from } else { rows_from });
        for position in first as u32..upto as u32 {
            let wants_text = self.with_text && u64::from(position) >= text_from;
            let mut row = extract::entry_row(&session, position, wants_text)
                .map_err(|e| failed(&e.message))?;
            if let Some(texts) = texts.as_mut().filter(|_| wants_text) {
                // Moved, not copied: the rows' text fields are unused (a big file's text was
                // held twice).
                texts.push((
                    position,
                    std::mem::take(&mut row.body),
                    std::mem::take(&mut row.thinking),
                ));
            }
            if u64::from(position) >= rows_from {
                rows.push(row);
            }
        }
        let stamp = match (self.change, self.previous) {
            (Change::Unchanged, Some(p)) => p,
            _ => change::stamp(&file.path, self.observed, upto).map_err(|e| failed(&e))?,
        };
        let on_path = session
            .on_leaf_path()
            .iter()
            .take(upto as usize)
            .enumerate()
            .filter(|(_, on)| **on)
            .map(|(i, _)| i as u32)
            .collect();
        Ok(FileUpdate {
            facts: facts(file, &session),
            previous: self.previous,
            previous_text: self.previous_text,
            stamp,
            replace,
            rows,
            texts,
            on_path,
        })
    }
}

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
    SessionFacts {
        path: file.path.clone(),
        project: file.project.clone(),
        session_id: session.session_id().into_owned(),
        cwd: session.cwd().into_owned(),
        name: session.session_name(),
        parent_path,
        parent_file_id,
    }
}
