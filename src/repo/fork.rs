//! New sessions made from existing files (spec section 9): `/fork` and `/clone` of a file
//! (pi's runtime `fork`, through `createBranchedSession`), and `forkFrom` (pi's `--fork`, a
//! whole session copied into another project).
//!
//! Unlike pi, the source is never rewritten (pi's `open` migrates a v1/v2 source in place
//! before branching it), and a v1/v2 source is migrated before `forkFrom` copies it, so the
//! copy always has ids (pi copies un-migrated v1 entries, which have none).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::format::ids::IdSource;
use crate::format::write::Profile;
use crate::store::{
    ErrorKind, ForkPosition, NewSession, Session, SessionOptions, StoreError, StoreResult,
};

use super::paths::PathEnv;
use super::{RepoError, validate_session_id};

/// What a fork made.
#[derive(Debug)]
pub struct Forked {
    /// The new session (written, or waiting for its first assistant message as pi's are).
    pub session: Session,
    /// The forked user message's text, for the editor (`before` only).
    pub selected_text: Option<String>,
}

fn repo_error(error: RepoError) -> StoreError {
    let kind = match error {
        RepoError::InvalidSessionId { .. } | RepoError::InvalidPath { .. } => {
            ErrorKind::InvalidArgument
        }
        _ => ErrorKind::Io,
    };
    StoreError::new(kind, error.to_string())
}

/// pi's `/fork` (`before` a user message) or `/clone` (`at` an entry) of the session file
/// `source`: the new session goes into `session_dir` (default: beside the source), keeps the
/// source's cwd and names the source as its parent.
pub fn fork_file(
    env: &PathEnv,
    source: &Path,
    entry_id: &str,
    position: ForkPosition,
    session_dir: Option<&Path>,
    ids: Arc<IdSource>,
) -> StoreResult<Forked> {
    let (source, options) = source_and_options(env, source, &ids)?;
    let mut original = Session::open_read_only(&source, options.clone())?;
    let selection = original.fork_selection(entry_id, position)?;
    let dir = match session_dir {
        Some(dir) => dir.to_path_buf(),
        None => source.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    // pi's SessionManager creates its session directory when it is made, written or not.
    if !dir.as_os_str().is_empty() {
        std::fs::create_dir_all(&dir)
            .map_err(|e| StoreError::io(&dir, "cannot create the sessions directory", e))?;
    }
    let entries = match &selection.leaf_id {
        Some(leaf) => original.branched_entries(leaf)?,
        // Before a root message: a new, empty session (pi writes it at its first reply).
        None => Vec::new(),
    };
    // pi's SessionManager.open takes the header's cwd (the process's when it has none) and
    // resolves it.
    let cwd = env.resolve_path(&original.cwd()).map_err(repo_error)?;
    let new = new_session_at(&dir, cwd, None, Some(source_string(&source)), &ids);
    let session = Session::from_entries(new, &entries, options, false)?;
    Ok(Forked {
        session,
        selected_text: selection.selected_text,
    })
}

/// pi's `SessionManager.forkFrom`: the whole of `source` (every branch) copied into a new
/// session of `target_cwd`, written at once, in `session_dir` or the cwd's default directory.
pub fn fork_from(
    env: &PathEnv,
    source: &Path,
    target_cwd: &str,
    session_dir: Option<&str>,
    id: Option<&str>,
    ids: Arc<IdSource>,
) -> StoreResult<Session> {
    let (source, options) = source_and_options(env, source, &ids)?;
    let invalid = || {
        StoreError::new(
            ErrorKind::InvalidSession,
            format!(
                "Cannot fork: source session file is empty or invalid: {}",
                source.display()
            ),
        )
    };
    let original = match Session::open_read_only(&source, options.clone()) {
        Ok(session) => session,
        Err(e)
            if matches!(
                e.kind,
                ErrorKind::InvalidSession | ErrorKind::SessionNotFound
            ) =>
        {
            return Err(invalid());
        }
        Err(e) => return Err(e),
    };
    if let Some(id) = id {
        validate_session_id(id).map_err(repo_error)?;
    }
    let cwd = env.resolve_path(target_cwd).map_err(repo_error)?;
    let dir = match session_dir.filter(|d| !d.is_empty()) {
        Some(dir) => env.normalize_path(dir).map_err(repo_error)?,
        None => env.default_session_dir(&cwd).map_err(repo_error)?,
    };
    let dir = env.io_path(&dir);
    std::fs::create_dir_all(&dir)
        .map_err(|e| StoreError::io(&dir, "cannot create the sessions directory", e))?;
    let entries = original.all_entries()?;
    let new = new_session_at(
        &dir,
        cwd,
        id.map(str::to_string),
        Some(source_string(&source)),
        &ids,
    );
    Session::from_entries(new, &entries, options, true)
}

/// The source resolved as pi resolves it, and the options both forks read it with (pi's
/// SessionManager rules, pi-cli writing).
fn source_and_options(
    env: &PathEnv,
    source: &Path,
    ids: &Arc<IdSource>,
) -> StoreResult<(PathBuf, SessionOptions)> {
    let source = PathBuf::from(
        env.resolve_path(&source.to_string_lossy())
            .map_err(repo_error)?,
    );
    let options = SessionOptions {
        profile: Profile::PiCli,
        ids: ids.clone(),
        ..SessionOptions::default()
    };
    Ok((source, options))
}

fn source_string(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn new_session_at(
    dir: &Path,
    cwd: String,
    id: Option<String>,
    parent: Option<String>,
    ids: &IdSource,
) -> NewSession {
    let id = id.unwrap_or_else(|| ids.session_id());
    let timestamp = ids.now_iso();
    let path = dir.join(super::session_file_name(&timestamp, &id));
    NewSession {
        path: Some(path),
        cwd,
        id: Some(id),
        timestamp: Some(timestamp),
        parent_session: parent,
        metadata: None,
    }
}
