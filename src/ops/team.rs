//! A team's store index on PostgreSQL: filing this machine's store into it (`sync`), and
//! opening it for store-wide queries (`search`/`stats` with `--db`).

use crate::catalog::postgres::Postgres;
use crate::catalog::{Catalog, Progress, SyncReport};
use crate::format::profile::Profile;

use super::config::TeamIndex;
use super::error::OpError;
use super::scope::Scope;

/// The team database to query (narrowed to `team.machine` when set).
pub(crate) fn backend(team: &TeamIndex) -> Result<Postgres, OpError> {
    Postgres::connect(&team.target, team.machine.clone()).map_err(OpError::from)
}

/// A connection filing this machine's store into the team database.
pub(crate) struct TeamSync {
    catalog: Catalog,
    profile: Profile,
}

impl TeamSync {
    /// Connects (making or migrating the tables; refusing another schema version).
    pub(crate) fn connect(team: &TeamIndex, profile: Profile) -> Result<TeamSync, OpError> {
        if team.machine.is_none() {
            return Err(OpError::InvalidParams("sync: no machine name".into()));
        }
        Ok(TeamSync {
            catalog: Catalog::with_backend(Box::new(backend(team)?)),
            profile,
        })
    }

    /// Files what changed in the store since the stamps the database holds for this machine.
    pub fn step(&mut self, scope: &Scope, progress: &dyn Progress) -> Result<SyncReport, OpError> {
        let root = crate::catalog::Layout::Root(
            scope.repo.env().io_path(&scope.repo.env().sessions_root()),
        );
        let options = scope.config.session_options(self.profile);
        let report = self
            .catalog
            .sync(&root, &options, true, progress)
            .map_err(OpError::from)?;
        for skipped in &report.skipped {
            tracing::warn!("left out of the team index: {skipped}");
        }
        Ok(report)
    }
}
