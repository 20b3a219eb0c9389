//! Making names durable: a created or renamed file survives a crash only once the directory
//! holding its name is synced too (fsync of the file covers its bytes, not its entry).

use std::path::Path;

use super::error::{StoreError, StoreResult};
use super::safe_file;

/// Syncs the directory holding `path`, so a file just created or renamed there stays.
pub fn fsync_parent(path: &Path) -> StoreResult<()> {
    safe_file::sync_dir_of(path)
        .map_err(|e| StoreError::io(path, "cannot sync the directory of", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syncs_directories_and_refuses_missing_ones() {
        let root = tempfile::tempdir().unwrap();
        fsync_parent(&root.path().join("x.jsonl")).unwrap();
        let missing = fsync_parent(&root.path().join("gone/x.jsonl")).unwrap_err();
        assert!(missing.message.contains("gone"), "{}", missing.message);
    }
}
