//! Every error of the directory layer: its kind, its message, and that it names the file.

use crate::support;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

use pi_session::listing::{
    CachePolicy, INVALID_SESSION_ID_MESSAGE, PathEnv, RepoError, SkipReason, validate_session_id,
};
use pi_session::session::ErrorKind;
use support::files::*;
use support::listing::*;
#[allow(unused_imports)]
use support::{notice, oracle};

fn session_ids_are_validated_as_pi_validates_them() {
    let ids = [
        "a", "A1", "a.b_c-d", "0", "x..y", "", "-a", "a-", ".a", "a.", "a b", "a/b", "é", "a\n",
        "_a", "a_",
    ];
    let ours: Vec<Option<String>> = ids
        .iter()
        .map(|id| validate_session_id(id).err().map(|e| e.to_string()))
        .collect();
    for (id, result) in ids.iter().zip(&ours) {
        if let Some(message) = result {
            assert_eq!(message, INVALID_SESSION_ID_MESSAGE, "{id:?}");
            let err = validate_session_id(id).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        }
    }
    let world = World::new();
    let Some(oracle) = oracle("session_ids_are_validated_as_pi_validates_them") else {
        return;
    };
    let mut args = vec!["ids"];
    args.extend(ids);
    let pis = world.pi(oracle, &args);
    let pis: Vec<Option<String>> = pis["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().map(String::from))
        .collect();
    assert_eq!(ours, pis);
}

fn file_urls_that_name_no_path_are_refused() {
    let world = World::new();
    let repo = world.repo(CachePolicy::Off);
    for (cwd, reason) in [
        (
            "file://host/x",
            "File URL host must be \"localhost\" or empty on linux",
        ),
        (
            "file:///a%2Fb",
            "File URL path must not include encoded / characters",
        ),
        ("file:///a%zz", "URI malformed"),
    ] {
        let err = repo.list(cwd, None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert_eq!(err.to_string(), format!("invalid path {cwd:?}: {reason}"));
        assert!(repo.list_all(Some(cwd)).is_err());
        assert!(repo.continue_recent_candidate(cwd, None).is_err());
    }
    let err = PathEnv::new("/h", "/w", Some("file://host/agent")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
}

fn deleting_refuses_what_is_not_a_session_file() {
    let world = World::new();
    let repo = world.repo(CachePolicy::ReadWrite);
    let notes = world.work.join("notes.txt");
    fs::write(&notes, "keep me").unwrap();
    let err = repo.delete_session(&notes).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidSession);
    assert!(err.to_string().contains("notes.txt"));
    assert!(notes.exists());
    assert!(matches!(
        repo.delete_session(Path::new("/")),
        Err(RepoError::NotASessionFile { .. })
    ));

    // A directory with a session-like name cannot be deleted as a file.
    let dir = world.work.join("odd.jsonl");
    fs::create_dir(&dir).unwrap();
    let err = repo.delete_session(&dir).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Io);
    assert!(err.to_string().starts_with("cannot delete "));
    assert!(err.to_string().contains("odd.jsonl"));
    assert!(dir.exists());

    // Missing: nothing to do. Relative paths start at the environment's cwd.
    assert!(!repo.delete_session(Path::new("gone.jsonl")).unwrap());
    write_file(&world.work.join("rel.jsonl"), "{}", 1);
    assert!(repo.delete_session(Path::new("rel.jsonl")).unwrap());
    assert!(!world.work.join("rel.jsonl").exists());
}

fn files_that_cannot_be_listed_are_reported_with_their_reason() {
    let world = World::new();
    let dir = world.root.path().join("s");
    let h = header("h", "/p", "2026-01-01T00:00:00.000Z");
    write_file(&dir.join("empty.jsonl"), "", 1);
    write_file(&dir.join("not-session.jsonl"), "\n\n[1]\n", 1);
    write_file(
        &dir.join("no-body.jsonl"),
        format!("{h}\n{{\"type\":\"message\",\"message\":null}}\n"),
        1,
    );
    write_file(
        &dir.join("bad-content.jsonl"),
        format!(
            "{h}\n\n{{\"type\":\"message\",\"message\":{{\"role\":\"user\",\"content\":5}}}}\n"
        ),
        1,
    );
    write_file(
        &dir.join("bad-name.jsonl"),
        format!("{h}\n{{\"type\":\"session_info\",\"name\":[\"x\"]}}\n"),
        1,
    );
    symlink(dir.join("missing-target"), dir.join("dangling.jsonl")).unwrap();
    fs::create_dir(dir.join("folder.jsonl")).unwrap();
    let fifo = Command::new("mkfifo")
        .arg(dir.join("pipe.jsonl"))
        .status()
        .is_ok_and(|s| s.success());

    let listing = world
        .repo(CachePolicy::ReadWrite)
        .list_all(Some(dir.to_str().unwrap()))
        .unwrap();
    assert!(listing.sessions.is_empty());
    let found: Vec<(String, &str, Option<u64>, String)> = listing
        .warnings
        .iter()
        .map(|w| {
            (
                w.path.file_name().unwrap().to_string_lossy().into_owned(),
                w.reason.kind(),
                w.reason.line(),
                w.to_string(),
            )
        })
        .collect();
    let expect = |name: &str, kind: &str, line: Option<u64>, text: &str| {
        let row = found
            .iter()
            .find(|f| f.0 == name)
            .unwrap_or_else(|| panic!("{name} not reported"));
        assert_eq!((row.1, row.2), (kind, line), "{name}");
        assert!(
            row.3.contains(name),
            "the message names the file: {}",
            row.3
        );
        assert!(row.3.contains(text), "{}", row.3);
    };
    expect(
        "empty.jsonl",
        "no_session_data",
        None,
        "holds no session data",
    );
    expect(
        "not-session.jsonl",
        "not_a_session",
        Some(3),
        "(line 3) is not a session header",
    );
    expect(
        "no-body.jsonl",
        "message_without_body",
        Some(2),
        "line 2: a message entry has no message",
    );
    expect("bad-content.jsonl", "content_not_text", Some(3), "line 3:");
    expect(
        "bad-name.jsonl",
        "name_not_string",
        Some(2),
        "line 2: a session name",
    );
    expect("dangling.jsonl", "unreadable", None, "cannot be read");
    expect(
        "folder.jsonl",
        "unreadable",
        None,
        "cannot be read: it is a directory",
    );
    if fifo {
        expect("pipe.jsonl", "unreadable", None, "it is not a regular file");
    }
    assert_eq!(found.len(), 7 + usize::from(fifo));
    let repo = world.repo(CachePolicy::ReadWrite);
    let pick = repo
        .continue_recent_candidate("/p", Some(dir.to_str().unwrap()))
        .unwrap();
    // The FIFO is the newest file but is never opened (that would block); among the others
    // (equal mtimes, name order) the first with a valid header wins, whatever its content.
    assert!(pick.unwrap().ends_with("bad-content.jsonl"));
}

fn an_unreadable_session_directory_is_reported_not_fatal() {
    let world = World::new();
    let file = world.root.path().join("plain-file");
    fs::write(&file, "not a directory").unwrap();
    let listing = world
        .repo(CachePolicy::ReadWrite)
        .list("/p", Some(file.to_str().unwrap()))
        .unwrap();
    assert!(listing.sessions.is_empty());
    assert_eq!(listing.warnings.len(), 1);
    assert_eq!(listing.warnings[0].path, file);
    assert!(matches!(
        listing.warnings[0].reason,
        SkipReason::Unreadable { .. }
    ));
    // continueRecent treats it as "nothing to continue".
    let repo = world.repo(CachePolicy::ReadWrite);
    let none = repo
        .continue_recent_candidate("/p", Some(file.to_str().unwrap()))
        .unwrap();
    assert_eq!(none, None);
}

crate::tests! {
    session_ids_are_validated_as_pi_validates_them,
    file_urls_that_name_no_path_are_refused,
    deleting_refuses_what_is_not_a_session_file,
    files_that_cannot_be_listed_are_reported_with_their_reason,
    an_unreadable_session_directory_is_reported_not_fatal,
}
