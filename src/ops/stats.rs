//! `stats`: usage figures across the store, grouped by day, week, month, model, project or
//! session. By default each message counts once across the store: an entry a fork, clone or
//! `forkFrom` copied (same id, up the copy's `parentSession` chain) counts where it was first
//! written. `per_file` sums each file as pi's `getSessionStats` counts it instead.

use std::collections::BTreeMap;
use std::str::FromStr;

use chrono::{Datelike, TimeZone};

use crate::catalog::{Progress, SyncReport, UsageRow};

use super::error::OpError;
use super::scope::Scope;
use super::search::{StoreScope, ask, project_of};

#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum GroupBy {
    #[default]
    Day,
    Week,
    Month,
    Model,
    Project,
    Session,
}

impl GroupBy {
    pub fn parse(text: &str) -> Option<GroupBy> {
        Some(match text {
            "day" => GroupBy::Day,
            "week" => GroupBy::Week,
            "month" => GroupBy::Month,
            "model" => GroupBy::Model,
            "project" => GroupBy::Project,
            "session" => GroupBy::Session,
            _ => return None,
        })
    }

    /// The report's array and its key member, as ccusage names them where it has them.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            GroupBy::Day => ("daily", "date"),
            GroupBy::Week => ("weekly", "week"),
            GroupBy::Month => ("monthly", "month"),
            GroupBy::Model => ("models", "model"),
            GroupBy::Project => ("projects", "project"),
            GroupBy::Session => ("sessions", "sessionId"),
        }
    }
}

#[derive(
    Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)] // no doc comments: schemars would copy them into protocol/schema.json; protocol.md describes these members
pub struct StatsInput {
    #[serde(flatten)]
    pub scope: StoreScope,
    #[serde(default)]
    pub by: GroupBy,
    /// First day counted (YYYY-MM-DD or YYYYMMDD, in `timezone`).
    pub since: Option<String>,
    /// Last day counted.
    pub until: Option<String>,
    /// IANA name (`UTC`, `Europe/Paris`); `None`: the machine's local time.
    pub timezone: Option<String>,
    /// Each file summed as pi's `getSessionStats` counts it (copies counted in each file).
    #[serde(default)]
    pub per_file: bool,
}

/// Figures of a group, named as ccusage's `--json` names them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    pub assistant_messages: u64,
    pub tool_calls: u64,
    pub input_tokens: f64,
    pub output_tokens: f64,
    pub cache_creation_tokens: f64,
    pub cache_read_tokens: f64,
    pub total_tokens: f64,
    pub total_cost: f64,
}

impl Figures {
    fn add(&mut self, row: &UsageRow) {
        self.assistant_messages += row.assistant_messages;
        self.tool_calls += row.tool_calls;
        self.input_tokens += row.input;
        self.output_tokens += row.output;
        self.cache_creation_tokens += row.cache_write;
        self.cache_read_tokens += row.cache_read;
        self.total_tokens += row.input + row.output + row.cache_read + row.cache_write;
        self.total_cost += row.cost;
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelFigures {
    pub model_name: String,
    #[serde(flatten)]
    pub figures: Figures,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    /// The day, week (its Monday), month, model, project directory or session id.
    pub key: String,
    #[serde(flatten)]
    pub figures: Figures,
    pub models_used: Vec<String>,
    pub model_breakdowns: Vec<ModelFigures>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)] // no doc comments: schemars would copy them into protocol/schema.json; protocol.md describes these members
pub struct StatsOutput {
    pub by: GroupBy,
    pub per_file: bool,
    pub groups: Vec<Group>,
    pub totals: Figures,
    /// Counting once: what summing each file would add (the copies up fork chains).
    pub counted_twice_per_file: Option<Figures>,
    pub index: SyncReport,
    pub note: Option<String>,
}

impl StatsOutput {
    /// The report as ccusage's `--json` shapes it (`daily: [{date, ...}]`, `totals`), with
    /// this program's additions beside.
    pub fn to_report(&self) -> serde_json::Value {
        let (array, key) = self.by.names();
        let groups: Vec<serde_json::Value> = self
            .groups
            .iter()
            .map(|g| {
                let mut value = serde_json::json!({ key: g.key });
                let rest = serde_json::to_value(g).unwrap_or_default();
                if let (Some(out), serde_json::Value::Object(rest)) = (value.as_object_mut(), rest)
                {
                    out.extend(rest.into_iter().filter(|(k, _)| k != "key"));
                }
                value
            })
            .collect();
        serde_json::json!({
            array: groups,
            "totals": self.totals,
            "perFile": self.per_file,
            "countedTwicePerFile": self.counted_twice_per_file,
        })
    }
}

/// How days are told apart.
enum Zone {
    Local,
    Named(chrono_tz::Tz),
}

impl Zone {
    fn parse(name: Option<&str>) -> Result<Zone, OpError> {
        match name {
            None => Ok(Zone::Local),
            Some(name) => chrono_tz::Tz::from_str(name).map(Zone::Named).map_err(|_| {
                OpError::InvalidParams(format!(
                    "timezone: unknown time zone {name:?} (expected an IANA name such as UTC or Europe/Paris)"
                ))
            }),
        }
    }

    fn date(&self, millis: f64) -> Option<chrono::NaiveDate> {
        let utc = chrono::DateTime::from_timestamp_millis(millis as i64)?;
        Some(match self {
            Zone::Local => chrono::Local
                .from_utc_datetime(&utc.naive_utc())
                .date_naive(),
            Zone::Named(tz) => tz.from_utc_datetime(&utc.naive_utc()).date_naive(),
        })
    }
}

fn parse_day(name: &str, text: &str) -> Result<chrono::NaiveDate, OpError> {
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .or_else(|_| chrono::NaiveDate::parse_from_str(text, "%Y%m%d"))
        .map_err(|_| {
            OpError::InvalidParams(format!(
                "{name}: {text:?} is not a day (expected YYYY-MM-DD or YYYYMMDD)"
            ))
        })
}

/// Usage figures over the store (or one project), by day, month, session or model, bringing the index up to date first.
pub fn stats(
    scope: &Scope,
    input: StatsInput,
    progress: &dyn Progress,
) -> Result<StatsOutput, OpError> {
    let zone = Zone::parse(input.timezone.as_deref())?;
    let since = input
        .since
        .as_deref()
        .map(|d| parse_day("since", d))
        .transpose()?;
    let until = input
        .until
        .as_deref()
        .map(|d| parse_day("until", d))
        .transpose()?;
    let project = input
        .scope
        .cwd
        .as_deref()
        .map(|cwd| project_of(scope, cwd))
        .transpose()?;
    let profile = scope.profile(input.scope.profile);
    let (rows, index, note) = ask(
        scope,
        &input.scope,
        profile,
        progress,
        false,
        crate::catalog::WhileBuilding::Wait,
        |backend| backend.usage(project.as_deref()),
    )?;
    let mut groups: BTreeMap<String, (Figures, BTreeMap<String, Figures>)> = BTreeMap::new();
    let mut totals = Figures::default();
    let mut twice = Figures::default();
    for row in &rows {
        let date = row.timestamp_ms.and_then(|ms| zone.date(ms));
        if since.is_some() || until.is_some() {
            // A day filter leaves out what has no time.
            let Some(day) = date else { continue };
            if since.is_some_and(|s| day < s) || until.is_some_and(|u| day > u) {
                continue;
            }
        }
        if row.copied && !input.per_file {
            twice.add(row);
            continue;
        }
        let model = row.model.clone().unwrap_or_else(|| "unknown".to_string());
        let key = match input.by {
            GroupBy::Day => date.map(|d| d.format("%Y-%m-%d").to_string()),
            GroupBy::Week => date.map(|d| {
                let monday = d - chrono::Days::new(d.weekday().num_days_from_monday() as u64);
                monday.format("%Y-%m-%d").to_string()
            }),
            GroupBy::Month => date.map(|d| d.format("%Y-%m").to_string()),
            GroupBy::Model => Some(model.clone()),
            GroupBy::Project => Some(row.project.clone()),
            GroupBy::Session => Some(row.session_id.clone()),
        }
        .unwrap_or_else(|| "unknown".to_string());
        let (figures, models) = groups.entry(key).or_default();
        figures.add(row);
        models.entry(model).or_default().add(row);
        totals.add(row);
    }
    let groups = groups
        .into_iter()
        .map(|(key, (figures, models))| Group {
            key,
            figures,
            models_used: models.keys().filter(|m| *m != "unknown").cloned().collect(),
            model_breakdowns: models
                .into_iter()
                .map(|(model_name, figures)| ModelFigures {
                    model_name,
                    figures,
                })
                .collect(),
        })
        .collect();
    Ok(StatsOutput {
        by: input.by,
        per_file: input.per_file,
        groups,
        totals,
        counted_twice_per_file: (!input.per_file).then_some(twice),
        index,
        note,
    })
}
