//! Exiting with the client: when the process named by `initialize.processId` dies, so does the
//! server (a sidecar outliving its front-end would hold session locks for nobody).

use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;

use super::stop::{StopHandle, StopReason};

/// Checks `pid` every `interval` and asks the server to stop when it is gone.
pub(crate) fn watch_parent(pid: i32, interval: Duration, stop: StopHandle) -> JoinHandle<()> {
    // If the client is our parent, being reparented is proof of its death even when its pid
    // lingers (a zombie not yet reaped answers kill(pid, 0)).
    let is_our_parent = i64::from(std::os::unix::process::parent_id()) == i64::from(pid);
    tokio::spawn(async move {
        // tokio refuses a zero period.
        let mut ticks = tokio::time::interval(interval.max(Duration::from_millis(1)));
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            if !is_alive(pid, is_our_parent) {
                tracing::info!("parent process {pid} is gone; stopping");
                stop.stop(StopReason::ParentDied(pid));
                return;
            }
        }
    })
}

fn is_alive(pid: i32, is_our_parent: bool) -> bool {
    if is_our_parent && i64::from(std::os::unix::process::parent_id()) != i64::from(pid) {
        return false;
    }
    // SAFETY: signal 0 sends nothing; kill only checks that the process exists and may be
    // signalled. `pid` is positive (checked at initialize), so it names one process.
    let result = unsafe { libc::kill(pid, 0) };
    // EPERM means it exists but belongs to someone else: alive.
    result == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reaped_child_is_dead_and_we_are_alive() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        child.wait().unwrap();
        assert!(!is_alive(pid, false));
        assert!(is_alive(std::process::id() as i32, false));
    }
}
