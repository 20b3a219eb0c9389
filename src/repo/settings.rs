//! pi's `settings.json`, as each pi version's `SettingsManager` reads it: the global
//! `<agentDir>/settings.json` under the project's `<cwd>/.pi/settings.json`, merged as pi's
//! `deepMergeSettings` merges them (a project member replaces the global one; two objects are
//! merged one level deep). A file that is missing, unreadable, not JSON or not an object counts
//! as empty, as pi records it and goes on. pi 1.6 strips a UTF-8 byte order mark first; pi
//! 0.82.1 cannot parse such a file. Read here: `sessionDir` (`~` and `file://` expanded but not
//! resolved, `""` or any falsy value unset) and the `compaction` and `branchSummary` sections.

use std::io::Read;
use std::path::Path;

use crate::format::json::{self, JsValue};
use crate::format::profile::Profile;
use crate::repo::RepoError;
use crate::repo::paths::{PathEnv, join};
use crate::store::compaction::{BranchBudget, CompactionSettings};

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
    let strip_bom = profile.rules().settings_strip_bom;
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
    read_settings_file(env, spelled, strip_bom)?
        .get("sessionDir")
        .cloned()
}

/// One settings file as pi loads it: `None` when pi keeps `{}` for it.
fn read_settings_file(env: &PathEnv, spelled: &str, strip_bom: bool) -> Option<JsValue> {
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
    // (An array passes, but has none of the members read here.)
    match &settings {
        JsValue::Object(_) => Some(settings),
        _ => None,
    }
}

/// The members of the `compaction` and `branchSummary` sections pi reads, each `None` where pi
/// takes its default (absent, `null`, or a section that is not an object).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SummarySettings {
    pub compaction_enabled: Option<bool>,
    pub compaction_reserve_tokens: Option<f64>,
    pub compaction_keep_recent_tokens: Option<f64>,
    pub branch_summary_reserve_tokens: Option<f64>,
}

/// The `compaction` and `branchSummary` settings pi would run with in `cwd`. A member of a type
/// pi cannot use (a string `reserveTokens`: pi computes with it and sends `NaN` tokens) is an
/// `invalid_argument` error naming the setting and its file.
pub fn summary_settings(
    env: &PathEnv,
    profile: Profile,
    cwd: &str,
) -> Result<SummarySettings, RepoError> {
    let global = join(&[env.agent_dir(), "settings.json"]);
    let project = join(&[&env.resolve_path(cwd)?, ".pi", "settings.json"]);
    let strip_bom = profile.rules().settings_strip_bom;
    let project_settings = read_settings_file(env, &project, strip_bom);
    // The file a merged member came from, for an error: the project's when it has the member.
    let source = |section: &str, key: &str| {
        let in_project = project_settings
            .as_ref()
            .and_then(|p| p.get(section))
            .is_some_and(|s| matches!(s, JsValue::Object(map) if map.get(key).is_some()));
        if in_project { &project } else { &global }.clone()
    };
    let merged = merge(
        read_settings_file(env, &global, strip_bom),
        project_settings.clone(),
    );
    let member = |section: &str, key: &str| -> Option<&JsValue> {
        match merged.get(section)? {
            JsValue::Object(map) => map.get(key).filter(|v| !matches!(v, JsValue::Null)),
            _ => None,
        }
    };
    // pi 1.6 throws on a compaction token setting that is not a non-negative safe integer.
    let safe_integer = |n: f64| n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0;
    let number = |section: &str, key: &str| match member(section, key) {
        None => Ok(None),
        Some(JsValue::Number(n))
            if profile.rules().settings_compaction_integers
                && section == "compaction"
                && !safe_integer(*n) =>
        {
            Err(RepoError::InvalidSetting {
                setting: format!("{section}.{key}"),
                expected: "a non-negative safe integer",
                file: source(section, key),
            })
        }
        Some(JsValue::Number(n)) => Ok(Some(*n)),
        Some(_) => Err(RepoError::InvalidSetting {
            setting: format!("{section}.{key}"),
            expected: "a number",
            file: source(section, key),
        }),
    };
    Ok(SummarySettings {
        compaction_enabled: match member("compaction", "enabled") {
            None => None,
            Some(JsValue::Bool(b)) => Some(*b),
            Some(_) => {
                return Err(RepoError::InvalidSetting {
                    setting: "compaction.enabled".into(),
                    expected: "true or false",
                    file: source("compaction", "enabled"),
                });
            }
        },
        compaction_reserve_tokens: number("compaction", "reserveTokens")?,
        compaction_keep_recent_tokens: number("compaction", "keepRecentTokens")?,
        branch_summary_reserve_tokens: number("branchSummary", "reserveTokens")?,
    })
}

impl SummarySettings {
    /// These settings with `base`'s where these have none (a request's over the files').
    pub fn over(self, base: SummarySettings) -> SummarySettings {
        SummarySettings {
            compaction_enabled: self.compaction_enabled.or(base.compaction_enabled),
            compaction_reserve_tokens: self
                .compaction_reserve_tokens
                .or(base.compaction_reserve_tokens),
            compaction_keep_recent_tokens: self
                .compaction_keep_recent_tokens
                .or(base.compaction_keep_recent_tokens),
            branch_summary_reserve_tokens: self
                .branch_summary_reserve_tokens
                .or(base.branch_summary_reserve_tokens),
        }
    }

    /// `getCompactionSettings()`: pi's defaults where nothing is set.
    pub fn compaction(self) -> CompactionSettings {
        let d = CompactionSettings::default();
        CompactionSettings {
            enabled: self.compaction_enabled.unwrap_or(d.enabled),
            reserve_tokens: self.compaction_reserve_tokens.unwrap_or(d.reserve_tokens),
            keep_recent_tokens: self
                .compaction_keep_recent_tokens
                .unwrap_or(d.keep_recent_tokens),
        }
    }

    /// The branch summarizer's budget: the model's window (pi's fallback when absent) and
    /// `getBranchSummarySettings().reserveTokens`.
    pub fn branch_budget(self, context_window: Option<f64>) -> BranchBudget {
        let d = BranchBudget::default();
        BranchBudget {
            context_window: context_window.unwrap_or(d.context_window),
            reserve_tokens: self
                .branch_summary_reserve_tokens
                .unwrap_or(d.reserve_tokens),
        }
    }
}

/// `deepMergeSettings(global, project)`: a project member replaces the global one, except
/// that two objects (not arrays) are merged one level deep.
fn merge(global: Option<JsValue>, project: Option<JsValue>) -> JsValue {
    let (mut out, project) = match (global, project) {
        (Some(JsValue::Object(g)), Some(JsValue::Object(p))) => (g, p),
        (Some(g), None) => return g,
        (None, Some(p)) => return p,
        _ => return JsValue::Object(Default::default()),
    };
    for (key, value) in project {
        let merged = match (out.get(&key), value) {
            (Some(JsValue::Object(base)), JsValue::Object(over)) => {
                let mut both = base.clone();
                both.extend(over);
                JsValue::Object(both)
            }
            (_, value) => value,
        };
        out.insert(key, merged);
    }
    JsValue::Object(out)
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
