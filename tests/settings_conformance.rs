//! pi's `settings.json` `compaction` and `branchSummary` sections, read as pi 0.82.1's
//! `SettingsManager` reads them, checked against it.
//!
//! Seeded random pairs of settings files (the global `<agentDir>/settings.json` and the
//! project's `<cwd>/.pi/settings.json`: missing, empty, not JSON, not an object, with a byte
//! order mark, sections and members absent, `null`, of other types, numbers) are read by pi's
//! own `SettingsManager.create(cwd, agentDir)` (`tests/oracle/pi-settings.mjs`) and by
//! `repo::summary_settings`; the settings in force must be the same. Where pi takes a value of
//! the wrong type as it is (a string `reserveTokens`), this program refuses naming the setting
//! (protocol.md's deliberate difference 28): counted, and checked to happen exactly there.
//!
//! The suite installs pi's code itself; `PI_SESSION_NO_ORACLE=1` leaves the comparison out.

mod support;

use support::{notice, parse, path_str};

use pi_session::internal::format::json::JsValue;
use pi_session::internal::format::profile::Profile;
use pi_session::internal::repo::{PathEnv, summary_settings};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

/// A member: absent (`None`), or its JSON text.
fn member(rng: &mut Rng, key: &str, values: &[&str]) -> Option<String> {
    let value = rng.pick(values);
    (!value.is_empty()).then(|| format!("{key:?}:{value}"))
}

fn section(rng: &mut Rng, name: &str) -> Option<String> {
    let numbers = ["", "", "null", "0", "1000", "16384", "1.5", "-3", "250000"];
    let wrong = ["\"100\"", "true"];
    let mut numbers: Vec<&str> = numbers.to_vec();
    if rng.next().is_multiple_of(8) {
        numbers.extend(wrong);
    }
    let body = if name == "compaction" {
        let mut enabled = vec!["", "null", "true", "false"];
        if rng.next().is_multiple_of(10) {
            enabled.push("\"yes\"");
        }
        [
            member(rng, "enabled", &enabled),
            member(rng, "reserveTokens", &numbers),
            member(rng, "keepRecentTokens", &numbers),
            member(rng, "other", &["", "1"]),
        ]
    } else {
        [
            member(rng, "reserveTokens", &numbers),
            member(rng, "skipPrompt", &["", "true"]),
            None,
            None,
        ]
    };
    let object = format!(
        "{{{}}}",
        body.into_iter().flatten().collect::<Vec<_>>().join(",")
    );
    let value = match rng.next() % 8 {
        0 => return None,
        1 => "null".to_string(),
        2 => "\"text\"".to_string(),
        3 => "[]".to_string(),
        _ => object,
    };
    Some(format!("{name:?}:{value}"))
}

/// One settings file's text, or `None` for no file.
fn file(rng: &mut Rng) -> Option<String> {
    Some(match rng.next() % 12 {
        0 => return None,
        1 => String::new(),
        2 => "{oops".to_string(),
        3 => rng.pick(&["5", "null", "[]", "\"x\""]).to_string(),
        n => {
            let members: Vec<String> = [
                section(rng, "compaction"),
                section(rng, "branchSummary"),
                Some("\"theme\":\"dark\"".to_string()),
            ]
            .into_iter()
            .flatten()
            .collect();
            let text = format!("{{{}}}", members.join(","));
            if n == 4 {
                format!("\u{feff}{text}")
            } else {
                text
            }
        }
    })
}

fn number(value: Option<&JsValue>) -> Option<f64> {
    match value {
        Some(JsValue::Number(n)) => Some(*n),
        _ => None,
    }
}

#[test]
fn settings_are_read_as_pi_reads_them() {
    let test = "settings_are_read_as_pi_reads_them";
    let Some(oracle) = support::oracle(test) else {
        return;
    };
    let seed: u64 = std::env::var("PI_SESSION_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_201);
    notice(&format!("{test}: seed {seed} (PI_SESSION_SEED)"));
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().canonicalize().unwrap();
    let mut cases = Vec::new();
    for i in 0..300 {
        let home = dir.join(format!("{i}/home"));
        let agent = home.join(".pi/agent");
        let work = dir.join(format!("{i}/work"));
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(work.join(".pi")).unwrap();
        let (global, project) = (file(&mut rng), file(&mut rng));
        if let Some(text) = &global {
            std::fs::write(agent.join("settings.json"), text).unwrap();
        }
        if let Some(text) = &project {
            std::fs::write(work.join(".pi/settings.json"), text).unwrap();
        }
        cases.push((home, agent, work, global, project));
    }
    let jobs: Vec<JsValue> = cases
        .iter()
        .map(|(_, agent, work, _, _)| {
            parse(&format!(
                r#"{{"cwd":{},"agentDir":{}}}"#,
                JsValue::from(path_str(work)).stringify(),
                JsValue::from(path_str(agent)).stringify()
            ))
        })
        .collect();
    let jobs_file = dir.join("jobs.json");
    std::fs::write(&jobs_file, JsValue::Array(jobs).stringify()).unwrap();
    let mut command = oracle.command("pi-settings.mjs");
    command.arg(oracle.dir()).arg(&jobs_file);
    let results = support::oracle::documents(command, "pi-settings.mjs", cases.len());

    let mut mismatches = Vec::new();
    let (mut compared, mut refused, mut set) = (0, 0, 0);
    for ((home, agent, work, global, project), pi) in cases.iter().zip(&results) {
        let what = format!("global {global:?} / project {project:?}");
        let env = PathEnv::new(path_str(home), path_str(work), Some(path_str(agent))).unwrap();
        let ours = summary_settings(&env, Profile::PiCli, path_str(work));
        let compaction = pi.get("compaction").unwrap();
        let branch = pi.get("branchSummary").unwrap();
        let pi_enabled = compaction.get("enabled");
        let typed = matches!(pi_enabled, Some(JsValue::Bool(_)))
            && number(compaction.get("reserveTokens")).is_some()
            && number(compaction.get("keepRecentTokens")).is_some()
            && number(branch.get("reserveTokens")).is_some();
        compared += 1;
        match ours {
            Ok(ours) => {
                if !typed {
                    mismatches.push(format!("{what}: pi reads a value of another type ({pi:?}); this program did not refuse"));
                    continue;
                }
                let c = ours.compaction();
                let theirs = (
                    pi_enabled == Some(&JsValue::Bool(true)),
                    number(compaction.get("reserveTokens")).unwrap(),
                    number(compaction.get("keepRecentTokens")).unwrap(),
                    number(branch.get("reserveTokens")).unwrap(),
                );
                let mine = (
                    c.enabled,
                    c.reserve_tokens,
                    c.keep_recent_tokens,
                    ours.branch_budget(None).reserve_tokens,
                );
                if theirs != mine {
                    mismatches.push(format!("{what}: pi {theirs:?} / ours {mine:?}"));
                }
                if ours.compaction_reserve_tokens.is_some()
                    || ours.branch_summary_reserve_tokens.is_some()
                {
                    set += 1;
                }
            }
            Err(e) if !typed => {
                refused += 1;
                assert!(e.to_string().contains("settings.json: `"), "{e}");
            }
            Err(e) => mismatches.push(format!("{what}: ours refused ({e}), pi read {pi:?}")),
        }
    }
    support::count(test, compared);
    notice(&format!(
        "{test}: {compared} pairs of files, {set} with a reserve set, {refused} refused where pi takes a value of another type"
    ));
    assert!(set > 30 && refused > 0, "the generator covers too little");
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
