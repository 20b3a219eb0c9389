//! `prepareCompaction` and `findCutPoint` with each profile's rules (pi-coding-agent's
//! SessionManager rules; pi-agent-core's harness rules), and the model requests `compact()`
//! would make for the preparation.

use crate::format::json::{JsObject, JsString, JsValue};
use crate::format::profile::Profile;

use super::estimate::{self, CompactionRules, ContextEstimate, Malformed};
use super::files::{FileOps, format_file_operations};
use super::prompts;
use super::serialize::serialize_conversation;
use super::text::JsText;
use crate::store::context::{convert_to_llm, date_millis, object, project};
use CompactionRules as Rules;

/// `settings.compaction` as pi reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactionSettings {
    /// Whether compaction runs at all.
    pub enabled: bool,
    /// The tokens kept free for the answer.
    pub reserve_tokens: f64,
    /// The recent tokens kept out of the summary.
    pub keep_recent_tokens: f64,
}

impl Default for CompactionSettings {
    /// pi's `DEFAULT_COMPACTION_SETTINGS` (and the getters' defaults).
    fn default() -> Self {
        CompactionSettings {
            enabled: true,
            reserve_tokens: 16384.0,
            keep_recent_tokens: 20000.0,
        }
    }
}

impl CompactionSettings {
    /// The settings as pi's object (`{enabled, reserveTokens, keepRecentTokens}`).
    pub fn to_value(self) -> JsValue {
        object([
            ("enabled", Some(JsValue::Bool(self.enabled))),
            ("reserveTokens", Some(JsValue::Number(self.reserve_tokens))),
            (
                "keepRecentTokens",
                Some(JsValue::Number(self.keep_recent_tokens)),
            ),
        ])
    }

    /// `shouldCompact(tokens, contextWindow, settings)`.
    pub fn should_compact(self, tokens: f64, context_window: f64) -> bool {
        self.enabled && tokens > context_window - self.reserve_tokens
    }
}

/// One entry of the path, as pi holds it. Entries before the summarized window only need
/// their type and id, so they may be given as `{type, id}` alone (see [`PathEntry::light`]).
pub struct PathEntry {
    pub value: JsValue,
    kind: String,
    /// `sessionEntryToContextMessages(entry)`, made once (the cut search asks many times).
    projection: std::sync::OnceLock<Vec<JsValue>>,
}

impl PathEntry {
    pub fn new(value: JsValue) -> Self {
        let kind = value
            .get("type")
            .and_then(JsValue::as_str)
            .map(|t| t.into_owned())
            .unwrap_or_default();
        PathEntry {
            value,
            kind,
            projection: std::sync::OnceLock::new(),
        }
    }

    /// An entry before the window: its type and id only.
    pub fn light(kind: Option<&str>, id: Option<&str>) -> Self {
        PathEntry::new(object([
            ("type", kind.map(JsValue::from)),
            ("id", id.map(JsValue::from)),
        ]))
    }

    fn id(&self) -> Option<String> {
        self.value
            .get("id")
            .filter(|v| v.is_truthy())
            .map(JsValue::to_js_string)
    }

    fn is(&self, kind: &str) -> bool {
        self.kind == kind
    }

    fn message_role(&self) -> Option<String> {
        if !self.is("message") {
            return None;
        }
        self.value
            .get("message")?
            .get("role")
            .and_then(JsValue::as_str)
            .map(|r| r.into_owned())
    }
}

/// Why pi would not compact.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The path ends in a compaction ("Already compacted").
    AlreadyCompacted,
    /// Nothing before the kept part ("Nothing to compact (session too small)"; for the
    /// harness, an empty path).
    NothingToCompact,
    /// The first kept entry has no id (an unmigrated file), harness only.
    NoId,
    /// A message pi's code would throw on, with the entry's id.
    Malformed {
        entry: Option<String>,
        problem: String,
    },
}

/// `findCutPoint`'s result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// The index of the first message kept.
    pub first_kept_index: usize,
    /// Where the split turn starts, if the cut splits one.
    pub turn_start_index: Option<usize>,
    /// Whether the cut falls inside a turn.
    pub is_split_turn: bool,
}

impl CutPoint {
    /// No cut point in the window: everything from `start` is kept.
    pub(super) fn keeping_all_from(start: usize) -> Self {
        CutPoint {
            first_kept_index: start,
            turn_start_index: None,
            is_split_turn: false,
        }
    }
}

/// pi's preparation, plus the entries behind each message list.
#[derive(Debug, Clone)]
pub struct Preparation {
    /// The profile whose rules made it.
    pub profile: Profile,
    /// The first entry kept.
    pub first_kept_entry_id: String,
    /// The messages the history summary covers.
    pub messages_to_summarize: Vec<JsValue>,
    /// The split turn's messages before the cut.
    pub turn_prefix_messages: Vec<JsValue>,
    /// Harness only.
    pub retained_tail: Option<Vec<JsValue>>,
    /// The cut point.
    pub cut: CutPoint,
    /// The context's estimated tokens before compaction.
    pub tokens_before: f64,
    /// The summary of the previous compaction, if any.
    pub previous_summary: Option<JsValue>,
    /// The files read and modified by the summarized messages.
    pub file_ops: FileOps,
    /// The settings it was prepared with.
    pub settings: CompactionSettings,
    /// The path index where the window starts.
    pub window_start_index: usize,
    /// The path index of the previous compaction, if any.
    pub previous_compaction_index: Option<usize>,
    /// The entries behind `messages_to_summarize`.
    pub history_entry_ids: Vec<String>,
    /// The entries behind `turn_prefix_messages`.
    pub turn_prefix_entry_ids: Vec<String>,
    /// The entries kept.
    pub kept_entry_ids: Vec<String>,
    /// The id of each path entry (none for entries without one).
    pub path_ids: Vec<Option<String>>,
}

fn malformed(entry: &PathEntry) -> impl Fn(Malformed) -> Refusal + '_ {
    move |m| Refusal::Malformed {
        entry: entry.id(),
        problem: m.0,
    }
}

/// The rules that differ between pi-coding-agent 0.82.1's cut search and the harness's.
struct ProfileRules {
    profile: Profile,
}

impl ProfileRules {
    fn rules(&self) -> Rules {
        Rules::of(self.profile)
    }

    /// pi-agent-core's own cut rules and `retainedTail`.
    fn harness(&self) -> bool {
        self.rules() == Rules::Harness
    }

    /// `sessionEntryToContextMessages(entry)` (SessionManager rules).
    fn projection<'a>(&self, e: &'a PathEntry) -> &'a [JsValue] {
        e.projection.get_or_init(|| {
            let mut out = Vec::new();
            project(&self.profile.rules().context, &e.value, &mut out);
            out
        })
    }

    /// `getMessageFromEntryForCompaction(entry)`.
    fn message_for_compaction(&self, e: &PathEntry) -> Option<JsValue> {
        if e.is("compaction") {
            return None;
        }
        if !self.harness() {
            return self.projection(e).first().cloned();
        }
        if e.is("branch_summary") {
            // The harness projects every branch summary, even an empty one.
            let field = |k: &str| e.value.get(k).cloned();
            return Some(object([
                ("role", Some(JsValue::from("branchSummary"))),
                ("summary", field("summary")),
                ("fromId", field("fromId")),
                (
                    "timestamp",
                    Some(JsValue::Number(date_millis(e.value.get("timestamp")))),
                ),
            ]));
        }
        let mut out = Vec::new();
        project(&self.profile.rules().context, &e.value, &mut out);
        out.into_iter().next()
    }

    fn is_cut_point(&self, e: &PathEntry) -> bool {
        if self.harness() {
            return e.is("branch_summary")
                || e.is("custom_message")
                || estimate::is_cut_point_role(e.message_role().as_deref());
        }
        !e.is("compaction")
            && self
                .projection(e)
                .iter()
                .any(|m| estimate::is_cut_point_role(estimate::role(m).as_deref()))
    }

    fn is_turn_start(&self, e: &PathEntry) -> bool {
        if self.harness() {
            return e.is("branch_summary")
                || e.is("custom_message")
                || matches!(e.message_role().as_deref(), Some("user" | "bashExecution"));
        }
        !e.is("compaction")
            && self
                .projection(e)
                .iter()
                .any(|m| estimate::is_turn_start_role(estimate::role(m).as_deref()))
    }

    /// The tokens an entry adds in the cut search; `None` for an entry the search skips.
    fn entry_tokens(&self, e: &PathEntry) -> Result<Option<f64>, Refusal> {
        if self.harness() {
            if !e.is("message") {
                return Ok(None);
            }
            return match e.value.get("message") {
                Some(m) => estimate::estimate_tokens(m, Rules::Harness)
                    .map(Some)
                    .map_err(malformed(e)),
                None => Err(Refusal::Malformed {
                    entry: e.id(),
                    problem: "a message entry has no message".into(),
                }),
            };
        }
        self.projection(e)
            .iter()
            .map(|m| estimate::estimate_tokens(m, Rules::Pi082))
            .sum::<Result<f64, _>>()
            .map(|t| (t != 0.0).then_some(t))
            .map_err(malformed(e))
    }

    /// Whether the backward extension stops before `e`.
    fn stops_extension(&self, e: &PathEntry) -> bool {
        if self.harness() {
            e.is("compaction") || e.is("message")
        } else {
            e.is("compaction") || !self.projection(e).is_empty()
        }
    }

    /// Whether the cut entry needs no turn-prefix search.
    fn cut_starts_turn(&self, e: &PathEntry) -> bool {
        if self.harness() {
            e.message_role().as_deref() == Some("user")
        } else {
            self.is_turn_start(e)
        }
    }

    fn find_turn_start(&self, path: &[PathEntry], from: usize, start: usize) -> Option<usize> {
        (start..=from).rev().find(|&i| self.is_turn_start(&path[i]))
    }

    /// `findCutPoint(entries, start, end, keepRecentTokens)`.
    fn find_cut_point(
        &self,
        path: &[PathEntry],
        start: usize,
        keep: f64,
    ) -> Result<CutPoint, Refusal> {
        let end = path.len();
        let cut_points: Vec<usize> = (start..end)
            .filter(|&i| self.is_cut_point(&path[i]))
            .collect();
        let Some(&first) = cut_points.first() else {
            return Ok(CutPoint::keeping_all_from(start));
        };
        let mut cut = first;
        let mut total = 0.0;
        for i in (start..end).rev() {
            let Some(tokens) = self.entry_tokens(&path[i])? else {
                continue;
            };
            total += tokens;
            if total >= keep {
                if let Some(&c) = cut_points.iter().find(|&&c| c >= i) {
                    cut = c;
                }
                break;
            }
        }
        while cut > start && !self.stops_extension(&path[cut - 1]) {
            cut -= 1;
        }
        let starts = self.cut_starts_turn(&path[cut]);
        let turn_start = if starts {
            None
        } else {
            self.find_turn_start(path, cut, start)
        };
        Ok(CutPoint {
            first_kept_index: cut,
            turn_start_index: turn_start,
            is_split_turn: !starts && turn_start.is_some(),
        })
    }
}

/// `prepareCompaction(pathEntries, settings)`. `context` is `buildSessionContext(path)
/// .messages` (the profile's), from which `tokensBefore` is estimated.
pub fn prepare(
    profile: Profile,
    path: &[PathEntry],
    context: &[JsValue],
    settings: CompactionSettings,
) -> Result<Preparation, Refusal> {
    let p = ProfileRules { profile };
    match path.last() {
        Some(last) if last.is("compaction") => return Err(Refusal::AlreadyCompacted),
        None if p.harness() => return Err(Refusal::NothingToCompact),
        _ => {}
    }
    let prev = path.iter().rposition(|e| e.is("compaction"));
    let mut previous_summary = None;
    let mut window_start = 0;
    if let Some(c) = prev {
        let compaction = &path[c].value;
        previous_summary = compaction.get("summary").cloned();
        let wanted = compaction.get("firstKeptEntryId");
        let found = match wanted {
            // The harness only looks when the id is truthy; pi-cli compares with ===.
            Some(w) if !p.harness() || w.is_truthy() => {
                path.iter().position(|e| e.value.get("id") == Some(w))
            }
            _ => None,
        };
        window_start = found.unwrap_or(c + 1);
    }
    let ContextEstimate { tokens, .. } =
        estimate::estimate_context(context, p.rules()).map_err(|m| Refusal::Malformed {
            entry: None,
            problem: m.0,
        })?;
    let cut = p.find_cut_point(path, window_start, settings.keep_recent_tokens)?;
    let window = Window {
        previous_compaction: prev.map(|c| (c, &path[c].value)),
        previous_summary,
        window_start,
        cut,
        tokens_before: tokens,
        settings,
    };
    let path_ids = path.iter().map(PathEntry::id).collect();
    Preparation::of_window(profile, window, path_ids, |i| {
        p.message_for_compaction(&path[i]).into_iter().collect()
    })
}

/// What a preparation has found once the cut is made (on the path, or on pi 1.6's projection).
pub(super) struct Window<'a> {
    /// The newest compaction in force, by index, and its entry.
    pub previous_compaction: Option<(usize, &'a JsValue)>,
    pub previous_summary: Option<JsValue>,
    /// The first entry the window summarizes.
    pub window_start: usize,
    pub cut: CutPoint,
    pub tokens_before: f64,
    pub settings: CompactionSettings,
}

impl Preparation {
    /// The preparation of a cut `window` over entries with `path_ids`: the messages each entry
    /// gives the summary (`messages_of`), tagged with its id, split into the history and the
    /// split turn's prefix, and the file lists. pi's refusals: a first kept entry without an id,
    /// and (but for the harness, which keeps a `retainedTail` instead) nothing to summarize.
    pub(super) fn of_window(
        profile: Profile,
        window: Window<'_>,
        path_ids: Vec<Option<String>>,
        messages_of: impl Fn(usize) -> Vec<JsValue>,
    ) -> Result<Self, Refusal> {
        let rules = Rules::of(profile);
        let harness = rules == Rules::Harness;
        let cut = window.cut;
        let Some(first_kept_entry_id) = path_ids.get(cut.first_kept_index).cloned().flatten()
        else {
            return Err(if harness {
                Refusal::NoId
            } else {
                Refusal::NothingToCompact
            });
        };
        let collect = |from: usize, to: usize| {
            let mut messages = Vec::new();
            let mut ids = Vec::new();
            for (i, id) in path_ids.iter().enumerate().take(to).skip(from) {
                for m in messages_of(i) {
                    messages.push(m);
                    ids.push(id.clone().unwrap_or_default());
                }
            }
            (messages, ids)
        };
        let (history_end, prefix_start) = match (cut.is_split_turn, cut.turn_start_index) {
            (true, Some(t)) => (t, Some(t)),
            _ => (cut.first_kept_index, None),
        };
        let (history, history_ids) = collect(window.window_start, history_end);
        let (prefix, prefix_ids) = match prefix_start {
            Some(t) => collect(t, cut.first_kept_index),
            None => (Vec::new(), Vec::new()),
        };
        if !harness && history.is_empty() && prefix.is_empty() {
            return Err(Refusal::NothingToCompact);
        }
        let retained_tail = harness.then(|| collect(cut.first_kept_index, path_ids.len()).0);
        let file_ops = FileOps::of_window(
            window.previous_compaction.map(|(_, entry)| entry),
            history.iter().chain(&prefix),
            rules,
        );
        Ok(Preparation {
            profile,
            first_kept_entry_id,
            messages_to_summarize: history,
            turn_prefix_messages: prefix,
            retained_tail,
            cut,
            tokens_before: window.tokens_before,
            previous_summary: window.previous_summary,
            file_ops,
            settings: window.settings,
            window_start_index: window.window_start,
            previous_compaction_index: window.previous_compaction.map(|(i, _)| i),
            history_entry_ids: history_ids,
            turn_prefix_entry_ids: prefix_ids,
            kept_entry_ids: path_ids[cut.first_kept_index..]
                .iter()
                .map(|id| id.clone().unwrap_or_default())
                .collect(),
            path_ids,
        })
    }
}

impl Preparation {
    /// The preparation as pi's hook receives it (pi's key order; Sets as arrays).
    pub fn to_value(&self) -> JsValue {
        let mut map = JsObject::new();
        let mut put = |k: &str, v: JsValue| {
            map.insert(JsString::new(k), v);
        };
        put(
            "firstKeptEntryId",
            JsValue::from(self.first_kept_entry_id.as_str()),
        );
        put(
            "messagesToSummarize",
            JsValue::Array(self.messages_to_summarize.clone()),
        );
        put(
            "turnPrefixMessages",
            JsValue::Array(self.turn_prefix_messages.clone()),
        );
        if let Some(tail) = &self.retained_tail {
            put("retainedTail", JsValue::Array(tail.clone()));
        }
        put("isSplitTurn", JsValue::Bool(self.cut.is_split_turn));
        put("tokensBefore", JsValue::Number(self.tokens_before));
        if let Some(s) = &self.previous_summary {
            put("previousSummary", s.clone());
        }
        put("fileOps", self.file_ops.to_value());
        put("settings", self.settings.to_value());
        JsValue::Object(map)
    }

    /// `computeFileLists(fileOps)`.
    pub fn file_lists(&self) -> (Vec<JsValue>, Vec<JsValue>) {
        self.file_ops.lists()
    }
}

/// What the summarizing model is asked, one request of `compact()`.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// Which summary it asks for (`history`, `turnPrefix`, ...).
    pub purpose: &'static str,
    /// The system prompt.
    pub system_prompt: &'static str,
    /// The user message's text.
    pub text: JsString,
    /// pi 0.82.1's output cap; pi 1.6 sets none (the model's own limit applies).
    pub max_tokens: Option<f64>,
    /// The reasoning level asked for, if any.
    pub reasoning: Option<String>,
    /// The rules that made it.
    pub rules: CompactionRules,
}

/// The model fields and thinking level the requests depend on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelOptions {
    /// The model's output limit (`model.maxTokens`).
    pub max_tokens: Option<f64>,
    /// Whether the model reasons (`model.reasoning`).
    pub reasoning: bool,
    /// The session's thinking level.
    pub thinking_level: Option<String>,
}

impl ModelOptions {
    /// `Math.min(Math.floor(share * reserveTokens), model.maxTokens > 0 ? model.maxTokens : Infinity)`.
    fn max_tokens(&self, share: f64, reserve: f64) -> f64 {
        let cap = self
            .max_tokens
            .filter(|&m| m > 0.0)
            .unwrap_or(f64::INFINITY);
        (share * reserve).floor().min(cap)
    }

    pub(super) fn reasoning(&self) -> Option<String> {
        self.thinking_level
            .clone()
            .filter(|l| self.reasoning && !l.is_empty() && l != "off")
    }
}

/// `serializeConversation(convertToLlm(messages))`.
fn serialized(messages: &[JsValue], profile: Profile) -> Result<JsString, Malformed> {
    let llm: Vec<JsValue> = messages
        .iter()
        .filter_map(|m| convert_to_llm(m, profile))
        .collect();
    serialize_conversation(&llm, Rules::of(profile))
}

/// `"<conversation>\n" + serializeConversation(convertToLlm(messages)) + "\n</conversation>\n\n"`.
fn conversation(messages: &[JsValue], profile: Profile) -> Result<JsText, Malformed> {
    let mut t = JsText::new();
    t.text("<conversation>\n")
        .js(&serialized(messages, profile)?)
        .text("\n</conversation>\n\n");
    Ok(t)
}

impl Preparation {
    /// The requests `compact()` makes for this preparation, in its order: the history request
    /// (unless a split turn has no history) and, for a split turn, the turn-prefix request.
    pub fn requests(
        &self,
        custom_instructions: Option<&str>,
        model: &ModelOptions,
    ) -> Result<Vec<ModelRequest>, Malformed> {
        let split = self.cut.is_split_turn && !self.turn_prefix_messages.is_empty();
        let mut out = Vec::new();
        let reserve = self.settings.reserve_tokens;
        let rules = Rules::of(self.profile);
        // pi 1.6 sets no output cap (#9512): the model's own limit applies.
        let max_tokens =
            |share: f64| (rules != Rules::Pi16).then(|| model.max_tokens(share, reserve));
        if !split || !self.messages_to_summarize.is_empty() {
            let previous = self.previous_summary.as_ref().filter(|s| s.is_truthy());
            let mut t = conversation(&self.messages_to_summarize, self.profile)?;
            if let Some(previous) = previous {
                t.text("<previous-summary>\n");
                match previous {
                    JsValue::String(s) => t.js(s),
                    other => t.text(&other.to_js_string()),
                };
                t.text("\n</previous-summary>\n\n");
            }
            t.text(if previous.is_some() {
                prompts::UPDATE_PROMPT
            } else {
                prompts::INITIAL_PROMPT
            });
            if let Some(ci) = custom_instructions.filter(|c| !c.is_empty()) {
                t.text("\n\nAdditional focus: ").text(ci);
            }
            out.push(ModelRequest {
                purpose: "history",
                system_prompt: prompts::SYSTEM_PROMPT,
                text: t.finish(),
                max_tokens: max_tokens(0.8),
                reasoning: model.reasoning(),
                rules,
            });
        }
        if split {
            let t = if rules == Rules::Pi16 {
                // pi 1.6 frames the prefix in headings and passes the custom instructions on.
                let mut t = JsText::new();
                t.text("# Conversation\n")
                    .js(&serialized(&self.turn_prefix_messages, self.profile)?)
                    .text("\n\n# Instructions\n")
                    .text(prompts::TURN_PREFIX_PROMPT_PI16);
                if let Some(ci) = custom_instructions.filter(|c| !c.is_empty()) {
                    t.text("\n\nAdditional focus: ").text(ci);
                }
                t
            } else {
                let mut t = conversation(&self.turn_prefix_messages, self.profile)?;
                t.text(prompts::TURN_PREFIX_PROMPT);
                t
            };
            out.push(ModelRequest {
                purpose: "turnPrefix",
                system_prompt: prompts::SYSTEM_PROMPT,
                text: t.finish(),
                max_tokens: max_tokens(0.5),
                reasoning: model.reasoning(),
                rules,
            });
        }
        Ok(out)
    }

    /// The text appended to the summary: `formatFileOperations(computeFileLists(fileOps))`.
    pub fn file_lists_text(&self) -> JsString {
        let (read, modified) = self.file_lists();
        format_file_operations(&read, &modified)
    }
}

impl ModelRequest {
    /// The request as a front-end sends it: `{purpose, systemPrompt, messages, maxTokens,
    /// reasoning?, cacheRetention}`; the message carries `timestamp` as pi's does. pi 1.6 sends
    /// its normalized context instead: the system prompt as a leading `system` message
    /// (`timestamp: 0`), no `systemPrompt` and no `maxTokens`.
    pub fn to_value(&self, now_millis: f64) -> JsValue {
        let message = object([
            ("role", Some(JsValue::from("user"))),
            (
                "content",
                Some(JsValue::Array(vec![object([
                    ("type", Some(JsValue::from("text"))),
                    ("text", Some(JsValue::String(self.text.clone()))),
                ])])),
            ),
            ("timestamp", Some(JsValue::Number(now_millis))),
        ]);
        let pi16 = self.rules == Rules::Pi16;
        let messages = if pi16 {
            let system = object([
                ("role", Some(JsValue::from("system"))),
                ("content", Some(JsValue::from(self.system_prompt))),
                ("timestamp", Some(JsValue::Number(0.0))),
            ]);
            vec![system, message]
        } else {
            vec![message]
        };
        object([
            ("purpose", Some(JsValue::from(self.purpose))),
            (
                "systemPrompt",
                (!pi16).then(|| JsValue::from(self.system_prompt)),
            ),
            ("messages", Some(JsValue::Array(messages))),
            ("maxTokens", self.max_tokens.map(JsValue::Number)),
            ("reasoning", self.reasoning.as_deref().map(JsValue::from)),
            ("cacheRetention", Some(JsValue::from("none"))),
        ])
    }
}
