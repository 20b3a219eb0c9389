//! Reading many files at once on plain threads: each worker takes the next file from a shared
//! counter, so one huge file does not hold up the others.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::repo::cache::now_ns;
use crate::repo::scan::{Scan, scan_session_file};

/// One file to read: where it is, and how the listing names it.
pub(crate) struct ScanJob {
    pub(crate) file: PathBuf,
    pub(crate) listed_path: PathBuf,
}

/// A finished read, with the wall-clock time taken just before the file was opened.
pub(crate) struct ScanDone {
    pub(crate) scan: Scan,
    pub(crate) started_ns: i64,
}

/// Reads every job on up to `threads` threads; results come back in job order. With
/// `literals`, each row's message text is also escaped into its JSON literal there (the cache
/// stores it), rather than one row after another once all are read.
pub(crate) fn scan_all(jobs: Vec<ScanJob>, threads: usize, literals: bool) -> Vec<ScanDone> {
    let run = |job: &ScanJob| {
        let started_ns = now_ns();
        let scan = scan_session_file(&job.file, job.listed_path.clone());
        if literals && let Ok(summary) = &scan.outcome {
            summary.info.all_messages_text.json();
        }
        ScanDone { scan, started_ns }
    };
    let threads = threads.clamp(1, jobs.len().max(1));
    if threads == 1 {
        return jobs.iter().map(run).collect();
    }
    let next = AtomicUsize::new(0);
    let finished: Vec<(usize, ScanDone)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(index) else { break };
                        done.push((index, run(job)));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    let mut slots: Vec<Option<ScanDone>> = jobs.iter().map(|_| None).collect();
    for (index, done) in finished {
        slots[index] = Some(done);
    }
    // Reading does not panic; should a worker die anyway, its files are read here instead of
    // going missing.
    slots
        .into_iter()
        .zip(&jobs)
        .map(|(slot, job)| slot.unwrap_or_else(|| run(job)))
        .collect()
}
