//! `session/export` and `pi-session export`: where an export goes is decided here, the page,
//! document or branch itself is written by `crate::export`.

use std::path::{Path, PathBuf};

use crate::export::{ExportFormat, Exported};
use crate::store::{ErrorKind, Session, StoreError};

use super::{OpError, Scope};

#[derive(Debug, Clone)]
pub(crate) struct ExportInput {
    pub(crate) format: ExportFormat,
    /// The entry to export at (default: the session's leaf).
    pub(crate) leaf: Option<String>,
    /// The output file (default: named after the session, in `default_dir`).
    pub(crate) out: Option<PathBuf>,
    /// Where a default-named export goes; `None`: beside the session file (the server's rule,
    /// so an in-memory session must name its output).
    pub(crate) default_dir: Option<PathBuf>,
}

pub(crate) fn export(
    scope: &Scope,
    session: &mut Session,
    input: ExportInput,
) -> Result<Exported, OpError> {
    let beside = session.path().and_then(Path::parent).map(Path::to_path_buf);
    let default_dir = match (&input.out, input.default_dir.or(beside), input.format) {
        (None, None, ExportFormat::Html | ExportFormat::Md) => {
            return Err(StoreError::new(
                ErrorKind::InvalidArgument,
                "'path': a session held in memory needs a path to export to",
            )
            .into());
        }
        (_, dir, _) => dir.unwrap_or_default(),
    };
    Ok(crate::export::export(
        scope.repo.env(),
        session,
        input.format,
        input.leaf.as_deref(),
        input.out.as_deref(),
        &default_dir,
        scope.ids.clone(),
    )?)
}
