//! The files under hostile conditions (issue 8, the file side): locked deletes, torn tails,
//! planted symlinks, FIFOs and devices, other programs' appends, deep nesting, memory, and a
//! mutational fuzz of session files. Randomized tests print their seed and keep failing cases.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pi_session::Profile;
use pi_session::listing::{CachePolicy, PathEnv, Repo};
use pi_session::session::NewEntry;
use pi_session::session::{ErrorKind, NewSession, Session, SessionOptions};
use rand::{Rng, SeedableRng, rngs::StdRng};

const PROFILES: [Profile; 2] = [Profile::PiCli, Profile::Harness];

fn options(profile: Profile) -> SessionOptions {
    SessionOptions::with_profile(profile)
}

fn user(text: &str) -> NewEntry {
    NewEntry::Message {
        message: pi_session::json::parse(&format!(
            r#"{{"role":"user","content":"{text}","timestamp":1}}"#
        ))
        .unwrap(),
    }
}

fn assistant(text: &str) -> NewEntry {
    NewEntry::Message {
        message: pi_session::json::parse(&format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"provider":"p","model":"m","stopReason":"stop","timestamp":2}}"#
        ))
        .unwrap(),
    }
}

/// A written session of `n` user/assistant entries, closed; returns its path and entry ids.
fn written_session(dir: &Path, name: &str, profile: Profile, n: usize) -> (PathBuf, Vec<String>) {
    let path = dir.join(name);
    let new = NewSession {
        path: Some(path.clone()),
        cwd: "/w".into(),
        ..NewSession::default()
    };
    let mut session = Session::create(new, options(profile)).unwrap();
    let ids = (0..n)
        .map(|i| {
            let entry = if i % 2 == 0 {
                user(&format!("q{i}"))
            } else {
                assistant(&format!("a{i}"))
            };
            session.append(entry).unwrap()
        })
        .collect();
    (path, ids)
}

fn ids_of(session: &Session) -> Vec<String> {
    session
        .records()
        .iter()
        .filter_map(|r| r.id().map(str::to_string))
        .collect()
}

/// Every indexed entry's body reads back: what `open` accepted, reads never refuse.
fn read_everything(session: &Session) -> Result<(), String> {
    for position in 0..session.len() as u32 {
        session
            .entry_value(position)
            .map_err(|e| format!("entry {position}: {} ({})", e.message, e.kind_name()))?;
        session
            .preview(position)
            .map_err(|e| format!("preview {position}: {}", e.message))?;
    }
    Ok(())
}

/// A seed from the environment (`PI_SESSION_SEED`) or the clock, printed so a run can be
/// repeated.
fn seed(test: &str) -> u64 {
    let seed = std::env::var("PI_SESSION_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("{test}: seed {seed} (repeat with PI_SESSION_SEED={seed})");
    seed
}

/// Keeps a failing input where it outlives the test, and names it.
fn keep_failing_case(test: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join("pi-session-failing-cases");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{test}-{}.jsonl", rand::random::<u64>()));
    std::fs::write(&path, bytes).unwrap();
    path
}

// ---------------------------------------------------------------------------------------------
// Finding 1: delete of a locked file.

fn delete_of_a_session_open_for_writing_is_refused_as_locked() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = written_session(dir.path(), "s.jsonl", Profile::Harness, 2);
    let writer = Session::open(&path, "/w", options(Profile::Harness)).unwrap();
    let env = PathEnv::new(
        dir.path().to_str().unwrap(),
        dir.path().to_str().unwrap(),
        None,
    )
    .unwrap();
    let repo = Repo::new(env).with_cache(CachePolicy::Off);
    let error = repo.delete_session(&path).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Locked, "{error}");
    assert!(path.exists(), "the locked file is still there");
    drop(writer);
    assert!(repo.delete_session(&path).unwrap());
    assert!(!path.exists());
}

// ---------------------------------------------------------------------------------------------
// Finding 3 (and 10): torn and growing last lines.

/// Cuts a written session at every byte offset of its last two lines; in both profiles the
/// file opens (read-only and for writing), the whole entries before the cut are all there,
/// the cut line is named in a warning, the next append lands on a fresh line, and the file
/// reopens with everything.
fn a_torn_tail_never_costs_an_entry_in_either_profile() {
    let mut cases = 0;
    for profile in PROFILES {
        let dir = tempfile::tempdir().unwrap();
        let (path, ids) = written_session(dir.path(), "s.jsonl", profile, 4);
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        let line_starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let from = line_starts[line_starts.len() - 3];
        for cut in from..bytes.len() {
            cases += 1;
            let case = dir.path().join("cut.jsonl");
            let _ = std::fs::remove_file(&case);
            std::fs::write(&case, &bytes[..cut]).unwrap();
            let whole_lines = bytes[..cut].iter().filter(|&&b| b == b'\n').count();
            // A last line lacking only its newline is whole (pi reads it too).
            let lacks_only_newline = bytes[cut] == b'\n' && bytes[cut - 1] != b'\n';
            // Header is line 1; entries are the following lines.
            let complete: Vec<String> =
                ids[..whole_lines - 1 + usize::from(lacks_only_newline)].to_vec();
            let fail = |what: String| -> ! {
                let kept = keep_failing_case("torn-tail", &bytes[..cut]);
                panic!(
                    "{profile:?}, cut at byte {cut}: {what} (case kept at {})",
                    kept.display()
                )
            };
            let reader = Session::open_read_only(&case, options(profile))
                .unwrap_or_else(|e| fail(format!("read-only open failed: {}", e.message)));
            let seen = ids_of(&reader);
            let torn = bytes[cut - 1] != b'\n' && !lacks_only_newline;
            if torn && seen != complete {
                fail(format!("read {seen:?}, expected {complete:?}"));
            }
            if torn
                && !reader
                    .warnings()
                    .iter()
                    .any(|w| w.line == whole_lines as u64 + 1)
            {
                fail(format!(
                    "no warning names line {}: {:?}",
                    whole_lines + 1,
                    reader.warnings()
                ));
            }
            read_everything(&reader).unwrap_or_else(|e| fail(e));
            drop(reader);
            let mut writer = Session::open(&case, "/w", options(profile))
                .unwrap_or_else(|e| fail(format!("open for writing failed: {}", e.message)));
            let new_id = writer
                .append(user("after the tear"))
                .unwrap_or_else(|e| fail(format!("append failed: {}", e.message)));
            drop(writer);
            let reopened = Session::open_read_only(&case, options(profile))
                .unwrap_or_else(|e| fail(format!("reopen failed: {}", e.message)));
            let seen = ids_of(&reopened);
            if !complete.iter().all(|id| seen.contains(id)) || !seen.contains(&new_id) {
                fail(format!(
                    "after the append: {seen:?}, expected {complete:?} + {new_id}"
                ));
            }
            read_everything(&reopened).unwrap_or_else(|e| fail(e));
        }
    }
    eprintln!("torn-tail sweep: {cases} cuts, both profiles");
}

/// A read-only reader (the harness's `context`) of a file another program is writing: the
/// line being written is not there yet, then appears once it is whole.
fn a_line_still_being_written_is_not_there_yet_then_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    let (path, ids) = written_session(dir.path(), "s.jsonl", Profile::Harness, 2);
    let line = format!(
        r#"{{"type":"message","id":"ext1","parentId":"{}","timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":"from pi","timestamp":3}}}}"#,
        ids[1]
    );
    let half = line.len() / 2;
    append_bytes(&path, &line.as_bytes()[..half]);
    let mut reader = Session::open_read_only(&path, options(Profile::Harness)).unwrap();
    assert_eq!(ids_of(&reader), ids);
    let _ = reader
        .build_context(&reader.leaf().clone(), Default::default())
        .unwrap();
    append_bytes(&path, &line.as_bytes()[half..]);
    append_bytes(&path, b"\n");
    assert_eq!(reader.follow_tail().unwrap(), 1);
    assert_eq!(reader.leaf().id(), Some("ext1"));
    read_everything(&reader).unwrap();
}

fn append_bytes(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(bytes).unwrap();
}

/// pi takes no lock: a pi process may append to a session open here. Its entries are picked
/// up (with a warning), and this program's own appends and reads stay correct.
fn another_programs_appends_are_followed_not_turned_into_errors() {
    for profile in PROFILES {
        let dir = tempfile::tempdir().unwrap();
        let (path, ids) = written_session(dir.path(), "s.jsonl", profile, 2);
        let mut session = Session::open(&path, "/w", options(profile)).unwrap();
        let external = format!(
            r#"{{"type":"message","id":"ext1","parentId":"{}","timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":"from pi","timestamp":3}}}}"#,
            ids[1]
        );
        append_bytes(&path, format!("{external}\n").as_bytes());
        let mine = session.append(user("mine")).unwrap();
        append_bytes(
            &path,
            format!("{}\n", external.replace("ext1", "ext2")).as_bytes(),
        );
        let mine2 = session.append(user("mine again")).unwrap();
        let seen = ids_of(&session);
        for id in ["ext1", &mine, "ext2", &mine2] {
            assert!(
                seen.iter().any(|s| s == id),
                "{profile:?}: {id} in {seen:?}"
            );
        }
        read_everything(&session).unwrap_or_else(|e| panic!("{profile:?}: {e}"));
        assert!(
            session
                .warnings()
                .iter()
                .any(|w| w.message.contains("another program")),
            "{:?}",
            session.warnings()
        );
        drop(session);
        let reopened = Session::open_read_only(&path, options(profile)).unwrap();
        assert_eq!(ids_of(&reopened), seen);
    }
}

// ---------------------------------------------------------------------------------------------
// Finding 4: planted symlinks.

fn migration_never_writes_through_planted_symlinks_or_replaces_a_backup() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.jsonl");
    let v1 = "{\"type\":\"session\",\"id\":\"s1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}\n";
    std::fs::write(&path, v1).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    // The old fixed temporary name, and the backup name, both planted as symlinks.
    std::os::unix::fs::symlink(&victim, dir.path().join("old.jsonl.rewrite")).unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("old.jsonl.v1.bak")).unwrap();
    let session = Session::open(&path, "/w", options(Profile::PiCli)).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(&path).unwrap().is_file());
    let kept = dir.path().join("old.jsonl.v1.bak.1");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), v1);
    let mode = std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the backup is private");
    assert!(
        session
            .warnings()
            .iter()
            .any(|w| w.message.contains("old.jsonl.v1.bak.1")),
        "{:?}",
        session.warnings()
    );
    drop(session);
    // A second migration of another v1 file keeps the existing backups as they are.
    std::fs::write(&path, v1).unwrap();
    Session::open(&path, "/w", options(Profile::PiCli)).unwrap();
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), v1);
    assert!(dir.path().join("old.jsonl.v1.bak.2").exists());
    // No temporary is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn a_session_reached_through_a_symlink_still_opens_and_stays_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let (real, _) = written_session(dir.path(), "real.jsonl", Profile::Harness, 2);
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let mut session = Session::open(&link, "/w", options(Profile::Harness)).unwrap();
    session.append(user("through the link")).unwrap();
    drop(session);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        Session::open_read_only(&real, options(Profile::Harness))
            .unwrap()
            .len(),
        3
    );
}

// ---------------------------------------------------------------------------------------------
// Finding 5: FIFOs, devices and a hostile listing cache.

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Runs `f` on a thread and fails if it takes longer than `limit` (a hang).
fn within<T: Send + 'static>(
    limit: Duration,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("{what} did not finish within {limit:?}"))
}

fn fifos_and_devices_are_refused_by_name_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.jsonl");
    mkfifo(&fifo);
    let null = dir.path().join("null.jsonl");
    std::os::unix::fs::symlink("/dev/null", &null).unwrap();
    let zero = dir.path().join("zero.jsonl");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    for path in [fifo, null, zero] {
        for profile in PROFILES {
            let p = path.clone();
            let (read, write) = within(Duration::from_secs(5), "opening a non-file", move || {
                (
                    Session::open_read_only(&p, options(profile)).map(|_| ()),
                    Session::open(&p, "/w", options(profile)).map(|_| ()),
                )
            });
            for result in [read, write] {
                let error = result.expect_err("a non-file is not a session");
                assert_eq!(error.kind, ErrorKind::Io);
                assert!(
                    error.message.contains(&*path.to_string_lossy())
                        && error.message.ends_with("not a regular file"),
                    "{}",
                    error.message
                );
            }
        }
    }
}

fn a_hostile_listing_cache_neither_blocks_nor_grows_memory() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    std::fs::create_dir(&sessions).unwrap();
    written_session(&sessions, "a.jsonl", Profile::PiCli, 2);
    let cache = sessions.join(".pi-session-list.cache");
    let env = PathEnv::new(
        dir.path().to_str().unwrap(),
        dir.path().to_str().unwrap(),
        None,
    )
    .unwrap();
    for plant in ["fifo", "zero"] {
        let _ = std::fs::remove_file(&cache);
        match plant {
            "fifo" => mkfifo(&cache),
            _ => std::os::unix::fs::symlink("/dev/zero", &cache).unwrap(),
        }
        let repo = Repo::new(env.clone()).with_cache(CachePolicy::ReadWrite);
        let dir_text = sessions.to_string_lossy().into_owned();
        let listing = within(Duration::from_secs(10), "listing", move || {
            repo.list("/w", Some(&dir_text)).unwrap()
        });
        assert_eq!(listing.sessions.len(), 1, "{plant}");
        // The planted cache was replaced by a real one (renamed over the name, not written
        // through it).
        assert!(
            std::fs::symlink_metadata(&cache).unwrap().is_file(),
            "{plant}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Finding 10: nesting over 1000 levels inside an otherwise valid entry.

fn deep_nesting_inside_a_valid_entry_is_refused_at_open_not_at_every_read() {
    let dir = tempfile::tempdir().unwrap();
    let (path, ids) = written_session(dir.path(), "s.jsonl", Profile::PiCli, 2);
    let deep = format!(
        r#"{{"type":"custom","id":"deep","parentId":"{}","timestamp":"2026-01-01T00:00:00.000Z","customType":"x","data":{}{}}}"#,
        ids[1],
        "[".repeat(1500),
        "]".repeat(1500)
    );
    append_bytes(&path, format!("{deep}\n").as_bytes());
    let session = Session::open_read_only(&path, options(Profile::PiCli)).unwrap();
    assert_eq!(ids_of(&session), ids, "the deep line is skipped");
    assert!(
        session
            .warnings()
            .iter()
            .any(|w| w.line == 4 && w.message.contains("nesting too deep")),
        "{:?}",
        session.warnings()
    );
    read_everything(&session).unwrap();
    let findings = pi_session::session::check_file(&path, options(Profile::PiCli)).unwrap();
    assert!(findings.iter().any(|f| f.line == 4), "{findings:?}");
    // The harness refuses the file, naming the line, at open (not at a later read).
    let (hpath, hids) = written_session(dir.path(), "h.jsonl", Profile::Harness, 2);
    append_bytes(
        &hpath,
        format!("{}\n", deep.replace(&ids[1], &hids[1])).as_bytes(),
    );
    let error = Session::open_read_only(&hpath, options(Profile::Harness)).unwrap_err();
    assert_eq!((error.kind, error.line), (ErrorKind::InvalidEntry, Some(4)));
}

// ---------------------------------------------------------------------------------------------
// Finding 6: memory in proportion to the input.

/// Peak RSS of a `pi-session` run, in KiB, as a small process of its own sees it. The suite is
/// one large process, and a child it starts inherits its peak at `exec` (Linux keeps the larger
/// of the old and new images' in `ru_maxrss`), so the run is started by a python3 that reports
/// its one child's peak (`RUSAGE_CHILDREN`): python's own image is small.
fn child_peak_kib(args: &[&str]) -> u64 {
    let script = "import resource, subprocess, sys\n\
                  code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n\
                  print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)";
    let output = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_pi-session"))
        .args(args)
        .output()
        .expect("python3 runs (the suite needs it)");
    let text = String::from_utf8_lossy(&output.stdout);
    let mut words = text.split_whitespace();
    let (code, peak) = (words.next(), words.next());
    assert!(
        output.status.success() && code == Some("0"),
        "{args:?}: {text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    peak.and_then(|p| p.parse().ok()).expect("a peak in KiB")
}

fn memory_stays_in_proportion_to_the_input() {
    let dir = tempfile::tempdir().unwrap();
    // 100,000 tiny entries, whose context
    // document was once held whole, several times over (about 300 MB).
    let many = dir.path().join("many.jsonl");
    let mut text = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n",
    );
    let mut parent = "null".to_string();
    for i in 0..100_000 {
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"{i:08x}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"m\",\"timestamp\":1}}}}\n"
        ));
        parent = format!("\"{i:08x}\"");
    }
    std::fs::write(&many, &text).unwrap();
    let peak = child_peak_kib(&["context", many.to_str().unwrap()]);
    eprintln!(
        "context of 100,000 tiny entries ({} MB): peak RSS {} MB",
        text.len() >> 20,
        peak / 1024
    );
    assert!(
        peak < 96 * 1024,
        "context of 100,000 entries: peak {peak} KiB"
    );
    drop(text);

    let (path, ids) = written_session(dir.path(), "big.jsonl", Profile::PiCli, 2);
    let elements = 10_000_000; // a 20 MB line of `0,`
    let mut line = format!(
        r#"{{"type":"custom","id":"big","parentId":"{}","timestamp":"2026-01-01T00:00:00.000Z","customType":"x","data":["#,
        ids[1]
    );
    line.reserve(elements * 2 + 4);
    for i in 0..elements {
        line.push_str(if i == 0 { "0" } else { ",0" });
    }
    line.push_str("]}\n");
    append_bytes(&path, line.as_bytes());
    let line_kib = line.len() as u64 / 1024;
    drop(line);
    let started = Instant::now();
    for command in ["context", "tree"] {
        let peak = child_peak_kib(&[command, path.to_str().unwrap()]);
        eprintln!(
            "{command} of a {} MB custom line: peak RSS {} MB",
            line_kib / 1024,
            peak / 1024
        );
        // A tree of the line's body would cost over 15x the line.
        assert!(
            peak < 4 * line_kib + 64 * 1024,
            "{command}: peak {peak} KiB for a {line_kib} KiB line"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(60));
}

// ---------------------------------------------------------------------------------------------
// The mutational fuzz of session files.

/// Mutates written sessions (flips, cuts, splices, duplicated and deleted lines, deep nesting,
/// stray newlines) and checks, in both profiles: no panic; an error is a known kind with a
/// message; what `open` accepts, every read accepts; `check` agrees with `open`; an append to
/// what opened survives a reopen. `PI_SESSION_FUZZ_CASES` sets the number of cases.
fn mutated_session_files_give_clear_errors_and_consistent_reads() {
    let seed = seed("session file fuzz");
    let cases: usize = std::env::var("PI_SESSION_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let mut rng = StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut bases = Vec::new();
    for profile in PROFILES {
        let (path, _) = written_session(dir.path(), &format!("base-{profile:?}.jsonl"), profile, 6);
        let mut session = Session::open(&path, "/w", options(profile)).unwrap();
        let first = session.records()[0].id().unwrap().to_string();
        session.branch(&first).unwrap();
        session.append(user("branch")).unwrap();
        drop(session);
        bases.push(std::fs::read(&path).unwrap());
    }
    let case_path = dir.path().join("case.jsonl");
    let mut outcomes = [0usize; 2];
    for case in 0..cases {
        let base = &bases[rng.random_range(0..bases.len())];
        let bytes = mutate(base, &mut rng);
        for profile in PROFILES {
            let result = std::panic::catch_unwind(|| check_case(&case_path, &bytes, profile));
            let failure = match result {
                Ok(Ok(opened)) => {
                    outcomes[usize::from(opened)] += 1;
                    continue;
                }
                Ok(Err(message)) => message,
                Err(panic) => format!(
                    "panic: {}",
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default()
                ),
            };
            let kept = keep_failing_case("fuzz", &bytes);
            panic!(
                "seed {seed}, case {case}, {profile:?}: {failure} (case kept at {})",
                kept.display()
            );
        }
    }
    eprintln!(
        "session file fuzz: {cases} cases x 2 profiles: {} opened, {} refused with a clear error",
        outcomes[1], outcomes[0]
    );
}

fn mutate(base: &[u8], rng: &mut StdRng) -> Vec<u8> {
    let mut bytes = base.to_vec();
    for _ in 0..rng.random_range(1..4) {
        let at = rng.random_range(0..=bytes.len());
        match rng.random_range(0..9) {
            0 if !bytes.is_empty() => {
                let i = rng.random_range(0..bytes.len());
                bytes[i] ^= 1 << rng.random_range(0..8);
            }
            1 => bytes.truncate(at),
            2 => bytes.insert(at, b'\n'),
            3 => {
                let end = (at + rng.random_range(0..40)).min(bytes.len());
                bytes.drain(at..end);
            }
            4 => {
                let token: &[u8] = [
                    &b"\""[..],
                    b"{",
                    b"}",
                    b"null",
                    b"\\u",
                    b"\xff\xfe",
                    b"\"id\":\"x\",",
                    b"\"parentId\":5,",
                ][rng.random_range(0..8)];
                bytes.splice(at..at, token.iter().copied());
            }
            5 => {
                // Duplicate a line.
                let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
                let line = lines[rng.random_range(0..lines.len())].to_vec();
                bytes.splice(at..at, line.into_iter().chain([b'\n']));
            }
            6 => {
                let depth = rng.random_range(990..1010);
                let deep = format!(
                    "{{\"type\":\"custom\",\"id\":\"d\",\"parentId\":null,\"timestamp\":\"t\",\"data\":{}{}}}\n",
                    "[".repeat(depth),
                    "]".repeat(depth)
                );
                let at = bytes[..at]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1);
                bytes.splice(at..at, deep.bytes());
            }
            7 => {
                // Replace a line with a different kind of entry.
                let at = bytes[..at]
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |p| p + 1);
                let entry = br#"{"type":"leaf","id":"l1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"nope"}
"#;
                bytes.splice(at..at, entry.iter().copied());
            }
            _ => bytes.truncate(bytes.len().saturating_sub(rng.random_range(0..30))),
        }
    }
    bytes
}

/// One fuzz case in one profile: `Ok(true)` opened, `Ok(false)` refused clearly, `Err` a
/// broken promise.
fn check_case(path: &Path, bytes: &[u8], profile: Profile) -> Result<bool, String> {
    // Migrations of earlier cases left backups beside the case.
    if let Some(dir) = path.parent() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with("case.jsonl.")
            {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let _ = std::fs::remove_file(path);
    std::fs::write(path, bytes).unwrap();
    let known = [
        ErrorKind::InvalidSession,
        ErrorKind::InvalidEntry,
        ErrorKind::LineTooLong,
        ErrorKind::EntryNotFound,
    ];
    let checked = pi_session::session::check_file(path, options(profile));
    let session = match Session::open_read_only(path, options(profile)) {
        Ok(session) => session,
        Err(e) => {
            if !known.contains(&e.kind) || e.message.is_empty() {
                return Err(format!("open: unexpected {:?}: {}", e.kind, e.message));
            }
            if checked.is_ok() {
                return Err(format!("check passed but open failed: {}", e.message));
            }
            return Ok(false);
        }
    };
    if let Err(e) = &checked {
        return Err(format!("open passed but check failed: {}", e.message));
    }
    read_everything(&session)?;
    let mut reading = session;
    let leaf = reading.leaf().clone();
    if let Err(e) = reading.build_context(&leaf, Default::default()) {
        // The harness refuses a leaf naming no entry, with its message.
        if !(profile == Profile::Harness
            && matches!(e.kind, ErrorKind::InvalidSession | ErrorKind::EntryNotFound))
        {
            return Err(format!("context: {:?}: {}", e.kind, e.message));
        }
    }
    let _ = reading.tree_rows();
    drop(reading);
    // What opens read-only opens for writing, takes an append, and reopens with it.
    let mut writer = Session::open(path, "/w", options(profile))
        .map_err(|e| format!("open for writing: {:?}: {}", e.kind, e.message))?;
    let appended = match writer.append(user("fuzz")) {
        Ok(id) => Some(id),
        // The harness refuses to append under a leaf that names no entry.
        Err(e) if profile == Profile::Harness && e.kind == ErrorKind::InvalidSession => None,
        Err(e) => return Err(format!("append: {:?}: {}", e.kind, e.message)),
    };
    drop(writer);
    let reopened = Session::open_read_only(path, options(profile))
        .map_err(|e| format!("reopen after append: {:?}: {}", e.kind, e.message))?;
    if let Some(id) = appended
        && reopened.position(&id).is_none()
    {
        return Err(format!("the appended entry {id} is gone after reopening"));
    }
    read_everything(&reopened)?;
    Ok(true)
}

crate::tests! {
    delete_of_a_session_open_for_writing_is_refused_as_locked,
    a_torn_tail_never_costs_an_entry_in_either_profile,
    a_line_still_being_written_is_not_there_yet_then_is_followed,
    another_programs_appends_are_followed_not_turned_into_errors,
    migration_never_writes_through_planted_symlinks_or_replaces_a_backup,
    a_session_reached_through_a_symlink_still_opens_and_stays_a_symlink,
    fifos_and_devices_are_refused_by_name_without_blocking,
    a_hostile_listing_cache_neither_blocks_nor_grows_memory,
    deep_nesting_inside_a_valid_entry_is_refused_at_open_not_at_every_read,
    memory_stays_in_proportion_to_the_input,
    mutated_session_files_give_clear_errors_and_consistent_reads,
}
