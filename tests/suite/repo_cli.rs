//! `pi-session list`, run as a user would.

use crate::support;

use std::process::{Command, Output};

use serde_json::Value;
use support::files::*;
use support::listing::*;
#[allow(unused_imports)]
use support::{notice, oracle};

fn pi_session(world: &World, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .args(args)
        .current_dir(&world.work)
        .env("HOME", &world.home)
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .output()
        .expect("run pi-session")
}

fn world_with_sessions() -> World {
    let world = World::new();
    let dir = world.home.join(".pi/agent/sessions/--p--");
    write_file(
        &dir.join("a.jsonl"),
        format!(
            "{}\n{}\n{}\n",
            header("a", "/p", "2026-01-01T00:00:00.000Z"),
            message(
                "u",
                "user",
                "first question\\nwith two lines",
                1_767_300_000_000
            ),
            r#"{"type":"session_info","name":"Named session"}"#
        ),
        10,
    );
    write_file(
        &dir.join("b.jsonl"),
        format!(
            "{}\n{}\n",
            header("b", "/p", "2026-01-01T00:00:00.000Z"),
            message("u", "user", "unnamed question", 1_767_400_000_000)
        ),
        20,
    );
    write_file(&dir.join("broken.jsonl"), "not json\n", 30);
    write_file(
        &world.home.join(".pi/agent/sessions/--q--/c.jsonl"),
        format!("{}\n", header("c", "/q", "2026-01-01T00:00:00.000Z")),
        5,
    );
    world
}

fn the_table_shows_title_count_time_and_path() {
    let world = world_with_sessions();
    let out = pi_session(&world, &["list", "--cwd", "/p"]);
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(lines[0].starts_with("TITLE"));
    assert!(lines[1].starts_with("unnamed question"), "{table}");
    assert!(lines[2].starts_with("Named session"), "{table}");
    assert!(lines[2].contains("/.pi/agent/sessions/--p--/a.jsonl"));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("skipped") && stderr.contains("broken.jsonl"),
        "{stderr}"
    );
}

fn json_is_pis_session_info_array() {
    let world = world_with_sessions();
    let out = pi_session(&world, &["list", "--all", "--json"]);
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = doc.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let keys: Vec<&str> = rows[1]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "path",
            "id",
            "cwd",
            "name",
            "created",
            "modified",
            "messageCount",
            "firstMessage",
            "allMessagesText"
        ]
    );
    assert_eq!(rows[1]["name"], "Named session");
    assert_eq!(rows[1]["modified"], "2026-01-01T20:40:00.000Z");
    assert_eq!(rows[2]["id"], "c");
}

fn the_current_directory_is_the_default_project() {
    let world = world_with_sessions();
    let out = pi_session(&world, &["list", "--json"]);
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc,
        Value::Array(vec![]),
        "the work directory has no sessions"
    );
}

fn bad_arguments_fail_with_a_message() {
    let world = world_with_sessions();
    let out = pi_session(&world, &["list", "--cwd", "/p", "--all"]);
    assert_eq!(out.status.code(), Some(2));
    let out = pi_session(&world, &["list", "--cwd", "file://elsewhere/p"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("invalid path \"file://elsewhere/p\""),
        "{stderr}"
    );
}

fn the_session_dir_variable_stands_in_for_the_flag() {
    let world = world_with_sessions();
    let out = Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .args(["list", "--cwd", "/q", "--json"])
        .current_dir(&world.work)
        .env("HOME", &world.home)
        .env("PI_CODING_AGENT_SESSION_DIR", "~/.pi/agent/sessions/--p--")
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // A flat directory filtered by cwd: /q has no sessions in --p--.
    assert_eq!(doc, Value::Array(vec![]));
    let out = Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .args(["list", "--all", "--json"])
        .current_dir(&world.work)
        .env("HOME", &world.home)
        .env("PI_CODING_AGENT_SESSION_DIR", "~/.pi/agent/sessions/--p--")
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc.as_array().unwrap().len(),
        2,
        "only the sessions of --p--"
    );
}

/// Sessions tied on activity, named so that pi 0.82.1 (bytes) and pi 1.6 (collation) differ.
fn world_with_ties() -> World {
    let world = World::new();
    let dir = world.home.join(".pi/agent/sessions/--p--");
    for id in ["B", "a", "b"] {
        write_file(
            &dir.join(format!("2026-01-01T00-00-00-000Z_{id}.jsonl")),
            format!("{}\n", header(id, "/p", "2026-01-01T00:00:00.000Z")),
            10,
        );
    }
    world
}

fn listed_ids(out: &Output) -> Vec<String> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    rows.as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

fn list_and_find_follow_the_profile() {
    let world = world_with_ties();
    let list = |profile: &str| {
        listed_ids(&pi_session(
            &world,
            &["list", "--cwd", "/p", "--json", "--profile", profile],
        ))
    };
    assert_eq!(list("pi-cli"), ["B", "a", "b"]);
    assert_eq!(list("pi-0.82"), ["B", "a", "b"], "the alias of pi-cli");
    assert_eq!(list("pi-1.6"), ["B", "b", "a"]);
    assert_eq!(
        list("harness"),
        ["B", "a", "b"],
        "harness: header rows, readdir order"
    );
    let harness: Value = serde_json::from_slice(
        &pi_session(&world, &["list", "--all", "--json", "--profile", "harness"]).stdout,
    )
    .unwrap();
    assert_eq!(harness[0]["createdAt"], "2026-01-01T00:00:00.000Z");

    let bad = pi_session(&world, &["list", "--profile", "pi-1.7"]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("pi-1.6") && stderr.contains("pi-0.82"),
        "{stderr}"
    );

    let found = pi_session(&world, &["find", "b", "--cwd", "/p", "--profile", "pi-1.6"]);
    assert!(found.status.success());
    let path = String::from_utf8(found.stdout).unwrap();
    assert!(path.trim_end().ends_with("_b.jsonl"), "{path}");
    let missing = pi_session(&world, &["find", "c", "--cwd", "/p", "--profile", "pi-1.6"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no session with id"));
    let found = pi_session(&world, &["find", "a", "--cwd", "/p"]);
    assert!(
        String::from_utf8(found.stdout)
            .unwrap()
            .trim_end()
            .ends_with("_a.jsonl")
    );
}

fn list_takes_the_session_dir_from_settings_as_each_pi_reads_it() {
    let world = world_with_ties();
    let elsewhere = world.root.path().join("elsewhere");
    write_file(
        &elsewhere.join("x.jsonl"),
        format!("{}\n", header("x", "/p", "2026-01-01T00:00:00.000Z")),
        10,
    );
    let settings = world.home.join(".pi/agent/settings.json");
    // A byte order mark: pi 1.6 reads the file, pi 0.82.1 cannot parse it.
    std::fs::write(
        &settings,
        format!("\u{feff}{{\"sessionDir\":\"{}\"}}", elsewhere.display()),
    )
    .unwrap();
    let list = |profile: &str| {
        listed_ids(&pi_session(
            &world,
            &["list", "--cwd", "/p", "--json", "--profile", profile],
        ))
    };
    assert_eq!(list("pi-1.6"), ["x"]);
    assert_eq!(list("pi-cli"), ["B", "a", "b"]);
    // The flag wins over the settings.
    let default_dir = world.home.join(".pi/agent/sessions/--p--");
    let flagged = pi_session(
        &world,
        &[
            "list",
            "--cwd",
            "/p",
            "--json",
            "--profile",
            "pi-1.6",
            "--session-dir",
            default_dir.to_str().unwrap(),
        ],
    );
    assert_eq!(listed_ids(&flagged), ["B", "b", "a"]);
    std::fs::write(&settings, "{\"sessionDir\":5}").unwrap();
    let out = pi_session(&world, &["list", "--cwd", "/p"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("sessionDir"));
}

fn list_searches_pages_and_picks_fields() {
    let world = world_with_sessions();
    let json = |args: &[&str]| -> Value {
        let out = pi_session(&world, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let found = json(&[
        "list",
        "--cwd",
        "/p",
        "--json",
        "--query",
        "unnamed",
        "--fields",
        "id,firstMessage",
    ]);
    assert_eq!(
        found,
        serde_json::json!([{"id": "b", "firstMessage": "unnamed question"}])
    );
    let named = json(&[
        "list", "--cwd", "/p", "--json", "--named", "--fields", "name,id",
    ]);
    assert_eq!(
        named,
        serde_json::json!([{"id": "a", "name": "Named session"}])
    );
    let page = json(&[
        "list", "--cwd", "/p", "--json", "--offset", "1", "--limit", "1", "--fields", "id",
    ]);
    assert_eq!(page, serde_json::json!([{"id": "a"}]));
    for bad in [
        &["list", "--query", "re:("][..],
        &["list", "--fields", "id,nope"],
        &["list", "--profile", "harness", "--query", "x"],
    ] {
        let out = pi_session(&world, bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(!out.stderr.is_empty());
    }
}

fn list_warns_of_what_only_pi_16_writes_unless_profile_pi_16() {
    let world = World::new();
    let dir = world.home.join(".pi/agent/sessions/--p--");
    write_file(
        &dir.join("new.jsonl"),
        format!(
            "{}\n{}\n{}\n",
            header("n", "/p", "2026-01-01T00:00:00.000Z"),
            message("u", "user", "hello", 1_767_300_000_000),
            r#"{"type":"usage","id":"g","parentId":"u","timestamp":"2026-01-01T00:00:02.000Z","kind":"cache_warm"}"#
        ),
        10,
    );
    for (profile, warned) in [("pi-cli", true), ("harness", true), ("pi-1.6", false)] {
        let out = pi_session(
            &world,
            &["list", "--cwd", "/p", "--json", "--profile", profile],
        );
        assert!(out.status.success(), "{profile}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        let expected = format!(
            "new.jsonl line 3: a usage entry, which only pi 1.6 writes; profile {profile} does not \
             read it as pi 1.6 does: use profile pi-1.6 to see what pi 1.6 shows"
        );
        assert_eq!(stderr.contains(&expected), warned, "{profile}: {stderr}");
        if !warned {
            assert!(!stderr.contains("pi 1.6"), "{profile}: {stderr}");
        }
    }
}

crate::tests! {
    the_table_shows_title_count_time_and_path,
    json_is_pis_session_info_array,
    the_current_directory_is_the_default_project,
    bad_arguments_fail_with_a_message,
    the_session_dir_variable_stands_in_for_the_flag,
    list_and_find_follow_the_profile,
    list_takes_the_session_dir_from_settings_as_each_pi_reads_it,
    list_searches_pages_and_picks_fields,
    list_warns_of_what_only_pi_16_writes_unless_profile_pi_16,
}
