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

/// Lines of a session tree: entries with explicit parents on a clock of seconds from
/// 2026-02-01T00:00:00Z, content shaped to exercise pi's serialization (image blocks, odd
/// numbers), for tests that compare files byte for byte.
pub mod tree {
    pub fn ts(second: u32) -> String {
        format!("2026-02-01T00:{:02}:{:02}.000Z", second / 60, second % 60)
    }

    pub fn header(id: &str) -> String {
        format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{}","cwd":"/work/hand made"}}"#,
            ts(0)
        )
    }

    pub fn user(id: &str, parent: Option<&str>, second: u32, text: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{},"timestamp":"{}","message":{{"role":"user","content":[{{"type":"text","text":"{text}"}},{{"type":"image","data":"AA==","mimeType":"image/png"}},{{"type":"text","text":"!"}}],"timestamp":{}}}}}"#,
            parent_json(parent),
            ts(second),
            1_769_904_000_000u64 + u64::from(second) * 1000
        )
    }

    pub fn assistant(id: &str, parent: Option<&str>, second: u32, text: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{},"timestamp":"{}","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":1.5e-7,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{{"input":1e21,"output":0.1,"cacheRead":0,"cacheWrite":0,"total":100}}}},"stopReason":"stop","timestamp":{}}}}}"#,
            parent_json(parent),
            ts(second),
            1_769_904_000_000u64 + u64::from(second) * 1000
        )
    }

    /// A label entry; `label` is the JSON of its `label` member (`None`: no member), `second` its
    /// timestamp (`None`: no member).
    pub fn label(
        id: &str,
        parent: &str,
        target: &str,
        label: Option<&str>,
        second: Option<u32>,
    ) -> String {
        let mut text = format!(r#"{{"type":"label","id":"{id}","parentId":"{parent}""#);
        if let Some(second) = second {
            text.push_str(&format!(r#","timestamp":"{}""#, ts(second)));
        }
        text.push_str(&format!(r#","targetId":"{target}""#));
        if let Some(label) = label {
            text.push_str(&format!(r#","label":{label}"#));
        }
        text.push('}');
        text
    }

    pub fn parent_json(parent: Option<&str>) -> String {
        parent.map_or("null".into(), |p| format!("\"{p}\""))
    }

    pub fn file_text(lines: &[String]) -> String {
        let mut text = lines.join("\n");
        text.push('\n');
        text
    }
}
