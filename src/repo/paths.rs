//! Paths pi derives from a cwd. (Interim: the full set lands with the sessions-directory work.)

use std::path::{Component, Path, PathBuf};

/// The harness's directory name for a cwd: the raw string, one leading separator dropped,
/// `/`, `\` and `:` replaced by `-`, wrapped in `--`.
pub fn encode_cwd_raw(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    format!("--{}--", trimmed.replace(['/', '\\', ':'], "-"))
}

/// Node's `path.resolve(cwd)` for the SessionManager's header cwd: absolute, `.` and `..`
/// collapsed, no trailing separator.
pub fn resolve_path(cwd: &str) -> String {
    let base = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let joined = base.join(Path::new(cwd));
    let mut out = PathBuf::from("/");
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(p) => out.push(p),
            _ => {}
        }
    }
    out.to_string_lossy().into_owned()
}
