//! The listing, `continueRecent`'s choice, paths and dates, compared with pi's own code run
//! through `tests/oracle/pi-listing.mjs` (the suite installs it: see `tests/support/oracle.rs`).

use crate::support;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use pi_session::Profile;
use pi_session::listing::{CachePolicy, SkipReason, parse_date};
use serde_json::Value;
use support::files::*;
use support::listing::*;
use support::{Oracle, generate, oracle, real_fixtures};

const H: &str =
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

/// Hand-made files covering every rule of pi's `buildSessionInfo`, by name.
fn hand_made_files() -> Vec<(&'static str, Vec<u8>)> {
    let user = |text: &str, ts: u64| message("u", "user", text, ts);
    let lines = |parts: &[&str]| format!("{}\n", parts.join("\n")).into_bytes();
    vec![
        (
            "01-basic.jsonl",
            lines(&[
                H,
                &user("hello there", 1767300000000),
                r#"{"type":"message","id":"a","parentId":"u","timestamp":"2026-01-02T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"first"},{"type":"toolCall","id":"t"},{"type":"text","text":"second"}],"timestamp":1767300001000}}"#,
                r#"{"type":"message","id":"t","parentId":"a","timestamp":"2026-01-02T00:00:02.000Z","message":{"role":"toolResult","content":[{"type":"text","text":"tool output"}],"timestamp":1767300009000}}"#,
                r#"{"type":"session_info","id":"n","parentId":"t","timestamp":"2026-01-02T00:00:03.000Z","name":"  My name \n"}"#,
            ]),
        ),
        ("02-empty.jsonl", Vec::new()),
        ("03-blank.jsonl", b"\n \n\t\n".to_vec()),
        (
            "04-garbage-then-header.jsonl",
            lines(&["not json", "{bad", H, &user("after garbage", 1767300000000)]),
        ),
        (
            "05-first-not-header.jsonl",
            lines(&[&user("orphan", 1767300000000), H]),
        ),
        (
            "06-v1.jsonl",
            lines(&[
                r#"{"type":"session","id":"v1-id","timestamp":"2025-12-09T00:53:29.825Z","cwd":"/p","provider":"anthropic","modelId":"m","thinkingLevel":"off"}"#,
                r#"{"type":"message","timestamp":"2025-12-09T00:54:00.000Z","message":{"role":"user","content":[{"type":"text","text":"v1 question"}],"timestamp":1765241640000}}"#,
                r#"{"type":"message","timestamp":"2025-12-09T00:55:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"v1 answer"}]}}"#,
            ]),
        ),
        (
            "07-v2.jsonl",
            lines(&[
                r#"{"type":"session","version":2,"id":"v2-id","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#,
                r#"{"type":"message","id":"h","parentId":null,"timestamp":"2026-01-03T00:00:00.000Z","message":{"role":"hookMessage","customType":"x","content":"hook text","display":true}}"#,
            ]),
        ),
        (
            "08-null-content.jsonl",
            lines(&[
                H,
                r#"{"type":"message","id":"u","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":null}}"#,
            ]),
        ),
        (
            "09-null-content-tool.jsonl",
            lines(&[
                H,
                &user("asks a tool", 1767300000000),
                r#"{"type":"message","id":"t","parentId":"u","timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"toolResult","content":null}}"#,
            ]),
        ),
        (
            "10-lone-surrogate.jsonl",
            lines(&[
                H,
                r#"{"type":"message","id":"u","parentId":null,"timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":"cut \ud83d emoji \ude42!","timestamp":1767300000000}}"#,
                r#"{"type":"session_info","id":"n","parentId":"u","timestamp":"2026-01-02T00:00:00.000Z","name":"name \udc00"}"#,
            ]),
        ),
        (
            "11-crlf.jsonl",
            format!(
                "{H}\r\n{}\r\n{}\r\n",
                user("crlf one", 1767300000000),
                user("crlf two", 1767300005000)
            )
            .into_bytes(),
        ),
        (
            "12-lone-cr.jsonl",
            format!(
                "{H}\r{}\r{}",
                user("cr one", 1767300000000),
                user("cr two", 1767300006000)
            )
            .into_bytes(),
        ),
        (
            "13-leading-blank.jsonl",
            format!("\n  \n{H}\n{}\n", user("after blank lines", 1767300000000)).into_bytes(),
        ),
        (
            "14-bom.jsonl",
            format!("\u{feff}{H}\n{}\n", user("after a BOM", 1767300000000)).into_bytes(),
        ),
        (
            "15-names.jsonl",
            lines(&[
                H,
                r#"{"type":"session_info","name":"first"}"#,
                r#"{"type":"session_info","name":null}"#,
                r#"{"type":"session_info","name":"   "}"#,
                r#"{"type":"session_info"}"#,
                r#"{"type":"session_info","name":"\u00a0final\u2028"}"#,
            ]),
        ),
        (
            "15b-name-cleared.jsonl",
            lines(&[
                H,
                r#"{"type":"session_info","name":"was set"}"#,
                r#"{"type":"session_info","name":""}"#,
            ]),
        ),
        (
            "16-name-number.jsonl",
            lines(&[H, r#"{"type":"session_info","name":5}"#]),
        ),
        (
            "17-message-missing.jsonl",
            lines(&[H, r#"{"type":"message","id":"m"}"#]),
        ),
        (
            "18-null-block.jsonl",
            lines(&[
                H,
                r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"x"},null]}}"#,
            ]),
        ),
        (
            "19-odd-text.jsonl",
            lines(&[
                H,
                r#"{"type":"message","message":{"role":"user","content":[{"type":"text","text":1.5e21},{"type":"text","text":true},{"type":"text","text":null},{"type":"text","text":[1,[2,null],{"a":1}]},{"type":"text","text":0.1}]}}"#,
                r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":""},{"type":"text","text":""}]}}"#,
                r#"{"type":"message","message":{"role":"assistant","content":[{"type":"image","data":"..."},"text",7]}}"#,
            ]),
        ),
        (
            "19b-object-content.jsonl",
            lines(&[
                H,
                r#"{"type":"message","message":{"role":"assistant","content":{"type":"text","text":"object content"}}}"#,
            ]),
        ),
        (
            "20-times.jsonl",
            lines(&[
                H,
                r#"{"type":"message","timestamp":"2026-01-05T00:00:00.000Z","message":{"role":"user","content":"float ts","timestamp":1767400000000.75}}"#,
                r#"{"type":"message","timestamp":1767500000000,"message":{"role":"assistant","content":"number entry ts"}}"#,
                r#"{"type":"message","timestamp":null,"message":{"role":"assistant","content":"null entry ts"}}"#,
                r#"{"type":"message","timestamp":"2026-02-30T00:00:00Z","message":{"role":"assistant","content":"overflow day"}}"#,
                r#"{"type":"message","timestamp":"yesterday","message":{"role":"assistant","content":"bad ts"}}"#,
                r#"{"type":"message","timestamp":["2026-03-01"],"message":{"role":"assistant","content":"array ts"}}"#,
                r#"{"type":"message","timestamp":"2026-01-06T00:00:00.000Z","message":{"role":"user","content":"string msg ts","timestamp":"1767999999999"}}"#,
            ]),
        ),
        (
            "21-header-odd.jsonl",
            lines(&[
                r#"{"type":"session","id":42,"timestamp":1767225600000,"cwd":7,"parentSession":"/x/parent.jsonl"}"#,
                r#"{"type":"custom","customType":"x"}"#,
            ]),
        ),
        (
            "22-no-id.jsonl",
            lines(&[
                r#"{"type":"session","version":3,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p","parentSession":{"deep":[1,"two"]}}"#,
                &user("no id", 1767300000000),
            ]),
        ),
        (
            "23-invalid-header-time.jsonl",
            lines(&[
                r#"{"type":"session","version":3,"id":"bad-time","timestamp":"garbage","cwd":"/p"}"#,
                r#"{"type":"message","timestamp":"garbage too","message":{"role":"user","content":"no usable time"}}"#,
            ]),
        ),
        (
            "24-duplicate-keys.jsonl",
            lines(&[
                H,
                r#"{"type":"custom","message":{"role":"user","content":"dup type"},"type":"message"}"#,
                r#"{"type":"message","message":{"role":"toolResult","content":"dup role","role":"user","timestamp":1767600000000}}"#,
                r#"{"type":"message","message":{"role":"user","content":"a","content":"dup content"}}"#,
            ]),
        ),
        (
            "25-non-objects.jsonl",
            lines(&[
                H,
                "0",
                "\"\"",
                "false",
                "null",
                "42",
                "\"x\"",
                "[1]",
                "true",
                "-0.0",
                &user("among non-objects", 1767300000000),
            ]),
        ),
        (
            "26-escaped-keys.jsonl",
            lines(&[
                H,
                r#"{"typ\u0065":"mess\u0061ge","m\u0065ssage":{"r\u006fle":"user","cont\u0065nt":"escaped \"keys\"\n","timestamp":1767300000000}}"#,
            ]),
        ),
        ("27-invalid-utf8.jsonl", {
            let mut bytes = format!("{H}\n").into_bytes();
            bytes.extend_from_slice(
                br#"{"type":"message","message":{"role":"user","content":"bad "#,
            );
            bytes.extend_from_slice(&[0xff, 0xe2, 0x82, b' ', 0xc3]);
            bytes.extend_from_slice(b" bytes\",\"timestamp\":1767300000000}}\n");
            bytes
        }),
        (
            "30-cwd-other.jsonl",
            lines(&[
                r#"{"type":"session","version":3,"id":"other","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/other"}"#,
                &user("other project", 1767300000000),
            ]),
        ),
        (
            "31-cwd-spellings.jsonl",
            lines(&[
                r#"{"type":"session","version":3,"id":"slash","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p/./"}"#,
                &user("trailing slash cwd", 1767300000000),
            ]),
        ),
        (
            "31b-cwd-url.jsonl",
            lines(&[
                r#"{"type":"session","version":3,"id":"url","timestamp":"2026-01-01T00:00:00.000Z","cwd":"file:///p"}"#,
                &user("file url cwd", 1767300000000),
            ]),
        ),
        (
            "31c-cwd-empty.jsonl",
            lines(&[
                r#"{"type":"session","version":3,"id":"empty-cwd","timestamp":"2026-01-01T00:00:00.000Z","cwd":""}"#,
                &user("empty cwd", 1767300000000),
            ]),
        ),
        ("32-tie-a.jsonl", lines(&[H, &user("tie a", 1767700000000)])),
        ("32-tie-b.jsonl", lines(&[H, &user("tie b", 1767700000000)])),
        (
            "35-image-only.jsonl",
            lines(&[
                H,
                r#"{"type":"message","message":{"role":"user","content":[{"type":"image","data":"AAAA","mimeType":"image/png"}],"timestamp":1767300000000}}"#,
            ]),
        ),
        ("37-header-only.jsonl", lines(&[H])),
        (
            "38-no-final-newline.jsonl",
            format!("{H}\n{}", user("no final newline", 1767300000000)).into_bytes(),
        ),
        (
            "39-assistant-first.jsonl",
            lines(&[
                H,
                &message("a", "assistant", "assistant speaks first", 1767300000000),
                &user("then the user", 1767300001000),
            ]),
        ),
        (
            "40-zero-activity.jsonl",
            lines(&[
                H,
                &message("a", "user", "zero time", 0),
                r#"{"type":"message","message":{"role":"user","content":"negative time","timestamp":-5}}"#,
            ]),
        ),
        (
            "42-deep-junk.jsonl",
            lines(&[
                H,
                &format!(
                    r#"{{"type":"custom","data":{}{}}}"#,
                    "[".repeat(3000),
                    "]".repeat(3000)
                ),
                &user("after deep junk", 1767300000000),
            ]),
        ),
    ]
}

/// A flat session directory: hand-made files, the real fixtures, generated sessions, a
/// directory and a symlink named like sessions, and a file pi does not list.
/// The generated sessions need the oracle's Node (absent only when the suite opted out).
fn build_flat_dir(dir: &Path, oracle: Option<&Oracle>) {
    for (i, (name, content)) in hand_made_files().into_iter().enumerate() {
        write_file(&dir.join(name), content, 100 + i as u64 * 10);
    }
    for source in real_fixtures() {
        let copy = dir.join(source.file_name().unwrap());
        fs::copy(&source, &copy).unwrap();
        set_mtime(&copy, 5);
    }
    if let Some(oracle) = oracle {
        let args = [
            "dir",
            "--out",
            dir.to_str().unwrap(),
            "--count",
            "12",
            "--size",
            "40KB",
        ];
        let args = args.into_iter().chain(["--seed", "5", "--cwd", "/p"]);
        generate(oracle, &args.map(std::ffi::OsStr::new).collect::<Vec<_>>());
    }
    fs::create_dir_all(dir.join("33-dir.jsonl")).unwrap();
    fs::write(dir.join("notes.txt"), "not a session").unwrap();
    symlink(dir.join("01-basic.jsonl"), dir.join("34-symlink.jsonl")).unwrap();
}

fn every_jsonl_is_accounted_for(dir: &Path, listing: &pi_session::listing::Listing) {
    let mut seen: Vec<String> = listing
        .sessions
        .iter()
        .map(|s| s.path.to_string_lossy().into_owned())
        .chain(
            listing
                .warnings
                .iter()
                .map(|w| w.path.to_string_lossy().into_owned()),
        )
        .collect();
    seen.sort();
    let mut on_disk: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".jsonl"))
        .collect();
    on_disk.sort();
    assert_eq!(seen, on_disk, "every .jsonl file is listed or reported");
}

fn flat_session_directory_lists_as_pi_lists_it() {
    let world = World::new();
    let oracle = oracle("flat_session_directory_lists_as_pi_lists_it");
    let flat = world.root.path().join("flat");
    build_flat_dir(&flat, oracle);
    let flat_str = flat.to_str().unwrap();

    // Independent of Node: the reasons reported for the files pi drops.
    let listing = world
        .repo(CachePolicy::Off)
        .list_all(Some(flat_str))
        .unwrap();
    every_jsonl_is_accounted_for(&flat, &listing);
    let reason = |name: &str| {
        listing
            .warnings
            .iter()
            .find(|w| w.path.ends_with(name))
            .map(|w| w.reason.clone())
    };
    assert_eq!(reason("02-empty.jsonl"), Some(SkipReason::NoSessionData));
    assert_eq!(reason("03-blank.jsonl"), Some(SkipReason::NoSessionData));
    assert_eq!(
        reason("05-first-not-header.jsonl"),
        Some(SkipReason::NotASession { line: 1 })
    );
    assert_eq!(
        reason("08-null-content.jsonl"),
        Some(SkipReason::ContentNotText { line: 2 })
    );
    assert_eq!(
        reason("16-name-number.jsonl"),
        Some(SkipReason::NameNotString { line: 2 })
    );
    assert_eq!(
        reason("17-message-missing.jsonl"),
        Some(SkipReason::MessageWithoutBody { line: 2 })
    );
    assert_eq!(
        reason("18-null-block.jsonl"),
        Some(SkipReason::ContentNotText { line: 2 })
    );
    assert_eq!(
        reason("19b-object-content.jsonl"),
        Some(SkipReason::ContentNotText { line: 2 })
    );
    assert!(matches!(
        reason("33-dir.jsonl"),
        Some(SkipReason::Unreadable { .. })
    ));
    assert_eq!(reason("01-basic.jsonl"), None);
    let odd = listing
        .sessions
        .iter()
        .find(|s| s.path.ends_with("19-odd-text.jsonl"))
        .expect("19-odd-text.jsonl is listed");
    assert_eq!(odd.first_message, "1.5e+21 true  1,2,,[object Object] 0.1");
    assert_eq!(
        odd.all_messages_text,
        "1.5e+21 true  1,2,,[object Object] 0.1  "
    );

    let Some(oracle) = oracle else {
        unreachable!("support::oracle fails the test without the oracle");
    };
    let pi_list = PROFILES.map(|p| {
        world.pi_of(
            oracle,
            p,
            &["list", "--cwd", "/p", "--session-dir", flat_str],
        )
    });
    let pi_all = PROFILES.map(|p| world.pi_of(oracle, p, &["list-all", "--session-dir", flat_str]));
    // Files changed within two seconds of being read are not cached; let them age first.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    for (policy, round) in [
        (CachePolicy::Off, "no cache"),
        (CachePolicy::ReadWrite, "cold cache"),
        (CachePolicy::ReadWrite, "warm cache"),
    ] {
        for (i, profile) in PROFILES.into_iter().enumerate() {
            let repo = world.repo(policy);
            let ours = repo.list_as(profile, "/p", Some(flat_str)).unwrap();
            assert_same_rows(
                &rows(&ours),
                &pi_list[i]["sessions"],
                &format!("{}: list, {round}", profile.name()),
            );
            let ours = repo.list_all_as(profile, Some(flat_str)).unwrap();
            assert_same_rows(
                &rows(&ours),
                &pi_all[i]["sessions"],
                &format!("{}: listAll, {round}", profile.name()),
            );
            every_jsonl_is_accounted_for(&flat, &ours);
            if round == "warm cache" {
                // Every row comes from the cache; the directory named like a session is not
                // opened at all.
                assert_eq!(ours.stats.files_read, 0, "a warm listing reads no file");
            }
        }
    }
    // A relative spelling of the directory gives relative paths, as in pi.
    let relative = "../flat/";
    for profile in PROFILES {
        let pi_rel = world.pi_of(
            oracle,
            profile,
            &["list", "--cwd", "/p", "--session-dir", relative],
        );
        let ours = world
            .repo(CachePolicy::ReadWrite)
            .list_as(profile, "/p", Some(relative))
            .unwrap();
        assert_same_rows(
            &rows(&ours),
            &pi_rel["sessions"],
            &format!("{}: list with a relative directory", profile.name()),
        );
    }
}

/// The two SessionManager versions whose listings are compared with their own code.
const PROFILES: [Profile; 2] = [Profile::PiCli, Profile::Pi16];

/// The default layout: `<agentDir>/sessions/<encoded cwd>/`, other projects beside it, and
/// things `listAll` must ignore (files in the root, a symlinked directory).
fn build_agent_dir(sessions_root: &Path, project_dir_name: &str) {
    let project = sessions_root.join(project_dir_name);
    for (i, (name, content)) in hand_made_files().into_iter().take(12).enumerate() {
        write_file(&project.join(name), content, 500 + i as u64);
    }
    let other = sessions_root.join("--other--");
    write_file(
        &other.join("o.jsonl"),
        format!(
            "{}\n{}\n",
            header("o", "/other", "2026-01-01T00:00:00.000Z"),
            message("u", "user", "other project", 1767900000000)
        ),
        10,
    );
    fs::create_dir_all(sessions_root.join("--empty--")).unwrap();
    write_file(&sessions_root.join("stray.jsonl"), format!("{H}\n"), 10);
    symlink(&other, sessions_root.join("--linked--")).unwrap();
}

/// One agent-directory setting (none, relative, `~/...`): its own trial.
fn agent_directory_lists_as_pi_lists_it(agent_setting: Option<&str>) {
    let mut world = World::new();
    world.agent_dir_setting = agent_setting.map(String::from);
    let env = world.env();
    let project_dir = env.default_session_dir("/p").unwrap();
    let name = Path::new(&project_dir).file_name().unwrap().to_owned();
    let root = world.work.join(world.sessions_root());
    build_agent_dir(&root, name.to_str().unwrap());
    let what = format!("agent dir {agent_setting:?}");

    let listing = world.repo(CachePolicy::Off).list_all(None).unwrap();
    assert!(
        listing
            .sessions
            .iter()
            .all(|s| !s.path.ends_with("stray.jsonl")),
        "{what}: files in the sessions root are not listed"
    );
    let Some(oracle) = oracle(&format!(
        "agent_directory_lists_as_pi_lists_it with {agent_setting:?}"
    )) else {
        unreachable!("support::oracle fails the test without the oracle");
    };
    for profile in PROFILES {
        let pi_list = world.pi_of(oracle, profile, &["list", "--cwd", "/p"]);
        let pi_all = world.pi_of(oracle, profile, &["list-all"]);
        let what = format!("{what}, {}", profile.name());
        for policy in [
            CachePolicy::Off,
            CachePolicy::ReadWrite,
            CachePolicy::ReadWrite,
        ] {
            let repo = world.repo(policy);
            let ours = repo.list_as(profile, "/p", None).unwrap();
            assert_same_rows(&rows(&ours), &pi_list["sessions"], &format!("{what}: list"));
            let ours = repo.list_all_as(profile, None).unwrap();
            assert_same_rows(
                &rows(&ours),
                &pi_all["sessions"],
                &format!("{what}: listAll"),
            );
        }
    }
}

fn a_missing_sessions_root_lists_nothing() {
    let world = World::new();
    let repo = world.repo(CachePolicy::ReadWrite);
    assert!(repo.list_all(None).unwrap().sessions.is_empty());
    assert!(repo.list("/nowhere", None).unwrap().sessions.is_empty());
    assert!(
        repo.list_all_as(Profile::Pi16, None)
            .unwrap()
            .sessions
            .is_empty()
    );
    let Some(oracle) = oracle("a_missing_sessions_root_lists_nothing") else {
        unreachable!("support::oracle fails the test without the oracle");
    };
    for profile in PROFILES {
        assert_eq!(
            world.pi_of(oracle, profile, &["list-all"])["sessions"],
            Value::Array(vec![])
        );
    }
}

fn continue_recent_picks_the_file_pi_picks() {
    let world = World::new();
    let flat = world.root.path().join("recent");
    let flat_str = flat.to_str().unwrap();
    let valid = |id: &str, cwd: &str| {
        format!(
            "{}\n{}\n",
            header(id, cwd, "2026-01-01T00:00:00.000Z"),
            message("u", "user", "x", 1)
        )
    };
    // Newest first by mtime: an invalid file, one of another project, a header without a
    // string id, a header after garbage (valid), then older valid ones.
    write_file(
        &flat.join("a-invalid.jsonl"),
        "{\"type\":\"message\"}\n",
        900,
    );
    write_file(&flat.join("b-other.jsonl"), valid("b", "/other"), 800);
    write_file(
        &flat.join("c-numeric-id.jsonl"),
        "{\"type\":\"session\",\"id\":5,\"cwd\":\"/p\"}\n",
        700,
    );
    write_file(
        &flat.join("d-garbage-first.jsonl"),
        format!("junk\n\n{}", valid("d", "/p/")),
        600,
    );
    write_file(&flat.join("e-old.jsonl"), valid("e", "/p"), 100);
    write_file(&flat.join("f-tie.jsonl"), valid("f", "/p"), 100);
    // A header beyond the 1 MiB scan limit does not count.
    let mut big = "x".repeat(1024 * 1024 + 10);
    big.push('\n');
    big.push_str(&valid("g", "/p"));
    write_file(&flat.join("g-late-header.jsonl"), big, 650);

    let repo = world.repo(CachePolicy::ReadWrite);
    let pick = |cwd: &str, dir: Option<&str>| {
        repo.continue_recent_candidate(cwd, dir)
            .unwrap()
            .map(|p| p.to_string_lossy().into_owned())
    };
    assert_eq!(
        pick("/p", Some(flat_str)).unwrap(),
        format!("{flat_str}/d-garbage-first.jsonl")
    );
    assert_eq!(
        pick("/other", Some(flat_str)).unwrap(),
        format!("{flat_str}/b-other.jsonl")
    );
    assert_eq!(pick("/nobody", Some(flat_str)), None);

    // Default directory: no cwd filter.
    let default_dir = world.env().default_session_dir("/p").unwrap();
    let default_dir = world.work.join(default_dir);
    write_file(&default_dir.join("x.jsonl"), valid("x", "/elsewhere"), 50);
    write_file(&default_dir.join("y.jsonl"), valid("y", "/elsewhere"), 50);
    assert!(pick("/p", None).unwrap().ends_with("/x.jsonl"));

    let Some(oracle) = oracle("continue_recent_picks_the_file_pi_picks") else {
        unreachable!("support::oracle fails the test without the oracle");
    };
    for (cwd, dir) in [
        ("/p", Some(flat_str)),
        ("/other", Some(flat_str)),
        ("/nobody", Some(flat_str)),
        ("", Some(flat_str)),
        ("/p", None),
        ("/q", None),
    ] {
        let mut args = vec!["recent", "--cwd", cwd];
        if let Some(dir) = dir {
            args.extend(["--session-dir", dir]);
        }
        for profile in PROFILES {
            let pis = world.pi_of(oracle, profile, &args)["recent"]
                .as_str()
                .map(String::from);
            let ours = repo
                .continue_recent_candidate_as(profile, cwd, dir)
                .unwrap()
                .map(|p| p.to_string_lossy().into_owned());
            assert_eq!(
                ours,
                pis,
                "{}: recent for {cwd:?} in {dir:?}",
                profile.name()
            );
        }
    }
    // continueRecent itself (it opens the chosen file; d is v3, so nothing is rewritten).
    let opened = world.pi(
        oracle,
        &["continue", "--cwd", "/p", "--session-dir", flat_str],
    );
    assert_eq!(
        opened["file"].as_str(),
        pick("/p", Some(flat_str)).as_deref()
    );
}

/// The working directories whose paths are compared (`resolvePath`, the default session
/// directory).
const CWDS: [&str; 13] = [
    "/Users/ann/proj.x",
    "/",
    "~",
    "~/x/",
    "rel/../a/",
    "/a//b/./c/",
    "file:///tmp/a%20b",
    "file://localhost/srv/x?q=1#f",
    ".",
    "..",
    "C:\\work\\a",
    "/a:b\\c",
    "~user/x",
];

/// One working directory of [`CWDS`], resolved as pi resolves it: its own trial.
fn paths_resolve_as_pi_resolves_them(cwd: &str) {
    let world = World::new();
    let Some(oracle) = oracle("paths_resolve_as_pi_resolves_them") else {
        unreachable!("support::oracle fails the test without the oracle");
    };
    let env = world.env();
    let pis = world.pi(oracle, &["paths", "--cwd", cwd]);
    assert_eq!(
        env.resolve_path(cwd).unwrap(),
        pis["resolved"],
        "resolvePath({cwd:?})"
    );
    let ours = env.default_session_dir(cwd).unwrap();
    assert_eq!(ours, pis["defaultSessionDir"], "default dir of {cwd:?}");
}

/// The texts whose `Date.parse` is compared.
// Zone-less date-times are local time and are left out: this process's zone may differ.
pub const DATE_TEXTS: [&str; 46] = [
    "2026-03-24T14:08:44.123Z",
    "2026-03-24",
    "2026-03",
    "2026",
    "2026Z",
    "2026-03-24Z",
    "2026-03-24T14:08:44.123456Z",
    "2026-03-24 14:08:44Z",
    "2026-03-24t14:08:44z",
    "+002026-03-24T00:00:00Z",
    "-000001-01-01T00:00:00Z",
    "2026-03-24T14:08:44+01:00",
    "2026-03-24T14:08:44+0100",
    "2026-03-24T14:08:44-0130",
    "2026-03-24T24:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-02-31",
    "2026-04-31T00:00:00Z",
    "2026-03-24T23:59:59.9999Z",
    "0000-01-01T00:00:00Z",
    "+275760-09-13T00:00:00.000Z",
    "-271821-04-20T00:00:00.000Z",
    "+275760-09-13T00:00:00.001Z",
    "2026-13-01",
    " 2026-03-24T14:08:44.123Z",
    "2026-03-24T14:08:44.123Z ",
    "2026-03-24T14:08:60Z",
    "20260324",
    "2026-03-24T14:08:44.Z",
    "2026-03-24T14Z",
    "2026-03-24T24:01:00Z",
    "2026-03-24T24:00:00.0001Z",
    "2026-03-24T14:08:44.123+01",
    "2026-03-24T14:08:44+24:00",
    "2026-03-24+01:00",
    "-000000-01-01T00:00:00Z",
    "2026-04-32T00:00:00Z",
    "",
    "1970-01-01T00:00:00.000Z",
    "2026-03-24T14:08+01:00",
    "2026-03-24T14:08:44.000000Z",
    "2026-03-24T14:08:44.123-23:59",
    "2026-03-24T14:08:44,5Z",
    "2026-03-24T14:08:4Z",
    "2026-03-24T24:00Z",
    "10000-01-01T00:00:00.000Z",
];

/// pi's `Date.parse` of every text in [`DATE_TEXTS`]: one run of pi's code, made by the first
/// trial that needs it and shared by the others.
fn pi_dates() -> &'static [Value] {
    static DATES: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
    DATES.get_or_init(|| {
        let world = World::new();
        let Some(oracle) = oracle("repo::dates") else {
            unreachable!("support::oracle fails the test without the oracle");
        };
        let mut args = vec!["dates"];
        args.extend(DATE_TEXTS);
        let pis = world.pi(oracle, &args);
        pis["dates"].as_array().unwrap().clone()
    })
}

/// One text of [`DATE_TEXTS`], read as V8's `Date.parse` reads it: its own trial.
fn date_parses_as_v8_parses_it(i: usize) {
    let text = DATE_TEXTS[i];
    let expected = &pi_dates()[i];
    let ours = parse_date(text).date.millis();
    assert_eq!(
        ours.map(|m| m as f64),
        expected.as_f64(),
        "Date.parse({text:?})"
    );
}

/// The trials: one per test, the agent directory's one per setting, the paths one per working
/// directory, the dates one per text; each is reported as ignored, with the reason, without the oracle.
pub fn trials() -> Vec<libtest_mimic::Trial> {
    let mut trials = vec![
        crate::with_pi("repo::flat_session_directory_lists_as_pi_lists_it", || {
            flat_session_directory_lists_as_pi_lists_it()
        }),
        crate::with_pi("repo::a_missing_sessions_root_lists_nothing", || {
            a_missing_sessions_root_lists_nothing()
        }),
        crate::with_pi("repo::continue_recent_picks_the_file_pi_picks", || {
            continue_recent_picks_the_file_pi_picks()
        }),
    ];
    for (name, setting) in [
        ("default", None),
        ("relative", Some("rel-agent")),
        ("home", Some("~/custom-agent/")),
    ] {
        trials.push(crate::with_pi(
            format!("repo::agent_directory_lists_as_pi_lists_it::{name}"),
            move || agent_directory_lists_as_pi_lists_it(setting),
        ));
    }
    for (i, cwd) in CWDS.iter().enumerate() {
        trials.push(crate::with_pi(
            format!("repo::paths_resolve_as_pi_resolves_them::{i:02}_{cwd:?}"),
            move || paths_resolve_as_pi_resolves_them(cwd),
        ));
    }
    for (i, text) in DATE_TEXTS.iter().enumerate() {
        trials.push(crate::with_pi(
            format!("repo::dates_parse_as_v8_parses_them::{i:02}_{text:?}"),
            move || date_parses_as_v8_parses_it(i),
        ));
    }
    trials
}
