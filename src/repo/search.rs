//! pi 0.82.1's `/resume` search (`session-selector-search.js`, `filterAndSortSessions`, with
//! pi-tui's `fuzzyMatch`), on listing rows: tokens (fuzzy, or `"quoted phrases"`) that must all
//! match `id name allMessagesText cwd`, or `re:PATTERN`; sorted by relevance (score, then newest
//! activity) or kept in listing order (`recent`).
//!
//! JavaScript strings are UTF-16: indexes, lengths and the character-by-character fuzzy walk
//! are on UTF-16 code units here too, and scores are summed in the same order, so ties and
//! orders come out as pi's.

use std::cmp::Ordering;

use crate::format::js_whitespace::is_js_whitespace;
use crate::repo::session_info::SessionInfo;

/// How matches are ordered, as pi's selector orders them with a query.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum SearchSort {
    /// Best score first, then newest activity (pi's `threaded` and `relevance` modes).
    #[default]
    Relevance,
    /// The listing's order, filtered (pi's `recent` mode).
    Recent,
}

/// Which sessions the picker offers before the query is applied.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)] // no doc comments: schemars would copy them into protocol/schema.json; protocol.md describes these members
pub enum NameFilter {
    #[default]
    All,
    /// Only sessions with a name.
    Named,
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Fuzzy(Vec<u16>),
    Phrase(String),
}

/// A parsed query (`parseSearchQuery`).
#[derive(Clone, Debug)]
pub struct SearchQuery {
    mode: Mode,
}

#[derive(Clone, Debug)]
enum Mode {
    Tokens(Vec<Token>),
    Regex(Box<regex::Regex>),
}

/// A query pi would refuse (it then shows no sessions): an empty or invalid `re:` pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryError(pub String);

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

impl SearchQuery {
    /// `parseSearchQuery(query)`; `None` when the trimmed query is empty (no filtering).
    pub fn parse(query: &str) -> Result<Option<SearchQuery>, QueryError> {
        let trimmed = js_trim(query);
        if trimmed.is_empty() {
            return Ok(None);
        }
        if let Some(pattern) = trimmed.strip_prefix("re:") {
            let pattern = js_trim(pattern);
            if pattern.is_empty() {
                return Err(QueryError("Empty regex".into()));
            }
            // JavaScript's `new RegExp(pattern, "i")`; the `regex` crate has no look-around or
            // back-references (refused here, where pi would accept them).
            let regex = regex::RegexBuilder::new(pattern)
                .case_insensitive(true)
                .build()
                .map_err(|e| QueryError(format!("invalid regular expression: {e}")))?;
            return Ok(Some(SearchQuery {
                mode: Mode::Regex(Box::new(regex)),
            }));
        }
        Ok(Some(SearchQuery {
            mode: Mode::Tokens(tokens(trimmed)),
        }))
    }

    /// `matchSession`: whether `session` matches, and its score (lower is better).
    pub fn score(&self, session: &SessionInfo) -> Option<f64> {
        let text = search_text(session);
        match &self.mode {
            Mode::Regex(regex) => {
                let found = regex.find(&text)?;
                Some(utf16_len(&text[..found.start()]) as f64 * 0.1)
            }
            Mode::Tokens(tokens) => {
                let mut total = 0.0;
                let mut normalized: Option<Vec<u16>> = None;
                let mut lowered: Option<Vec<u16>> = None;
                for token in tokens {
                    match token {
                        Token::Phrase(value) => {
                            let text = normalized.get_or_insert_with(|| {
                                normalize_whitespace_lower(&text).encode_utf16().collect()
                            });
                            let phrase: Vec<u16> =
                                normalize_whitespace_lower(value).encode_utf16().collect();
                            if phrase.is_empty() {
                                continue;
                            }
                            let at = find(text, &phrase)?;
                            total += at as f64 * 0.1;
                        }
                        Token::Fuzzy(query) => {
                            let text = lowered.get_or_insert_with(|| {
                                text.to_lowercase().encode_utf16().collect()
                            });
                            total += fuzzy_match(query, text)?;
                        }
                    }
                }
                Some(total)
            }
        }
    }
}

/// `filterAndSortSessions(sessions, query, sortMode, nameFilter)` on rows already in the
/// listing's order.
pub fn filter_and_sort(
    sessions: Vec<SessionInfo>,
    query: Option<&SearchQuery>,
    sort: SearchSort,
    names: NameFilter,
) -> Vec<SessionInfo> {
    let sessions = sessions
        .into_iter()
        .filter(|s| names == NameFilter::All || s.name.is_some());
    let Some(query) = query else {
        return sessions.collect();
    };
    let mut scored: Vec<(f64, SessionInfo)> = sessions
        .filter_map(|s| query.score(&s).map(|score| (score, s)))
        .collect();
    if sort == SearchSort::Relevance {
        // `a.score - b.score`, then `b.modified - a.modified` (NaN for invalid dates, which
        // V8's stable sort treats as no order: kept as they came).
        scored.sort_by(|(sa, a), (sb, b)| {
            if sa != sb {
                return sa.partial_cmp(sb).unwrap_or(Ordering::Equal);
            }
            match (a.modified.millis(), b.modified.millis()) {
                (Some(x), Some(y)) => y.cmp(&x),
                _ => Ordering::Equal,
            }
        });
    }
    scored.into_iter().map(|(_, s)| s).collect()
}

/// `${id} ${name ?? ""} ${allMessagesText} ${cwd}`.
fn search_text(session: &SessionInfo) -> String {
    let id = match &session.id {
        Some(id) => id.to_js_string(),
        None => "undefined".to_string(),
    };
    let name = session.name.as_deref().unwrap_or("");
    let mut text = String::with_capacity(
        id.len() + name.len() + session.all_messages_text.len() + session.cwd.len() + 3,
    );
    for (i, part) in [
        id.as_str(),
        name,
        session.all_messages_text.as_str(),
        &session.cwd,
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            text.push(' ');
        }
        text.push_str(part);
    }
    text
}

fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// The query's tokens, quotes making phrases; unbalanced quotes fall back to whitespace words.
fn tokens(trimmed: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut buf = String::new();
    let mut in_quote = false;
    let flush = |buf: &mut String, tokens: &mut Vec<Token>, phrase: bool| {
        let value = js_trim(buf).to_string();
        buf.clear();
        if value.is_empty() {
            return;
        }
        tokens.push(if phrase {
            Token::Phrase(value)
        } else {
            Token::Fuzzy(value.encode_utf16().collect())
        });
    };
    for ch in trimmed.chars() {
        if ch == '"' {
            flush(&mut buf, &mut tokens, in_quote);
            in_quote = !in_quote;
            continue;
        }
        if !in_quote && is_js_whitespace(ch) {
            flush(&mut buf, &mut tokens, false);
            continue;
        }
        buf.push(ch);
    }
    if in_quote {
        return trimmed
            .split(is_js_whitespace)
            .filter(|t| !t.is_empty())
            .map(|t| Token::Fuzzy(t.encode_utf16().collect()))
            .collect();
    }
    flush(&mut buf, &mut tokens, false);
    tokens
}

/// `text.toLowerCase().replace(/\s+/g, " ").trim()`.
fn normalize_whitespace_lower(text: &str) -> String {
    let lower = text.to_lowercase();
    let mut out = String::with_capacity(lower.len());
    let mut in_space = false;
    for ch in lower.chars() {
        if is_js_whitespace(ch) {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(ch);
            in_space = false;
        }
    }
    js_trim(&out).to_string()
}

/// `haystack.indexOf(needle)` in code units.
fn find(haystack: &[u16], needle: &[u16]) -> Option<usize> {
    if needle.len() > haystack.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// pi-tui's `fuzzyMatch(query, text)` with `text` already lowercased: the score when it
/// matches. `query` is the token as typed.
fn fuzzy_match(query: &[u16], text_lower: &[u16]) -> Option<f64> {
    let query = String::from_utf16_lossy(query).to_lowercase();
    let query_lower: Vec<u16> = query.encode_utf16().collect();
    if let Some(score) = match_query(&query_lower, text_lower) {
        return Some(score);
    }
    let swapped = swap_letters_digits(&query)?;
    let swapped: Vec<u16> = swapped.encode_utf16().collect();
    match_query(&swapped, text_lower).map(|score| score + 5.0)
}

/// `^([a-z]+)([0-9]+)$` becomes digits then letters, and the other way round.
fn swap_letters_digits(query: &str) -> Option<String> {
    let bytes = query.as_bytes();
    let split = bytes
        .iter()
        .position(|b| b.is_ascii_digit() != bytes[0].is_ascii_digit())?;
    let (head, tail) = query.split_at(split);
    let all = |s: &str, f: fn(&u8) -> bool| !s.is_empty() && s.as_bytes().iter().all(f);
    let letters = |b: &u8| b.is_ascii_lowercase();
    let digits = |b: &u8| b.is_ascii_digit();
    if (all(head, letters) && all(tail, digits)) || (all(head, digits) && all(tail, letters)) {
        Some(format!("{tail}{head}"))
    } else {
        None
    }
}

fn is_boundary_unit(unit: u16) -> bool {
    char::from_u32(u32::from(unit))
        .is_some_and(|c| is_js_whitespace(c) || matches!(c, '-' | '_' | '.' | '/' | ':'))
}

/// `matchQuery(normalizedQuery)` inside `fuzzyMatch`.
fn match_query(query: &[u16], text: &[u16]) -> Option<f64> {
    if query.is_empty() {
        return Some(0.0);
    }
    if query.len() > text.len() {
        return None;
    }
    let mut query_index = 0;
    let mut score = 0.0f64;
    let mut last_match: Option<usize> = None;
    let mut consecutive = 0.0f64;
    for (i, &unit) in text.iter().enumerate() {
        if query_index >= query.len() {
            break;
        }
        if unit != query[query_index] {
            continue;
        }
        let word_boundary = i == 0 || is_boundary_unit(text[i - 1]);
        if last_match.is_some_and(|last| last + 1 == i) {
            consecutive += 1.0;
            score -= consecutive * 5.0;
        } else {
            consecutive = 0.0;
            if let Some(last) = last_match {
                score += (i - last - 1) as f64 * 2.0;
            }
        }
        if word_boundary {
            score -= 10.0;
        }
        score += i as f64 * 0.1;
        last_match = Some(i);
        query_index += 1;
    }
    if query_index < query.len() {
        return None;
    }
    if query == text {
        score -= 100.0;
    }
    Some(score)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn queries_tokenize_as_pi_does() {
        assert_eq!(
            tokens(r#"foo "node cve" bar"#),
            vec![
                Token::Fuzzy(units("foo")),
                Token::Phrase("node cve".into()),
                Token::Fuzzy(units("bar"))
            ]
        );
        // Unbalanced quotes: plain words, quotes kept.
        assert_eq!(
            tokens(r#"a "b c"#),
            vec![
                Token::Fuzzy(units("a")),
                Token::Fuzzy(units("\"b")),
                Token::Fuzzy(units("c"))
            ]
        );
        assert!(matches!(SearchQuery::parse("  "), Ok(None)));
        assert!(SearchQuery::parse("re:").is_err());
        assert!(SearchQuery::parse("re:(").is_err());
    }

    #[test]
    fn fuzzy_scores_follow_pi_tui() {
        // Hand-computed from fuzzyMatch: "ab" in "ab": i=0 boundary -10, +0; i=1 consecutive
        // -5, +0.1; equal to the text -100.
        assert_eq!(
            fuzzy_match(&units("ab"), &units("ab")),
            Some(-10.0 - 5.0 + 0.1 - 100.0)
        );
        assert_eq!(fuzzy_match(&units("ba"), &units("ab")), None);
        // Swapped letters and digits cost 5.
        let swapped = fuzzy_match(&units("v2"), &units("2v")).unwrap();
        let direct = fuzzy_match(&units("2v"), &units("2v")).unwrap();
        assert_eq!(swapped, direct + 5.0);
    }
}
