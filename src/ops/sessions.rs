//! Sessions as wholes: made, opened, forked, found again, deleted.

use std::path::{Path, PathBuf};

use crate::format::json::JsValue;
use crate::format::profile::Profile;
use crate::repo::{Forked, Place, SessionRequest};
use crate::store::{ErrorKind, ForkPosition, Session};

use super::durable;
use super::error::OpError;
use super::hooks::{BeforeFork, HookReply, Hooks};
use super::ports::{Hold, SessionAccess};
use super::scope::Scope;

/// Where a new session's file goes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum PlaceChoice {
    /// The cwd's directory under the sessions root.
    #[default]
    Default,
    /// This directory, flat.
    Dir(String),
    /// No file.
    Memory,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct CreateInput {
    pub(crate) profile: Option<Profile>,
    pub(crate) cwd: String,
    pub(crate) id: Option<String>,
    pub(crate) place: PlaceChoice,
    pub(crate) parent_session: Option<String>,
    pub(crate) metadata: Option<JsValue>,
    pub(crate) durable: bool,
}

/// A new session (pi's `SessionManager.create`, or the harness's).
pub(crate) fn create(scope: &Scope, input: CreateInput) -> Result<Session, OpError> {
    let profile = scope.profile(input.profile);
    let options = scope.options(profile, input.durable);
    let place = match &input.place {
        PlaceChoice::Memory => Place::Memory,
        PlaceChoice::Dir(dir) => Place::Dir(dir),
        PlaceChoice::Default => Place::Default,
    };
    let request = SessionRequest {
        profile,
        cwd: &input.cwd,
        id: input.id.as_deref(),
        place,
        parent_session: input.parent_session,
        metadata: input.metadata,
    };
    let new = crate::repo::new_session(scope.repo.env(), request, &options.ids)?;
    if input.durable
        && let Some(path) = &new.path
    {
        // Its directory may have just been made: that name must survive a crash too.
        durable::directory_named(path)?;
    }
    Ok(Session::create(new, options)?)
}

#[derive(Debug, Clone, Default)]
pub(crate) struct OpenInput {
    /// As the client spells it (`~` and `file://` understood).
    pub(crate) path: String,
    pub(crate) profile: Option<Profile>,
    /// The cwd pi would run in (default: the process's).
    pub(crate) cwd: Option<String>,
    pub(crate) durable: bool,
}

/// An existing session file, opened for writing. `open_here` says whether this process already
/// has a session open at a path (a second writer is refused).
pub(crate) fn open(
    scope: &Scope,
    input: OpenInput,
    open_here: &dyn Fn(&Path) -> bool,
) -> Result<Session, OpError> {
    let env = scope.repo.env();
    let path = crate::repo::session_path(env, &input.path)?;
    if open_here(&path) {
        return Err(OpError::store(
            ErrorKind::Locked,
            format!("{}: this session is already open here", path.display()),
        ));
    }
    let cwd = crate::repo::cwd_for_open(env, input.cwd.as_deref())?;
    let options = scope.options(scope.profile(input.profile), input.durable);
    Ok(Session::open(&path, &cwd, options)?)
}

/// pi's `--continue`: the most recently modified session of the cwd, opened, else a new one.
pub(crate) fn continue_recent(
    scope: &Scope,
    profile: Option<Profile>,
    cwd: String,
    session_dir: Option<String>,
    durable: bool,
    open_here: &dyn Fn(&Path) -> bool,
) -> Result<Session, OpError> {
    let as_profile = scope.profile(profile);
    let candidate =
        scope
            .repo
            .continue_recent_candidate_as(as_profile, &cwd, session_dir.as_deref())?;
    match candidate {
        Some(path) => {
            let input = OpenInput {
                path: path.to_string_lossy().into_owned(),
                profile,
                cwd: Some(cwd),
                durable,
            };
            open(scope, input, open_here)
        }
        None => {
            let place = session_dir.map_or(PlaceChoice::Default, PlaceChoice::Dir);
            let input = CreateInput {
                profile,
                cwd,
                place,
                durable,
                ..CreateInput::default()
            };
            create(scope, input)
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct ForkInput {
    pub(crate) entry_id: String,
    pub(crate) position: ForkPosition,
    /// `None`: as durable as the session forked from.
    pub(crate) durable: Option<bool>,
}

/// What asking for a fork came to.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // made once per fork, then registered
pub(crate) enum ForkOutcome {
    /// The hook said no.
    Cancelled,
    Made(Forked),
}

/// `/fork` and `/clone` (spec 9.2): ask the hook, then write the new session beside the current
/// one. The current one stays as it is.
pub(crate) async fn fork<A: SessionAccess>(
    scope: &Scope,
    access: &A,
    hooks: &impl Hooks,
    input: ForkInput,
) -> Result<ForkOutcome, A::Error> {
    let ask = BeforeFork {
        entry_id: input.entry_id.clone(),
        position: input.position,
    };
    match hooks.before_fork(ask).await {
        HookReply::Cancelled => return Err(OpError::Cancelled.into()),
        HookReply::Answer(Some(true)) => return Ok(ForkOutcome::Cancelled),
        HookReply::Answer(_) => {}
    }
    let scope = scope.clone();
    // Selecting and copying the entries reads the session.
    access
        .with(Hold::Read, move |session| {
            let durable = input.durable.unwrap_or(session.is_durable());
            let env = scope.repo.env();
            let ids = scope.ids.clone();
            let mut forked = crate::repo::fork_session(
                env,
                session,
                &input.entry_id,
                input.position,
                None,
                ids,
            )?;
            durable::settle_new(&mut forked.session, durable)?;
            Ok(ForkOutcome::Made(forked))
        })
        .await
}

/// `pi-session fork`: a fork of a session file that is not open, written beside it (or in
/// `out`); the source is never changed.
pub(crate) fn fork_file(
    scope: &Scope,
    profile: Profile,
    file: &Path,
    input: ForkInput,
    out: Option<&Path>,
) -> Result<Forked, OpError> {
    let mut forked = crate::repo::fork_file(
        scope.repo.env(),
        profile,
        file,
        &input.entry_id,
        input.position,
        out,
        scope.ids.clone(),
    )?;
    durable::settle_new(&mut forked.session, input.durable.unwrap_or(false))?;
    Ok(forked)
}

#[derive(Debug, Clone, Default)]
pub(crate) struct ForkFromInput {
    pub(crate) profile: Option<Profile>,
    pub(crate) source_path: String,
    pub(crate) cwd: String,
    pub(crate) session_dir: Option<String>,
    pub(crate) id: Option<String>,
    pub(crate) durable: bool,
}

/// pi's `--fork`: a whole session copied into a new session of another cwd.
pub(crate) fn fork_from(scope: &Scope, input: ForkFromInput) -> Result<Session, OpError> {
    let profile = match input.profile {
        Some(profile) if !profile.rules().fork_from => {
            return Err(OpError::store(
                ErrorKind::InvalidArgument,
                "'profile': forkFrom is pi's SessionManager.forkFrom (use pi-cli or pi-1.6)",
            ));
        }
        Some(profile) => profile,
        // A default profile without forkFrom means pi's.
        None if !scope.default_profile.rules().fork_from => Profile::default(),
        None => scope.default_profile,
    };
    let mut session = crate::repo::fork_from(
        scope.repo.env(),
        profile,
        Path::new(&input.source_path),
        &input.cwd,
        input.session_dir.as_deref(),
        input.id.as_deref(),
        scope.ids.clone(),
    )?;
    durable::settle_new(&mut session, input.durable)?;
    Ok(session)
}

/// Deletes a session file that is not open here; `false` when there was none.
pub(crate) fn delete(
    scope: &Scope,
    path: &str,
    open_here: &dyn Fn(&Path) -> bool,
) -> Result<bool, OpError> {
    let path: PathBuf = crate::repo::session_path(scope.repo.env(), path)?;
    if open_here(&path) {
        return Err(OpError::store(
            ErrorKind::Locked,
            format!("{}: the session is open; close it first", path.display()),
        ));
    }
    Ok(scope.repo.delete_session(&path)?)
}
