//! A session for people and other programs: one self-contained HTML page (the whole tree beside
//! the conversation along one path), a Markdown document of one path, or one branch as a new
//! session file of the profile. The command line (`pi-session export`) and the sidecar
//! (`session/export`) only call [`export`]; everything is read through the store's own reads
//! (tree rows, paths, entries as their own bytes) and written by [`output`].

mod assets;
mod html;
mod jsonl;
mod markdown;
mod output;
mod packed;
mod skeleton;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::format::ids::IdSource;
use crate::repo::PathEnv;
use crate::store::{ErrorKind, Leaf, Session, StoreError, StoreResult};

/// What an export writes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ExportFormat {
    /// One self-contained page: the tree and the conversation, nothing fetched.
    Html,
    /// The selected path as a readable Markdown document.
    Md,
    /// The branch to the leaf as a new session file of the profile (`parentSession` set).
    Jsonl,
}

impl ExportFormat {
    /// Every format, as `initialize`'s `capabilities.exportFormats` lists them.
    pub(crate) const ALL: [ExportFormat; 3] =
        [ExportFormat::Html, ExportFormat::Md, ExportFormat::Jsonl];

    pub(crate) fn name(self) -> &'static str {
        match self {
            ExportFormat::Html => "html",
            ExportFormat::Md => "md",
            ExportFormat::Jsonl => "jsonl",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<ExportFormat> {
        Self::ALL.into_iter().find(|f| f.name() == text)
    }
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Exported {
    pub(crate) path: PathBuf,
    pub(crate) bytes: u64,
    /// The entry the export shows or ends at (`None`: the session has none there).
    pub(crate) leaf_id: Option<String>,
}

/// Exports `session` at `leaf` (an entry id; `None`: the session's leaf) as `format` to `out`
/// (else the default place: HTML and Markdown as `pi-session-<session file name>.html|md`, pi's
/// `--export` name, in `default_dir`; JSONL as a new session file named as pi names it, beside
/// the source, as pi's `/clone` places it). The output is written to a temporary file beside it and renamed
/// over it; nothing else is written (a JSONL export is one new file, never an open session).
pub(crate) fn export(
    env: &PathEnv,
    session: &mut Session,
    format: ExportFormat,
    leaf: Option<&str>,
    out: Option<&Path>,
    default_dir: &Path,
    ids: Arc<IdSource>,
) -> StoreResult<Exported> {
    let leaf = match leaf {
        None => session.leaf().clone(),
        Some(id) if session.position(id).is_some() => Leaf::Id(id.into()),
        Some(id) => return Err(StoreError::entry_not_found(id)),
    };
    // The entry the export is at: the last on the path pi would walk from `leaf`.
    let path = session.leaf_path(&leaf);
    let selected = path.positions.last().copied();
    let leaf_id = selected.and_then(|p| session.record(p).id().map(str::to_string));
    let (path, bytes) = match format {
        ExportFormat::Html => {
            let target = target(out, default_dir, session, "html")?;
            let bytes =
                output::write_replacing(&target, |w| html::write_page(session, selected, w))?;
            (target, bytes)
        }
        ExportFormat::Md => {
            let target = target(out, default_dir, session, "md")?;
            let positions = path.positions.clone();
            let bytes = output::write_replacing(&target, |w| {
                markdown::write_document(session, &positions, w)
            })?;
            (target, bytes)
        }
        ExportFormat::Jsonl => {
            let Some(leaf_id) = leaf_id.as_deref() else {
                return Err(StoreError::new(
                    ErrorKind::InvalidArgument,
                    "nothing to export as a session: there is no entry on that path",
                ));
            };
            jsonl::write_branch(env, session, leaf_id, out, ids)?
        }
    };
    Ok(Exported {
        path,
        bytes,
        leaf_id,
    })
}

/// `out`, or `pi-session-<session file name without .jsonl>.<ext>` in `dir`.
fn target(out: Option<&Path>, dir: &Path, session: &Session, ext: &str) -> StoreResult<PathBuf> {
    if let Some(out) = out {
        return Ok(out.to_path_buf());
    }
    let stem = match session.path() {
        Some(path) => path
            .file_name()
            .map(|n| n.to_string_lossy().trim_end_matches(".jsonl").to_string())
            .unwrap_or_default(),
        None => session.session_id().into_owned(),
    };
    Ok(dir.join(format!("pi-session-{stem}.{ext}")))
}
