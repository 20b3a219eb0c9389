//! The command line: `pi-session --stdio` serves JSON-RPC; the subcommands are offline views
//! of session files for people and scripts. The real work is in the library.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

mod follow;
mod list;
mod store;
mod sync;
mod test;

use crate::format::json;
use crate::format::profile::Profile;
use crate::inspect::{self, ReplayOutcome};
use crate::ops::{self, LeafChoice};
use crate::store::compaction::Detail;
use crate::store::{ForkPosition, MessageFormat, Session, StoreError};
use clap::{CommandFactory, Parser, Subcommand};

/// How the command line ends, as its `--help` says.
const EXIT_CODES: &str = "\
Exit status:
  0  success (`check`: the file is clean; `test`: every transcript passed); also when the
     reader of the output goes away
  1  an error (one line on stderr naming the file and the reason); `check` found problems;
     `test`: a transcript failed
  2  the command line was misused (unknown option, missing argument, malformed op script);
     `test`: a transcript cannot be read or played (FILE:LINE on stderr), or no server starts";

#[derive(Parser)]
#[command(
    name = "pi-session",
    version,
    about = "pi-compatible sessions: inspect session files, or serve them over JSON-RPC",
    after_help = EXIT_CODES
)]
struct Cli {
    /// Serve JSON-RPC on stdin/stdout (see protocol/protocol.md).
    #[arg(long)]
    stdio: bool,

    #[command(flatten)]
    server: crate::sidecar::StdioArgs,

    /// Neither use nor write the persisted index (also PI_SESSION_NO_INDEX=1).
    #[arg(long, global = true)]
    no_index: bool,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Print what pi sees in a session file, as one JSON document.
    Context {
        file: PathBuf,
        /// Report at this entry instead of the file's leaf (`null`: before the first entry).
        #[arg(long)]
        leaf: Option<String>,
        #[arg(long, default_value = "pi-cli", value_parser = parse_profile)]
        profile: Profile,
        /// Messages as sent to the model (after pi's convertToLlm).
        #[arg(long)]
        llm: bool,
    },
    /// Print the session tree, one line per entry.
    Tree {
        file: PathBuf,
        #[arg(long, default_value = "pi-cli", value_parser = parse_profile)]
        profile: Profile,
        /// Then print each entry another program appends, as it is appended, until
        /// interrupted (status 1 when the file is deleted, replaced or cut meanwhile).
        #[arg(long)]
        follow: bool,
    },
    /// List every problem in a session file with its line; exit status 0 when clean.
    Check {
        file: PathBuf,
        #[arg(long, default_value = "pi-cli", value_parser = parse_profile)]
        profile: Profile,
    },
    /// List sessions (pi's `/resume` list), newest activity first.
    List(list::ListArgs),
    /// Print the file of a session id (pi 1.6's findById with --profile pi-1.6); exit 1 when
    /// no session has it.
    Find(list::FindArgs),
    /// Start a new session from a session file: the path before a user message (pi's /fork),
    /// or with --at the path up to any entry (pi's /clone). The source is never changed.
    Fork {
        file: PathBuf,
        /// The entry to fork from.
        #[arg(long)]
        entry: String,
        /// Copy up to and including the entry (/clone) instead of up to before it (/fork).
        #[arg(long)]
        at: bool,
        /// Where to write the new session (default: beside the source).
        #[arg(long)]
        out: Option<PathBuf>,
        /// pi-cli (pi 0.82.1) or pi-1.6: whose /fork rules (the harness forks differently).
        #[arg(long, default_value = "pi-cli", value_parser = parse_profile)]
        profile: Profile,
    },
    /// Write a session for reading or sharing: a self-contained HTML page (the whole tree beside
    /// the conversation; opens offline in any browser), a Markdown document of one path, or the
    /// branch to the leaf as a new session file (`parentSession` set) that pi opens to the same
    /// context. Prints the path written.
    Export {
        file: PathBuf,
        /// Show (html, md) or end at (jsonl) this entry instead of the file's leaf.
        #[arg(long)]
        leaf: Option<String>,
        /// html (default), md or jsonl.
        #[arg(long, default_value = "html", value_parser = parse_export_format)]
        format: crate::export::ExportFormat,
        /// Where to write (replaced if it is a regular file; never through a symlink). Default:
        /// `pi-session-<file name>.html|md` in the current directory (pi's `--export` name);
        /// jsonl: a new session file beside the source, named as pi names it.
        #[arg(short = 'o', long = "output")]
        out: Option<PathBuf>,
        #[arg(long, default_value = "pi-cli", value_parser = parse_profile)]
        profile: Profile,
    },
    /// Apply an op script (the oracle's replay format) to a new session in OUT_DIR.
    Replay {
        ops: PathBuf,
        out_dir: PathBuf,
        #[arg(long, default_value = "pi-cli", value_parser = parse_profile)]
        profile: Profile,
        /// Seeded ids and a clock starting at 2026-01-01, advancing 1 ms per reading.
        #[arg(long)]
        deterministic: Option<u64>,
    },
    /// Print where pi would cut if it compacted now (its preparation and the requests it would
    /// send to the summarizing model), as one JSON document: pi 0.82.1's rules (pi-cli), pi
    /// 1.6.0's (pi-1.6) or pi-agent-core's (harness).
    CompactPlan {
        file: PathBuf,
        /// Plan at this entry instead of the file's leaf (`null`: before the first entry).
        #[arg(long)]
        leaf: Option<String>,
        /// The model's context window: adds the context usage and whether pi would compact.
        #[arg(long)]
        window: Option<f64>,
        /// settings.compaction.keepRecentTokens (default: pi's settings.json, else 20000).
        #[arg(long)]
        keep: Option<f64>,
        /// settings.compaction.reserveTokens (default: pi's settings.json, else 16384).
        #[arg(long)]
        reserve: Option<f64>,
        #[arg(long, default_value = "pi-cli", value_parser = parse_profile)]
        profile: Profile,
        /// Every message and the full request texts (default: roles, token counts, lengths).
        #[arg(long)]
        full: bool,
    },
    /// Search every session of the store (a persisted SQLite index, brought up to date first):
    /// words anywhere, case and accents ignored, "quoted phrases" as written.
    Search(store::SearchArgs),
    /// Usage figures across the store (assistant messages, tool calls, tokens, cost) by day,
    /// week, month, model, project or session; each message copied by a fork counted once.
    Stats(store::StatsArgs),
    /// Put this machine's store into a team's PostgreSQL database (once, or --follow), each
    /// session tagged with this machine's name, each entry filed once; `search`/`stats --db`
    /// then answer over every machine's sessions.
    Sync(sync::SyncArgs),
    /// The store's live feed: each file created, appended to (with the entries), replaced,
    /// renamed or deleted, with a cursor that `--since` goes on from after a crash.
    Watch(follow::WatchArgs),
    /// Play transcripts (protocol/transcripts.md) against a fresh `pi-session --stdio` each
    /// and report every failed expectation: file, line, message and member.
    Test(test::TestArgs),
    /// Print a completion script for a shell (e.g. `pi-session completions bash`).
    Completions { shell: clap_complete::Shell },
}

pub(crate) fn parse_profile(text: &str) -> Result<Profile, String> {
    Profile::parse(text).ok_or_else(|| {
        format!("unknown profile {text:?} (expected pi-cli, pi-0.82 (= pi-cli), pi-1.6 or harness)")
    })
}

fn parse_export_format(text: &str) -> Result<crate::export::ExportFormat, String> {
    crate::export::ExportFormat::parse(text)
        .ok_or_else(|| format!("unknown format {text:?} (expected html, md or jsonl)"))
}

/// Why a command stopped short; reported as one line on stderr.
pub(crate) enum CommandFailure {
    /// An error about `file` (the file the command was working on, when there is one).
    Store {
        file: Option<PathBuf>,
        error: StoreError,
    },
    /// The command line or its input was misused (status 2).
    Usage(String),
    /// The output could not be written.
    Output(io::Error),
}

impl CommandFailure {
    pub(crate) fn in_file(file: &Path) -> impl FnOnce(StoreError) -> CommandFailure + '_ {
        move |error| CommandFailure::Store {
            file: Some(file.to_path_buf()),
            error,
        }
    }

    fn report(self) -> ExitCode {
        let (line, code) = match self {
            // `| head` closed the pipe: the reader has what it wanted (as ripgrep does).
            CommandFailure::Output(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                return ExitCode::SUCCESS;
            }
            CommandFailure::Output(e) => (format!("cannot write the output: {e}"), 1),
            CommandFailure::Usage(message) => (message, 2),
            CommandFailure::Store { file, error } => match (file, &error.file) {
                // The message names the file itself.
                (Some(file), None) => (format!("{}: {}", file.display(), error.message), 1),
                _ => (error.message, 1),
            },
        };
        let line = line.lines().collect::<Vec<_>>().join(" ");
        let _ = writeln!(io::stderr(), "pi-session: {line}");
        ExitCode::from(code)
    }
}

impl From<io::Error> for CommandFailure {
    fn from(error: io::Error) -> Self {
        CommandFailure::Output(error)
    }
}

/// stdout written straight to its file descriptor: `io::Stdout` is line-buffered, and looks
/// for the last newline in every write it is given, megabytes of message text included. Only
/// for output that nothing else writes to stdout alongside.
pub(crate) fn stdout_unbuffered() -> io::Result<std::fs::File> {
    use std::os::fd::AsFd;
    Ok(std::fs::File::from(
        io::stdout().as_fd().try_clone_to_owned()?,
    ))
}

/// Writes `text` to stdout at once (a closed pipe comes back as an error, never a panic).
pub(crate) fn emit(text: &str) -> Result<(), CommandFailure> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// A writer that keeps its first error, so that a closed stdout is reported as `emit` reports
/// it rather than as a failure of the document being written.
struct KeptError<W: Write> {
    inner: W,
    error: Option<io::Error>,
}

impl<W: Write> KeptError<W> {
    fn new(inner: W) -> Self {
        KeptError { inner, error: None }
    }

    fn keep<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        result.inspect_err(|e| {
            self.error
                .get_or_insert_with(|| io::Error::new(e.kind(), e.to_string()));
        })
    }
}

impl<W: Write> Write for KeptError<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = self.inner.write(buf);
        self.keep(result)
    }

    fn flush(&mut self) -> io::Result<()> {
        let result = self.inner.flush();
        self.keep(result)
    }
}

/// A warning about `file`, on stderr (a closed stderr is not worth dying for).
pub(crate) fn warn(message: std::fmt::Arguments<'_>) {
    let _ = writeln!(io::stderr(), "pi-session: {message}");
}

/// Runs the command line (what the `pi-session` binary does).
pub fn run() -> ExitCode {
    try_main().unwrap_or_else(CommandFailure::report)
}

/// A directory error: its message names the directory.
pub(crate) fn fail(error: impl Into<StoreError>) -> CommandFailure {
    CommandFailure::Store {
        file: None,
        error: error.into(),
    }
}

/// An operation's error, about `file` when there is one.
pub(crate) fn op_failed(file: Option<&Path>) -> impl FnOnce(ops::OpError) -> CommandFailure + '_ {
    move |error| match error {
        ops::OpError::Store(error) | ops::OpError::SummaryRequired { error, .. } => {
            CommandFailure::Store {
                file: file.map(Path::to_path_buf),
                error,
            }
        }
        other => CommandFailure::Usage(other.to_string()),
    }
}

fn try_main() -> Result<ExitCode, CommandFailure> {
    let cli = Cli::parse();
    let mut config = ops::Config::from_process().map_err(fail)?;
    if cli.no_index {
        config = config.without_index();
    }
    let command = match cli.command {
        Some(command) if !cli.stdio => {
            crate::jsonrpc::logging::init_cli_logging(config.log_filter.as_deref());
            command
        }
        Some(_) => return Err(CommandFailure::Usage("--stdio takes no subcommand".into())),
        None if cli.stdio => serve(cli.server, config),
        None => {
            return Err(CommandFailure::Usage(
                "nothing to do; run `pi-session --stdio` to serve JSON-RPC, or see --help".into(),
            ));
        }
    };
    let scope = ops::Scope::new(config);
    match command {
        Command::Context {
            file,
            leaf,
            profile,
            llm,
        } => {
            let choice = LeafChoice::from_flag(leaf.as_deref());
            let format = if llm {
                MessageFormat::Llm
            } else {
                MessageFormat::Agent
            };
            let mut session = open(&scope, &file, profile)?;
            // Streamed: a 300,000-entry context is never held whole.
            let mut out = KeptError::new(io::BufWriter::new(io::stdout().lock()));
            let written = inspect::write_context_document(&mut session, &choice, format, &mut out);
            if let Some(e) = out.error.take() {
                return Err(e.into());
            }
            written.map_err(CommandFailure::in_file(&file))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Tree {
            file,
            profile,
            follow: true,
        } => follow::tree(&scope, &file, profile),
        Command::Tree { file, profile, .. } => {
            let session = open(&scope, &file, profile)?;
            emit(&inspect::render_tree(&session).map_err(CommandFailure::in_file(&file))?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { file, profile } => check(&scope, &file, profile),
        Command::List(args) => list::run(&scope, args),
        Command::Find(args) => list::find(&scope, args),
        Command::Fork {
            file,
            entry,
            at,
            out,
            profile,
        } => fork(&scope, &file, &entry, at, out.as_deref(), profile),
        Command::Export {
            file,
            leaf,
            format,
            out,
            profile,
        } => export(&scope, &file, leaf, format, out, profile),
        Command::Replay {
            ops,
            out_dir,
            profile,
            deterministic,
        } => replay(&scope, &ops, &out_dir, profile, deterministic),
        Command::CompactPlan {
            file,
            leaf,
            window,
            keep,
            reserve,
            profile,
            full,
        } => {
            let mut session = open(&scope, &file, profile)?;
            // The flags over pi's settings.json for the session's project, as the sidecar reads it.
            let flags = crate::repo::SummarySettings {
                compaction_keep_recent_tokens: keep,
                compaction_reserve_tokens: reserve,
                ..Default::default()
            };
            let detail = if full { Detail::Full } else { Detail::Brief };
            let choice = LeafChoice::from_flag(leaf.as_deref());
            let doc = ops::plan_document(&scope, &mut session, &choice, flags, window, detail)
                .map_err(op_failed(Some(&file)))?;
            emit(&(doc.stringify_pretty(2) + "\n"))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Search(args) => store::search(&scope, args),
        Command::Stats(args) => store::stats(&scope, args),
        Command::Sync(args) => sync::run(&scope, args),
        Command::Watch(args) => follow::watch_store(&scope, args),
        Command::Test(args) => test::run(args),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "pi-session", &mut script);
            emit(&String::from_utf8_lossy(&script))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn serve(args: crate::sidecar::StdioArgs, config: ops::Config) -> ! {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            warn(format_args!("cannot start the async runtime: {e}"));
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(crate::sidecar::serve_stdio_with(args, Ok(config)));
    // Exit here rather than returning: the runtime would otherwise wait for the blocking
    // thread still reading stdin, which may never see end of input.
    std::process::exit(code);
}

/// Opens `file` read-only, its reading warnings on stderr.
fn open(scope: &ops::Scope, file: &Path, profile: Profile) -> Result<Session, CommandFailure> {
    let options = scope.config.session_options(profile);
    let session = Session::open_read_only(file, options).map_err(CommandFailure::in_file(file))?;
    for warning in session.warnings() {
        warn(format_args!("{}: {}", file.display(), warning.message));
    }
    Ok(session)
}

fn check(scope: &ops::Scope, file: &Path, profile: Profile) -> Result<ExitCode, CommandFailure> {
    let options = scope.config.session_options(profile);
    let findings = inspect::check_file(file, options).map_err(CommandFailure::in_file(file))?;
    let problems = findings.iter().filter(|f| !f.is_note).count();
    let mut report = String::new();
    for f in &findings {
        let what = if f.is_note { "note" } else { "problem" };
        if f.line > 0 {
            report += &format!("{}:{}: {what}: {}\n", file.display(), f.line, f.message);
        } else {
            report += &format!("{}: {what}: {}\n", file.display(), f.message);
        }
    }
    if problems == 0 {
        report += &format!("{}: ok\n", file.display());
    } else {
        report += &format!("{}: {problems} problem(s)\n", file.display());
    }
    emit(&report)?;
    Ok(if problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn fork(
    scope: &ops::Scope,
    file: &Path,
    entry: &str,
    at: bool,
    out: Option<&Path>,
    profile: Profile,
) -> Result<ExitCode, CommandFailure> {
    let input = ops::ForkInput {
        entry_id: entry.to_string(),
        position: if at {
            ForkPosition::At
        } else {
            ForkPosition::Before
        },
        durable: None,
    };
    let forked = ops::fork_file(scope, profile, file, input, out).map_err(op_failed(Some(file)))?;
    emit(&(forked.to_js_value().stringify_pretty(2) + "\n"))?;
    Ok(ExitCode::SUCCESS)
}

fn export(
    scope: &ops::Scope,
    file: &Path,
    leaf: Option<String>,
    format: crate::export::ExportFormat,
    out: Option<PathBuf>,
    profile: Profile,
) -> Result<ExitCode, CommandFailure> {
    let mut session = open(scope, file, profile)?;
    let input = ops::ExportInput {
        format,
        leaf,
        out,
        default_dir: Some(PathBuf::from(".")),
    };
    let exported = ops::export(scope, &mut session, input).map_err(op_failed(Some(file)))?;
    emit(&format!("{}\n", exported.path.display()))?;
    Ok(ExitCode::SUCCESS)
}

fn replay(
    scope: &ops::Scope,
    ops: &Path,
    out_dir: &Path,
    profile: Profile,
    seed: Option<u64>,
) -> Result<ExitCode, CommandFailure> {
    let script = std::fs::read(ops)
        .map_err(|e| e.to_string())
        .and_then(|b| json::parse_bytes(&b).map_err(|e| e.to_string()))
        .map_err(|e| CommandFailure::Usage(format!("{}: {e}", ops.display())))?;
    let ids = inspect::replay_ids(seed);
    match inspect::replay_ops(scope.repo.env(), &script, out_dir, profile, Arc::new(ids)) {
        ReplayOutcome::Done(doc) => {
            emit(&(inspect::sorted_keys(doc).stringify_pretty(2) + "\n"))?;
            Ok(ExitCode::SUCCESS)
        }
        ReplayOutcome::OpFailed { op, error } => Err(CommandFailure::Store {
            file: None,
            error: StoreError {
                message: format!("op #{op}: {} ({})", error.message, error.kind_name()),
                ..error
            },
        }),
        ReplayOutcome::Usage(message) => Err(CommandFailure::Usage(format!(
            "{}: {message}",
            ops.display()
        ))),
    }
}
