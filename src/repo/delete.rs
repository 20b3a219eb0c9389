//! Deleting a session file, and its row in the listing cache with it (the row holds the
//! session's text, which must not outlive the file).

use std::fs;
use std::io;
use std::path::Path;

use crate::repo::cache::DirCache;
use crate::repo::paths::is_session_file_name;
use crate::repo::{Repo, RepoError};
use crate::store::safe_file::{self, Access};
use crate::store::try_write_lock;

impl Repo {
    /// Deletes the session file at `path` (a relative path is taken from the environment's
    /// current directory, like the paths a listing returns). `Ok(true)` when it was deleted,
    /// `Ok(false)` when it was already gone. Only `*.jsonl` files are deleted: anything else
    /// is refused, so that a wrong path cannot remove an unrelated file.
    pub fn delete_session(&self, path: &Path) -> Result<bool, RepoError> {
        let path = &if path.is_absolute() {
            path.to_path_buf()
        } else {
            Path::new(self.env().process_cwd()).join(path)
        };
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| is_session_file_name(n))
            .ok_or_else(|| RepoError::NotASessionFile {
                path: path.to_path_buf(),
            })?;
        // Take the lock a writer holds (and hold it while removing), so that a session another
        // process (or this one) is appending to is never removed under it.
        let _held = match safe_file::open_regular(path, Access::Read, true) {
            Ok(file) => match try_write_lock(&file) {
                Ok(true) => Some(file),
                Ok(false) => {
                    return Err(RepoError::Locked {
                        path: path.to_path_buf(),
                    });
                }
                Err(e) => return Err(RepoError::io("lock", path, e)),
            },
            // Gone, or not a regular file (nothing can be writing to it as a session).
            Err(_) => None,
        };
        let removed = match fs::remove_file(path) {
            Ok(()) => true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(RepoError::io("delete", path, e)),
        };
        let dir = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let mut cache = DirCache::load(dir);
        cache.remove(name);
        if cache.is_changed() {
            cache.store(dir).map_err(|e| {
                RepoError::io("drop the deleted session from the listing cache in", dir, e)
            })?;
        }
        Ok(removed)
    }
}
