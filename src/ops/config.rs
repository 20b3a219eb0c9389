//! Everything the process's environment says, read once into one value and handed down: the
//! layers below never look at environment variables themselves.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::catalog::postgres::{PgEnv, Target};
use crate::format::profile::Profile;
use crate::repo::paths::{AGENT_DIR_ENV, SESSION_DIR_ENV};
use crate::repo::{PathEnv, RepoError};
use crate::store::index_file::{ENV_DIR, ENV_MAX_BYTES, ENV_OFF};
use crate::store::{DEFAULT_INDEX_MAX_BYTES as DEFAULT_MAX_BYTES, SessionOptions};

/// Turns group commit off, so that every durable change syncs on its own (the way to measure
/// what group commit saves).
pub const NO_GROUP_COMMIT_ENV: &str = "PI_SESSION_NO_GROUP_COMMIT";

/// The log filter (`tracing` directives, e.g. `debug` or `pi_session::jsonrpc=trace`).
pub const LOG_ENV: &str = "PI_SESSION_LOG";

/// The process's configuration: its paths, where the persisted index lives, and how durable
/// changes are committed.
#[derive(Debug, Clone)]
pub struct Config {
    /// `$HOME`, the current directory and the agent directory (`$PI_CODING_AGENT_DIR`).
    pub env: PathEnv,
    /// `$PI_CODING_AGENT_SESSION_DIR` as set (pi's command line uses it when no
    /// `--session-dir` is given); `None` when unset or empty.
    pub session_dir_env: Option<String>,
    /// Where sessions' persisted indexes live; `None`: turned off (`$PI_SESSION_NO_INDEX`, or
    /// `--no-index`).
    pub index_dir: Option<Arc<Path>>,
    /// The most bytes the index directory may hold (`$PI_SESSION_INDEX_MAX_BYTES`).
    pub index_max_bytes: u64,
    /// A durable change may let the next change of its session in before its sync, so that
    /// the two share one (unless `$PI_SESSION_NO_GROUP_COMMIT` is set).
    pub group_commit: bool,
    /// The log filter (`$PI_SESSION_LOG`); `None` when unset.
    pub log_filter: Option<String>,
    /// What the environment says about PostgreSQL connections (`PGPASSWORD`, the pgpass
    /// file, the login name).
    pub(crate) pg: PgEnv,
    /// Store-wide queries answer from this team database instead of the local index.
    pub team: Option<TeamIndex>,
}

/// A team's PostgreSQL store index, and the machine a query is narrowed to (or a sync files
/// as).
#[derive(Debug, Clone)]
pub struct TeamIndex {
    pub(crate) target: Target,
    pub machine: Option<String>,
}

/// One variable of the environment the configuration is read from.
pub trait Vars {
    fn var(&self, name: &str) -> Option<String>;
}

/// This process's environment.
pub struct ProcessVars;

impl Vars for ProcessVars {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }
}

impl<const N: usize> Vars for [(&str, &str); N] {
    fn var(&self, name: &str) -> Option<String> {
        self.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}

impl Config {
    /// The configuration of this process (its environment and current directory).
    pub fn from_process() -> Result<Config, RepoError> {
        let cwd = std::env::current_dir().map_err(|e| RepoError::Environment {
            reason: format!("cannot read the current directory: {e}"),
        })?;
        let home_dir = std::env::home_dir().map(|h| h.to_string_lossy().into_owned());
        Config::from_vars(&ProcessVars, &cwd.to_string_lossy(), home_dir)
    }

    /// The log filter `vars` give: for a process whose configuration could not be read, which
    /// still logs why.
    pub fn log_filter_of(vars: &impl Vars) -> Option<String> {
        vars.var(LOG_ENV)
    }

    /// The configuration `vars` give, for a process in `cwd` whose home directory (when
    /// `$HOME` is unset) is `home_dir`.
    pub fn from_vars(
        vars: &impl Vars,
        cwd: &str,
        home_dir: Option<String>,
    ) -> Result<Config, RepoError> {
        let nonempty = |name: &str| vars.var(name).filter(|v| !v.is_empty());
        let home = nonempty("HOME")
            .or(home_dir)
            .ok_or_else(|| RepoError::Environment {
                reason: "no home directory: set HOME".to_string(),
            })?;
        let env = PathEnv::new(home.clone(), cwd, nonempty(AGENT_DIR_ENV).as_deref())?;
        let pg = PgEnv {
            password: vars.var("PGPASSWORD"),
            passfile: Some(
                nonempty("PGPASSFILE")
                    .map_or_else(|| Path::new(&home).join(".pgpass"), PathBuf::from),
            ),
            os_user: nonempty("PGUSER").or_else(|| nonempty("USER")),
            default_root_cert: Some(Path::new(&home).join(".postgresql/root.crt")),
        };
        let index_off = nonempty(ENV_OFF).is_some_and(|v| v != "0");
        let index_dir = match nonempty(ENV_DIR) {
            Some(dir) => PathBuf::from(dir),
            None => match nonempty("XDG_CACHE_HOME").map(PathBuf::from) {
                Some(cache) if cache.is_absolute() => cache.join("pi-session"),
                _ => PathBuf::from(home).join(".cache/pi-session"),
            },
        };
        Ok(Config {
            env,
            session_dir_env: nonempty(SESSION_DIR_ENV),
            index_dir: (!index_off).then(|| Arc::from(index_dir)),
            index_max_bytes: vars
                .var(ENV_MAX_BYTES)
                .and_then(|v| v.parse().ok())
                .unwrap_or(DEFAULT_MAX_BYTES),
            group_commit: vars.var(NO_GROUP_COMMIT_ENV).is_none(),
            log_filter: Config::log_filter_of(vars),
            pg,
            team: None,
        })
    }

    /// The same, without the persisted index (`--no-index`, or a client's choice).
    pub fn without_index(mut self) -> Config {
        self.index_dir = None;
        self
    }

    /// Options for a session of `profile` opened under this configuration.
    pub fn session_options(&self, profile: Profile) -> SessionOptions {
        SessionOptions {
            profile,
            index_dir: self.index_dir.clone(),
            index_max_bytes: self.index_max_bytes,
            ..SessionOptions::default()
        }
    }
}

impl PathEnv {
    /// The paths of this process's environment (`$HOME`, the current directory,
    /// `$PI_CODING_AGENT_DIR`), for embedders: read here, with the rest of the configuration,
    /// so that the environment has one reader.
    pub fn from_process() -> Result<PathEnv, RepoError> {
        Config::from_process().map(|config| config.env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_is_read_into_one_value() {
        let vars = [
            ("HOME", "/home/u"),
            ("PI_CODING_AGENT_DIR", "~/agent"),
            ("PI_CODING_AGENT_SESSION_DIR", "~/s"),
            ("XDG_CACHE_HOME", "/cache"),
            ("PI_SESSION_INDEX_MAX_BYTES", "123"),
            ("PI_SESSION_NO_GROUP_COMMIT", ""),
            ("PI_SESSION_LOG", "debug"),
        ];
        let config = Config::from_vars(&vars, "/work", None).unwrap();
        assert_eq!(config.env.agent_dir(), "/home/u/agent");
        assert_eq!(config.env.process_cwd(), "/work");
        assert_eq!(config.session_dir_env.as_deref(), Some("~/s"));
        assert_eq!(
            config.index_dir.as_deref(),
            Some(Path::new("/cache/pi-session"))
        );
        assert_eq!(config.index_max_bytes, 123);
        // Set, even empty: off (as the variable has always been read).
        assert!(!config.group_commit);
        assert_eq!(config.log_filter.as_deref(), Some("debug"));
        assert_eq!(
            config.session_options(Profile::Harness).index_max_bytes,
            123
        );
    }

    #[test]
    fn defaults_and_the_index_turned_off() {
        let config = Config::from_vars(&[("HOME", "/h")], "/", None).unwrap();
        assert!(config.group_commit);
        assert_eq!(config.log_filter, None);
        assert_eq!(
            config.index_dir.as_deref(),
            Some(Path::new("/h/.cache/pi-session"))
        );
        assert_eq!(config.index_max_bytes, DEFAULT_MAX_BYTES);
        for off in ["1", "yes"] {
            let vars = [("HOME", "/h"), ("PI_SESSION_NO_INDEX", off)];
            assert!(
                Config::from_vars(&vars, "/", None)
                    .unwrap()
                    .index_dir
                    .is_none()
            );
        }
        let vars = [("HOME", "/h"), ("PI_SESSION_NO_INDEX", "0")];
        assert!(
            Config::from_vars(&vars, "/", None)
                .unwrap()
                .index_dir
                .is_some()
        );
        let vars = [("PI_SESSION_INDEX_DIR", "/i")];
        let config = Config::from_vars(&vars, "/", Some("/fallback".into())).unwrap();
        assert_eq!(config.index_dir.as_deref(), Some(Path::new("/i")));
        assert_eq!(config.env.home(), "/fallback");
        assert!(Config::from_vars(&[("X", "")], "/", None).is_err());
    }
}
