//! Answers written as JSON text ([`Raw`], typed by the answer they are): entries straight from their lines' bytes
//! (through the store's `write_entries_json`), so a large answer costs its text and not a tree
//! of values, and the slices that `offset`/`limit` ask for.

use super::pi_format::AnyEntry;
use super::wire::{EntriesResult, ListResult, ListResultWarning};
use crate::jsonrpc::{Raw, RpcError};
use crate::repo::{ListField, SessionInfo, rows};
use crate::store::Session;

/// The part of `0..total` that `offset`/`limit` name (both optional: the whole by default).
pub(crate) fn slice(total: usize, offset: Option<usize>, limit: Option<usize>) -> (usize, usize) {
    let start = offset.unwrap_or(0).min(total);
    let end = limit.map_or(total, |l| start.saturating_add(l).min(total));
    (start, end)
}

/// `{"entries":[...]}` for `positions`, followed by `tail` (members already written, each
/// starting with a comma): an answer of shape `T` (`EntriesResult`, `EntriesPage`).
pub(crate) fn entries<T>(
    session: &Session,
    positions: &[u32],
    tail: &str,
) -> Result<Raw<T>, RpcError> {
    let mut out = String::from(r#"{"entries":["#);
    session.write_entries_json(positions, &mut out)?;
    out.push(']');
    out.push_str(tail);
    out.push('}');
    Ok(Raw::new(out))
}

/// `members`' JSON members as a `tail` of [`entries`]: `,"a":1,"b":2`.
pub(crate) fn members_after<T: serde::Serialize>(members: &T) -> Result<String, RpcError> {
    let object = serde_json::to_string(members)
        .map_err(|e| RpcError::internal(format!("cannot serialize an answer: {e}")))?;
    let inner = object
        .strip_prefix('{')
        .and_then(|o| o.strip_suffix('}'))
        .ok_or_else(|| RpcError::internal("an answer's members are not an object"))?;
    Ok(match inner {
        "" => String::new(),
        inner => format!(",{inner}"),
    })
}

/// The members of a sliced answer after its entries.
#[derive(serde::Serialize)]
struct SliceTail {
    total: usize,
    offset: usize,
}

/// `{"entries":[...]}` for a whole answer, or `{"entries":[...],"total":N,"offset":N}` for the
/// slice `offset`/`limit` name when either is given.
pub(crate) fn entries_sliced(
    session: &Session,
    all: &[u32],
    offset: Option<usize>,
    limit: Option<usize>,
) -> Result<Raw<EntriesResult>, RpcError> {
    if offset.is_none() && limit.is_none() {
        return entries(session, all, "");
    }
    let (start, end) = slice(all.len(), offset, limit);
    let tail = members_after(&SliceTail {
        total: all.len(),
        offset: start,
    })?;
    entries(session, &all[start..end], &tail)
}

/// One entry's JSON text.
pub(crate) fn entry(session: &Session, position: u32) -> Result<Raw<AnyEntry>, RpcError> {
    let mut out = String::new();
    session.write_entry_json(position, &mut out)?;
    Ok(Raw::new(out))
}

/// `session/list`'s answer ([`super::wire::ListResult`], member for member): the rows
/// written from their parts, message texts copied from their JSON literals.
pub(crate) fn listing(
    sessions: &[SessionInfo],
    fields: Option<&[ListField]>,
    warnings: &[ListResultWarning],
    total: Option<u64>,
) -> Result<Raw<ListResult>, RpcError> {
    let warnings = serde_json::to_string(warnings)
        .map_err(|e| RpcError::internal(format!("cannot serialize the warnings: {e}")))?;
    let mut out =
        String::with_capacity(64 + warnings.len() + rows::estimated_len(sessions, fields));
    out.push_str(r#"{"sessions":"#);
    // Writing to a string cannot fail.
    let _ = rows::write_compact(sessions, fields, &mut out);
    out.push_str(r#","warnings":"#);
    out.push_str(&warnings);
    if let Some(total) = total {
        out.push_str(&format!(r#","total":{total}"#));
    }
    out.push('}');
    Ok(Raw::new(out))
}

#[cfg(test)]
mod tests {
    use super::slice;

    #[test]
    fn slices_stay_within_the_whole() {
        assert_eq!(slice(10, None, None), (0, 10));
        assert_eq!(slice(10, Some(3), None), (3, 10));
        assert_eq!(slice(10, Some(3), Some(4)), (3, 7));
        assert_eq!(slice(10, Some(8), Some(4)), (8, 10));
        assert_eq!(slice(10, Some(20), Some(4)), (10, 10));
        assert_eq!(slice(10, None, Some(0)), (0, 0));
        assert_eq!(slice(10, Some(usize::MAX), Some(usize::MAX)), (10, 10));
    }
}
