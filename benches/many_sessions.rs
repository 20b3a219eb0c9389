//! One server holding many sessions open: a generated 10 MB session (`MANY_SIZE`) copied to
//! 1,000 files (`MANY_COUNT`) under `target/bench/many-sessions/`, all opened by one
//! `pi-session --stdio` (`session/open`), first with no persisted index (each open reads its
//! file and writes its index), then again in a fresh server from the current indexes. Reports
//! the server's resident memory from /proc (`VmHWM`, the peak, and `VmRSS`) before and after,
//! and the memory each entry costs. The copies and their indexes are removed at the end.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use pi_session::Profile;
use pi_session::session::{Session, SessionOptions};
use serde_json::{Value, json};

#[path = "support/side_by_side.rs"]
mod side_by_side;
#[path = "support/stdio_server.rs"]
mod stdio_server;

const BIN: &str = env!("CARGO_BIN_EXE_pi-session");

/// Opens every file in one fresh server and prints what it cost.
fn open_all(what: &str, files: &[PathBuf], entries: u64, index_dir: &Path) {
    let mut command = Command::new(BIN);
    command
        .arg("--stdio")
        .env("PI_SESSION_INDEX_DIR", index_dir);
    let mut server = stdio_server::Server::start(command);
    let before = server.memory_kib("VmRSS");
    let started = Instant::now();
    for file in files {
        server.call("session/open", json!({"path": file, "profile": "pi-cli"}));
    }
    let wall = started.elapsed().as_secs_f64();
    let (peak, now) = (server.memory_kib("VmHWM"), server.memory_kib("VmRSS"));
    println!(
        "{what:<28} {:>8.2} s {:>9.1} MB {:>9.1} MB {:>9.1} MB {:>10} {:>9.1} B",
        wall,
        before / 1024.0,
        now / 1024.0,
        peak / 1024.0,
        entries,
        (now - before) * 1024.0 / entries as f64
    );
    server.stop();
}

fn main() {
    let size = std::env::var("MANY_SIZE").unwrap_or_else(|_| "10MB".into());
    let count: usize = std::env::var("MANY_COUNT")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(1000);
    let source = side_by_side::generated_of_size(&size);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench/many-sessions");
    let (sessions, index_dir) = (root.join("sessions"), root.join("index"));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&sessions).unwrap();
    // A server holds one session per id: each copy gets its own (the header's id ends in
    // the copy's number).
    let bytes = std::fs::read(&source).unwrap();
    let header_end = bytes.iter().position(|&b| b == b'\n').unwrap();
    let header: Value = serde_json::from_slice(&bytes[..header_end]).unwrap();
    let id = header["id"].as_str().expect("a session id").to_string();
    let files: Vec<PathBuf> = (0..count)
        .map(|i| {
            let file = sessions.join(format!("session-{i:04}.jsonl"));
            let own = format!("{}{i:04x}", &id[..id.len() - 4]);
            let mut copy = String::from_utf8_lossy(&bytes[..header_end]).replace(&id, &own);
            copy.push_str(std::str::from_utf8(&bytes[header_end..]).unwrap());
            std::fs::write(&file, copy).expect("the copy is made");
            file
        })
        .collect();
    println!(
        "{count} sessions of {} ({:.1} MB each) open in one server over stdio",
        source.display(),
        std::fs::metadata(&source).unwrap().len() as f64 / 1e6
    );
    // Every copy holds what the source does.
    let session = Session::open_read_only(&source, SessionOptions::with_profile(Profile::PiCli))
        .expect("the session opens");
    let per_session = session.len() as u64;
    println!(
        "the index of one session in process: {:.1} bytes per entry ({per_session} entries)",
        session.index_heap_bytes() as f64 / per_session as f64
    );
    let entries = per_session * count as u64;
    println!(
        "{:<28} {:>10} {:>12} {:>12} {:>12} {:>10} {:>11}",
        "", "wall", "RSS before", "RSS after", "peak RSS", "entries", "per entry"
    );
    open_all("no index (reads, writes)", &files, entries, &index_dir);
    open_all("current index", &files, entries, &index_dir);
    let _ = std::fs::remove_dir_all(&root);
}
