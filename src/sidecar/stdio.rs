//! `pi-session --stdio`: the sidecar over the process's stdin and stdout, with signals.

use std::os::fd::AsFd;
use std::path::PathBuf;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

use super::session_server;
use crate::jsonrpc::logging::init_logging;
use crate::jsonrpc::{DEFAULT_MAX_FRAME_BYTES, Deterministic, Framing, ServerOptions, Signals};
use crate::ops::{Config, ProcessVars};
use crate::repo::RepoError;

/// Command-line options of the stdio server (flatten into the binary's parser).
#[derive(Debug, Clone, clap::Args)]
pub struct StdioArgs {
    /// How messages are framed: decided by the client's first byte, LSP headers, or one JSON
    /// message per line.
    #[arg(long, value_enum, default_value_t = Framing::Auto)]
    pub framing: Framing,

    /// Frames larger than this many bytes are refused without being read into memory.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_FRAME_BYTES)]
    pub max_frame_bytes: usize,

    /// Append logs to this file instead of stderr (the filter is PI_SESSION_LOG, default warn).
    #[arg(long, value_name = "PATH")]
    pub log_file: Option<PathBuf>,

    /// Reproducible ids and timestamps (seed 0, clock from 2025-01-01T00:00:00.000Z);
    /// `initialize.deterministic` overrides.
    #[arg(long)]
    pub deterministic: bool,
}

impl StdioArgs {
    /// The server options these arguments ask for.
    pub fn server_options(&self) -> ServerOptions {
        ServerOptions {
            framing: self.framing,
            max_frame_bytes: self.max_frame_bytes,
            deterministic: self.deterministic.then(Deterministic::default),
            ..ServerOptions::default()
        }
    }
}

/// Serves the sidecar on stdin/stdout until `exit`, end of input, SIGTERM/SIGINT or the
/// parent's death, and returns the process exit code (0 after `shutdown`, 1 otherwise, 2 if
/// it could not start).
pub async fn serve_stdio(args: StdioArgs) -> i32 {
    serve_stdio_with(args, Config::from_process()).await
}

/// [`serve_stdio`] under `config` (the command line's, with its flags). A configuration that
/// could not be read is reported to each method that needs it; the server still starts.
pub(crate) async fn serve_stdio_with(args: StdioArgs, config: Result<Config, RepoError>) -> i32 {
    let log_filter = match &config {
        Ok(config) => config.log_filter.clone(),
        Err(_) => Config::log_filter_of(&ProcessVars),
    };
    if let Err(error) = init_logging(args.log_file.as_deref(), log_filter.as_deref()) {
        let path = args.log_file.as_deref().unwrap_or_else(|| "".as_ref());
        eprintln!(
            "pi-session: cannot open the log file {}: {error}",
            path.display()
        );
        return 2;
    }
    raise_open_files_limit();
    let signals = match Signals::listen() {
        Ok(signals) => signals,
        Err(error) => {
            eprintln!("pi-session: cannot listen for signals: {error}");
            return 2;
        }
    };
    let server = session_server::server_with(args.server_options(), config).with_signals(signals);
    let outcome = server.serve(input(), output()).await;
    tracing::info!(
        "stopped ({}), exit code {}",
        outcome.reason,
        outcome.exit_code()
    );
    outcome.exit_code()
}

/// Raises the soft limit on open files to the hard one: every open session holds its file
/// open, and a client may keep a thousand sessions open. A refusal leaves the limit as it is.
fn raise_open_files_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit for the call to fill in.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        tracing::debug!(
            "open-files limit not read: {}",
            std::io::Error::last_os_error()
        );
        return;
    }
    if limit.rlim_cur >= limit.rlim_max {
        tracing::debug!(
            "open-files limit {} (already the hard limit)",
            limit.rlim_cur
        );
        return;
    }
    let from = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    // SAFETY: `limit` is a valid rlimit, read above, asking for no more than the hard limit.
    match unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } {
        0 => tracing::debug!("open-files limit raised from {from} to {}", limit.rlim_cur),
        _ => tracing::debug!(
            "open-files limit left at {from}: {}",
            std::io::Error::last_os_error()
        ),
    }
}

/// stdin as the server reads it. A pipe (the usual case: a parent process spawned us) is read
/// without blocking, straight from the reactor; anything else (a terminal, a file) through
/// tokio's blocking stdin, which costs thread hand-offs on every read.
fn input() -> Box<dyn AsyncRead + Unpin + Send> {
    let pipe = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Receiver::from_owned_fd);
    match pipe {
        Ok(pipe) => Box::new(pipe),
        Err(error) => {
            tracing::debug!("stdin is read with blocking reads: {error}");
            Box::new(tokio::io::stdin())
        }
    }
}

/// stdout as the server writes it: a pipe without blocking, anything else through tokio's
/// blocking stdout (see [`input`]).
fn output() -> Box<dyn AsyncWrite + Unpin + Send> {
    let pipe = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Sender::from_owned_fd);
    match pipe {
        Ok(pipe) => Box::new(pipe),
        Err(error) => {
            tracing::debug!("stdout is written with blocking writes: {error}");
            Box::new(tokio::io::stdout())
        }
    }
}
