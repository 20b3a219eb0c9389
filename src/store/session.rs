//! One session: its header, its index, its leaf; its entries read back (values, exact JSON
//! text, stats); the appends that grow it, written the way the session's profile writes (spec
//! sections 4 and 5); and the tail other programs append to.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::format::entry::{Kind, facts_from_value};
use crate::format::exact_text;
use crate::format::ids::{EntryIdStyle, IdSource};
use crate::format::json::{self, JsValue};
use crate::format::profile::{FirstWrite, Profile};
use crate::format::write::{self, NewEntry, ParentValue};

use super::checkpoint::Warning;
use super::error::{ErrorKind, StoreError, StoreResult};
use super::file::SessionFile;
use super::index::{Body, Index, Leaf, Record};
use super::index_file;
use super::load::{self, LoadOutcome};
use super::options::{NewSession, SessionOptions};
use super::stats::SessionStats;
use super::sync::Unsynced;
use super::tree_memo::{TreeFacts, TreeShape};

/// Below this many bytes of lines, one thread writes entries' JSON text alone.
const PARALLEL_BYTES: u64 = 4 * 1024 * 1024;

/// An open session.
#[derive(Debug)]
pub struct Session {
    pub(super) options: SessionOptions,
    pub(super) header: JsValue,
    pub(super) index: Index,
    pub(super) leaf: Leaf,
    /// Where the session lives on disk; `None` for in-memory sessions.
    path: Option<PathBuf>,
    /// The open file; `None` before the lazy first write, for in-memory sessions, and for
    /// read-only sessions whose content is held in memory.
    pub(super) file: Option<SessionFile>,
    /// The SessionManager's `flushed`: the file holds everything appended so far.
    flushed: bool,
    read_only: bool,
    warnings: Vec<Warning>,
    /// The persisted index this session was read with, if any.
    pub(super) persisted: Option<load::Persisted>,
    /// Stats over the first N entries, so a later call counts only what was added.
    pub(super) stats_memo: std::sync::Mutex<Option<(usize, SessionStats)>>,
    /// Appends are written without waiting for their sync (see [`Session::with_sync_deferred`]).
    defer_sync: bool,
    /// Previews and filter bits, once a request needed them (see [`super::tree_memo`]).
    pub(super) tree_memo: std::sync::Mutex<Option<Arc<TreeFacts>>>,
    /// The tree's rows and parents while no entry is added (see [`Session::tree_rows`]).
    pub(super) shape_memo: std::sync::Mutex<Option<Arc<TreeShape>>>,
    /// Positions of entries other programs appended that no one has been told of yet (see
    /// [`Session::take_foreign`]); the session's own appends are never in it.
    foreign: Vec<std::ops::Range<u32>>,
}

impl Session {
    /// Opens an existing file for reading only: nothing is ever written, migration happens in
    /// memory, an empty file is an error.
    pub fn open_read_only(path: &Path, options: SessionOptions) -> StoreResult<Session> {
        let mut file = SessionFile::open_read(path)?;
        match load::load(&mut file, &options)? {
            // pi-cli would write a fresh header into it; a read-only open refuses instead.
            LoadOutcome::Empty if options.profile.is_session_manager() => Err(StoreError::new(
                ErrorKind::InvalidSession,
                format!(
                    "{}: empty file, not a pi session (it has no header line)",
                    path.display()
                ),
            )
            .naming(path)),
            LoadOutcome::Empty => Err(StoreError::new(
                ErrorKind::InvalidSession,
                format!(
                    "Invalid JSONL session file {}: missing session header",
                    path.display()
                ),
            )
            .naming(path)),
            LoadOutcome::Loaded(loaded) => {
                let mut session = Session::from_parts(
                    Some(path.to_path_buf()),
                    options,
                    loaded.header,
                    loaded.index,
                    loaded.warnings,
                );
                session.read_only = true;
                session.file = Some(file);
                session.persisted = loaded.persisted;
                if let Some(from) = loaded.migrated_from {
                    session.warnings.push(Warning {
                        line: 0,
                        message: format!("version {from} file migrated to version 3 in memory (the file is untouched)"),
                    });
                }
                Ok(session)
            }
        }
    }

    /// Opens a file to write to it, as the SessionManager's `open` does: a missing file starts
    /// a new session that will be written there; an empty file gets a fresh header; a v1/v2
    /// file is migrated and rewritten, its original bytes kept beside it as `<file>.v<N>.bak`.
    /// The harness profile requires an existing valid file.
    pub fn open(path: &Path, cwd_if_new: &str, options: SessionOptions) -> StoreResult<Session> {
        if !path.exists() {
            if !options.profile.is_session_manager() {
                return Err(StoreError::new(
                    ErrorKind::SessionNotFound,
                    format!("Session not found: {}", path.display()),
                )
                .naming(path));
            }
            let new = NewSession {
                path: Some(path.to_path_buf()),
                cwd: cwd_if_new.to_string(),
                ..NewSession::default()
            };
            return Session::create(new, options);
        }
        let mut file = SessionFile::open_write(path, options.durable)?;
        if options.durable {
            // What an earlier, non-durable writer left is made durable before anything new.
            file.make_durable()?;
        }
        let loaded = match load::load(&mut file, &options)? {
            LoadOutcome::Loaded(loaded) => {
                // pi 1.6 ends a last line that lacks its newline on every load; this program
                // does it only when the session is opened for writing (a reading command never
                // writes), with the newline the next append would have written first anyway.
                if options.profile.rules().repairs_torn_tail && file.has_torn_tail() {
                    file.end_torn_line()?;
                }
                loaded
            }
            LoadOutcome::Empty if options.profile.is_session_manager() => {
                let header = write::header_object(
                    options.profile,
                    &options.ids.session_id(),
                    &options.ids.now_iso(),
                    cwd_if_new,
                    None,
                    None,
                );
                file.append_line(&header.stringify())?;
                file.set_indexed(file.len(), 1);
                let mut session = Session::from_parts(
                    Some(path.to_path_buf()),
                    options,
                    header,
                    Index::default(),
                    Vec::new(),
                );
                session.file = Some(file);
                return Ok(session);
            }
            LoadOutcome::Empty => {
                return Err(StoreError::new(
                    ErrorKind::InvalidSession,
                    format!(
                        "Invalid JSONL session file {}: missing session header",
                        path.display()
                    ),
                )
                .naming(path));
            }
        };
        let load::Loaded {
            header,
            index,
            mut warnings,
            migrated_lines,
            migrated_from,
            persisted,
            ..
        } = *loaded;
        let mut session =
            Session::from_parts(Some(path.to_path_buf()), options, header, index, Vec::new());
        session.persisted = persisted;
        match migrated_lines {
            None => session.file = Some(file),
            Some(lines) => {
                let version = migrated_from.unwrap_or(1.0);
                let backup = backup_path(path, version);
                let content: String = lines.iter().map(|l| format!("{l}\n")).collect();
                let (mut file, backup) = file.rewrite(&content, &backup)?;
                warnings.push(Warning {
                    line: 0,
                    message: format!(
                        "version {version} file migrated to version 3; the original is kept at {}",
                        backup.display()
                    ),
                });
                // Bodies now live in the rewritten file: re-read it for byte ranges.
                let LoadOutcome::Loaded(reloaded) = load::load(&mut file, &session.options)? else {
                    return Err(StoreError::new(
                        ErrorKind::Io,
                        format!("{}: empty after migration", path.display()),
                    )
                    .naming(path));
                };
                session.index = reloaded.index;
                session.persisted = reloaded.persisted;
                session.leaf = session.index.leaf.clone().unwrap_or(Leaf::Null);
                session.file = Some(file);
            }
        }
        session.warnings = warnings;
        Ok(session)
    }

    /// Starts a new session. pi-cli writes nothing until the first assistant message (then the
    /// whole file at once); harness writes the header now. In-memory sessions never write.
    pub fn create(new: NewSession, options: SessionOptions) -> StoreResult<Session> {
        let id = new.id.unwrap_or_else(|| options.ids.session_id());
        let timestamp = new.timestamp.unwrap_or_else(|| options.ids.now_iso());
        let header = write::header_object(
            options.profile,
            &id,
            &timestamp,
            &new.cwd,
            new.parent_session.as_deref(),
            new.metadata.as_ref(),
        );
        let mut session =
            Session::from_parts(new.path, options, header, Index::default(), Vec::new());
        session.flushed = false;
        if session.options.profile.rules().first_write == FirstWrite::AtOnce
            && let Some(path) = &session.path
        {
            let content = format!("{}\n", session.header.stringify());
            let mut file = SessionFile::create_new(path, &content, session.options.durable)?;
            file.set_indexed(file.len(), 1);
            session.file = Some(file);
            session.flushed = true;
        }
        Ok(session)
    }

    /// A session over `index` (flushed: what it holds is what the file at `path` holds).
    fn from_parts(
        path: Option<PathBuf>,
        options: SessionOptions,
        header: JsValue,
        index: Index,
        warnings: Vec<Warning>,
    ) -> Session {
        let leaf = index.leaf.clone().unwrap_or(Leaf::Null);
        Session {
            options,
            header,
            index,
            leaf,
            path,
            file: None,
            flushed: true,
            read_only: false,
            warnings,
            persisted: None,
            stats_memo: Default::default(),
            defer_sync: false,
            tree_memo: Default::default(),
            shape_memo: Default::default(),
            foreign: Vec::new(),
        }
    }

    // -----------------------------------------------------------------------------------------
    // What the session is

    /// The profile the session was opened in.
    pub fn profile(&self) -> Profile {
        self.options.profile
    }

    /// The session header (the file's first line).
    pub fn header(&self) -> &JsValue {
        &self.header
    }

    /// The header as each pi reports it: the SessionManager returns the raw object; the
    /// harness keeps only its known fields.
    pub(crate) fn reported_header(&self) -> JsValue {
        if self.options.profile.is_session_manager() {
            return self.header.clone();
        }
        let mut map = crate::format::json::JsObject::new();
        map.insert("type".into(), JsValue::from("session"));
        map.insert("version".into(), JsValue::Number(3.0));
        for key in ["id", "timestamp", "cwd", "parentSession", "metadata"] {
            if let Some(v) = self.header.get(key) {
                map.insert(key.into(), v.clone());
            }
        }
        JsValue::Object(map)
    }

    /// The session's id (the header's `id`).
    pub fn session_id(&self) -> Cow<'_, str> {
        self.header
            .get("id")
            .and_then(JsValue::as_str)
            .unwrap_or_default()
    }

    /// The header's working directory.
    pub fn cwd(&self) -> Cow<'_, str> {
        self.header
            .get("cwd")
            .and_then(JsValue::as_str)
            .unwrap_or_default()
    }

    /// Where the session is (or will be) written; `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Whether appends are synced to disk before they are acknowledged.
    pub(crate) fn is_durable(&self) -> bool {
        self.options.durable
    }

    /// Makes the session durable from now on: what is written already is synced (bytes and
    /// name), a pi-cli session holding unwritten entries writes them now, and every later
    /// append is synced before it is acknowledged.
    pub(crate) fn make_durable(&mut self) -> StoreResult<()> {
        self.options.durable = true;
        match (&mut self.file, &self.path) {
            (Some(file), _) => file.make_durable(),
            (None, Some(path)) if !self.read_only && !self.index.is_empty() => {
                let path = path.clone();
                self.first_write(&path, None)
            }
            _ => Ok(()),
        }
    }

    /// Runs `change` with the syncs of its appends deferred: their lines are written and
    /// indexed when it returns, and the [`Unsynced`] returned says what to wait for before the
    /// change may be acknowledged. Waiting outside the session's lock lets the changes that
    /// queue behind this one write their lines meanwhile and share the next sync (group commit).
    /// A change that fails has what it wrote synced before the error is returned, as it would
    /// have been without deferral. Files created or rewritten are synced at once, as always.
    pub fn with_sync_deferred<T, E: From<StoreError>>(
        &mut self,
        change: impl FnOnce(&mut Session) -> Result<T, E>,
    ) -> Result<(T, Unsynced), E> {
        self.defer_sync = true;
        let changed = change(self);
        self.defer_sync = false;
        let unsynced = self
            .file
            .as_ref()
            .map_or_else(Unsynced::none, SessionFile::unsynced);
        match changed {
            Ok(value) => Ok((value, unsynced)),
            Err(error) => {
                // The change's error says more than a sync failure would (which the next
                // change reports anyway).
                let _ = unsynced.wait();
                Err(error)
            }
        }
    }

    /// Syncs run for this session's appends so far (appends that queue behind a sync share
    /// the next one).
    pub fn syncs(&self) -> u64 {
        self.file.as_ref().map_or(0, SessionFile::syncs)
    }

    /// Whether the file exists yet (false before pi-cli's lazy first write).
    pub fn is_written(&self) -> bool {
        self.file.is_some()
    }

    /// Whether the file ends without a newline: the next append starts a fresh line first.
    pub(crate) fn has_torn_tail(&self) -> bool {
        self.file.as_ref().is_some_and(SessionFile::has_torn_tail)
    }

    /// The current leaf.
    pub fn leaf(&self) -> &Leaf {
        &self.leaf
    }

    /// The lines the reader skipped, with why.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    pub(super) fn warn(&mut self, message: String) {
        if !self.warnings.iter().any(|w| w.message == message) {
            tracing::warn!("{message}");
            self.warnings.push(Warning { line: 0, message });
        }
    }

    /// The number of entries (the header not counted).
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the session holds no entry.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Where the session's new ids and times come from.
    pub fn ids(&self) -> &Arc<IdSource> {
        &self.options.ids
    }

    /// Position of the entry with this id.
    pub fn position(&self, id: &str) -> Option<u32> {
        self.index.get(id)
    }

    /// The indexed facts of the entry at `position` (its id, line, kind, ...).
    pub fn record(&self, position: u32) -> Record<'_> {
        self.index.record(position)
    }

    /// Bytes the session's index holds in memory (see `Index::heap_bytes`).
    pub fn index_heap_bytes(&self) -> usize {
        self.index.heap_bytes()
    }

    /// Every entry, in file order.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = Record<'_>> + ExactSizeIterator {
        self.index.records()
    }

    /// Every entry as a list (a view of 16 bytes per entry, made on each call: walks take
    /// [`Session::entries`]).
    pub fn records(&self) -> Vec<Record<'_>> {
        self.index.records().collect()
    }

    /// The raw text of an entry's line.
    pub(crate) fn line_text(&self, position: u32) -> StoreResult<Cow<'_, str>> {
        let record = self.index.record(position);
        match record.body() {
            Body::Held(text) => Ok(Cow::Borrowed(text)),
            Body::File { offset, len } => {
                let file = self
                    .file
                    .as_ref()
                    .ok_or_else(|| StoreError::new(ErrorKind::Io, "session file is not open"))?;
                let bytes = file.read_at(offset, len as usize)?;
                // Valid UTF-8 (nearly every line) is taken without a copy.
                Ok(Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|e| {
                    String::from_utf8_lossy(e.as_bytes()).into_owned()
                })))
            }
        }
    }

    /// Where the entry's line ends in the file (`None`: its text is held in memory).
    pub fn line_end(&self, position: u32) -> Option<u64> {
        match self.index.record(position).body() {
            Body::File { offset, len } => Some(offset + u64::from(len)),
            Body::Held(_) => None,
        }
    }

    /// An entry as `JSON.parse` gives it.
    pub fn entry_value(&self, position: u32) -> StoreResult<JsValue> {
        let text = self.line_text(position)?;
        json::parse(&text).map_err(|e| {
            StoreError::at_line(
                ErrorKind::Io,
                self.index.record(position).line(),
                format!(
                    "line {} changed on disk: {e}",
                    self.index.record(position).line()
                ),
            )
        })
    }

    /// A few top-level fields of an entry as `JSON.parse` gives them, without building the rest
    /// of its line (see [`crate::format::entry::field_values`]).
    pub(crate) fn entry_fields<const N: usize>(
        &self,
        position: u32,
        keys: [&str; N],
    ) -> StoreResult<[Option<JsValue>; N]> {
        let text = self.line_text(position)?;
        crate::format::entry::field_values(&text, keys).map_err(|e| {
            let line = self.index.record(position).line();
            StoreError::at_line(
                ErrorKind::Io,
                line,
                format!("line {line} changed on disk: {e}"),
            )
        })
    }

    // Entries as JSON text for answers, from the lines' own bytes (see
    // [`crate::format::exact_text`]): an answer of many entries costs its text, not a tree of
    // values per entry, and strings reach the reader exactly as the file holds them.

    /// The entry at `position` as JSON text, appended to `out`.
    pub(crate) fn write_entry_json(&self, position: u32, out: &mut String) -> StoreResult<()> {
        let text = self.line_text(position)?;
        let json = exact_text::entry_json(&text).map_err(|e| {
            let line = self.record(position).line();
            StoreError::at_line(
                ErrorKind::Io,
                line,
                format!("line {line} changed on disk: {e}"),
            )
        })?;
        out.push_str(&json);
        Ok(())
    }

    /// The entries at `positions` as the members of a JSON array (`a,b,c`, without the
    /// brackets), appended to `out`; large runs are written on every core.
    pub(crate) fn write_entries_json(
        &self,
        positions: &[u32],
        out: &mut String,
    ) -> StoreResult<()> {
        let bytes: u64 = positions.iter().map(|&p| self.line_len(p)).sum();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 8);
        if bytes < PARALLEL_BYTES || threads == 1 || positions.len() < 2 {
            return self.write_run(positions, out);
        }
        out.reserve(bytes as usize + positions.len());
        let chunk = positions.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = positions
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        let mut text = String::new();
                        self.write_run(part, &mut text).map(|()| text)
                    })
                })
                .collect();
            for (i, part) in parts.into_iter().enumerate() {
                let text = part.join().map_err(|_| {
                    StoreError::new(ErrorKind::Io, "a thread writing entries panicked")
                })??;
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&text);
            }
            Ok(())
        })
    }

    fn write_run(&self, positions: &[u32], out: &mut String) -> StoreResult<()> {
        for (i, &position) in positions.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            self.write_entry_json(position, out)?;
        }
        Ok(())
    }

    /// The length of an entry's line in bytes (what reading it back costs).
    pub(crate) fn line_len(&self, position: u32) -> u64 {
        match self.record(position).body() {
            Body::File { len, .. } => u64::from(len),
            Body::Held(text) => text.len() as u64,
        }
    }

    /// The label on `id`, as the profile's cache holds it.
    pub fn label(&self, id: &str) -> Option<JsValue> {
        self.index
            .labels
            .get(id)
            .and_then(|l| json::parse(&l.value).ok())
    }

    /// Every label, in cache order: `(target id, label, position of the label entry)`.
    pub(crate) fn labels(&self) -> impl Iterator<Item = (&str, JsValue, u32)> {
        self.index
            .labels
            .iter()
            .filter_map(|(target, l)| json::parse(&l.value).ok().map(|v| (&**target, v, l.entry)))
    }

    /// The session name: the last `session_info`'s `name`, trimmed; empty clears it.
    pub(crate) fn session_name(&self) -> Option<String> {
        let record = self
            .index
            .records()
            .rev()
            .find(|r| r.kind() == Kind::SessionInfo)?;
        let crate::format::entry::Payload::SessionInfo(Some(raw)) = record.payload() else {
            return None;
        };
        let value = json::parse(raw).ok()?;
        let name = write::js_trim(&value.as_str()?).to_string();
        (!name.is_empty()).then_some(name)
    }

    // -----------------------------------------------------------------------------------------
    // Appends

    fn entry_id_style(&self) -> EntryIdStyle {
        match self.options.profile.is_session_manager() {
            true => EntryIdStyle::V4Prefix,
            false => EntryIdStyle::V7Suffix,
        }
    }

    fn new_entry_id(&self) -> String {
        self.options
            .ids
            .entry_id(self.entry_id_style(), |id| self.index.contains(id))
    }

    /// The current leaf as a parent. The harness refuses a leaf that names no entry.
    fn parent_value(&self) -> StoreResult<ParentValue> {
        Ok(match &self.leaf {
            Leaf::Null => ParentValue::Null,
            Leaf::Undefined => ParentValue::Undefined,
            Leaf::Id(id) => {
                if self.options.profile.rules().recorded_leaf_must_exist
                    && self.index.get(id).is_none()
                {
                    return Err(StoreError::new(
                        ErrorKind::InvalidSession,
                        format!("Entry {id} not found"),
                    ));
                }
                ParentValue::Id(id.to_string())
            }
        })
    }

    /// Appends an entry as a child of the leaf and moves the leaf to it. Returns its id.
    pub fn append(&mut self, entry: NewEntry) -> StoreResult<String> {
        let parent = self.parent_value()?;
        self.append_with_parent(entry, parent)
    }

    fn append_with_parent(&mut self, entry: NewEntry, parent: ParentValue) -> StoreResult<String> {
        self.check_appendable(&entry)?;
        let id = self.new_entry_id();
        let timestamp = self.options.ids.now_iso();
        let mut entry = entry;
        if let NewEntry::Compaction {
            first_kept_entry_id,
            system_message,
            ..
        } = &mut entry
            && self.options.profile.rules().compaction_keeps_itself
        {
            // `firstKeptEntryId ?? id`: a compaction that keeps nothing points at itself.
            if matches!(first_kept_entry_id, None | Some(JsValue::Null)) {
                *first_kept_entry_id = Some(JsValue::from(id.as_str()));
            }
            *system_message = self.current_system_message(&timestamp)?.map(Box::new);
        }
        let entry = match entry {
            NewEntry::ContextEdit {
                target_id,
                replacement,
            } => NewEntry::ContextEdit {
                replacement: self.checked_context_edit(&target_id, replacement)?,
                target_id,
            },
            NewEntry::SessionInfo { name } => {
                let text = name.as_str().ok_or_else(|| {
                    StoreError::new(ErrorKind::InvalidArgument, "session name must be a string")
                })?;
                NewEntry::SessionInfo {
                    name: JsValue::from(write::sanitize_session_name(&text)),
                }
            }
            other => other,
        };
        let object = write::entry_object(self.options.profile, &entry, &id, &parent, &timestamp);
        let line = object.stringify();
        let facts = facts_from_value(&object);
        self.write_line(line, facts)?;
        Ok(id)
    }

    fn check_appendable(&self, entry: &NewEntry) -> StoreResult<()> {
        if self.read_only {
            return Err(StoreError::new(
                ErrorKind::InvalidArgument,
                "session is open read-only",
            ));
        }
        let harness_only = match entry {
            NewEntry::ActiveToolsChange { .. } => Some("active_tools_change entries"),
            NewEntry::Compaction {
                retained_tail: Some(_),
                ..
            } => Some("retainedTail"),
            _ => None,
        };
        if let Some(what) = harness_only
            && self.options.profile.is_session_manager()
        {
            return Err(StoreError::new(
                ErrorKind::InvalidArgument,
                format!("{what} are written by the harness profile only"),
            ));
        }
        let pi16_only = match entry {
            NewEntry::ContextEdit { .. } => Some("context_edit entries"),
            NewEntry::Usage { .. } => Some("usage entries"),
            NewEntry::Message { message }
                if message.get("role").and_then(JsValue::as_str).as_deref() == Some("system") =>
            {
                Some("system-role messages")
            }
            NewEntry::Compaction {
                first_kept_entry_id: Some(JsValue::Null),
                ..
            } => Some("compactions that keep nothing (firstKeptEntryId null)"),
            _ => None,
        };
        if let Some(what) = pi16_only
            && !self.options.profile.rules().pi16_entries
        {
            return Err(StoreError::new(
                ErrorKind::InvalidArgument,
                format!(
                    "{what} are written by pi 1.6 only: open the session with profile pi-1.6 \
                     (this one is {})",
                    self.options.profile.name()
                ),
            ));
        }
        if let NewEntry::Label { target_id, .. } = entry
            && self.index.get(target_id).is_none()
        {
            return Err(StoreError::entry_not_found(target_id));
        }
        Ok(())
    }

    /// Writes one new line the way the profile writes, then indexes it. Disk first: an entry
    /// that could not be written is not in memory either, and is not acknowledged.
    fn write_line(
        &mut self,
        line: String,
        facts: crate::format::entry::LineFacts,
    ) -> StoreResult<()> {
        let role = match &facts.payload {
            crate::format::entry::Payload::Message { role, .. } => Some(*role),
            _ => None,
        };
        let is_assistant = role == Some(crate::format::entry::Role::Assistant);
        let is_user = role == Some(crate::format::entry::Role::User);
        let body = match (&self.path, self.flushed) {
            (None, _) => Body::Held(line.into_boxed_str()),
            (Some(_), true) => {
                self.follow_tail()?;
                let offset = self.append_to_file(&line)?;
                Body::File {
                    offset,
                    len: line.len() as u32,
                }
            }
            (Some(path), false)
                if self.index.has_conversation(self.options.profile)
                    || is_assistant
                    || (is_user
                        && self.options.profile.rules().first_write
                            == FirstWrite::AtConversation)
                    || self.options.durable =>
            {
                // The SessionManager's first write: the whole session at once, exclusively.
                // A durable session writes at its first entry, whatever its role: an
                // acknowledged entry is on disk (pi waits for the first assistant message).
                let path = path.clone();
                self.first_write(&path, Some(&line))?;
                let offset = self.file.as_ref().map_or(0, |f| f.len()) - line.len() as u64 - 1;
                Body::File {
                    offset,
                    len: line.len() as u32,
                }
            }
            (Some(_), false) => Body::Held(line.into_boxed_str()),
        };
        let number = match (&body, &mut self.file) {
            (Body::File { offset, len }, Some(file)) => {
                let (_, lines) = file.indexed();
                file.set_indexed(offset + u64::from(*len) + 1, lines + 1);
                lines + 1
            }
            _ => 0,
        };
        self.index.push(facts, body, number, self.options.profile)?;
        self.leaf = self.index.leaf.clone().unwrap_or(Leaf::Null);
        Ok(())
    }

    fn first_write(&mut self, path: &Path, new_line: Option<&str>) -> StoreResult<()> {
        let mut content = format!("{}\n", self.header.stringify());
        let mut offsets = Vec::with_capacity(self.index.len());
        for record in self.index.records() {
            let Body::Held(text) = record.body() else {
                return Err(StoreError::new(
                    ErrorKind::Io,
                    "unwritten session holds a written entry",
                ));
            };
            offsets.push((content.len() as u64, text.len() as u32));
            content.push_str(text);
            content.push('\n');
        }
        if let Some(line) = new_line {
            content.push_str(line);
            content.push('\n');
        }
        let mut file = SessionFile::create_new(path, &content, self.options.durable)?;
        file.set_indexed(
            file.len(),
            self.index.len() as u64 + 1 + u64::from(new_line.is_some()),
        );
        for (i, (offset, len)) in offsets.into_iter().enumerate() {
            self.index.set_written(i as u32, offset, len, i as u64 + 2);
        }
        self.file = Some(file);
        self.flushed = true;
        Ok(())
    }

    /// Writes `line` at the end of the file. Lines that appear before it which the index does
    /// not have (a torn line this append closed, or another program's line written in the
    /// instant before ours) are indexed first, so offsets and line numbers stay true.
    fn append_to_file(&mut self, line: &str) -> StoreResult<u64> {
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| StoreError::new(ErrorKind::Io, "session file is not open"))?;
        let offset = match self.defer_sync {
            true => file.append_line_unsynced(line)?,
            false => file.append_line(line)?,
        };
        if offset > file.indexed().0 {
            self.index_file_up_to(offset)?;
        }
        Ok(offset)
    }

    /// Indexes the file's complete lines up to `end` that the index does not have yet, keeping
    /// the reader's warnings. Returns how many entries were added.
    fn index_file_up_to(&mut self, end: u64) -> StoreResult<usize> {
        let Some(file) = self.file.as_mut() else {
            return Ok(0);
        };
        let followed = load::follow(
            file,
            end,
            self.header.clone(),
            &mut self.index,
            &self.options,
        )?;
        for warning in followed.warnings {
            self.warn(warning.message);
        }
        if followed.entries > 0 {
            let end = self.index.len() as u32;
            let start = end - followed.entries as u32;
            match self.foreign.last_mut() {
                Some(last) if last.end == start => last.end = end,
                _ => self.foreign.push(start..end),
            }
        }
        Ok(followed.entries)
    }
    /// Counts over every entry. Entries counted before (by this session, or by an earlier
    /// process and filed beside the persisted index) are not read again: only the bodies of
    /// later entries that carry usage (messages, compactions, summaries) are.
    pub fn stats(&self) -> StoreResult<SessionStats> {
        let mut memo = self.stats_memo.lock().unwrap_or_else(|e| e.into_inner());
        let (mut counted, mut stats) = match memo.take() {
            Some((n, stats)) if n <= self.len() => (n, stats),
            _ => self
                .persisted
                .as_ref()
                .and_then(|p| index_file::load_stats(&p.place, p.generation))
                .filter(|(n, _)| *n <= self.len())
                .unwrap_or_default(),
        };
        if let Some(persisted) = &self.persisted
            && counted < persisted.records
        {
            self.count(&mut stats, counted, persisted.records)?;
            counted = persisted.records;
            index_file::save_stats(&persisted.place, persisted.generation, counted, &stats);
        }
        self.count(&mut stats, counted, self.len())?;
        *memo = Some((self.len(), stats.clone()));
        Ok(stats)
    }

    /// Adds entries `from..to` to `stats`, in order (sums continue exactly as one pass).
    fn count(&self, stats: &mut SessionStats, from: usize, to: usize) -> StoreResult<()> {
        let pi16_usage = self.profile().rules().pi16_entries;
        for position in from as u32..to as u32 {
            let record = self.record(position);
            let role = match record.payload() {
                crate::format::entry::Payload::Message { role, .. } => Some(role),
                _ => None,
            };
            // The lean reader first; what it cannot answer exactly, the whole value.
            let usage = || match super::stats_lean::line_usage(&self.line_text(position)?) {
                Some(usage) => Ok(usage),
                None => Ok(super::stats::LineUsage::of_value(
                    &self.entry_value(position)?,
                )),
            };
            stats.count_as(record.kind(), role, usage, pi16_usage)?;
        }
        Ok(())
    }

    /// The positions of the entries other programs appended since this was last asked, in
    /// file order, whether a read, a change (which indexes them before its own line) or a
    /// watch picked them up: each is handed out once, and the session's own are never in it.
    pub(crate) fn take_foreign(&mut self) -> Vec<std::ops::Range<u32>> {
        std::mem::take(&mut self.foreign)
    }

    /// Whether entries other programs appended are waiting for [`Session::take_foreign`].
    pub(crate) fn has_foreign(&self) -> bool {
        !self.foreign.is_empty()
    }

    /// Whether the file is no longer the one at the session's path, or was cut (see
    /// [`SessionFile::gone`]); `None` for a session without a file yet.
    pub(crate) fn file_gone(&self) -> StoreResult<Option<super::file::Gone>> {
        match &self.file {
            Some(file) => file.gone(),
            None => Ok(None),
        }
    }

    /// Whether the file grew since it was last read (another program appended): one `fstat`,
    /// so a caller can decide where to run [`Session::follow_tail`].
    pub(crate) fn tail_grew(&mut self) -> StoreResult<bool> {
        match self.file.as_mut() {
            Some(file) => file.grown(),
            None => Ok(false),
        }
    }

    /// Picks up what another program appended since the file was last read (pi takes no lock,
    /// so a pi process may append to a session this program has open): the new complete lines
    /// are indexed, with a warning; a last line still being written waits until it is whole.
    /// Returns how many entries were added. A writable session keeps its leaf (the client's
    /// position); a read-only one follows the file, as a fresh read would.
    pub fn follow_tail(&mut self) -> StoreResult<usize> {
        let Some(file) = self.file.as_mut() else {
            return Ok(0);
        };
        if !file.grown()? {
            return Ok(0);
        }
        let end = file.len();
        let entries = self.index_file_up_to(end)?;
        if entries > 0 {
            let path = self
                .path
                .as_deref()
                .unwrap_or(Path::new(""))
                .display()
                .to_string();
            self.warn(format!(
                "{path}: {entries} entries appended by another program were read"
            ));
            if self.read_only {
                self.leaf = self.index.leaf.clone().unwrap_or(Leaf::Null);
            }
        }
        Ok(entries)
    }

    /// Replaces every entry (a session made from copied entries); the leaf is their fold.
    pub(super) fn replace_index(&mut self, index: Index) {
        self.leaf = index.leaf.clone().unwrap_or(Leaf::Null);
        self.index = index;
        self.persisted = None;
        self.stats_memo = Default::default();
        self.tree_memo = Default::default();
        self.shape_memo = Default::default();
    }

    /// Gives an unwritten session its file: written now when `now` or when it holds an
    /// assistant message (pi-cli's rule), else at the first assistant message.
    pub(super) fn persist_at(&mut self, path: PathBuf, now: bool) -> StoreResult<()> {
        self.path = Some(path.clone());
        self.flushed = false;
        if now || self.index.has_conversation(self.options.profile) {
            self.first_write(&path, None)?;
        }
        Ok(())
    }

    /// Moves the leaf to `id` (pi's `branch`). pi-cli writes nothing; harness writes a `leaf`.
    pub fn branch(&mut self, id: &str) -> StoreResult<()> {
        if self.index.get(id).is_none() {
            return Err(StoreError::entry_not_found(id));
        }
        self.move_leaf(Some(id))
    }

    /// Moves the leaf before the first entry (pi's `resetLeaf`).
    pub fn reset_leaf(&mut self) -> StoreResult<()> {
        self.move_leaf(None)
    }

    fn move_leaf(&mut self, target: Option<&str>) -> StoreResult<()> {
        // pi's SessionManager keeps the leaf in memory; the harness records it as an entry.
        match self.options.profile.is_session_manager() {
            true => {
                self.leaf = target.map_or(Leaf::Null, |id| Leaf::Id(id.into()));
                Ok(())
            }
            false => {
                let entry = NewEntry::Leaf {
                    target_id: target.map(str::to_string),
                };
                self.append(entry).map(|_| ())
            }
        }
    }

    /// Moves the leaf to `from` (`None`: before the first entry) and appends a branch summary
    /// there, which becomes the leaf. Returns the summary's id.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        summary: JsValue,
        details: Option<JsValue>,
        from_hook: Option<JsValue>,
        usage: Option<JsValue>,
    ) -> StoreResult<String> {
        if let Some(id) = from
            && self.index.get(id).is_none()
        {
            return Err(StoreError::entry_not_found(id));
        }
        if self.read_only {
            return Err(StoreError::new(
                ErrorKind::InvalidArgument,
                "session is open read-only",
            ));
        }
        // Read before the move: which leaf `fromId` names is the profile's rule.
        let from_id = if self.options.profile.rules().tree.summary_from_left_leaf {
            self.leaf.id()
        } else {
            from
        }
        .unwrap_or("root")
        .to_string();
        self.move_leaf(from)?;
        let entry = NewEntry::BranchSummary {
            from_id: JsValue::from(from_id),
            summary,
            details,
            usage,
            from_hook,
        };
        let parent = from.map_or(ParentValue::Null, |id| ParentValue::Id(id.to_string()));
        self.append_with_parent(entry, parent)
    }

    /// Sets the leaf without writing anything: for read-only queries at another position.
    pub fn set_leaf_for_reading(&mut self, leaf: Leaf) -> StoreResult<()> {
        if let Leaf::Id(id) = &leaf
            && self.index.get(id).is_none()
        {
            return Err(StoreError::entry_not_found(id));
        }
        self.leaf = leaf;
        Ok(())
    }
}

/// Where a migration keeps the original file: beside it, not ending in `.jsonl` so that no
/// listing takes it for a session.
pub fn backup_path(path: &Path, version: f64) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".v{version}.bak"));
    path.with_file_name(name)
}
