//! pi 1.6's `a.localeCompare(b)` on file names: ICU collation, as V8 does it.
//!
//! V8 collates in the process locale; this program always uses the CLDR root collation, which
//! is what V8 uses in `en`, `C`/POSIX (mapped to `en-US`) and most other locales. Locales with
//! their own tailoring (`da`/`nb` treat `aa` as `å`, `sv` puts `ä` after `z`, ...) can order tied
//! sessions differently in pi: a deliberate difference, listed in protocol.md.

use std::cmp::Ordering;
use std::sync::LazyLock;

use icu_collator::options::CollatorOptions;
use icu_collator::{CollatorBorrowed, CollatorPreferences};

static ROOT: LazyLock<Option<CollatorBorrowed<'static>>> = LazyLock::new(|| {
    CollatorBorrowed::try_new(CollatorPreferences::default(), CollatorOptions::default()).ok()
});

/// `a.localeCompare(b)` under the root collation (tertiary strength, as V8's default). Byte
/// order stands in should the compiled collation data ever fail to load.
pub(crate) fn locale_compare(a: &str, b: &str) -> Ordering {
    match ROOT.as_ref() {
        Some(collator) => collator.compare(a, b),
        None => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_as_v8_sorts_them_in_en_us() {
        // pi 1.6's `names.sort((a, b) => b.localeCompare(a))` on these names, run in Node
        // (docs/research/pi-1.6.md, exp8): `B b Ab a a.b a-b a_b`.
        let ids = ["a-b", "a_b", "B", "a", "a.b", "Ab", "b"];
        let mut names: Vec<String> = ids
            .iter()
            .map(|id| format!("2026-01-01T00-00-00-000Z_{id}.jsonl"))
            .collect();
        names.sort_by(|a, b| locale_compare(b, a));
        let sorted: Vec<&str> = names.iter().map(|n| &n[25..n.len() - 6]).collect();
        assert_eq!(sorted, ["B", "b", "Ab", "a", "a.b", "a-b", "a_b"]);
        // Bare ids, as Node 22 orders them (`.` in `.jsonl` no longer follows them).
        let mut bare = ids.to_vec();
        bare.sort_by(|a, b| locale_compare(b, a));
        assert_eq!(bare, ["B", "b", "Ab", "a.b", "a-b", "a_b", "a"]);
    }
}
