//! Prepare a compaction of a large session (open, `prepareCompaction` at the leaf, the model
//! requests `compact()` would send), with this program and with pi, side by side.
//!
//! `cargo bench --bench compaction` generates (once) a 100 MB session with the generator
//! (`tests/oracle/gen-session.mjs`, the same file as `open_context`), then runs each side in a
//! fresh process several times and prints the best wall time and the peak resident memory of
//! each, and their ratios. `BENCH_SIZE=500MB` changes the
//! file; `BENCH_RUNS` the number of runs. Needs Node and the oracle install (scripts/setup-oracle.sh).

use std::path::Path;

use pi_session::Profile;
use pi_session::compaction::{CompactionSettings, ModelOptions};
use pi_session::{Session, SessionOptions};

#[path = "support/side_by_side.rs"]
mod side_by_side;

fn main() {
    side_by_side::run(
        "open + prepareCompaction + requests",
        "pi-compaction-prepare.mjs",
        child,
    );
}

/// The child side: open, prepare and build the requests in this process.
fn child(file: &Path) {
    let mut session = Session::open_read_only(file, SessionOptions::with_profile(Profile::PiCli))
        .expect("session opens");
    let leaf = session.leaf().clone();
    let preparation = session
        .prepare_compaction(&leaf, CompactionSettings::default())
        .expect("pi would compact this session");
    let model = ModelOptions {
        thinking_level: session.compaction_thinking_level(&leaf).unwrap(),
        ..ModelOptions::default()
    };
    let requests = preparation.requests(None, &model).expect("requests build");
    assert!(!requests.is_empty());
}
