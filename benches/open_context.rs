//! Open a large session and build its context, with this program and with pi, side by side.
//!
//! `cargo bench --bench open_context` generates (once) a 100 MB session with the
//! generator (`tests/oracle/gen-session.mjs`), then runs each side in a fresh process several times and prints the best wall
//! time and the peak resident memory of each, and their ratios. `BENCH_SIZE=500MB` changes the
//! file; `BENCH_RUNS` the number of runs. Needs Node and the oracle install (scripts/setup-oracle.sh).

use std::path::Path;

use pi_session::internal::format::profile::Profile;
use pi_session::internal::store::{MessageFormat, Session, SessionOptions};

#[path = "support/side_by_side.rs"]
mod side_by_side;

fn main() {
    side_by_side::run("open + build context", "pi-open-context.mjs", child);
}

/// The child side: open and build the context in this process.
fn child(file: &Path) {
    let mut session = Session::open_read_only(file, SessionOptions::with_profile(Profile::PiCli))
        .expect("session opens");
    let leaf = session.leaf().clone();
    let context = session
        .build_context(&leaf, MessageFormat::Agent)
        .expect("context builds");
    assert!(!context.messages.is_empty());
}
