//! What a transcript file says, read with the line of every step so that reports can point
//! into the file (`FILE:LINE`).

use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::jsonrpc::{Framing, WireFraming};

/// One transcript file, read.
pub struct Transcript {
    /// What the exchange shows.
    pub description: String,
    /// How the client frames what it sends (the server detects it unless `server.framing`).
    pub framing: WireFraming,
    /// How the server is set up.
    pub server: ServerSetup,
    /// Show the result of `initialize` in the exchange. It is long (every method) and the same
    /// in every transcript, so only the lifecycle transcripts show it; the others record
    /// `"[initialize result]"`.
    pub show_initialize_result: bool,
    /// The exit status the server must end with, when the transcript says.
    pub exit_code: Option<i32>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The line (1-based) where each step starts in the file.
    pub step_lines: Vec<usize>,
    /// The line of the `server` member (1 when absent).
    pub server_line: usize,
}

/// Why a transcript could not be read: the line and column it points at (1-based, 0 when the
/// file could not be read at all) and what is wrong.
#[derive(Debug)]
pub struct ReadError {
    /// The 1-based line.
    pub line: usize,
    /// The 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (0, _) => f.write_str(&self.message),
            (line, 0) => write!(f, "{line}: {}", self.message),
            (line, column) => write!(f, "{line}:{column}: {}", self.message),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawTranscript<'a> {
    description: String,
    #[serde(default = "ndjson")]
    framing: WireFraming,
    #[serde(default, borrow)]
    server: Option<&'a RawValue>,
    #[serde(default)]
    show_initialize_result: bool,
    #[serde(default)]
    exit_code: Option<i32>,
    #[serde(borrow)]
    steps: Vec<&'a RawValue>,
}

fn ndjson() -> WireFraming {
    WireFraming::Ndjson
}

impl Transcript {
    /// Reads a transcript file; the error names the file, and the line where it can.
    pub fn read(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}:{e}", path.display()))
    }

    /// Parses a transcript's text.
    pub fn parse(text: &str) -> Result<Self, ReadError> {
        let raw: RawTranscript = serde_json::from_str(text).map_err(|e| at(0, 1, e))?;
        let mut steps = Vec::with_capacity(raw.steps.len());
        let mut step_lines = Vec::with_capacity(raw.steps.len());
        for step in &raw.steps {
            let (line, column) = position(text, step.get());
            steps.push(serde_json::from_str(step.get()).map_err(|e| at(line - 1, column, e))?);
            step_lines.push(line);
        }
        let (server, server_line) = match raw.server {
            Some(server) => {
                let (line, column) = position(text, server.get());
                let setup =
                    serde_json::from_str(server.get()).map_err(|e| at(line - 1, column, e))?;
                (setup, line)
            }
            None => (ServerSetup::default(), 1),
        };
        Ok(Transcript {
            description: raw.description,
            framing: raw.framing,
            server,
            show_initialize_result: raw.show_initialize_result,
            exit_code: raw.exit_code,
            steps,
            step_lines,
            server_line,
        })
    }
}

/// The line and column (1-based) where `part`, a slice of `text`, starts.
fn position(text: &str, part: &str) -> (usize, usize) {
    // `part` borrows from `text` (serde_json's borrowed raw values), so its address says where.
    let offset = (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

/// A serde_json error inside a part of the file that starts after `lines_before` lines, at
/// `column` on its first line.
fn at(lines_before: usize, column: usize, error: serde_json::Error) -> ReadError {
    let message = error.to_string();
    // serde_json appends " at line L column C"; the report says it in front instead.
    let message = match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message,
    };
    let (line, col) = (error.line(), error.column());
    ReadError {
        line: lines_before + line.max(1),
        column: if line <= 1 {
            column + col.max(1) - 1
        } else {
            col
        },
        message,
    }
}

/// The `server` member: how the server framing, frame limit and methods are set.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerSetup {
    /// The framing the server is told to use (none: it detects it).
    pub framing: Option<Framing>,
    /// The server's largest frame.
    pub max_frame_bytes: Option<usize>,
    /// Which methods the server serves.
    #[serde(default)]
    pub state: StateKind,
}

/// Which server the transcript talks to.
#[derive(Default, Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "camelCase")]
pub enum StateKind {
    /// The real sidecar: every `session/*` method (what `pi-session --stdio` serves).
    #[default]
    Sidecar,
    /// The project's test-only methods (`tests/rpc_transcripts.rs`), for the JSON-RPC
    /// machinery; no binary serves them.
    Test,
}

/// One step of a transcript.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Step {
    /// One message, framed.
    Send(Value),
    /// `[id, method, params]`: a request, recorded in full.
    Request((Value, String, Value)),
    /// `[method, params]`: a notification, recorded in full.
    Notify((String, Value)),
    /// `[id, result]`: the client's answer to a hook, recorded in full.
    Answer((Value, Value)),
    /// Text sent as it is (for malformed frames).
    SendRaw(String),
    /// Bytes in hex sent as they are (for non-UTF-8 input).
    SendHex(String),
    /// Read server messages, in order: a count, or the messages expected (patterns, see
    /// [`super::expect`]), each checked as it is read.
    Expect(Expected),
    /// Read this many server messages, recording the values of these member names (anywhere
    /// in their `result`) as `[not reproducible]`: for what even the deterministic mode leaves
    /// random.
    ExpectRedacting {
        /// How many messages.
        count: usize,
        /// The member names whose values are redacted.
        members: Vec<String>,
    },
    /// Read this many server messages whose relative order is not guaranteed; they are
    /// recorded sorted.
    ExpectUnordered(usize),
    /// Let the clock run.
    SleepMs(u64),
    /// End the server's input.
    CloseInput,
    /// Writes a file (`path` relative to the temporary directory) with this text.
    WriteFile {
        /// The file, relative to the temporary directory.
        path: String,
        /// Its text.
        text: String,
    },
    /// Copies a file from the fixtures directory (`from`) into the temporary directory (`to`).
    CopyFixture {
        /// The fixture, relative to the fixtures directory.
        from: String,
        /// The copy, relative to the temporary directory.
        to: String,
    },
    /// Holds an exclusive lock on a file, as another process writing to it would, until the
    /// transcript ends.
    LockFile(String),
    /// Records every file under a directory (relative to the temporary directory, recursively)
    /// with its lines, each parsed as JSON where it is JSON.
    Files(String),
    /// Records the names and line counts of the files under a directory.
    ListFiles(String),
    /// Sets a file's modification time (`path` relative to the temporary directory) to
    /// `seconds` after 2026-01-01T00:00:00Z.
    SetMtime {
        /// The file, relative to the temporary directory.
        path: String,
        /// Seconds after 2026-01-01T00:00:00Z.
        seconds: u64,
    },
}

impl Step {
    /// The step's kind, as the file writes it.
    pub fn kind(&self) -> &'static str {
        match self {
            Step::Send(_) => "send",
            Step::Request(_) => "request",
            Step::Notify(_) => "notify",
            Step::Answer(_) => "answer",
            Step::SendRaw(_) => "sendRaw",
            Step::SendHex(_) => "sendHex",
            Step::Expect(_) => "expect",
            Step::ExpectRedacting { .. } => "expectRedacting",
            Step::ExpectUnordered(_) => "expectUnordered",
            Step::SleepMs(_) => "sleepMs",
            Step::CloseInput => "closeInput",
            Step::WriteFile { .. } => "writeFile",
            Step::CopyFixture { .. } => "copyFixture",
            Step::LockFile(_) => "lockFile",
            Step::Files(_) => "files",
            Step::ListFiles(_) => "listFiles",
            Step::SetMtime { .. } => "setMtime",
        }
    }
}

/// What an `expect` step reads.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum Expected {
    /// This many messages, recorded but not checked here.
    Count(usize),
    /// These messages, in this order.
    Messages(Vec<Value>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_point_at_the_line_and_column_in_the_file() {
        let text = "{\n  \"description\": \"d\",\n  \"steps\": [\n    {\"request\": [1, \"a\", null]},\n    {\"expekt\": 1}\n  ]\n}\n";
        let error = Transcript::parse(text).err().unwrap();
        // serde_json points at the end of the bad name: `    {"expekt"` ends in column 13.
        assert_eq!((error.line, error.column), (5, 13), "{error}");
        assert!(
            error.message.contains("unknown variant `expekt`"),
            "{error}"
        );

        let error = Transcript::parse("{\"description\": \"d\",\n\"steps\": [\n}")
            .err()
            .unwrap();
        assert_eq!(error.line, 3, "{error}");

        let good = "{\"description\": \"d\",\n \"server\": {\"state\": \"test\"},\n \"steps\": [\n\n {\"sleepMs\": 1}, \"closeInput\"]}";
        let transcript = Transcript::parse(good).unwrap();
        assert_eq!(transcript.step_lines, [5, 5]);
        assert_eq!(transcript.server_line, 2);
        assert_eq!(transcript.server.state, StateKind::Test);
    }
}
