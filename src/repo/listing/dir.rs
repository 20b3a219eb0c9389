//! The session files of one directory, named and ordered as Node's `readdir` gives them.

use std::fs;
use std::io;
use std::path::Path;

use crate::repo::paths::is_session_file_name;

/// The `*.jsonl` names in `dir`, sorted by bytes (libuv sorts `scandir` results with `strcmp`,
/// and pi keeps that order for sessions with equal times). Names that are not UTF-8 are
/// returned apart: Node would mangle them into paths that do not open.
pub(crate) struct DirNames {
    pub(crate) sessions: Vec<String>,
    pub(crate) not_utf8: Vec<std::ffi::OsString>,
}

pub(crate) fn session_file_names(dir: &Path) -> io::Result<DirNames> {
    let mut sessions = Vec::new();
    let mut not_utf8 = Vec::new();
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name();
        match name.to_str() {
            Some(text) if is_session_file_name(text) => sessions.push(text.to_string()),
            Some(_) => {}
            None if name.as_encoded_bytes().ends_with(b".jsonl") => not_utf8.push(name),
            None => {}
        }
    }
    sessions.sort_unstable();
    Ok(DirNames { sessions, not_utf8 })
}

/// The project directories of the sessions root, sorted by bytes. pi 0.82.1 takes
/// `Dirent.isDirectory()` (symlinks are not followed); pi 1.6 also takes symbolic links
/// (`follow_links`), whose targets are then read as directories (a link to a file lists nothing).
pub(crate) fn project_dir_names(root: &Path, follow_links: bool) -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in fs::read_dir(root)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if (kind.is_dir() || (follow_links && kind.is_symlink()))
            && let Some(name) = entry.file_name().to_str()
        {
            names.push(name.to_string());
        }
    }
    names.sort_unstable();
    Ok(names)
}
