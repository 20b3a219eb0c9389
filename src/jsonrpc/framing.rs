//! Frames: where one message ends and the next begins.
//!
//! Two framings are spoken. LSP's `Content-Length: N\r\n\r\n{json}` (N in bytes, header names
//! case-insensitive, other headers ignored, `\r\n` or bare `\n` after each header line), and
//! newline-delimited JSON (one message per line, split on `\n` only, a trailing `\r` stripped,
//! blank lines skipped). With [`Framing::Auto`] the first non-whitespace byte decides: `{` or
//! `[` means ndjson, anything else LSP headers; the server answers in the framing it detected.
//!
//! A frame above the size limit is never read into memory: LSP bodies are skipped by their
//! declared length, over-long ndjson lines are discarded up to the next newline. Either way the
//! reader reports [`Frame::TooLarge`] and stays in step with the stream.

use std::fmt;

use memchr::memchr;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::sync::oneshot;

/// The default maximum frame size: 64 MiB.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

/// A header line longer than this is malformed (it is skipped, never stored).
const MAX_HEADER_LINE_BYTES: usize = 8 * 1024;

/// More header lines than this without the blank line that ends a header block is malformed;
/// reporting it lets a client that sent the wrong framing hear about it.
const MAX_HEADER_LINES: usize = 64;

/// How the client frames its messages, as configured (`--framing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Framing {
    /// Decide by the first non-whitespace byte the client sends.
    #[default]
    Auto,
    /// `Content-Length` headers, as LSP.
    Lsp,
    /// One JSON message per line.
    Ndjson,
}

/// The framing actually in use on the wire, once decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WireFraming {
    /// `Content-Length` headers.
    Lsp,
    /// One JSON message per line.
    Ndjson,
}

impl fmt::Display for WireFraming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WireFraming::Lsp => "lsp",
            WireFraming::Ndjson => "ndjson",
        })
    }
}

/// One unit read from the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// The bytes of one message (not yet known to be JSON, or even UTF-8).
    Message(Vec<u8>),
    /// A frame above the size limit, skipped without being stored. `declared` is the
    /// Content-Length of an LSP frame; an ndjson line has no declared size.
    TooLarge {
        /// The declared size in bytes, when the framing declares one.
        declared: Option<u64>,
    },
    /// Bytes that do not form a frame: bad or missing headers, or input ending mid-frame.
    Malformed(String),
}

/// Reads frames from the client, detecting the framing first when it is `Auto`.
pub struct FrameReader<R> {
    input: BufReader<R>,
    configured: Framing,
    wire: Option<WireFraming>,
    max_frame_bytes: usize,
    /// Body bytes of an oversized LSP frame still to discard. The frame is reported first and
    /// skipped on the next read, so the client hears of it before the body has arrived.
    skip_pending: u64,
    /// Told the framing once it is known, so the writer can answer in kind.
    announce: Option<oneshot::Sender<WireFraming>>,
}

/// Resolves to the framing the writer must use. It resolves to an error only when the input
/// ended before the framing could be detected, in which case there is nothing to answer.
pub type FramingDecision = oneshot::Receiver<WireFraming>;

impl<R: AsyncRead + Unpin> FrameReader<R> {
    /// A reader over `input`. The returned `FramingDecision` resolves as soon as the framing
    /// is known: at once for `Lsp`/`Ndjson`, at the first non-whitespace byte for `Auto`.
    pub fn new(input: R, framing: Framing, max_frame_bytes: usize) -> (Self, FramingDecision) {
        let (announce, decision) = oneshot::channel();
        let mut reader = FrameReader {
            input: BufReader::with_capacity(64 * 1024, input),
            configured: framing,
            wire: None,
            max_frame_bytes,
            skip_pending: 0,
            announce: Some(announce),
        };
        match framing {
            Framing::Auto => {}
            Framing::Lsp => reader.decide(WireFraming::Lsp),
            Framing::Ndjson => reader.decide(WireFraming::Ndjson),
        }
        (reader, decision)
    }

    /// The framing in use, once known.
    pub fn wire_framing(&self) -> Option<WireFraming> {
        self.wire
    }

    /// The configured framing (possibly `Auto`).
    pub fn configured_framing(&self) -> Framing {
        self.configured
    }

    /// The next frame, or `None` at the end of input. I/O errors are returned as they are;
    /// malformed input never is an error here, it is a [`Frame`].
    pub async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        if self.skip_pending > 0 {
            let count = std::mem::take(&mut self.skip_pending);
            self.skip(count).await?;
        }
        let wire = match self.wire {
            Some(wire) => wire,
            None => match self.detect().await? {
                Some(wire) => wire,
                None => return Ok(None),
            },
        };
        match wire {
            WireFraming::Lsp => self.next_lsp_frame().await,
            WireFraming::Ndjson => self.next_ndjson_frame().await,
        }
    }

    fn decide(&mut self, wire: WireFraming) {
        self.wire = Some(wire);
        if let Some(announce) = self.announce.take() {
            // The writer may already be gone (shutting down); nothing to tell then.
            let _ = announce.send(wire);
        }
    }

    /// Skips leading whitespace and decides by the first other byte, which stays unread.
    async fn detect(&mut self) -> std::io::Result<Option<WireFraming>> {
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                return Ok(None);
            }
            let blanks = available
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
            if blanks == available.len() {
                self.input.consume(blanks);
                continue;
            }
            let wire = match available[blanks] {
                b'{' | b'[' => WireFraming::Ndjson,
                _ => WireFraming::Lsp,
            };
            self.input.consume(blanks);
            self.decide(wire);
            return Ok(Some(wire));
        }
    }

    async fn next_ndjson_frame(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let mut line = Vec::new();
            let mut too_large = false;
            let mut at_end = false;
            loop {
                let available = self.input.fill_buf().await?;
                if available.is_empty() {
                    at_end = true;
                    break;
                }
                let (chunk_len, found_newline) = match memchr(b'\n', available) {
                    Some(i) => (i, true),
                    None => (available.len(), false),
                };
                if !too_large {
                    if line.len() + chunk_len > self.max_frame_bytes {
                        too_large = true;
                        // Give back what was gathered; the rest of the line is discarded.
                        line = Vec::new();
                    } else {
                        line.extend_from_slice(&available[..chunk_len]);
                    }
                }
                self.input.consume(chunk_len + usize::from(found_newline));
                if found_newline {
                    break;
                }
            }
            if too_large {
                return Ok(Some(Frame::TooLarge { declared: None }));
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.iter().all(|b| b.is_ascii_whitespace()) {
                if at_end {
                    return Ok(None);
                }
                continue;
            }
            // A last line without its newline is still a message.
            return Ok(Some(Frame::Message(line)));
        }
    }

    async fn next_lsp_frame(&mut self) -> std::io::Result<Option<Frame>> {
        let mut headers = HeaderBlock::default();
        let mut line = Vec::new();
        loop {
            match self.read_header_line(&mut line).await? {
                HeaderLine::End { partial } => {
                    return Ok(if headers.lines > 0 || partial {
                        Some(Frame::Malformed(
                            "end of input inside frame headers".to_owned(),
                        ))
                    } else {
                        None
                    });
                }
                HeaderLine::TooLong => headers.note_problem(format!(
                    "header line longer than {MAX_HEADER_LINE_BYTES} bytes"
                )),
                HeaderLine::Complete if line.is_empty() => {
                    if headers.lines == 0 {
                        // Stray blank lines between frames are harmless.
                        continue;
                    }
                    break;
                }
                HeaderLine::Complete => headers.add(&line),
            }
            if headers.lines >= MAX_HEADER_LINES {
                return Ok(Some(Frame::Malformed(format!(
                    "more than {MAX_HEADER_LINES} header lines without a blank line \
                     (is the client sending LSP framing?)"
                ))));
            }
        }
        let length = match headers.content_length {
            ContentLength::Valid(n) => n,
            ContentLength::Missing => {
                let mut message = "missing Content-Length header".to_owned();
                if let Some(problem) = headers.problem {
                    message.push_str(&format!(" ({problem})"));
                }
                return Ok(Some(Frame::Malformed(message)));
            }
            ContentLength::Invalid(problem) => return Ok(Some(Frame::Malformed(problem))),
        };
        if length > self.max_frame_bytes as u64 {
            self.skip_pending = length;
            return Ok(Some(Frame::TooLarge {
                declared: Some(length),
            }));
        }
        // Grow the buffer as bytes arrive rather than trusting the declared length up front.
        let mut body = Vec::with_capacity(length.min(1024 * 1024) as usize);
        (&mut self.input)
            .take(length)
            .read_to_end(&mut body)
            .await?;
        if (body.len() as u64) < length {
            return Ok(Some(Frame::Malformed(format!(
                "end of input after {} of {length} body bytes",
                body.len()
            ))));
        }
        Ok(Some(Frame::Message(body)))
    }

    /// Reads one header line into `line` without its line end. A line longer than the cap
    /// is consumed but not kept.
    async fn read_header_line(&mut self, line: &mut Vec<u8>) -> std::io::Result<HeaderLine> {
        line.clear();
        let mut too_long = false;
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                return Ok(HeaderLine::End {
                    partial: !line.is_empty() || too_long,
                });
            }
            let (chunk_len, found_newline) = match memchr(b'\n', available) {
                Some(i) => (i, true),
                None => (available.len(), false),
            };
            if !too_long {
                if line.len() + chunk_len > MAX_HEADER_LINE_BYTES {
                    too_long = true;
                    line.clear();
                } else {
                    line.extend_from_slice(&available[..chunk_len]);
                }
            }
            self.input.consume(chunk_len + usize::from(found_newline));
            if found_newline {
                if too_long {
                    return Ok(HeaderLine::TooLong);
                }
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(HeaderLine::Complete);
            }
        }
    }

    /// Discards `count` bytes (or up to the end of input) without storing them.
    async fn skip(&mut self, mut count: u64) -> std::io::Result<()> {
        while count > 0 {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                return Ok(());
            }
            let n = available
                .len()
                .min(usize::try_from(count).unwrap_or(usize::MAX));
            self.input.consume(n);
            count -= n as u64;
        }
        Ok(())
    }
}

enum HeaderLine {
    /// A whole line is in the buffer (possibly empty: the end of the header block).
    Complete,
    /// A line over the cap, consumed and dropped.
    TooLong,
    /// End of input; `partial` if some bytes of an unfinished line were read.
    End { partial: bool },
}

#[derive(Default)]
enum ContentLength {
    #[default]
    Missing,
    Valid(u64),
    Invalid(String),
}

/// What one block of LSP headers said.
#[derive(Default)]
struct HeaderBlock {
    lines: usize,
    content_length: ContentLength,
    /// The first problem with a line other than Content-Length. Such lines are ignored when
    /// the block has a valid Content-Length, so stray bytes do not cost the client a message.
    problem: Option<String>,
}

impl HeaderBlock {
    fn note_problem(&mut self, problem: String) {
        self.lines += 1;
        if self.problem.is_none() {
            tracing::warn!("ignoring bad frame header: {problem}");
            self.problem = Some(problem);
        }
    }

    fn add(&mut self, line: &[u8]) {
        let Some(colon) = memchr(b':', line) else {
            let shown = String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
            self.note_problem(format!("header line without ':': {shown:?}"));
            return;
        };
        self.lines += 1;
        let name = line[..colon].trim_ascii();
        if !name.eq_ignore_ascii_case(b"content-length") {
            return;
        }
        let value = line[colon + 1..].trim_ascii();
        let shown = String::from_utf8_lossy(value).into_owned();
        let parsed = std::str::from_utf8(value)
            .ok()
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|v| v.parse::<u64>().ok());
        self.content_length = match (&self.content_length, parsed) {
            (ContentLength::Invalid(_), _) => return,
            (_, None) => ContentLength::Invalid(format!("invalid Content-Length {shown:?}")),
            (ContentLength::Valid(old), Some(new)) if *old != new => ContentLength::Invalid(
                format!("conflicting Content-Length headers {old} and {new}"),
            ),
            (_, Some(new)) => ContentLength::Valid(new),
        };
    }
}

/// Appends one framed message to `out`. In ndjson, U+2028, U+2029 and U+0085 inside strings
/// are written as `\u` escapes: the JSON means the same, and clients whose line splitters
/// treat them as line ends (Python's `str.splitlines`) cannot be confused.
pub fn encode_frame(framing: WireFraming, json: &[u8], out: &mut Vec<u8>) {
    encode_frame_parts(framing, &[json], out);
}

/// [`encode_frame`] of the message whose bytes are `parts` one after another (each part on
/// character boundaries).
pub(crate) fn encode_frame_parts(framing: WireFraming, parts: &[&[u8]], out: &mut Vec<u8>) {
    match framing {
        WireFraming::Lsp => {
            let len = parts.iter().map(|part| part.len()).sum();
            out.extend_from_slice(&frame_head(framing, len));
            parts.iter().for_each(|part| out.extend_from_slice(part));
        }
        WireFraming::Ndjson => {
            parts
                .iter()
                .for_each(|part| escape_unicode_line_ends(part, out));
            out.push(b'\n');
        }
    }
}

/// What precedes a message of `len` bytes written as it is.
pub(crate) fn frame_head(framing: WireFraming, len: usize) -> Vec<u8> {
    match framing {
        WireFraming::Lsp => format!("Content-Length: {len}\r\n\r\n").into_bytes(),
        WireFraming::Ndjson => Vec::new(),
    }
}

/// What follows a message written as it is.
pub(crate) fn frame_tail(framing: WireFraming) -> &'static [u8] {
    match framing {
        WireFraming::Lsp => b"",
        WireFraming::Ndjson => b"\n",
    }
}

/// Whether `json` is framed as it is (between [`frame_head`] and [`frame_tail`]): always in
/// LSP, in ndjson when it holds no line end to escape.
pub(crate) fn frames_as_is(framing: WireFraming, json: &[u8]) -> bool {
    framing == WireFraming::Lsp || next_line_end(json, 0).is_none()
}

/// The first U+2028, U+2029 or U+0085 in `json` at or after `from`: where it starts, its
/// width in bytes and its escape.
fn next_line_end(json: &[u8], mut from: usize) -> Option<(usize, usize, &'static [u8])> {
    // Both leading bytes are rare enough that a memchr scan is nearly free.
    while let Some(found) = memchr::memchr2(0xE2, 0xC2, &json[from..]) {
        let i = from + found;
        match &json[i..] {
            [0xE2, 0x80, 0xA8, ..] => return Some((i, 3, b"\\u2028")),
            [0xE2, 0x80, 0xA9, ..] => return Some((i, 3, b"\\u2029")),
            [0xC2, 0x85, ..] => return Some((i, 2, b"\\u0085")),
            _ => from = i + 1,
        }
    }
    None
}

fn escape_unicode_line_ends(json: &[u8], out: &mut Vec<u8>) {
    let mut copied = 0;
    while let Some((i, width, escape)) = next_line_end(json, copied) {
        out.extend_from_slice(&json[copied..i]);
        out.extend_from_slice(escape);
        copied = i + width;
    }
    out.extend_from_slice(&json[copied..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 1024;

    async fn frames(framing: Framing, input: &[u8]) -> (Vec<Frame>, Option<WireFraming>) {
        frames_with_limit(framing, input, MAX).await
    }

    async fn frames_with_limit(
        framing: Framing,
        input: &[u8],
        max: usize,
    ) -> (Vec<Frame>, Option<WireFraming>) {
        let (mut reader, _decision) = FrameReader::new(input, framing, max);
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame().await.unwrap() {
            out.push(frame);
        }
        (out, reader.wire_framing())
    }

    fn msg(s: &str) -> Frame {
        Frame::Message(s.as_bytes().to_vec())
    }

    #[tokio::test]
    async fn auto_detects_ndjson_from_a_brace_or_bracket() {
        let (got, wire) = frames(Framing::Auto, b"  \r\n{\"a\":1}\n[1]\n").await;
        assert_eq!(wire, Some(WireFraming::Ndjson));
        assert_eq!(got, vec![msg("{\"a\":1}"), msg("[1]")]);
    }

    #[tokio::test]
    async fn auto_detects_lsp_from_anything_else() {
        let (got, wire) = frames(Framing::Auto, b"\r\nContent-Length: 2\r\n\r\n{}").await;
        assert_eq!(wire, Some(WireFraming::Lsp));
        assert_eq!(got, vec![msg("{}")]);
    }

    #[tokio::test]
    async fn empty_or_blank_input_decides_nothing() {
        let (got, wire) = frames(Framing::Auto, b" \n\r\n").await;
        assert!(got.is_empty());
        assert_eq!(wire, None);
    }

    #[tokio::test]
    async fn forced_framing_is_announced_before_any_input() {
        let (_reader, decision) = FrameReader::new(&b""[..], Framing::Lsp, MAX);
        assert_eq!(decision.await.unwrap(), WireFraming::Lsp);
    }

    #[tokio::test]
    async fn ndjson_strips_cr_skips_blank_lines_and_keeps_a_last_unterminated_line() {
        let (got, _) = frames(Framing::Ndjson, b"{\"a\":1}\r\n\n  \t\r\n{\"b\":2}").await;
        assert_eq!(got, vec![msg("{\"a\":1}"), msg("{\"b\":2}")]);
    }

    #[tokio::test]
    async fn ndjson_never_splits_on_unicode_line_separators() {
        let line = "{\"t\":\"a\u{2028}b\u{2029}c\u{85}d\"}";
        let input = format!("{line}\n");
        let (got, _) = frames(Framing::Ndjson, input.as_bytes()).await;
        assert_eq!(got, vec![msg(line)]);
    }

    #[tokio::test]
    async fn ndjson_line_above_the_limit_is_discarded_and_reading_goes_on() {
        let long = format!("{{\"x\":\"{}\"}}", "a".repeat(40));
        let input = format!("{long}\n{{}}\n{long}");
        let (got, _) = frames_with_limit(Framing::Ndjson, input.as_bytes(), 20).await;
        assert_eq!(
            got,
            vec![
                Frame::TooLarge { declared: None },
                msg("{}"),
                Frame::TooLarge { declared: None }
            ]
        );
    }

    #[tokio::test]
    async fn ndjson_limit_counts_the_whole_line_across_buffer_refills() {
        // Larger than BufReader's capacity, so the line arrives in several chunks.
        let long = format!("{{\"x\":\"{}\"}}\n{{}}\n", "a".repeat(200_000));
        let (got, _) = frames_with_limit(Framing::Ndjson, long.as_bytes(), 100_000).await;
        assert_eq!(got, vec![Frame::TooLarge { declared: None }, msg("{}")]);
        let (got, _) = frames_with_limit(Framing::Ndjson, long.as_bytes(), 300_000).await;
        assert_eq!(got.len(), 2);
        assert!(matches!(&got[0], Frame::Message(m) if m.len() == 200_008));
    }

    #[tokio::test]
    async fn lsp_headers_are_case_insensitive_and_other_headers_ignored() {
        let input = b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}\
                      CONTENT-LENGTH:3\n\n[1]";
        let (got, _) = frames(Framing::Lsp, input).await;
        assert_eq!(got, vec![msg("{}"), msg("[1]")]);
    }

    #[tokio::test]
    async fn lsp_length_counts_utf8_bytes() {
        let body = "{\"t\":\"é\u{2028}\"}";
        let input = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        let (got, _) = frames(Framing::Lsp, input.as_bytes()).await;
        assert_eq!(got, vec![msg(body)]);
    }

    #[tokio::test]
    async fn lsp_missing_or_bad_length_is_malformed_and_reading_goes_on() {
        let input = b"Content-Type: x\r\n\r\nContent-Length: -1\r\n\r\nContent-Length: 2\r\n\r\n{}";
        let (got, _) = frames(Framing::Lsp, input).await;
        assert_eq!(
            got,
            vec![
                Frame::Malformed("missing Content-Length header".into()),
                Frame::Malformed("invalid Content-Length \"-1\"".into()),
                msg("{}"),
            ]
        );
    }

    #[tokio::test]
    async fn lsp_garbage_header_lines_are_ignored_when_the_length_is_valid() {
        let (got, _) = frames(Framing::Lsp, b"garbage\r\nContent-Length: 2\r\n\r\n{}").await;
        assert_eq!(got, vec![msg("{}")]);
    }

    #[tokio::test]
    async fn lsp_conflicting_lengths_are_malformed() {
        let input = b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n";
        let (got, _) = frames(Framing::Lsp, input).await;
        assert_eq!(
            got,
            vec![Frame::Malformed(
                "conflicting Content-Length headers 2 and 3".into()
            )]
        );
    }

    #[tokio::test]
    async fn lsp_oversized_body_is_skipped_by_its_declared_length() {
        let big = "x".repeat(5000);
        let input = format!("Content-Length: 5000\r\n\r\n{big}Content-Length: 2\r\n\r\n{{}}");
        let (got, _) = frames(Framing::Lsp, input.as_bytes()).await;
        assert_eq!(
            got,
            vec![
                Frame::TooLarge {
                    declared: Some(5000)
                },
                msg("{}")
            ]
        );
    }

    #[tokio::test]
    async fn lsp_huge_declared_length_with_short_input_ends_cleanly() {
        let input = b"Content-Length: 18446744073709551615\r\n\r\n{}";
        let (got, _) = frames(Framing::Lsp, input).await;
        assert_eq!(
            got,
            vec![Frame::TooLarge {
                declared: Some(u64::MAX)
            }]
        );
        // Without a usable length the body is read as headers: reported, never trusted.
        let input = b"Content-Length: 99999999999999999999999\r\n\r\n{}";
        let (got, _) = frames(Framing::Lsp, input).await;
        assert_eq!(
            got,
            vec![
                Frame::Malformed("invalid Content-Length \"99999999999999999999999\"".into()),
                Frame::Malformed("end of input inside frame headers".into())
            ]
        );
    }

    #[tokio::test]
    async fn lsp_truncated_frames_are_malformed_then_end() {
        let (got, _) = frames(Framing::Lsp, b"Content-Length: 10\r\n\r\n{}").await;
        assert_eq!(
            got,
            vec![Frame::Malformed(
                "end of input after 2 of 10 body bytes".into()
            )]
        );
        let (got, _) = frames(Framing::Lsp, b"Content-Length: 10\r\n").await;
        assert_eq!(
            got,
            vec![Frame::Malformed("end of input inside frame headers".into())]
        );
        let (got, _) = frames(Framing::Lsp, b"Content-Le").await;
        assert_eq!(
            got,
            vec![Frame::Malformed("end of input inside frame headers".into())]
        );
    }

    #[tokio::test]
    async fn lsp_overlong_header_line_is_dropped_without_storing_it() {
        let input = format!(
            "X-Junk: {}\r\nContent-Length: 2\r\n\r\n{{}}",
            "j".repeat(100_000)
        );
        let (got, _) = frames(Framing::Lsp, input.as_bytes()).await;
        assert_eq!(got, vec![msg("{}")]);
    }

    #[tokio::test]
    async fn lsp_endless_headers_are_reported() {
        let input = "{\"jsonrpc\":\"2.0\"}\n".repeat(MAX_HEADER_LINES);
        let (got, _) = frames(Framing::Lsp, input.as_bytes()).await;
        assert_eq!(got.len(), 1);
        assert!(matches!(&got[0], Frame::Malformed(m) if m.contains("header lines")));
    }

    #[test]
    fn encoding_lsp_counts_bytes() {
        let mut out = Vec::new();
        encode_frame(WireFraming::Lsp, "{\"t\":\"é\"}".as_bytes(), &mut out);
        assert_eq!(out, "Content-Length: 10\r\n\r\n{\"t\":\"é\"}".as_bytes());
    }

    #[test]
    fn encoding_ndjson_escapes_unicode_line_ends_only() {
        let mut out = Vec::new();
        let json = "{\"t\":\"a\u{2028}b\u{2029}c\u{85}d—é€\"}";
        encode_frame(WireFraming::Ndjson, json.as_bytes(), &mut out);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, "{\"t\":\"a\\u2028b\\u2029c\\u0085d—é€\"}\n");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["t"], "a\u{2028}b\u{2029}c\u{85}d—é€");
    }
}
