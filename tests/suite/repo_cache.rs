//! The listing cache: used only for unchanged files, rebuilt when damaged or from another
//! version, safe beside concurrent appends and other listing processes.

use crate::support;

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pi_session::listing::{CACHE_FILE_NAME, CachePolicy, Listing, Repo};
use support::files::*;
use support::listing::*;
#[allow(unused_imports)]
use support::{notice, oracle};

/// Waits until files written so far are old enough to be cached: a file whose change time is
/// within two seconds of its reading is read again next time (see `RACY_WINDOW_NS`).
fn settle() {
    std::thread::sleep(Duration::from_millis(2100));
}

/// A flat session directory with `count` small sessions, settled so that they can be cached.
fn sessions_dir(world: &World, count: usize) -> PathBuf {
    let dir = world.root.path().join("sessions");
    for i in 0..count {
        let content = format!(
            "{}\n{}\n{}\n",
            header(&format!("id-{i}"), "/p", "2026-01-01T00:00:00.000Z"),
            message(
                "u",
                "user",
                &format!("question number {i}"),
                1_767_300_000_000 + i as u64
            ),
            message(
                "a",
                "assistant",
                &format!("answer number {i}"),
                1_767_300_000_500 + i as u64
            ),
        );
        write_file(&dir.join(format!("s{i:03}.jsonl")), content, 10 + i as u64);
    }
    settle();
    dir
}

fn list(repo: &Repo, dir: &Path) -> Listing {
    repo.list_all(Some(dir.to_str().unwrap())).unwrap()
}

fn without_stats(mut listing: Listing) -> Listing {
    listing.stats = Default::default();
    listing
}

fn cache_path(dir: &Path) -> PathBuf {
    dir.join(CACHE_FILE_NAME)
}

fn a_warm_listing_reads_no_file_and_equals_a_cold_one() {
    let world = World::new();
    let dir = sessions_dir(&world, 20);
    let repo = world.repo(CachePolicy::ReadWrite);
    let cold = list(&repo, &dir);
    assert_eq!((cold.stats.files_read, cold.stats.from_cache), (20, 0));
    let mode = fs::metadata(cache_path(&dir)).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the cache is private");
    let warm = list(&repo, &dir);
    assert_eq!((warm.stats.files_read, warm.stats.from_cache), (0, 20));
    assert_eq!(without_stats(warm), without_stats(cold.clone()));
    let uncached = list(&world.repo(CachePolicy::Off), &dir);
    assert_eq!(without_stats(uncached), without_stats(cold));
}

fn the_cache_is_not_touched_when_turned_off() {
    let world = World::new();
    let dir = sessions_dir(&world, 3);
    list(&world.repo(CachePolicy::Off), &dir);
    assert!(!cache_path(&dir).exists());
}

fn changed_files_are_read_again() {
    let world = World::new();
    let dir = sessions_dir(&world, 5);
    let repo = world.repo(CachePolicy::ReadWrite);
    list(&repo, &dir);

    // An append changes the size.
    let appended = dir.join("s001.jsonl");
    let mut file = fs::OpenOptions::new().append(true).open(&appended).unwrap();
    writeln!(
        file,
        "{}",
        message("x", "user", "appended", 1_767_300_009_000)
    )
    .unwrap();
    drop(file);
    set_mtime(&appended, 500);
    // A same-size rewrite with the old mtime put back changes only the ctime.
    let rewritten = dir.join("s002.jsonl");
    let old = fs::read_to_string(&rewritten).unwrap();
    fs::write(
        &rewritten,
        old.replace("question number 2", "QUESTION NUMBER 2"),
    )
    .unwrap();
    set_mtime(&rewritten, 12);
    // A replaced file (new inode) with the same size and mtime.
    let replaced = dir.join("s003.jsonl");
    let old = fs::read_to_string(&replaced).unwrap();
    fs::remove_file(&replaced).unwrap();
    write_file(
        &replaced,
        old.replace("answer number 3", "ANSWER NUMBER 3"),
        13,
    );

    let after = list(&repo, &dir);
    assert_eq!((after.stats.files_read, after.stats.from_cache), (3, 2));
    let row = |name: &str| {
        after
            .sessions
            .iter()
            .find(|s| s.path.ends_with(name))
            .unwrap()
            .clone()
    };
    assert_eq!(row("s001.jsonl").message_count, 3);
    assert_eq!(row("s002.jsonl").first_message, "QUESTION NUMBER 2");
    assert!(
        row("s003.jsonl")
            .all_messages_text
            .ends_with("ANSWER NUMBER 3")
    );
    let uncached = list(&world.repo(CachePolicy::Off), &dir);
    assert_eq!(without_stats(after), without_stats(uncached));
}

fn a_cache_kept_in_memory_gives_way_to_the_file_another_process_wrote() {
    let world = World::new();
    let dir = sessions_dir(&world, 5);
    let server = world.repo(CachePolicy::ReadWrite).keeping_caches();
    list(&server, &dir);
    // Read from the file once, then from the copy kept in memory.
    for _ in 0..2 {
        let warm = list(&server, &dir);
        assert_eq!((warm.stats.files_read, warm.stats.from_cache), (0, 5));
    }
    let changed = dir.join("s001.jsonl");
    let old = fs::read_to_string(&changed).unwrap();
    write_file(&changed, old.replace("answer number 1", "ANSWER ONE"), 11);
    settle();
    // Another process reads the changed file and writes the cache anew.
    let other = list(&world.repo(CachePolicy::ReadWrite), &dir);
    assert_eq!(other.stats.files_read, 1);
    // The kept copy no longer describes the cache file: the file's rows are used, the
    // changed session's included, so nothing needs reading.
    let after = list(&server, &dir);
    assert_eq!((after.stats.files_read, after.stats.from_cache), (0, 5));
    assert_eq!(without_stats(after), without_stats(other));
}

fn files_modified_just_before_they_were_read_are_not_trusted() {
    let world = World::new();
    let dir = world.root.path().join("fresh");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("now.jsonl"),
        format!("{}\n", header("n", "/p", "2026-01-01T00:00:00.000Z")),
    )
    .unwrap();
    let repo = world.repo(CachePolicy::ReadWrite);
    assert_eq!(list(&repo, &dir).stats.files_read, 1);
    // Modified within the same instant as the read: a later same-tick change could hide.
    assert_eq!(list(&repo, &dir).stats.files_read, 1);
    set_mtime(&dir.join("now.jsonl"), 0);
    // The ctime is still recent (setting the mtime changed it), so once more...
    settle();
    assert_eq!(list(&repo, &dir).stats.files_read, 1);
    // ...and from then on the row is cached.
    assert_eq!(list(&repo, &dir).stats.from_cache, 1);
}

fn a_damaged_or_other_version_cache_is_ignored_and_rebuilt() {
    let world = World::new();
    let dir = sessions_dir(&world, 6);
    let repo = world.repo(CachePolicy::ReadWrite);
    let truth = without_stats(list(&world.repo(CachePolicy::Off), &dir));
    list(&repo, &dir);
    let good = fs::read(cache_path(&dir)).unwrap();

    let mut older = good.clone();
    older[8..12].copy_from_slice(&0u32.to_le_bytes());
    let mut newer = good.clone();
    newer[8..12].copy_from_slice(&999u32.to_le_bytes());
    let mut flipped = good.clone();
    let middle = good.len() / 2;
    flipped[middle] ^= 0x20;
    let damaged: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("garbage", b"this is not a cache at all".to_vec()),
        ("truncated", good[..good.len() - 7].to_vec()),
        ("flipped byte", flipped),
        ("older version", older),
        ("newer version", newer),
        ("longer", [good.as_slice(), b"trailing"].concat()),
    ];
    for (what, bytes) in damaged {
        fs::write(cache_path(&dir), &bytes).unwrap();
        let listing = list(&repo, &dir);
        assert_eq!(listing.stats.files_read, 6, "{what}: every file is read");
        assert_eq!(
            without_stats(listing),
            truth,
            "{what}: same rows as without cache"
        );
        let rebuilt = list(&repo, &dir);
        assert_eq!(rebuilt.stats.from_cache, 6, "{what}: the cache was rebuilt");
    }
}

fn a_cache_from_elsewhere_is_never_trusted_over_the_files() {
    let world = World::new();
    let a = world.root.path().join("a");
    let b = world.root.path().join("b");
    let one = |text: &str| {
        format!(
            "{}\n{}\n",
            header("x", "/p", "2026-01-01T00:00:00.000Z"),
            message("u", "user", text, 1_767_300_000_000)
        )
    };
    write_file(&a.join("x.jsonl"), one("from directory a"), 10);
    write_file(&b.join("x.jsonl"), one("from directory b"), 10);
    settle();
    let repo = world.repo(CachePolicy::ReadWrite);
    list(&repo, &a);
    fs::copy(cache_path(&a), cache_path(&b)).unwrap();
    let listing = list(&repo, &b);
    assert_eq!(listing.sessions[0].first_message, "from directory b");
    assert_eq!(listing.stats.files_read, 1);
}

fn deleting_a_session_removes_its_cached_text() {
    let world = World::new();
    let dir = sessions_dir(&world, 3);
    let repo = world.repo(CachePolicy::ReadWrite);
    list(&repo, &dir);
    let secret = b"question number 1";
    let holds = |needle: &[u8]| {
        fs::read(cache_path(&dir))
            .unwrap()
            .windows(needle.len())
            .any(|w| w == needle)
    };
    assert!(holds(secret));
    assert!(repo.delete_session(&dir.join("s001.jsonl")).unwrap());
    assert!(!dir.join("s001.jsonl").exists());
    assert!(!holds(secret), "the deleted session's text left the cache");
    assert!(holds(b"question number 2"));
    assert!(!repo.delete_session(&dir.join("s001.jsonl")).unwrap());
    let listing = list(&repo, &dir);
    assert_eq!(listing.sessions.len(), 2);
    assert_eq!(listing.stats.from_cache, 2);
}

fn files_deleted_behind_the_caches_back_leave_it_on_the_next_listing() {
    let world = World::new();
    let dir = sessions_dir(&world, 3);
    let repo = world.repo(CachePolicy::ReadWrite);
    list(&repo, &dir);
    fs::remove_file(dir.join("s000.jsonl")).unwrap();
    assert_eq!(list(&repo, &dir).sessions.len(), 2);
    let cache = fs::read(cache_path(&dir)).unwrap();
    assert!(!cache.windows(8).any(|w| w == b"s000.jsonl"[..8].as_ref()));
}

fn sessions_read_in_local_time_are_not_cached() {
    let world = World::new();
    let dir = world.root.path().join("local");
    write_file(
        &dir.join("l.jsonl"),
        format!(
            "{}\n{}\n",
            header("l", "/p", "2026-01-01T00:00:00"),
            r#"{"type":"message","timestamp":"2026-01-02T10:00:00","message":{"role":"user","content":"x"}}"#
        ),
        10,
    );
    let repo = world.repo(CachePolicy::ReadWrite);
    list(&repo, &dir);
    assert_eq!(list(&repo, &dir).stats.files_read, 1);
}

fn an_unwritable_directory_still_lists() {
    let world = World::new();
    let dir = sessions_dir(&world, 2);
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    let probe = dir.join("probe");
    if fs::write(&probe, "x").is_ok() {
        let _ = fs::remove_file(&probe);
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        notice(
            "an_unwritable_directory_still_lists: running as root (permissions do not apply), skipped",
        );
        return;
    }
    let listing = list(&world.repo(CachePolicy::ReadWrite), &dir);
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(listing.sessions.len(), 2);
    assert!(listing.warnings.is_empty());
}

/// A bash loop that appends `lines` entries to `file`, each written in two parts with a pause
/// in between, so that readers see torn last lines.
fn spawn_appender(file: &Path, lines: usize) -> std::process::Child {
    let line = message(
        "m",
        "assistant",
        "appended while listing",
        1_767_400_000_000,
    );
    let (head, tail) = line.split_at(line.len() / 2);
    let script = format!(
        "for i in $(seq 1 {lines}); do printf '%s' '{head}' >> '{f}'; sleep 0.002; printf '%s\\n' '{tail}' >> '{f}'; done",
        f = file.display()
    );
    Command::new("bash")
        .args(["-c", &script])
        .stdout(Stdio::null())
        .spawn()
        .expect("bash")
}

fn listing_while_another_process_appends() {
    let world = World::new();
    let dir = sessions_dir(&world, 8);
    let target = dir.join("s004.jsonl");
    let repo = world.repo(CachePolicy::ReadWrite);
    list(&repo, &dir);
    let appends = 150;
    let mut appender = spawn_appender(&target, appends);
    // Other listing processes compete for the cache at the same time.
    let binary = env!("CARGO_BIN_EXE_pi-session");
    let others: Vec<_> = (0..2)
        .map(|_| {
            Command::new("bash")
                .args([
                    "-c",
                    &format!(
                        "for i in $(seq 1 15); do '{binary}' list --all --session-dir '{}' --json > /dev/null || exit 1; done",
                        dir.display()
                    ),
                ])
                .env("HOME", &world.home)
                .spawn()
                .expect("bash")
        })
        .collect();
    let mut last_count = 2;
    let started = Instant::now();
    while appender.try_wait().unwrap().is_none() && started.elapsed() < Duration::from_secs(60) {
        let listing = list(&repo, &dir);
        assert_eq!(
            listing.sessions.len(),
            8,
            "no session drops out: {:?}",
            listing.warnings
        );
        let row = listing.sessions.iter().find(|s| s.path == target).unwrap();
        assert!(
            row.message_count >= last_count && row.message_count <= 2 + appends as u64,
            "message count {} after {last_count}",
            row.message_count
        );
        last_count = row.message_count;
    }
    assert!(appender.wait().unwrap().success());
    for mut other in others {
        assert!(
            other.wait().unwrap().success(),
            "a concurrent `pi-session list` failed"
        );
    }
    // Once the writer is done, the cache agrees with the files.
    set_mtime(&target, 1000);
    let cached = list(&repo, &dir);
    let truth = list(&world.repo(CachePolicy::Off), &dir);
    assert_eq!(without_stats(cached.clone()), without_stats(truth));
    let row = cached.sessions.iter().find(|s| s.path == target).unwrap();
    assert_eq!(row.message_count, 2 + appends as u64);
}

crate::tests! {
    a_warm_listing_reads_no_file_and_equals_a_cold_one,
    the_cache_is_not_touched_when_turned_off,
    changed_files_are_read_again,
    a_cache_kept_in_memory_gives_way_to_the_file_another_process_wrote,
    files_modified_just_before_they_were_read_are_not_trusted,
    a_damaged_or_other_version_cache_is_ignored_and_rebuilt,
    a_cache_from_elsewhere_is_never_trusted_over_the_files,
    deleting_a_session_removes_its_cached_text,
    files_deleted_behind_the_caches_back_leave_it_on_the_next_listing,
    sessions_read_in_local_time_are_not_cached,
    an_unwritable_directory_still_lists,
    listing_while_another_process_appends,
}
