//! Reading one session file the way pi's `buildSessionInfo` does: streamed line by line, the
//! first JSON value must be a `session` header, unparsable lines are skipped, and the few
//! things pi's code would throw on drop the whole session.
//!
//! Each line goes through the fast serde path ([`fast`]) and, when that path is not sure, the
//! exact `JSON.parse` reader ([`facts`]).

mod facts;
mod fast;
mod lines;
mod summary;

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub use facts::{Pi16Feature, Pi16Mark};
pub(crate) use summary::Summary;

use crate::repo::stamp::FileStamp;
use facts::{Parsed, entry_from_value, header_from_value, parse_exact};
use lines::LineReader;
use summary::SummaryBuilder;

/// Why a `.jsonl` file is not in the listing. Except for [`SkipReason::Unreadable`], pi drops
/// these files without a word; here they are reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// The file could not be opened, examined or read.
    Unreadable {
        /// The OS's error.
        error: String,
    },
    /// No line holds a JSON value pi keeps (empty, blank, or nothing parsable).
    NoSessionData,
    /// The first JSON value (on this line) is not a `session` header.
    NotASession {
        /// The 1-based line.
        line: u64,
    },
    /// A `message` entry whose `message` is null or missing: pi's code throws on it.
    MessageWithoutBody {
        /// The 1-based line.
        line: u64,
    },
    /// A user or assistant message whose `content` is neither text nor an array of blocks
    /// (for instance `null`), or holds a `null` block: pi's code throws on it.
    ContentNotText {
        /// The 1-based line.
        line: u64,
    },
    /// A `session_info` entry whose `name` is neither a string nor null: pi's code throws.
    NameNotString {
        /// The 1-based line.
        line: u64,
    },
}

impl SkipReason {
    /// A stable name for this reason.
    pub fn kind(&self) -> &'static str {
        match self {
            SkipReason::Unreadable { .. } => "unreadable",
            SkipReason::NoSessionData => "no_session_data",
            SkipReason::NotASession { .. } => "not_a_session",
            SkipReason::MessageWithoutBody { .. } => "message_without_body",
            SkipReason::ContentNotText { .. } => "content_not_text",
            SkipReason::NameNotString { .. } => "name_not_string",
        }
    }

    /// The line the reason is about, if any.
    pub fn line(&self) -> Option<u64> {
        match self {
            SkipReason::Unreadable { .. } | SkipReason::NoSessionData => None,
            SkipReason::NotASession { line }
            | SkipReason::MessageWithoutBody { line }
            | SkipReason::ContentNotText { line }
            | SkipReason::NameNotString { line } => Some(*line),
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Unreadable { error } => write!(f, "cannot be read: {error}"),
            SkipReason::NoSessionData => f.write_str("holds no session data (empty or unparsable)"),
            SkipReason::NotASession { line } => write!(
                f,
                "is not a pi session: its first JSON value (line {line}) is not a session header"
            ),
            SkipReason::MessageWithoutBody { line } => {
                write!(
                    f,
                    "line {line}: a message entry has no message (pi cannot list it)"
                )
            }
            SkipReason::ContentNotText { line } => write!(
                f,
                "line {line}: a user or assistant message has content that is neither text nor blocks (pi cannot list it)"
            ),
            SkipReason::NameNotString { line } => write!(
                f,
                "line {line}: a session name is neither a string nor null (pi cannot list it)"
            ),
        }
    }
}

/// A scanned file: its listing row (or why it has none) and the `stat` of what was read.
pub(crate) struct Scan {
    pub outcome: Result<Summary, SkipReason>,
    /// `None` when the file could not even be examined.
    pub stamp: Option<FileStamp>,
}

/// Reads `file` (listed as `listed_path`) up to the size it had when it was opened, so that
/// a concurrent append never makes the result disagree with the recorded stamp.
pub(crate) fn scan_session_file(file: &Path, listed_path: PathBuf) -> Scan {
    let unreadable = |e: std::io::Error| SkipReason::Unreadable {
        error: e.to_string(),
    };
    let opened = open_regular(file);
    let (handle, meta) = match opened {
        Ok(pair) => pair,
        Err(e) => {
            return Scan {
                outcome: Err(unreadable(e)),
                stamp: None,
            };
        }
    };
    let stamp = FileStamp::of(&meta);
    let source = LineReader::with_expected_len(handle.take(stamp.size), stamp.size);
    let outcome = read_summary(source, listed_path, stamp.mtime_ms());
    Scan {
        outcome,
        stamp: Some(stamp),
    }
}

/// Opens a regular file for reading. Non-blocking, so that a FIFO swapped in after the
/// listing checked the file cannot make the open wait; regular files ignore the flag.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<(File, std::fs::Metadata)> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    Ok((file, meta))
}

fn read_summary(
    mut reader: LineReader<impl Read>,
    listed_path: PathBuf,
    mtime_ms: f64,
) -> Result<Summary, SkipReason> {
    let unreadable = |e: std::io::Error| SkipReason::Unreadable {
        error: e.to_string(),
    };
    let mut builder: Option<SummaryBuilder> = None;
    while let Some((number, line)) = reader.next_line().map_err(unreadable)? {
        if line.is_empty() {
            continue;
        }
        let Some(builder) = builder.as_mut() else {
            match parse_exact(line) {
                Parsed::Skip => continue,
                Parsed::NotObject => return Err(SkipReason::NotASession { line: number }),
                Parsed::Object(value) => {
                    let header = header_from_value(&value);
                    if !header.is_session {
                        return Err(SkipReason::NotASession { line: number });
                    }
                    builder = Some(SummaryBuilder::new(header));
                    continue;
                }
            }
        };
        if let Some(facts) = fast::entry_facts(line) {
            builder.add(facts, number)?;
            continue;
        }
        if let Parsed::Object(value) = parse_exact(line) {
            builder.add(entry_from_value(&value), number)?;
        }
    }
    match builder {
        Some(builder) => Ok(builder.finish(listed_path, mtime_ms)),
        None => Err(SkipReason::NoSessionData),
    }
}
