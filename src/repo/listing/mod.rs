//! pi's `SessionManager.list` and `listAll`: which files, which rows, in which order.

mod collate;
mod dir;
mod parallel;
mod plan;

use std::path::PathBuf;

pub(crate) use collate::locale_compare;
pub(crate) use dir::session_file_names;

use crate::format::profile::{ListTies, ListingRule, Profile};
use crate::repo::paths::join;
use crate::repo::scan::{Pi16Mark, SkipReason};
use crate::repo::session_info::SessionInfo;
use crate::repo::stamp::FileStamp;
use crate::repo::{CachePolicy, Repo, RepoError};
use parallel::{ScanDone, scan_all};
use plan::DirPlan;

/// The sessions found, newest first, and the files that were left out with the reason.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Listing {
    /// The sessions, newest first.
    pub sessions: Vec<SessionInfo>,
    /// The files left out, each with its reason.
    pub warnings: Vec<ListWarning>,
    /// Listed files holding what only pi 1.6 writes, in a profile that reads them otherwise
    /// (none in pi-1.6): pi lists them as it lists any file, but opening them in this profile
    /// would not show what pi 1.6 shows.
    pub pi16_notes: Vec<Pi16Note>,
    /// What the listing read and what the cache saved.
    pub stats: ListStats,
}

/// A listed file with a feature only pi 1.6 writes, read in `profile`, which does not read it
/// as pi 1.6 does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pi16Note {
    /// The session file.
    pub path: PathBuf,
    /// The profile it was read in.
    pub profile: Profile,
    /// What pi 1.6 wrote in it.
    pub mark: Pi16Mark,
}

impl Pi16Note {
    /// The store's warning for the same lines (`line N: ..., use profile pi-1.6 ...`).
    pub fn message(&self) -> String {
        let mark = &self.mark;
        crate::format::entry::pi16_warning(
            self.profile,
            mark.feature.describe(),
            mark.line,
            mark.count,
        )
    }

    /// The profile to open the file in to see what pi 1.6 shows.
    pub fn use_profile(&self) -> Profile {
        Profile::reading_pi16_entries()
    }

    /// The notes of `files` (each with its marks) read in `profile`: none in pi-1.6.
    pub(crate) fn of_files(profile: Profile, files: Vec<(PathBuf, Vec<Pi16Mark>)>) -> Vec<Self> {
        if profile.rules().pi16_entries {
            return Vec::new();
        }
        files
            .into_iter()
            .flat_map(|(path, marks)| {
                marks.into_iter().map(move |mark| Pi16Note {
                    path: path.clone(),
                    profile,
                    mark,
                })
            })
            .collect()
    }
}

impl std::fmt::Display for Pi16Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.path.display(), self.message())
    }
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
    /// pi's `SessionManager.list(cwd, sessionDir)` (pi 0.82.1): the sessions of one project,
    /// from its default directory, or from `session_dir` used flat and filtered by header cwd.
    pub fn list(&self, cwd: &str, session_dir: Option<&str>) -> Result<Listing, RepoError> {
        self.list_as(Profile::PiCli, cwd, session_dir)
    }

    /// [`Repo::list`] as `profile`'s `SessionManager` does it: pi 1.6 orders sessions with equal
    /// activity times by file name, `localeCompare` descending, and tells the default directory
    /// from a custom one by resolved path. (The harness lists with [`Repo::harness_list`].)
    pub fn list_as(
        &self,
        profile: Profile,
        cwd: &str,
        session_dir: Option<&str>,
    ) -> Result<Listing, RepoError> {
        let dir = self.env().session_dir_as(profile, cwd, session_dir)?;
        let (mut listing, mut pi16_files) = self.list_dirs(&[dir.path]);
        if let Some(filter) = &dir.cwd_filter {
            listing
                .sessions
                .retain(|s| self.env().cwd_matches(&s.cwd, filter));
            let listed: std::collections::HashSet<&PathBuf> =
                listing.sessions.iter().map(|s| &s.path).collect();
            pi16_files.retain(|(path, _)| listed.contains(path));
        }
        listing.pi16_notes = Pi16Note::of_files(profile, pi16_files);
        if ties(profile) == ListTies::NameDescending {
            sort_by_name_descending(&mut listing.sessions);
        }
        sort_newest_first(&mut listing.sessions);
        Ok(listing)
    }

    /// pi's `SessionManager.listAll(sessionDir)` (pi 0.82.1): every project directory under the
    /// sessions root (top-level files there are ignored), or `session_dir` alone, unfiltered.
    pub fn list_all(&self, session_dir: Option<&str>) -> Result<Listing, RepoError> {
        self.list_all_as(Profile::PiCli, session_dir)
    }

    /// [`Repo::list_all`] as `profile`'s `SessionManager` does it. pi 1.6 also walks symlinked
    /// project directories, and over the sessions root orders equal activity times by file
    /// modification time, newest first, then by file name (`localeCompare` descending).
    pub fn list_all_as(
        &self,
        profile: Profile,
        session_dir: Option<&str>,
    ) -> Result<Listing, RepoError> {
        let follow_links = matches!(
            profile.rules().listing,
            ListingRule::SessionInfo {
                follow_links: true,
                ..
            }
        );
        let (dirs, over_root) = match session_dir.filter(|d| !d.is_empty()) {
            Some(explicit) => (vec![self.env().normalize_path(explicit)?], false),
            None => {
                let root = self.env().sessions_root();
                let io_root = self.env().io_path(&root);
                if !io_root.exists() {
                    return Ok(Listing::default());
                }
                match dir::project_dir_names(&io_root, follow_links) {
                    Ok(names) => {
                        let dirs = names.iter().map(|name| join(&[&root, name])).collect();
                        (dirs, true)
                    }
                    Err(e) => {
                        return Ok(Listing {
                            warnings: vec![unreadable(PathBuf::from(root), &e)],
                            ..Listing::default()
                        });
                    }
                }
            }
        };
        let (mut listing, pi16_files) = self.list_dirs(&dirs);
        listing.pi16_notes = Pi16Note::of_files(profile, pi16_files);
        if ties(profile) == ListTies::NameDescending {
            if over_root {
                self.sort_by_mtime_then_name(&mut listing.sessions);
            } else {
                sort_by_name_descending(&mut listing.sessions);
            }
        }
        sort_newest_first(&mut listing.sessions);
        Ok(listing)
    }

    /// pi 1.6's candidate order in `listAll()`: file `mtimeMs` descending (a file that cannot
    /// be `stat`ed last), then base name `localeCompare` descending.
    fn sort_by_mtime_then_name(&self, sessions: &mut Vec<SessionInfo>) {
        let mut keyed: Vec<(f64, SessionInfo)> = std::mem::take(sessions)
            .into_iter()
            .map(|info| {
                let spelled = info.path.to_string_lossy();
                let mtime = std::fs::metadata(self.env().io_path(&spelled))
                    .map_or(f64::NEG_INFINITY, |m| FileStamp::of(&m).mtime_ms_exact());
                (mtime, info)
            })
            .collect();
        keyed.sort_by(|(ma, a), (mb, b)| {
            mb.total_cmp(ma)
                .then_with(|| locale_compare(&base_name(b), &base_name(a)))
        });
        sessions.extend(keyed.into_iter().map(|(_, info)| info));
    }

    /// The rows of every session file in `dirs`, in directory then name order (unsorted), and
    /// the listed files holding what only pi 1.6 writes.
    pub(crate) fn list_dirs(&self, dirs: &[String]) -> (Listing, Vec<(PathBuf, Vec<Pi16Mark>)>) {
        let use_cache = self.cache_policy() == CachePolicy::ReadWrite;
        let mut warnings = Vec::new();
        let mut jobs = Vec::new();
        let plans: Vec<DirPlan> = dirs
            .iter()
            .filter_map(|dir| {
                let cache = use_cache.then(|| self.kept_caches());
                DirPlan::new(self.env(), dir, cache, &mut jobs, &mut warnings)
            })
            .collect();
        let stats = ListStats {
            files_read: jobs.len(),
            from_cache: plans.iter().map(DirPlan::cached_count).sum(),
        };
        let mut scans: Vec<Option<ScanDone>> = scan_all(jobs, self.threads(), use_cache)
            .into_iter()
            .map(Some)
            .collect();
        let mut sessions = Vec::new();
        let mut pi16_files = Vec::new();
        for plan in plans {
            plan.finish(
                &mut scans,
                use_cache,
                &mut sessions,
                &mut warnings,
                &mut pi16_files,
            );
        }
        let listing = Listing {
            sessions,
            warnings,
            pi16_notes: Vec::new(),
            stats,
        };
        (listing, pi16_files)
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

/// pi 1.6's `files.sort((a, b) => b.localeCompare(a))` (stable, so names the collation finds
/// equal keep the byte order they were read in).
fn sort_by_name_descending(sessions: &mut [SessionInfo]) {
    sessions.sort_by(|a, b| locale_compare(&base_name(b), &base_name(a)));
}

fn base_name(info: &SessionInfo) -> std::borrow::Cow<'_, str> {
    info.path
        .file_name()
        .map_or(std::borrow::Cow::Borrowed(""), |n| n.to_string_lossy())
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

/// How the profile's listing orders equal activity times (pi 0.82.1's read order for the
/// harness, whose own listing is not made here).
fn ties(profile: Profile) -> ListTies {
    match profile.rules().listing {
        ListingRule::SessionInfo { ties, .. } => ties,
        ListingRule::HarnessHeaders => ListTies::ReadOrder,
    }
}
