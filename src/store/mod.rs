//! One session: the entry index, the tree, labels, the leaf, appends, context building,
//! navigation planning and forks; the file underneath it (open, lock, append, durability,
//! repair). Knows nothing of JSON-RPC.

pub mod compaction;
mod context;
mod entry_text;
mod error;
mod file;
mod fork;
mod index;
pub mod index_file;
mod line_stream;
mod load;
mod navigate;
mod pi16_append;
mod preview;
mod preview_lean;
pub mod safe_file;
mod session;
mod stats;
mod sync;
mod tree;
mod tree_facts;
mod tree_filter;
pub mod watch;

pub use context::{Context, ContextMessage, MessageFormat};
pub use error::{ErrorKind, StoreError, StoreResult};
pub use file::{GoneReason, try_write_lock};
pub use fork::ForkPosition;
pub use index::Leaf;
pub use load::Warning;
pub use navigate::{
    NavigationOutcome, SummaryInput, TreeDecision, TreeHookAnswer, TreePreparation, TreeRequest,
    decide, model_summary,
};
pub use session::{NewSession, Session, SessionOptions};
pub use stats::SessionStats;
pub use sync::fsync_parent;
pub use tree::TreeRow;
pub use tree_filter::{TreeFilter, TreeWindow};
