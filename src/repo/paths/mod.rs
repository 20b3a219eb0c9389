//! Where sessions live and what their files are called, spelled exactly as pi spells them.
//!
//! pi (the SessionManager, "SM") keeps sessions under `<agentDir>/sessions/<encoded cwd>/`,
//! where the cwd is first resolved to an absolute path; an explicit session directory is used
//! flat (files directly inside, filtered by the header `cwd` when listing). The harness ("H")
//! encodes the cwd string as given. File names are `<ISO timestamp with : and . as ->_<id>.jsonl`.
//!
//! All functions work on strings, as pi does, so that results compare equal to pi's byte for byte.

mod file_url;
mod node_path;

pub(crate) use node_path::{is_absolute, join, resolve};

use crate::format::profile::Profile;
use crate::repo::error::RepoError;

/// The environment variable that moves the agent directory.
pub const AGENT_DIR_ENV: &str = "PI_CODING_AGENT_DIR";

/// The environment variable pi's command line takes as the session directory when no
/// `--session-dir` is given (tilde-expanded; used flat, like `--session-dir`).
pub const SESSION_DIR_ENV: &str = "PI_CODING_AGENT_SESSION_DIR";

/// What pi resolves paths against: the home directory, the process's current directory and the
/// agent directory. Taken from the process once ([`PathEnv::from_process`]) or given
/// explicitly, which keeps tests free of global state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathEnv {
    home: String,
    process_cwd: String,
    agent_dir: String,
    /// A sessions root given directly (the sidecar's `initialize.sessionsRoot`) instead of
    /// `<agentDir>/sessions`.
    sessions_root: Option<String>,
}

/// The directory a cwd's sessions are listed from (or created in), and the cwd filter pi
/// applies there: only for an explicit directory other than the default one, sessions whose
/// header `cwd` resolves to `cwd_filter` are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionDir {
    pub path: String,
    pub cwd_filter: Option<String>,
}

impl SessionDir {
    /// The path of a new session file in this directory, as pi joins it.
    pub fn file_path(&self, timestamp_iso: &str, session_id: &str) -> String {
        join(&[&self.path, &session_file_name(timestamp_iso, session_id)])
    }
}

impl PathEnv {
    /// An explicit environment. `agent_dir_setting` is the raw `PI_CODING_AGENT_DIR` value
    /// (`None` or empty: `<home>/.pi/agent`).
    pub fn new(
        home: impl Into<String>,
        process_cwd: impl Into<String>,
        agent_dir_setting: Option<&str>,
    ) -> Result<PathEnv, RepoError> {
        let mut env = PathEnv {
            home: home.into(),
            process_cwd: process_cwd.into(),
            agent_dir: String::new(),
            sessions_root: None,
        };
        // pi's getAgentDir(): tilde and file:// URLs are expanded, but the path is not
        // resolved, so a relative setting stays relative (and so do listAll's paths).
        env.agent_dir = match agent_dir_setting.filter(|s| !s.is_empty()) {
            Some(setting) => env.normalize_path(setting)?,
            None => join(&[&env.home, ".pi", "agent"]),
        };
        Ok(env)
    }

    /// The home directory.
    pub fn home(&self) -> &str {
        &self.home
    }

    /// The process's working directory.
    pub fn process_cwd(&self) -> &str {
        &self.process_cwd
    }

    /// pi's `getAgentDir()`.
    pub fn agent_dir(&self) -> &str {
        &self.agent_dir
    }

    /// Where the OS finds a path spelled relative to this environment's current directory
    /// (which need not be the process's own, in tests).
    pub fn io_path(&self, spelled: &str) -> std::path::PathBuf {
        if is_absolute(spelled) {
            spelled.into()
        } else {
            std::path::Path::new(&self.process_cwd).join(spelled)
        }
    }

    /// The same environment with sessions kept under `root` instead of `<agentDir>/sessions`.
    pub fn with_sessions_root(mut self, root: &str) -> PathEnv {
        self.sessions_root = Some(root.to_string());
        self
    }

    /// pi's `getSessionsDir()`: `<agentDir>/sessions` (what `listAll` walks).
    pub fn sessions_root(&self) -> String {
        match &self.sessions_root {
            Some(root) => root.clone(),
            None => join(&[&self.agent_dir, "sessions"]),
        }
    }

    /// pi's `normalizePath`: `~` and `~/…` expanded against the home directory, a `file://`
    /// URL turned into its path; anything else unchanged (not even normalized).
    pub fn normalize_path(&self, input: &str) -> Result<String, RepoError> {
        if input == "~" {
            return Ok(self.home.clone());
        }
        if let Some(rest) = input.strip_prefix("~/") {
            return Ok(join(&[&self.home, rest]));
        }
        if input.starts_with("file://") {
            return file_url::file_url_to_path(input).map_err(|e| RepoError::InvalidPath {
                input: input.to_string(),
                reason: e.message(),
            });
        }
        Ok(input.to_string())
    }

    /// pi's `resolvePath`: [`PathEnv::normalize_path`], then Node's `path.resolve` against the
    /// process's current directory. The disk is never consulted (no symlink resolution).
    pub fn resolve_path(&self, input: &str) -> Result<String, RepoError> {
        let normalized = self.normalize_path(input)?;
        Ok(resolve(&self.process_cwd, &normalized))
    }

    /// pi's `getDefaultSessionDirPath(cwd)`: `<resolved agentDir>/sessions/<encoded resolved cwd>`.
    pub fn default_session_dir(&self, cwd: &str) -> Result<String, RepoError> {
        let resolved_cwd = self.resolve_path(cwd)?;
        let root = self.resolve_path(&self.sessions_root())?;
        Ok(join(&[&root, &encode_cwd(&resolved_cwd)]))
    }

    /// The directory pi's `list`, `continueRecent` and `create` use for `cwd`, given an optional
    /// explicit session directory (`--session-dir`), and the cwd filter that goes with it.
    /// An empty explicit directory counts as none, as in pi.
    pub fn session_dir(&self, cwd: &str, explicit: Option<&str>) -> Result<SessionDir, RepoError> {
        self.session_dir_as(Profile::PiCli, cwd, explicit)
    }

    /// [`PathEnv::session_dir`] as `profile`'s pi decides "a custom directory": pi 0.82.1
    /// compares the strings, pi 1.6 the resolved paths (`pathsEqual`), so `<default>/` is the
    /// default directory in 1.6 and a custom one in 0.82.1.
    pub fn session_dir_as(
        &self,
        profile: Profile,
        cwd: &str,
        explicit: Option<&str>,
    ) -> Result<SessionDir, RepoError> {
        let default = self.default_session_dir(cwd)?;
        let Some(explicit) = explicit.filter(|d| !d.is_empty()) else {
            return Ok(SessionDir {
                path: default,
                cwd_filter: None,
            });
        };
        let path = self.normalize_path(explicit)?;
        // pi compares the strings: an explicit spelling of the default directory that differs
        // (say with a trailing slash) counts as a custom directory and filters by cwd.
        let custom = match profile.rules().custom_dir_resolved {
            true => resolve(&self.process_cwd, &path) != default,
            false => path != default,
        };
        let cwd_filter = if custom {
            Some(self.resolve_path(cwd)?)
        } else {
            None
        };
        Ok(SessionDir { path, cwd_filter })
    }

    /// Whether a session header `cwd` passes a cwd filter (pi's `sessionCwdMatches`): it must
    /// be a non-empty string that resolves to the filter.
    pub fn cwd_matches(&self, header_cwd: &str, filter: &str) -> bool {
        !header_cwd.is_empty()
            && self
                .resolve_path(header_cwd)
                .is_ok_and(|resolved| resolved == filter)
    }

    /// The harness's session directory for `cwd` under `sessions_root`: the root is made
    /// absolute (`~` and `file://` expanded, resolved against the current directory) and the
    /// cwd encoded as given, unresolved (`"/w/x/"` gives `--w-x---`).
    pub fn harness_session_dir(&self, sessions_root: &str, cwd: &str) -> String {
        join(&[&self.harness_root(sessions_root), &encode_cwd(cwd)])
    }

    /// The harness's sessions root made absolute: `~` and `file://` expanded, resolved against
    /// the current directory.
    pub fn harness_root(&self, sessions_root: &str) -> String {
        let root = if sessions_root == "~" {
            self.home.clone()
        } else if let Some(rest) = sessions_root.strip_prefix("~/") {
            join(&[&self.home, rest])
        } else if sessions_root.starts_with("file://") {
            // The harness keeps a malformed URL as an ordinary path.
            file_url::file_url_to_path(sessions_root).unwrap_or_else(|_| sessions_root.into())
        } else {
            sessions_root.to_string()
        };
        resolve(&self.process_cwd, &root)
    }
}

/// The directory name of a cwd: one leading `/` or `\` dropped, every `/`, `\` and `:` turned
/// into `-`, wrapped in `--`. pi applies this to the resolved cwd, the harness to the raw one.
/// The mapping is lossy (`/a-b/c` and `/a/b-c` share `--a-b-c--`).
pub fn encode_cwd(cwd: &str) -> String {
    let body = cwd
        .strip_prefix(['/', '\\'])
        .unwrap_or(cwd)
        .replace(['/', '\\', ':'], "-");
    format!("--{body}--")
}

/// A session file name: `<timestamp with every : and . replaced by ->_<id>.jsonl`, where the
/// timestamp is the header's `toISOString()` value.
pub fn session_file_name(timestamp_iso: &str, session_id: &str) -> String {
    format!(
        "{}_{session_id}.jsonl",
        crate::format::time::file_stamp(timestamp_iso)
    )
}

/// pi's `assertValidSessionId`: `^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`.
pub fn validate_session_id(id: &str) -> Result<(), RepoError> {
    let bytes = id.as_bytes();
    let valid = match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        }
        _ => false,
    };
    if valid {
        Ok(())
    } else {
        Err(RepoError::InvalidSessionId { id: id.to_string() })
    }
}

/// Whether a directory entry name is one pi lists (`name.endsWith(".jsonl")`).
pub fn is_session_file_name(name: &str) -> bool {
    name.ends_with(".jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ErrorKind;

    fn env() -> PathEnv {
        PathEnv::new("/home/ann", "/work/here", None).unwrap()
    }

    #[test]
    fn agent_dir_and_sessions_root() {
        assert_eq!(env().agent_dir(), "/home/ann/.pi/agent");
        assert_eq!(env().sessions_root(), "/home/ann/.pi/agent/sessions");
        let custom = PathEnv::new("/home/ann", "/w", Some("~/agent/")).unwrap();
        assert_eq!(custom.agent_dir(), "/home/ann/agent/");
        let relative = PathEnv::new("/home/ann", "/w", Some("rel/./a")).unwrap();
        assert_eq!(relative.agent_dir(), "rel/./a");
        assert_eq!(relative.sessions_root(), "rel/a/sessions");
        assert_eq!(
            relative.default_session_dir("/p").unwrap(),
            "/w/rel/a/sessions/--p--"
        );
        assert!(PathEnv::new("/h", "/w", Some("file://host/x")).is_err());
    }

    #[test]
    fn cwd_encoding_follows_both_implementations() {
        let e = env();
        assert_eq!(
            e.default_session_dir("/Users/ann/proj.x").unwrap(),
            "/home/ann/.pi/agent/sessions/--Users-ann-proj.x--"
        );
        assert_eq!(
            e.default_session_dir("/").unwrap(),
            "/home/ann/.pi/agent/sessions/----"
        );
        assert_eq!(
            e.default_session_dir("sub/dir/").unwrap(),
            "/home/ann/.pi/agent/sessions/--work-here-sub-dir--"
        );
        assert_eq!(
            e.default_session_dir("~/p").unwrap(),
            "/home/ann/.pi/agent/sessions/--home-ann-p--"
        );
        assert_eq!(encode_cwd("C:\\work\\a"), "--C--work-a--");
        assert_eq!(encode_cwd("/w/x/"), "--w-x---");
        assert_eq!(
            e.harness_session_dir("sessions", "/w/x/"),
            "/work/here/sessions/--w-x---"
        );
    }

    #[test]
    fn explicit_session_dirs_are_flat_and_filter_by_cwd() {
        let e = env();
        let flat = e.session_dir("/p", Some("~/flat/")).unwrap();
        assert_eq!(flat.path, "/home/ann/flat/");
        assert_eq!(flat.cwd_filter.as_deref(), Some("/p"));
        let same = e
            .session_dir("/p", Some("/home/ann/.pi/agent/sessions/--p--"))
            .unwrap();
        assert_eq!(same.cwd_filter, None);
        let slash = e
            .session_dir("/p", Some("/home/ann/.pi/agent/sessions/--p--/"))
            .unwrap();
        assert_eq!(slash.cwd_filter.as_deref(), Some("/p"));
        let slash_16 = e
            .session_dir_as(
                Profile::Pi16,
                "/p",
                Some("/home/ann/.pi/agent/sessions/--p--/"),
            )
            .unwrap();
        assert_eq!(slash_16.cwd_filter, None, "pi 1.6 compares resolved paths");
        let none = e.session_dir("/p", Some("")).unwrap();
        assert_eq!(none.cwd_filter, None);
        assert!(e.cwd_matches("/p/", "/p"));
        assert!(!e.cwd_matches("", "/work/here"));
    }

    #[test]
    fn file_names_and_ids() {
        assert_eq!(
            session_file_name("2026-03-24T14:08:44.123Z", "abc"),
            "2026-03-24T14-08-44-123Z_abc.jsonl"
        );
        let flat = env().session_dir("/p", Some("~/flat/")).unwrap();
        assert_eq!(
            flat.file_path("2026-03-24T14:08:44.123Z", "abc"),
            "/home/ann/flat/2026-03-24T14-08-44-123Z_abc.jsonl"
        );
        for ok in ["a", "a1", "a.b-c_d", "0"] {
            assert!(validate_session_id(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-a", "a-", "a b", "a/b", ".a", "é"] {
            let err = validate_session_id(bad).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument);
            assert_eq!(
                err.to_string(),
                crate::repo::error::INVALID_SESSION_ID_MESSAGE
            );
        }
    }
}
