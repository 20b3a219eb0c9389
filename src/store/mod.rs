//! One session: the entry index, the tree, labels, the leaf, appends, context building,
//! navigation planning and forks; the file underneath it (open, lock, append, durability,
//! repair). Knows nothing of JSON-RPC.
//!
//! The modules depend on each other one way (`crate::import_graph` checks it), bottom to top:
//! - the file and its bytes: `error`, `safe_file`, `sync`, `file`, `line_stream`, `watch`;
//! - what is known of the entries: `index` (facts per entry), `options`, `checkpoint` (the
//!   reader's state and warnings), `stats`, `tree_memo` (the tree's shape and facts), pure
//!   functions over entries (`preview_lean`, `system_message`);
//! - `index_file` (their on-disk form), then `load` (reading a file, resuming from it);
//! - `session` (the `Session` type: open, create, read entries, append, follow the tail);
//! - readers and writers above it, each an `impl Session` of its own job: `tree`, `preview`,
//!   `context`, `navigate`, `fork`, `pi16_append`, `compaction`.

mod checkpoint;
pub mod compaction;
mod context;
mod error;
mod file;
mod fork;
mod index;
pub(crate) mod index_file;
mod line_stream;
mod load;
mod navigate;
mod options;
mod pi16_append;
mod preview;
mod preview_lean;
mod row_indents;
pub(crate) mod safe_file;
mod session;
mod stats;
mod stats_lean;
mod sync;
mod system_message;
mod tree;
mod tree_memo;
pub mod tree_watch;
pub mod watch;

pub use checkpoint::Warning;
pub use context::{Context, ContextMessage, MessageFormat};
pub use error::{ErrorKind, StoreError, StoreResult};
pub(crate) use file::{GoneReason, try_write_lock};
pub use fork::ForkPosition;
pub use index::{Leaf, Record};
pub use navigate::{
    NavigationOutcome, SummaryInput, TreeDecision, TreeHookAnswer, TreePreparation, TreeRequest,
    decide, model_summary,
};
pub(crate) use options::DEFAULT_INDEX_MAX_BYTES;
pub use options::{NewSession, SessionOptions};
pub(crate) use row_indents::row_indents;
pub use session::Session;
pub use stats::SessionStats;
pub use sync::Unsynced;
pub(crate) use sync::fsync_parent;
pub(crate) use tree::{TreeFilter, TreePage, TreeWindow};
pub(crate) use tree_memo::RowPreviews;
pub use tree_memo::{TreeFacts, TreeRow};
