//! Physical lines of a session file, split as Node's `readline` splits them for pi's listing
//! (`crlfDelay: Infinity`): at `\n`, `\r\n` and a lone `\r`.
//!
//! The file is streamed through one buffer that only grows to hold the longest line, so memory
//! stays bounded however large the file is.

use std::io::{self, Read};

const INITIAL_BUFFER: usize = 256 * 1024;

pub(crate) struct LineReader<R> {
    source: R,
    buf: Vec<u8>,
    /// Start of the unread part of `buf`.
    start: usize,
    /// End of the valid data in `buf`.
    end: usize,
    /// How far (from `start`) the current line is known to have no terminator.
    scanned: usize,
    eof: bool,
    line_number: u64,
}

impl<R: Read> LineReader<R> {
    #[cfg(test)]
    pub(crate) fn new(source: R) -> Self {
        Self::with_capacity(source, INITIAL_BUFFER)
    }

    /// A reader of a source about `expected` bytes long: the buffer starts no larger than
    /// that (zeroing a quarter megabyte for each small file costs more than reading it).
    pub(crate) fn with_expected_len(source: R, expected: u64) -> Self {
        let fits = usize::try_from(expected.saturating_add(1)).unwrap_or(INITIAL_BUFFER);
        Self::with_capacity(source, fits.min(INITIAL_BUFFER))
    }

    fn with_capacity(source: R, capacity: usize) -> Self {
        LineReader {
            source,
            buf: vec![0; capacity.max(1)],
            start: 0,
            end: 0,
            scanned: 0,
            eof: false,
            line_number: 0,
        }
    }

    /// The next line without its terminator, with its 1-based number.
    pub(crate) fn next_line(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        loop {
            let from = self.start + self.scanned;
            if let Some(offset) = memchr::memchr2(b'\n', b'\r', &self.buf[from..self.end]) {
                let at = from + offset;
                let terminator = if self.buf[at] == b'\n' {
                    1
                } else if at + 1 < self.end {
                    if self.buf[at + 1] == b'\n' { 2 } else { 1 }
                } else if self.eof {
                    1
                } else {
                    // A `\r` at the end of the data: whether it starts `\r\n` is not known yet.
                    self.scanned = at - self.start;
                    self.fill()?;
                    continue;
                };
                let line_start = self.start;
                self.start = at + terminator;
                self.scanned = 0;
                self.line_number += 1;
                return Ok(Some((self.line_number, &self.buf[line_start..at])));
            }
            self.scanned = self.end - self.start;
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let line_start = self.start;
                self.start = self.end;
                self.scanned = 0;
                self.line_number += 1;
                return Ok(Some((self.line_number, &self.buf[line_start..self.end])));
            }
            self.fill()?;
        }
    }

    /// Reads more data after the unread part, moving it to the front or growing the buffer.
    fn fill(&mut self) -> io::Result<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let grown = self.buf.len() * 2;
            self.buf.resize(grown, 0);
        }
        loop {
            match self.source.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out one byte per call, to cross every buffer boundary.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            match self.0.split_first() {
                Some((b, rest)) if !out.is_empty() => {
                    out[0] = *b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    fn lines(data: &[u8], trickle: bool) -> Vec<(u64, Vec<u8>)> {
        let collect = |mut reader: LineReader<Box<dyn Read + '_>>| {
            let mut out = Vec::new();
            while let Some((n, line)) = reader.next_line().unwrap() {
                out.push((n, line.to_vec()));
            }
            out
        };
        if trickle {
            return collect(LineReader::new(Box::new(Trickle(data))));
        }
        let out = collect(LineReader::new(Box::new(data)));
        // However wrong the expected length, the lines are the same.
        for expected in [0, 1, 3, data.len() as u64, u64::MAX] {
            let sized = collect(LineReader::with_expected_len(Box::new(data), expected));
            assert_eq!(sized, out, "expected length {expected}");
        }
        out
    }

    #[test]
    fn splits_like_readline() {
        for trickle in [false, true] {
            let got = lines(b"a\rb\r\nc\n\xe2\x80\xa8d\n\nf", trickle);
            let texts: Vec<&[u8]> = got.iter().map(|(_, l)| l.as_slice()).collect();
            assert_eq!(
                texts,
                vec![&b"a"[..], b"b", b"c", "\u{2028}d".as_bytes(), b"", b"f"]
            );
            assert_eq!(got.last().unwrap().0, 6);
            assert_eq!(lines(b"x\r", trickle).len(), 1);
            assert!(lines(b"", trickle).is_empty());
        }
    }

    #[test]
    fn long_lines_grow_the_buffer() {
        let long = vec![b'x'; INITIAL_BUFFER * 3 + 7];
        let mut data = long.clone();
        data.extend_from_slice(b"\r\nend");
        let got = lines(&data, false);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].1, long);
        assert_eq!(got[1].1, b"end");
    }
}
