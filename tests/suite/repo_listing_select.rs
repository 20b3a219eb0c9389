//! What a listing tells and selects beyond pi's rows: warnings for files holding what only pi
//! 1.6 writes (in every profile but pi-1.6, cached and uncached, the same texts as the store's
//! readers give), pi's `/resume` search compared with pi's own `filterAndSortSessions` on Node,
//! paging, and rows with only some fields.

use crate::support;

use std::fs;
use std::path::{Path, PathBuf};

use pi_session::Profile;
use pi_session::listing::{CachePolicy, ListField, ListSelection, Listing, Pi16Note, render};
use pi_session::listing::{NameFilter, SearchQuery, SearchSort};
use pi_session::session::{Session, SessionOptions};
use serde_json::{Value, json};
use support::files::*;
use support::listing::*;
use support::oracle;

const PI16_FILES: [&str; 3] = [
    "pi16-compactions.jsonl",
    "pi16-context-edits.jsonl",
    "pi16-edit-without-replacement.jsonl",
];

/// `<root>/--proj--/` holding the pi 1.6 files of `tests/files`, a plain session, and a line
/// only the exact reader takes (a lone surrogate) that is a `usage` entry.
fn pi16_world(world: &World) -> (PathBuf, PathBuf) {
    let root = world.root.path().join("sessions");
    let dir = root.join("--proj--");
    let files = support::root().join("tests/files");
    for name in PI16_FILES {
        write_file(&dir.join(name), fs::read(files.join(name)).unwrap(), 100);
    }
    let plain = format!(
        "{}\n{}\n",
        header("plain", "/proj", "2026-01-01T00:00:00.000Z"),
        r#"{"type":"message","id":"u","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#
    );
    write_file(&dir.join("plain.jsonl"), plain, 100);
    let exact = format!(
        "{}\n{}\n{}\n",
        header("exact", "/proj", "2026-01-01T00:00:00.000Z"),
        r#"{"type":"message","id":"u","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        r#"{"type":"usage","id":"g","parentId":"u","timestamp":"2026-01-01T00:00:02.000Z","kind":"cache_warm","note":"\ud800"}"#
    );
    write_file(&dir.join("exact.jsonl"), exact, 100);
    (root, dir)
}

/// The store's warnings about pi 1.6 features when `file` is opened in `profile`.
fn store_warnings(file: &Path, profile: Profile) -> Vec<(u64, String)> {
    let session = Session::open_read_only(file, SessionOptions::with_profile(profile)).unwrap();
    session
        .warnings()
        .iter()
        .filter(|w| w.message.contains("only pi 1.6 writes"))
        .map(|w| (w.line, w.message.clone()))
        .collect()
}

fn notes_by_file(notes: &[Pi16Note]) -> Vec<(String, u64, String)> {
    let mut out: Vec<_> = notes
        .iter()
        .map(|n| {
            let name = n.path.file_name().unwrap().to_string_lossy().into_owned();
            (name, n.mark.line, n.message())
        })
        .collect();
    out.sort();
    out
}

fn files_only_pi16_writes_are_listing_warnings_in_other_profiles() {
    let world = World::new();
    let (root, dir) = pi16_world(&world);
    let dir_text = dir.to_str().unwrap();
    // A file changed within two seconds of its reading is not trusted from the cache.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    // What the store says when each file is opened in pi-cli: the listing must say the same.
    let mut expected: Vec<(String, u64, String)> = Vec::new();
    for name in PI16_FILES.iter().chain(&["exact.jsonl"]) {
        let warnings = store_warnings(&dir.join(name), Profile::PiCli);
        assert!(!warnings.is_empty(), "{name} has pi 1.6 features");
        expected.extend(warnings.into_iter().map(|(l, m)| (name.to_string(), l, m)));
    }
    expected.sort();
    let for_harness: Vec<_> = expected
        .iter()
        .map(|(n, l, m)| {
            (
                n.clone(),
                *l,
                m.replace("profile pi-cli", "profile harness"),
            )
        })
        .collect();

    for (what, cache) in [
        ("uncached", CachePolicy::Off),
        ("cold", CachePolicy::ReadWrite),
        ("warm", CachePolicy::ReadWrite),
    ] {
        let repo = world.repo(cache);
        let check = |listing: &Listing, profile: Profile| {
            let got = notes_by_file(&listing.pi16_notes);
            match profile {
                Profile::Pi16 => assert!(got.is_empty(), "{what}: pi-1.6 warns of nothing"),
                _ => assert_eq!(got, expected, "{what} {}", profile.name()),
            }
            assert_eq!(listing.sessions.len(), 5, "{what}: every file is listed");
            if what == "warm" {
                assert_eq!(listing.stats.files_read, 0, "{what}: rows from the cache");
            }
        };
        for profile in [Profile::PiCli, Profile::Pi16] {
            check(&repo.list_all_as(profile, Some(dir_text)).unwrap(), profile);
        }
        // `list` filters by header cwd: only the files of that cwd are noted.
        let listed = repo
            .list_as(Profile::PiCli, "/proj", Some(dir_text))
            .unwrap();
        let names: Vec<_> = notes_by_file(&listed.pi16_notes);
        assert_eq!(
            names,
            expected
                .iter()
                .filter(|(n, ..)| n == "exact.jsonl")
                .cloned()
                .collect::<Vec<_>>(),
            "{what}: list of /proj"
        );
        let harness = repo
            .harness_list(None, Some(root.to_str().unwrap()))
            .unwrap();
        // The harness lists only the headers it accepts; the notes follow its rows.
        let listed: Vec<String> = harness
            .sessions
            .iter()
            .map(|s| {
                Path::new(&s.path)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        let want: Vec<_> = for_harness
            .iter()
            .filter(|(n, ..)| listed.contains(n))
            .cloned()
            .collect();
        assert!(!want.is_empty(), "the harness lists some pi 1.6 files");
        assert_eq!(notes_by_file(&harness.pi16_notes), want, "{what} harness");
    }
}

fn chat_session(dir: &Path, id: &str, name: Option<&str>, texts: &[&str], minute: u32) {
    let mut lines = vec![header(
        id,
        "/search",
        &format!("2026-01-01T00:{minute:02}:00.000Z"),
    )];
    for (i, text) in texts.iter().enumerate() {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        let content = if role == "user" {
            json!(text)
        } else {
            json!([{"type": "text", "text": text}])
        };
        let line = json!({
            "type": "message", "id": format!("{id}m{i}"), "parentId": null,
            "timestamp": format!("2026-01-01T00:{minute:02}:{:02}.000Z", i + 1),
            "message": {"role": role, "content": content,
                        "timestamp": 1_767_225_600_000u64 + u64::from(minute) * 60_000 + i as u64 * 1000},
        });
        lines.push(line.to_string());
    }
    if let Some(name) = name {
        lines.push(
            json!({"type": "session_info", "id": format!("{id}n"), "parentId": null,
                   "timestamp": "2026-01-01T01:00:00.000Z", "name": name})
            .to_string(),
        );
    }
    write_file(
        &dir.join(format!("2026-01-01T00-{minute:02}-00-000Z_{id}.jsonl")),
        lines.join("\n") + "\n",
        100,
    );
}

fn search_world(world: &World) -> PathBuf {
    let dir = world.root.path().join("search");
    chat_session(
        &dir,
        "s-alpha",
        Some("Node CVE triage"),
        &["look at the node   cve list", "done"],
        1,
    );
    chat_session(
        &dir,
        "s-beta",
        None,
        &["Hello World", "hello again, world"],
        2,
    );
    chat_session(
        &dir,
        "s-gamma",
        Some("v2 migration"),
        &["migrate to v2 of the API", "2v is a typo"],
        3,
    );
    chat_session(&dir, "s-delta", None, &["ΣΊΣΥΦΟΣ and ÉCOLE", "straße"], 4);
    chat_session(
        &dir,
        "s-eps",
        Some("  "),
        &["foo-bar_baz/qux:quux", "hello"],
        5,
    );
    chat_session(&dir, "s-zeta", None, &["😀 emoji first then hello", "x"], 6);
    chat_session(&dir, "s-eta", Some("same score"), &["hello", "hello"], 6);
    dir
}

fn queries() -> Vec<(String, SearchSort, NameFilter)> {
    let texts = [
        "",
        "   ",
        "hello",
        "HELLO wor",
        "hlo",
        "\"node cve\"",
        "\"NODE   CVE\" list",
        "foo \"bar",
        "\"\"",
        "v2",
        "2v",
        "ab12",
        "σίσυφος",
        "école",
        "STRASSE",
        "straße",
        "😀",
        "emoji hello",
        "s-",
        "/search",
        "qux:quux",
        "re:hel+o",
        "re:^s-b",
        "re:ÉCOLE",
        "re:",
        "zzzz",
        "o",
        "\"world\" \"hello\"",
    ];
    let mut out = Vec::new();
    for text in texts {
        for sort in [SearchSort::Relevance, SearchSort::Recent] {
            out.push((text.to_string(), sort, NameFilter::All));
        }
        out.push((text.to_string(), SearchSort::Relevance, NameFilter::Named));
    }
    out
}

fn search_matches_pis_resume_search() {
    let Some(oracle) = oracle::oracle("search_matches_pis_resume_search") else {
        return;
    };
    let world = World::new();
    let dir = search_world(&world);
    let dir_text = dir.to_str().unwrap();
    let queries = queries();
    let input: String = queries
        .iter()
        .map(|(q, sort, names)| {
            let sort = match sort {
                SearchSort::Relevance => "relevance",
                SearchSort::Recent => "recent",
            };
            let names = match names {
                NameFilter::All => "all",
                NameFilter::Named => "named",
            };
            format!(
                "{}\n",
                json!({"query": q, "sort": sort, "nameFilter": names})
            )
        })
        .collect();
    let mut command = oracle.command("pi-listing.mjs");
    command
        .args(["search", "--cwd", "/search", "--session-dir", dir_text])
        .env("HOME", &world.home)
        .env("TZ", "UTC")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "pi-listing search failed");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let theirs = doc["results"].as_array().unwrap();
    assert_eq!(theirs.len(), queries.len());
    let repo = world.repo(CachePolicy::Off);
    for ((text, sort, names), theirs) in queries.iter().zip(theirs) {
        let ours: Vec<String> = match SearchQuery::parse(text) {
            // pi shows nothing for a query it cannot use; the server refuses it.
            Err(_) => Vec::new(),
            Ok(query) => {
                let mut listing = repo.list("/search", Some(dir_text)).unwrap();
                let total = listing.select(&ListSelection {
                    query,
                    sort: *sort,
                    names: *names,
                    ..ListSelection::default()
                });
                assert_eq!(total, listing.sessions.len());
                listing
                    .sessions
                    .iter()
                    .map(|s| s.path.to_string_lossy().into_owned())
                    .collect()
            }
        };
        let theirs: Vec<String> = theirs
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_string())
            .collect();
        assert_eq!(ours, theirs, "query {text:?} {sort:?} {names:?}");
    }
    support::count("pi /resume search queries", queries.len());
}

fn pages_count_every_match_and_rows_keep_only_their_fields() {
    let world = World::new();
    let dir = search_world(&world);
    let dir_text = dir.to_str().unwrap();
    let repo = world.repo(CachePolicy::ReadWrite);
    let all = repo.list("/search", Some(dir_text)).unwrap();
    let all_paths: Vec<_> = all.sessions.iter().map(|s| s.path.clone()).collect();
    let mut page = repo.list("/search", Some(dir_text)).unwrap();
    let total = page.select(&ListSelection {
        offset: 2,
        limit: Some(3),
        ..ListSelection::default()
    });
    assert_eq!(total, all_paths.len());
    let got: Vec<_> = page.sessions.iter().map(|s| s.path.clone()).collect();
    assert_eq!(got, all_paths[2..5]);
    let mut past_end = repo.list("/search", Some(dir_text)).unwrap();
    assert_eq!(
        past_end.select(&ListSelection {
            offset: 100,
            ..ListSelection::default()
        }),
        all_paths.len()
    );
    assert!(past_end.sessions.is_empty());

    // Full rows as pi's SessionInfo; `fields` keeps pi's key order whatever order they were
    // asked in, and each member it keeps is the full row's.
    for info in &all.sessions {
        let one = std::slice::from_ref(info);
        let full: Value = serde_json::from_str(&render::listing_json(one)).unwrap();
        let full = full[0].as_object().unwrap();
        let mut want = vec!["path"];
        want.extend(info.id.as_ref().map(|_| "id"));
        want.push("cwd");
        want.extend(info.name.as_ref().map(|_| "name"));
        want.extend(
            info.parent_session_path
                .as_ref()
                .map(|_| "parentSessionPath"),
        );
        want.extend([
            "created",
            "modified",
            "messageCount",
            "firstMessage",
            "allMessagesText",
        ]);
        let keys: Vec<_> = full.keys().map(String::as_str).collect();
        assert_eq!(keys, want, "pi's SessionInfo members, in pi's order");
        assert_eq!(full["path"], json!(info.path.to_str().unwrap()));
        assert_eq!(full["modified"], json!(info.modified.to_iso_string()));
        assert_eq!(full["messageCount"], json!(info.message_count));
        assert_eq!(full["firstMessage"], json!(info.first_message));
        assert_eq!(
            full["allMessagesText"],
            json!(info.all_messages_text.as_str())
        );
        let picked = render::listing_json_fields(
            one,
            &[ListField::Modified, ListField::Path, ListField::Name],
        );
        let picked: Value = serde_json::from_str(&picked).unwrap();
        let picked = picked[0].as_object().unwrap();
        let keys: Vec<_> = picked.keys().map(String::as_str).collect();
        let mut want = vec!["path"];
        want.extend(info.name.as_ref().map(|_| "name"));
        want.push("modified");
        assert_eq!(keys, want);
        for (key, value) in picked {
            assert_eq!(value, &full[key], "{key}");
        }
    }
}

crate::tests! {
    files_only_pi16_writes_are_listing_warnings_in_other_profiles,
    search_matches_pis_resume_search,
    pages_count_every_match_and_rows_keep_only_their_fields,
}
