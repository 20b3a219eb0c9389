//! One directory of a listing: which rows come from the cache and which files must be read,
//! then, once they are read, the cache update and the rows in pi's order.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::parallel::{ScanDone, ScanJob};
use super::{ListWarning, dir::session_file_names, unreadable};
use crate::repo::cache::{CacheEntry, CachedOutcome, DirCache, LoadedCaches};
use crate::repo::paths::{PathEnv, join};
use crate::repo::scan::{Pi16Mark, SkipReason};
use crate::repo::session_info::SessionInfo;
use crate::repo::stamp::FileStamp;

/// Where a file's row comes from.
enum Source {
    Cache,
    /// To be read: the index of its job.
    Scan(usize),
    Known(Box<Result<(SessionInfo, Vec<Pi16Mark>), SkipReason>>),
}

/// What becomes of a file just read: its outcome is remembered under the stamp it was read
/// at, or only reported.
enum Fate {
    Cached(FileStamp, CachedOutcome),
    Known(Box<Result<(SessionInfo, Vec<Pi16Mark>), SkipReason>>),
}

struct PlannedFile {
    name: String,
    /// As pi spells it: `path.join(dir, name)`.
    path: String,
    source: Source,
}

pub(super) struct DirPlan {
    /// The directory as the OS finds it.
    io_dir: PathBuf,
    cache: DirCache,
    files: Vec<PlannedFile>,
}

impl DirPlan {
    /// Plans `dir` (spelled as the caller spelled it): files needing a read become `jobs`.
    /// `None` for a missing directory (no sessions, as in pi) or an unreadable one (reported).
    /// `cache` is `None` when the listing cache is off, else the caches kept in memory, if any.
    pub(super) fn new(
        env: &PathEnv,
        dir: &str,
        cache: Option<Option<&LoadedCaches>>,
        jobs: &mut Vec<ScanJob>,
        warnings: &mut Vec<ListWarning>,
    ) -> Option<DirPlan> {
        let io_dir = env.io_path(dir);
        if !io_dir.exists() {
            return None;
        }
        let names = match session_file_names(&io_dir) {
            Ok(names) => names,
            Err(e) => {
                warnings.push(unreadable(PathBuf::from(dir), &e));
                return None;
            }
        };
        for name in &names.not_utf8 {
            warnings.push(ListWarning {
                path: Path::new(dir).join(name),
                reason: unreadable_reason("the file name is not UTF-8"),
            });
        }
        // The files are looked at while the cache is read: both take milliseconds in a
        // directory of thousands of sessions.
        let (cache, metadata) = std::thread::scope(|scope| {
            let loading = cache.filter(|_| !names.sessions.is_empty()).map(|kept| {
                let io_dir = &io_dir;
                scope.spawn(move || DirCache::load_kept(io_dir, kept))
            });
            let metadata: Vec<_> = names
                .sessions
                .iter()
                .map(|name| std::fs::metadata(io_dir.join(name)))
                .collect();
            // A panic while reading the cache costs only the cache.
            let cache = loading.map_or_else(DirCache::default, |loading| {
                loading.join().unwrap_or_default()
            });
            (cache, metadata)
        });
        let files = names
            .sessions
            .into_iter()
            .zip(metadata)
            .map(|(name, metadata)| {
                let path = join(&[dir, &name]);
                let io_file = io_dir.join(&name);
                let source = match metadata {
                    Err(e) => Source::Known(Box::new(Err(unreadable_reason(&e.to_string())))),
                    // pi would open a FIFO and wait forever, or read a device without end.
                    Ok(meta) if meta.is_dir() => {
                        Source::Known(Box::new(Err(unreadable_reason("it is a directory"))))
                    }
                    Ok(meta) if !meta.is_file() => {
                        Source::Known(Box::new(Err(unreadable_reason("it is not a regular file"))))
                    }
                    Ok(meta) if cache.is_fresh(&name, &FileStamp::of(&meta)) => Source::Cache,
                    Ok(_) => {
                        jobs.push(ScanJob {
                            file: io_file,
                            listed_path: PathBuf::from(&path),
                        });
                        Source::Scan(jobs.len() - 1)
                    }
                };
                PlannedFile { name, path, source }
            })
            .collect();
        Some(DirPlan {
            io_dir,
            cache,
            files,
        })
    }

    pub(super) fn cached_count(&self) -> usize {
        self.files
            .iter()
            .filter(|f| matches!(f.source, Source::Cache))
            .count()
    }

    /// Takes this directory's read results, updates its cache, and appends its rows,
    /// warnings and files holding what only pi 1.6 writes, in file name order.
    pub(super) fn finish(
        mut self,
        scans: &mut [Option<ScanDone>],
        use_cache: bool,
        sessions: &mut Vec<SessionInfo>,
        warnings: &mut Vec<ListWarning>,
        pi16_files: &mut Vec<(PathBuf, Vec<Pi16Mark>)>,
    ) {
        for file in &mut self.files {
            let Source::Scan(job) = file.source else {
                continue;
            };
            let Some(done) = scans[job].take() else {
                continue;
            };
            let stamp = done.scan.stamp.filter(|_| use_cache);
            // A row worth keeping moves into the cache, to be taken out with the cached rows
            // once the cache is written (not copied: its texts are megabytes). Dates read as
            // local time depend on the time zone, and an unreadable file may be readable next
            // time: neither is remembered.
            let fate = match (done.scan.outcome, stamp) {
                (Ok(summary), Some(stamp)) if !summary.uses_local_time => Fate::Cached(
                    stamp,
                    CachedOutcome::Session(Box::new(summary.info), summary.pi16),
                ),
                (Err(reason), Some(stamp)) if !matches!(reason, SkipReason::Unreadable { .. }) => {
                    Fate::Cached(stamp, CachedOutcome::Skipped(reason))
                }
                (Ok(summary), _) => Fate::Known(Box::new(Ok((summary.info, summary.pi16)))),
                (Err(reason), _) => Fate::Known(Box::new(Err(reason))),
            };
            file.source = match fate {
                Fate::Known(known) => {
                    // Whatever was stored for this name no longer describes the file.
                    self.cache.remove(&file.name);
                    Source::Known(known)
                }
                Fate::Cached(stamp, outcome) => {
                    self.cache.record(
                        &file.name,
                        CacheEntry {
                            stamp,
                            scanned_at_ns: done.started_ns,
                            outcome,
                        },
                    );
                    Source::Cache
                }
            };
        }
        if use_cache {
            let names: HashSet<&str> = self.files.iter().map(|f| f.name.as_str()).collect();
            self.cache.retain_names(|name| names.contains(name));
            if self.cache.is_changed()
                && let Err(e) = self.cache.store(&self.io_dir)
            {
                let dir = self.io_dir.display();
                tracing::debug!("listing cache for {dir} not written: {e}");
            }
        }
        for file in self.files {
            // Rows are moved out of the cache only now, after it has been written.
            let outcome = match file.source {
                Source::Known(outcome) => *outcome,
                Source::Cache => match self.cache.take(&file.name) {
                    Some(CachedOutcome::Session(info, marks)) => Ok((*info, marks)),
                    Some(CachedOutcome::Skipped(reason)) => Err(reason),
                    None => Err(unreadable_reason("its cached row went missing")),
                },
                Source::Scan(_) => Err(unreadable_reason("it was not read")),
            };
            match outcome {
                Ok((mut info, marks)) => {
                    info.path = PathBuf::from(file.path);
                    if !marks.is_empty() {
                        pi16_files.push((info.path.clone(), marks));
                    }
                    sessions.push(info);
                }
                Err(reason) => warnings.push(ListWarning {
                    path: PathBuf::from(file.path),
                    reason,
                }),
            }
        }
    }
}

fn unreadable_reason(error: &str) -> SkipReason {
    SkipReason::Unreadable {
        error: error.to_string(),
    }
}
