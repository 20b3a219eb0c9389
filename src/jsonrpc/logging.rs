//! Logs go to stderr or a file, never to stdout, which carries protocol bytes only.

use std::fs::OpenOptions;
use std::path::Path;
use std::sync::Arc;

use tracing_subscriber::EnvFilter;

/// The filter when none is given or it is invalid.
const DEFAULT_FILTER: &str = "warn";

/// Sends `tracing` output to `log_file` (appended) or else to stderr, filtered by `filter`
/// (`tracing` directives, from the configuration). Fails only when the log file cannot be
/// opened. Calling it again is harmless: the first subscriber stays.
pub fn init_logging(log_file: Option<&Path>, filter: Option<&str>) -> std::io::Result<()> {
    let filter = filter
        .and_then(|f| EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| EnvFilter::new(DEFAULT_FILTER));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false);
    let installed = match log_file {
        Some(path) => {
            let file = OpenOptions::new().create(true).append(true).open(path)?;
            builder.with_writer(Arc::new(file)).try_init()
        }
        None => builder.with_writer(std::io::stderr).try_init(),
    };
    if installed.is_err() {
        tracing::debug!("a log subscriber was already installed");
    }
    Ok(())
}

/// For command-line commands: logs to stderr only when a filter asks for them (their stderr
/// carries the reading warnings, which must not be doubled by log lines).
pub fn init_cli_logging(filter: Option<&str>) {
    if filter.is_some_and(|f| !f.is_empty()) {
        let _ = init_logging(None, filter);
    }
}
