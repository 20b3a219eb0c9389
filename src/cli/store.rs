//! `search` and `stats`: the store-wide commands, translated to `ops::search` / `ops::stats`.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;

use crate::catalog::Progress;
use crate::format::profile::Profile;
use crate::ops::{self, GroupBy, SearchInput, StatsInput, StoreScope};

use super::{CommandFailure, emit, op_failed, parse_profile, warn};

/// Which sessions: every project (`--all`, the default) or one.
#[derive(Args, Debug)]
pub(crate) struct ScopeArgs {
    /// Every project of the store (the default).
    #[arg(long, conflicts_with = "cwd")]
    all: bool,
    /// Only the sessions of the project in this directory.
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// The sessions in this flat directory, as pi's --session-dir (default: that option's
    /// $PI_CODING_AGENT_SESSION_DIR, else settings' sessionDir, else the sessions root).
    #[arg(long, value_name = "DIR")]
    session_dir: Option<String>,
    /// pi-cli (pi 0.82.1, default), pi-1.6 or harness: whose reading; one index per profile.
    #[arg(long, default_value = "pi-cli", value_parser = parse_profile)]
    profile: Profile,
    /// No progress bar while the index is first built.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// One JSON document on stdout.
    #[arg(long)]
    json: bool,
    /// Answer from a team's PostgreSQL database (filled by `pi-session sync`) over every
    /// machine's sessions, instead of this store's index.
    #[arg(long, value_name = "URL")]
    db: Option<String>,
    /// With --db: only the sessions seen on this machine.
    #[arg(long, requires = "db")]
    machine: Option<String>,
}

impl ScopeArgs {
    /// The operations' scope: reading the team database when --db is given.
    fn ops_scope(&self, scope: &ops::Scope) -> Result<Option<ops::Scope>, CommandFailure> {
        let Some(url) = &self.db else {
            return Ok(None);
        };
        let mut config = (*scope.config).clone();
        config.team = Some(super::sync::team_index(scope, url, self.machine.clone())?);
        Ok(Some(ops::Scope::new(config)))
    }

    /// The sessions directory read as pi's command line reads it: the flag, else
    /// `$PI_CODING_AGENT_SESSION_DIR`, else settings' `sessionDir` (for the cwd of the process,
    /// or of `--cwd`).
    fn scope(&self, scope: &ops::Scope) -> Result<StoreScope, CommandFailure> {
        let cwd = self
            .cwd
            .clone()
            .unwrap_or_else(|| scope.repo.env().process_cwd().to_string());
        let session_dir = ops::cli_session_dir(scope, self.profile, &cwd, self.session_dir.clone())
            .map_err(op_failed(None))?;
        Ok(StoreScope {
            profile: Some(self.profile),
            cwd: self.cwd.clone(),
            session_dir,
        })
    }
}

#[derive(Args, Debug)]
pub(crate) struct SearchArgs {
    /// Words that must each appear (case and accents ignored); "a phrase" as written.
    query: String,
    #[command(flatten)]
    scope: ScopeArgs,
    /// user, assistant, toolResult, ... or compaction, branch_summary, custom_message, label,
    /// session_info.
    #[arg(long)]
    role: Option<String>,
    /// From this day (YYYY-MM-DD, UTC) or time (ISO 8601).
    #[arg(long)]
    since: Option<String>,
    /// Up to and including this day (YYYY-MM-DD, UTC), or before this time (ISO 8601).
    #[arg(long)]
    until: Option<String>,
    /// model or provider/model.
    #[arg(long)]
    model: Option<String>,
    /// Entries that call or answer this tool.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// Only entries on the current branch of their session.
    #[arg(long)]
    on_path: bool,
    /// Search thinking text too.
    #[arg(long)]
    thinking: bool,
    #[arg(long, default_value_t = ops::DEFAULT_LIMIT)]
    limit: u64,
    #[arg(long, default_value_t = 0)]
    offset: u64,
}

#[derive(Args, Debug)]
pub(crate) struct StatsArgs {
    #[command(flatten)]
    scope: ScopeArgs,
    /// day, week, month, model, project or session.
    #[arg(long, default_value = "day", value_parser = parse_group)]
    by: GroupBy,
    /// From this day (YYYY-MM-DD), in --timezone.
    #[arg(long)]
    since: Option<String>,
    /// Up to and including this day (YYYY-MM-DD).
    #[arg(long)]
    until: Option<String>,
    /// IANA time zone for days (default: the machine's).
    #[arg(long, short = 'z')]
    timezone: Option<String>,
    /// Sum each file as pi's getSessionStats does (copies of forks counted in each file).
    #[arg(long)]
    per_file: bool,
}

fn parse_group(text: &str) -> Result<GroupBy, String> {
    GroupBy::parse(text).ok_or_else(|| {
        format!("unknown grouping {text:?} (expected day, week, month, model, project or session)")
    })
}

/// A progress bar on stderr while the index is built, when stderr is a terminal.
struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    fn new(quiet: bool) -> Bar {
        Bar((!quiet && std::io::stderr().is_terminal()).then(indicatif::ProgressBar::hidden))
    }
}

impl Progress for Bar {
    fn start(&self, files: u64, bytes: u64) {
        if let Some(bar) = &self.0 {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.set_length(bytes);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "indexing {msg} {wide_bar} {binary_bytes}/{binary_total_bytes} ({eta})",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar.set_message(format!("{files} session files"));
        }
    }

    fn advance(&self, bytes: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(bytes);
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

/// A day or time bound as milliseconds (a day's end is the next day's start).
fn time_bound(name: &str, text: &str, end: bool) -> Result<f64, CommandFailure> {
    if let Ok(day) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let day = if end { day + chrono::Days::new(1) } else { day };
        let start = day
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc().timestamp_millis());
        return start
            .map(|ms| ms as f64)
            .ok_or_else(|| CommandFailure::Usage(format!("--{name}: {text:?} is out of range")));
    }
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|t| t.timestamp_millis() as f64)
        .map_err(|_| {
            CommandFailure::Usage(format!(
                "--{name}: {text:?} is neither a day (YYYY-MM-DD) nor a time (ISO 8601)"
            ))
        })
}

pub(crate) fn search(scope: &ops::Scope, args: SearchArgs) -> Result<ExitCode, CommandFailure> {
    let input = SearchInput {
        query: args.query,
        scope: args.scope.scope(scope)?,
        role: args.role,
        since_ms: args
            .since
            .as_deref()
            .map(|t| time_bound("since", t, false))
            .transpose()?,
        until_ms: args
            .until
            .as_deref()
            .map(|t| time_bound("until", t, true))
            .transpose()?,
        model: args.model,
        tool: args.tool,
        on_path: args.on_path,
        thinking: args.thinking,
        limit: Some(args.limit),
        offset: args.offset,
    };
    let bar = Bar::new(args.scope.quiet);
    let team = args.scope.ops_scope(scope)?;
    let found =
        ops::search(team.as_ref().unwrap_or(scope), input, &bar).map_err(op_failed(None))?;
    if let Some(note) = &found.note {
        warn(format_args!("{note}"));
    }
    if let Some(pending) = &found.pending {
        warn(format_args!(
            "another process is building the store index: these hits are from what it has filed; {} session files ({:.1} MB) are not searched yet",
            pending.files,
            pending.bytes as f64 / 1e6
        ));
    }
    if args.scope.json {
        let text = serde_json::to_string_pretty(&found)
            .map_err(|e| CommandFailure::Usage(e.to_string()))?;
        emit(&(text + "\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = String::new();
    for hit in &found.hits {
        let branch = if hit.on_path {
            ""
        } else {
            " (abandoned branch)"
        };
        out += &format!(
            "{}:{}: {} {} {}{}\n    {}\n",
            hit.session_path.display(),
            hit.line,
            hit.entry_id.as_deref().unwrap_or("-"),
            hit.role.as_deref().unwrap_or("-"),
            hit.timestamp.as_deref().unwrap_or("-"),
            branch,
            hit.snippet.replace('\n', " "),
        );
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn stats(scope: &ops::Scope, args: StatsArgs) -> Result<ExitCode, CommandFailure> {
    let input = StatsInput {
        scope: args.scope.scope(scope)?,
        by: args.by,
        since: args.since,
        until: args.until,
        timezone: args.timezone,
        per_file: args.per_file,
    };
    let bar = Bar::new(args.scope.quiet);
    let team = args.scope.ops_scope(scope)?;
    let figures =
        ops::stats(team.as_ref().unwrap_or(scope), input, &bar).map_err(op_failed(None))?;
    if let Some(note) = &figures.note {
        warn(format_args!("{note}"));
    }
    if args.scope.json {
        let text = serde_json::to_string_pretty(&figures.to_report())
            .map_err(|e| CommandFailure::Usage(e.to_string()))?;
        emit(&(text + "\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = format!(
        "{:<24} {:>9} {:>9} {:>12} {:>12} {:>12} {:>12} {:>10}\n",
        "group", "messages", "tools", "input", "output", "cache read", "cache write", "cost"
    );
    let line = |key: &str, f: &ops::Figures| {
        format!(
            "{:<24} {:>9} {:>9} {:>12} {:>12} {:>12} {:>12} {:>10.4}\n",
            key,
            f.assistant_messages,
            f.tool_calls,
            f.input_tokens,
            f.output_tokens,
            f.cache_read_tokens,
            f.cache_creation_tokens,
            f.total_cost
        )
    };
    for group in &figures.groups {
        out += &line(&group.key, &group.figures);
    }
    out += &line("total", &figures.totals);
    if let Some(twice) = &figures.counted_twice_per_file {
        out += &format!(
            "each message counted once; summing each file would count {} assistant messages, {} tokens and {:.4} in cost twice (--per-file)\n",
            twice.assistant_messages, twice.total_tokens, twice.total_cost
        );
    }
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}
