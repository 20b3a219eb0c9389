//! Comparisons with pi's own code over many inputs, one trial per case (a libtest-mimic runner:
//! `harness = false` in Cargo.toml), so a failing case is named by its input and
//! `cargo test --test cases -- NAME` reruns exactly it. The oracle (pi's code) is installed once,
//! by the first trial that needs it, and shared; where a suite batches its inputs, one run of
//! pi's code answers them all, made by the first of its trials and shared by the rest.
//! Without the oracle (`PI_SESSION_NO_ORACLE=1`) every trial is reported as ignored, with the
//! reason: a comparison that was not made is never a pass.
//!
//! - `settings`: pi's `settings.json` sections, one trial per generated pair of files;
//! - `repo`: the listing, `continueRecent`, paths and dates: one trial per test, the agent
//!   directory one per setting, the paths one per working directory, the dates one per text.
//!
//! The rest of the integration tests are one ordinary binary, `tests/suite/`.

#[path = "../support/mod.rs"]
mod support;

mod repo;
mod settings;

use libtest_mimic::{Arguments, Completion, Failed, Trial};

/// A trial that compares with pi: reported as ignored, with the reason, when the suite was told
/// to run without pi's code; otherwise run, a panic being its failure.
pub fn with_pi(name: impl Into<String>, check: impl FnOnce() + Send + 'static) -> Trial {
    Trial::ignorable_test(name, move || {
        if support::oracle::opted_out() {
            return Ok(Completion::ignored_with(support::oracle::opt_out_reason()));
        }
        check();
        Ok::<_, Failed>(Completion::Completed)
    })
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = settings::trials();
    trials.extend(repo::trials());
    libtest_mimic::run(&args, trials).exit();
}
