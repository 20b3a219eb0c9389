//! The listing cache file format: a checked header, length-prefixed records, then one text
//! region holding every session's `allMessagesText` as its JSON string literal.
//!
//! ```text
//! magic "PISLCACH" | version u32 | reserved u32 | records length u64 | texts length u64
//!   | checksum u64 | records | texts
//! records: record count u64, then per record:
//!   file name | size, mtime ns, ctime ns, inode, device | scanned-at ns | tag u8
//!   tag 1 (session): id? | cwd | name? | parentSession? | created? | modified? | message count
//!                    | first message | all messages text: offset u64, length u64 in texts
//!                    | pi 1.6 marks: count u8, then per mark
//!                    feature u8 | first line u64 | line count u64
//!   tag 2 (skipped): reason u8 | line u64
//! texts: UTF-8, the literals one after another
//! ```
//! Integers are little-endian; texts are a u64 length and UTF-8 bytes; `?` is a presence byte;
//! the checksum is XXH3-64 of records and texts.
//! `id` and `parentSession` are stored as their `JSON.stringify` text. Binary rather than JSON
//! because a warm listing reads the whole file (tens of megabytes of message text for big
//! directories) and must do so in milliseconds; the message texts are kept apart, already
//! escaped, so that they are read into one string once and answered from as they are.

use std::path::PathBuf;
use std::sync::Arc;

use xxhash_rust::xxh3::Xxh3;

use super::{CacheEntry, CachedOutcome};
use crate::format::js_date::JsDate;
use crate::format::json::{self, JsValue};
use crate::repo::messages_text::{JsonLiteral, MessagesText};
use crate::repo::scan::{Pi16Feature, Pi16Mark, SkipReason};
use crate::repo::session_info::SessionInfo;
use crate::repo::stamp::FileStamp;

const MAGIC: &[u8; 8] = b"PISLCACH";
/// Bumped whenever the format or the meaning of a record changes (for instance when the scan
/// learns to read something differently); any other version is ignored and rebuilt.
/// 2: sessions carry what only pi 1.6 writes (the listing warns of it in other profiles).
/// 3: `allMessagesText` moves to the text region, as its JSON literal; XXH3 checksum.
pub(crate) const VERSION: u32 = 3;
pub(crate) const HEADER_LEN: usize = 8 + 4 + 4 + 8 + 8 + 8;

const TAG_SESSION: u8 = 1;
const TAG_SKIPPED: u8 = 2;

/// Why a cache file was not used.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum DecodeError {
    NotACache,
    OtherVersion(u32),
    Truncated,
    Checksum,
    Corrupt(&'static str),
}

/// A cache file ready to be written: header and records, then the message texts where they
/// are (tens of megabytes, not copied into one buffer first).
pub(crate) struct Encoded<'a> {
    header: Vec<u8>,
    records: Vec<u8>,
    texts: Vec<&'a str>,
}

impl Encoded<'_> {
    pub(crate) fn write_to(&self, mut out: impl std::io::Write) -> std::io::Result<()> {
        out.write_all(&self.header)?;
        out.write_all(&self.records)?;
        for text in &self.texts {
            out.write_all(text.as_bytes())?;
        }
        out.flush()
    }

    #[cfg(test)]
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out).unwrap();
        out
    }
}

pub(crate) fn encode<'a>(
    entries: impl ExactSizeIterator<Item = (&'a str, &'a CacheEntry)>,
) -> Encoded<'a> {
    let mut payload = Vec::new();
    let mut texts = Vec::new();
    let mut texts_len = 0u64;
    put_u64(&mut payload, entries.len() as u64);
    for (name, entry) in entries {
        put_text(&mut payload, name);
        let s = &entry.stamp;
        for n in [s.size, s.mtime_ns as u64, s.ctime_ns as u64, s.ino, s.dev] {
            put_u64(&mut payload, n);
        }
        put_u64(&mut payload, entry.scanned_at_ns as u64);
        match &entry.outcome {
            CachedOutcome::Session(info, marks) => {
                payload.push(TAG_SESSION);
                put_opt_json(&mut payload, info.id.as_ref());
                put_text(&mut payload, &info.cwd);
                put_opt_text(&mut payload, info.name.as_deref());
                put_opt_json(&mut payload, info.parent_session_path.as_ref());
                put_opt_i64(&mut payload, info.created.millis());
                put_opt_i64(&mut payload, info.modified.millis());
                put_u64(&mut payload, info.message_count);
                put_text(&mut payload, &info.first_message);
                let literal = info.all_messages_text.json();
                put_u64(&mut payload, texts_len);
                put_u64(&mut payload, literal.len() as u64);
                texts_len += literal.len() as u64;
                texts.push(literal);
                payload.push(marks.len() as u8);
                for mark in marks {
                    payload.push(feature_code(mark.feature));
                    put_u64(&mut payload, mark.line);
                    put_u64(&mut payload, mark.count);
                }
            }
            CachedOutcome::Skipped(reason) => {
                payload.push(TAG_SKIPPED);
                let (code, line) = reason_code(reason);
                payload.push(code);
                put_u64(&mut payload, line);
            }
        }
    }
    let mut sum = Xxh3::new();
    sum.update(&payload);
    for text in &texts {
        sum.update(text.as_bytes());
    }
    let mut header = Vec::with_capacity(HEADER_LEN);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&VERSION.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    header.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    header.extend_from_slice(&texts_len.to_le_bytes());
    header.extend_from_slice(&sum.digest().to_le_bytes());
    Encoded {
        header,
        records: payload,
        texts,
    }
}

/// What the header says of the rest of the file.
#[derive(Debug)]
pub(crate) struct Header {
    pub(crate) records_len: u64,
    pub(crate) texts_len: u64,
    checksum: u64,
}

impl Header {
    pub(crate) fn parse(bytes: &[u8]) -> Result<Header, DecodeError> {
        if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
            return Err(DecodeError::NotACache);
        }
        let mut header = Reader {
            bytes: &bytes[8..HEADER_LEN],
        };
        let version = header.u32()?;
        if version != VERSION {
            return Err(DecodeError::OtherVersion(version));
        }
        let _reserved = header.u32()?;
        Ok(Header {
            records_len: header.u64()?,
            texts_len: header.u64()?,
            checksum: header.u64()?,
        })
    }
}

/// The entries of a whole cache file.
#[cfg(test)]
pub(crate) fn decode(bytes: &[u8]) -> Result<Vec<(String, CacheEntry)>, DecodeError> {
    let header = Header::parse(bytes)?;
    let rest = &bytes[HEADER_LEN..];
    let records_len = usize::try_from(header.records_len).map_err(|_| DecodeError::Truncated)?;
    if rest.len() < records_len {
        return Err(DecodeError::Truncated);
    }
    let (records, texts) = rest.split_at(records_len);
    decode_parts(&header, records, texts.to_vec())
}

/// The entries of a cache file, from what follows its header (`texts` becomes the one string
/// every cached message text is a slice of).
pub(crate) fn decode_parts(
    header: &Header,
    records: &[u8],
    texts: Vec<u8>,
) -> Result<Vec<(String, CacheEntry)>, DecodeError> {
    if records.len() as u64 != header.records_len || texts.len() as u64 != header.texts_len {
        return Err(DecodeError::Truncated);
    }
    let mut sum = Xxh3::new();
    sum.update(records);
    sum.update(&texts);
    if sum.digest() != header.checksum {
        return Err(DecodeError::Checksum);
    }
    let texts = Arc::new(
        String::from_utf8(texts).map_err(|_| DecodeError::Corrupt("texts are not UTF-8"))?,
    );
    let mut r = Reader { bytes: records };
    let count = r.u64()?;
    let mut entries = Vec::with_capacity(count.min(1 << 20) as usize);
    for _ in 0..count {
        let name = r.text()?;
        let stamp = FileStamp {
            size: r.u64()?,
            mtime_ns: r.u64()? as i64,
            ctime_ns: r.u64()? as i64,
            ino: r.u64()?,
            dev: r.u64()?,
        };
        let scanned_at_ns = r.u64()? as i64;
        let outcome = match r.u8()? {
            TAG_SESSION => {
                let info = SessionInfo {
                    path: PathBuf::new(),
                    id: r.opt_json()?,
                    cwd: r.text()?,
                    name: r.opt_text()?,
                    parent_session_path: r.opt_json()?,
                    created: r.opt_date()?,
                    modified: r.opt_date()?,
                    message_count: r.u64()?,
                    first_message: r.text()?,
                    all_messages_text: r.literal(&texts)?,
                };
                let marks = (0..r.u8()?)
                    .map(|_| {
                        Ok(Pi16Mark {
                            feature: feature_from_code(r.u8()?)?,
                            line: r.u64()?,
                            count: r.u64()?,
                        })
                    })
                    .collect::<Result<Vec<_>, DecodeError>>()?;
                CachedOutcome::Session(Box::new(info), marks)
            }
            TAG_SKIPPED => {
                let code = r.u8()?;
                let line = r.u64()?;
                CachedOutcome::Skipped(reason_from_code(code, line)?)
            }
            _ => return Err(DecodeError::Corrupt("unknown record tag")),
        };
        entries.push((
            name,
            CacheEntry {
                stamp,
                scanned_at_ns,
                outcome,
            },
        ));
    }
    if !r.bytes.is_empty() {
        return Err(DecodeError::Corrupt("data after the last record"));
    }
    Ok(entries)
}

/// Only lasting reasons are cached; an unreadable file is retried every time.
fn reason_code(reason: &SkipReason) -> (u8, u64) {
    match reason {
        SkipReason::Unreadable { .. } => (0, 0),
        SkipReason::NoSessionData => (1, 0),
        SkipReason::NotASession { line } => (2, *line),
        SkipReason::MessageWithoutBody { line } => (3, *line),
        SkipReason::ContentNotText { line } => (4, *line),
        SkipReason::NameNotString { line } => (5, *line),
    }
}

fn reason_from_code(code: u8, line: u64) -> Result<SkipReason, DecodeError> {
    Ok(match code {
        1 => SkipReason::NoSessionData,
        2 => SkipReason::NotASession { line },
        3 => SkipReason::MessageWithoutBody { line },
        4 => SkipReason::ContentNotText { line },
        5 => SkipReason::NameNotString { line },
        _ => return Err(DecodeError::Corrupt("unknown skip reason")),
    })
}

fn feature_code(feature: Pi16Feature) -> u8 {
    match feature {
        Pi16Feature::ContextEdit => 1,
        Pi16Feature::Usage => 2,
        Pi16Feature::SystemMessage => 3,
        Pi16Feature::CompactionSystemMessage => 4,
    }
}

fn feature_from_code(code: u8) -> Result<Pi16Feature, DecodeError> {
    Pi16Feature::ALL
        .into_iter()
        .find(|f| feature_code(*f) == code)
        .ok_or(DecodeError::Corrupt("unknown pi 1.6 feature"))
}

fn put_u64(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(&n.to_le_bytes());
}

fn put_text(out: &mut Vec<u8>, text: &str) {
    put_u64(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

fn put_opt_text(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(text) => {
            out.push(1);
            put_text(out, text);
        }
        None => out.push(0),
    }
}

fn put_opt_json(out: &mut Vec<u8>, value: Option<&JsValue>) {
    put_opt_text(out, value.map(JsValue::stringify).as_deref());
}

fn put_opt_i64(out: &mut Vec<u8>, n: Option<i64>) {
    match n {
        Some(n) => {
            out.push(1);
            put_u64(out, n as u64);
        }
        None => out.push(0),
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.bytes.len() < n {
            return Err(DecodeError::Truncated);
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        let mut buf = [0; 4];
        buf.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(buf))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        let mut buf = [0; 8];
        buf.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(buf))
    }

    fn text(&mut self) -> Result<String, DecodeError> {
        let len = usize::try_from(self.u64()?).map_err(|_| DecodeError::Truncated)?;
        let bytes = self.take(len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError::Corrupt("text is not UTF-8"))
    }

    /// A slice of the text region, which must be one JSON string literal.
    fn literal(&mut self, texts: &Arc<String>) -> Result<MessagesText, DecodeError> {
        let start = usize::try_from(self.u64()?).map_err(|_| DecodeError::Truncated)?;
        let len = usize::try_from(self.u64()?).map_err(|_| DecodeError::Truncated)?;
        let end = start.checked_add(len).ok_or(DecodeError::Truncated)?;
        JsonLiteral::slice(texts.clone(), start, end)
            .map(MessagesText::from_json)
            .ok_or(DecodeError::Corrupt(
                "a message text is not a string literal",
            ))
    }

    fn present(&mut self) -> Result<bool, DecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(DecodeError::Corrupt("bad presence byte")),
        }
    }

    fn opt_text(&mut self) -> Result<Option<String>, DecodeError> {
        if self.present()? {
            self.text().map(Some)
        } else {
            Ok(None)
        }
    }

    fn opt_json(&mut self) -> Result<Option<JsValue>, DecodeError> {
        match self.opt_text()? {
            Some(text) => json::parse(&text)
                .map(Some)
                .map_err(|_| DecodeError::Corrupt("stored JSON does not parse")),
            None => Ok(None),
        }
    }

    fn opt_date(&mut self) -> Result<JsDate, DecodeError> {
        if self.present()? {
            Ok(JsDate::from_millis(self.u64()? as i64 as f64))
        } else {
            Ok(JsDate::INVALID)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<(String, CacheEntry)> {
        let stamp = FileStamp {
            size: 10,
            mtime_ns: -5,
            ctime_ns: 7,
            ino: 9,
            dev: 1,
        };
        vec![
            (
                "a.jsonl".to_string(),
                CacheEntry {
                    stamp,
                    scanned_at_ns: 99,
                    outcome: CachedOutcome::Session(
                        Box::new(SessionInfo {
                            path: PathBuf::new(),
                            id: Some(json::parse(r#""x\ud83d""#).unwrap()),
                            cwd: "/w".into(),
                            name: None,
                            parent_session_path: Some(JsValue::Number(1.5)),
                            created: JsDate::from_millis(-3.0),
                            modified: JsDate::INVALID,
                            message_count: 3,
                            first_message: "héllo".into(),
                            all_messages_text: "héllo there".into(),
                        }),
                        vec![
                            Pi16Mark {
                                feature: Pi16Feature::SystemMessage,
                                line: 2,
                                count: 3,
                            },
                            Pi16Mark {
                                feature: Pi16Feature::CompactionSystemMessage,
                                line: 9,
                                count: 1,
                            },
                        ],
                    ),
                },
            ),
            (
                "b.jsonl".to_string(),
                CacheEntry {
                    stamp,
                    scanned_at_ns: 1,
                    outcome: CachedOutcome::Skipped(SkipReason::ContentNotText { line: 4 }),
                },
            ),
        ]
    }

    fn encode_all(entries: &[(String, CacheEntry)]) -> Vec<u8> {
        encode(entries.iter().map(|(n, e)| (n.as_str(), e))).to_bytes()
    }

    #[test]
    fn records_round_trip() {
        let entries = sample();
        let decoded = decode(&encode_all(&entries)).unwrap();
        assert_eq!(decoded, entries);
    }

    #[test]
    fn damage_is_detected() {
        let bytes = encode_all(&sample());
        assert_eq!(decode(b"garbage"), Err(DecodeError::NotACache));
        assert_eq!(
            decode(&bytes[..bytes.len() - 1]),
            Err(DecodeError::Truncated)
        );
        let mut flipped = bytes.clone();
        let last = flipped.len() - 3;
        flipped[last] ^= 0x40;
        assert_eq!(decode(&flipped), Err(DecodeError::Checksum));
        let mut older = bytes.clone();
        older[8..12].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(decode(&older), Err(DecodeError::OtherVersion(0)));
    }
}
