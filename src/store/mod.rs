//! One session: the entry index, the tree, labels, the leaf, appends, context building,
//! navigation planning and forks; the file underneath it (open, lock, append, durability,
//! repair). Knows nothing of JSON-RPC.

pub mod compaction;
mod context;
mod error;
mod file;
mod fork;
mod index;
mod line_stream;
mod load;
mod navigate;
mod preview;
pub mod safe_file;
mod session;
mod stats;
mod sync;
mod tree;

pub use context::{Context, MessageFormat, convert_to_llm};
pub use error::{ErrorKind, StoreError, StoreResult};
pub use file::{SessionFile, try_write_lock};
pub use fork::{ForkPosition, ForkSelection};
pub use index::{Leaf, Record};
pub use load::{DEFAULT_MAX_LINE_BYTES, Warning};
pub use navigate::{
    NavigationOutcome, SummaryInput, TreeDecision, TreeHookAnswer, TreePreparation, TreeRequest,
    content_text, decide,
};
pub use session::{NewSession, Session, SessionOptions, backup_path};
pub use stats::SessionStats;
pub use sync::{fsync_dir, fsync_parent};
pub use tree::{TreeRow, Walk};
