//! pi's `continueRecent` choice (`pi -c`): the session file with the newest modification time
//! among those whose header is valid. Opening or creating the session is the store's job.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::format::json::{self, JsValue};
use crate::format::profile::Profile;
use crate::repo::listing::session_file_names;
use crate::repo::paths::join;
use crate::repo::scan::open_regular;
use crate::repo::stamp::FileStamp;
use crate::repo::{Repo, RepoError};

/// pi reads at most this much of a file looking for its header (`MAX_SESSION_HEADER_SCAN_BYTES`).
const HEADER_SCAN_LIMIT: u64 = 1024 * 1024;
const READ_CHUNK: usize = 64 * 1024;

impl Repo {
    /// The file pi's `SessionManager.continueRecent(cwd, sessionDir)` would open, or `None`
    /// when it would start a new session. Files are ranked by modification time (not by
    /// activity, unlike the listing), ties by name; the first with a valid header wins (and,
    /// for an explicit session directory other than the default one, whose header cwd
    /// matches). Errors while looking are "no candidate", as in pi.
    pub fn continue_recent_candidate(
        &self,
        cwd: &str,
        session_dir: Option<&str>,
    ) -> Result<Option<PathBuf>, RepoError> {
        self.continue_recent_candidate_as(Profile::PiCli, cwd, session_dir)
    }

    /// [`Repo::continue_recent_candidate`] as `profile`'s pi chooses. pi 1.6 `stat`s every
    /// `*.jsonl` first and ranks by the exact `mtimeMs`; one that cannot be `stat`ed (a dangling
    /// symlink, a file deleted meanwhile) makes it start a new session (`None`), as here.
    pub fn continue_recent_candidate_as(
        &self,
        profile: Profile,
        cwd: &str,
        session_dir: Option<&str>,
    ) -> Result<Option<PathBuf>, RepoError> {
        let dir = self.env().session_dir_as(profile, cwd, session_dir)?;
        // pi passes the cwd only when filtering, and an empty one filters nothing.
        let filter = dir.cwd_filter.filter(|_| !cwd.is_empty());
        let io_dir = self.env().io_path(&dir.path);
        let Ok(names) = session_file_names(&io_dir) else {
            return Ok(None);
        };
        let mut candidates: Vec<(f64, &String)> = Vec::new();
        for name in &names.sessions {
            let meta = match std::fs::metadata(io_dir.join(name)) {
                Ok(meta) => meta,
                Err(_) if profile.rules().recent_exact_times => return Ok(None),
                Err(_) => continue,
            };
            // Only regular files: opening a FIFO would block (pi would hang there).
            if meta.is_file() {
                let stamp = FileStamp::of(&meta);
                let mtime = match profile.rules().recent_exact_times {
                    true => stamp.mtime_ms_exact(),
                    false => stamp.mtime_ms(),
                };
                candidates.push((mtime, name));
            }
        }
        // Stable: equal times keep name order, as pi's sort does.
        candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (_, name) in candidates {
            let Some(header) = discovery_header(&io_dir.join(name)) else {
                continue;
            };
            let matches = match &filter {
                None => true,
                Some(filter) => header
                    .cwd
                    .as_deref()
                    .is_some_and(|cwd| self.env().cwd_matches(cwd, filter)),
            };
            if matches {
                return Ok(Some(PathBuf::from(join(&[&dir.path, name]))));
            }
        }
        Ok(None)
    }
}

impl Repo {
    /// pi 1.6's `SessionManager.findById(cwd, id, sessionDir)`: the first `*.jsonl` of the
    /// directory, in `readdir` (byte) order, whose header id is exactly `id` (and, in a custom
    /// directory, whose header cwd matches). Only the header is read. pi 1.6 creates the
    /// default directory when it is missing; this never does.
    pub fn find_by_id(
        &self,
        cwd: &str,
        id: &str,
        session_dir: Option<&str>,
    ) -> Result<Option<PathBuf>, RepoError> {
        let dir = self.env().session_dir_as(Profile::Pi16, cwd, session_dir)?;
        let io_dir = self.env().io_path(&dir.path);
        let Ok(names) = session_file_names(&io_dir) else {
            return Ok(None);
        };
        for name in &names.sessions {
            // FIFOs and devices are never opened (pi would wait on a FIFO forever).
            if !std::fs::metadata(io_dir.join(name)).is_ok_and(|m| m.is_file()) {
                continue;
            }
            let Some(header) = discovery_header(&io_dir.join(name)) else {
                continue;
            };
            if header.id.as_deref() != Some(id) {
                continue;
            }
            if let Some(filter) = &dir.cwd_filter
                && !header
                    .cwd
                    .as_deref()
                    .is_some_and(|cwd| self.env().cwd_matches(cwd, filter))
            {
                continue;
            }
            return Ok(Some(PathBuf::from(join(&[&dir.path, name]))));
        }
        Ok(None)
    }
}

impl Repo {
    /// pi 0.82.1's way to an exact session id (it has no `findById`): the first row of
    /// [`Repo::list`] (newest first) whose id is `id`.
    pub fn find_by_id_in_list(
        &self,
        cwd: &str,
        id: &str,
        session_dir: Option<&str>,
    ) -> Result<Option<PathBuf>, RepoError> {
        let listing = self.list(cwd, session_dir)?;
        Ok(listing
            .sessions
            .into_iter()
            .find(|s| s.id.as_ref().and_then(JsValue::as_str).as_deref() == Some(id))
            .map(|s| s.path))
    }
}

/// A header found by the bounded discovery scan.
pub(crate) struct DiscoveredHeader {
    /// The header `id` (a string, or the header would not count).
    pub id: Option<String>,
    /// The header `cwd` when it is a string.
    pub cwd: Option<String>,
}

/// What one line says during discovery.
enum Candidate {
    /// Blank, unparsable or falsy: keep looking.
    Continue,
    /// The first value is not a header with a string id.
    Invalid,
    Header(DiscoveredHeader),
}

fn candidate(line: &[u8]) -> Candidate {
    let value = match json::parse_bytes(line) {
        Ok(value) if value.is_truthy() => value,
        _ => return Candidate::Continue,
    };
    let is_header = matches!(value.get("type"), Some(JsValue::String(t)) if t.escaped() == "session")
        && matches!(value.get("id"), Some(JsValue::String(_)));
    if !is_header {
        return Candidate::Invalid;
    }
    Candidate::Header(DiscoveredHeader {
        id: value
            .get("id")
            .and_then(JsValue::as_str)
            .map(|id| id.into_owned()),
        cwd: value
            .get("cwd")
            .and_then(JsValue::as_str)
            .map(|c| c.into_owned()),
    })
}

/// pi's `readSessionHeader` as discovery uses it: lines split at `\n` only, the first parsed
/// value must be a header with a string `id`, and only lines complete within the first MiB
/// count (a file that goes on beyond it without a decision has no valid header). Unreadable
/// files have none either.
pub(crate) fn discovery_header(path: &Path) -> Option<DiscoveredHeader> {
    let (file, _) = open_regular(path).ok()?;
    // One byte more than the limit tells "ends exactly at the limit" from "goes on".
    let mut source = file.take(HEADER_SCAN_LIMIT + 1);
    let mut line: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut scanned: u64 = 0;
    loop {
        let room = (HEADER_SCAN_LIMIT - scanned).min(READ_CHUNK as u64) as usize;
        if room == 0 {
            let mut probe = [0u8; 1];
            return match source.read(&mut probe).ok()? {
                0 => final_candidate(&line),
                _ => None,
            };
        }
        let n = source.read(&mut chunk[..room]).ok()?;
        if n == 0 {
            return final_candidate(&line);
        }
        scanned += n as u64;
        let mut rest = &chunk[..n];
        while let Some(at) = memchr::memchr(b'\n', rest) {
            line.extend_from_slice(&rest[..at]);
            match candidate(&line) {
                Candidate::Continue => line.clear(),
                Candidate::Invalid => return None,
                Candidate::Header(header) => return Some(header),
            }
            rest = &rest[at + 1..];
        }
        line.extend_from_slice(rest);
    }
}

fn final_candidate(line: &[u8]) -> Option<DiscoveredHeader> {
    match candidate(line) {
        Candidate::Header(header) => Some(header),
        Candidate::Continue | Candidate::Invalid => None,
    }
}
