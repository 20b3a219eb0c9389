//! Entries as JSON text for answers, from the lines' own bytes (see
//! [`crate::format::exact_text`]): an answer of many entries costs its text, not a tree of
//! values per entry, and strings reach the reader exactly as the file holds them.

use crate::format::exact_text;

use super::error::{ErrorKind, StoreError, StoreResult};
use super::session::Session;

/// Below this many bytes of lines, one thread writes them all.
const PARALLEL_BYTES: u64 = 4 * 1024 * 1024;

impl Session {
    /// The entry at `position` as JSON text, appended to `out`.
    pub fn write_entry_json(&self, position: u32, out: &mut String) -> StoreResult<()> {
        let text = self.line_text(position)?;
        let json = exact_text::entry_json(&text).map_err(|e| {
            let line = self.record(position).line();
            StoreError::at_line(
                ErrorKind::Io,
                line,
                format!("line {line} changed on disk: {e}"),
            )
        })?;
        out.push_str(&json);
        Ok(())
    }

    /// The entries at `positions` as the members of a JSON array (`a,b,c`, without the
    /// brackets), appended to `out`; large runs are written on every core.
    pub fn write_entries_json(&self, positions: &[u32], out: &mut String) -> StoreResult<()> {
        let bytes: u64 = positions.iter().map(|&p| self.line_len(p)).sum();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 8);
        if bytes < PARALLEL_BYTES || threads == 1 || positions.len() < 2 {
            return self.write_run(positions, out);
        }
        out.reserve(bytes as usize + positions.len());
        let chunk = positions.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = positions
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        let mut text = String::new();
                        self.write_run(part, &mut text).map(|()| text)
                    })
                })
                .collect();
            for (i, part) in parts.into_iter().enumerate() {
                let text = part.join().map_err(|_| {
                    StoreError::new(ErrorKind::Io, "a thread writing entries panicked")
                })??;
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&text);
            }
            Ok(())
        })
    }

    fn write_run(&self, positions: &[u32], out: &mut String) -> StoreResult<()> {
        for (i, &position) in positions.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            self.write_entry_json(position, out)?;
        }
        Ok(())
    }

    /// The length of an entry's line in bytes (what reading it back costs).
    pub fn line_len(&self, position: u32) -> u64 {
        match self.record(position).body() {
            super::index::Body::File { len, .. } => u64::from(len),
            super::index::Body::Held(text) => text.len() as u64,
        }
    }
}
