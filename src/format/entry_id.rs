//! Entry ids, stored without a heap allocation when short (pi's are 8 characters).
//!
//! A session keeps every id twice (the entry's own and its child's `parentId`) plus once in
//! the id map: inline storage keeps a 500 MB session's index in tens of megabytes.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

const INLINE: usize = 22;

/// An entry id (or any short string an index keeps per line), read as a `&str` through
/// `Deref`; short ids are kept inline, without an allocation.
#[derive(Clone)]
pub struct EntryId(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

impl EntryId {
    pub(crate) fn as_str(&self) -> &str {
        match &self.0 {
            // The bytes were copied from a `&str` of this length.
            Repr::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..*len as usize]).unwrap_or_default()
            }
            Repr::Heap(text) => text,
        }
    }
}

impl From<&str> for EntryId {
    fn from(text: &str) -> Self {
        if text.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            EntryId(Repr::Inline {
                len: text.len() as u8,
                bytes,
            })
        } else {
            EntryId(Repr::Heap(text.into()))
        }
    }
}

impl From<String> for EntryId {
    fn from(text: String) -> Self {
        EntryId::from(text.as_str())
    }
}

impl Deref for EntryId {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for EntryId {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for EntryId {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for EntryId {}

impl Hash for EntryId {
    // Hashes as `str` does, so maps keyed by ids can be looked up with `&str`.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_ids_read_back_and_look_up_by_str() {
        let short = EntryId::from("a1b2c3d4");
        let long = EntryId::from("0194aa3e-a7c1-7b0e-9a55-000000000000");
        assert!(matches!(short, EntryId(Repr::Inline { .. })));
        assert!(matches!(long, EntryId(Repr::Heap(_))));
        assert_eq!(short.as_str(), "a1b2c3d4");
        let map: std::collections::HashMap<EntryId, u32> =
            [(short, 1), (long, 2)].into_iter().collect();
        assert_eq!(map.get("a1b2c3d4"), Some(&1));
        assert_eq!(map.get("0194aa3e-a7c1-7b0e-9a55-000000000000"), Some(&2));
    }
}
