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
use crate::format::json::{JsObject, JsValue};
use crate::format::profile::Profile;
use crate::store::{ErrorKind, ForkPosition, Session, SessionOptions, StoreError, StoreResult};

use super::paths::PathEnv;
use super::placement::{Place, SessionRequest, fork_target, new_session};

/// What a fork made.
#[derive(Debug)]
pub(crate) struct Forked {
    /// The new session (written, or waiting for its first assistant message as pi's are).
    pub(crate) session: Session,
    /// The forked user message's text, for the editor (`before` only).
    pub(crate) selected_text: Option<String>,
}

impl Forked {
    /// The fork as `pi-session fork` reports it: `{file, written, sessionId, leafId,
    /// selectedText?}`.
    pub(crate) fn to_js_value(&self) -> JsValue {
        let session = &self.session;
        let mut doc = JsObject::new();
        let path = session.path().map(|p| p.to_string_lossy().into_owned());
        doc.insert("file".into(), path.map_or(JsValue::Null, JsValue::from));
        // pi writes a fork without an assistant message at its first reply; so does this one.
        doc.insert("written".into(), JsValue::Bool(session.is_written()));
        doc.insert(
            "sessionId".into(),
            JsValue::from(session.session_id().as_ref()),
        );
        doc.insert(
            "leafId".into(),
            session.leaf().id().map_or(JsValue::Null, JsValue::from),
        );
        if let Some(text) = &self.selected_text {
            doc.insert("selectedText".into(), JsValue::from(text.as_str()));
        }
        JsValue::Object(doc)
    }
}

/// pi's `/fork` (`before` a user message) or `/clone` (`at` an entry) of an open session: the
/// new session is placed by [`fork_target`] (in `dir` when given) and made, written as pi
/// would write it.
pub(crate) fn fork_session(
    env: &PathEnv,
    source: &mut Session,
    entry_id: &str,
    position: ForkPosition,
    dir: Option<&Path>,
    ids: Arc<IdSource>,
) -> StoreResult<Forked> {
    let selection = source.fork_selection(entry_id, position)?;
    let new = fork_target(env, source, selection.leaf_id.as_deref(), dir, &ids)?;
    let entries = match &selection.leaf_id {
        Some(leaf) => source.branched_entries(leaf)?,
        // Before a root message: a new, empty session (pi writes it at its first reply).
        None => Vec::new(),
    };
    let options = SessionOptions {
        profile: source.profile(),
        ids,
        ..SessionOptions::default()
    };
    let session = Session::from_entries(new, &entries, options, false)?;
    Ok(Forked {
        session,
        selected_text: selection.selected_text,
    })
}

/// pi's `/fork` or `/clone` of the session file `source`, read as pi's CLI reads it (never
/// rewritten): the new session goes into `session_dir` (default: beside the source).
pub(crate) fn fork_file(
    env: &PathEnv,
    profile: Profile,
    source: &Path,
    entry_id: &str,
    position: ForkPosition,
    session_dir: Option<&Path>,
    ids: Arc<IdSource>,
) -> StoreResult<Forked> {
    if !profile.is_session_manager() {
        return Err(StoreError::new(
            ErrorKind::InvalidArgument,
            "a fork of a file is pi's /fork: use the pi-cli or pi-1.6 profile",
        ));
    }
    let (source, mut options) = source_and_options(env, source, &ids)?;
    options.profile = profile;
    let mut original = Session::open_read_only(&source, options)?;
    fork_session(env, &mut original, entry_id, position, session_dir, ids)
}

/// pi's `SessionManager.forkFrom`: the whole of `source` (every branch) copied into a new
/// session of `target_cwd`, written at once, in `session_dir` or the cwd's default directory.
/// pi 0.82.1 and 1.6 copy the same lines; the new session reads and writes as `profile` (a
/// SessionManager profile). pi 1.6 also appends a missing final newline to the source; this
/// never writes to a file it only reads.
pub(crate) fn fork_from(
    env: &PathEnv,
    profile: Profile,
    source: &Path,
    target_cwd: &str,
    session_dir: Option<&str>,
    id: Option<&str>,
    ids: Arc<IdSource>,
) -> StoreResult<Session> {
    if !profile.is_session_manager() {
        return Err(StoreError::new(
            ErrorKind::InvalidArgument,
            "forkFrom is pi's SessionManager.forkFrom: use the pi-cli or pi-1.6 profile",
        ));
    }
    let (source, mut options) = source_and_options(env, source, &ids)?;
    options.profile = profile;
    let invalid = || {
        StoreError::in_file(
            ErrorKind::InvalidSession,
            &source,
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
    let place = match session_dir.filter(|d| !d.is_empty()) {
        Some(dir) => Place::Dir(dir),
        None => Place::Default,
    };
    let request = SessionRequest {
        profile,
        cwd: target_cwd,
        id,
        place,
        parent_session: Some(source.to_string_lossy().into_owned()),
        metadata: None,
    };
    let new = new_session(env, request, &ids)?;
    let entries = original.all_entries()?;
    Session::from_entries(new, &entries, options, true)
}

/// The source resolved as pi resolves it, and the options both forks read it with (pi's
/// SessionManager rules, pi-cli writing).
fn source_and_options(
    env: &PathEnv,
    source: &Path,
    ids: &Arc<IdSource>,
) -> StoreResult<(PathBuf, SessionOptions)> {
    let source = PathBuf::from(env.resolve_path(&source.to_string_lossy())?);
    let options = SessionOptions {
        profile: Profile::PiCli,
        ids: ids.clone(),
        ..SessionOptions::default()
    };
    Ok((source, options))
}
