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

/// pi's agent directory: `$PI_CODING_AGENT_DIR` (tilde-expanded), else `~/.pi/agent`.
pub fn agent_dir() -> PathBuf {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"));
    match std::env::var("PI_CODING_AGENT_DIR") {
        Ok(dir) if dir == "~" => home,
        Ok(dir) if dir.starts_with("~/") => home.join(&dir[2..]),
        Ok(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => home.join(".pi").join("agent"),
    }
}

/// `<agent dir>/sessions`.
pub fn default_sessions_root() -> PathBuf {
    agent_dir().join("sessions")
}

/// The SessionManager's directory name for a cwd: the raw encoding of the resolved cwd.
pub fn encode_cwd_resolved(cwd: &str) -> String {
    encode_cwd_raw(&resolve_path(cwd))
}
