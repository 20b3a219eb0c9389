//! `pi-session tree --follow`: the tree, then each entry another program appends, as it is
//! appended, through the same watch and follower the server's `session/watch` uses.

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::format::profile::Profile;
use crate::inspect;
use crate::ops;
use crate::store::GoneReason;
use crate::store::watch::FileWatcher;

use super::{Failure, emit, open, warn};

/// As the server's watch: a burst of appends gathers into one read.
const GATHER: Duration = Duration::from_millis(10);

/// Prints the tree, then the rows of new entries until SIGINT/SIGTERM, the reader of the
/// output going away (status 0), or the file being deleted, replaced or cut (status 1, one
/// line on stderr).
pub fn tree(scope: &ops::Scope, file: &Path, profile: Profile) -> Result<ExitCode, Failure> {
    let mut session = open(scope, file, profile)?;
    // Watching before the first print: nothing appended in between is missed.
    let watcher = FileWatcher::new().map_err(Failure::in_file(file))?;
    let watch = watcher.watch(file).map_err(Failure::in_file(file))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Listening from before the first print, once: a signal that comes while the tree or a
    // read is being printed waits in them (a listener made anew each time would miss it).
    let (mut interrupt, mut terminate) = {
        use tokio::signal::unix::{SignalKind, signal};
        let _entered = runtime.enter();
        (
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        )
    };
    emit(&inspect::render_tree(&session).map_err(Failure::in_file(file))?)?;
    let output_closed = output_closed();
    runtime.block_on(async move {
        let mut output_closed = output_closed;
        loop {
            tokio::select! {
                () = watch.changed() => {}
                _ = interrupt.recv() => return Ok(ExitCode::SUCCESS),
                _ = terminate.recv() => return Ok(ExitCode::SUCCESS),
                _ = &mut output_closed => return Ok(ExitCode::SUCCESS),
            }
            tokio::time::sleep(GATHER).await;
            let gone = session.file_gone().map_err(Failure::in_file(file))?;
            if let Some(gone) = &gone
                && gone.reason == GoneReason::Truncated
            {
                warn(format_args!("{}", gone.message));
                return Ok(ExitCode::FAILURE);
            }
            let before = session.len() as u32;
            session.follow_tail().map_err(Failure::in_file(file))?;
            // Told here, by printing; nothing else would take them.
            session.take_foreign();
            if session.len() as u32 > before {
                let rows =
                    inspect::render_tree_from(&session, before).map_err(Failure::in_file(file))?;
                emit(&rows)?;
            }
            if let Some(gone) = gone {
                warn(format_args!("{}", gone.message));
                return Ok(ExitCode::FAILURE);
            }
        }
    })
}

/// Resolves when the reader of stdout goes away (a pipe's other end closed), so a follower
/// that prints nothing for a while still ends with its reader. A thread of its own waits for
/// it (a poll with no events asked reports only the error and hang-up); it never holds up the
/// exit.
fn output_closed() -> tokio::sync::oneshot::Receiver<()> {
    let (closed, on_close) = tokio::sync::oneshot::channel();
    let _ = io::stdout().flush();
    std::thread::spawn(move || {
        let mut fd = libc::pollfd {
            fd: libc::STDOUT_FILENO,
            events: 0,
            revents: 0,
        };
        loop {
            // SAFETY: one valid pollfd, for the length of the call.
            let ready = unsafe { libc::poll(&mut fd, 1, -1) };
            if ready > 0 && fd.revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
                let _ = closed.send(());
                return;
            }
            if ready < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return;
            }
        }
    });
    on_close
}
