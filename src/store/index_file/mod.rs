//! The persisted index: what reading a session file produced (entry facts, byte ranges, the
//! reader's warnings and state after the last complete line), kept in a cache directory so the
//! next open reads only what changed. Derived data: deleting it only costs a full read.
//!
//! One file per session file and profile, named by a hash of the canonical path and the
//! profile, in a directory of its own (never pi's folders). It is trusted only when its magic,
//! format version, checksum, program version, reading rules, profile, options and path all
//! match, and when the session file is the same file (device, inode) with the same bytes where
//! sampled (its head, the block before the indexed end, strided blocks between). A file that
//! only grew is read from the indexed end (the last complete line) by the ordinary reader; any
//! other change, or any doubt, means a full read and a new index, with a log line.
//!
//! Safety: the directory must be a real directory (a symlink there is refused, and reading
//! goes on without an index); index files are opened without following symlinks, written to
//! an unpredictably named 0600 temporary beside them and renamed over, and only ever under
//! that directory.

mod codec;
mod sections;
pub(crate) mod tree_file;

use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Once};

use crate::format::json;

use super::checkpoint::{Checkpoint, PARSE_RULES_VERSION, Resume, Warning};
use super::file::SessionFile;
use super::index::Index;
use super::options::SessionOptions;
use super::safe_file::{self, Access};
use super::stats::SessionStats;
use codec::{Corrupt, Decoded, IndexReader, Reader, Writer};

/// Turns the index off (any value but empty or `0`).
pub(crate) const ENV_OFF: &str = "PI_SESSION_NO_INDEX";
/// Where the index lives instead of `$XDG_CACHE_HOME/pi-session` (or `~/.cache/pi-session`).
pub(crate) const ENV_DIR: &str = "PI_SESSION_INDEX_DIR";
/// The most bytes the index directory may hold before the least recently written go.
pub(crate) const ENV_MAX_BYTES: &str = "PI_SESSION_INDEX_MAX_BYTES";

/// The extension of the tree facts filed beside an index (see [`tree_file`]).
const TREE_EXTENSION: &str = "tree";

/// Bytes per sampled block.
const SAMPLE: u64 = 4096;
/// Strided blocks between the head and the end.
const STRIDES: u64 = 4;

/// The session file's identity when it was indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
}

impl Identity {
    fn of(file: &SessionFile) -> std::io::Result<Identity> {
        let meta = file.file().metadata()?;
        Ok(Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.len(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        })
    }
}

/// Where a session's index is and what it must say to be trusted.
#[derive(Debug)]
pub(crate) struct IndexPlace {
    dir: Arc<Path>,
    /// The session file's canonical path.
    canonical: PathBuf,
    file: PathBuf,
}

impl IndexPlace {
    /// `None` when the session's path cannot be resolved.
    pub(crate) fn of(
        dir: Arc<Path>,
        session: &Path,
        options: &SessionOptions,
    ) -> Option<IndexPlace> {
        let canonical = std::fs::canonicalize(session).ok()?;
        let mut key = canonical.as_os_str().as_encoded_bytes().to_vec();
        key.push(0);
        key.extend_from_slice(options.profile.name().as_bytes());
        let name = format!("{:032x}.idx", xxhash_rust::xxh3::xxh3_128(&key));
        let file = dir.join(name);
        Some(IndexPlace {
            dir,
            canonical,
            file,
        })
    }

    fn stats_file(&self) -> PathBuf {
        self.file.with_extension("stats")
    }

    fn tree_file(&self) -> PathBuf {
        self.file.with_extension(TREE_EXTENSION)
    }

    /// Whether the directory is one this program may read and write: a real directory (not
    /// a symlink), created 0700 when missing.
    fn usable_dir(&self, create: bool) -> Result<(), String> {
        match std::fs::symlink_metadata(&self.dir) {
            Ok(meta) if meta.file_type().is_dir() => Ok(()),
            Ok(_) => Err(format!(
                "{} is not a directory (a symlink or a file): index not used",
                self.dir.display()
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
                use std::os::unix::fs::DirBuilderExt;
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&self.dir)
                    .map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
                self.usable_dir(false)
            }
            Err(e) => Err(format!("{}: {e}", self.dir.display())),
        }
    }
}

/// What an index held beyond the reader's state: the key its stats are filed under.
pub(crate) struct Restored {
    pub(crate) resume: Resume,
    pub(crate) generation: u64,
}

/// The reader's state from `place`'s index when it is valid for `file` as it is now (the same
/// bytes up to the indexed end; the file may have grown after it). `None`, with a log line
/// saying why, when there is no index or it cannot be trusted.
pub(crate) fn restore(
    place: &IndexPlace,
    file: &SessionFile,
    options: &SessionOptions,
) -> Option<Restored> {
    if let Err(why) = place.usable_dir(false) {
        if place.dir.exists() || std::fs::symlink_metadata(&place.dir).is_ok() {
            tracing::warn!("{why}");
        }
        return None;
    }
    let index_file = match safe_file::open_regular(&place.file, Access::Read, false) {
        Ok(index_file) => index_file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::info!("{}: index not read: {e}", place.file.display());
            return None;
        }
    };
    match decode(place, file, options, &index_file) {
        Ok(restored) => Some(restored),
        Err(Corrupt(why)) => {
            tracing::info!(
                "{}: index for {} rebuilt: {why}",
                place.file.display(),
                file.path().display()
            );
            None
        }
    }
}

fn decode(
    place: &IndexPlace,
    file: &SessionFile,
    options: &SessionOptions,
    index_file: &std::fs::File,
) -> Decoded<Restored> {
    let mut reader = IndexReader::open(index_file)?;
    let header = std::mem::take(&mut reader.header);
    let mut r = Reader::new(&header);
    if r.str()? != env!("CARGO_PKG_VERSION") {
        return Err(Corrupt("written by another version of pi-session"));
    }
    if r.u64()? != u64::from(PARSE_RULES_VERSION) {
        return Err(Corrupt("written under other reading rules"));
    }
    if r.str()? != options.profile.name() || r.u64()? != options.max_line_bytes as u64 {
        return Err(Corrupt("written for another profile or line limit"));
    }
    if r.str()?.as_bytes() != place.canonical.as_os_str().as_encoded_bytes() {
        return Err(Corrupt("the index of another file"));
    }
    let generation = r.u64()?;
    let indexed = Identity {
        dev: r.u64()?,
        ino: r.u64()?,
        size: r.u64()?,
        mtime_ns: i128::from(r.u64()? as i64) * 1_000_000_000 + i128::from(r.u64()?),
    };
    let now = Identity::of(file).map_err(|_| Corrupt("cannot stat the session file"))?;
    let end = r.u64()?;
    if (now.dev, now.ino) != (indexed.dev, indexed.ino) {
        return Err(Corrupt("the session file was replaced"));
    }
    if now.size < end || now.size < indexed.size {
        return Err(Corrupt("the session file was cut"));
    }
    if now.size == indexed.size && now.mtime_ns != indexed.mtime_ns {
        return Err(Corrupt("the session file was rewritten in place"));
    }
    let samples = r.var()?;
    for _ in 0..samples {
        let (offset, len, sum) = (r.u64()?, r.u64()?, r.u64()?);
        let mut block = vec![0u8; len.min(SAMPLE) as usize];
        file.file()
            .read_exact_at(&mut block, offset)
            .map_err(|_| Corrupt("cannot read a sampled block"))?;
        if xxhash_rust::xxh3::xxh3_64(&block) != sum {
            return Err(Corrupt("the session file's bytes changed"));
        }
    }
    let lines = r.u64()?;
    let non_blank = r.u64()?;
    let header_span = (r.u64()?, r.u64()?);
    let mut pi16_features = Vec::new();
    for _ in 0..r.var()? {
        let name = r.str()?;
        let name = crate::format::entry::PI16_FEATURES
            .iter()
            .find(|known| **known == name)
            .ok_or(Corrupt("unknown pi 1.6 feature"))?;
        pi16_features.push((*name, r.u64()?, r.u64()?));
    }
    let mut warnings = Vec::new();
    for _ in 0..r.var()? {
        let line = r.u64()?;
        warnings.push(Warning {
            line,
            message: r.str()?.to_string(),
        });
    }
    let lengths = sections::read_lengths(&mut r)?;
    if !r.is_done() {
        return Err(Corrupt("trailing header bytes"));
    }
    let arrays = sections::read(&mut reader, &lengths)?;
    reader.finish()?;
    let count = arrays.records.len();
    let index = Index::from_parts(
        arrays.records,
        arrays.extras,
        arrays.interned,
        arrays.texts,
        options.profile,
    )
    .map_err(Corrupt)?;
    // The header is read back from the session file itself (inside the sampled head, or
    // checked by its parse), exactly as a full read parses it.
    let header_len = usize::try_from(header_span.1).map_err(|_| Corrupt("header length"))?;
    let header_bytes = file
        .read_at(header_span.0, header_len)
        .map_err(|_| Corrupt("cannot read the header line"))?;
    let header = json::parse_bytes(&header_bytes).map_err(|_| Corrupt("header line"))?;
    if end > 0 && header_span.0 + header_span.1 > end {
        return Err(Corrupt("header outside the indexed bytes"));
    }
    Ok(Restored {
        resume: Resume {
            header,
            index,
            checkpoint: Checkpoint {
                end,
                lines,
                records: count,
                warnings,
                non_blank,
                pi16_features,
                header_span,
            },
        },
        generation,
    })
}

/// Writes `place`'s index for what `file` read up to `checkpoint` (whose records are the
/// first `checkpoint.records` of `index`). Failures are logged, never returned: the index is
/// a cache.
pub(crate) fn save(
    place: &IndexPlace,
    file: &SessionFile,
    options: &SessionOptions,
    checkpoint: &Checkpoint,
    index: &Index,
    generation: u64,
) {
    if let Err(why) = place.usable_dir(true) {
        tracing::warn!("{why}");
        return;
    }
    let Ok(identity) = Identity::of(file) else {
        return;
    };
    let mut w = Writer::default();
    w.str(env!("CARGO_PKG_VERSION"));
    w.u64(u64::from(PARSE_RULES_VERSION));
    w.str(options.profile.name());
    w.u64(options.max_line_bytes as u64);
    let Some(path) = place.canonical.to_str() else {
        return;
    };
    w.str(path);
    w.u64(generation);
    w.u64(identity.dev);
    w.u64(identity.ino);
    w.u64(identity.size);
    w.u64(identity.mtime_ns.div_euclid(1_000_000_000) as i64 as u64);
    w.u64(identity.mtime_ns.rem_euclid(1_000_000_000) as u64);
    w.u64(checkpoint.end);
    let blocks = sample_blocks(checkpoint.end);
    w.var(blocks.len() as u64);
    for (offset, len) in blocks {
        let Ok(block) = file.read_at(offset, len as usize) else {
            return;
        };
        w.u64(offset);
        w.u64(len);
        w.u64(xxhash_rust::xxh3::xxh3_64(&block));
    }
    w.u64(checkpoint.lines);
    w.u64(checkpoint.non_blank);
    w.u64(checkpoint.header_span.0);
    w.u64(checkpoint.header_span.1);
    w.var(checkpoint.pi16_features.len() as u64);
    for (name, first, count) in &checkpoint.pi16_features {
        w.str(name);
        w.u64(*first);
        w.u64(*count);
    }
    w.var(checkpoint.warnings.len() as u64);
    for warning in &checkpoint.warnings {
        w.u64(warning.line);
        w.str(&warning.message);
    }
    // Only entries whose bodies are in the file are ever persisted.
    let Some(parts) = index.parts(checkpoint.records) else {
        return;
    };
    sections::write_lengths(&mut w, &parts);
    let arrays = sections::bytes(&parts);
    let head = codec::index_head(&w.bytes, &arrays);
    let mut pieces = vec![head.as_slice()];
    pieces.extend(arrays);
    write_file(place, &place.file, &pieces);
    prune_once(&place.dir, options.index_max_bytes);
}

/// The head, the block before `end`, and strided blocks between: never the whole file.
fn sample_blocks(end: u64) -> Vec<(u64, u64)> {
    let mut blocks = vec![(0, end.min(SAMPLE))];
    for k in 1..=STRIDES {
        let at = (end * k / (STRIDES + 1)) / SAMPLE * SAMPLE;
        blocks.push((at, SAMPLE.min(end - at)));
    }
    let tail = end.saturating_sub(SAMPLE);
    blocks.push((tail, end - tail));
    blocks.retain(|(_, len)| *len > 0);
    blocks.dedup();
    blocks
}

fn write_file(place: &IndexPlace, target: &Path, pieces: &[&[u8]]) {
    debug_assert!(target.starts_with(&place.dir));
    let written = safe_file::temporary_beside(target).and_then(|mut temporary| {
        let mut out = std::io::BufWriter::new(&mut temporary);
        for piece in pieces {
            std::io::Write::write_all(&mut out, piece)?;
        }
        std::io::Write::flush(&mut out)?;
        drop(out);
        // Derived data: no sync; a torn file fails its checksum and is rebuilt.
        temporary.persist(target).map_err(|e| e.error).map(|_| ())
    });
    if let Err(e) = written {
        tracing::warn!("{}: index not written: {e}", target.display());
    }
}

/// Stats over the first `records` entries, filed under the index's generation (they stay
/// true while the index only grows).
pub(crate) fn load_stats(place: &IndexPlace, generation: u64) -> Option<(usize, SessionStats)> {
    let bytes = safe_file::read_regular(&place.stats_file(), false).ok()?;
    let body = codec::body(&bytes).ok()?;
    let mut r = Reader::new(body);
    if r.u64().ok()? != generation {
        return None;
    }
    let records = r.u64().ok()? as usize;
    let mut counts = [0u64; 5];
    for c in &mut counts {
        *c = r.u64().ok()?;
    }
    let mut sums = [0f64; 6];
    for s in &mut sums {
        *s = r.f64().ok()?;
    }
    let [
        message_count,
        user_messages,
        assistant_messages,
        tool_results,
        tool_calls,
    ] = counts;
    let [input, output, cache_read, cache_write, total, cost] = sums;
    Some((
        records,
        SessionStats {
            message_count,
            user_messages,
            assistant_messages,
            tool_results,
            tool_calls,
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
            total_tokens: total,
            cost_total: cost,
        },
    ))
}

pub(crate) fn save_stats(
    place: &IndexPlace,
    generation: u64,
    records: usize,
    stats: &SessionStats,
) {
    if place.usable_dir(false).is_err() {
        return;
    }
    let mut w = Writer::default();
    w.u64(generation);
    w.u64(records as u64);
    for c in [
        stats.message_count,
        stats.user_messages,
        stats.assistant_messages,
        stats.tool_results,
        stats.tool_calls,
    ] {
        w.u64(c);
    }
    for s in [
        stats.input_tokens,
        stats.output_tokens,
        stats.cache_read_tokens,
        stats.cache_write_tokens,
        stats.total_tokens,
        stats.cost_total,
    ] {
        w.f64(s);
    }
    write_file(place, &place.stats_file(), &[&w.finish()]);
}

/// Once per process, after a write: removes the indexes of files that no longer exist, then
/// the least recently written ones while the directory holds more than its bound.
fn prune_once(dir: &Path, max_bytes: u64) {
    static PRUNED: Once = Once::new();
    PRUNED.call_once(|| prune(dir, max_bytes));
}

/// The store index's database files in the index directory begin with this
/// (`crate::catalog`): they count in the directory's bound, but are not pruned here (the
/// store index is one file that every search and figure needs; the per-session indexes go
/// first).
pub const STORE_INDEX_PREFIX: &str = "store-index-";

/// See [`prune_once`]; public for tests and for the store index after it grew.
pub fn prune(dir: &Path, max_bytes: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut kept = Vec::new();
    // Bytes that count in the bound but are not pruned here: the store index's databases.
    let mut fixed: u64 = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(STORE_INDEX_PREFIX))
        {
            fixed += std::fs::symlink_metadata(&path).map_or(0, |m| m.len());
            continue;
        }
        if path.extension().is_none_or(|e| e != "idx") {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let stats = path.with_extension("stats");
        let tree = path.with_extension(TREE_EXTENSION);
        let sidecars_len = [&stats, &tree]
            .iter()
            .map(|p| std::fs::symlink_metadata(p).map_or(0, |m| m.len()))
            .sum::<u64>();
        match indexed_path(&path) {
            Some(session) if !session.exists() => {
                tracing::info!(
                    "{}: index removed, {} is gone",
                    path.display(),
                    session.display()
                );
                let _ = std::fs::remove_file(&path);
                let _ = std::fs::remove_file(&stats);
                let _ = std::fs::remove_file(&tree);
            }
            _ => kept.push((meta.mtime(), meta.len() + sidecars_len, path)),
        }
    }
    let mut total: u64 = fixed + kept.iter().map(|k| k.1).sum::<u64>();
    kept.sort();
    for (_, len, path) in kept {
        if total <= max_bytes {
            break;
        }
        tracing::info!(
            "{}: index removed (the index directory is full)",
            path.display()
        );
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(path.with_extension("stats"));
        let _ = std::fs::remove_file(path.with_extension(TREE_EXTENSION));
        total -= len;
    }
    if fixed > max_bytes {
        tracing::warn!(
            "the store index in {} alone takes {} bytes, over the index directory's bound of {max_bytes} ({ENV_MAX_BYTES})",
            dir.display(),
            fixed
        );
    }
}

/// The session path an index file names, read from its first bytes.
fn indexed_path(index: &Path) -> Option<PathBuf> {
    let file = safe_file::open_regular(index, Access::Read, false).ok()?;
    let head = safe_file::read_prefix(&file, 8192).ok()?;
    // The header follows the preamble and the header's length.
    let body = head.get(codec::PREAMBLE + 8..)?;
    if head.get(..8)? != codec::MAGIC {
        return None;
    }
    let mut r = Reader::new(body);
    r.str().ok()?;
    r.u64().ok()?;
    r.str().ok()?;
    r.u64().ok()?;
    Some(PathBuf::from(r.str().ok()?))
}

#[cfg(test)]
mod prune_tests {
    use super::*;

    #[test]
    fn the_store_index_counts_in_the_bound_and_is_not_pruned() {
        let dir = tempfile::tempdir().unwrap();
        // Three per-session indexes of 100 bytes (not readable as ours: kept unless the
        // directory is over its bound) and a store index database of 250 bytes.
        for name in ["a.idx", "b.idx", "c.idx"] {
            std::fs::write(dir.path().join(name), [0u8; 100]).unwrap();
        }
        let database = dir
            .path()
            .join(format!("{STORE_INDEX_PREFIX}pi-cli.sqlite3"));
        std::fs::write(&database, [0u8; 250]).unwrap();
        let left = || {
            let mut names: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        // 300 bytes of .idx alone fit in 400; with the database (550) two must go.
        prune(dir.path(), 400);
        assert_eq!(left().len(), 2, "{:?}", left());
        assert!(database.exists(), "the database is never pruned");
        // Over the bound by the database alone: every .idx goes, the database stays.
        prune(dir.path(), 200);
        assert_eq!(left(), vec![format!("{STORE_INDEX_PREFIX}pi-cli.sqlite3")]);
    }
}
