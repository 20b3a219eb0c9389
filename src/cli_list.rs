//! `pi-session list`: the sessions of a project (or of all projects) as a table or as JSON.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use pi_session::repo::{CachePolicy, Repo, SESSION_DIR_ENV, render};

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

pub fn run(args: ListArgs) -> ExitCode {
    let repo = match Repo::from_process() {
        Ok(repo) => repo,
        Err(e) => return fail(&e),
    };
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
        (None, Some(dir)) => match repo.env().normalize_path(&dir) {
            Ok(dir) => Some(dir),
            Err(e) => return fail(&e),
        },
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
    let listing = match listed {
        Ok(listing) => listing,
        Err(e) => return fail(&e),
    };
    for warning in &listing.warnings {
        eprintln!("pi-session: skipped {warning}");
    }
    let text = if args.json {
        render::listing_json(&listing.sessions)
    } else {
        render::listing_table(&listing.sessions)
    };
    // A closed pipe (`| head`) is not an error worth reporting.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

fn fail(error: &pi_session::repo::RepoError) -> ExitCode {
    eprintln!("pi-session: {error}");
    ExitCode::FAILURE
}
