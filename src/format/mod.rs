//! One JSONL line <-> one entry: JavaScript-compatible JSON, entry kinds, ids, migration.
