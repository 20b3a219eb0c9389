//! Streaming a session file line by line, reading each line's facts on every core.
//!
//! One thread reads the file in chunks cut at line ends, workers turn each chunk's lines into
//! [`LineRead`]s, and the caller receives them in file order. Memory stays bounded by the
//! chunks in flight, whatever the file's size.

use std::collections::BTreeMap;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use crate::format::entry::{LineRead, read_line};

use super::error::{ErrorKind, StoreError, StoreResult};
use super::file::SessionFile;

const CHUNK_BYTES: usize = 2 << 20;

/// A chunk of whole lines, starting at `offset` in the file.
struct Chunk {
    seq: usize,
    offset: u64,
    bytes: Vec<u8>,
}

/// A chunk with its lines read: `(start, end)` within the chunk, what the line says, and
/// what the scan's digest made of it.
struct ReadChunk<D> {
    chunk: Chunk,
    lines: Vec<(usize, usize, LineRead, D)>,
}

/// The bytes `start..end` of a file, which begin at physical line `first_line` (1-based).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) first_line: u64,
}

/// Calls `each(line_number, offset, bytes, read)` for every line of `span` (split on `\n`; a
/// last line without its newline included), in file order.
pub(crate) fn scan_lines(
    file: &SessionFile,
    span: Span,
    max_line_bytes: usize,
    mut each: impl FnMut(u64, u64, &[u8], LineRead) -> StoreResult<()>,
) -> StoreResult<()> {
    scan_lines_digested(
        file,
        span,
        max_line_bytes,
        &|_, _| (),
        |n, offset, bytes, read, ()| each(n, offset, bytes, read),
    )
}

/// [`scan_lines`], with `digest(bytes, read)` of every line computed on the workers beside
/// its facts (while its bytes are in hand) and handed to `each` with them: what a first read
/// files for later reads costs no second pass over the file.
pub fn scan_lines_digested<D: Send>(
    file: &SessionFile,
    span: Span,
    max_line_bytes: usize,
    digest: &(dyn Fn(&[u8], &LineRead) -> D + Sync),
    mut each: impl FnMut(u64, u64, &[u8], LineRead, D) -> StoreResult<()>,
) -> StoreResult<()> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let (job_tx, job_rx) = sync_channel::<Chunk>(workers * 2);
    let (done_tx, done_rx) = sync_channel::<Result<ReadChunk<D>, StoreError>>(workers * 2);
    // Delivered chunks' buffers go back to the reader, so a scan allocates a handful of
    // buffers whatever the file's size.
    let (free_tx, free_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let job_rx = Arc::new(Mutex::new(job_rx));
    std::thread::scope(|scope| {
        let reader_done = done_tx.clone();
        scope.spawn(move || {
            if let Err(e) = read_chunks(file, span, max_line_bytes, &job_tx, &free_rx) {
                let _ = reader_done.send(Err(e));
            }
        });
        for _ in 0..workers {
            let jobs = Arc::clone(&job_rx);
            let done = done_tx.clone();
            scope.spawn(move || read_facts(&jobs, &done, digest));
        }
        drop(done_tx);
        deliver_in_order(&done_rx, &free_tx, span.first_line, &mut each)
    })
}

fn deliver_in_order<D>(
    done: &Receiver<Result<ReadChunk<D>, StoreError>>,
    free: &std::sync::mpsc::Sender<Vec<u8>>,
    first_line: u64,
    each: &mut impl FnMut(u64, u64, &[u8], LineRead, D) -> StoreResult<()>,
) -> StoreResult<()> {
    let mut waiting: BTreeMap<usize, ReadChunk<D>> = BTreeMap::new();
    let mut next = 0usize;
    let mut line_number = first_line.saturating_sub(1);
    for result in done.iter() {
        let read = result?;
        waiting.insert(read.chunk.seq, read);
        while let Some(read) = waiting.remove(&next) {
            let ReadChunk { chunk, lines } = read;
            for (start, end, line, digest) in lines {
                line_number += 1;
                each(
                    line_number,
                    chunk.offset + start as u64,
                    &chunk.bytes[start..end],
                    line,
                    digest,
                )?;
            }
            let _ = free.send(chunk.bytes);
            next += 1;
        }
    }
    Ok(())
}

fn read_facts<D>(
    jobs: &Mutex<Receiver<Chunk>>,
    done: &SyncSender<Result<ReadChunk<D>, StoreError>>,
    digest: &(dyn Fn(&[u8], &LineRead) -> D + Sync),
) {
    loop {
        let chunk = match jobs.lock() {
            Ok(rx) => match rx.recv() {
                Ok(chunk) => chunk,
                Err(_) => return,
            },
            Err(_) => return,
        };
        let mut lines = Vec::new();
        let mut start = 0;
        while start < chunk.bytes.len() {
            let end = memchr::memchr(b'\n', &chunk.bytes[start..])
                .map_or(chunk.bytes.len(), |p| start + p);
            let bytes = &chunk.bytes[start..end];
            let read = read_line(bytes);
            let digested = digest(bytes, &read);
            lines.push((start, end, read, digested));
            start = end + 1;
        }
        if done.send(Ok(ReadChunk { chunk, lines })).is_err() {
            return;
        }
    }
}

/// Reads the bytes of `span` in chunks that end at a line end.
fn read_chunks(
    file: &SessionFile,
    span: Span,
    max_line_bytes: usize,
    jobs: &SyncSender<Chunk>,
    free: &Receiver<Vec<u8>>,
) -> StoreResult<()> {
    let path = file.path();
    let total = span.end;
    let mut carry: Vec<u8> = Vec::new();
    let mut carry_offset = span.start;
    let mut position = span.start;
    let mut seq = 0usize;
    let mut lines_before = span.first_line.saturating_sub(1);
    while position < total {
        let want = (CHUNK_BYTES as u64).min(total - position) as usize;
        let mut bytes = free.try_recv().unwrap_or_default();
        bytes.clear();
        bytes.extend_from_slice(&carry);
        let start = bytes.len();
        bytes.resize(start + want, 0);
        read_exact_at(file.file(), &mut bytes[start..], position, path)?;
        position += want as u64;
        let cut = if position >= total {
            bytes.len()
        } else {
            match memchr::memrchr(b'\n', &bytes) {
                Some(p) => p + 1,
                None => {
                    if bytes.len() > max_line_bytes {
                        return Err(too_long(path, lines_before + 1, max_line_bytes));
                    }
                    carry.clear();
                    carry.extend_from_slice(&bytes);
                    continue;
                }
            }
        };
        carry.clear();
        carry.extend_from_slice(&bytes[cut..]);
        bytes.truncate(cut);
        if let Some(line) = longest_line_over(&bytes, max_line_bytes) {
            return Err(too_long(path, lines_before + line, max_line_bytes));
        }
        lines_before += memchr::memchr_iter(b'\n', &bytes).count() as u64;
        let offset = carry_offset;
        carry_offset += cut as u64;
        if jobs.send(Chunk { seq, offset, bytes }).is_err() {
            return Ok(());
        }
        seq += 1;
    }
    Ok(())
}

/// The 1-based line (within `bytes`) of the first line longer than `max`, if any.
fn longest_line_over(bytes: &[u8], max: usize) -> Option<u64> {
    if bytes.len() <= max {
        return None;
    }
    let mut start = 0;
    for (n, end) in memchr::memchr_iter(b'\n', bytes)
        .chain(std::iter::once(bytes.len()))
        .enumerate()
    {
        if end - start > max {
            return Some(n as u64 + 1);
        }
        start = end + 1;
    }
    None
}

/// A line over the reader's limit, named by its line number.
pub(super) fn too_long(path: &Path, line: u64, limit: usize) -> StoreError {
    StoreError::at_line(
        ErrorKind::LineTooLong,
        line,
        format!(
            "{}: line {line} is longer than {limit} bytes",
            path.display()
        ),
    )
    .naming(path)
}

fn read_exact_at(
    file: &std::fs::File,
    buf: &mut [u8],
    offset: u64,
    path: &Path,
) -> StoreResult<()> {
    file.read_exact_at(buf, offset)
        .map_err(|e| StoreError::io(path, "cannot read", e))
}

/// Where the last `\n` in `start..end` is, reading backwards in blocks (a torn or growing last
/// line costs one pass over itself, not over the file).
pub(crate) fn last_newline(file: &SessionFile, start: u64, end: u64) -> StoreResult<Option<u64>> {
    const BLOCK: u64 = 64 << 10;
    let mut buffer = vec![0u8; BLOCK as usize];
    let mut high = end;
    while high > start {
        let low = high.saturating_sub(BLOCK).max(start);
        let block = &mut buffer[..(high - low) as usize];
        read_exact_at(file.file(), block, low, file.path())?;
        if let Some(p) = memchr::memrchr(b'\n', block) {
            return Ok(Some(low + p as u64));
        }
        high = low;
    }
    Ok(None)
}
