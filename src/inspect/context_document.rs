//! The `context` document: what pi sees in a session file, in the shape of the oracle's
//! `context` command (`header`, `leafId`, `contextEntryIds`, `context`, `labels`,
//! `sessionName`, `tree`), so the two can be compared field by field.

use crate::format::json::{JsObject, JsString, JsValue};
use crate::format::profile::Profile;
use crate::store::{Leaf, MessageFormat, Session, StoreResult};

/// Which leaf to report at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeafChoice {
    /// The leaf the file says.
    Current,
    /// Before the first entry (`--leaf null`).
    Root,
    Entry(String),
}

/// Builds the document for `session` at `choice`.
pub fn context_document(
    session: &mut Session,
    choice: &LeafChoice,
    format: MessageFormat,
) -> StoreResult<JsValue> {
    let profile = session.profile();
    let leaf = match choice {
        LeafChoice::Current => session.leaf().clone(),
        LeafChoice::Root => Leaf::Null,
        LeafChoice::Entry(id) => {
            if session.position(id).is_none() {
                return Err(crate::store::StoreError::entry_not_found(id));
            }
            Leaf::Id(id.as_str().into())
        }
    };
    if profile == Profile::Harness && choice == &LeafChoice::Current {
        // The harness refuses a recorded leaf that names no entry.
        if let Leaf::Id(id) = &leaf
            && session.position(id).is_none()
        {
            return Err(crate::store::StoreError::new(
                crate::store::ErrorKind::InvalidSession,
                format!("Entry {id} not found"),
            ));
        }
    }
    let context_entries = session.context_entries(&leaf)?;
    let context = session.build_context(&leaf, format)?;
    let mut doc = JsObject::new();
    let mut put = |k: &str, v: JsValue| {
        doc.insert(JsString::new(k), v);
    };
    put("header", session.reported_header());
    match &leaf {
        Leaf::Null => put("leafId", JsValue::Null),
        Leaf::Id(id) => put("leafId", JsValue::from(&**id)),
        Leaf::Undefined => {}
    }
    put(
        "contextEntryIds",
        JsValue::Array(
            context_entries
                .iter()
                .map(|&p| id_value(session, p))
                .collect(),
        ),
    );
    put("context", context.to_value(profile));
    let mut labels = JsObject::new();
    for (target, label, _) in session.labels() {
        labels.insert(JsString::new(target), label);
    }
    put("labels", JsValue::Object(labels));
    put(
        "sessionName",
        session.session_name().map_or(JsValue::Null, JsValue::from),
    );
    let rows = session
        .tree_rows()
        .into_iter()
        .map(|row| {
            let record = session.record(row.position);
            let mut map = JsObject::new();
            if let Some(id) = record.id() {
                map.insert(JsString::new("id"), JsValue::from(id));
            }
            if let Some(t) = record.type_name() {
                map.insert(JsString::new("type"), JsValue::from(t));
            }
            map.insert(
                JsString::new("depth"),
                JsValue::Number(f64::from(row.depth)),
            );
            JsValue::Object(map)
        })
        .collect();
    put("tree", JsValue::Array(rows));
    Ok(JsValue::Object(doc))
}

fn id_value(session: &Session, position: u32) -> JsValue {
    session
        .record(position)
        .id()
        .map_or(JsValue::Null, JsValue::from)
}

/// The value with every object's keys sorted by code point, as the oracle prints documents.
pub fn sorted_keys(value: &JsValue) -> JsValue {
    match value {
        JsValue::Array(items) => JsValue::Array(items.iter().map(sorted_keys).collect()),
        JsValue::Object(map) => {
            let mut entries: Vec<(&JsString, &JsValue)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.to_string_lossy().cmp(&b.0.to_string_lossy()));
            JsValue::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sorted_keys(v)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}
