//! The bytes of a persisted index: a fixed preamble (magic, format version, body length, body
//! checksum), then a body written and read in one pass. Numbers are little-endian or LEB128;
//! strings are a length and their UTF-8 bytes.

use std::sync::Arc;

use crate::format::entry::{Kind, LineFacts, Payload, Ref, Replacement, Role};

use super::super::index::{Body, Record};

pub const MAGIC: &[u8; 8] = b"PISIDX\0\x01";
/// The layout of the body; bump on any change to what is written below.
pub const FORMAT_VERSION: u32 = 1;
/// Magic, format version, body length, body checksum.
pub const PREAMBLE: usize = 8 + 4 + 8 + 8;

/// What an index file fails by; every failure means "rebuild".
#[derive(Debug)]
pub struct Corrupt(pub &'static str);

pub type Decoded<T> = Result<T, Corrupt>;

#[derive(Default)]
pub struct Writer {
    pub bytes: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }

    pub fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }

    pub fn var(&mut self, mut v: u64) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.bytes.push(byte);
                return;
            }
            self.bytes.push(byte | 0x80);
        }
    }

    pub fn str(&mut self, text: &str) {
        self.var(text.len() as u64);
        self.bytes.extend_from_slice(text.as_bytes());
    }

    pub fn opt_str(&mut self, text: Option<&str>) {
        match text {
            None => self.u8(0),
            Some(text) => {
                self.u8(1);
                self.str(text);
            }
        }
    }

    /// The finished file: preamble and body.
    pub fn finish(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(PREAMBLE + self.bytes.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(self.bytes.len() as u64).to_le_bytes());
        out.extend_from_slice(&xxhash_rust::xxh3::xxh3_64(&self.bytes).to_le_bytes());
        out.extend_from_slice(&self.bytes);
        out
    }
}

/// The body of `file` once its preamble is checked (magic, version, length, checksum).
pub fn body(file: &[u8]) -> Decoded<&[u8]> {
    if file.len() < PREAMBLE || &file[..8] != MAGIC {
        return Err(Corrupt("not an index file (magic)"));
    }
    let word = |at: usize| u64::from_le_bytes(file[at..at + 8].try_into().unwrap_or([0; 8]));
    let version = u32::from_le_bytes(file[8..12].try_into().unwrap_or([0; 4]));
    if version != FORMAT_VERSION {
        return Err(Corrupt("another format version"));
    }
    let (len, sum) = (word(12), word(20));
    let body = &file[PREAMBLE..];
    if body.len() as u64 != len {
        return Err(Corrupt("truncated or extended"));
    }
    if xxhash_rust::xxh3::xxh3_64(body) != sum {
        return Err(Corrupt("checksum mismatch"));
    }
    Ok(body)
}

pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    fn take(&mut self, n: usize) -> Decoded<&'a [u8]> {
        let end = self.at.checked_add(n).ok_or(Corrupt("length overflow"))?;
        let slice = self.bytes.get(self.at..end).ok_or(Corrupt("short body"))?;
        self.at = end;
        Ok(slice)
    }

    pub fn u8(&mut self) -> Decoded<u8> {
        Ok(self.take(1)?[0])
    }

    pub fn u64(&mut self) -> Decoded<u64> {
        let bytes = self.take(8)?;
        Ok(u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])))
    }

    pub fn f64(&mut self) -> Decoded<f64> {
        Ok(f64::from_bits(self.u64()?))
    }

    pub fn var(&mut self) -> Decoded<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Corrupt("varint too long"))
    }

    pub fn str(&mut self) -> Decoded<&'a str> {
        let len = self.var()? as usize;
        std::str::from_utf8(self.take(len)?).map_err(|_| Corrupt("string is not UTF-8"))
    }

    pub fn opt_str(&mut self) -> Decoded<Option<&'a str>> {
        match self.u8()? {
            0 => Ok(None),
            1 => self.str().map(Some),
            _ => Err(Corrupt("bad option tag")),
        }
    }

    pub fn is_done(&self) -> bool {
        self.at == self.bytes.len()
    }
}

const KINDS: [Kind; 15] = [
    Kind::Session,
    Kind::Message,
    Kind::ThinkingLevelChange,
    Kind::ModelChange,
    Kind::ActiveToolsChange,
    Kind::Compaction,
    Kind::BranchSummary,
    Kind::Custom,
    Kind::CustomMessage,
    Kind::Label,
    Kind::SessionInfo,
    Kind::Leaf,
    Kind::ContextEdit,
    Kind::Usage,
    Kind::Other,
];

const ROLES: [Role; 5] = [
    Role::User,
    Role::Assistant,
    Role::ToolResult,
    Role::System,
    Role::Other,
];

fn tag_of<T: PartialEq>(table: &[T], value: &T) -> u8 {
    table.iter().position(|v| v == value).unwrap_or(0) as u8
}

fn from_tag<T: Copy>(table: &[T], tag: u8) -> Decoded<T> {
    table
        .get(tag as usize)
        .copied()
        .ok_or(Corrupt("unknown tag"))
}

fn write_ref(w: &mut Writer, r: &Ref) {
    match r {
        Ref::Missing => w.u8(0),
        Ref::Null => w.u8(1),
        Ref::Invalid => w.u8(2),
        Ref::Id(id) => {
            w.u8(3);
            w.str(id);
        }
    }
}

fn read_ref(r: &mut Reader) -> Decoded<Ref> {
    Ok(match r.u8()? {
        0 => Ref::Missing,
        1 => Ref::Null,
        2 => Ref::Invalid,
        3 => Ref::Id(r.str()?.into()),
        _ => return Err(Corrupt("bad reference tag")),
    })
}

fn arc(text: Option<&str>) -> Option<Arc<str>> {
    text.map(Arc::from)
}

/// One record: facts, where its bytes are, its line number. Only records whose bodies are in
/// the file are ever persisted.
pub fn write_record(w: &mut Writer, record: &Record) -> bool {
    let Body::File { offset, len } = record.body else {
        return false;
    };
    let facts = &record.facts;
    w.u8(tag_of(&KINDS, &facts.kind));
    let flags = u8::from(facts.is_object)
        | u8::from(facts.has_type) << 1
        | u8::from(facts.has_timestamp) << 2;
    w.u8(flags);
    w.opt_str(facts.other_type.as_deref());
    w.opt_str(facts.id.as_deref());
    write_ref(w, &facts.parent);
    write_ref(w, &facts.target);
    w.f64(facts.timestamp_millis);
    match &facts.payload {
        Payload::None => w.u8(0),
        Payload::Message {
            role,
            provider,
            model,
        } => {
            w.u8(1);
            w.u8(tag_of(&ROLES, role));
            w.opt_str(provider.as_deref());
            w.opt_str(model.as_deref());
        }
        Payload::ThinkingLevel(level) => {
            w.u8(2);
            w.opt_str(level.as_deref());
        }
        Payload::ModelChange { provider, model_id } => {
            w.u8(3);
            w.opt_str(provider.as_deref());
            w.opt_str(model_id.as_deref());
        }
        Payload::Compaction {
            first_kept,
            retained_tail,
            has_system_message,
        } => {
            w.u8(4);
            w.opt_str(first_kept.as_deref());
            w.u8(u8::from(*retained_tail) | u8::from(*has_system_message) << 1);
        }
        Payload::ContextEdit(replacement) => {
            w.u8(5);
            w.u8(match replacement {
                Replacement::Absent => 0,
                Replacement::Null => 1,
                Replacement::Value => 2,
            });
        }
        Payload::Label(label) => {
            w.u8(6);
            w.opt_str(label.as_deref());
        }
        Payload::SessionInfo(name) => {
            w.u8(7);
            w.opt_str(name.as_deref());
        }
    }
    w.var(offset);
    w.var(u64::from(len));
    w.var(record.line);
    true
}

pub fn read_record(r: &mut Reader) -> Decoded<Record> {
    let kind = from_tag(&KINDS, r.u8()?)?;
    let flags = r.u8()?;
    let other_type = r.opt_str()?.map(Box::from);
    let id = r.opt_str()?.map(Into::into);
    let parent = read_ref(r)?;
    let target = read_ref(r)?;
    let timestamp_millis = r.f64()?;
    let payload = match r.u8()? {
        0 => Payload::None,
        1 => Payload::Message {
            role: from_tag(&ROLES, r.u8()?)?,
            provider: arc(r.opt_str()?),
            model: arc(r.opt_str()?),
        },
        2 => Payload::ThinkingLevel(arc(r.opt_str()?)),
        3 => Payload::ModelChange {
            provider: arc(r.opt_str()?),
            model_id: arc(r.opt_str()?),
        },
        4 => {
            let first_kept = r.opt_str()?.map(Into::into);
            let bits = r.u8()?;
            Payload::Compaction {
                first_kept,
                retained_tail: bits & 1 != 0,
                has_system_message: bits & 2 != 0,
            }
        }
        5 => Payload::ContextEdit(match r.u8()? {
            0 => Replacement::Absent,
            1 => Replacement::Null,
            2 => Replacement::Value,
            _ => return Err(Corrupt("bad replacement tag")),
        }),
        6 => Payload::Label(arc(r.opt_str()?)),
        7 => Payload::SessionInfo(arc(r.opt_str()?)),
        _ => return Err(Corrupt("bad payload tag")),
    };
    let offset = r.var()?;
    let len = u32::try_from(r.var()?).map_err(|_| Corrupt("line length"))?;
    let line = r.var()?;
    let facts = LineFacts {
        kind,
        other_type,
        is_object: flags & 1 != 0,
        has_type: flags & 2 != 0,
        id,
        parent,
        has_timestamp: flags & 4 != 0,
        timestamp_millis,
        target,
        payload,
    };
    Ok(Record::new(facts, Body::File { offset, len }, line))
}
