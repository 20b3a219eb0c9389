//! The one interface every store-index backend implements: SQLite embedded (`sqlite`), and
//! later PostgreSQL for a team. Everything above it (syncing, search, figures) is written
//! against this trait only.

use std::path::PathBuf;

use super::change::FileStamp;
use super::extract::EntryRow;
use super::query::Piece;

/// Why the index could not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CatalogError {
    pub(crate) message: String,
    /// The database is damaged (not a database, corrupt pages): rebuilding it is the cure.
    pub(crate) damaged: bool,
}

impl CatalogError {
    pub(crate) fn new(message: impl Into<String>) -> CatalogError {
        CatalogError {
            message: message.into(),
            damaged: false,
        }
    }
}

impl std::fmt::Display for CatalogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub(crate) type CatalogResult<T> = Result<T, CatalogError>;

/// A session file the index holds.
#[derive(Debug, Clone)]
pub(crate) struct KnownFile {
    pub(crate) path: PathBuf,
    pub(crate) stamp: FileStamp,
    /// Entries whose text is in the text index (the first ones; at most `stamp.entries`).
    pub(crate) text_entries: u64,
}

/// What the index keeps of a session as a whole.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionFacts {
    pub(crate) path: PathBuf,
    pub(crate) project: String,
    pub(crate) session_id: String,
    pub(crate) cwd: String,
    pub(crate) name: Option<String>,
    /// The header's `parentSession` (a fork's, a clone's or `forkFrom`'s source) as written.
    pub(crate) parent_path: Option<String>,
    /// The session id in that source's file name, to find it when the file moved.
    pub(crate) parent_file_id: Option<String>,
}

/// One file brought up to date: its entries from `rows[0].position` on (all of them when
/// `replace`), and which entries are now on the current path.
#[derive(Debug)]
pub(crate) struct FileUpdate {
    pub(crate) facts: SessionFacts,
    /// The stamp this update was computed against (`None`: the file was new). The backend
    /// applies the update only if it still holds that stamp, so two processes indexing one
    /// store at once never file an entry twice.
    pub(crate) previous: Option<FileStamp>,
    pub(crate) stamp: FileStamp,
    /// The text progress this update was computed against (see `previous`).
    pub(crate) previous_text: u64,
    pub(crate) replace: bool,
    /// New entries (their text fields unused: text comes in `texts`).
    pub(crate) rows: Vec<EntryRow>,
    /// Text of the entries from `previous_text` (0 when `replace`) on, when the text index is
    /// brought up to date too: (position, body, thinking), folded.
    pub(crate) texts: Option<Vec<(u32, String, String)>>,
    /// Positions of the entries on the path to the leaf, ascending.
    pub(crate) on_path: Vec<u32>,
}

/// What a search asks the backend for (pieces already folded; filters as values).
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchSpec {
    pub(crate) pieces: Vec<Piece>,
    pub(crate) thinking: bool,
    pub(crate) project: Option<String>,
    pub(crate) role: Option<String>,
    pub(crate) since_ms: Option<f64>,
    pub(crate) until_ms: Option<f64>,
    pub(crate) model: Option<String>,
    pub(crate) tool: Option<String>,
    pub(crate) on_path_only: bool,
    pub(crate) limit: u64,
    pub(crate) offset: u64,
}

/// One matching entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HitRow {
    pub(crate) session_path: PathBuf,
    pub(crate) session_id: String,
    pub(crate) session_name: Option<String>,
    pub(crate) entry_id: Option<String>,
    pub(crate) line: u64,
    pub(crate) role: Option<String>,
    pub(crate) timestamp_ms: Option<f64>,
    pub(crate) on_path: bool,
    pub(crate) snippet: String,
    /// bm25 (lower is better); `None` when found by the scan for short pieces.
    pub(crate) score: Option<f64>,
}

/// Figures for grouping: the entries of one session, one 15-minute bucket of time (zone
/// offsets are multiples of 15 minutes, so any zone's days are whole buckets), one model and
/// one copied-or-not, summed in the session's entry order (a backend may also give one row
/// per entry).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UsageRow {
    pub(crate) session_path: PathBuf,
    pub(crate) session_id: String,
    pub(crate) project: String,
    /// The start of the bucket (or the entry's time); `None`: no valid timestamp.
    pub(crate) timestamp_ms: Option<f64>,
    pub(crate) model: Option<String>,
    /// Assistant messages counted (0 or 1 for one entry).
    pub(crate) assistant_messages: u64,
    pub(crate) tool_calls: u64,
    pub(crate) input: f64,
    pub(crate) output: f64,
    pub(crate) cache_read: f64,
    pub(crate) cache_write: f64,
    pub(crate) cost: f64,
    /// Copied from a session up its `parentSession` chain (counted there).
    pub(crate) copied: bool,
}

/// A store-index backend.
pub(crate) trait Backend {
    /// Every file the index holds, with its stamp.
    fn known_files(&mut self) -> CatalogResult<Vec<KnownFile>>;
    /// Files one update, atomically; `false` when another process changed it meanwhile.
    fn apply(&mut self, update: &FileUpdate) -> CatalogResult<bool>;
    /// Forgets a file that is gone.
    fn remove(&mut self, path: &std::path::Path) -> CatalogResult<()>;
    /// Resolves each session's source and marks the entries copied from up its chain.
    fn link_copies(&mut self) -> CatalogResult<()>;
    fn search(&mut self, spec: &SearchSpec) -> CatalogResult<Vec<HitRow>>;
    /// The entries carrying figures, of one project or all.
    fn usage(&mut self, project: Option<&str>) -> CatalogResult<Vec<UsageRow>>;
}
