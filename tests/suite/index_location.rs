//! Where the persisted index goes when nothing relocates it, and that turning it off writes
//! nothing: the defaults a user meets (the rest of the suite points `PI_SESSION_INDEX_DIR`
//! into `target/`, see `.cargo/config.toml`).

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");
const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/files/header-only.jsonl");

/// `pi-session context FILE` with an environment holding only what is given.
fn context(env: &[(&str, &Path)], args: &[&str]) {
    let mut command = Command::new(BIN);
    command
        .arg("context")
        .arg(FILE)
        .args(args)
        .env_remove("PI_SESSION_INDEX_DIR")
        .env_remove("PI_SESSION_NO_INDEX")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("HOME");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("the binary runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn indexes_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".idx"))
            .count()
    })
}

fn the_index_goes_to_xdg_cache_home_else_home_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("xdg");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();

    context(&[("XDG_CACHE_HOME", &cache), ("HOME", &home)], &[]);
    assert_eq!(indexes_in(&cache.join("pi-session")), 1);
    assert_eq!(indexes_in(&home.join(".cache/pi-session")), 0);

    context(&[("HOME", &home)], &[]);
    assert_eq!(indexes_in(&home.join(".cache/pi-session")), 1);
}

fn no_index_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("xdg");
    context(&[("XDG_CACHE_HOME", &cache)], &["--no-index"]);
    context(
        &[
            ("XDG_CACHE_HOME", &cache),
            ("PI_SESSION_NO_INDEX", Path::new("1")),
        ],
        &[],
    );
    assert!(!cache.exists(), "an index was written with the index off");
}

crate::tests! {
    the_index_goes_to_xdg_cache_home_else_home_cache,
    no_index_writes_nothing,
}
