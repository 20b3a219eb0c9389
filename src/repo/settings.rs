//! pi's `settings.json` `sessionDir`, as each pi version's `SettingsManager` reads it: the
//! global `<agentDir>/settings.json` under the project's `<cwd>/.pi/settings.json` (the project
//! wins), `~` and `file://` expanded but not resolved, `""` (or any falsy value) unset. A file
//! that is missing, unreadable or not JSON counts as empty, as pi records it and goes on. The one
//! difference: pi 1.6 strips a UTF-8 byte order mark first; pi 0.82.1 cannot parse such a file.

use std::io::Read;
use std::path::Path;

use crate::format::json::{self, JsValue};
use crate::format::profile::Profile;
use crate::repo::RepoError;
use crate::repo::paths::{PathEnv, join};

/// pi's settings files are small; a larger one is not read (counts as empty).
const MAX_SETTINGS_BYTES: u64 = 16 * 1024 * 1024;

/// The `sessionDir` pi's command line would take from its settings when run in `cwd`, or
/// `None` when unset. A value pi cannot use (a number, an object: pi crashes at startup) is
/// an `invalid_argument` error naming the setting.
pub fn settings_session_dir(
    env: &PathEnv,
    profile: Profile,
    cwd: &str,
) -> Result<Option<String>, RepoError> {
    let global = join(&[env.agent_dir(), "settings.json"]);
    let project = join(&[&env.resolve_path(cwd)?, ".pi", "settings.json"]);
    let strip_bom = profile == Profile::Pi16;
    // deepMergeSettings: a project value that is not `undefined` replaces the global one.
    let value =
        read_setting(env, &project, strip_bom).or_else(|| read_setting(env, &global, strip_bom));
    match value {
        None => Ok(None),
        Some(value) if !value.is_truthy() => Ok(None),
        Some(JsValue::String(text)) => Ok(Some(env.normalize_path(&text.to_string_lossy())?)),
        Some(_) => Err(RepoError::InvalidPath {
            input: "settings.json sessionDir".to_string(),
            reason: "sessionDir must be a string (pi stops at startup on this value)",
        }),
    }
}

/// The `sessionDir` member of one settings file, if it has one.
fn read_setting(env: &PathEnv, spelled: &str, strip_bom: bool) -> Option<JsValue> {
    let path = env.io_path(spelled);
    let bytes = read_small(&path)?;
    let text = match (strip_bom, bytes.strip_prefix("\u{feff}".as_bytes())) {
        (true, Some(rest)) => rest,
        _ => &bytes[..],
    };
    if text.is_empty() {
        return None;
    }
    let settings = json::parse_bytes(text).ok()?;
    // migrateSettings uses `in`, which throws on anything but an object: pi keeps `{}` then.
    match &settings {
        JsValue::Object(_) => settings.get("sessionDir").cloned(),
        _ => None,
    }
}

fn read_small(path: &Path) -> Option<Vec<u8>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_SETTINGS_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_SETTINGS_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_wins_and_a_bom_is_read_by_pi_1_6_only() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let work = dir.path().join("work");
        std::fs::create_dir_all(home.join(".pi/agent")).unwrap();
        std::fs::create_dir_all(work.join(".pi")).unwrap();
        let env = PathEnv::new(home.to_str().unwrap(), work.to_str().unwrap(), None).unwrap();
        let global = home.join(".pi/agent/settings.json");
        let project = work.join(".pi/settings.json");
        let cwd = work.to_str().unwrap();
        let read = |profile| settings_session_dir(&env, profile, cwd).unwrap();

        std::fs::write(&global, "\u{feff}{\"sessionDir\":\"~/s\"}").unwrap();
        assert_eq!(read(Profile::PiCli), None);
        let expanded = format!("{}/s", home.to_str().unwrap());
        assert_eq!(read(Profile::Pi16), Some(expanded.clone()));
        std::fs::write(&global, "{\"sessionDir\":\"~/s\"}").unwrap();
        assert_eq!(read(Profile::PiCli), Some(expanded));
        std::fs::write(&project, "{\"sessionDir\":\"rel/\"}").unwrap();
        assert_eq!(read(Profile::PiCli), Some("rel/".to_string()));
        std::fs::write(&project, "{\"sessionDir\":\"\"}").unwrap();
        assert_eq!(
            read(Profile::PiCli),
            None,
            "an empty project value unsets it"
        );
        std::fs::write(&project, "{oops").unwrap();
        assert!(
            read(Profile::PiCli).is_some(),
            "an invalid project file is ignored"
        );
        std::fs::write(&project, "{\"sessionDir\":5}").unwrap();
        assert!(settings_session_dir(&env, Profile::PiCli, cwd).is_err());
    }
}
