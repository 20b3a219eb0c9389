//! pi-agent-core's `JsonlSessionRepo.list({cwd?})`: the harness's own listing. Only the first
//! line of each file is read (the header, checked as strictly as the harness checks it); a file
//! whose header is not one (`invalid_session`) is left out, any other failure fails the listing,
//! and the sessions come newest `createdAt` first.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::format::js_date::parse_date;
use crate::format::json::{self, JsObject, JsValue};
use crate::format::profile::Profile;
use crate::repo::listing::Pi16Note;
use crate::repo::paths::join;
use crate::repo::scan::open_regular;
use crate::repo::{Repo, RepoError};

/// A header line longer than this is refused as unreadable (the harness would read it whole).
const MAX_HEADER_LINE: u64 = 16 * 1024 * 1024;

/// The harness's `SessionMetadata`: what the header says, and where the file is.
#[derive(Clone, Debug, PartialEq)]
pub struct HarnessSession {
    /// The session file.
    pub path: String,
    /// The header `id`.
    pub id: JsValue,
    /// The header `timestamp`.
    pub created_at: JsValue,
    /// The header `cwd`.
    pub cwd: JsValue,
    /// The header `parentSession`, if any.
    pub parent_session_path: Option<JsValue>,
    /// The header `metadata`, if any.
    pub metadata: Option<JsValue>,
}

impl HarnessSession {
    /// `{id, createdAt, cwd, path, parentSessionPath?, metadata?}`, in the harness's key order.
    pub fn to_js_value(&self) -> JsValue {
        let mut row = JsObject::new();
        row.insert("id".into(), self.id.clone());
        row.insert("createdAt".into(), self.created_at.clone());
        row.insert("cwd".into(), self.cwd.clone());
        row.insert("path".into(), JsValue::from(self.path.as_str()));
        if let Some(parent) = &self.parent_session_path {
            row.insert("parentSessionPath".into(), parent.clone());
        }
        if let Some(metadata) = &self.metadata {
            row.insert("metadata".into(), metadata.clone());
        }
        JsValue::Object(row)
    }

    fn created_ms(&self) -> Option<i64> {
        self.created_at
            .as_str()
            .and_then(|text| parse_date(&text).date.millis())
    }
}

/// A file the harness listing left out: its header is not a harness header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HarnessSkip {
    /// The file.
    pub path: String,
    /// The harness's `invalid_session` message.
    pub reason: String,
}

/// The harness's `SessionManager.list`: its sessions and the files it left out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HarnessListing {
    /// The sessions, in the harness's order.
    pub sessions: Vec<HarnessSession>,
    /// The files left out.
    pub skipped: Vec<HarnessSkip>,
    /// Listed files holding what only pi 1.6 writes, which the harness does not read as pi
    /// 1.6 does (found by reading every listed file through the listing cache).
    pub pi16_notes: Vec<Pi16Note>,
}

impl Repo {
    /// The harness's listing under `sessions_root` (default: this repo's sessions root): the
    /// directory of `cwd` (encoded as given), or every project directory (real directories
    /// only, as `lstat` reports them) when `cwd` is absent or empty.
    pub fn harness_list(
        &self,
        cwd: Option<&str>,
        sessions_root: Option<&str>,
    ) -> Result<HarnessListing, RepoError> {
        let env = self.env();
        let root_setting = sessions_root
            .filter(|r| !r.is_empty())
            .map_or_else(|| env.sessions_root(), str::to_string);
        let root = env.harness_root(&root_setting);
        let dirs = match cwd.filter(|c| !c.is_empty()) {
            Some(cwd) => vec![env.harness_session_dir(&root_setting, cwd)],
            None => project_dirs(&root)?,
        };
        let mut listing = HarnessListing::default();
        for dir in &dirs {
            if std::fs::symlink_metadata(dir).is_err() {
                continue;
            }
            for path in session_files(dir)? {
                match read_header(&path)? {
                    Ok(session) => listing.sessions.push(session),
                    Err(reason) => listing.skipped.push(HarnessSkip { path, reason }),
                }
            }
        }
        // The harness reads only headers; whether the rest holds what only pi 1.6 writes comes
        // from pi's listing scan of the same directories (cached like any listing).
        let (_, pi16_files) = self.list_dirs(&dirs);
        let listed: std::collections::HashSet<&str> =
            listing.sessions.iter().map(|s| s.path.as_str()).collect();
        let pi16_files = pi16_files
            .into_iter()
            .filter(|(path, _)| path.to_str().is_some_and(|p| listed.contains(p)))
            .collect();
        listing.pi16_notes = Pi16Note::of_files(Profile::Harness, pi16_files);
        // `new Date(b.createdAt) - new Date(a.createdAt)`, stable; invalid dates go last
        // (the harness's comparator gives NaN for them, which is no order at all).
        listing
            .sessions
            .sort_by(|a, b| match (a.created_ms(), b.created_ms()) {
                (Some(x), Some(y)) => y.cmp(&x),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            });
        Ok(listing)
    }
}

/// The real directories of the root, by name (`readdir` order); none when it is missing.
fn project_dirs(root: &str) -> Result<Vec<String>, RepoError> {
    if std::fs::symlink_metadata(root).is_err() {
        return Ok(Vec::new());
    }
    let mut names = Vec::new();
    let entries = std::fs::read_dir(root).map_err(|e| RepoError::io("list", root, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| RepoError::io("list", root, e))?;
        let kind = entry
            .file_type()
            .map_err(|e| RepoError::io("stat", entry.path(), e))?;
        if kind.is_dir() {
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort_unstable();
    Ok(names.iter().map(|name| join(&[root, name])).collect())
}

/// The `*.jsonl` entries of `dir` that are files or symlinks (`lstat`; FIFOs, sockets and
/// devices are passed over, as the harness's `listDir` does), by name.
fn session_files(dir: &str) -> Result<Vec<String>, RepoError> {
    let mut names = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| RepoError::io("list", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| RepoError::io("list", dir, e))?;
        let kind = entry
            .file_type()
            .map_err(|e| RepoError::io("stat", entry.path(), e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if (kind.is_file() || kind.is_symlink()) && name.ends_with(".jsonl") {
            names.push(name);
        }
    }
    names.sort_unstable();
    Ok(names.iter().map(|name| join(&[dir, name])).collect())
}

/// The first line of `path` as Node's `readline` gives it (ending at `\n`, `\r\n` or a lone
/// `\r`), checked as the harness checks a header: `Ok(Err(reason))` is `invalid_session`.
fn read_header(path: &str) -> Result<Result<HarnessSession, String>, RepoError> {
    let (file, _) = open_regular(Path::new(path)).map_err(|e| RepoError::io("read", path, e))?;
    let mut line = Vec::new();
    let mut source = file.take(MAX_HEADER_LINE + 1);
    let mut chunk = [0u8; 8192];
    loop {
        let n = source
            .read(&mut chunk)
            .map_err(|e| RepoError::io("read", path, e))?;
        if n == 0 {
            break;
        }
        match chunk[..n].iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(end) => {
                line.extend_from_slice(&chunk[..end]);
                break;
            }
            None => line.extend_from_slice(&chunk[..n]),
        }
        if line.len() as u64 > MAX_HEADER_LINE {
            let reason = std::io::Error::other("its first line is longer than 16 MiB");
            return Err(RepoError::io("read", PathBuf::from(path), reason));
        }
    }
    Ok(check_header(path, &line))
}

fn invalid(path: &str, message: &str) -> String {
    format!("Invalid JSONL session file {path}: {message}")
}

/// pi-agent-core's `parseHeaderLine`, after `line?.trim()`.
fn check_header(path: &str, line: &[u8]) -> Result<HarnessSession, String> {
    let text = String::from_utf8_lossy(line);
    if text.trim_matches(is_js_whitespace).is_empty() {
        return Err(invalid(path, "missing session header"));
    }
    let not_header = || invalid(path, "first line is not a valid session header");
    let header = match json::parse_bytes(text.as_bytes()) {
        Ok(value @ JsValue::Object(_)) => value,
        _ => return Err(not_header()),
    };
    let text_field = |key: &str| match header.get(key) {
        Some(value @ JsValue::String(s)) if !s.is_empty() => Some(value.clone()),
        _ => None,
    };
    if header.get("type").and_then(JsValue::as_str).as_deref() != Some("session") {
        return Err(not_header());
    }
    if header.get("version").and_then(JsValue::as_f64) != Some(3.0) {
        return Err(invalid(path, "unsupported session version"));
    }
    let id = text_field("id").ok_or_else(|| invalid(path, "session header is missing id"))?;
    let created_at = text_field("timestamp")
        .ok_or_else(|| invalid(path, "session header is missing timestamp"))?;
    let cwd = text_field("cwd").ok_or_else(|| invalid(path, "session header is missing cwd"))?;
    let parent_session_path = match header.get("parentSession") {
        None => None,
        Some(value @ JsValue::String(_)) => Some(value.clone()),
        Some(_) => {
            return Err(invalid(
                path,
                "session header parentSession must be a string",
            ));
        }
    };
    let metadata = match header.get("metadata") {
        None => None,
        Some(value @ JsValue::Object(_)) => Some(value.clone()),
        Some(_) => return Err(invalid(path, "session header metadata must be an object")),
    };
    Ok(HarnessSession {
        path: path.to_string(),
        id,
        created_at,
        cwd,
        parent_session_path,
        metadata,
    })
}

/// What JavaScript's `String.prototype.trim` removes.
fn is_js_whitespace(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_checked_as_the_harness_checks_them() {
        let ok = r#"{"type":"session","version":3,"id":"a","timestamp":"t","cwd":"/c","metadata":{"k":1}}"#;
        let session = check_header("/f.jsonl", ok.as_bytes()).unwrap();
        assert_eq!(
            session.to_js_value().stringify(),
            r#"{"id":"a","createdAt":"t","cwd":"/c","path":"/f.jsonl","metadata":{"k":1}}"#
        );
        for (line, message) in [
            ("  ", "missing session header"),
            ("\u{feff}", "missing session header"),
            ("[1]", "first line is not a valid session header"),
            ("\u{feff}{}", "first line is not a valid session header"),
            (
                r#"{"type":"session","version":2}"#,
                "unsupported session version",
            ),
            (
                r#"{"type":"session","version":3,"id":""}"#,
                "session header is missing id",
            ),
            (
                r#"{"type":"session","version":3,"id":"a","timestamp":"t","cwd":"/c","parentSession":5}"#,
                "session header parentSession must be a string",
            ),
            (
                r#"{"type":"session","version":3,"id":"a","timestamp":"t","cwd":"/c","metadata":[]}"#,
                "session header metadata must be an object",
            ),
        ] {
            assert_eq!(
                check_header("/f.jsonl", line.as_bytes()).unwrap_err(),
                invalid("/f.jsonl", message),
                "{line}"
            );
        }
    }
}
