//! Builders of session files and directories.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Writes a file and gives it a modification time `seconds` after 2026-01-01.
pub fn write_file(path: &Path, content: impl AsRef<[u8]>, seconds: u64) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, content).unwrap();
    set_mtime(path, seconds);
}

pub fn set_mtime(path: &Path, seconds: u64) {
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(base + Duration::from_secs(seconds))
        .unwrap();
}

/// A header line.
pub fn header(id: &str, cwd: &str, timestamp: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{timestamp}","cwd":"{cwd}"}}"#
    )
}

/// A user or assistant message entry with string content.
pub fn message(id: &str, role: &str, text: &str, timestamp_ms: u64) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{{"role":"{role}","content":"{text}","timestamp":{timestamp_ms}}}}}"#
    )
}
