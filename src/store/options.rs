//! How a session is opened or created: the options every layer of the store reads, kept
//! apart from the session so that the loader and the persisted index below it can take them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::format::ids::IdSource;
use crate::format::json::JsValue;
use crate::format::profile::Profile;

/// pi cannot hold a longer line either (V8's string limit is about 2^29 characters).
pub const DEFAULT_MAX_LINE_BYTES: usize = 512 << 20;

/// The most bytes the persisted index's directory may hold unless configured.
pub const DEFAULT_INDEX_MAX_BYTES: u64 = 2 << 30;

/// How a session is opened or created.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// Which pi the session reads and writes like.
    pub profile: Profile,
    /// Sync every append to disk before acknowledging it.
    pub durable: bool,
    /// The longest line read; longer lines are refused.
    pub max_line_bytes: usize,
    /// Where new ids and times come from.
    pub ids: Arc<IdSource>,
    /// Where the persisted index lives (see `index_file`); `None`: no index.
    pub index_dir: Option<Arc<Path>>,
    /// The most bytes the index directory may hold before the least recently written go.
    pub index_max_bytes: u64,
    /// On a first whole read with an index, also file each entry's tree preview and the
    /// session's stats beside it, so `getInfo` and the first `getTree` read no line again.
    /// Off by default: gathered beside the line scan today, it costs the first read 2.5-3x
    /// its CPU and leaves the server's heap fragmented after the sessions close (the
    /// `reliability` memory test); on once the scan's own parse gathers them.
    pub file_digests: bool,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            profile: Profile::PiCli,
            durable: false,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            ids: Arc::new(IdSource::system()),
            index_dir: None,
            index_max_bytes: DEFAULT_INDEX_MAX_BYTES,
            file_digests: false,
        }
    }
}

impl SessionOptions {
    /// The defaults, in `profile`.
    pub fn with_profile(profile: Profile) -> Self {
        SessionOptions {
            profile,
            ..SessionOptions::default()
        }
    }
}

/// What a new session starts with.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    /// The file to write; `None` keeps the session in memory only.
    pub path: Option<PathBuf>,
    /// The header `cwd`, as given (resolving it is the caller's business).
    pub cwd: String,
    /// A fixed session id; a fresh UUIDv7 otherwise.
    pub id: Option<String>,
    /// The header timestamp; now otherwise.
    pub timestamp: Option<String>,
    /// The session this one was forked from (the header's `parentSession`).
    pub parent_session: Option<String>,
    /// Header metadata (harness only).
    pub metadata: Option<JsValue>,
}
