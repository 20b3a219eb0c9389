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

/// One batch of a file brought up to date: its entries from `rows[0].position` on (all of
/// them when `replace`), and which entries are now on the current path. A big file comes in
/// several batches, each naming the stamp the one before it filed (a stamp's `entries` and
/// `size` then stop at the batch's last line).
#[derive(Debug)]
pub(crate) struct FileUpdate {
    pub(crate) facts: SessionFacts,
    /// The stamp this update was computed against (`None`: the file was new). The backend
    /// applies the update only if it still holds that stamp, so two processes indexing one
    /// store at once never file an entry twice.
    pub(crate) previous: Option<FileStamp>,
    pub(crate) stamp: FileStamp,
    /// The text progress this update was computed against (see `previous`).
    pub previous_text: u64,
    /// Entries whose text is in the text index once this update is filed (the first ones).
    pub text_entries: u64,
    pub replace: bool,
    /// Entries filed before this update may have changed branch status (the leaf moved):
    /// true in a file's first batch; later batches of the same read only add entries.
    pub check_old_path: bool,
    /// New entries (their text fields unused: text comes in `texts`).
    pub(crate) rows: Vec<EntryRow>,
    /// Text of the entries from `previous_text` (0 when `replace`) on, when the text index is
    /// brought up to date too: (position, body, thinking), folded.
    pub texts: Option<Vec<(u32, String, String)>>,
    /// Positions of the entries on the path to the leaf, ascending (all of them up to where
    /// the file is taken, in every batch).
    pub on_path: Vec<u32>,
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

// The store's change log (`catalog::feed`): its records, as every backend gives them.

/// What happened to a file, as the log tells it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum FeedKind {
    Created,
    Appended,
    Replaced,
    Renamed,
    Deleted,
}

impl FeedKind {
    pub fn name(self) -> &'static str {
        match self {
            FeedKind::Created => "created",
            FeedKind::Appended => "appended",
            FeedKind::Replaced => "replaced",
            FeedKind::Renamed => "renamed",
            FeedKind::Deleted => "deleted",
        }
    }

    pub fn parse(text: &str) -> Option<FeedKind> {
        Some(match text {
            "created" => FeedKind::Created,
            "appended" => FeedKind::Appended,
            "replaced" => FeedKind::Replaced,
            "renamed" => FeedKind::Renamed,
            "deleted" => FeedKind::Deleted,
            _ => return None,
        })
    }

    /// Whether the record tells of entries.
    pub fn has_entries(self) -> bool {
        matches!(
            self,
            FeedKind::Created | FeedKind::Appended | FeedKind::Replaced
        )
    }
}

/// An entry the index holds: its position, 1-based line and id.
pub type EntryLine = (u64, u64, Option<String>);

/// One record of the log, with what the index holds of its file now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    pub seq: u64,
    pub kind: FeedKind,
    /// The file's path when the record was written.
    pub path: PathBuf,
    /// A rename's former path.
    pub old_path: Option<PathBuf>,
    pub session_id: String,
    pub generation: u64,
    /// Entry positions `from..to` (a content record's new entries).
    pub from: u64,
    pub to: u64,
    /// For a content record whose content is still the file's (not replaced or deleted
    /// since): the file's path now, and each entry's (position, 1-based line, id) in `from..to`.
    pub lines: Option<(PathBuf, Vec<EntryLine>)>,
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
    /// The file at `from` is now at `to` (same identity; `project`: its new project folder,
    /// `None` in a flat sessions directory, where the project comes from the header and stays):
    /// its rows move with it, told to the
    /// store's change log as a rename; `false` when nothing moved. A backend without a change
    /// log forgets `from` (the file is indexed anew at `to`).
    fn rename(
        &mut self,
        from: &std::path::Path,
        _to: &std::path::Path,
        _project: Option<&str>,
    ) -> CatalogResult<bool> {
        self.remove(from)?;
        Ok(false)
    }
    /// The change log's identity and last record number (`None`: this backend keeps none).
    fn feed_position(&mut self) -> CatalogResult<Option<(String, u64)>> {
        Ok(None)
    }
    /// Up to `limit` records of the change log from number `first` on.
    fn feed_records(&mut self, _first: u64, _limit: usize) -> CatalogResult<Vec<LogRecord>> {
        Ok(Vec::new())
    }
}
