//! The open sessions, by session id, and the sidecar-wide settings they are opened with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::format::ids::IdSource;
use crate::format::profile::Profile;
use crate::repo::{PathEnv, Repo};
use crate::rpc::{Deterministic, IntoRpcError, RpcError};

use super::SidecarSettings;
use crate::store::{ErrorKind, Session, SessionOptions, StoreError};

/// One open session. Held only for the length of a store call, never across an await.
pub type SessionCell = Arc<Mutex<Session>>;

/// The sidecar's state: every open session.
#[derive(Debug, Default)]
pub struct Registry {
    sessions: Mutex<HashMap<String, OpenSession>>,
    ids: OnceLock<Arc<IdSource>>,
    repo: OnceLock<Repo>,
    /// Where sessions' persisted indexes live (`None`: turned off).
    index_dir: OnceLock<Option<Arc<std::path::Path>>>,
}

/// A registered session and its file (kept apart so finding a session by path never waits for
/// a session busy with a long read).
#[derive(Debug)]
struct OpenSession {
    cell: SessionCell,
    path: Option<std::path::PathBuf>,
}

/// Locks a session; a panic in an earlier call does not make it unusable.
pub fn lock(cell: &SessionCell) -> MutexGuard<'_, Session> {
    cell.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Registry {
    /// Called at `initialize`: the sessions root and deterministic ids and clock when asked.
    pub fn configure(
        &self,
        settings: &SidecarSettings,
        deterministic: Option<Deterministic>,
    ) -> Result<(), RpcError> {
        let mut env = PathEnv::from_process().map_err(|e| RpcError::internal(e.to_string()))?;
        if let Some(root) = &settings.sessions_root {
            env = env.with_sessions_root(&root.to_string_lossy());
        }
        let _ = self.repo.set(Repo::new(env).keeping_caches());
        let ids = match deterministic {
            Some(d) => IdSource::deterministic(d.seed, d.start_time.timestamp_millis()),
            None => IdSource::system(),
        };
        let _ = self.ids.set(Arc::new(ids));
        let off = !settings.index;
        let _ = self
            .index_dir
            .set(crate::store::index_file::configured_dir(off));
        Ok(())
    }

    /// The sessions directories, as configured at `initialize`.
    pub fn repo(&self) -> Result<&Repo, RpcError> {
        if let Some(repo) = self.repo.get() {
            return Ok(repo);
        }
        let env = PathEnv::from_process().map_err(|e| RpcError::internal(e.to_string()))?;
        Ok(self.repo.get_or_init(|| Repo::new(env).keeping_caches()))
    }

    pub fn ids(&self) -> Arc<IdSource> {
        self.ids
            .get_or_init(|| Arc::new(IdSource::system()))
            .clone()
    }

    pub fn options(&self, profile: Profile) -> SessionOptions {
        SessionOptions {
            profile,
            ids: self.ids(),
            index_dir: self
                .index_dir
                .get_or_init(|| crate::store::index_file::configured_dir(false))
                .clone(),
            ..SessionOptions::default()
        }
    }

    fn map(&self) -> MutexGuard<'_, HashMap<String, OpenSession>> {
        self.sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The open session `id`, or `session_not_found`.
    pub fn get(&self, id: &str) -> Result<SessionCell, RpcError> {
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
    pub fn insert(&self, session: Session) -> Result<(String, SessionCell), RpcError> {
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

    pub fn remove(&self, id: &str) -> Option<SessionCell> {
        self.map().remove(id).map(|open| open.cell)
    }

    /// Whether a session is open at `path`.
    pub fn is_open_at(&self, path: &std::path::Path) -> bool {
        self.map()
            .values()
            .any(|open| open.path.as_deref() == Some(path))
    }

    /// Closes every session (files are written at each append; dropping releases the locks).
    pub fn close_all(&self) {
        self.map().clear();
    }
}
