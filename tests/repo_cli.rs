//! `pi-session list`, run as a user would.

mod support;

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

#[test]
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

#[test]
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

#[test]
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

#[test]
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

#[test]
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
