//! What the suite's runner needs beside libtest-mimic: a trial made of a test function, named
//! after its module and function; `#[should_panic]`; the comparisons with pi reported as ignored
//! (with the reason) when they cannot run; and the work done when the run ends, whatever the
//! trials did (a shared PostgreSQL cluster stopped).

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, Once, OnceLock};

use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::support;

/// The name of a test: its module path without the crate's name, then the function.
pub fn name(module_path: &str, function: &str) -> String {
    match module_path.split_once("::") {
        Some((_, path)) => format!("{path}::{function}"),
        None => function.to_owned(),
    }
}

/// A trial running `test`, a panic being its failure.
pub fn test(module_path: &str, function: &str, test: impl FnOnce() + Send + 'static) -> Trial {
    Trial::test(name(module_path, function), move || {
        test();
        Ok(())
    })
}

/// Runs `test`, which must panic with a message containing `expected` (libtest's
/// `#[should_panic(expected = ...)]`).
pub fn should_panic(expected: &str, test: impl FnOnce()) {
    // The expected panic is not printed (libtest's capture hid it): the panic hook is told,
    // for this thread only.
    thread_local!(static EXPECTED: Cell<bool> = const { Cell::new(false) });
    static QUIET_HOOK: Once = Once::new();
    QUIET_HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !EXPECTED.get() {
                default(info);
            }
        }));
    });
    EXPECTED.set(true);
    let outcome = catch_unwind(AssertUnwindSafe(test));
    EXPECTED.set(false);
    let Err(payload) = outcome else {
        panic!("the test did not panic (it should have, with {expected:?})");
    };
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    assert!(
        message.contains(expected),
        "the test panicked with {message:?}, not with {expected:?}"
    );
}

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

type Cleanup = Box<dyn FnOnce() + Send>;

static AT_EXIT: Mutex<Vec<Cleanup>> = Mutex::new(Vec::new());

/// Runs `cleanup` when the run ends (after the last trial, whether trials passed, failed or
/// panicked), last registered first.
pub fn on_exit(cleanup: impl FnOnce() + Send + 'static) {
    AT_EXIT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Box::new(cleanup));
}

/// The end of the run: every `on_exit` cleanup, last first.
pub fn at_exit() {
    let cleanups = std::mem::take(&mut *AT_EXIT.lock().unwrap_or_else(|e| e.into_inner()));
    for cleanup in cleanups.into_iter().rev() {
        cleanup();
    }
    print_tallies();
}

/// The command line as libtest-mimic reads it, and the filters beyond its one: libtest takes
/// several (`cargo test -- a:: b::` runs the tests matching either), libtest-mimic one. With two
/// or more, they are taken out of the arguments and applied here ([`keep`]).
pub fn arguments() -> (Arguments, Vec<String>) {
    let args: Vec<String> = std::env::args().collect();
    // The options of libtest-mimic's that take a value (a following argument, unless `=` joins it).
    const WITH_VALUE: &[&str] = &[
        "--test-threads",
        "--logfile",
        "--skip",
        "--color",
        "--format",
        "-Z",
    ];
    let mut filters = Vec::new();
    let mut rest = vec![args[0].clone()];
    let mut iter = args.into_iter().skip(1);
    while let Some(arg) = iter.next() {
        if arg == "--" {
            filters.extend(iter.by_ref());
        } else if WITH_VALUE.contains(&arg.as_str()) {
            rest.push(arg);
            rest.extend(iter.next());
        } else if arg.starts_with('-') {
            rest.push(arg);
        } else {
            filters.push(arg);
        }
    }
    if filters.len() < 2 {
        rest.append(&mut filters);
    }
    (Arguments::from_iter(rest), filters)
}

/// Whether a trial named `name` passes the filters [`arguments`] took out (all kept when none).
pub fn keep(name: &str, filters: &[String], exact: bool) -> bool {
    filters.is_empty()
        || filters.iter().any(|f| {
            if exact {
                name == f
            } else {
                name.contains(f.as_str())
            }
        })
}

/// What many trials share, made once by the first of them that asks (one run of pi's code for a
/// whole sweep of cases), the others waiting for it. If making it panics, every trial that asks
/// fails with that panic's message (the first one's included), never passes.
pub struct Shared<T: 'static> {
    cell: OnceLock<Result<T, String>>,
    make: fn() -> T,
}

impl<T: Send + Sync + 'static> Shared<T> {
    pub const fn new(make: fn() -> T) -> Shared<T> {
        Shared {
            cell: OnceLock::new(),
            make,
        }
    }

    pub fn get(&'static self) -> &'static T {
        let made = self
            .cell
            .get_or_init(|| catch_unwind(self.make).map_err(|payload| panic_message(&*payload)));
        match made {
            Ok(value) => value,
            Err(message) => panic!("the shared part of this sweep failed: {message}"),
        }
    }
}

/// The text a panic was raised with.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "(a panic without a message)".to_owned())
}

static TALLIES: Mutex<std::collections::BTreeMap<String, usize>> =
    Mutex::new(std::collections::BTreeMap::new());

/// Adds `n` comparisons with pi's output to `sweep`'s count, printed once when the run ends
/// (`oracle comparisons: N in SWEEP`, as `support::count` prints it), so that a sweep of
/// hundreds of trials prints one line, not hundreds.
pub fn tally(sweep: &str, n: usize) {
    *TALLIES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(sweep.to_owned())
        .or_default() += n;
}

fn print_tallies() {
    let tallies = std::mem::take(&mut *TALLIES.lock().unwrap_or_else(|e| e.into_inner()));
    for (sweep, n) in tallies {
        support::count(&sweep, n);
    }
}

/// A trial that compares with pi and may find, once pi's code has run, that its case does not
/// exist in this input: `check` answers `Err(reason)`, and the trial is reported as ignored
/// with it. Without pi's code, ignored with the opt-out's reason.
pub fn with_pi_or_absent(
    name: impl Into<String>,
    check: impl FnOnce() -> Result<(), String> + Send + 'static,
) -> Trial {
    Trial::ignorable_test(name, move || {
        if support::oracle::opted_out() {
            return Ok(Completion::ignored_with(support::oracle::opt_out_reason()));
        }
        Ok::<_, Failed>(match check() {
            Ok(()) => Completion::Completed,
            Err(reason) => Completion::ignored_with(reason),
        })
    })
}
