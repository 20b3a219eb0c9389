//! pi's `SessionManager.list` and `listAll`: which files, which rows, in which order.

mod dir;
mod parallel;

use std::path::{Path, PathBuf};

pub(crate) use dir::session_file_names;

use crate::repo::cache::{CacheEntry, CachedOutcome, DirCache};
use crate::repo::paths::join;
use crate::repo::scan::SkipReason;
use crate::repo::session_info::SessionInfo;
use crate::repo::stamp::FileStamp;
use crate::repo::{CachePolicy, Repo, RepoError};
use parallel::{ScanJob, scan_all};

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
        let mut plans: Vec<DirPlan> = Vec::new();
        let mut jobs: Vec<ScanJob> = Vec::new();
        for dir in dirs {
            let io_dir = self.env().io_path(dir);
            // A missing directory simply has no sessions (pi checks `existsSync` first).
            if !io_dir.exists() {
                continue;
            }
            let names = match session_file_names(&io_dir) {
                Ok(names) => names,
                Err(e) => {
                    warnings.push(unreadable(PathBuf::from(dir), &e));
                    continue;
                }
            };
            for name in &names.not_utf8 {
                warnings.push(ListWarning {
                    path: Path::new(dir).join(name),
                    reason: SkipReason::Unreadable {
                        error: "the file name is not UTF-8".to_string(),
                    },
                });
            }
            let cache = if use_cache {
                DirCache::load(&io_dir)
            } else {
                DirCache::default()
            };
            let mut files = Vec::with_capacity(names.sessions.len());
            for name in names.sessions {
                let path = join(&[dir, &name]);
                let io_file = io_dir.join(&name);
                let source = match std::fs::metadata(&io_file) {
                    Err(e) => Source::Failed(SkipReason::Unreadable {
                        error: e.to_string(),
                    }),
                    // pi would open a FIFO and wait forever, or read a device without end.
                    Ok(meta) if !meta.is_file() => Source::Failed(SkipReason::Unreadable {
                        error: if meta.is_dir() {
                            "it is a directory".to_string()
                        } else {
                            "it is not a regular file".to_string()
                        },
                    }),
                    Ok(meta) if cache.is_fresh(&name, &FileStamp::of(&meta)) => Source::Cache,
                    Ok(_) => {
                        jobs.push(ScanJob {
                            file: io_file,
                            listed_path: PathBuf::from(&path),
                        });
                        Source::Scan(jobs.len() - 1)
                    }
                };
                files.push(PlannedFile { name, path, source });
            }
            plans.push(DirPlan {
                io_dir,
                cache,
                files,
            });
        }

        let stats = ListStats {
            files_read: jobs.len(),
            from_cache: plans
                .iter()
                .flat_map(|p| &p.files)
                .filter(|f| matches!(f.source, Source::Cache))
                .count(),
        };
        let mut scans: Vec<Option<parallel::ScanDone>> = scan_all(jobs, self.threads())
            .into_iter()
            .map(Some)
            .collect();
        let mut sessions = Vec::new();
        for mut plan in plans {
            // Fresh results go into the cache first, so that it can be written before the rows
            // are moved out of it.
            let mut fresh: Vec<Option<Result<SessionInfo, SkipReason>>> = Vec::new();
            for file in &plan.files {
                let Source::Scan(job) = file.source else {
                    fresh.push(None);
                    continue;
                };
                let Some(done) = scans[job].take() else {
                    fresh.push(None);
                    continue;
                };
                let (outcome, cacheable) = match done.scan.outcome {
                    Ok(summary) => (Ok(summary.info), !summary.uses_local_time),
                    Err(reason) => {
                        let lasting = !matches!(reason, SkipReason::Unreadable { .. });
                        (Err(reason), lasting)
                    }
                };
                if use_cache && !cacheable {
                    // Whatever was stored for this name no longer describes the file.
                    plan.cache.remove(&file.name);
                }
                if use_cache
                    && cacheable
                    && let Some(stamp) = done.scan.stamp
                {
                    plan.cache.record(
                        &file.name,
                        CacheEntry {
                            stamp,
                            scanned_at_ns: done.started_ns,
                            outcome: match &outcome {
                                Ok(info) => CachedOutcome::Session(Box::new(info.clone())),
                                Err(reason) => CachedOutcome::Skipped(reason.clone()),
                            },
                        },
                    );
                }
                fresh.push(Some(outcome));
            }
            if use_cache {
                let names: std::collections::HashSet<&str> =
                    plan.files.iter().map(|f| f.name.as_str()).collect();
                plan.cache.retain_names(|name| names.contains(name));
                if plan.cache.is_changed()
                    && let Err(e) = plan.cache.store(&plan.io_dir)
                {
                    let dir = plan.io_dir.display();
                    tracing::debug!("listing cache for {dir} not written: {e}");
                }
            }
            for (file, fresh) in plan.files.into_iter().zip(fresh) {
                let outcome = match (file.source, fresh) {
                    (_, Some(outcome)) => outcome,
                    (Source::Failed(reason), None) => Err(reason),
                    (_, None) => match plan.cache.take(&file.name) {
                        Some(CachedOutcome::Session(info)) => Ok(*info),
                        Some(CachedOutcome::Skipped(reason)) => Err(reason),
                        None => Err(SkipReason::Unreadable {
                            error: "vanished from the listing cache".to_string(),
                        }),
                    },
                };
                match outcome {
                    Ok(mut info) => {
                        info.path = PathBuf::from(file.path);
                        sessions.push(info);
                    }
                    Err(reason) => warnings.push(ListWarning {
                        path: PathBuf::from(file.path),
                        reason,
                    }),
                }
            }
        }
        Listing {
            sessions,
            warnings,
            stats,
        }
    }
}

/// Where a file's row comes from.
enum Source {
    Cache,
    Scan(usize),
    Failed(SkipReason),
}

struct PlannedFile {
    name: String,
    path: String,
    source: Source,
}

struct DirPlan {
    /// The directory as the OS finds it.
    io_dir: PathBuf,
    cache: DirCache,
    files: Vec<PlannedFile>,
}

fn unreadable(path: PathBuf, e: &std::io::Error) -> ListWarning {
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
