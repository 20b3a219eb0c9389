//! One arena for every text an index keeps (ids, parents naming no entry, providers, models,
//! the rare payload texts): each a LEB128 length and its UTF-8 bytes, named by its offset.

use super::packed::TEXT_LIMIT;

/// The arena would pass the offsets a record can hold.
#[derive(Debug)]
pub(crate) struct Full;

/// Appends `v` as LEB128 (7 bits a byte, low first, the high bit set on all but the last).
pub(crate) fn push_var(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

#[derive(Debug, Default)]
pub(crate) struct Texts {
    bytes: Vec<u8>,
}

impl Texts {
    pub(crate) fn from_bytes(bytes: Vec<u8>) -> Texts {
        Texts { bytes }
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
    }

    pub(crate) fn allocation_size(&self) -> usize {
        self.bytes.capacity()
    }

    pub(crate) fn push(&mut self, text: &str) -> Result<u32, Full> {
        let at = u32::try_from(self.bytes.len())
            .ok()
            .filter(|&at| u64::from(at) + text.len() as u64 + 10 < u64::from(TEXT_LIMIT))
            .ok_or(Full)?;
        push_var(&mut self.bytes, text.len() as u64);
        self.bytes.extend_from_slice(text.as_bytes());
        Ok(at)
    }

    /// The text at `at`; `None` when `at` names no whole UTF-8 text (only in a damaged
    /// persisted index, which the loader refuses).
    pub(crate) fn get(&self, at: u32) -> Option<&str> {
        let mut i = at as usize;
        let mut len = 0usize;
        for shift in (0..35).step_by(7) {
            let byte = *self.bytes.get(i)?;
            i += 1;
            len |= usize::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                let bytes = self.bytes.get(i..i.checked_add(len)?)?;
                return std::str::from_utf8(bytes).ok();
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_read_back_at_their_offsets() {
        let mut texts = Texts::default();
        let long = "x".repeat(300);
        let a = texts.push("a1b2c3d4").unwrap();
        let b = texts.push(&long).unwrap();
        let c = texts.push("").unwrap();
        assert_eq!(texts.get(a), Some("a1b2c3d4"));
        assert_eq!(texts.get(b), Some(long.as_str()));
        assert_eq!(texts.get(c), Some(""));
        assert_eq!(texts.get(c + 1), None, "past the end");
        let mut cut = Texts::from_bytes(texts.as_bytes()[..b as usize + 10].to_vec());
        assert_eq!(cut.get(b), None, "a length running past the end");
        cut.bytes.push(0xff);
        assert_eq!(
            cut.get(cut.bytes.len() as u32 - 1),
            None,
            "an unfinished length"
        );
    }
}
