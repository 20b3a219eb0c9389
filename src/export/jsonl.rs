//! The JSONL export: the branch to one entry as a new session file of the profile, made by the
//! fork machinery pi's `/clone` uses (`createBranchedSession`: the path with labels re-created,
//! a new id, `parentSession` naming the source), so pi opens it to the same context.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::format::ids::IdSource;
use crate::repo::{PathEnv, fork_target};
use crate::store::{ForkPosition, NewSession, Session, SessionOptions, StoreResult};

use super::output::{write_error, write_replacing};

/// Writes the branch ending at `leaf_id` to `out`, else beside the source under the name pi
/// gives a new session; returns where and how many bytes.
pub(crate) fn write_branch(
    env: &PathEnv,
    source: &mut Session,
    leaf_id: &str,
    out: Option<&Path>,
    ids: Arc<IdSource>,
) -> StoreResult<(PathBuf, u64)> {
    // pi's checks for a clone at `leaf_id` (the entry exists).
    source.fork_selection(leaf_id, ForkPosition::At)?;
    let dir = out
        .and_then(Path::parent)
        .map(|d| match d.as_os_str().is_empty() {
            true => Path::new("."),
            false => d,
        });
    let new = fork_target(env, source, Some(leaf_id), dir, &ids)?;
    let target = match (out, &new.path) {
        (Some(out), _) => out.to_path_buf(),
        (None, Some(path)) => path.clone(),
        (None, None) => {
            return Err(crate::store::StoreError::new(
                crate::store::ErrorKind::InvalidArgument,
                "'path': a session held in memory needs a path to export to",
            ));
        }
    };
    let entries = source.branched_entries(leaf_id)?;
    let options = SessionOptions {
        profile: source.profile(),
        ids,
        ..SessionOptions::default()
    };
    // Made in memory, then written whole through the export's own writer (a temporary beside
    // the target, renamed over it), header first, each entry as the fork wrote it.
    let branched =
        Session::from_entries(NewSession { path: None, ..new }, &entries, options, false)?;
    let bytes = write_replacing(&target, |w| {
        let mut line = branched.header().stringify();
        line.push('\n');
        w.write_all(line.as_bytes()).map_err(write_error)?;
        for position in 0..branched.len() as u32 {
            let text = branched.line_text(position)?;
            w.write_all(text.as_bytes()).map_err(write_error)?;
            w.write_all(b"\n").map_err(write_error)?;
        }
        Ok(())
    })?;
    Ok((target, bytes))
}
