//! A search query as typed, cut into the pieces each hit must hold: quoted phrases as
//! written, other words one by one, each folded. Engine-neutral: a backend turns pieces into
//! its own matching (always as bound data, never as query syntax of its own).

use super::fold::fold;

/// Shorter pieces are below the trigram index's reach: they are found by a scan.
pub(crate) const TRIGRAM: usize = 3;

/// One piece a hit must contain, folded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) text: String,
}

impl Piece {
    pub(crate) fn indexed(&self) -> bool {
        self.text.chars().count() >= TRIGRAM
    }
}

/// Why a query cannot be searched; positions count characters from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum QueryError {
    Empty,
    Nul { position: usize },
    UnclosedQuote { position: usize },
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueryError::Empty => f.write_str("the search query is empty"),
            QueryError::Nul { position } => write!(
                f,
                "the search query holds a NUL character at position {position}"
            ),
            QueryError::UnclosedQuote { position } => write!(
                f,
                "the quote at position {position} of the search query is never closed"
            ),
        }
    }
}

/// The pieces of `query`: `"a phrase"` as one piece, spaces kept; other words split on
/// whitespace. Everything else (`*`, `NEAR`, `col:`, `(`) is text like any other.
pub(crate) fn parse(query: &str) -> Result<Vec<Piece>, QueryError> {
    let mut pieces = Vec::new();
    let mut word = String::new();
    let mut phrase: Option<(usize, String)> = None;
    for (i, c) in query.chars().enumerate() {
        let position = i + 1;
        if c == '\0' {
            return Err(QueryError::Nul { position });
        }
        match (&mut phrase, c) {
            (Some(_), '"') => {
                let (_, text) = phrase.take().unwrap();
                push(&mut pieces, &text);
            }
            (Some((_, text)), c) => text.push(c),
            (None, '"') => {
                push(&mut pieces, &std::mem::take(&mut word));
                phrase = Some((position, String::new()));
            }
            (None, c) if c.is_whitespace() => push(&mut pieces, &std::mem::take(&mut word)),
            (None, c) => word.push(c),
        }
    }
    if let Some((position, _)) = phrase {
        return Err(QueryError::UnclosedQuote { position });
    }
    push(&mut pieces, &word);
    if pieces.is_empty() {
        return Err(QueryError::Empty);
    }
    Ok(pieces)
}

fn push(pieces: &mut Vec<Piece>, text: &str) {
    let text = fold(text);
    if !text.trim().is_empty() && !pieces.iter().any(|p: &Piece| p.text == text) {
        pieces.push(Piece { text });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(q: &str) -> Vec<String> {
        parse(q).unwrap().into_iter().map(|p| p.text).collect()
    }

    #[test]
    fn words_phrases_and_syntax_as_text() {
        assert_eq!(texts("Pars  Fichier"), ["pars", "fichier"]);
        assert_eq!(texts("say \"Hello World\" x"), ["say", "hello world", "x"]);
        assert_eq!(texts("a NEAR(b) col:x *"), ["a", "near(b)", "col:x", "*"]);
        assert_eq!(
            parse("ab\"cd"),
            Err(QueryError::UnclosedQuote { position: 3 })
        );
        assert_eq!(parse("ab\0"), Err(QueryError::Nul { position: 3 }));
        assert_eq!(parse("  "), Err(QueryError::Empty));
    }
}
