//! The tree facts (previews and filter bits, see [`crate::store::tree_memo`]) filed beside a
//! persisted index, in `<index>.tree`: the index's preamble (magic, format, length,
//! checksum), then this file's own version, the index generation they were computed under,
//! and the facts of the first N entries. Derived data: any doubt means it is ignored, and the
//! next computation writes it again.

use super::super::tree_memo::TreeFacts;
use super::IndexPlace;
use super::codec::{self, Decoded, Reader, Writer};
use super::safe_file;

/// The layout of this file and the rules its facts were computed by: bump it on any change to
/// either (a preview written differently, a filter bit that means something else).
const VERSION: u64 = 1;

/// The facts of the first entries, when the file was written under `generation` (they stay
/// true while the index only grows).
pub(crate) fn load(place: &IndexPlace, generation: u64) -> Option<TreeFacts> {
    let path = place.tree_file();
    let bytes = match safe_file::read_regular(&path, false) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::info!("{}: tree previews not read: {e}", path.display());
            return None;
        }
    };
    let facts = decode(&bytes, generation);
    if facts.is_none() {
        tracing::info!(
            "{}: tree previews ignored (another index's, or damaged)",
            path.display()
        );
    }
    facts
}

fn decode(bytes: &[u8], generation: u64) -> Option<TreeFacts> {
    let read = |r: &mut Reader| -> Decoded<Option<TreeFacts>> {
        if r.u64()? != VERSION || r.u64()? != generation {
            return Ok(None);
        }
        let count = r.var()? as usize;
        let text = r.str()?.to_string();
        // Each length takes a byte at least: a larger count is damage, not a reason to
        // allocate.
        if count > bytes.len() {
            return Ok(None);
        }
        let lengths = (0..count).map(|_| r.var()).collect::<Decoded<Vec<_>>>()?;
        let shown = (0..count.div_ceil(64))
            .map(|_| r.u64())
            .collect::<Decoded<Vec<_>>>()?;
        Ok(r.is_done()
            .then(|| TreeFacts::from_parts(text, &lengths, shown))
            .flatten())
    };
    read(&mut Reader::new(codec::body(bytes).ok()?))
        .ok()
        .flatten()
}

/// Files the facts of the first `records` entries under `generation`. Failures are logged by
/// the writer, never returned: the file is a cache.
pub(crate) fn save(place: &IndexPlace, generation: u64, facts: &TreeFacts, records: usize) {
    if place.usable_dir(false).is_err() {
        return;
    }
    let mut w = Writer::default();
    encode(&mut w, generation, facts, records);
    super::write_file(place, &place.tree_file(), &[&w.finish()]);
}

fn encode(w: &mut Writer, generation: u64, facts: &TreeFacts, records: usize) {
    let (text, lengths, shown) = facts.prefix_parts(records);
    w.u64(VERSION);
    w.u64(generation);
    w.var(lengths.len() as u64);
    w.str(text);
    for length in lengths {
        w.var(u64::from(length));
    }
    for word in shown {
        w.u64(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(n: usize) -> TreeFacts {
        let rows: Vec<(String, bool)> = (0..n)
            .map(|i| (format!("row {i} é…"), i % 3 == 0))
            .collect();
        TreeFacts::from_rows(&rows)
    }

    #[test]
    fn filed_facts_read_back_under_their_generation_only() {
        let all = facts(150);
        for records in [0, 1, 64, 65, 150] {
            let mut w = Writer::default();
            encode(&mut w, 7, &all, records);
            let bytes = w.finish();
            let back = decode(&bytes, 7).expect("read back");
            assert_eq!(back, facts(records), "{records}");
            assert_eq!(decode(&bytes, 8), None, "another generation's");
            for at in [0, 9, 30, bytes.len() - 1] {
                let mut damaged = bytes.clone();
                damaged[at] ^= 0x41;
                assert_eq!(decode(&damaged, 7), None, "damaged at {at}");
            }
            assert_eq!(decode(&bytes[..bytes.len() - 1], 7), None, "cut");
        }
    }
}
