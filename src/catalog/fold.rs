//! Text folded once, in Rust, before it reaches any engine: compatibility decomposition, the
//! combining marks dropped, then lower case. Both the stored text and the query go through
//! this one function, so SQLite and a later PostgreSQL backend compare the same bytes.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Bumped when the folding changes: a store index folded differently is rebuilt.
pub(crate) const FOLD_VERSION: u32 = 1;

/// `text` without case or diacritics (`Éclair` and `eclair` fold alike; `ﬁ` becomes `fi`).
pub(crate) fn fold(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.nfkd().filter(|c| !is_combining_mark(*c)) {
        out.extend(c.to_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn case_and_diacritics_go() {
        assert_eq!(fold("Crème BRÛLÉE"), "creme brulee");
        assert_eq!(fold("ﬁle"), "file");
        assert_eq!(fold("日本語"), "日本語");
        assert_eq!(fold("PARSER"), "parser");
    }
}
