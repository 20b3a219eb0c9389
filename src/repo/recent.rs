//! pi's `continueRecent` choice (`pi -c`): the session file with the newest modification time
//! among those whose header is valid. Opening or creating the session is the store's job.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::format::json::{self, JsValue};
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
        let dir = self.env().session_dir(cwd, session_dir)?;
        // pi passes the cwd only when filtering, and an empty one filters nothing.
        let filter = dir.cwd_filter.filter(|_| !cwd.is_empty());
        let io_dir = self.env().io_path(&dir.path);
        let Ok(names) = session_file_names(&io_dir) else {
            return Ok(None);
        };
        let mut candidates: Vec<(f64, &String)> = names
            .sessions
            .iter()
            .filter_map(|name| {
                let meta = std::fs::metadata(io_dir.join(name)).ok()?;
                // Only regular files: opening a FIFO would block (pi would hang there).
                meta.is_file()
                    .then(|| (FileStamp::of(&meta).mtime_ms(), name))
            })
            .collect();
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

/// A header found by the bounded discovery scan.
pub(crate) struct DiscoveredHeader {
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
