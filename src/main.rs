//! The command line: `pi-session --stdio` serves JSON-RPC; the subcommands are offline views
//! of session files for people and scripts. The real work is in the library.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

mod cli_list;

use clap::{Parser, Subcommand};
use pi_session::format::ids::IdSource;
use pi_session::format::json;
use pi_session::format::write::Profile;
use pi_session::inspect::{self, LeafChoice, ReplayOutcome};
use pi_session::store::{ForkPosition, MessageFormat, Session, SessionOptions, StoreError};

#[derive(Parser)]
#[command(
    name = "pi-session",
    version,
    about = "pi-compatible sessions: inspect session files, or serve them over JSON-RPC"
)]
struct Cli {
    /// Serve JSON-RPC on stdin/stdout (see protocol/protocol.md).
    #[arg(long)]
    stdio: bool,

    #[command(flatten)]
    server: pi_session::rpc::StdioArgs,

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
    },
    /// List every problem in a session file with its line; exit status 0 when clean.
    Check {
        file: PathBuf,
        #[arg(long, default_value = "pi-cli", value_parser = parse_profile)]
        profile: Profile,
    },
    /// List sessions (pi's `/resume` list), newest activity first.
    List(cli_list::ListArgs),
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
}

fn parse_profile(text: &str) -> Result<Profile, String> {
    Profile::parse(text)
        .ok_or_else(|| format!("unknown profile {text:?} (expected pi-cli or harness)"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = match cli.command {
        Some(command) if !cli.stdio => command,
        Some(_) => {
            eprintln!("pi-session: --stdio takes no subcommand");
            return ExitCode::from(2);
        }
        None if cli.stdio => serve(cli.server),
        None => {
            eprintln!(
                "pi-session: nothing to do; run `pi-session --stdio` to serve JSON-RPC, or see --help"
            );
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Context {
            file,
            leaf,
            profile,
            llm,
        } => {
            let choice = match leaf.as_deref() {
                None => LeafChoice::Current,
                Some("null") => LeafChoice::Root,
                Some(id) => LeafChoice::Entry(id.to_string()),
            };
            let format = if llm {
                MessageFormat::Llm
            } else {
                MessageFormat::Agent
            };
            run(&file, profile, |session| {
                // Streamed: a 300,000-entry context is never held whole.
                inspect::write_context_document(
                    session,
                    &choice,
                    format,
                    &mut std::io::BufWriter::new(std::io::stdout().lock()),
                )?;
                Ok(ExitCode::SUCCESS)
            })
        }
        Command::Tree { file, profile } => run(&file, profile, |session| {
            print!("{}", inspect::render_tree(session)?);
            Ok(ExitCode::SUCCESS)
        }),
        Command::Check { file, profile } => check(&file, profile),
        Command::List(args) => cli_list::run(args),
        Command::Fork {
            file,
            entry,
            at,
            out,
        } => fork(&file, &entry, at, out.as_deref()),
        Command::Replay {
            ops,
            out_dir,
            profile,
            deterministic,
        } => replay(&ops, &out_dir, profile, deterministic),
    }
}

fn serve(args: pi_session::rpc::StdioArgs) -> ! {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("pi-session: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(pi_session::rpc::serve_stdio(args));
    // Exit here rather than returning: the runtime would otherwise wait for the blocking
    // thread still reading stdin, which may never see end of input.
    std::process::exit(code);
}

fn run(
    file: &Path,
    profile: Profile,
    view: impl FnOnce(&mut Session) -> Result<ExitCode, StoreError>,
) -> ExitCode {
    let result = Session::open_read_only(file, SessionOptions::with_profile(profile)).and_then(
        |mut session| {
            for warning in session.warnings() {
                eprintln!("pi-session: {}: {}", file.display(), warning.message);
            }
            view(&mut session)
        },
    );
    result.unwrap_or_else(|e| fail(file, &e))
}

fn fail(file: &Path, error: &StoreError) -> ExitCode {
    let shown = file.display().to_string();
    if error.message.contains(&shown) {
        eprintln!("pi-session: {}", error.message);
    } else {
        eprintln!("pi-session: {shown}: {}", error.message);
    }
    ExitCode::FAILURE
}

fn check(file: &Path, profile: Profile) -> ExitCode {
    match inspect::check_file(file, SessionOptions::with_profile(profile)) {
        Err(e) => fail(file, &e),
        Ok(findings) => {
            let problems = findings.iter().filter(|f| !f.is_note).count();
            for f in &findings {
                let what = if f.is_note { "note" } else { "problem" };
                if f.line > 0 {
                    println!("{}:{}: {what}: {}", file.display(), f.line, f.message);
                } else {
                    println!("{}: {what}: {}", file.display(), f.message);
                }
            }
            if problems == 0 {
                println!("{}: ok", file.display());
                ExitCode::SUCCESS
            } else {
                println!("{}: {problems} problem(s)", file.display());
                ExitCode::FAILURE
            }
        }
    }
}

fn fork(file: &Path, entry: &str, at: bool, out: Option<&Path>) -> ExitCode {
    use pi_session::format::json::{JsObject, JsValue};
    let env = match pi_session::repo::PathEnv::from_process() {
        Ok(env) => env,
        Err(e) => {
            eprintln!("pi-session: {e}");
            return ExitCode::FAILURE;
        }
    };
    let position = if at {
        ForkPosition::At
    } else {
        ForkPosition::Before
    };
    let forked = match pi_session::repo::fork_file(
        &env,
        file,
        entry,
        position,
        out,
        Arc::new(IdSource::system()),
    ) {
        Ok(forked) => forked,
        Err(e) => return fail(file, &e),
    };
    let session = &forked.session;
    let mut doc = JsObject::new();
    let path = session.path().map(|p| p.to_string_lossy().into_owned());
    doc.insert("file".into(), path.map_or(JsValue::Null, JsValue::from));
    // pi writes a fork without an assistant message at its first reply; so does this fork.
    doc.insert("written".into(), JsValue::Bool(session.is_written()));
    doc.insert(
        "sessionId".into(),
        JsValue::from(session.session_id().as_ref()),
    );
    doc.insert(
        "leafId".into(),
        session.leaf().id().map_or(JsValue::Null, JsValue::from),
    );
    if let Some(text) = &forked.selected_text {
        doc.insert("selectedText".into(), JsValue::from(text.as_str()));
    }
    println!("{}", JsValue::Object(doc).stringify_pretty(2));
    ExitCode::SUCCESS
}

fn replay(ops: &Path, out_dir: &Path, profile: Profile, seed: Option<u64>) -> ExitCode {
    let script = match std::fs::read(ops)
        .map_err(|e| e.to_string())
        .and_then(|b| json::parse_bytes(&b).map_err(|e| e.to_string()))
    {
        Ok(script) => script,
        Err(e) => {
            eprintln!("pi-session: {}: {e}", ops.display());
            return ExitCode::from(2);
        }
    };
    // 2026-01-01T00:00:00.000Z
    let ids = seed.map_or_else(IdSource::system, |seed| {
        IdSource::deterministic(seed, 1_767_225_600_000)
    });
    match inspect::replay_ops(&script, out_dir, profile, Arc::new(ids)) {
        ReplayOutcome::Done(doc) => {
            println!("{}", inspect::sorted_keys(doc).stringify_pretty(2));
            ExitCode::SUCCESS
        }
        ReplayOutcome::OpFailed { op, error } => {
            eprintln!(
                "pi-session: op #{op}: {} ({})",
                error.message,
                error.kind_name()
            );
            ExitCode::FAILURE
        }
        ReplayOutcome::Usage(message) => {
            eprintln!("pi-session: {}: {message}", ops.display());
            ExitCode::from(2)
        }
    }
}
