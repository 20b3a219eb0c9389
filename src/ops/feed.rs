//! The live feed of the whole store (`session/watchStore`, `pi-session watch --all`): every
//! file created, appended to, replaced, renamed or deleted under the sessions root, in order
//! per file, each event with a durable cursor.
//!
//! One mechanism with the store index: each wake brings the index up to date (the change
//! detector finds what changed; the rows and a record of the store's change log are filed in
//! one transaction, [`crate::catalog::feed`]), then the records after the client's cursor are
//! told, their entries read back from the files at the lines the index holds (and checked
//! against the entry ids it holds). A cursor is `<index id>.<record>[.<entries told>]`: a
//! client that comes back with the last cursor it saw gets exactly what came after it, also
//! when the files changed while nobody watched; `0` means from the log's start (the whole
//! store, as the index took it in). A cursor from another (or a rebuilt) index is refused.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::value::RawValue;

use crate::catalog::feed::{FeedKind, LogRecord};
use crate::catalog::{Catalog, Quiet};
use crate::format::profile::Profile;
use crate::store::SessionOptions;

use super::error::OpError;
use super::scope::Scope;

/// At most this many entries in one event (a bigger record is told in several, the later
/// ones `appended`).
pub(crate) const EVENT_ENTRIES: usize = 1000;
/// About this many bytes of entries in one event.
pub(crate) const EVENT_BYTES: usize = 1 << 20;

/// Which part of the store a feed tells of, and from where.
#[derive(Debug, Clone, Default)]
pub(crate) struct FeedInput {
    pub(crate) profile: Option<Profile>,
    /// Only the project of this working directory.
    pub(crate) cwd: Option<String>,
    /// The sessions root or one project folder in it (default: the root).
    pub(crate) dir: Option<PathBuf>,
    /// Resume after this cursor (`0`: from the log's start); omitted: from now on.
    pub(crate) since: Option<String>,
}

/// One event of the feed.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StoreEvent {
    /// Where this event ends: given back as `since`, the feed goes on after it.
    pub(crate) cursor: String,
    pub(crate) kind: FeedKind,
    /// The file (for `renamed`, its new path).
    pub(crate) path: PathBuf,
    /// `renamed`: the former path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) old_path: Option<PathBuf>,
    /// The session id of the file's header.
    pub(crate) session_id: String,
    /// The content's generation: a `replaced` file's entries come under a new one (drop what
    /// was held of the older).
    pub(crate) generation: u64,
    /// The entries told are the file's entries `from..to` (positions, 0-based, header not
    /// counted).
    pub(crate) from: u64,
    pub(crate) to: u64,
    /// The entries, as the file holds them, in file order.
    #[schemars(with = "Vec<serde_json::Value>")]
    pub(crate) entries: Vec<Box<RawValue>>,
}

/// Where a feed is in the change log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Position {
    /// The last record told (wholly, or its entries up to `entries`).
    seq: u64,
    entries: Option<u64>,
}

/// A feed over the store index of one profile.
pub(crate) struct Feed {
    catalog: Catalog,
    root: PathBuf,
    options: SessionOptions,
    /// Only files of this project directory (its name).
    project: Option<String>,
    id: String,
    at: Position,
    /// Per file: a line number and the byte offset it starts at, where the last read ended.
    lines: HashMap<PathBuf, (u64, u64, u64)>,
}

impl Feed {
    /// Opens the store index of the feed's profile and places the feed after `since` (or after
    /// everything the index holds once brought up to date).
    pub(crate) fn open(scope: &Scope, input: FeedInput) -> Result<Feed, OpError> {
        let config = &scope.config;
        if config.team.is_some() {
            return Err(OpError::InvalidParams(
                "the store's feed follows this machine's store index, not a team database".into(),
            ));
        }
        let profile = scope.profile(input.profile);
        let root = scope.repo.env().io_path(&scope.repo.env().sessions_root());
        let mut project = input
            .cwd
            .as_deref()
            .map(|cwd| super::search::project_of(scope, cwd))
            .transpose()?;
        if let Some(dir) = &input.dir {
            project = project_dir(&root, dir)?.or(project);
        }
        // The feed follows the sessions root (a flat `--session-dir` is not followed yet).
        let layout = crate::catalog::Layout::Root(root.clone());
        let mut catalog =
            Catalog::open(config.index_dir.as_deref(), profile, &layout).map_err(OpError::from)?;
        if let Some(note) = &catalog.note {
            tracing::warn!("{note}; the feed's cursors last only as long as this process");
        }
        let options = config.session_options(profile);
        let (id, last) = position_of(&mut catalog)?;
        let mut feed = Feed {
            catalog,
            root,
            options,
            project,
            id,
            at: Position {
                seq: last,
                entries: None,
            },
            lines: HashMap::new(),
        };
        match input.since.as_deref() {
            Some(since) => feed.at = feed.parse_cursor(since, last)?,
            None => {
                // From now on: after what the index holds once up to date.
                feed.sync()?;
                feed.at.seq = position_of(&mut feed.catalog)?.1;
            }
        }
        Ok(feed)
    }

    /// The sessions root the feed watches.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Where the feed is: given back as `since`, a feed goes on from here.
    pub(crate) fn cursor(&self) -> String {
        cursor_text(&self.id, self.at)
    }

    fn parse_cursor(&self, text: &str, last: u64) -> Result<Position, OpError> {
        let bad = |why: &str| {
            OpError::InvalidParams(format!(
                "since: {text:?} {why}; start without it (or with \"0\", the log's start)"
            ))
        };
        if text == "0" {
            return Ok(Position {
                seq: 0,
                entries: None,
            });
        }
        let mut parts = text.split('.');
        let (Some(id), Some(seq)) = (parts.next(), parts.next()) else {
            return Err(bad("is not a cursor of the store's feed"));
        };
        let seq: u64 = seq
            .parse()
            .map_err(|_| bad("is not a cursor of the store's feed"))?;
        let entries = match parts.next() {
            None => None,
            Some(n) => Some(
                n.parse()
                    .map_err(|_| bad("is not a cursor of the store's feed"))?,
            ),
        };
        if parts.next().is_some() {
            return Err(bad("is not a cursor of the store's feed"));
        }
        if id != self.id {
            return Err(bad(
                "is from another store index (it was rebuilt, or is another profile's)",
            ));
        }
        if seq > last {
            return Err(bad("is ahead of the store index's change log"));
        }
        Ok(Position { seq, entries })
    }

    /// Brings the store index up to date with the files (which writes the change log).
    fn sync(&mut self) -> Result<(), OpError> {
        let report = self
            .catalog
            .sync(
                &crate::catalog::Layout::Root(self.root.clone()),
                &self.options,
                false,
                &Quiet,
            )
            .map_err(OpError::from)?;
        for skipped in &report.skipped {
            tracing::warn!("left out of the store index: {skipped}");
        }
        Ok(())
    }

    /// Brings the index up to date and tells `emit` every event after the cursor, in order;
    /// the cursor moves past each event `emit` took (an error from it stops the step, the
    /// event not counted as told).
    pub(crate) fn step<E: From<OpError>>(
        &mut self,
        mut emit: impl FnMut(StoreEvent) -> Result<(), E>,
    ) -> Result<(), E> {
        // A file that changed again between the index's read and ours is read anew: its
        // change is in the index after the next sync.
        for _ in 0..3 {
            self.sync()?;
            if self.tell(&mut emit)? {
                return Ok(());
            }
        }
        tracing::debug!("store feed: files keep changing under the read; next wake goes on");
        Ok(())
    }

    /// Tells the records after the cursor; `false` when a file no longer holds what the index
    /// says (it is read again after a sync).
    fn tell<E: From<OpError>>(
        &mut self,
        emit: &mut impl FnMut(StoreEvent) -> Result<(), E>,
    ) -> Result<bool, E> {
        loop {
            let records = self
                .catalog
                .feed_records(self.at.seq, 256)
                .map_err(OpError::from)?;
            let mut progressed = false;
            for record in records {
                let told_from = match (record.seq == self.at.seq, self.at.entries) {
                    (true, None) => continue,
                    (true, Some(n)) => n.max(record.from),
                    _ => record.from,
                };
                progressed = true;
                let whole = Position {
                    seq: record.seq,
                    entries: None,
                };
                if !self.wanted(&record.path) {
                    self.at = whole;
                    continue;
                }
                if !record.kind.has_entries() {
                    emit(self.event(&record, whole, record.from, record.to, Vec::new()))?;
                    self.at = whole;
                    continue;
                }
                let Some((now_path, lines)) = &record.lines else {
                    // Replaced or deleted since: its entries are gone; what replaced it follows.
                    self.at = whole;
                    continue;
                };
                if record.from == record.to {
                    emit(self.event(&record, whole, record.from, record.to, Vec::new()))?;
                    self.at = whole;
                    continue;
                }
                if told_from >= record.to {
                    self.at = whole;
                    continue;
                }
                let wanted: Vec<_> = lines.iter().filter(|(pos, ..)| *pos >= told_from).collect();
                if wanted.len() as u64 != record.to - told_from {
                    return Ok(false);
                }
                let numbers: Vec<u64> = wanted.iter().map(|(_, line, _)| *line).collect();
                let Ok(texts) = self.read_lines(now_path, &numbers) else {
                    return Ok(false);
                };
                let mut chunk = Vec::new();
                let mut bytes = 0;
                let mut from = told_from;
                for ((pos, _, id), text) in wanted.into_iter().zip(texts) {
                    let Some(entry) = text.filter(|t| id_matches(t, id.as_deref())) else {
                        return Ok(false);
                    };
                    bytes += entry.get().len();
                    chunk.push(entry);
                    let end = pos + 1;
                    if chunk.len() >= EVENT_ENTRIES || bytes >= EVENT_BYTES || end == record.to {
                        let at = Position {
                            seq: record.seq,
                            entries: (end < record.to).then_some(end),
                        };
                        let mut event =
                            self.event(&record, at, from, end, std::mem::take(&mut chunk));
                        if from > record.from {
                            event.kind = FeedKind::Appended;
                        }
                        emit(event)?;
                        self.at = at;
                        from = end;
                        bytes = 0;
                    }
                }
            }
            if !progressed {
                return Ok(true);
            }
        }
    }

    fn event(
        &self,
        record: &LogRecord,
        at: Position,
        from: u64,
        to: u64,
        entries: Vec<Box<RawValue>>,
    ) -> StoreEvent {
        StoreEvent {
            cursor: cursor_text(&self.id, at),
            kind: record.kind,
            path: record.path.clone(),
            old_path: record.old_path.clone(),
            session_id: record.session_id.clone(),
            generation: record.generation,
            from,
            to,
            entries,
        }
    }

    fn wanted(&self, path: &Path) -> bool {
        match &self.project {
            None => true,
            Some(project) => path
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|name| name.to_string_lossy() == project.as_str()),
        }
    }

    /// The lines `numbers` (1-based, ascending) of `path`, each as JSON (`None`: not JSON, or
    /// not there). Reads on from where the last read of the same file ended when it can.
    fn read_lines(
        &mut self,
        path: &Path,
        numbers: &[u64],
    ) -> io::Result<Vec<Option<Box<RawValue>>>> {
        let mut file = File::open(path)?;
        let meta = file.metadata()?;
        let identity = meta.ino() ^ meta.dev().rotate_left(32);
        let (mut line, offset) = match self.lines.get(path) {
            Some(&(ino, line, offset))
                if ino == identity
                    && offset <= meta.len()
                    && numbers.first().is_some_and(|first| *first >= line) =>
            {
                (line, offset)
            }
            _ => (1, 0),
        };
        file.seek(SeekFrom::Start(offset))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let mut found = Vec::with_capacity(numbers.len());
        let mut wanted = numbers.iter().peekable();
        let mut start = 0;
        while let Some(&&number) = wanted.peek() {
            let Some(end) = memchr::memchr(b'\n', &bytes[start..]).map(|n| start + n) else {
                break;
            };
            if line == number {
                let text = std::str::from_utf8(&bytes[start..end])
                    .ok()
                    .map(|t| t.trim_end_matches('\r'))
                    .and_then(|t| RawValue::from_string(t.to_string()).ok());
                found.push(text);
                wanted.next();
            }
            line += 1;
            start = end + 1;
        }
        // The index holds complete lines only: a number past the last newline is not there.
        found.resize(numbers.len(), None);
        self.lines
            .insert(path.to_path_buf(), (identity, line, offset + start as u64));
        Ok(found)
    }
}

fn position_of(catalog: &mut Catalog) -> Result<(String, u64), OpError> {
    catalog
        .feed_position()
        .map_err(OpError::from)?
        .ok_or_else(|| OpError::Internal("the store index keeps no change log".into()))
}

fn cursor_text(id: &str, at: Position) -> String {
    match at.entries {
        None => format!("{id}.{}", at.seq),
        Some(n) => format!("{id}.{}.{n}", at.seq),
    }
}

/// Whether the entry line's `id` is the one the index holds (entries without one match).
fn id_matches(entry: &RawValue, id: Option<&str>) -> bool {
    let Some(id) = id else { return true };
    #[derive(serde::Deserialize)]
    struct Id<'a> {
        #[serde(borrow)]
        id: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_str::<Id<'_>>(entry.get())
        .ok()
        .and_then(|e| e.id)
        .is_some_and(|found| found == id)
}

/// The project named by `dir`: `None` for the sessions root itself; an error for a folder
/// that is neither the root nor one of its project folders.
fn project_dir(root: &Path, dir: &Path) -> Result<Option<String>, OpError> {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (root_c, dir_c) = (canonical(root), canonical(dir));
    if dir_c == root_c {
        return Ok(None);
    }
    match (dir_c.parent(), dir_c.file_name()) {
        (Some(parent), Some(name)) if parent == root_c => {
            Ok(Some(name.to_string_lossy().into_owned()))
        }
        _ => Err(OpError::InvalidParams(format!(
            "dir: {} is neither the sessions root ({}) nor a project folder in it",
            dir.display(),
            root.display()
        ))),
    }
}
