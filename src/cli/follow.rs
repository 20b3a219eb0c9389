//! `pi-session tree --follow`: the tree, then each entry another program appends, as it is
//! appended, through the same follow loop the server's `session/watch` runs ([`ops::follow`]).

use std::io::{self, Write};
use std::ops::ControlFlow;
use std::path::Path;
use std::process::ExitCode;

use crate::format::profile::Profile;
use crate::inspect;
use crate::ops;
use crate::store::watch::FileWatcher;

use super::{CommandFailure, emit, open, warn};

/// Prints the tree, then the rows of new entries until SIGINT/SIGTERM, the reader of the
/// output going away (status 0), or the file being deleted, replaced or cut (status 1, one
/// line on stderr).
pub(crate) fn tree(
    scope: &ops::Scope,
    file: &Path,
    profile: Profile,
) -> Result<ExitCode, CommandFailure> {
    let mut session = open(scope, file, profile)?;
    // Watching before the first print: nothing appended in between is missed.
    let watcher = FileWatcher::new().map_err(CommandFailure::in_file(file))?;
    let watch = watcher.watch(file).map_err(CommandFailure::in_file(file))?;
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
    emit(&inspect::render_tree(&session).map_err(CommandFailure::in_file(file))?)?;
    let output_closed = output_closed();
    let followed = ops::FollowedFiles::one((), watch.changes());
    // Each look is quick and prints as it goes: it runs here, between waits.
    let printing = ops::follow(&followed, |()| {
        let looked = ops::look(
            &mut session,
            |e| CommandFailure::in_file(file)(e),
            |session, before| {
                // Told here, by printing; nothing else would take them.
                session.take_foreign();
                if session.len() > before {
                    let rows = inspect::render_tree_from(session, before as u32)
                        .map_err(CommandFailure::in_file(file))?;
                    emit(&rows)?;
                }
                Ok(())
            },
        );
        std::future::ready(match looked {
            Ok(ops::Look::Going) => ControlFlow::Continue(()),
            Ok(ops::Look::Ended { message, .. }) => {
                warn(format_args!("{message}"));
                ControlFlow::Break(Ok(ExitCode::FAILURE))
            }
            Err(failure) => ControlFlow::Break(Err(failure)),
        })
    });
    runtime.block_on(async move {
        tokio::select! {
            result = printing => result,
            _ = interrupt.recv() => Ok(ExitCode::SUCCESS),
            _ = terminate.recv() => Ok(ExitCode::SUCCESS),
            _ = output_closed => Ok(ExitCode::SUCCESS),
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

/// `pi-session watch --all`: the store's live feed.
#[derive(clap::Args, Debug)]
pub struct WatchArgs {
    /// Every project of the store (the sessions root).
    #[arg(long, required_unless_present_any = ["cwd", "dir"])]
    all: bool,
    /// Only the sessions of the project in this directory.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["all", "dir"])]
    cwd: Option<String>,
    /// The sessions root, or one project folder in it.
    #[arg(long, value_name = "FOLDER", conflicts_with = "all")]
    dir: Option<std::path::PathBuf>,
    /// Go on after this cursor (the last one printed before; `0`: the whole store from the
    /// start of the index's change log). Without it: what happens from now on.
    #[arg(long, value_name = "CURSOR")]
    since: Option<String>,
    /// Look at the files every 500 ms instead of waiting for the OS's change events (always
    /// so on network and FUSE file systems).
    #[arg(long)]
    poll: bool,
    /// One JSON line per event (flushed as it is written).
    #[arg(long)]
    json: bool,
    /// pi-cli (pi 0.82.1, default), pi-1.6 or harness: whose reading; one index per profile.
    #[arg(long, default_value = "pi-cli", value_parser = super::parse_profile)]
    profile: Profile,
}

/// Prints the store's events after `--since` (or from now on), then each as it happens, until
/// SIGINT/SIGTERM or the reader of the output going away (status 0).
pub fn watch_store(scope: &ops::Scope, args: WatchArgs) -> Result<ExitCode, CommandFailure> {
    let input = ops::FeedInput {
        profile: Some(args.profile),
        cwd: args.cwd,
        dir: args.dir,
        since: args.since,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (mut interrupt, mut terminate) = {
        use tokio::signal::unix::{SignalKind, signal};
        let _entered = runtime.enter();
        (
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        )
    };
    let mut feed = ops::Feed::open(scope, input).map_err(CommandFailure::from)?;
    // Watching before the first look: nothing changed in between is missed.
    let watch =
        crate::store::tree_watch::TreeWatch::new(feed.root(), args.poll).map_err(super::fail)?;
    if let crate::store::tree_watch::WatchMode::Poll(why) = watch.mode {
        tracing::info!("polling {} ({why})", feed.root().display());
    }
    let json = args.json;
    let mut print = move |event: ops::StoreEvent| -> Result<(), CommandFailure> {
        let line = if json {
            serde_json::to_string(&event).map_err(|e| io::Error::other(e.to_string()))?
        } else {
            let what = match &event.old_path {
                Some(old) => format!("{} -> {}", old.display(), event.path.display()),
                None => event.path.display().to_string(),
            };
            format!(
                "{} {:?} {what} entries {}..{}",
                event.cursor, event.kind, event.from, event.to
            )
        };
        emit(&(line + "\n"))
    };
    let output_closed = output_closed();
    let followed = ops::FollowedFiles::one((), watch.changes());
    let mut look = move || feed.step(&mut print);
    let printing = async {
        look()?;
        ops::follow(&followed, |()| {
            std::future::ready(match look() {
                Ok(()) => ControlFlow::Continue(()),
                Err(failure) => ControlFlow::Break(failure),
            })
        })
        .await;
        Ok::<_, CommandFailure>(())
    };
    runtime.block_on(async move {
        tokio::select! {
            result = printing => result.map(|()| ExitCode::SUCCESS),
            _ = interrupt.recv() => Ok(ExitCode::SUCCESS),
            _ = terminate.recv() => Ok(ExitCode::SUCCESS),
            _ = output_closed => Ok(ExitCode::SUCCESS),
        }
    })
}

impl From<ops::OpError> for CommandFailure {
    fn from(error: ops::OpError) -> Self {
        super::op_failed(None)(error)
    }
}
