//! Transcripts (`protocol/transcripts.md`): a client's side of a conversation with the
//! server, with what the server must answer where the author wrote it down.
//!
//! One format and one player for everyone: `pi-session test FILE...` plays files through a
//! server in its own process ([`process::ChildServer`]); the project's own tests play the same
//! files through an in-memory server on a paused clock and keep the exchange as a snapshot.
//! The player ([`play`]) knows nothing about how the server was started.

pub mod expect;
mod format;
mod player;
pub mod process;
mod tmp;

pub use format::{Expected, ReadError, ServerSetup, StateKind, Step, Transcript};
pub use player::{Failure, Peer, Places, play};
pub use tmp::Tmp;
