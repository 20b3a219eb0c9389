//! The bytes of a persisted index: a fixed preamble (magic, format version, body length, body
//! checksum), then a body. A stats file's body is written and read in one pass; an index
//! file's body is its header's length, the header, then the index's arrays as they sit in
//! memory (see `sections`). Numbers are little-endian or LEB128; strings are a length and
//! their UTF-8 bytes.

use std::fs::File;
use std::os::unix::fs::FileExt;

use xxhash_rust::xxh3::Xxh3;

pub(crate) const MAGIC: &[u8; 8] = b"PISIDX\0\x01";
/// The layout of the body; bump on any change to what is written (2: the index's arrays as
/// they sit in memory instead of one encoded record per entry).
pub(crate) const FORMAT_VERSION: u32 = 2;
/// Magic, format version, body length, body checksum.
pub(crate) const PREAMBLE: usize = 8 + 4 + 8 + 8;

/// What an index file fails by; every failure means "rebuild".
#[derive(Debug)]
pub(crate) struct Corrupt(pub &'static str);

pub(crate) type Decoded<T> = Result<T, Corrupt>;

#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) bytes: Vec<u8>,
}

impl Writer {
    pub(crate) fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }

    pub(crate) fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }

    pub(crate) fn var(&mut self, v: u64) {
        super::super::index::push_var(&mut self.bytes, v);
    }

    pub(crate) fn str(&mut self, text: &str) {
        self.var(text.len() as u64);
        self.bytes.extend_from_slice(text.as_bytes());
    }

    /// The finished file: preamble and body.
    pub(crate) fn finish(self) -> Vec<u8> {
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
pub(crate) fn body(file: &[u8]) -> Decoded<&[u8]> {
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

/// An index file's preamble, its header's length and its header, then `sections` (written
/// after these bytes), all under one checksum.
pub(crate) fn index_head(header: &[u8], sections: &[&[u8]]) -> Vec<u8> {
    let header_len = (header.len() as u64).to_le_bytes();
    let mut sum = Xxh3::new();
    sum.update(&header_len);
    sum.update(header);
    let mut body_len = 8 + header.len() as u64;
    for section in sections {
        sum.update(section);
        body_len += section.len() as u64;
    }
    let mut out = Vec::with_capacity(PREAMBLE + 8 + header.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&body_len.to_le_bytes());
    out.extend_from_slice(&sum.digest().to_le_bytes());
    out.extend_from_slice(&header_len);
    out.extend_from_slice(header);
    out
}

/// An index file being read: its header, then the rest of its body read piece by piece into
/// the caller's buffers, under the checksum.
pub(crate) struct IndexReader<'f> {
    file: &'f File,
    pub(crate) header: Vec<u8>,
    at: u64,
    end: u64,
    sum: Xxh3,
    expected: u64,
}

impl<'f> IndexReader<'f> {
    /// Checks the preamble against the file's length and reads the header.
    pub(crate) fn open(file: &'f File) -> Decoded<IndexReader<'f>> {
        let len = file.metadata().map_err(|_| Corrupt("cannot stat"))?.len();
        let mut head = [0u8; PREAMBLE + 8];
        file.read_exact_at(&mut head, 0)
            .map_err(|_| Corrupt("not an index file (magic)"))?;
        if &head[..8] != MAGIC {
            return Err(Corrupt("not an index file (magic)"));
        }
        let word = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().unwrap_or([0; 8]));
        if u32::from_le_bytes(head[8..12].try_into().unwrap_or([0; 4])) != FORMAT_VERSION {
            return Err(Corrupt("another format version"));
        }
        let (body_len, expected, header_len) = (word(12), word(20), word(28));
        if Some(len) != body_len.checked_add(PREAMBLE as u64) {
            return Err(Corrupt("truncated or extended"));
        }
        let header_len = usize::try_from(header_len)
            .ok()
            .filter(|&h| (h as u64) <= body_len - 8)
            .ok_or(Corrupt("header length"))?;
        let mut reader = IndexReader {
            file,
            header: Vec::new(),
            at: PREAMBLE as u64,
            end: len,
            sum: Xxh3::new(),
            expected,
        };
        reader.sum.update(&head[PREAMBLE..]);
        reader.at += 8;
        let mut header = vec![0u8; header_len];
        reader.read_into(&mut header)?;
        reader.header = header;
        Ok(reader)
    }

    /// Bytes of the body not read yet.
    pub(crate) fn remaining(&self) -> u64 {
        self.end - self.at
    }

    /// Fills `buffer` with the next bytes of the body.
    pub(crate) fn read_into(&mut self, buffer: &mut [u8]) -> Decoded<()> {
        if buffer.len() as u64 > self.remaining() {
            return Err(Corrupt("short body"));
        }
        self.file
            .read_exact_at(buffer, self.at)
            .map_err(|_| Corrupt("cannot read the index"))?;
        self.sum.update(buffer);
        self.at += buffer.len() as u64;
        Ok(())
    }

    /// Checks that the whole body was read and matches its checksum.
    pub(crate) fn finish(self) -> Decoded<()> {
        if self.at != self.end {
            return Err(Corrupt("trailing bytes"));
        }
        if self.sum.digest() != self.expected {
            return Err(Corrupt("checksum mismatch"));
        }
        Ok(())
    }
}

pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    fn take(&mut self, n: usize) -> Decoded<&'a [u8]> {
        let end = self.at.checked_add(n).ok_or(Corrupt("length overflow"))?;
        let slice = self.bytes.get(self.at..end).ok_or(Corrupt("short body"))?;
        self.at = end;
        Ok(slice)
    }

    pub(crate) fn u8(&mut self) -> Decoded<u8> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u64(&mut self) -> Decoded<u64> {
        let bytes = self.take(8)?;
        Ok(u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])))
    }

    pub(crate) fn f64(&mut self) -> Decoded<f64> {
        Ok(f64::from_bits(self.u64()?))
    }

    pub(crate) fn var(&mut self) -> Decoded<u64> {
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

    pub(crate) fn str(&mut self) -> Decoded<&'a str> {
        let len = self.var()? as usize;
        std::str::from_utf8(self.take(len)?).map_err(|_| Corrupt("string is not UTF-8"))
    }

    pub(crate) fn is_done(&self) -> bool {
        self.at == self.bytes.len()
    }
}
