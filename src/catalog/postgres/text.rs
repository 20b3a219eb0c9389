//! Everything PostgreSQL-only about the text: each piece a `LIKE '%piece%'` over the folded
//! text (which `pg_trgm`'s GIN indexes answer, and which matches exactly the bytes SQLite's
//! trigram index matches: the text and the pieces are folded by the same Rust function),
//! ranking by `pg_trgm` similarity, and snippets cut in Rust.

use crate::catalog::query::Piece;

/// The marks around a match in a snippet (the SQLite backend's marks).
const MARK_OPEN: &str = "«";
const MARK_CLOSE: &str = "»";

/// How many characters a snippet shows on each side of the match.
const AROUND: usize = 40;

/// `piece` as a LIKE pattern matching it anywhere (`\`, `%` and `_` taken literally).
pub(crate) fn contains_pattern(piece: &Piece) -> String {
    let mut pattern = String::with_capacity(piece.text.len() + 2);
    pattern.push('%');
    for c in piece.text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// PostgreSQL's text cannot hold NUL: it is dropped (a query cannot contain it either).
pub(crate) fn storable(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        text.replace('\0', "").into()
    } else {
        text.into()
    }
}

/// The text around the earliest match of any piece, the match marked.
pub(crate) fn snippet(body: &str, thinking: &str, pieces: &[Piece]) -> String {
    let earliest = |text: &str| {
        pieces
            .iter()
            .filter_map(|p| text.find(&p.text).map(|at| (at, p.text.len())))
            .min()
    };
    let (text, found) = match earliest(body) {
        Some(found) => (body, Some(found)),
        None => (thinking, earliest(thinking)),
    };
    let Some((at, len)) = found else {
        return body.chars().take(AROUND * 2).collect();
    };
    let start = text[..at]
        .char_indices()
        .rev()
        .nth(AROUND - 1)
        .map_or(0, |(i, _)| i);
    let end = text[at + len..]
        .char_indices()
        .nth(AROUND)
        .map_or(text.len(), |(i, _)| at + len + i);
    format!(
        "{}{}{MARK_OPEN}{}{MARK_CLOSE}{}{}",
        if start > 0 { "…" } else { "" },
        &text[start..at],
        &text[at..at + len],
        &text[at + len..end],
        if end < text.len() { "…" } else { "" },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_take_wildcards_literally() {
        let piece = Piece {
            text: "50%_a\\b".into(),
        };
        assert_eq!(contains_pattern(&piece), "%50\\%\\_a\\\\b%");
    }

    #[test]
    fn snippets_mark_the_first_match() {
        let pieces = [Piece {
            text: "parser".into(),
        }];
        assert_eq!(snippet("the parser ran", "", &pieces), "the «parser» ran");
        let long = format!("{}parser{}", "x".repeat(100), "y".repeat(100));
        let cut = snippet(&long, "", &pieces);
        assert!(cut.starts_with('…') && cut.ends_with('…'), "{cut}");
        assert_eq!(cut.chars().count(), 40 + 40 + 6 + 2 + 2);
        assert_eq!(snippet("none", "deep parser", &pieces), "deep «parser»");
    }
}
