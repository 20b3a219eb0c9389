//! Every path that creates a session file makes its name durable here, and nowhere else.

use std::path::Path;

use crate::store::{Session, StoreResult, fsync_parent};

/// The name of the directory holding `file` (which may have just been made) survives a crash.
/// The file's own name is synced with the file when it is written ([`Session::make_durable`]).
pub(crate) fn directory_named(file: &Path) -> StoreResult<()> {
    match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => fsync_parent(dir),
        _ => Ok(()),
    }
}

/// A session just written to a new file, made durable when asked: its bytes, its name, and
/// the name of its directory.
pub(crate) fn settle_new(session: &mut Session, durable: bool) -> StoreResult<()> {
    if !durable {
        return Ok(());
    }
    session.make_durable()?;
    match session.path().map(Path::to_path_buf) {
        Some(path) => directory_named(&path),
        None => Ok(()),
    }
}
