//! The integration tests, as one binary (the layout ripgrep and cargo use: `tests/<name>/main.rs`
//! with modules): one link for every change, one `support`. A test's name is its module and
//! function (`cargo test --test suite -- rpc_watch::`).
//!
//! Beside it: `tests/cases/` (comparisons with pi over many inputs, one trial per case, a
//! libtest-mimic runner) and `tests/traffic.rs` (its `main` is the recording proxy the clients
//! spawn as their server). What each module checks is in `docs/testing.md`.

#[path = "../support/mod.rs"]
mod support;

mod branch_summary_conformance;
mod catalog;
mod cli;
mod cli_test_command;
mod clients;
mod compaction_conformance;
mod conformance;
mod export;
mod export_browser;
mod feed;
mod fork_conformance;
mod group_commit;
mod index_location;
mod navigate_conformance;
mod packaging;
mod pi16_store;
mod python_client;
mod reliability;
mod repo_cache;
mod repo_cli;
mod repo_errors;
mod repo_listing_select;
mod repo_versions;
mod rpc_error_kinds;
mod rpc_log_levels;
mod rpc_other_writers;
mod rpc_server;
mod rpc_session_stdio;
mod rpc_stdio;
mod rpc_transcripts;
mod rpc_tree_pages;
mod rpc_watch;
mod schema;
mod store;
mod store_reliability;
