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
//! Each pair is its own trial, named after its two files (`settings::042_global_object_project_none`:
//! `cargo test --test suite -- settings::042` reruns it); pi reads them all in one run of its code,
//! made by the first trial that needs it and shared by the others. A last trial checks that the
//! generator covered what it must. The suite installs pi's code itself; with
//! `PI_SESSION_NO_ORACLE=1` the trials are reported as ignored.

use std::path::PathBuf;
use std::sync::OnceLock;

use libtest_mimic::Trial;

use crate::support::{self, notice, parse, path_str};

use pi_session::Profile;
use pi_session::json::JsValue;
use pi_session::listing::{PathEnv, summary_settings};

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

/// How many pairs of files are generated.
const PAIRS: usize = 300;

/// One generated pair: the folders, and the two files' texts (`None`: no file).
struct Pair {
    home: PathBuf,
    agent: PathBuf,
    work: PathBuf,
    global: Option<String>,
    project: Option<String>,
}

/// The seed (`PI_SESSION_SEED` repeats another run's pairs).
fn seed() -> u64 {
    std::env::var("PI_SESSION_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_201)
}

/// The pairs, written once per run under the target directory.
fn pairs() -> &'static [Pair] {
    static PAIRS_: OnceLock<Vec<Pair>> = OnceLock::new();
    PAIRS_.get_or_init(|| {
        let seed = seed();
        notice(&format!("settings: seed {seed} (PI_SESSION_SEED)"));
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let dir = support::target_dir().join("cases/settings");
        if dir.exists() {
            std::fs::remove_dir_all(&dir).unwrap();
        }
        std::fs::create_dir_all(&dir).unwrap();
        let dir = dir.canonicalize().unwrap();
        let mut pairs = Vec::new();
        for i in 0..PAIRS {
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
            pairs.push(Pair {
                home,
                agent,
                work,
                global,
                project,
            });
        }
        pairs
    })
}

/// What pi's `SettingsManager` made of every pair: one run of pi's code for them all.
fn pi_readings() -> &'static [JsValue] {
    static READINGS: OnceLock<Vec<JsValue>> = OnceLock::new();
    READINGS.get_or_init(|| {
        let oracle = support::oracle("settings").expect("the oracle");
        let pairs = pairs();
        let jobs: Vec<JsValue> = pairs
            .iter()
            .map(|pair| {
                parse(&format!(
                    r#"{{"cwd":{},"agentDir":{}}}"#,
                    JsValue::from(path_str(&pair.work)).stringify(),
                    JsValue::from(path_str(&pair.agent)).stringify()
                ))
            })
            .collect();
        let jobs_file = pairs[0]
            .home
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("jobs.json");
        std::fs::write(&jobs_file, JsValue::Array(jobs).stringify()).unwrap();
        let mut command = oracle.command("pi-settings.mjs");
        command.arg(oracle.dir()).arg(&jobs_file);
        support::oracle::documents(command, "pi-settings.mjs", pairs.len())
    })
}

/// A file's kind, for the trial's name.
fn kind(text: &Option<String>) -> &'static str {
    match text.as_deref() {
        None => "none",
        Some("") => "empty",
        Some(t) if t.starts_with('\u{feff}') => "bom_object",
        Some(t) if t.starts_with('{') && parse_ok(t) => "object",
        Some(t) if parse_ok(t) => "scalar",
        Some(_) => "not_json",
    }
}

fn parse_ok(text: &str) -> bool {
    pi_session::json::parse(text).is_ok()
}

/// How one pair compared: read the same (`true` when a reserve was set), or refused where pi
/// takes a value of another type.
enum Compared {
    Same { reserve_set: bool },
    Refused,
}

/// Pair `i` read by this program, against pi's reading.
fn compare(i: usize) -> Result<Compared, String> {
    let Pair {
        home,
        agent,
        work,
        global,
        project,
    } = &pairs()[i];
    let pi = &pi_readings()[i];
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
    match ours {
        Ok(ours) => {
            if !typed {
                return Err(format!(
                    "{what}: pi reads a value of another type ({pi:?}); this program did not refuse"
                ));
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
                return Err(format!("{what}: pi {theirs:?} / ours {mine:?}"));
            }
            Ok(Compared::Same {
                reserve_set: ours.compaction_reserve_tokens.is_some()
                    || ours.branch_summary_reserve_tokens.is_some(),
            })
        }
        Err(e) if !typed => {
            if !e.to_string().contains("settings.json: `") {
                return Err(format!("{what}: refused without naming the setting: {e}"));
            }
            Ok(Compared::Refused)
        }
        Err(e) => Err(format!("{what}: ours refused ({e}), pi read {pi:?}")),
    }
}

/// One trial per pair, then the generator's coverage.
pub fn trials() -> Vec<Trial> {
    let mut trials: Vec<Trial> = pairs()
        .iter()
        .enumerate()
        .map(|(i, pair)| {
            let name = format!(
                "settings::{i:03}_global_{}_project_{}",
                kind(&pair.global),
                kind(&pair.project)
            );
            let test = name.clone();
            crate::with_pi(name, move || {
                compare(i).unwrap_or_else(|mismatch| panic!("{mismatch}"));
                support::count(&test, 1);
            })
        })
        .collect();
    trials.push(crate::with_pi(
        "settings::the_generator_covers_reserves_and_refusals",
        || {
            let (mut set, mut refused) = (0, 0);
            for i in 0..PAIRS {
                match compare(i) {
                    Ok(Compared::Same { reserve_set: true }) => set += 1,
                    Ok(Compared::Refused) => refused += 1,
                    _ => {}
                }
            }
            notice(&format!(
                "settings: {PAIRS} pairs of files, {set} with a reserve set, {refused} refused where pi takes a value of another type"
            ));
            assert!(set > 30 && refused > 0, "the generator covers too little");
        },
    ));
    trials
}
