//! The session files of the store: every `*.jsonl` of every project directory under the
//! sessions root, or of one project's directory.

use std::path::{Path, PathBuf};

use crate::repo::paths::is_session_file_name;

/// A session file and the project directory it is in (its name, as ccusage groups by it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreFile {
    pub path: PathBuf,
    /// `None` in a flat sessions directory (`--session-dir`): the project is then the
    /// directory name pi would give the header's cwd, so `--cwd` means the same everywhere.
    pub project: Option<String>,
}

/// How the store's session files are laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// A sessions root: `<root>/<project>/*.jsonl` (pi's default).
    Root(PathBuf),
    /// One flat directory of sessions of any cwd (pi's `--session-dir`,
    /// `$PI_CODING_AGENT_SESSION_DIR`, settings' `sessionDir`), as `listAll(sessionDir)` reads it.
    Flat(PathBuf),
}

/// The session files of `layout`, sorted by path.
pub fn layout_files(
    layout: &Layout,
    mut unreadable: impl FnMut(&Path, std::io::Error),
) -> Vec<StoreFile> {
    match layout {
        Layout::Root(root) => store_files(root, unreadable),
        Layout::Flat(dir) => {
            let mut files = Vec::new();
            match std::fs::read_dir(dir) {
                Ok(names) => {
                    for file in names.flatten() {
                        let name = file.file_name();
                        let regular = file.file_type().is_ok_and(|t| t.is_file());
                        if regular && name.to_str().is_some_and(is_session_file_name) {
                            files.push(StoreFile {
                                path: file.path(),
                                project: None,
                            });
                        }
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => unreadable(dir, e),
            }
            files.sort_by(|a, b| a.path.cmp(&b.path));
            files
        }
    }
}

/// The session files under `root`, sorted by path. Directories that cannot be read are
/// reported through `unreadable` and skipped, as the listing skips them.
pub(crate) fn store_files(
    root: &Path,
    mut unreadable: impl FnMut(&Path, std::io::Error),
) -> Vec<StoreFile> {
    let mut files = Vec::new();
    let projects = match std::fs::read_dir(root) {
        Ok(dir) => dir,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return files,
        Err(e) => {
            unreadable(root, e);
            return files;
        }
    };
    for entry in projects.flatten() {
        // Links are not followed (pi 0.82.1 lists real directories only; no loops).
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Some(project) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let dir = entry.path();
        match std::fs::read_dir(&dir) {
            Ok(names) => {
                for file in names.flatten() {
                    let name = file.file_name();
                    let regular = file.file_type().is_ok_and(|t| t.is_file());
                    if regular && name.to_str().is_some_and(is_session_file_name) {
                        files.push(StoreFile {
                            path: file.path(),
                            project: Some(project.clone()),
                        });
                    }
                }
            }
            Err(e) => unreadable(&dir, e),
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}
