//! `pi-session list` and `pi-session find`: the sessions of a project (or of all projects) as
//! a table or as JSON, and the file of one session id, as the profile's pi finds them.

use std::process::ExitCode;

use crate::format::profile::Profile;
use crate::ops;
use crate::repo::search::{NameFilter, SearchQuery, SearchSort};
use crate::repo::{CachePolicy, HarnessListing, ListField, ListSelection, render};
use clap::Args;

use super::{CommandFailure, emit, op_failed, parse_profile, warn};

#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    /// The project whose sessions to list (default: the current directory).
    #[arg(long, value_name = "DIR", conflicts_with = "all")]
    cwd: Option<String>,
    /// List the sessions of every project.
    #[arg(long)]
    all: bool,
    /// Read sessions from this directory instead of the agent directory (pi's --session-dir;
    /// default: $PI_CODING_AGENT_SESSION_DIR, then settings.json's sessionDir). harness: the
    /// sessions root.
    #[arg(long, value_name = "DIR")]
    session_dir: Option<String>,
    /// Whose listing: pi-cli (pi 0.82.1, default), pi-1.6, or harness (pi-agent-core's
    /// JsonlSessionRepo.list: header fields only, newest createdAt first).
    #[arg(long, default_value = "pi-cli", value_parser = parse_profile)]
    profile: Profile,
    /// Print JSON (what pi's SessionInfo[] stringifies to) instead of a table.
    #[arg(long)]
    json: bool,
    /// Read every file; neither use nor update the listing cache.
    #[arg(long)]
    no_cache: bool,
    /// Only the sessions pi's /resume search finds for this query (fuzzy words, "quoted
    /// phrases", or re:PATTERN), best match first (see --sort).
    #[arg(long, value_name = "QUERY")]
    query: Option<String>,
    /// With --query: relevance (default: best match first) or recent (newest first).
    #[arg(long, value_name = "ORDER", value_parser = parse_sort)]
    sort: Option<SearchSort>,
    /// Only sessions with a name.
    #[arg(long)]
    named: bool,
    /// With --json: only these SessionInfo members, comma-separated (for example
    /// path,id,name,modified,firstMessage).
    #[arg(long, value_name = "FIELDS", value_delimiter = ',', value_parser = parse_field)]
    fields: Option<Vec<ListField>>,
    /// Skip this many sessions (after searching).
    #[arg(long, value_name = "N", default_value_t = 0)]
    offset: usize,
    /// Show at most this many sessions.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
}

fn parse_sort(text: &str) -> Result<SearchSort, String> {
    match text {
        "relevance" => Ok(SearchSort::Relevance),
        "recent" => Ok(SearchSort::Recent),
        _ => Err("expected relevance or recent".into()),
    }
}

fn parse_field(text: &str) -> Result<ListField, String> {
    ListField::ALL
        .into_iter()
        .find(|f| f.name() == text)
        .ok_or_else(|| {
            let names: Vec<_> = ListField::ALL.iter().map(|f| f.name()).collect();
            format!("expected one of {}", names.join(", "))
        })
}

#[derive(Args, Debug)]
pub(crate) struct FindArgs {
    /// The exact session id.
    id: String,
    /// The project whose sessions to look in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// Look in this directory instead (as `list --session-dir`).
    #[arg(long, value_name = "DIR")]
    session_dir: Option<String>,
    /// pi-1.6 (its findById: the first file in name order whose header has the id) or pi-cli
    /// (pi 0.82.1: the newest listed session with the id).
    #[arg(long, default_value = "pi-cli", value_parser = parse_profile)]
    profile: Profile,
}

pub(crate) fn run(scope: &ops::Scope, args: ListArgs) -> Result<ExitCode, CommandFailure> {
    let mut scope = scope.clone();
    if args.no_cache {
        scope.repo = scope.repo.with_cache(CachePolicy::Off);
    }
    let cwd = args
        .cwd
        .unwrap_or_else(|| scope.repo.env().process_cwd().to_string());
    let query = match args.query.as_deref().map(SearchQuery::parse) {
        None => None,
        Some(Ok(query)) => query,
        Some(Err(e)) => return Err(CommandFailure::Usage(format!("--query: {e}"))),
    };
    let input = ops::ListInput {
        profile: Some(args.profile),
        project: (!args.all).then(|| cwd.clone()),
        session_dir: ops::cli_session_dir(&scope, args.profile, &cwd, args.session_dir)
            .map_err(op_failed(None))?,
        refines_rows: query.is_some() || args.named || args.fields.is_some(),
        selection: ListSelection {
            query,
            sort: args.sort.unwrap_or_default(),
            names: if args.named {
                NameFilter::Named
            } else {
                NameFilter::All
            },
            offset: args.offset,
            limit: args.limit,
        },
    };
    let listing = match ops::list(&scope, input).map_err(misused)? {
        ops::Listed::Headers { listing, .. } => return print_harness(&listing, args.json),
        ops::Listed::Rows { listing, .. } => listing,
    };
    for warning in &listing.warnings {
        warn(format_args!("skipped {warning}"));
    }
    for note in &listing.pi16_notes {
        warn(format_args!("{note}"));
    }
    if args.json {
        // Streamed: the rows of a big directory are tens of megabytes of text.
        let out = std::io::BufWriter::with_capacity(1 << 16, super::stdout_unbuffered()?);
        render::write_listing_json(&listing.sessions, args.fields.as_deref(), out)?;
    } else {
        emit(&render::listing_table(&listing.sessions))?;
    }
    // The process ends now: freeing thousands of rows one by one would only delay its exit.
    std::mem::forget(listing);
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn find(scope: &ops::Scope, args: FindArgs) -> Result<ExitCode, CommandFailure> {
    let cwd = args
        .cwd
        .unwrap_or_else(|| scope.repo.env().process_cwd().to_string());
    let found = ops::cli_session_dir(scope, args.profile, &cwd, args.session_dir)
        .and_then(|dir| ops::find_by_id(scope, Some(args.profile), &cwd, &args.id, dir.as_deref()))
        .map_err(misused)?;
    match found {
        Some(path) => {
            emit(&format!("{}\n", path.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            warn(format_args!("no session with id {:?}", args.id));
            Ok(ExitCode::FAILURE)
        }
    }
}

fn print_harness(listing: &HarnessListing, json: bool) -> Result<ExitCode, CommandFailure> {
    for skip in &listing.skipped {
        warn(format_args!("skipped {}", skip.reason));
    }
    for note in &listing.pi16_notes {
        warn(format_args!("{note}"));
    }
    let text = if json {
        let rows: Vec<_> = listing.sessions.iter().map(|s| s.to_js_value()).collect();
        crate::format::json::JsValue::Array(rows).stringify_pretty(2) + "\n"
    } else {
        listing
            .sessions
            .iter()
            .map(|s| {
                let text = |v: &crate::format::json::JsValue| v.to_js_string();
                format!(
                    "{}  {}  {}  {}\n",
                    text(&s.created_at),
                    text(&s.id),
                    text(&s.cwd),
                    s.path
                )
            })
            .collect()
    };
    emit(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// What the profile refuses was asked on the command line: a misuse (status 2).
fn misused(error: ops::OpError) -> CommandFailure {
    match error {
        ops::OpError::Store(e) if e.kind == crate::store::ErrorKind::InvalidArgument => {
            CommandFailure::Usage(e.message)
        }
        other => op_failed(None)(other),
    }
}
