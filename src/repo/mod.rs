//! Many sessions: the sessions directory, cwd encoding, file names, listing, forks.
pub mod paths;
