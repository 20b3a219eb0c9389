//! The integration tests, as one binary (the layout ripgrep and cargo use: `tests/<name>/main.rs`
//! with modules): one link for every change, one `support`. A test's name is its module and
//! function (`cargo test --test suite -- rpc_watch::`); a comparison with pi over many inputs is
//! one trial per case, named after its input, so `cargo test --test suite -- NAME` reruns
//! exactly it.
//!
//! The runner is libtest-mimic's (`harness = false` in Cargo.toml): each module ends with
//! `crate::tests! { ... }`, the list of its test functions, which makes its `trials()`. A test
//! function left out of the list is dead code, which the build refuses (`-D warnings`).
//! libtest-mimic takes libtest's arguments (`--list`, `--exact`, `--ignored`,
//! `--test-threads`, `--skip`, a filter); it does not capture output, so tests print only a
//! line or two (seeds, counts).
//!
//! Beside it: `tests/traffic.rs` (its `main` is the recording proxy the clients spawn as their
//! server). What each module checks is in `docs/testing.md`.

use libtest_mimic::Trial;

/// The registration of a module's tests: `crate::tests! { [sub::trials, more] a, b,
/// #[ignore = "why"] c, #[should_panic = "text"] d }` makes `pub(crate) fn trials()`, one trial
/// per function named `module::path::function` (the crate's name left out), plus the trials of
/// the functions in brackets (submodules, generated cases). `crate::tests!(@vec a, b)` is the
/// list alone, for a macro that makes test functions.
macro_rules! tests {
    (@vec $($(#[$attr:ident $(= $arg:literal)?])* $name:ident),* $(,)?) => {
        vec![$($crate::tests!(@one $name $(#[$attr $(= $arg)?])*)),*]
    };
    (@one $name:ident) => {
        $crate::harness::test(module_path!(), stringify!($name), $name)
    };
    (@one $name:ident #[ignore $(= $reason:literal)?]) => {
        $crate::harness::test(module_path!(), stringify!($name), $name).with_ignored_flag(true)
    };
    (@one $name:ident #[should_panic = $expected:literal]) => {
        $crate::harness::test(module_path!(), stringify!($name), || {
            $crate::harness::should_panic($expected, $name)
        })
    };
    ($([$($more:path),* $(,)?])? $($(#[$attr:ident $(= $arg:literal)?])* $name:ident),* $(,)?) => {
        /// This module's trials (`crate::tests!`).
        pub(crate) fn trials() -> Vec<libtest_mimic::Trial> {
            #[allow(unused_mut)]
            let mut trials: Vec<libtest_mimic::Trial> =
                $crate::tests!(@vec $($(#[$attr $(= $arg)?])* $name),*);
            $($(trials.extend($more());)*)?
            trials
        }
    };
}
pub(crate) use tests;

#[path = "../support/mod.rs"]
mod support;

mod harness;

pub(crate) use harness::with_pi;

mod branch_summary_conformance;
mod catalog;
mod cli;
mod cli_test_command;
mod clients;
mod compaction_conformance;
mod conformance;
mod export;
mod export_browser;
mod feed;
mod fork_conformance;
mod group_commit;
mod index_location;
mod navigate_conformance;
mod packaging;
mod pi16_store;
mod python_client;
mod reliability;
mod repo;
mod repo_cache;
mod repo_cli;
mod repo_errors;
mod repo_listing_select;
mod repo_versions;
mod rpc_error_kinds;
mod rpc_log_levels;
mod rpc_other_writers;
mod rpc_server;
mod rpc_session_stdio;
mod rpc_stdio;
mod rpc_transcripts;
mod rpc_tree_pages;
mod rpc_watch;
mod schema;
mod settings;
mod store;
mod store_reliability;
mod team;

fn main() {
    let (args, filters) = harness::arguments();
    let modules: &[fn() -> Vec<Trial>] = &[
        branch_summary_conformance::trials,
        catalog::trials,
        cli::trials,
        cli_test_command::trials,
        clients::trials,
        compaction_conformance::trials,
        conformance::trials,
        export::trials,
        export_browser::trials,
        feed::trials,
        fork_conformance::trials,
        group_commit::trials,
        index_location::trials,
        navigate_conformance::trials,
        packaging::trials,
        pi16_store::trials,
        python_client::trials,
        reliability::trials,
        repo::trials,
        repo_cache::trials,
        repo_cli::trials,
        repo_errors::trials,
        repo_listing_select::trials,
        repo_versions::trials,
        rpc_error_kinds::trials,
        rpc_log_levels::trials,
        rpc_other_writers::trials,
        rpc_server::trials,
        rpc_session_stdio::trials,
        rpc_stdio::trials,
        rpc_transcripts::trials,
        rpc_tree_pages::trials,
        rpc_watch::trials,
        schema::trials,
        settings::trials,
        store::trials,
        store_reliability::trials,
        team::trials,
    ];
    let trials = modules
        .iter()
        .flat_map(|trials| trials())
        .filter(|trial| harness::keep(trial.name(), &filters, args.exact))
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    harness::at_exit();
    conclusion.exit();
}
