//! What the operations work in ([`Scope`]).

use std::sync::Arc;

use crate::format::ids::IdSource;
use crate::format::profile::Profile;
use crate::repo::Repo;
use crate::store::SessionOptions;

use super::config::Config;

/// What the operations work in: the configuration, the sessions directories, the ids and clock
/// of new sessions and entries, and the profile of a request that names none.
#[derive(Debug, Clone)]
pub struct Scope {
    /// The configuration, read once.
    pub config: Arc<Config>,
    /// The sessions directories.
    pub repo: Repo,
    /// Where ids and times come from.
    pub ids: Arc<IdSource>,
    /// The profile of sessions when a request names none.
    pub default_profile: Profile,
}

impl Scope {
    /// The command line's: the process's configuration, real ids, pi's default profile.
    pub fn new(config: Config) -> Scope {
        Scope {
            repo: Repo::new(config.env.clone()),
            config: Arc::new(config),
            ids: Arc::new(IdSource::system()),
            default_profile: Profile::default(),
        }
    }

    /// The profile a request means: the one it names, else the default.
    pub fn profile(&self, requested: Option<Profile>) -> Profile {
        requested.unwrap_or(self.default_profile)
    }

    /// How a session of `profile` is opened here.
    pub fn options(&self, profile: Profile, durable: bool) -> SessionOptions {
        SessionOptions {
            durable,
            ids: self.ids.clone(),
            ..self.config.session_options(profile)
        }
    }
}
