//! `sync`: files this machine's store into a team's PostgreSQL database, once or (`--follow`)
//! again every `--interval` seconds, reconnecting when the server goes away.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use crate::catalog::postgres::Target;
use crate::catalog::{Quiet, SyncReport};
use crate::format::profile::Profile;
use crate::ops::{self, TeamIndex, TeamSync};

use super::{CommandFailure, emit, op_failed, parse_profile};

/// How often `--follow` looks at the store when no interval is given.
pub(crate) const DEFAULT_INTERVAL_SECS: f64 = 2.0;

#[derive(Args, Debug)]
pub(crate) struct SyncArgs {
    /// The team database: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...]
    /// (password also from PGPASSWORD or the pgpass file).
    #[arg(long, value_name = "URL")]
    to: String,
    /// The name this machine's sessions are tagged with (default: the host name).
    #[arg(long)]
    machine: Option<String>,
    /// Keep going: sync again every --interval seconds, reconnecting when the database
    /// goes away, until interrupted.
    #[arg(long)]
    follow: bool,
    /// Seconds between two looks at the store with --follow.
    #[arg(long, default_value_t = DEFAULT_INTERVAL_SECS, value_name = "SECONDS")]
    interval: f64,
    /// pi-cli (pi 0.82.1, default), pi-1.6 or harness: whose reading of the files.
    #[arg(long, default_value = "pi-cli", value_parser = parse_profile)]
    profile: Profile,
    /// One JSON document per run on stdout (each sync's report).
    #[arg(long)]
    json: bool,
}

/// The database URL of `--to`/`--db`, read with the environment's password sources.
pub(crate) fn team_index(
    scope: &ops::Scope,
    url: &str,
    machine: Option<String>,
) -> Result<TeamIndex, CommandFailure> {
    let target = Target::parse(url, &scope.config.pg).map_err(|e| {
        op_failed(None)(ops::OpError::store(
            crate::store::ErrorKind::InvalidArgument,
            e.message,
        ))
    })?;
    Ok(TeamIndex { target, machine })
}

/// This machine's host name.
fn host_name() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates within it
    // (or truncates, which the search for NUL below tolerates).
    let done = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if done != 0 {
        return None;
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned()).filter(|n| !n.is_empty())
}

fn print(report: &SyncReport, machine: &str, json: bool) -> Result<(), CommandFailure> {
    if json {
        let text =
            serde_json::to_string(report).map_err(|e| CommandFailure::Usage(e.to_string()))?;
        return emit(&(text + "\n"));
    }
    emit(&format!(
        "{machine}: {} files, {} new, {} grew, {} replaced, {} gone, {} entries filed\n",
        report.files,
        report.new,
        report.grew,
        report.replaced,
        report.removed,
        report.entries_indexed
    ))
}

pub(crate) fn run(scope: &ops::Scope, args: SyncArgs) -> Result<ExitCode, CommandFailure> {
    if !(args.interval.is_finite() && args.interval > 0.0) {
        return Err(CommandFailure::Usage(format!(
            "--interval: {} is not a positive number of seconds",
            args.interval
        )));
    }
    let machine = match args.machine.or_else(host_name) {
        Some(name) if !name.trim().is_empty() => name,
        _ => {
            return Err(CommandFailure::Usage(
                "--machine: no host name to default to; name this machine with --machine".into(),
            ));
        }
    };
    let team = team_index(scope, &args.to, Some(machine.clone()))?;
    let mut sync = TeamSync::connect(&team, args.profile).map_err(op_failed(None))?;
    let report = sync.step(scope, &Quiet).map_err(op_failed(None))?;
    print(&report, &machine, args.json)?;
    if !args.follow {
        return Ok(ExitCode::SUCCESS);
    }
    let interval = Duration::from_secs_f64(args.interval);
    let mut connection = Some(sync);
    loop {
        std::thread::sleep(interval);
        let sync = match connection.as_mut() {
            Some(sync) => sync,
            None => match TeamSync::connect(&team, args.profile) {
                Ok(sync) => {
                    tracing::info!("reconnected to {}", team.target.shown);
                    connection.insert(sync)
                }
                Err(e) => {
                    tracing::warn!("{e}; trying again in {:?}", interval);
                    continue;
                }
            },
        };
        match sync.step(scope, &Quiet) {
            Ok(report) => {
                // A look that found nothing new prints nothing (except as JSON, one per look).
                let changed = report.new + report.grew + report.replaced + report.removed;
                if changed > 0 || !report.skipped.is_empty() || args.json {
                    print(&report, &machine, args.json)?;
                }
            }
            Err(e) => {
                // Nothing half-written: the transaction of the file being filed was rolled
                // back, and its stamps with it; the next connection files it again.
                tracing::warn!("{e}; reconnecting");
                connection = None;
            }
        }
    }
}
