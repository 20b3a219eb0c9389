//! Offline views of one session file for people and scripts: the `context` document, the
//! tree as text, `check`, and `replay` of an op script. None of them changes the file read.

mod check;
mod context_document;
mod replay;
mod tree_text;

pub use check::check_file;
pub(crate) use context_document::{sorted_keys, write_context_document};
pub(crate) use replay::{ReplayOutcome, replay_ids, replay_ops};
pub(crate) use tree_text::{render_tree, render_tree_from};
