//! pi's `SessionManager.list` and `listAll`: which files, which rows, in which order.

mod dir;
mod parallel;
mod plan;

use std::path::PathBuf;

pub(crate) use dir::session_file_names;

use crate::repo::paths::join;
use crate::repo::scan::SkipReason;
use crate::repo::session_info::SessionInfo;
use crate::repo::{CachePolicy, Repo, RepoError};
use parallel::{ScanDone, scan_all};
use plan::DirPlan;

/// The sessions found, newest first, and the files that were left out with the reason.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Listing {
    pub sessions: Vec<SessionInfo>,
    pub warnings: Vec<ListWarning>,
    pub stats: ListStats,
}

/// How the listing got its rows: files read now, and rows taken from the cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListStats {
    pub files_read: usize,
    pub from_cache: usize,
}

/// A file (or directory) the listing could not include.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListWarning {
    pub path: PathBuf,
    pub reason: SkipReason,
}

impl std::fmt::Display for ListWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.path.display(), self.reason)
    }
}

impl Repo {
    /// pi's `SessionManager.list(cwd, sessionDir)`: the sessions of one project, from its
    /// default directory, or from `session_dir` used flat and filtered by header cwd.
    pub fn list(&self, cwd: &str, session_dir: Option<&str>) -> Result<Listing, RepoError> {
        let dir = self.env().session_dir(cwd, session_dir)?;
        let mut listing = self.list_dirs(&[dir.path]);
        if let Some(filter) = &dir.cwd_filter {
            listing
                .sessions
                .retain(|s| self.env().cwd_matches(&s.cwd, filter));
        }
        sort_newest_first(&mut listing.sessions);
        Ok(listing)
    }

    /// pi's `SessionManager.listAll(sessionDir)`: every project directory under the sessions
    /// root (top-level files there are ignored), or `session_dir` alone, unfiltered.
    pub fn list_all(&self, session_dir: Option<&str>) -> Result<Listing, RepoError> {
        let dirs = match session_dir.filter(|d| !d.is_empty()) {
            Some(explicit) => vec![self.env().normalize_path(explicit)?],
            None => {
                let root = self.env().sessions_root();
                let io_root = self.env().io_path(&root);
                if !io_root.exists() {
                    return Ok(Listing::default());
                }
                match dir::project_dir_names(&io_root) {
                    Ok(names) => names.iter().map(|name| join(&[&root, name])).collect(),
                    Err(e) => {
                        return Ok(Listing {
                            warnings: vec![unreadable(PathBuf::from(root), &e)],
                            ..Listing::default()
                        });
                    }
                }
            }
        };
        let mut listing = self.list_dirs(&dirs);
        sort_newest_first(&mut listing.sessions);
        Ok(listing)
    }

    /// The rows of every session file in `dirs`, in directory then name order (unsorted).
    fn list_dirs(&self, dirs: &[String]) -> Listing {
        let use_cache = self.cache_policy() == CachePolicy::ReadWrite;
        let mut warnings = Vec::new();
        let mut jobs = Vec::new();
        let plans: Vec<DirPlan> = dirs
            .iter()
            .filter_map(|dir| DirPlan::new(self.env(), dir, use_cache, &mut jobs, &mut warnings))
            .collect();
        let stats = ListStats {
            files_read: jobs.len(),
            from_cache: plans.iter().map(DirPlan::cached_count).sum(),
        };
        let mut scans: Vec<Option<ScanDone>> = scan_all(jobs, self.threads())
            .into_iter()
            .map(Some)
            .collect();
        let mut sessions = Vec::new();
        for plan in plans {
            plan.finish(&mut scans, use_cache, &mut sessions, &mut warnings);
        }
        Listing {
            sessions,
            warnings,
            stats,
        }
    }
}

pub(crate) fn unreadable(path: PathBuf, e: &std::io::Error) -> ListWarning {
    ListWarning {
        path,
        reason: SkipReason::Unreadable {
            error: e.to_string(),
        },
    }
}

/// pi's `sort((a, b) => b.modified - a.modified)`: newest first, stable. pi compares invalid
/// dates as equal to everything, which is no order at all; here they go last.
pub(crate) fn sort_newest_first(sessions: &mut [SessionInfo]) {
    sessions.sort_by(|a, b| match (a.modified.millis(), b.modified.millis()) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
}
