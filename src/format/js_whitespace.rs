//! What JavaScript's `String.prototype.trim` and `\s` count as white space, which pi's checks
//! of empty text and its search use (wider than Rust's `char::is_whitespace`: BOM included).

/// Whether JavaScript counts `c` as white space.
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}
