//! One JSONL line <-> one entry: JavaScript-compatible JSON, entry kinds, ids, timestamps,
//! the key order of new lines, and v1/v2 -> v3 migration. Knows nothing of files.

pub(crate) mod entry;
pub mod entry_id;
pub mod entry_input;
pub(crate) mod exact_text;
pub mod ids;
pub mod js_date;
pub(crate) mod js_whitespace;
pub mod json;
pub(crate) mod json_spans;
pub(crate) mod migrate;
pub mod profile;
pub mod time;
#[cfg(test)]
pub(crate) mod tricky_json;
pub(crate) mod wire_surrogates;
pub mod write;
