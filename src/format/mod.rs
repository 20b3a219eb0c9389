//! One JSONL line <-> one entry: JavaScript-compatible JSON, entry kinds, ids, timestamps,
//! the key order of new lines, and v1/v2 -> v3 migration. Knows nothing of files.

pub mod entry;
pub mod entry_id;
pub mod entry_input;
pub mod exact_text;
pub mod ids;
pub mod js_date;
pub mod js_whitespace;
pub mod json;
pub mod json_spans;
pub mod migrate;
pub mod profile;
pub mod time;
#[cfg(test)]
pub(crate) mod tricky_json;
pub mod wire_surrogates;
pub mod write;
