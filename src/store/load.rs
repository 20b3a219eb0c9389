//! Reading a session file into an [`Index`]: one streaming pass, one reader for both pi
//! designs, lenient (the SessionManager's rules, every skipped line reported) or strict (the
//! harness's rules, the first bad line is an error).

use std::path::Path;
use std::sync::Arc;

use crate::format::entry::{
    Kind, LineFacts, LineRead, LineSkip, Payload, Ref, facts_from_value, is_torn, read_line,
};
use crate::format::json::{self, JsValue};
use crate::format::migrate;
use crate::format::profile::Profile;

use super::checkpoint::{Checkpoint, Resume, Warning};
use super::error::{ErrorKind, StoreError, StoreResult};
use super::file::SessionFile;
use super::index::{Body, Index};
use super::index_file;
use super::line_stream::{Span, last_newline, scan_lines, scan_lines_digested, too_long};
use super::options::SessionOptions;
use super::preview::{RowEntry, row_facts_of_line};
use super::stats::{LineUsage, SessionStats};
use super::stats_lean;
use super::tree_memo::TreeFacts;
use crate::format::ids::{EntryIdStyle, IdSource};

/// What reading a file produced.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The header object as pi keeps it (migrated when a migration ran).
    pub(crate) header: JsValue,
    pub(crate) index: Index,
    pub(crate) warnings: Vec<Warning>,
    /// Every line after a migration (header first), as pi would rewrite the file.
    pub(crate) migrated_lines: Option<Vec<String>>,
    /// The version the file had when a migration ran.
    pub(crate) migrated_from: Option<f64>,
    /// The reader's state after the last complete line (`None` after a migration).
    pub(crate) checkpoint: Option<Checkpoint>,
    /// The persisted index this load used or wrote.
    pub persisted: Option<Persisted>,
    /// What a first read of the whole file gathered for later reads (see [`Digests`]).
    pub digests: Option<Digests>,
}

/// Why a file could not be loaded as a session, beyond I/O.
#[derive(Debug)]
pub(crate) enum LoadOutcome {
    Loaded(Box<Loaded>),
    /// The file has no bytes at all (pi writes a fresh header into it).
    Empty,
}

/// Reads `file` by `options.profile`'s rules (migration ids come from `options.ids`).
///
/// A last line without its newline that does not parse (torn by a crash or a full disk, or
/// still being written by another program) is not read, in both profiles: a warning names it,
/// and the file records that the index stops before it (see [`follow`]).
///
/// With `options.index_dir`, the persisted index is used when it is valid for the file (only
/// the bytes after it are read) and written when the read went further than it.
pub(crate) fn load(file: &mut SessionFile, options: &SessionOptions) -> StoreResult<LoadOutcome> {
    let Some(place) = options
        .index_dir
        .clone()
        .and_then(|dir| index_file::IndexPlace::of(dir, file.path(), options))
    else {
        return load_from(file, options, None);
    };
    let restored = index_file::restore(&place, file, options);
    let mut resumed_at = restored.as_ref().map(|r| r.resume.checkpoint.end);
    if let Some(at) = resumed_at {
        tracing::debug!(
            "{}: persisted index used, reading from byte {at} of {}",
            file.path().display(),
            file.len()
        );
    }
    let mut generation = restored
        .as_ref()
        .map_or_else(rand::random::<u64>, |r| r.generation);
    let mut outcome = match restored {
        None => read_file(file, options, None, options.file_digests)?,
        Some(restored) => match load_from(file, options, Some(restored.resume)) {
            Ok(outcome) => outcome,
            Err(e) => {
                // What the new bytes say is an error a full read would give too; but a doubt
                // about the index must never become the answer: read it all again.
                tracing::info!(
                    "{}: resumed read failed ({e}); reading it whole",
                    file.path().display()
                );
                // What was filed under the old generation (stats, previews) must not be
                // taken for this read's entries.
                generation = rand::random::<u64>();
                resumed_at = None;
                read_file(file, options, None, options.file_digests)?
            }
        },
    };
    if let LoadOutcome::Loaded(loaded) = &mut outcome
        && let Some(point) = &loaded.checkpoint
    {
        if resumed_at != Some(point.end) {
            index_file::save(&place, file, options, point, &loaded.index, generation);
        }
        // A whole read gathered the tree's facts and the stats: filed under the same
        // generation, `getInfo` and `getTree` read them instead of the file.
        if let Some(digests) = loaded.digests.take()
            && digests.tree.len() == point.records
        {
            index_file::save_stats(&place, generation, point.records, &digests.stats);
            index_file::tree_file::save(&place, generation, &digests.tree, point.records);
            tracing::debug!(
                "{}: stats and tree previews of {} entries filed in the first pass",
                file.path().display(),
                point.records
            );
        }
        loaded.persisted = Some(Persisted {
            place: Arc::new(place),
            generation,
            records: point.records,
        });
    }
    Ok(outcome)
}

/// Where a session's persisted index is, for what is filed beside it (stats).
#[derive(Debug, Clone)]
pub(crate) struct Persisted {
    pub(crate) place: Arc<index_file::IndexPlace>,
    pub(crate) generation: u64,
    /// Entries the persisted index covers.
    pub(crate) records: usize,
}

/// [`load`], resuming from a persisted index's checkpoint when one is given: only the bytes
/// after it are read, by the same reader, so the outcome is what a full read gives.
pub(crate) fn load_from(
    file: &mut SessionFile,
    options: &SessionOptions,
    resume: Option<Resume>,
) -> StoreResult<LoadOutcome> {
    read_file(file, options, resume, false)
}

/// [`load_from`]; with `digest` and no `resume`, also gathering the [`Digests`] of the
/// entries in the same pass.
fn read_file(
    file: &mut SessionFile,
    options: &SessionOptions,
    resume: Option<Resume>,
    digest: bool,
) -> StoreResult<LoadOutcome> {
    let (profile, max_line_bytes) = (options.profile, options.max_line_bytes);
    if file.is_empty() {
        return Ok(LoadOutcome::Empty);
    }
    let path = file.path().to_path_buf();
    let path = path.as_path();
    let mut reader = match resume {
        None => {
            file.set_indexed(0, 0);
            let mut reader = Reader::new(profile, path, None, Index::default(), false);
            reader.digests = digest.then(Digests::default);
            reader
        }
        Some(resume) => {
            let point = resume.checkpoint;
            file.set_indexed(point.end, point.lines);
            let mut reader = Reader::new(profile, path, Some(resume.header), resume.index, false);
            reader.warnings = point.warnings;
            reader.non_blank = point.non_blank;
            reader.pi16_features = point.pi16_features;
            reader.header_span = Some(point.header_span);
            reader
        }
    };
    reader.read_to(file, file.len(), true, max_line_bytes)?;
    let Reader {
        header,
        mut index,
        mut warnings,
        pi16_features,
        checkpoint,
        digests,
        ..
    } = reader;
    warnings.extend(pi16_warnings(profile, pi16_features));
    index.shrink_to_fit();
    let Some(header) = header else {
        return Err(match profile.is_session_manager() {
            true => not_a_session(path),
            false => harness_invalid(path, "missing session header"),
        });
    };
    if profile.is_session_manager() && migrate::needs_migration(&header) {
        let from = migrate::header_version(&header);
        let (header, lines) = migrated(file, options, &mut warnings)?;
        index = Index::default();
        for (i, line) in lines.iter().enumerate().skip(1) {
            let facts = facts_from_value(
                &json::parse(line).map_err(|e| StoreError::new(ErrorKind::Io, e.to_string()))?,
            );
            if facts.kind != Kind::Session {
                index.push(
                    facts,
                    Body::Held(line.clone().into_boxed_str()),
                    i as u64 + 1,
                    profile,
                )?;
            }
        }
        return Ok(LoadOutcome::Loaded(Box::new(Loaded {
            header,
            index,
            warnings,
            migrated_lines: Some(lines),
            migrated_from: Some(from),
            checkpoint: None,
            persisted: None,
            digests: None,
        })));
    }
    Ok(LoadOutcome::Loaded(Box::new(Loaded {
        header,
        index,
        warnings,
        migrated_lines: None,
        migrated_from: None,
        checkpoint,
        persisted: None,
        digests,
    })))
}

/// What following a file's tail found.
#[derive(Debug, Default)]
pub(crate) struct Followed {
    /// Entries added to the index.
    pub(crate) entries: usize,
    pub(crate) warnings: Vec<Warning>,
}

/// Indexes what was appended to `file` since it was last indexed: the new complete lines from
/// where the index stops, and a last line without its newline if it parses (a torn or
/// still-growing one waits, not read, until it is complete). Lines the profile would refuse
/// are skipped with a warning rather than failing the session: they were written by another
/// program after the session was opened. This one function serves every "the file grew"
/// case: another program's appends, a gap left by a racing writer, and a torn line that an
/// append has closed.
pub(crate) fn follow(
    file: &mut SessionFile,
    end: u64,
    header: JsValue,
    index: &mut Index,
    options: &SessionOptions,
) -> StoreResult<Followed> {
    let path = file.path().to_path_buf();
    let before = index.len();
    let taken = std::mem::take(index);
    let mut reader = Reader::new(options.profile, &path, Some(header), taken, true);
    let result = reader.read_to(file, end, true, options.max_line_bytes);
    *index = std::mem::take(&mut reader.index);
    result?;
    let mut warnings = reader.warnings;
    warnings.extend(pi16_warnings(options.profile, reader.pi16_features));
    Ok(Followed {
        entries: index.len() - before,
        warnings,
    })
}

struct Reader<'a> {
    profile: Profile,
    path: &'a Path,
    header: Option<JsValue>,
    index: Index,
    warnings: Vec<Warning>,
    /// Non-blank lines so far: the harness numbers lines this way in its errors.
    non_blank: u64,
    /// What only pi 1.6 writes, met in a profile that reads it otherwise: per feature, its
    /// first line and how many lines have it.
    pi16_features: Vec<(&'static str, u64, u64)>,
    /// Reading lines appended after open: refusals become warnings.
    following: bool,
    /// Where the header line is (offset, length).
    header_span: Option<(u64, u64)>,
    /// The state after the last complete line read.
    checkpoint: Option<Checkpoint>,
    /// With a first read of a whole file: what later reads need of every entry, gathered in
    /// the same pass (dropped when a line could not be digested).
    digests: Option<Digests>,
}

/// What the first read of a file gathers of its entries for later reads, while their bytes
/// are in hand: the tree rows' facts and the stats (`getInfo`), filed beside the persisted
/// index, so that no later request reads the whole file again.
#[derive(Debug, Default)]
pub struct Digests {
    pub tree: TreeFacts,
    pub stats: SessionStats,
}

/// One entry's part of [`Digests`].
pub struct LineDigest {
    preview: String,
    shown: bool,
    stats: SessionStats,
}

/// [`LineDigest`] of a line, by the same functions later reads use on the index; `None` for a
/// line that is no entry or that those functions could not read.
fn digest_line(bytes: &[u8], read: &LineRead, pi16_usage: bool) -> Option<LineDigest> {
    let LineRead::Entry(facts) = read else {
        return None;
    };
    if facts.kind == Kind::Session {
        return None;
    }
    // As `Session::line_text` reads it back (checked at SIMD speed; lossy only when invalid).
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    };
    let (preview, shown) = row_facts_of_line(RowEntry::of_facts(facts), &text).ok()?;
    let role = match facts.payload {
        Payload::Message { role, .. } => Some(role),
        _ => None,
    };
    let mut stats = SessionStats::default();
    stats
        .count_as(
            facts.kind,
            role,
            || match stats_lean::line_usage(&text) {
                Some(usage) => Ok(usage),
                None => json::parse(&text)
                    .map(|value| LineUsage::of_value(&value))
                    .map_err(|e| StoreError::new(ErrorKind::Io, e.to_string())),
            },
            pi16_usage,
        )
        .ok()?;
    Some(LineDigest {
        preview,
        shown,
        stats,
    })
}

impl<'a> Reader<'a> {
    fn new(
        profile: Profile,
        path: &'a Path,
        header: Option<JsValue>,
        index: Index,
        following: bool,
    ) -> Self {
        Reader {
            profile,
            path,
            header,
            index,
            warnings: Vec::new(),
            non_blank: 0,
            pi16_features: Vec::new(),
            following,
            header_span: None,
            checkpoint: None,
            digests: None,
        }
    }

    fn checkpoint(&self, file: &SessionFile) -> Option<Checkpoint> {
        let (end, lines) = file.indexed();
        Some(Checkpoint {
            end,
            lines,
            records: self.index.len(),
            warnings: self.warnings.clone(),
            non_blank: self.non_blank,
            pi16_features: self.pi16_features.clone(),
            header_span: self.header_span?,
        })
    }

    /// Reads from where `file`'s index stops up to `end`, and records the new stop.
    fn read_to(
        &mut self,
        file: &mut SessionFile,
        end: u64,
        last_may_wait: bool,
        max_line_bytes: usize,
    ) -> StoreResult<()> {
        let (start, lines) = file.indexed();
        if end <= start {
            self.checkpoint = self.checkpoint(file);
            return Ok(());
        }
        let complete_end = last_newline(file, start, end)?.map_or(start, |p| p + 1);
        let mut last_line = lines;
        if complete_end > start {
            let span = Span {
                start,
                end: complete_end,
                first_line: lines + 1,
            };
            let pi16_usage = self.profile.rules().pi16_entries;
            let digesting = self.digests.is_some();
            let digest: &(dyn Fn(&[u8], &LineRead) -> Option<LineDigest> + Sync) = match digesting {
                true => &|bytes, read| digest_line(bytes, read, pi16_usage),
                false => &|_, _| None,
            };
            scan_lines_digested(
                file,
                span,
                max_line_bytes,
                digest,
                |n, offset, bytes, read, digested| {
                    last_line = n;
                    let before = self.index.len();
                    self.line(n, offset, bytes, read)?;
                    if self.index.len() > before {
                        self.digested(digested)?;
                    }
                    Ok(())
                },
            )?;
            file.set_indexed(complete_end, last_line);
        }
        self.checkpoint = self.checkpoint(file);
        if end == complete_end {
            return Ok(());
        }
        let number = last_line + 1;
        let len = (end - complete_end) as usize;
        if len > max_line_bytes {
            return Err(too_long(self.path, number, max_line_bytes));
        }
        let bytes = file.read_at(complete_end, len)?;
        let read = read_line(&bytes);
        if last_may_wait && (matches!(read, LineRead::Blank) || is_torn(&bytes, &read)) {
            if !matches!(read, LineRead::Blank) {
                self.warnings.push(Warning {
                    line: number,
                    message: format!(
                        "line {number} is incomplete (no newline at the end of the file: torn by a crash or a full disk, or still being written); it is not read, and the next append starts on a fresh line"
                    ),
                });
            }
            return Ok(());
        }
        self.line(number, complete_end, &bytes, read)?;
        file.set_indexed(end, number);
        Ok(())
    }

    /// Adds the digest of the entry just indexed; without one, no digests are kept.
    fn digested(&mut self, digest: Option<LineDigest>) -> StoreResult<()> {
        let Some(digests) = &mut self.digests else {
            return Ok(());
        };
        match digest {
            Some(d) if digests.tree.len() + 1 == self.index.len() => {
                digests.tree.push(&d.preview, d.shown)?;
                digests.stats.add(&d.stats);
            }
            _ => self.digests = None,
        }
        Ok(())
    }

    fn line(
        &mut self,
        line_number: u64,
        offset: u64,
        bytes: &[u8],
        read: LineRead,
    ) -> StoreResult<()> {
        if matches!(read, LineRead::Blank) {
            return Ok(());
        }
        self.non_blank += 1;
        match self.profile.is_session_manager() {
            true => self.lenient(line_number, offset, bytes, read),
            false => self.strict(line_number, offset, bytes, read),
        }
    }

    fn lenient(
        &mut self,
        line_number: u64,
        offset: u64,
        bytes: &[u8],
        read: LineRead,
    ) -> StoreResult<()> {
        let facts = match read {
            LineRead::Blank => return Ok(()),
            LineRead::Skipped(reason) => {
                self.warnings.push(Warning {
                    line: line_number,
                    message: format!("line {line_number} skipped: {reason}"),
                });
                return Ok(());
            }
            LineRead::Entry(facts) => facts,
        };
        if self.header.is_none() {
            // The first value that parses must be the header; garbage before it is tolerated.
            if facts.kind != Kind::Session || facts.id.is_none() {
                return Err(not_a_session(self.path));
            }
            self.header = Some(json::parse_bytes(bytes).map_err(|_| not_a_session(self.path))?);
            self.header_span = Some((offset, bytes.len() as u64));
            return Ok(());
        }
        if facts.kind == Kind::Session {
            // pi ignores a second header everywhere.
            self.warnings.push(Warning {
                line: line_number,
                message: format!("line {line_number} skipped: a second session header"),
            });
            return Ok(());
        }
        self.push(facts, offset, bytes.len(), line_number)
    }

    fn strict(
        &mut self,
        line_number: u64,
        offset: u64,
        bytes: &[u8],
        read: LineRead,
    ) -> StoreResult<()> {
        if self.header.is_none() {
            self.header = Some(strict_header(self.path, bytes, line_number)?);
            self.header_span = Some((offset, bytes.len() as u64));
            return Ok(());
        }
        if self.following
            && let Err(e) = self.strict_checks(line_number, bytes, &read)
        {
            // Written by another program after open: skip what the harness would refuse.
            self.warnings.push(Warning {
                line: line_number,
                message: format!("line {line_number} skipped: {}", e.message),
            });
            return Ok(());
        }
        if let LineRead::Skipped(reason) = &read
            && is_torn(bytes, &read)
        {
            // A torn line an append has since closed: skipped in every profile, never fatal.
            self.warnings.push(Warning {
                line: line_number,
                message: format!(
                    "line {line_number} skipped: an incomplete line (a torn write): {reason}"
                ),
            });
            return Ok(());
        }
        self.strict_checks(line_number, bytes, &read)?;
        let LineRead::Entry(facts) = read else {
            return Ok(());
        };
        self.push(facts, offset, bytes.len(), line_number)
    }

    /// The harness's checks of one entry line after the header, with its messages.
    fn strict_checks(&self, line_number: u64, bytes: &[u8], read: &LineRead) -> StoreResult<()> {
        let n = self.non_blank;
        let bad = |reason: &str| {
            StoreError::at_line(
                ErrorKind::InvalidEntry,
                line_number,
                format!(
                    "Invalid JSONL session file {}: line {n} {reason}",
                    self.path.display()
                ),
            )
            .naming(self.path)
        };
        let facts = match read {
            LineRead::Blank => return Ok(()),
            LineRead::Skipped(_) if is_torn(bytes, read) => return Ok(()),
            LineRead::Skipped(LineSkip::NotJson(_)) => return Err(bad("is not valid JSON")),
            LineRead::Skipped(LineSkip::Falsy) => {
                return Err(bad("is not a valid session entry"));
            }
            LineRead::Entry(facts) => facts,
        };
        // Arrays are objects to JavaScript's `typeof`: they fail on their missing type instead.
        let is_array = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
        if !facts.is_object && !is_array {
            return Err(bad("is not a valid session entry"));
        }
        if !facts.has_type {
            return Err(bad("is missing entry type"));
        }
        if facts.id.as_deref().is_none_or(str::is_empty) {
            return Err(bad("is missing entry id"));
        }
        if !matches!(facts.parent, Ref::Null | Ref::Id(_)) {
            return Err(bad("has invalid parentId"));
        }
        if !facts.has_timestamp {
            return Err(bad("is missing timestamp"));
        }
        if facts.kind == Kind::Leaf && !matches!(facts.target, Ref::Null | Ref::Id(_)) {
            return Err(bad("has invalid targetId"));
        }
        Ok(())
    }

    fn push(
        &mut self,
        facts: LineFacts,
        offset: u64,
        len: usize,
        line_number: u64,
    ) -> StoreResult<()> {
        let len =
            u32::try_from(len).map_err(|_| too_long(self.path, line_number, u32::MAX as usize))?;
        if !self.profile.rules().pi16_entries
            && let Some(feature) = facts.pi16_feature()
        {
            match self.pi16_features.iter_mut().find(|f| f.0 == feature) {
                Some(seen) => seen.2 += 1,
                None => self.pi16_features.push((feature, line_number, 1)),
            }
        }
        self.index
            .push(facts, Body::File { offset, len }, line_number, self.profile)?;
        Ok(())
    }
}

/// No silent misreading: one warning per pi-1.6-only feature the profile does not read as pi
/// 1.6 does, naming its first line and the profile that does.
fn pi16_warnings(
    profile: Profile,
    features: Vec<(&'static str, u64, u64)>,
) -> impl Iterator<Item = Warning> {
    features
        .into_iter()
        .map(move |(feature, line, count)| Warning {
            line,
            message: crate::format::entry::pi16_warning(profile, feature, line, count),
        })
}

/// The harness's header checks, with its messages.
fn strict_header(path: &Path, bytes: &[u8], line_number: u64) -> StoreResult<JsValue> {
    let invalid = |reason: &str| {
        let mut e = harness_invalid(path, reason);
        e.line = Some(line_number);
        e
    };
    let header = json::parse_bytes(bytes)
        .map_err(|_| invalid("first line is not a valid session header"))?;
    let non_empty_string = |key: &str| {
        header
            .get(key)
            .and_then(JsValue::as_js_str)
            .is_some_and(|s| !s.is_empty())
    };
    if header.as_object().is_none()
        || header.get("type").and_then(JsValue::as_str).as_deref() != Some("session")
    {
        return Err(invalid("first line is not a valid session header"));
    }
    if header.get("version") != Some(&JsValue::Number(3.0)) {
        return Err(invalid("unsupported session version"));
    }
    for (key, reason) in [
        ("id", "session header is missing id"),
        ("timestamp", "session header is missing timestamp"),
        ("cwd", "session header is missing cwd"),
    ] {
        if !non_empty_string(key) {
            return Err(invalid(reason));
        }
    }
    if header
        .get("parentSession")
        .is_some_and(|v| v.as_js_str().is_none())
    {
        return Err(invalid("session header parentSession must be a string"));
    }
    if header
        .get("metadata")
        .is_some_and(|v| v.as_object().is_none())
    {
        return Err(invalid("session header metadata must be an object"));
    }
    Ok(header)
}

fn harness_invalid(path: &Path, reason: &str) -> StoreError {
    StoreError::new(
        ErrorKind::InvalidSession,
        format!("Invalid JSONL session file {}: {reason}", path.display()),
    )
    .naming(path)
}

fn not_a_session(path: &Path) -> StoreError {
    StoreError::new(
        ErrorKind::InvalidSession,
        format!("Session file is not a valid pi session: {}", path.display()),
    )
    .naming(path)
}

/// Reads every parsed line as a value, migrates them as pi does and re-serializes them.
fn migrated(
    file: &SessionFile,
    options: &SessionOptions,
    warnings: &mut Vec<Warning>,
) -> StoreResult<(JsValue, Vec<String>)> {
    let mut values = Vec::new();
    let (end, _) = file.indexed();
    let span = Span {
        start: 0,
        end,
        first_line: 1,
    };
    scan_lines(file, span, options.max_line_bytes, |_, _, bytes, read| {
        if let LineRead::Entry(_) = read
            && let Ok(value) = json::parse_bytes(bytes)
        {
            values.push(value);
        }
        Ok(())
    })?;
    // pi draws these ids at random on every open (and then rewrites the file). Here they are
    // drawn from a generator seeded by the session id, so the same file always migrates to
    // the same ids, even when it is only read; and unlike pi, they never collide (a repeat can
    // turn the chain into a cycle).
    let seed = values
        .first()
        .and_then(|header| header.get("id"))
        .map_or(0, |id| stable_hash(id.stringify().as_bytes()));
    let ids = match options.ids.is_deterministic() {
        true => options.ids.clone(),
        false => std::sync::Arc::new(IdSource::deterministic(seed, 0)),
    };
    let mut in_use = std::collections::HashSet::new();
    migrate::migrate(&mut values, || {
        let id = ids.entry_id(EntryIdStyle::V4Prefix, |id| in_use.contains(id));
        in_use.insert(id.clone());
        id
    });
    if !warnings.is_empty() {
        warnings.push(Warning {
            line: 0,
            message: format!(
                "{} unparsable line(s) are not carried into the migrated file",
                warnings.len()
            ),
        });
    }
    let header = values.first().cloned().unwrap_or(JsValue::Null);
    Ok((header, values.iter().map(JsValue::stringify).collect()))
}

/// FNV-1a: a stable seed from bytes (std's hasher is randomly keyed per process).
fn stable_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
