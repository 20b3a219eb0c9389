//! The open sessions, by session id, and the sidecar-wide settings they are opened with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::format::ids::IdSource;
use crate::format::profile::Profile;
use crate::jsonrpc::{Deterministic, IntoRpcError, RpcError};
use crate::ops::{Config, Scope};
use crate::repo::{Repo, RepoError};

use super::SidecarSettings;
use crate::store::{ErrorKind, Session, StoreError};

/// One open session. Held only for the length of a store call, never across an await.
pub(crate) type SessionCell = Arc<Mutex<Session>>;

/// The sidecar's state: every open session, and what the operations work in.
#[derive(Debug)]
pub(crate) struct Registry {
    sessions: Mutex<HashMap<String, OpenSession>>,
    /// The process's configuration, read once before serving (or why it could not be).
    config: Result<Arc<Config>, String>,
    /// Set at `initialize` (or at the first method before it).
    scope: OnceLock<Scope>,
}

/// A registered session and its file (kept apart so finding a session by path never waits for
/// a session busy with a long read).
#[derive(Debug)]
struct OpenSession {
    cell: SessionCell,
    path: Option<std::path::PathBuf>,
}

/// Locks a session; a panic in an earlier call does not make it unusable.
pub(crate) fn lock(cell: &SessionCell) -> MutexGuard<'_, Session> {
    cell.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Registry {
    /// A registry under `config`, or the reason it could not be read.
    pub(crate) fn with_config(config: Result<Config, RepoError>) -> Registry {
        Registry {
            sessions: Mutex::default(),
            config: config.map(Arc::new).map_err(|e| e.to_string()),
            scope: OnceLock::new(),
        }
    }

    fn config(&self) -> Result<Arc<Config>, RpcError> {
        self.config.clone().map_err(RpcError::internal)
    }

    /// Called at `initialize`: the sessions root, the index, the default profile, and
    /// deterministic ids and clock when asked.
    pub(crate) fn configure(
        &self,
        settings: &SidecarSettings,
        deterministic: Option<Deterministic>,
    ) -> Result<(), RpcError> {
        let mut config = Config::clone(&*self.config()?);
        if let Some(root) = &settings.sessions_root {
            config.env = config.env.with_sessions_root(&root.to_string_lossy());
        }
        if !settings.index {
            config = config.without_index();
        }
        let ids = match deterministic {
            Some(d) => IdSource::deterministic(d.seed, d.start_time.timestamp_millis()),
            None => IdSource::system(),
        };
        let _ = self.scope.set(Scope {
            repo: Repo::new(config.env.clone()).keeping_caches(),
            config: Arc::new(config),
            ids: Arc::new(ids),
            default_profile: settings.default_profile,
        });
        Ok(())
    }

    /// What the operations work in, as configured at `initialize`.
    pub(crate) fn scope(&self) -> Result<&Scope, RpcError> {
        if let Some(scope) = self.scope.get() {
            return Ok(scope);
        }
        let config = self.config()?;
        Ok(self.scope.get_or_init(|| Scope {
            repo: Repo::new(config.env.clone()).keeping_caches(),
            config,
            ids: Arc::new(IdSource::system()),
            default_profile: Profile::default(),
        }))
    }

    fn map(&self) -> MutexGuard<'_, HashMap<String, OpenSession>> {
        self.sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The open session `id`, or `session_not_found`.
    pub(crate) fn get(&self, id: &str) -> Result<SessionCell, RpcError> {
        self.map()
            .get(id)
            .map(|open| open.cell.clone())
            .ok_or_else(|| {
                StoreError::new(
                    ErrorKind::SessionNotFound,
                    format!("no open session {id:?}"),
                )
                .into_rpc_error()
            })
    }

    /// Registers a session under its header id; refuses a second session with the same id.
    pub(crate) fn insert(&self, session: Session) -> Result<(String, SessionCell), RpcError> {
        let id = session.session_id().into_owned();
        let mut map = self.map();
        if map.contains_key(&id) {
            return Err(StoreError::new(
                ErrorKind::InvalidArgument,
                format!("a session with id {id:?} is already open; close it first"),
            )
            .into_rpc_error());
        }
        let path = session.path().map(std::path::Path::to_path_buf);
        let cell = Arc::new(Mutex::new(session));
        map.insert(
            id.clone(),
            OpenSession {
                cell: cell.clone(),
                path,
            },
        );
        Ok((id, cell))
    }

    pub(crate) fn remove(&self, id: &str) -> Option<SessionCell> {
        self.map().remove(id).map(|open| open.cell)
    }

    /// Whether a session is open at `path`.
    pub(crate) fn is_open_at(&self, path: &std::path::Path) -> bool {
        self.map()
            .values()
            .any(|open| open.path.as_deref() == Some(path))
    }

    /// Closes every session (files are written at each append; dropping releases the locks).
    pub(crate) fn close_all(&self) {
        self.map().clear();
    }
}
