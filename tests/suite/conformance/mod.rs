//! Differential conformance: `pi-session` against pi 0.82.1 and 1.6.0 themselves (the oracle in
//! `tests/oracle/`, which runs pi's published JavaScript). Profile `pi-cli` must answer as the
//! oracle's `manager` (0.82.1), profile `pi-1.6` as its `manager-1.6`, profile `harness` as its
//! `harness`. Every file, replay and written file is read in all three profiles, so a pi 1.6
//! file read in `pi-cli` must equal 0.82.1's reading (and warn: `files.rs`).
//!
//! - `fixtures`: the real v1 sessions in `tests/fixtures/real/`;
//! - `generated`: sessions of a few MB (branches, summaries, labels, compactions) written by
//!   the generator (`tests/oracle/gen-session.mjs`), at their leaf, at `--leaf null` and at a spread of entries;
//! - `replays`: every op script in `tests/ops/` replayed by both, the written files compared
//!   line by line, then read back by both at many leaves.
//!
//! Where pi invents ids or reads the clock, both sides are normalized the same way
//! (`normalize.rs`). The normalized documents are also insta snapshots
//! (`tests/suite/snapshots/`). With `PI_SESSION_NO_ORACLE=1` these tests fail, naming the
//! variable (`support::oracle`): a comparison with pi that was not made is not a pass.

mod cases;
mod diff;
mod env;
mod files;
mod fixtures;
mod generated;
mod index;
mod leaves;
mod normalize;
mod replays;
mod snapshot;

crate::tests! {
    [files::trials, fixtures::trials, generated::trials, index::trials, replays::trials]
}
