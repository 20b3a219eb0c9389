//! The persisted index changes no answer: `context`, `tree` and `check` print the same bytes
//! (and the same warnings) with the index off, with a fresh index, with a current one, with one
//! the file outgrew (pi's own SessionManager appended, or a torn line was completed), with a
//! stale one (file replaced, cut, rewritten in place) and with a corrupt one (random bytes, cut,
//! another file's index); a grown file then reads exactly as pi reads it. The index directory
//! being a symlink or unusable only turns the index off.

use std::path::{Path, PathBuf};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use pi_session::json::JsValue;

use crate::conformance::cases::{Answer, Case, PROFILES};
use crate::conformance::diff::Mismatches;
use crate::conformance::env::{self, Outcome};
use crate::conformance::leaves::Leaf;

/// What the log says when an open resumed from the persisted index.
const USED: &str = "persisted index used";

/// One run of `pi-session ARGS`: with the index in `dir`, or (`None`) with `--no-index`.
struct Run {
    outcome: Outcome,
    used_index: bool,
    /// The log lines.
    log: Vec<String>,
}

fn run(args: &[&str], dir: Option<&Path>) -> Run {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_pi-session"));
    match dir {
        Some(dir) => command
            .env("PI_SESSION_INDEX_DIR", dir)
            .env("PI_SESSION_LOG", "pi_session::store=debug"),
        None => command.arg("--no-index").env_remove("PI_SESSION_LOG"),
    };
    let output = command.args(args).output().expect("pi-session runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Log lines name their module; the rest of stderr is the command's own warnings.
    let (log, own): (Vec<&str>, Vec<&str>) =
        stderr.lines().partition(|l| l.contains(" pi_session::"));
    Run {
        outcome: Outcome {
            what: format!("pi-session {}", args.join(" ")),
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8(output.stdout).expect("UTF-8"),
            stderr: own.join("\n"),
        },
        used_index: log.iter().any(|l| l.contains(USED)),
        log: log.iter().map(|l| l.to_string()).collect(),
    }
}

fn same(found: &mut Vec<String>, what: &str, with: &Outcome, without: &Outcome) {
    if (with.status, &with.stdout, &with.stderr)
        != (without.status, &without.stdout, &without.stderr)
    {
        let cut = |s: &str| s.chars().take(600).collect::<String>();
        found.push(format!(
            "{what}: {}\n  with index: exit {} stderr {:?} stdout {:?}\n  without:    exit {} stderr {:?} stdout {:?}",
            with.what,
            with.status,
            cut(&with.stderr),
            cut(&with.stdout),
            without.status,
            cut(&without.stderr),
            cut(&without.stdout)
        ));
    }
}

fn commands(file: &Path, profile: &str) -> Vec<Vec<String>> {
    let file = file.to_str().unwrap().to_string();
    ["context", "tree", "check"]
        .iter()
        .map(|c| {
            vec![
                c.to_string(),
                file.clone(),
                "--profile".into(),
                profile.into(),
            ]
        })
        .collect()
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn index_files(dir: &Path) -> Vec<PathBuf> {
    files_named(dir, "idx")
}

/// The files in `dir` with this extension, sorted (none when `dir` does not exist).
fn files_named(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .collect();
    files.sort();
    files
}

fn hand_written_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(env::root().join("tests/files"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

fn small_generated(seed: &str) -> Option<PathBuf> {
    let oracle = env::oracle()?;
    Some(env::generated(
        oracle,
        &format!("index-seed{seed}-600KB"),
        &[
            "--size",
            "600KB",
            "--seed",
            seed,
            "--branch-every",
            "5",
            "--compact-every",
            "200KB",
            "--label-rate",
            "0.3",
        ],
    ))
}

/// Every hand-written file and two generated ones, in every profile: a fresh index, then a
/// current one, answer as no index does; the second run resumes from the index.
fn fresh_and_current_indexes_answer_as_no_index() {
    let work = env::fresh_dir("index-fresh");
    let mut files = hand_written_files();
    files.extend(["5", "6"].iter().filter_map(|s| small_generated(s)));
    let (mut found, mut used, mut compared) = (Vec::new(), 0, 0);
    for (n, file) in files.iter().enumerate() {
        for profile in PROFILES {
            let dir = work.join(format!("{n}-{profile}"));
            for args in commands(file, profile) {
                let args = strs(&args);
                let without = run(&args, None).outcome;
                let fresh = run(&args, Some(&dir));
                same(&mut found, "fresh index", &fresh.outcome, &without);
                let current = run(&args, Some(&dir));
                same(&mut found, "current index", &current.outcome, &without);
                used += usize::from(current.used_index);
                compared += 2;
            }
        }
    }
    crate::support::count("index fresh/current", compared);
    assert!(found.is_empty(), "{}", found.join("\n"));
    // Most files are sessions every profile reads: their second runs must use the index.
    assert!(
        used >= files.len() * 3,
        "only {used} runs resumed from an index"
    );
}

/// pi's own SessionManager (0.82.1 and 1.6) appends to the file between two opens: the second
/// open resumes from the index, answers as a full read does, and as pi reads the grown file.
fn pi_appends_between_two_opens() {
    let Some(oracle) = env::oracle() else {
        return env::skipped("pi appending between two opens");
    };
    let Some(source) = small_generated("7") else {
        return;
    };
    let work = env::fresh_dir("index-appends");
    let mut found = Vec::new();
    for (impl_name, version, profile) in
        [("manager", "", "pi-cli"), ("manager-1.6", "1.6", "pi-1.6")]
    {
        let file = work.join(format!("{impl_name}.jsonl"));
        std::fs::copy(&source, &file).unwrap();
        let dir = work.join(format!("index-{impl_name}"));
        for round in 0..3 {
            for profile in PROFILES {
                for args in commands(&file, profile) {
                    let args = strs(&args);
                    let with = run(&args, Some(&dir));
                    let without = run(&args, None).outcome;
                    same(
                        &mut found,
                        &format!("after {round} append(s) by {impl_name}"),
                        &with.outcome,
                        &without,
                    );
                    if round > 0 && args[0] == "context" && profile != "harness" {
                        assert!(
                            with.used_index,
                            "{}: the grown file was read whole",
                            with.outcome.what
                        );
                    }
                }
            }
            let status = oracle
                .command("pi-append.mjs")
                .arg(oracle.dir())
                .arg(&file)
                .args(["4", &(round + 1).to_string(), version])
                .output()
                .expect("pi-append runs");
            assert!(
                status.status.success(),
                "pi-append: {}",
                String::from_utf8_lossy(&status.stderr)
            );
        }
        // The grown file, read through the index that saw it grow, against pi.
        let last = run(
            &["context", file.to_str().unwrap(), "--profile", profile],
            Some(&dir),
        );
        assert!(last.used_index);
        let theirs = oracle
            .start(vec![
                Case {
                    file: file.clone(),
                    profile,
                    leaf: Leaf::Default,
                }
                .oracle_args(),
            ])
            .wait();
        let mut mismatches = Mismatches::default();
        mismatches.answers(
            &format!("{impl_name}: pi's appends, read through the index"),
            &Answer::ours(&last.outcome, JsValue::clone),
            &Answer::oracle(&theirs[0], JsValue::clone),
        );
        mismatches.finish("index: pi's appends");
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// A torn last line is not indexed; once completed (and more appended) it is read from the
/// index's end, as a full read reads it.
fn a_torn_tail_completed_later() {
    let Some(source) = small_generated("5") else {
        return;
    };
    let work = env::fresh_dir("index-torn");
    let file = work.join("s.jsonl");
    std::fs::copy(&source, &file).unwrap();
    let dir = work.join("index");
    let line = r#"{"type":"message","id":"torn0001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"late","timestamp":1}}"#;
    let (head, tail) = line.split_at(60);
    let mut found = Vec::new();
    for (step, bytes) in [
        (0, head.to_string()),
        (1, format!("{tail}\n")),
        (2, format!("{line}\n{head}")),
    ] {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap()
            .write_all(bytes.as_bytes())
            .unwrap();
        for profile in PROFILES {
            for args in commands(&file, profile) {
                let args = strs(&args);
                let with = run(&args, Some(&dir));
                same(
                    &mut found,
                    &format!("torn tail, step {step}"),
                    &with.outcome,
                    &run(&args, None).outcome,
                );
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Builds `dir`'s index for `file` in `profile`, changes things with `change`, then checks
/// that every command answers as no index does and that the bad index was not used.
fn after_change(
    found: &mut Vec<String>,
    what: &str,
    file: &Path,
    dir: &Path,
    profile: &str,
    change: impl FnOnce(),
) {
    let args = ["context", file.to_str().unwrap(), "--profile", profile];
    let first = run(&args, Some(dir));
    assert_eq!(first.outcome.status, 0, "{what}: {}", first.outcome.stderr);
    assert_eq!(index_files(dir).len(), 1, "{what}: one index written");
    change();
    let with = run(&args, Some(dir));
    if with.used_index {
        found.push(format!("{what}: the stale or corrupt index was used"));
    }
    same(found, what, &with.outcome, &run(&args, None).outcome);
    // Rebuilt: the next open uses it again.
    let again = run(&args, Some(dir));
    if with.outcome.status == 0 && !again.used_index {
        found.push(format!("{what}: the index was not rebuilt"));
    }
    same(
        found,
        &format!("{what}, rebuilt"),
        &again.outcome,
        &run(&args, None).outcome,
    );
}

fn seed() -> u64 {
    let seed = std::env::var("INDEX_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    eprintln!("index test seed: {seed} (INDEX_TEST_SEED={seed} repeats it)");
    seed
}

/// The file replaced, cut (at a line end and inside a line), rewritten in place with the same
/// size (with a new mtime, and with the old mtime put back: the sampled tail block tells).
fn stale_indexes_are_rebuilt() {
    let Some(source) = small_generated("5") else {
        return;
    };
    let Some(other) = small_generated("6") else {
        return;
    };
    let work = env::fresh_dir("index-stale");
    let text = std::fs::read(&source).unwrap();
    let mut found = Vec::new();
    let fresh = |name: &str| {
        let file = work.join(format!("{name}.jsonl"));
        std::fs::write(&file, &text).unwrap();
        (file.clone(), work.join(format!("index-{name}")))
    };
    for profile in ["pi-cli", "harness"] {
        let (file, dir) = fresh(&format!("replaced-{profile}"));
        after_change(&mut found, "replaced", &file, &dir, profile, || {
            let temporary = file.with_extension("new");
            std::fs::copy(&other, &temporary).unwrap();
            std::fs::rename(&temporary, &file).unwrap();
        });
        let (file, dir) = fresh(&format!("cut-at-line-{profile}"));
        after_change(
            &mut found,
            "cut at a line end",
            &file,
            &dir,
            profile,
            || {
                let end = text[..text.len() / 2]
                    .iter()
                    .rposition(|b| *b == b'\n')
                    .unwrap()
                    + 1;
                std::fs::write(&file, &text[..end]).unwrap();
            },
        );
        let (file, dir) = fresh(&format!("cut-in-line-{profile}"));
        after_change(
            &mut found,
            "cut inside a line",
            &file,
            &dir,
            profile,
            || {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&file)
                    .unwrap()
                    .set_len(text.len() as u64 - 7)
                    .unwrap();
            },
        );
        let (file, dir) = fresh(&format!("rewritten-{profile}"));
        after_change(
            &mut found,
            "rewritten in place",
            &file,
            &dir,
            profile,
            || {
                let mut changed = text.clone();
                let at = changed.len() / 3;
                let at = at
                    + changed[at..]
                        .windows(7)
                        .position(|w| w == b"\"text\":")
                        .unwrap()
                    + 9;
                changed[at] = if changed[at] == b'Q' { b'R' } else { b'Q' };
                std::thread::sleep(std::time::Duration::from_millis(20));
                std::fs::write(&file, &changed).unwrap();
            },
        );
        let (file, dir) = fresh(&format!("rewritten-same-mtime-{profile}"));
        after_change(
            &mut found,
            "rewritten in place, mtime put back",
            &file,
            &dir,
            profile,
            || {
                let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
                let mut changed = text.clone();
                // Inside the last line, in the sampled block before the indexed end.
                let at = changed.len() - 40;
                changed[at] = if changed[at] == b'0' { b'1' } else { b'0' };
                let handle = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
                std::os::unix::fs::FileExt::write_all_at(&handle, &changed, 0).unwrap();
                handle.set_modified(mtime).unwrap();
            },
        );
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Random bytes, a cut index, one flipped byte, an empty file, another file's index: each is
/// detected and rebuilt. Seeded.
fn corrupt_indexes_are_rebuilt() {
    let Some(source) = small_generated("5") else {
        return;
    };
    let Some(other) = small_generated("6") else {
        return;
    };
    let mut rng = StdRng::seed_from_u64(seed());
    let work = env::fresh_dir("index-corrupt");
    let other_dir = work.join("index-other");
    let other_copy = work.join("other.jsonl");
    std::fs::copy(&other, &other_copy).unwrap();
    assert_eq!(
        run(&["context", other_copy.to_str().unwrap()], Some(&other_dir))
            .outcome
            .status,
        0
    );
    let foreign = index_files(&other_dir)
        .pop()
        .expect("the other file's index");
    let mut found = Vec::new();
    for case in 0..5 {
        for profile in ["pi-cli", "pi-1.6", "harness"] {
            let file = work.join(format!("s{case}-{profile}.jsonl"));
            std::fs::copy(&source, &file).unwrap();
            let dir = work.join(format!("index-{case}-{profile}"));
            let noise: Vec<u8> = (0..rng.random_range(1..200_000))
                .map(|_| rng.random())
                .collect();
            let cut = rng.random_range(0.0..1.0f64);
            let flip = rng.random_range(0.0..1.0f64);
            let foreign = foreign.clone();
            let what = [
                "random bytes",
                "cut",
                "one byte flipped",
                "empty",
                "another file's index",
            ][case];
            let corrupt = move || {
                let index = index_files(&dir).pop().unwrap();
                let mut bytes = std::fs::read(&index).unwrap();
                match case {
                    0 => bytes = noise,
                    1 => bytes.truncate((bytes.len() as f64 * cut) as usize),
                    2 => {
                        let at = (bytes.len() as f64 * flip) as usize % bytes.len();
                        bytes[at] ^= 0x20;
                    }
                    3 => bytes.clear(),
                    _ => bytes = std::fs::read(&foreign).unwrap(),
                }
                std::fs::write(&index, bytes).unwrap();
            };
            let dir = work.join(format!("index-{case}-{profile}"));
            after_change(&mut found, what, &file, &dir, profile, corrupt);
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The index directory a symlink, or impossible to create; an index file planted as a symlink:
/// reading answers as without an index, and nothing is written through a symlink.
fn an_unusable_index_dir_only_turns_the_index_off() {
    let Some(source) = small_generated("5") else {
        return;
    };
    let work = env::fresh_dir("index-unusable");
    let file = work.join("s.jsonl");
    std::fs::copy(&source, &file).unwrap();
    let args = ["context", file.to_str().unwrap()];
    let without = run(&args, None).outcome;
    let mut found = Vec::new();

    let elsewhere = work.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let link = work.join("link");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    for _ in 0..2 {
        let with = run(&args, Some(&link));
        same(
            &mut found,
            "index dir is a symlink",
            &with.outcome,
            &without,
        );
        assert!(!with.used_index);
    }
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "written through the symlink"
    );

    let blocker = work.join("a-file");
    std::fs::write(&blocker, "x").unwrap();
    let with = run(&args, Some(&blocker.join("index")));
    same(
        &mut found,
        "index dir cannot be created",
        &with.outcome,
        &without,
    );

    // An index file planted as a symlink to a victim: never read through, never written to.
    let dir = work.join("index");
    run(&args, Some(&dir));
    let index = index_files(&dir).pop().unwrap();
    let victim = work.join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    std::fs::remove_file(&index).unwrap();
    std::os::unix::fs::symlink(&victim, &index).unwrap();
    let with = run(&args, Some(&dir));
    same(
        &mut found,
        "index file is a symlink",
        &with.outcome,
        &without,
    );
    assert!(!with.used_index);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(
        !std::fs::symlink_metadata(&index)
            .unwrap()
            .file_type()
            .is_symlink(),
        "replaced by a real index"
    );
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// Stats (`session/getInfo`'s figures) with the index: counted once, filed beside it, then
/// continued over what pi appended; always what a full count and pi's `getSessionStats` give.
fn stats_from_the_index_are_what_pi_counts() {
    use pi_session::Profile;
    use pi_session::session::{Session, SessionOptions};
    let Some(oracle) = env::oracle() else {
        return env::skipped("stats with the index");
    };
    let Some(source) = small_generated("7") else {
        return;
    };
    let work = env::fresh_dir("index-stats");
    for (profile, implementation, version) in [
        (Profile::PiCli, "manager", ""),
        (Profile::Pi16, "manager-1.6", "1.6"),
    ] {
        let file = work.join(format!("{implementation}.jsonl"));
        std::fs::copy(&source, &file).unwrap();
        let dir: std::sync::Arc<Path> =
            std::sync::Arc::from(work.join(format!("index-{implementation}")).as_path());
        let stats = |indexed: bool| {
            let options = SessionOptions {
                index_dir: indexed.then(|| dir.clone()),
                ..SessionOptions::with_profile(profile)
            };
            Session::open_read_only(&file, options)
                .unwrap()
                .stats()
                .unwrap()
        };
        for round in 0..2 {
            let full = stats(false);
            assert_eq!(
                stats(true),
                full,
                "{implementation}, round {round}: first count with the index"
            );
            assert!(
                std::fs::read_dir(&*dir).unwrap().any(|e| e
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "stats")),
                "stats filed beside the index"
            );
            assert_eq!(
                stats(true),
                full,
                "{implementation}, round {round}: from the index"
            );
            let pi = oracle
                .start(vec![vec![
                    "stats".into(),
                    file.to_str().unwrap().into(),
                    "--impl".into(),
                    implementation.into(),
                ]])
                .wait()
                .remove(0)
                .doc();
            let tokens = pi.get("tokens").unwrap();
            let n = |v: Option<&JsValue>| v.and_then(JsValue::as_f64).unwrap();
            assert_eq!(
                full.message_count as f64,
                n(pi.get("totalMessages")),
                "{pi:?}"
            );
            assert_eq!(full.tool_calls as f64, n(pi.get("toolCalls")), "{pi:?}");
            assert_eq!(full.tool_results as f64, n(pi.get("toolResults")), "{pi:?}");
            assert!(
                (full.total_tokens - n(tokens.get("total"))).abs() < 1e-6,
                "{pi:?}"
            );
            assert!((full.cost_total - n(pi.get("cost"))).abs() < 1e-9, "{pi:?}");
            let appended = oracle
                .command("pi-append.mjs")
                .arg(oracle.dir())
                .arg(&file)
                .args(["3", &(round + 10).to_string(), version])
                .output()
                .unwrap();
            assert!(
                appended.status.success(),
                "{}",
                String::from_utf8_lossy(&appended.stderr)
            );
        }
    }
}

/// One pass: the first read of a file (no index yet) files the stats and the tree previews
/// beside the index it writes, gathered while it read the lines; they are what counting and
/// computing them later from the index gives (every hand-written file, two generated ones,
/// every profile), and a later open reads them instead of the file.
fn the_first_read_files_stats_and_previews() {
    use pi_session::Profile;
    use pi_session::session::{Session, SessionOptions};
    let work = env::fresh_dir("index-one-pass");
    let mut files = hand_written_files();
    files.extend(["5", "6"].iter().filter_map(|s| small_generated(s)));
    let (mut filed, mut compared) = (0, 0);
    for (n, file) in files.iter().enumerate() {
        for profile in Profile::ALL {
            let dir: std::sync::Arc<Path> =
                std::sync::Arc::from(work.join(format!("{n}-{}", profile.name())).as_path());
            let options = |indexed: bool| SessionOptions {
                index_dir: indexed.then(|| dir.clone()),
                file_digests: true,
                ..SessionOptions::with_profile(profile)
            };
            let Ok(first) = Session::open_read_only(file, options(true)) else {
                // Not a session in this profile: nothing is filed, nothing to compare.
                continue;
            };
            let has = |extension: &str| !files_named(&dir, extension).is_empty();
            if !has("idx") {
                continue;
            }
            assert!(
                has("stats") && has("tree"),
                "{} ({}): the first read filed no stats or previews",
                file.display(),
                profile.name()
            );
            filed += 1;
            let plain = Session::open_read_only(file, options(false)).unwrap();
            let what = format!("{} ({})", file.display(), profile.name());
            assert_eq!(
                first.stats().unwrap(),
                plain.stats().unwrap(),
                "{what}: stats"
            );
            assert!(
                *first.tree_facts().unwrap() == *plain.tree_facts().unwrap(),
                "{what}: previews"
            );
            let again = Session::open_read_only(file, options(true)).unwrap();
            assert_eq!(
                again.stats().unwrap(),
                plain.stats().unwrap(),
                "{what}: stats again"
            );
            assert!(
                *again.tree_facts().unwrap() == *plain.tree_facts().unwrap(),
                "{what}: previews again"
            );
            compared += 4;
        }
    }
    crate::support::count("one-pass stats and previews", compared);
    assert!(filed >= files.len() * 2, "only {filed} first reads filed");
}

/// `pi-session tree FILE` with the index in `dir`: its outcome, and how many entries' previews
/// it read from beside the index and how many it computed (from its debug log).
fn tree_run(file: &Path, dir: &Path) -> (Outcome, usize, usize) {
    let run = run(&["tree", file.to_str().unwrap()], Some(dir));
    let count = |after: &str, before: &str| -> usize {
        run.log
            .iter()
            .filter_map(|l| {
                l.split(after)
                    .nth(1)?
                    .split(before)
                    .next()?
                    .parse::<usize>()
                    .ok()
            })
            .sum::<usize>()
    };
    let read = count("tree previews of ", " entries read from beside the index");
    let computed = count("tree previews of ", " entries computed after");
    (run.outcome, read, computed)
}

/// The tree previews are computed by the first `tree` and filed beside the index; the next
/// process reads them and computes none; after an append only the new entries are computed
/// (and the rows are what a fresh computation gives); a damaged file, or another session's,
/// is ignored, computed again and filed again.
fn tree_previews_are_filed_extended_and_rebuilt() {
    let Some(source) = small_generated("5") else {
        return;
    };
    let Some(other) = small_generated("6") else {
        return;
    };
    let work = env::fresh_dir("index-previews");
    let file = work.join("s.jsonl");
    std::fs::copy(&source, &file).unwrap();
    let dir = work.join("index");
    let without = |file: &Path| run(&["tree", file.to_str().unwrap()], None).outcome;
    let mut found = Vec::new();
    let entries = |file: &Path| std::fs::read_to_string(file).unwrap().lines().count() - 1;
    let step = |what: &str, read: usize, computed: usize, found: &mut Vec<String>| {
        let (outcome, r, c) = tree_run(&file, &dir);
        same(found, what, &outcome, &without(&file));
        assert_eq!((r, c), (read, computed), "{what}: (read, computed)");
        assert_eq!(
            files_named(&dir, "tree").len(),
            1,
            "{what}: one previews file"
        );
    };
    let n = entries(&file);
    step("first tree", 0, n, &mut found);
    step("second tree", n, 0, &mut found);

    // Appended entries: a reply to the last entry and a new branch from the first one.
    let text = std::fs::read_to_string(&file).unwrap();
    let id_of = |line: &str| {
        serde_json::from_str::<serde_json::Value>(line).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (first, last) = (
        id_of(text.lines().nth(1).unwrap()),
        id_of(text.lines().last().unwrap()),
    );
    let mut grown = String::new();
    for (i, parent) in [&last, &first, &last].iter().enumerate() {
        grown.push_str(&format!(
            r#"{{"type":"message","id":"grown00{i}","parentId":"{parent}","timestamp":"2030-01-01T00:00:0{i}.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"grown\nline {i}"}}],"stopReason":"stop"}}}}"#
        ));
        grown.push('\n');
    }
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap()
        .write_all(grown.as_bytes())
        .unwrap();
    step("after an append", n, 3, &mut found);
    step("after an append, again", n + 3, 0, &mut found);

    let tree = files_named(&dir, "tree").pop().unwrap();
    let mut bytes = std::fs::read(&tree).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x20;
    std::fs::write(&tree, bytes).unwrap();
    step("damaged previews", 0, n + 3, &mut found);
    step("damaged previews, rebuilt", n + 3, 0, &mut found);

    let other_copy = work.join("other.jsonl");
    std::fs::copy(&other, &other_copy).unwrap();
    let other_dir = work.join("index-other");
    let (_, _, computed) = tree_run(&other_copy, &other_dir);
    assert_eq!(computed, entries(&other_copy));
    std::fs::copy(files_named(&other_dir, "tree").pop().unwrap(), &tree).unwrap();
    step("another session's previews", 0, n + 3, &mut found);
    step("another session's previews, rebuilt", n + 3, 0, &mut found);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

crate::tests! {
    fresh_and_current_indexes_answer_as_no_index,
    pi_appends_between_two_opens,
    a_torn_tail_completed_later,
    stale_indexes_are_rebuilt,
    corrupt_indexes_are_rebuilt,
    an_unusable_index_dir_only_turns_the_index_off,
    stats_from_the_index_are_what_pi_counts,
    tree_previews_are_filed_extended_and_rebuilt,
    the_first_read_files_stats_and_previews,
}
