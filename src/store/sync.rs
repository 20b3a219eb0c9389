//! Making names durable: a created or renamed file survives a crash only once the directory
//! holding its name is synced too (fsync of the file covers its bytes, not its entry).

use std::fs::File;
use std::path::Path;

use super::error::{StoreError, StoreResult};

/// Syncs the directory `dir` itself (its list of names).
pub fn fsync_dir(dir: &Path) -> StoreResult<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StoreError::io(dir, "cannot sync the directory", e))
}

/// Syncs the directory holding `path`, so a file just created or renamed there stays.
pub fn fsync_parent(path: &Path) -> StoreResult<()> {
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) => fsync_dir(dir),
        None => fsync_dir(Path::new(".")),
    }
}

/// `create_dir_all`, then syncs every directory it created and the one above them, so the
/// new directories survive a crash.
pub fn create_dir_all_durable(dir: &Path) -> StoreResult<()> {
    let mut missing = Vec::new();
    let mut cursor = Some(dir);
    while let Some(current) = cursor {
        if current.as_os_str().is_empty() || current.exists() {
            break;
        }
        missing.push(current.to_path_buf());
        cursor = current.parent();
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| StoreError::io(dir, "cannot create the sessions directory", e))?;
    for created in &missing {
        fsync_parent(created)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_and_syncs_nested_directories() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b/c");
        create_dir_all_durable(&dir).unwrap();
        assert!(dir.is_dir());
        create_dir_all_durable(&dir).unwrap();
        fsync_parent(&dir.join("x.jsonl")).unwrap();
    }
}
