//! `session_changed`: telling the client of the entries other programs appended, before a
//! request's answer and from a watch.

use crate::jsonrpc::{Raw, RpcError, ServerHandle};
use crate::ops::cursor_at;
use crate::store::Session;

use super::wire::ChangedNotification;

/// At most this many entries in one `session_changed` (the rest: `getEntries {since}`).
const PAGE_ENTRIES: usize = 1000;
/// At most about this many bytes of entries in one `session_changed` (at least one entry).
const PAGE_BYTES: u64 = 1 << 20;

/// Tells the client of the entries other programs appended that it was not told of yet (one
/// `session_changed`, with at most a page of them). Called under the session's lock, by a
/// request before its answer and by a watch.
pub(crate) fn report_foreign<S: crate::jsonrpc::ServerState>(
    server: &ServerHandle<S>,
    id: &str,
    session: &mut Session,
) -> Result<(), RpcError> {
    let ranges = session.take_foreign();
    let Some(first) = ranges.first() else {
        return Ok(());
    };
    let from = cursor_at(session, first.start as usize);
    let added: usize = ranges.iter().map(|r| r.len()).sum();
    let mut page = Vec::new();
    let mut bytes = 0u64;
    for position in ranges.iter().flat_map(|r| r.clone()) {
        if page.len() == PAGE_ENTRIES || (bytes >= PAGE_BYTES && !page.is_empty()) {
            break;
        }
        bytes += session.line_len(position);
        page.push(position);
    }
    let head = ChangedNotification {
        session_id: id.to_owned(),
        entries_added: added,
        leaf_id: session.leaf().id().map(str::to_string),
        from,
        cursor: cursor_at(session, session.len()),
        complete: page.len() == added,
        entries: Vec::new(),
    };
    let mut text = serde_json::to_string(&head).map_err(RpcError::internal)?;
    // `entries` is the last member: written from the file's bytes in its place.
    let empty = r#""entries":[]}"#;
    if !text.ends_with(empty) {
        return Err(RpcError::internal("session_changed: entries are not last"));
    }
    text.truncate(text.len() - empty.len());
    text.push_str(r#""entries":["#);
    session.write_entries_json(&page, &mut text)?;
    text.push_str("]}");
    server.send_raw(Raw::<ChangedNotification>::new(text));
    Ok(())
}
