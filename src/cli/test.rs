//! `pi-session test FILE...`: plays transcripts (`protocol/transcripts.md`) against a fresh
//! server each, in its own process, and reports every failed expectation with its file, line,
//! message and member.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{CommandFailure, emit, warn};
use crate::transcript::process::ChildServer;
use crate::transcript::{Places, StateKind, Tmp, Transcript, play};

/// The command's exit statuses, for its `--help`.
const EXIT_CODES: &str = "\
Exit status:
  0  every transcript passed
  1  a transcript failed (its report on stdout: FILE:LINE, the message and every member)
  2  a transcript cannot be read or played (FILE:LINE:COLUMN on stderr; then none is played),
     no transcript matches, or the server cannot start";

#[derive(clap::Args)]
#[command(after_help = EXIT_CODES)]
pub(crate) struct TestArgs {
    /// Transcript files, or directories whose `*.json` files are played (not their
    /// subdirectories).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The server to test, started as `PATH --stdio` for every transcript (default: this
    /// pi-session).
    #[arg(long, value_name = "PATH")]
    bin: Option<PathBuf>,
    /// Play only the transcripts whose path contains TEXT.
    #[arg(long, value_name = "TEXT")]
    filter: Option<String>,
    /// Where `copyFixture` steps copy from (default: `fixtures` beside the transcript's
    /// directory, as tests/fixtures is beside tests/transcripts).
    #[arg(long, value_name = "DIR")]
    fixtures: Option<PathBuf>,
    /// How long to wait for each server message, and for the server to exit, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = parse_seconds)]
    timeout: f64,
    /// Print one JSON document (every transcript's outcome and whole exchange) instead of text.
    #[arg(long)]
    json: bool,
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds.is_finite() => Ok(seconds),
        _ => Err(format!("{text:?} is not a positive number of seconds")),
    }
}

/// One transcript's outcome.
struct Outcome {
    file: PathBuf,
    /// The line the failure points at (0: the file as a whole) and the report.
    failure: Option<(usize, String)>,
    exit_code: Option<i32>,
    stderr: String,
    exchange: Vec<Value>,
    elapsed: Duration,
}

pub(crate) fn run(args: TestArgs) -> Result<ExitCode, CommandFailure> {
    let files = transcript_files(&args)?;
    let mut transcripts = Vec::new();
    let mut unreadable = 0;
    for file in files {
        match read(&file) {
            Ok(transcript) => transcripts.push((file, transcript)),
            Err(message) => {
                warn(format_args!("{message}"));
                unreadable += 1;
            }
        }
    }
    if unreadable > 0 {
        warn(format_args!(
            "{unreadable} transcript(s) cannot be played; none was played"
        ));
        return Ok(ExitCode::from(2));
    }
    let bin = match &args.bin {
        // The server starts in the transcript's directory: a relative path is made absolute
        // first; a bare name is looked up on PATH.
        Some(bin) if bin.components().count() > 1 => std::path::absolute(bin)
            .map_err(|e| CommandFailure::Usage(format!("{}: {e}", bin.display())))?,
        Some(bin) => bin.clone(),
        None => std::env::current_exe()
            .map_err(|e| CommandFailure::Usage(format!("cannot find this executable: {e}")))?,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandFailure::Usage(format!("cannot start the async runtime: {e}")))?;
    let timeout = Duration::from_secs_f64(args.timeout);
    let mut outcomes = Vec::new();
    for (file, transcript) in transcripts {
        let fixtures = args
            .fixtures
            .clone()
            .unwrap_or_else(|| default_fixtures(&file));
        let outcome = runtime
            .block_on(play_one(&file, &transcript, &bin, fixtures, timeout))
            .map_err(CommandFailure::Usage)?;
        if !args.json {
            emit(&render(&outcome))?;
        }
        outcomes.push(outcome);
    }
    let failed = outcomes.iter().filter(|o| o.failure.is_some()).count();
    let passed = outcomes.len() - failed;
    if args.json {
        emit(&(serde_json::to_string_pretty(&json_report(&outcomes)).unwrap() + "\n"))?;
    } else {
        emit(&format!(
            "{} transcript(s): {passed} passed, {failed} failed\n",
            outcomes.len()
        ))?;
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The files named, directories opened (their `*.json`, sorted), the filter applied.
fn transcript_files(args: &TestArgs) -> Result<Vec<PathBuf>, CommandFailure> {
    let mut files = Vec::new();
    for path in &args.files {
        if path.is_dir() {
            let entries = std::fs::read_dir(path)
                .map_err(|e| CommandFailure::Usage(format!("{}: {e}", path.display())))?;
            let mut found = Vec::new();
            for entry in entries {
                let entry =
                    entry.map_err(|e| CommandFailure::Usage(format!("{}: {e}", path.display())))?;
                let file = entry.path();
                if file.extension().is_some_and(|e| e == "json") && !file.is_dir() {
                    found.push(file);
                }
            }
            if found.is_empty() {
                return Err(CommandFailure::Usage(format!(
                    "{}: no *.json transcript in this directory",
                    path.display()
                )));
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    if let Some(filter) = &args.filter {
        files.retain(|file| file.to_string_lossy().contains(filter.as_str()));
        if files.is_empty() {
            return Err(CommandFailure::Usage(format!(
                "no transcript's path contains {filter:?}"
            )));
        }
    }
    Ok(files)
}

/// Reads a transcript this command can play; the error is `FILE:LINE[:COLUMN]: why`.
fn read(file: &Path) -> Result<Transcript, String> {
    let transcript = Transcript::read(file)?;
    if transcript.server.state == StateKind::Test {
        return Err(format!(
            "{}:{}: server.state \"test\" asks for the project's test-only server, which only \
             `cargo test --test suite -- rpc_transcripts::` provides; pi-session test plays transcripts \
             against the sidecar (leave server.state out)",
            file.display(),
            transcript.server_line
        ));
    }
    Ok(transcript)
}

/// `fixtures` beside the directory that holds the transcript.
fn default_fixtures(file: &Path) -> PathBuf {
    let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    let dir = file.parent().unwrap_or(Path::new("."));
    dir.parent().unwrap_or(dir).join("fixtures")
}

/// Plays one transcript against a fresh server; an error means the server could not start.
async fn play_one(
    file: &Path,
    transcript: &Transcript,
    bin: &Path,
    fixtures: PathBuf,
    timeout: Duration,
) -> Result<Outcome, String> {
    let started = Instant::now();
    let tmp = Tmp::new().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let mut server = ChildServer::spawn(bin, &transcript.server, transcript.framing, &tmp, timeout)
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    let places = Places { tmp, fixtures };
    let (mut exchange, played) = play(transcript, &mut server, &places).await;
    let ending = server.finish().await;
    let mut failure = played.err().map(|f| (f.line, f.report));
    if failure.is_none() && ending.unread_count > 0 {
        let mut unread: Vec<String> = ending
            .unread
            .iter()
            .map(|m| format!("  {}", places.tmp.hide(m.clone())))
            .collect();
        if ending.unread_count > unread.len() {
            unread.push(format!(
                "  ... and {} more",
                ending.unread_count - unread.len()
            ));
        }
        failure = Some((
            0,
            format!(
                "the server sent {} message(s) that no expect step read:\n{}",
                ending.unread_count,
                unread.join("\n")
            ),
        ));
    }
    let exit_code = match ending.exit_code {
        Ok(code) => {
            exchange.push(json!({ "exit": { "code": code } }));
            if let Some(wanted) = transcript.exit_code
                && wanted != code
                && failure.is_none()
            {
                failure = Some((
                    0,
                    format!(
                        "the server exited with status {code}; the transcript expects {wanted}"
                    ),
                ));
            }
            Some(code)
        }
        Err(why) => {
            if failure.is_none() {
                failure = Some((0, why));
            }
            None
        }
    };
    Ok(Outcome {
        file: file.to_path_buf(),
        failure,
        exit_code,
        stderr: ending.stderr,
        exchange,
        elapsed: started.elapsed(),
    })
}

/// How many of the last lines of the server's stderr a failure shows.
const STDERR_LINES: usize = 20;

fn render(outcome: &Outcome) -> String {
    let file = outcome.file.display();
    let Some((line, report)) = &outcome.failure else {
        return format!("ok   {file} ({} ms)\n", outcome.elapsed.as_millis());
    };
    let place = if *line > 0 {
        format!("{file}:{line}")
    } else {
        file.to_string()
    };
    let mut out = format!("FAIL {place}: {report}\n");
    let lines: Vec<&str> = outcome.stderr.lines().collect();
    if !lines.is_empty() {
        out += "  the server's stderr (its last lines):\n";
        for line in &lines[lines.len().saturating_sub(STDERR_LINES)..] {
            out += &format!("    {line}\n");
        }
    }
    out
}

fn json_report(outcomes: &[Outcome]) -> Value {
    let failed = outcomes.iter().filter(|o| o.failure.is_some()).count();
    let transcripts: Vec<Value> = outcomes
        .iter()
        .map(|o| {
            let mut entry = json!({
                "file": o.file.to_string_lossy(),
                "passed": o.failure.is_none(),
                "exitCode": o.exit_code,
                "ms": o.elapsed.as_millis() as u64,
            });
            if let Some((line, report)) = &o.failure {
                entry["line"] = json!(line);
                entry["failure"] = json!(report);
                entry["stderr"] = json!(o.stderr);
            }
            entry["exchange"] = Value::Array(o.exchange.clone());
            entry
        })
        .collect();
    json!({
        "passed": outcomes.len() - failed,
        "failed": failed,
        "transcripts": transcripts,
    })
}
