//! pi-session: pi-compatible session files, served over JSON-RPC.
//!
//! Layers, data flowing one way: [`format`] (one JSONL line <-> one entry) -> [`store`] (one
//! session and its file) -> [`repo`] (sessions directories) -> [`rpc`] (the stdio sidecar).

pub mod format;
pub mod inspect;
pub mod repo;
pub mod rpc;
pub mod store;
