//! Cursors: points in a session's entries that answers and notifications carry and
//! `getEntries.since` resumes from.

use crate::store::Session;

use super::error::OpError;

/// A point in a session's entries, between two of them: `c<count>-<check>`, where `count` is
/// how many entries come before it and `check` ties it to the session and to the entry just
/// before it (so a cursor of another session, or of a file replaced or cut since, is refused
/// rather than misread). Entries are only ever added at the end, in file order, so a point
/// stays valid while the file grows, across reopens and reconnects.
pub(crate) fn cursor_at(session: &Session, count: usize) -> String {
    format!("c{count}-{:016x}", check(session, count))
}

fn check(session: &Session, count: usize) -> u64 {
    let before = match count {
        0 => String::new(),
        n => session
            .record(n as u32 - 1)
            .id()
            .map_or_else(|| format!("#{n}"), str::to_string),
    };
    let mut text = session.session_id().into_owned();
    text.push('\0');
    text.push_str(&before);
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

/// The number of entries before the point `cursor` names, or an error naming `member`.
pub(crate) fn cursor_position(
    session: &Session,
    cursor: &str,
    member: &str,
) -> Result<usize, OpError> {
    let parsed = cursor
        .strip_prefix('c')
        .and_then(|rest| rest.split_once('-'))
        .and_then(|(count, check)| {
            Some((
                count.parse::<usize>().ok()?,
                u64::from_str_radix(check, 16).ok()?,
            ))
        });
    let Some((count, expected)) = parsed else {
        return Err(OpError::InvalidParams(format!(
            "'{member}': {cursor:?} is not a cursor (take one from an answer's or a \
             notification's `cursor`)"
        )));
    };
    if count > session.len() || check(session, count) != expected {
        return Err(OpError::InvalidParams(format!(
            "'{member}': cursor {cursor:?} is not a point of this session's entries (it is \
             another session's, or the file was replaced or cut since); read from the start \
             or from a cursor of this session"
        )));
    }
    Ok(count)
}
