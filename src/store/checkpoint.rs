//! What reading a session file leaves behind for the next read: the reader's state after the
//! last complete line, the lines it skipped, and the version of its rules. The loader writes
//! them and the persisted index keeps them; both depend on this module, not on each other's.

use crate::format::json::JsValue;

use super::index::Index;

/// The version of this reader's rules (what a line's facts are, which lines are skipped and
/// with which warning). A persisted index written under other rules is rebuilt: bump it with
/// any change to what reading a file produces.
pub const PARSE_RULES_VERSION: u32 = 1;

/// The reader's state after the file's last complete line: what a persisted index keeps, so
/// that a later open resumes reading there (a last line without its newline is read again).
#[derive(Debug, Clone)]
pub struct Checkpoint {
    /// Bytes `0..end` are whole lines, all read.
    pub end: u64,
    pub lines: u64,
    /// How many of the index's records come from those lines.
    pub records: usize,
    pub warnings: Vec<Warning>,
    pub non_blank: u64,
    pub pi16_features: Vec<(&'static str, u64, u64)>,
    /// Where the header line is.
    pub header_span: (u64, u64),
}

/// Where a load starts: from nothing, or from a persisted index's checkpoint.
pub struct Resume {
    pub header: JsValue,
    pub index: Index,
    pub checkpoint: Checkpoint,
}

/// A line the lenient reader skipped, with why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[allow(missing_docs)] // no doc comments: schemars would copy them into protocol/schema.json; protocol.md describes these members
pub struct Warning {
    /// 1-based physical line (0 when the warning is not about one line).
    pub line: u64,
    pub message: String,
}
