//! A file's identity and version as `stat` reports it: what the listing cache is keyed by.

use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;

/// Size, change times and inode of a file. Any write changes the size or a time; replacing
/// the file changes the inode; `touch -d` can put the mtime back, but not the ctime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileStamp {
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) ctime_ns: i64,
    pub(crate) ino: u64,
    pub(crate) dev: u64,
}

impl FileStamp {
    pub(crate) fn of(meta: &Metadata) -> FileStamp {
        FileStamp {
            size: meta.size(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            ino: meta.ino(),
            dev: meta.dev(),
        }
    }

    /// `stats.mtimeMs` in Node: `sec * 1000 + nsec / 1e6`, not rounded (pi 1.6 sorts by it).
    pub(crate) fn mtime_ms_exact(&self) -> f64 {
        let sec = self.mtime_ns.div_euclid(1_000_000_000);
        let nsec = self.mtime_ns.rem_euclid(1_000_000_000);
        sec as f64 * 1000.0 + nsec as f64 / 1e6
    }

    /// `stats.mtime.getTime()` in Node: `sec * 1000 + nsec / 1e6`, rounded half up.
    pub(crate) fn mtime_ms(&self) -> f64 {
        let sec = self.mtime_ns.div_euclid(1_000_000_000);
        let nsec = self.mtime_ns.rem_euclid(1_000_000_000);
        let ms = sec as f64 * 1000.0 + nsec as f64 / 1e6;
        // JavaScript's Math.round: ties go toward +infinity.
        let floor = ms.floor();
        if ms - floor >= 0.5 {
            floor + 1.0
        } else {
            floor
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mtime_rounds_as_node_does() {
        let stamp = |mtime_ns| FileStamp {
            size: 0,
            mtime_ns,
            ctime_ns: 0,
            ino: 0,
            dev: 0,
        };
        // Node 20: 1767225600.9996 s -> 1767225601000 ms; .1234 s -> ...123 ms.
        assert_eq!(
            stamp(1_767_225_600_999_600_000).mtime_ms(),
            1_767_225_601_000.0
        );
        assert_eq!(
            stamp(1_767_225_600_123_400_000).mtime_ms(),
            1_767_225_600_123.0
        );
        assert_eq!(stamp(-1_500_000).mtime_ms(), -1.0);
    }
}
