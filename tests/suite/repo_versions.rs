//! Where pi 0.82.1 and pi 1.6 list, find and choose sessions differently, each profile compared
//! with its own pi's code (`pi-listing.mjs --version`): ties on activity ordered by file name
//! (ICU collation) or readdir, `listAll` over symlinked project folders and by file mtime,
//! `findById`, `continueRecent` with a dangling symlink and sub-millisecond mtimes, the default
//! directory spelled with a trailing slash, and settings.json's `sessionDir` (a BOM). Also the
//! harness's own listing against pi-agent-core's `JsonlSessionRepo.list`.

use crate::support;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, SystemTime};

use pi_session::Profile;
use pi_session::listing::{CachePolicy, settings_session_dir};
use serde_json::Value;
use support::files::*;
use support::listing::*;
use support::oracle;

const VERSIONS: [Profile; 2] = [Profile::PiCli, Profile::Pi16];
const TIE_IDS: [&str; 10] = ["a-b", "a_b", "B", "a", "a.b", "Ab", "b", "é", "e", "Z9"];

fn session(id: &str, cwd: &str) -> String {
    format!("{}\n", header(id, cwd, "2026-01-01T00:00:00.000Z"))
}

fn set_mtime_ns(path: &Path, nanos_after_base: u64) {
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(base + Duration::from_nanos(nanos_after_base))
        .unwrap();
}

fn paths_of(rows: &Value) -> Vec<String> {
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

/// Sessions whose activity times are all equal (header time only), in the default directory of
/// `/p`, another project with older and newer files, a symlinked project folder and a symlink to
/// a file in the sessions root.
fn build_ties(world: &World) -> std::path::PathBuf {
    let env = world.env();
    let root = world.work.join(world.sessions_root());
    let project = world.work.join(env.default_session_dir("/p").unwrap());
    for id in TIE_IDS {
        let name = format!("2026-01-01T00-00-00-000Z_{id}.jsonl");
        write_file(&project.join(name), session(id, "/p"), 100);
    }
    let other = root.join("--y--");
    write_file(
        &other.join("2026-01-01T00-00-00-000Z_zz-older.jsonl"),
        session("zz-older", "/y"),
        50,
    );
    write_file(
        &other.join("2026-01-01T00-00-00-000Z_00-newer.jsonl"),
        session("00-newer", "/y"),
        200,
    );
    let elsewhere = world.root.path().join("elsewhere");
    write_file(
        &elsewhere.join("2026-01-01T00-00-00-000Z_linked.jsonl"),
        session("linked", "/x"),
        150,
    );
    symlink(&elsewhere, root.join("--x--")).unwrap();
    fs::write(world.root.path().join("plain"), "x").unwrap();
    symlink(world.root.path().join("plain"), root.join("--filelink--")).unwrap();
    project
}

fn ties_on_activity_follow_each_versions_order() {
    let world = World::new();
    let project = build_ties(&world);
    let project_str = project.to_str().unwrap();
    let repo = world.repo(CachePolicy::Off);

    // Independent of Node: 1.6 collates names (descending), 0.82.1 keeps byte order.
    let ids = |rows: Vec<String>| -> Vec<String> {
        rows.iter()
            .map(|p| {
                let name = p.rsplit('/').next().unwrap();
                name.trim_start_matches("2026-01-01T00-00-00-000Z_")
                    .trim_end_matches(".jsonl")
                    .to_string()
            })
            .collect()
    };
    let ours_16 = rows(&repo.list_as(Profile::Pi16, "/p", None).unwrap());
    // As Node 22 (en-US) sorts these names: `b.localeCompare(a)`.
    assert_eq!(
        ids(paths_of(&ours_16)),
        ["Z9", "é", "e", "B", "b", "Ab", "a", "a.b", "a-b", "a_b"].map(String::from)
    );
    let ours_082 = rows(&repo.list_as(Profile::PiCli, "/p", None).unwrap());
    let mut bytes = TIE_IDS
        .map(|id| format!("2026-01-01T00-00-00-000Z_{id}.jsonl"))
        .to_vec();
    bytes.sort();
    assert_eq!(
        paths_of(&ours_082),
        bytes
            .iter()
            .map(|n| format!("{project_str}/{n}"))
            .collect::<Vec<_>>(),
        "0.82.1 keeps readdir (byte) order for ties"
    );
    let all_16 = paths_of(&rows(&repo.list_all_as(Profile::Pi16, None).unwrap()));
    assert!(all_16[0].ends_with("_00-newer.jsonl"), "{all_16:?}");
    assert!(
        all_16[1].ends_with("_linked.jsonl"),
        "1.6 follows the symlinked folder"
    );
    assert!(all_16.last().unwrap().ends_with("_zz-older.jsonl"));
    let all_082 = paths_of(&rows(&repo.list_all_as(Profile::PiCli, None).unwrap()));
    assert!(
        !all_082.iter().any(|p| p.contains("linked")),
        "0.82.1 does not"
    );

    let Some(oracle) = oracle("ties_on_activity_follow_each_versions_order") else {
        return;
    };
    for profile in VERSIONS {
        let what = profile.name();
        let pis = world.pi_of(oracle, profile, &["list", "--cwd", "/p"]);
        let ours = repo.list_as(profile, "/p", None).unwrap();
        assert_same_rows(&rows(&ours), &pis["sessions"], &format!("{what}: list"));
        let pis = world.pi_of(oracle, profile, &["list-all"]);
        let ours = repo.list_all_as(profile, None).unwrap();
        assert_same_rows(
            &rows(&ours),
            &pis["sessions"],
            &format!("{what}: listAll()"),
        );
        let pis = world.pi_of(oracle, profile, &["list-all", "--session-dir", project_str]);
        let ours = repo.list_all_as(profile, Some(project_str)).unwrap();
        assert_same_rows(
            &rows(&ours),
            &pis["sessions"],
            &format!("{what}: listAll(dir)"),
        );
        // The default directory spelled with a trailing slash: a custom directory (filtered by
        // cwd) for 0.82.1, the default one for 1.6.
        write_file(
            &project.join("foreign.jsonl"),
            session("foreign", "/elsewhere"),
            10,
        );
        let slash = format!("{project_str}/");
        let pis = world.pi_of(
            oracle,
            profile,
            &["list", "--cwd", "/p", "--session-dir", &slash],
        );
        let ours = repo.list_as(profile, "/p", Some(&slash)).unwrap();
        assert_same_rows(
            &rows(&ours),
            &pis["sessions"],
            &format!("{what}: list(default/)"),
        );
        fs::remove_file(project.join("foreign.jsonl")).unwrap();
    }
}

fn find_by_id_finds_what_pi_1_6_finds() {
    let world = World::new();
    let project = build_ties(&world);
    let flat = world.root.path().join("flat");
    write_file(&flat.join("1.jsonl"), session("dup", "/q"), 10);
    write_file(&flat.join("2.jsonl"), session("dup", "/p"), 20);
    write_file(
        &flat.join("3.jsonl"),
        "junk\n".to_string() + &session("late", "/p"),
        20,
    );
    fs::create_dir_all(flat.join("4.jsonl")).unwrap();
    let flat_str = flat.to_str().unwrap();
    let repo = world.repo(CachePolicy::Off);
    let find = |cwd: &str, id: &str, dir: Option<&str>| {
        repo.find_by_id(cwd, id, dir)
            .unwrap()
            .map(|p| p.to_string_lossy().into_owned())
    };
    assert_eq!(
        find("/p", "a_b", None),
        Some(format!(
            "{}/2026-01-01T00-00-00-000Z_a_b.jsonl",
            project.display()
        ))
    );
    assert_eq!(find("/p", "a_", None), None, "a prefix does not match");
    assert_eq!(
        find("/p", "dup", Some(flat_str)),
        Some(format!("{flat_str}/2.jsonl"))
    );
    // pi 0.82.1's way: an exact id among the listed rows.
    let listed = repo.find_by_id_in_list("/p", "Ab", None).unwrap().unwrap();
    assert!(listed.to_string_lossy().ends_with("_Ab.jsonl"));

    let Some(oracle) = oracle("find_by_id_finds_what_pi_1_6_finds") else {
        return;
    };
    for (cwd, id, dir) in [
        ("/p", "a_b", None),
        ("/p", "a_", None),
        ("/p", "linked", None),
        ("/p", "é", None),
        ("/p", "dup", Some(flat_str)),
        ("/q", "dup", Some(flat_str)),
        ("/r", "dup", Some(flat_str)),
        ("/p", "late", Some(flat_str)),
    ] {
        let mut args = vec!["find-by-id", id, "--cwd", cwd];
        if let Some(dir) = dir {
            args.extend(["--session-dir", dir]);
        }
        let pis = world.pi_of(oracle, Profile::Pi16, &args)["path"]
            .as_str()
            .map(String::from);
        assert_eq!(
            find(cwd, id, dir),
            pis,
            "findById({cwd:?}, {id:?}, {dir:?})"
        );
    }
}

fn continue_recent_with_a_dangling_symlink_and_close_mtimes() {
    let world = World::new();
    let flat = world.root.path().join("recent");
    let flat_str = flat.to_str().unwrap();
    // Two files within the same millisecond: 1.6 ranks by the exact mtimeMs, 0.82.1 by ms.
    write_file(&flat.join("a.jsonl"), session("a", "/p"), 0);
    write_file(&flat.join("b.jsonl"), session("b", "/p"), 0);
    set_mtime_ns(&flat.join("a.jsonl"), 5_000_000_300_000);
    set_mtime_ns(&flat.join("b.jsonl"), 5_000_000_100_000);
    let repo = world.repo(CachePolicy::Off);
    let pick = |profile| {
        repo.continue_recent_candidate_as(profile, "/p", Some(flat_str))
            .unwrap()
            .map(|p| p.to_string_lossy().into_owned())
    };
    assert_eq!(pick(Profile::Pi16), Some(format!("{flat_str}/a.jsonl")));
    let oracle = oracle("continue_recent_with_a_dangling_symlink_and_close_mtimes");
    let compare = |what: &str| {
        let Some(oracle) = oracle else { return };
        for profile in VERSIONS {
            let args = ["recent", "--cwd", "/p", "--session-dir", flat_str];
            let pis = world.pi_of(oracle, profile, &args)["recent"]
                .as_str()
                .map(String::from);
            assert_eq!(pick(profile), pis, "{}: {what}", profile.name());
        }
    };
    compare("mtimes within one millisecond");
    symlink(world.root.path().join("gone"), flat.join("dangling.jsonl")).unwrap();
    // 1.6 cannot stat every file and starts a new session; 0.82.1 still resumes.
    assert_eq!(pick(Profile::Pi16), None);
    assert!(pick(Profile::PiCli).is_some());
    compare("a dangling symlink");
}

fn settings_session_dir_reads_as_each_version_reads_it() {
    let world = World::new();
    let agent = world.home.join(".pi/agent");
    let project = world.work.join("proj");
    fs::create_dir_all(&agent).unwrap();
    fs::create_dir_all(project.join(".pi")).unwrap();
    let cwd = project.to_str().unwrap();
    let cases: [(&str, &str, Option<&str>); 9] = [
        ("global", r#"{"sessionDir":"/g/sessions"}"#, None),
        (
            "project wins",
            r#"{"sessionDir":"/g"}"#,
            Some(r#"{"sessionDir":"/p/s"}"#),
        ),
        ("tilde", r#"{"sessionDir":"~/s"}"#, None),
        ("file url", r#"{"sessionDir":"file:///tmp/s%20x"}"#, None),
        ("relative", r#"{"sessionDir":"rel/dir/"}"#, None),
        ("empty", r#"{"sessionDir":""}"#, None),
        ("bom", "\u{feff}{\"sessionDir\":\"/bom/s\"}", None),
        ("project not json", r#"{"sessionDir":"/g"}"#, Some("{oops")),
        (
            "project empty value",
            r#"{"sessionDir":"/g"}"#,
            Some(r#"{"sessionDir":null}"#),
        ),
    ];
    let oracle = oracle("settings_session_dir_reads_as_each_version_reads_it");
    let mut compared = 0;
    for (what, global, local) in cases {
        fs::write(agent.join("settings.json"), global).unwrap();
        let _ = fs::remove_file(project.join(".pi/settings.json"));
        if let Some(local) = local {
            fs::write(project.join(".pi/settings.json"), local).unwrap();
        }
        for profile in VERSIONS {
            let ours = settings_session_dir(&world.env(), profile, cwd).unwrap();
            if what == "bom" {
                assert_eq!(ours.is_some(), profile == Profile::Pi16, "{what}");
            }
            let Some(oracle) = oracle else { continue };
            let pis = world.pi_of(oracle, profile, &["settings", "--cwd", cwd]);
            // pi returns "" for an empty value, which its command line treats as unset.
            let pis = pis["sessionDir"]
                .as_str()
                .filter(|d| !d.is_empty())
                .map(String::from);
            assert_eq!(ours, pis, "{}: {what}", profile.name());
            compared += 1;
        }
    }
    if oracle.is_some() {
        assert_eq!(compared, 18);
    }
}

/// Files for the harness listing: every header rule, line ends, kinds of directory entries.
fn build_harness_root(root: &Path) {
    let h = |id: &str, ts: &str, cwd: &str, extra: &str| {
        format!(
            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{ts}","cwd":"{cwd}"{extra}}}"#
        )
    };
    let dir = root.join("--p--");
    let files: Vec<(&str, String)> = vec![
        (
            "01.jsonl",
            h("one", "2026-01-02T00:00:00.000Z", "/p", "") + "\n{junk\n",
        ),
        (
            "02.jsonl",
            h(
                "two",
                "2026-01-03T00:00:00.000Z",
                "/p",
                r#","parentSession":"/x.jsonl","metadata":{"k":[1]}"#,
            ) + "\n",
        ),
        (
            "03.jsonl",
            h("crlf", "2026-01-01T00:00:00.000Z", "/p", "") + "\r\nrest\r\n",
        ),
        (
            "04.jsonl",
            h("cr", "2025-12-31T00:00:00.000Z", "/p", "") + "\rrest",
        ),
        (
            "05.jsonl",
            format!(
                "\u{feff}{}\n",
                h("bom", "2026-01-04T00:00:00.000Z", "/p", "")
            ),
        ),
        (
            "06.jsonl",
            r#"{"type":"session","version":2,"id":"v2","timestamp":"t","cwd":"/p"}"#.to_string()
                + "\n",
        ),
        (
            "07.jsonl",
            "\n".to_string() + &h("late", "2026-01-01T00:00:00.000Z", "/p", ""),
        ),
        ("08.jsonl", h("", "2026-01-01T00:00:00.000Z", "/p", "")),
        (
            "09.jsonl",
            h(
                "meta",
                "2026-01-01T00:00:00.000Z",
                "/p",
                r#","metadata":null"#,
            ),
        ),
        (
            "10.jsonl",
            h(
                "num",
                "2026-01-05T00:00:00.000Z",
                "/p",
                r#","parentSession":5"#,
            ),
        ),
        ("11.jsonl", String::new()),
        (
            "12.jsonl",
            h("same-time", "2026-01-02T00:00:00.000Z", "/p", ""),
        ),
        ("notes.txt", "x".to_string()),
    ];
    for (name, text) in files {
        write_file(&dir.join(name), text, 10);
    }
    fs::create_dir_all(dir.join("13-dir.jsonl")).unwrap();
    symlink(dir.join("02.jsonl"), dir.join("14-link.jsonl")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(dir.join("15-fifo.jsonl"))
        .status()
        .unwrap();
    assert!(status.success());
    write_file(
        &root.join("--q--").join("q.jsonl"),
        h("q", "2026-02-01T00:00:00.000Z", "/q", ""),
        10,
    );
    write_file(
        &root.join("stray.jsonl"),
        h("stray", "2026-03-01T00:00:00.000Z", "/", ""),
        10,
    );
    symlink(root.join("--q--"), root.join("--linked--")).unwrap();
}

fn the_harness_lists_as_json_session_repo_lists() {
    let world = World::new();
    let root = world.root.path().join("harness-sessions");
    build_harness_root(&root);
    let root_str = root.to_str().unwrap();
    let repo = world.repo(CachePolicy::Off);
    let ours = repo.harness_list(Some("/p"), Some(root_str)).unwrap();
    let ids: Vec<String> = ours.sessions.iter().map(|s| s.id.to_js_string()).collect();
    assert_eq!(ids, ["two", "two", "one", "same-time", "crlf", "cr"]);
    assert_eq!(ours.skipped.len(), 7, "{:?}", ours.skipped);
    let Some(oracle) = oracle("the_harness_lists_as_json_session_repo_lists") else {
        return;
    };
    let mut compared = 0;
    for cwd in [Some("/p"), Some("/q"), Some("/none"), None] {
        let ours = repo.harness_list(cwd, Some(root_str)).unwrap();
        let ours = Value::Array(
            ours.sessions
                .iter()
                .map(|s| s.to_js_value().to_serde())
                .collect(),
        );
        let mut args = vec!["harness-list", "--session-dir", root_str];
        if let Some(cwd) = cwd {
            args.extend(["--cwd", cwd]);
        }
        let pis = world.pi(oracle, &args);
        assert_eq!(ours, pis["sessions"], "harness list {cwd:?}");
        compared += 1;
    }
    // A symlink to a directory named like a session: the harness's read fails, and so does its
    // whole listing; here too (with an error naming the file).
    symlink(
        root.join("--q--"),
        root.join("--p--").join("16-dirlink.jsonl"),
    )
    .unwrap();
    let pis = world.pi(
        oracle,
        &["harness-list", "--session-dir", root_str, "--cwd", "/p"],
    );
    assert!(pis["error"].is_string(), "{pis}");
    let error = repo.harness_list(Some("/p"), Some(root_str)).unwrap_err();
    assert!(error.to_string().contains("16-dirlink.jsonl"), "{error}");
    assert_eq!(compared, 4);
}

crate::tests! {
    ties_on_activity_follow_each_versions_order,
    find_by_id_finds_what_pi_1_6_finds,
    continue_recent_with_a_dangling_symlink_and_close_mtimes,
    settings_session_dir_reads_as_each_version_reads_it,
    the_harness_lists_as_json_session_repo_lists,
}
