//! Many sessions: the sessions directory, cwd encoding, where new sessions go and what they
//! are called ([`new_session`], [`fork_target`]), listing, continuing the most recent session,
//! forks of files, deleting.
//!
//! Everything here reproduces pi's SessionManager (0.82.1) as its code behaves: the same
//! directories, the same file chosen by `continueRecent`, the same listing rows in the same
//! order. Listing is made fast by a cache beside the sessions ([`CACHE_FILE_NAME`]) and by
//! reading files in parallel; the cache is only a shortcut for a file whose `stat` has not
//! changed, never trusted over the file.

mod cache;
mod delete;
mod error;
mod fork;
mod harness_list;
mod listing;
mod messages_text;
pub(crate) mod paths;
mod placement;
mod recent;
pub mod render;
pub(crate) mod rows;
mod scan;
pub mod search;
mod select;
mod session_info;
mod settings;
mod stamp;

pub use crate::format::js_date::parse_date;
pub use cache::CACHE_FILE_NAME;
pub use error::{INVALID_SESSION_ID_MESSAGE, RepoError};
pub(crate) use fork::{Forked, fork_file, fork_from, fork_session};
pub use harness_list::{HarnessListing, HarnessSession, HarnessSkip};
pub use listing::{Listing, Pi16Note};
pub use messages_text::MessagesText;
pub use paths::{PathEnv, session_file_name, validate_session_id};
pub(crate) use placement::{
    Place, SessionRequest, cwd_for_open, fork_target, new_session, session_path,
};
pub use scan::SkipReason;
pub use scan::{Pi16Feature, Pi16Mark};
pub use select::ListSelection;
pub(crate) use select::page;
pub use session_info::{ListField, SessionInfo};
pub(crate) use settings::SummarySettings;
pub use settings::{settings_session_dir, summary_settings};

/// Whether listings read and write the cache beside the sessions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CachePolicy {
    /// Use fresh cached rows; store rows of files read anew.
    ReadWrite,
    /// Read every file; touch no cache file.
    Off,
}

/// The sessions of one agent directory (or of explicit session directories), as pi sees them.
#[derive(Clone, Debug)]
pub struct Repo {
    env: PathEnv,
    cache: CachePolicy,
    threads: usize,
    /// Listing caches read, kept for the next listing (shared by clones); only a process that
    /// lists again keeps them (see [`Repo::keeping_caches`]).
    kept_caches: Option<std::sync::Arc<cache::LoadedCaches>>,
}

impl Repo {
    /// A repo over `env`, with the cache on and one reading thread per available core.
    pub fn new(env: PathEnv) -> Repo {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Repo {
            env,
            cache: CachePolicy::ReadWrite,
            threads,
            kept_caches: None,
        }
    }

    /// Keeps the listing caches it reads in memory for the next listing (a server), while each
    /// cache file stays as it was; a process that lists once would only pay for the copy.
    pub fn keeping_caches(mut self) -> Repo {
        self.kept_caches = Some(Default::default());
        self
    }

    /// This repo with another cache policy.
    pub fn with_cache(mut self, policy: CachePolicy) -> Repo {
        self.cache = policy;
        self
    }

    /// How many files a cold listing reads at once (at least one).
    pub fn with_threads(mut self, threads: usize) -> Repo {
        self.threads = threads.max(1);
        self
    }

    /// The environment paths resolve in.
    pub fn env(&self) -> &PathEnv {
        &self.env
    }

    /// Whether the listing cache is read and written.
    pub fn cache_policy(&self) -> CachePolicy {
        self.cache
    }

    /// How many threads a listing reads files on.
    pub fn threads(&self) -> usize {
        self.threads
    }

    pub(crate) fn kept_caches(&self) -> Option<&cache::LoadedCaches> {
        self.kept_caches.as_deref()
    }
}
