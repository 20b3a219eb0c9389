//! `pi-session list`: the sessions of a project (or of all projects) as a table or as JSON.

use std::process::ExitCode;

use clap::Args;
use crate::repo::{CachePolicy, Repo, RepoError, SESSION_DIR_ENV, render};

use super::{Failure, emit, warn};

#[derive(Args, Debug)]
pub struct ListArgs {
    /// The project whose sessions to list (default: the current directory).
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    cwd: Option<String>,
    /// List the sessions of every project.
    #[arg(long)]
    all: bool,
    /// Read sessions from this directory instead of the agent directory (pi's --session-dir;
    /// default: $PI_CODING_AGENT_SESSION_DIR).
    #[arg(long, value_name = "DIR")]
    session_dir: Option<String>,
    /// Print JSON (what pi's SessionInfo[] stringifies to) instead of a table.
    #[arg(long)]
    json: bool,
    /// Read every file; neither use nor update the listing cache.
    #[arg(long)]
    no_cache: bool,
}

pub fn run(args: ListArgs) -> Result<ExitCode, Failure> {
    let repo = Repo::from_process().map_err(fail)?;
    let repo = if args.no_cache {
        repo.with_cache(CachePolicy::Off)
    } else {
        repo
    };
    // As pi's command line: the flag, else the environment variable (tilde-expanded).
    let from_env = std::env::var(SESSION_DIR_ENV)
        .ok()
        .filter(|d| !d.is_empty());
    let session_dir = match (args.session_dir, from_env) {
        (Some(flag), _) => Some(flag),
        (None, Some(dir)) => Some(repo.env().normalize_path(&dir).map_err(fail)?),
        (None, None) => None,
    };
    let session_dir = session_dir.as_deref();
    let listed = if args.all {
        repo.list_all(session_dir)
    } else {
        let cwd = args
            .cwd
            .unwrap_or_else(|| repo.env().process_cwd().to_string());
        repo.list(&cwd, session_dir)
    };
    let listing = listed.map_err(fail)?;
    for warning in &listing.warnings {
        warn(format_args!("skipped {warning}"));
    }
    let text = if args.json {
        render::listing_json(&listing.sessions)
    } else {
        render::listing_table(&listing.sessions)
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// A directory error: its message names the directory.
fn fail(error: RepoError) -> Failure {
    Failure::Store {
        file: None,
        error: error.into(),
    }
}
