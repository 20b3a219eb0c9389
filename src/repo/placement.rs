//! Where a new session goes and what it is called: the one place that decides a new session's
//! directory, file name, id, header cwd and header metadata, for `create`, the forks and
//! `replay`. Callers say what they were asked; this module applies pi's rules (and ours where
//! pi's would write a file it cannot read back).

use std::path::{Path, PathBuf};

use crate::format::ids::IdSource;
use crate::format::json::JsValue;
use crate::format::profile::Profile;
use crate::store::{ErrorKind, NewSession, Session, StoreError, StoreResult};

use super::RepoError;
use super::paths::{PathEnv, session_file_name, validate_session_id};

/// The longest file name the file systems this runs on accept (Linux's `NAME_MAX`, in bytes).
pub(crate) const NAME_MAX: usize = 255;

/// Where a new session's file goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place<'a> {
    /// Nowhere: the session lives in memory only.
    Memory,
    /// This directory, flat (pi's `--session-dir`; `~` and `file://` understood).
    Dir(&'a str),
    /// The cwd's directory under the sessions root, named as the profile's pi names it.
    Default,
}

/// A new session as a caller asks for it; [`new_session`] decides the rest.
#[derive(Debug, Clone)]
pub(crate) struct SessionRequest<'a> {
    pub(crate) profile: Profile,
    /// The cwd as given (pi-cli resolves it as pi does; the harness keeps it as it is).
    pub(crate) cwd: &'a str,
    /// A fixed session id, checked by [`check_session_id`]; a fresh UUIDv7 otherwise.
    pub(crate) id: Option<&'a str>,
    pub(crate) place: Place<'a>,
    pub(crate) parent_session: Option<String>,
    /// Header metadata: the harness writes it; pi-cli has none, so asking for it is refused.
    pub(crate) metadata: Option<JsValue>,
}

/// Whether `id` may name a new session of `profile`. pi-cli: pi's own rule and message. The
/// harness checks nothing and would write a file it cannot find again (`""`, `..`, `a/b`);
/// here an id must be one file-name component without control characters. In both, the file
/// name it makes must fit in [`NAME_MAX`] bytes, so every later write does not fail instead.
pub(crate) fn check_session_id(profile: Profile, id: &str) -> Result<(), RepoError> {
    let unusable = |reason: &'static str| RepoError::UnusableSessionId {
        id: id.to_string(),
        reason,
    };
    if profile.is_session_manager() {
        validate_session_id(id)?;
    } else {
        if id.is_empty() {
            return Err(unusable("it is empty"));
        }
        if id == "." || id == ".." {
            return Err(unusable("it names a directory"));
        }
        if id.contains(['/', '\\']) {
            return Err(unusable("it contains a path separator"));
        }
        if id.chars().any(char::is_control) {
            return Err(unusable("it contains a control character"));
        }
    }
    // The longest timestamp pi writes before year 10000: `2026-01-01T00-00-00-000Z`.
    if session_file_name("0000-00-00T00:00:00.000Z", id).len() > NAME_MAX {
        return Err(unusable("the file name would be longer than 255 bytes"));
    }
    Ok(())
}

/// A session file as a caller spells it (`~`, relative, `file://`), resolved as pi resolves
/// it, in the form the file system takes.
pub(crate) fn session_path(env: &PathEnv, spelled: &str) -> Result<PathBuf, RepoError> {
    Ok(env.io_path(&env.resolve_path(spelled)?))
}

/// The cwd of a session opened at a path that does not exist yet (pi's `SessionManager.open`
/// starts a new one there): the given cwd, else the process's, resolved.
pub(crate) fn cwd_for_open(env: &PathEnv, cwd: Option<&str>) -> Result<String, RepoError> {
    env.resolve_path(cwd.unwrap_or("."))
}

/// The header cwd of a new session: pi-cli resolves it as `SessionManager` does, the harness
/// writes it as it was given.
pub(crate) fn header_cwd(env: &PathEnv, profile: Profile, cwd: &str) -> Result<String, RepoError> {
    match profile.is_session_manager() {
        true => env.resolve_path(cwd),
        false => Ok(cwd.to_string()),
    }
}

/// The directory new sessions of `cwd` go to by default: pi-cli's `<root>/<encoded resolved
/// cwd>/`, the harness's `<root>/<encoded cwd as given>/`.
pub(crate) fn default_dir(
    env: &PathEnv,
    profile: Profile,
    cwd: &str,
) -> Result<PathBuf, RepoError> {
    Ok(env.io_path(&match profile.is_session_manager() {
        true => env.default_session_dir(cwd)?,
        false => env.harness_session_dir(&env.sessions_root(), cwd),
    }))
}

/// A new session as `request` asks, its directory made (as pi makes it even before the file):
/// the id checked, the cwd resolved per profile, the file named `<timestamp>_<id>.jsonl`.
pub(crate) fn new_session(
    env: &PathEnv,
    request: SessionRequest<'_>,
    ids: &IdSource,
) -> StoreResult<NewSession> {
    let profile = request.profile;
    if let Some(id) = request.id {
        check_session_id(profile, id)?;
    }
    if request.metadata.is_some() && profile.is_session_manager() {
        return Err(StoreError::new(
            ErrorKind::InvalidArgument,
            "'metadata': header metadata is written by the harness profile only",
        ));
    }
    let cwd = header_cwd(env, profile, request.cwd)?;
    let dir = match request.place {
        Place::Memory => None,
        Place::Dir(dir) => Some(env.io_path(&env.normalize_path(dir)?)),
        Place::Default => Some(default_dir(env, profile, request.cwd)?),
    };
    if let Some(dir) = &dir {
        make_dir(dir)?;
    }
    Ok(named(
        dir.as_deref(),
        cwd,
        request.id.map(str::to_string),
        request.parent_session,
        request.metadata,
        ids,
    ))
}

/// The new session a fork of `source` up to `leaf_id` becomes (pi's `createBranchedSession`):
/// in `dir` when given, else beside the source (pi-cli) or in the cwd's directory under the
/// sessions root (harness); in memory when the source is. It keeps the source's cwd (as pi
/// re-reads it: resolved by pi-cli), names the source as its parent and keeps the header
/// metadata (harness). A pi-cli source that is not written yet cannot be forked past its
/// root (`not_saved`).
pub(crate) fn fork_target(
    env: &PathEnv,
    source: &Session,
    leaf_id: Option<&str>,
    dir: Option<&Path>,
    ids: &IdSource,
) -> StoreResult<NewSession> {
    let profile = source.profile();
    let dir = match (source.path(), dir) {
        (None, _) => None,
        (Some(_), Some(dir)) => Some(dir.to_path_buf()),
        (Some(current), None) => Some(match profile.is_session_manager() {
            true => current.parent().map(Path::to_path_buf).unwrap_or_default(),
            false => default_dir(env, profile, &source.cwd())?,
        }),
    };
    if dir.is_some() && !source.is_written() && leaf_id.is_some() {
        let message = profile.rules().not_saved_message;
        return Err(StoreError::new(ErrorKind::NotSaved, message));
    }
    // pi's SessionManager creates its directory when it is made, written or not.
    if let Some(dir) = dir.as_deref().filter(|d| !d.as_os_str().is_empty()) {
        make_dir(dir)?;
    }
    let cwd = header_cwd(env, profile, &source.cwd())?;
    // Only the harness has header metadata.
    let metadata = match profile.is_session_manager() {
        false => source.header().get("metadata").cloned(),
        true => None,
    };
    Ok(named(
        dir.as_deref(),
        cwd,
        None,
        source.path().map(|p| p.to_string_lossy().into_owned()),
        metadata,
        ids,
    ))
}

fn make_dir(dir: &Path) -> StoreResult<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| StoreError::io(dir, "cannot create the sessions directory", e))
}

fn named(
    dir: Option<&Path>,
    cwd: String,
    id: Option<String>,
    parent_session: Option<String>,
    metadata: Option<JsValue>,
    ids: &IdSource,
) -> NewSession {
    let id = id.unwrap_or_else(|| ids.session_id());
    let timestamp = ids.now_iso();
    NewSession {
        path: dir.map(|dir| dir.join(session_file_name(&timestamp, &id))),
        cwd,
        id: Some(id),
        timestamp: Some(timestamp),
        parent_session,
        metadata,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harness_ids_must_name_one_file() {
        for bad in ["", ".", "..", "a/b", "a\nb", "a\\b"] {
            let e = check_session_id(Profile::Harness, bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{bad:?}");
        }
        for ok in ["a", "a.b", "-x-", "é", "a b"] {
            assert!(check_session_id(Profile::Harness, ok).is_ok(), "{ok:?}");
        }
    }

    #[test]
    fn ids_too_long_for_a_file_name_are_refused_in_both_profiles() {
        // 24 (timestamp) + 1 + id + 6 (".jsonl") <= 255.
        let longest = "a".repeat(224);
        let too_long = "a".repeat(225);
        for profile in [Profile::PiCli, Profile::Harness] {
            assert!(check_session_id(profile, &longest).is_ok());
            let e = check_session_id(profile, &too_long).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(e.to_string().contains("255"), "{e}");
        }
    }
}
