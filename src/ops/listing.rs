//! Sessions directories as each profile's pi lists them, and a session found by its id.

use std::collections::HashSet;
use std::path::PathBuf;

use crate::format::profile::{FindById, ListingRule, Profile};
use crate::repo::{HarnessListing, ListSelection, Listing, page};
use crate::store::ErrorKind;

use super::error::OpError;
use super::scope::Scope;

#[derive(Debug, Clone, Default)]
pub(crate) struct ListInput {
    pub(crate) profile: Option<Profile>,
    /// The project whose sessions to list; `None`: every project (`listAll`).
    pub(crate) project: Option<String>,
    pub(crate) session_dir: Option<String>,
    pub(crate) selection: ListSelection,
    /// The request selects among `SessionInfo` rows beyond paging (it names fields, a query
    /// or a name filter): a listing without such rows refuses it.
    pub(crate) refines_rows: bool,
}

/// A listing, as the profile's pi makes it, with the page asked for.
#[derive(Debug)]
pub(crate) enum Listed {
    /// pi's `SessionInfo` rows, selected; `total` counts them before paging.
    Rows { listing: Listing, total: usize },
    /// The harness's header rows, paged; the pi 1.6 notes are those of the rows shown.
    Headers {
        listing: HarnessListing,
        total: usize,
    },
}

/// `list` (a project) or `listAll` (every project).
pub(crate) fn list(scope: &Scope, input: ListInput) -> Result<Listed, OpError> {
    let profile = scope.profile(input.profile);
    let repo = &scope.repo;
    let dir = input.session_dir.as_deref();
    match profile.rules().listing {
        ListingRule::HarnessHeaders => {
            if input.refines_rows {
                return Err(OpError::store(
                    ErrorKind::InvalidArgument,
                    "'fields', 'query', 'nameFilter': the harness's listing has no SessionInfo \
                     rows to select from (use offset and limit, or profile pi-cli or pi-1.6)",
                ));
            }
            let mut listing = repo.harness_list(input.project.as_deref(), dir)?;
            let (rows, total) = page(
                std::mem::take(&mut listing.sessions),
                input.selection.offset,
                input.selection.limit,
            );
            // As in pi's listings, the pi 1.6 warnings follow the rows returned.
            let shown: HashSet<&str> = rows.iter().map(|s| s.path.as_str()).collect();
            listing
                .pi16_notes
                .retain(|n| n.path.to_str().is_some_and(|p| shown.contains(p)));
            listing.sessions = rows;
            Ok(Listed::Headers { listing, total })
        }
        ListingRule::SessionInfo { .. } => {
            let mut listing = match &input.project {
                Some(cwd) => repo.list_as(profile, cwd, dir)?,
                None => repo.list_all_as(profile, dir)?,
            };
            let total = listing.select(&input.selection);
            Ok(Listed::Rows { listing, total })
        }
    }
}

/// The file of the session with id `id`, as the profile's pi finds it (`None`: no session has
/// it).
pub(crate) fn find_by_id(
    scope: &Scope,
    profile: Option<Profile>,
    cwd: &str,
    id: &str,
    session_dir: Option<&str>,
) -> Result<Option<PathBuf>, OpError> {
    let repo = &scope.repo;
    Ok(match scope.profile(profile).rules().find_by_id {
        Some(FindById::HeaderScan) => repo.find_by_id(cwd, id, session_dir)?,
        Some(FindById::NewestListed) => repo.find_by_id_in_list(cwd, id, session_dir)?,
        None => {
            return Err(OpError::store(
                ErrorKind::InvalidArgument,
                "'profile': the harness has no findById (use pi-cli or pi-1.6)",
            ));
        }
    })
}

/// The sessions directory pi's command line reads: the flag, else
/// `$PI_CODING_AGENT_SESSION_DIR` (tilde-expanded), else `sessionDir` of settings.json as the
/// profile's pi reads it. The harness reads its sessions root as given.
pub(crate) fn cli_session_dir(
    scope: &Scope,
    profile: Profile,
    cwd: &str,
    flag: Option<String>,
) -> Result<Option<String>, OpError> {
    if flag.is_some() || profile.rules().listing == ListingRule::HarnessHeaders {
        return Ok(flag);
    }
    let env = scope.repo.env();
    if let Some(dir) = &scope.config.session_dir_env {
        return Ok(Some(env.normalize_path(dir)?));
    }
    Ok(crate::repo::settings_session_dir(env, profile, cwd)?)
}
