//! What the model sees: the context entries of a leaf, the messages they project to, and the
//! thinking level and model in force (spec section 6), plus the LLM conversion of 6.4.

use std::collections::HashMap;

use crate::format::entry::{Kind, Payload, Ref, Replacement, Role};
use crate::format::json::{self, JsObject, JsString, JsValue};
use crate::format::json_spans::{JsonSpan, Spans};
use crate::format::profile::{ContextRules, Profile};
use crate::format::time::parse_date_millis;

use super::error::{ErrorKind, StoreError, StoreResult};
use super::index::Leaf;
use super::session::Session;
use super::tree::Walk;

/// `buildSessionContext()` as a value, keys in the order the profile's pi produces them.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    /// The messages the model sees, oldest first.
    pub messages: Vec<JsValue>,
    /// `None` when pi's value would be `undefined` (a thinking_level_change without a level).
    pub thinking_level: Option<JsValue>,
    /// The model in force (`{provider, modelId}` or `null`).
    pub model: JsValue,
    /// Harness only: the last `active_tools_change` (null when none).
    pub active_tool_names: Option<JsValue>,
}

impl Context {
    /// The context as pi's value, consuming it (the messages are moved, not copied).
    pub fn into_value(self, profile: Profile) -> JsValue {
        let mut map = JsObject::new();
        let mut put = |k: &str, v: JsValue| {
            map.insert(JsString::new(k), v);
        };
        let messages = JsValue::Array(self.messages);
        let mut messages = Some(messages);
        if profile.is_session_manager() {
            put("messages", messages.take().unwrap_or(JsValue::Null));
        }
        if let Some(level) = self.thinking_level {
            put("thinkingLevel", level);
        }
        put("model", self.model);
        if !profile.is_session_manager() {
            put(
                "activeToolNames",
                self.active_tool_names.unwrap_or(JsValue::Null),
            );
            put("messages", messages.take().unwrap_or(JsValue::Null));
        }
        JsValue::Object(map)
    }

    /// The context as pi's object, in `profile`'s shape.
    pub fn to_value(&self, profile: Profile) -> JsValue {
        let mut map = JsObject::new();
        let mut put = |k: &str, v: JsValue| {
            map.insert(JsString::new(k), v);
        };
        if profile.is_session_manager() {
            put("messages", JsValue::Array(self.messages.clone()));
        }
        if let Some(level) = &self.thinking_level {
            put("thinkingLevel", level.clone());
        }
        put("model", self.model.clone());
        if !profile.is_session_manager() {
            put(
                "activeToolNames",
                self.active_tool_names.clone().unwrap_or(JsValue::Null),
            );
            put("messages", JsValue::Array(self.messages.clone()));
        }
        JsValue::Object(map)
    }
}

/// Which form of messages to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MessageFormat {
    /// The agent messages pi keeps (`buildSessionContext`).
    #[default]
    Agent,
    /// What is sent to the model after `convertToLlm`.
    Llm,
}

/// One entry of `projection.entries`: the entry as stored and the messages it projects to.
#[derive(Debug, Clone)]
pub struct ProjectedEntry {
    pub value: JsValue,
    pub messages: Vec<JsValue>,
    /// `sessionEntryToContextMessages(entry).length > 0`: it shows in the context unless an
    /// edit removes it.
    pub visible: bool,
}

/// The branch (root to leaf) as `estimateProjectedContextTokens` reads it: ids, and the index
/// of the latest `context_edit` or `compaction`.
#[derive(Debug, Clone, Default)]
pub struct BranchFacts {
    pub ids: Vec<Option<String>>,
    pub latest_invalidating: Option<usize>,
}

impl Session {
    /// `buildContextEntries()` at `leaf`.
    pub(crate) fn context_entries(&mut self, leaf: &Leaf) -> StoreResult<Vec<u32>> {
        let path = self.profile_path(leaf)?;
        self.note_cycle(&path);
        Ok(self.select_context_entries(&path.positions))
    }

    pub(super) fn note_cycle(&mut self, walk: &Walk) {
        if let Some(id) = &walk.cycle_at {
            self.warn(format!(
                "the parent chain of entry {id} loops back on itself; the walk stops there"
            ));
        }
    }

    /// The last compaction on the path, the entries it keeps, and everything after it.
    fn select_context_entries(&self, path: &[u32]) -> Vec<u32> {
        let Some(c) = path
            .iter()
            .rposition(|&p| self.record(p).kind() == Kind::Compaction)
        else {
            return path.to_vec();
        };
        let compaction = self.record(path[c]);
        let Payload::Compaction {
            first_kept,
            retained_tail,
            ..
        } = compaction.payload()
        else {
            return path.to_vec();
        };
        let mut out = vec![path[c]];
        let rules = &self.profile().rules().context;
        // A checkpoint stands alone; it looks for firstKeptEntryId only if set.
        let keeps_before = !rules.checkpoint_compactions
            || (!retained_tail && first_kept.is_some_and(|f| !f.is_empty()));
        if keeps_before
            && let Some(first) = path[..c]
                .iter()
                .position(|&p| self.record(p).id() == first_kept)
        {
            let kept = &path[first..c];
            if rules.compaction_carries_system_prompt {
                // pi 1.6 drops the system messages of the kept range, whatever the compaction
                // carries: the prompt now comes from the compaction's own systemMessage.
                out.extend(kept.iter().copied().filter(|&p| !self.is_system_message(p)));
            } else {
                out.extend_from_slice(kept);
            }
        }
        out.extend_from_slice(&path[c + 1..]);
        out
    }

    fn is_system_message(&self, position: u32) -> bool {
        matches!(
            self.record(position).payload(),
            Payload::Message {
                role: Role::System,
                ..
            }
        )
    }

    /// `buildSessionContext()` at `leaf`.
    pub fn build_context(&mut self, leaf: &Leaf, format: MessageFormat) -> StoreResult<Context> {
        let mut messages = Vec::new();
        let mut context = self.build_context_with(leaf, format, |message| {
            messages.push(message);
            Ok(())
        })?;
        context.messages = messages;
        Ok(context)
    }

    /// The thinking level, model (and harness tools) in force at `leaf`, without messages.
    pub(crate) fn context_settings(&mut self, leaf: &Leaf) -> StoreResult<Context> {
        let path = self.profile_path(leaf)?;
        self.settings(&path.positions)
    }

    /// `buildSessionContext()` at `leaf`, handing each message to `each` as it is made instead
    /// of collecting them (the returned context has no messages): a context of 300,000
    /// messages is written out holding one at a time.
    pub(crate) fn build_context_with(
        &mut self,
        leaf: &Leaf,
        format: MessageFormat,
        mut each: impl FnMut(JsValue) -> StoreResult<()>,
    ) -> StoreResult<Context> {
        self.hand_out_context(leaf, format, false, |message| match message {
            ContextMessage::Value(value) => each(value),
            ContextMessage::Line(message) => each(message.to_value()?),
        })
    }

    /// [`Session::build_context_with`], handing out a message as the part of its entry's line
    /// that holds it whenever that part is exactly the message pi builds: a writer then
    /// copies its text instead of building and printing a tree of values.
    pub(crate) fn build_context_lines(
        &mut self,
        leaf: &Leaf,
        format: MessageFormat,
        each: impl FnMut(ContextMessage<'_>) -> StoreResult<()>,
    ) -> StoreResult<Context> {
        self.hand_out_context(leaf, format, true, each)
    }

    fn hand_out_context(
        &mut self,
        leaf: &Leaf,
        format: MessageFormat,
        from_lines: bool,
        mut each: impl FnMut(ContextMessage<'_>) -> StoreResult<()>,
    ) -> StoreResult<Context> {
        let path = self.profile_path(leaf)?;
        self.note_cycle(&path);
        let context = self.settings(&path.positions)?;
        let selected = self.select_context_entries(&path.positions);
        let profile = self.profile();
        let mut emit = |message: ContextMessage<'_>| match (message, format) {
            (ContextMessage::Value(message), MessageFormat::Llm) => {
                match convert_to_llm(&message, profile) {
                    Some(message) => each(ContextMessage::Value(message)),
                    None => Ok(()),
                }
            }
            // A line's message is handed out only when it is what the format passes through.
            (message, _) => each(message),
        };
        let from_lines = from_lines.then_some(format);
        if profile.rules().pi16_entries {
            // The edits map needs every selected entry first; the messages then go out one
            // entry at a time.
            return self
                .projection(&selected, from_lines, &mut emit)
                .map(|()| context);
        }
        let mut projected = Vec::new();
        for position in selected {
            // Only these kinds become messages: the others' bodies are never read.
            if !projects_messages(self.record(position).kind()) {
                continue;
            }
            if let Some(format) = from_lines
                && self.emit_line_message(position, format, &mut emit)?
            {
                continue;
            }
            let entry = self.entry_value(position)?;
            project(&self.profile().rules().context, &entry, &mut projected);
            for message in projected.drain(..) {
                emit(ContextMessage::Value(message))?;
            }
        }
        Ok(context)
    }

    /// Hands `emit` the message of the message entry at `position` as its line holds it, when
    /// that is exactly the message pi builds for `format`; `false` when it must be built.
    fn emit_line_message(
        &self,
        position: u32,
        format: MessageFormat,
        emit: &mut impl FnMut(ContextMessage<'_>) -> StoreResult<()>,
    ) -> StoreResult<bool> {
        if self.record(position).kind() != Kind::Message {
            return Ok(false);
        }
        let text = self.line_text(position)?;
        let Some(spans) = Spans::read(&text) else {
            return Ok(false);
        };
        let Some(message) = passed_through(self.profile(), format, spans.root()) else {
            return Ok(false);
        };
        emit(ContextMessage::Line(LineMessage {
            span: message,
            line: self.record(position).line(),
        }))?;
        Ok(true)
    }

    /// pi 1.6's `buildSessionProjection` messages over the selected entries: per target, the
    /// last `context_edit` among them wins; an older compaction inside the kept range
    /// contributes nothing.
    fn projection(
        &self,
        selected: &[u32],
        from_lines: Option<MessageFormat>,
        emit: &mut impl FnMut(ContextMessage<'_>) -> StoreResult<()>,
    ) -> StoreResult<()> {
        let mut edits: HashMap<&str, u32> = HashMap::new();
        for &position in selected {
            let record = self.record(position);
            if record.kind() == Kind::ContextEdit
                && let Ref::Id(target) = record.target()
            {
                edits.insert(target, position);
            }
        }
        for (i, &position) in selected.iter().enumerate() {
            let record = self.record(position);
            if (i > 0 && record.kind() == Kind::Compaction) || !projects_messages(record.kind()) {
                continue;
            }
            let edit = record.id().and_then(|id| edits.get(id)).copied();
            if let Some(format) = from_lines
                && edit.is_none()
                && self.emit_line_message(position, format, emit)?
            {
                continue;
            }
            let entry = self.entry_value(position)?;
            let mut projected = Vec::new();
            project(&self.profile().rules().context, &entry, &mut projected);
            if let Some(edit) = edit {
                projected = self.apply_edit(edit, projected)?;
            }
            for message in projected {
                emit(ContextMessage::Value(message))?;
            }
        }
        Ok(())
    }

    /// pi 1.6's `buildSessionProjection(getBranch())` at `leaf`, entry by entry, with the
    /// branch facts `estimateProjectedContextTokens` reads and whether the path ends in a
    /// compaction.
    pub(crate) fn projected_entries(
        &mut self,
        leaf: &Leaf,
    ) -> StoreResult<(Vec<ProjectedEntry>, BranchFacts, bool)> {
        let path = self.profile_path(leaf)?;
        self.note_cycle(&path);
        let selected = self.select_context_entries(&path.positions);
        let mut edits: HashMap<&str, u32> = HashMap::new();
        for &position in &selected {
            let record = self.record(position);
            if record.kind() == Kind::ContextEdit
                && let Ref::Id(target) = record.target()
            {
                edits.insert(target, position);
            }
        }
        let mut out = Vec::with_capacity(selected.len());
        for (i, &position) in selected.iter().enumerate() {
            let record = self.record(position);
            let value = self.entry_value(position)?;
            let mut messages = Vec::new();
            project(&self.profile().rules().context, &value, &mut messages);
            let visible = !messages.is_empty();
            if i > 0 && record.kind() == Kind::Compaction {
                messages.clear();
            } else if let Some(&edit) = record.id().and_then(|id| edits.get(id)) {
                messages = self.apply_edit(edit, messages)?;
            }
            out.push(ProjectedEntry {
                value,
                messages,
                visible,
            });
        }
        let ids = path
            .positions
            .iter()
            .map(|&p| self.record(p).id().map(str::to_string))
            .collect();
        let latest_invalidating = path
            .positions
            .iter()
            .rposition(|&p| matches!(self.record(p).kind(), Kind::ContextEdit | Kind::Compaction));
        let last_is_compaction = path
            .positions
            .last()
            .is_some_and(|&p| self.record(p).kind() == Kind::Compaction);
        Ok((
            out,
            BranchFacts {
                ids,
                latest_invalidating,
            },
            last_is_compaction,
        ))
    }

    /// pi 1.6's `projectContextEntry` with an edit: `null` removes the entry's messages; any
    /// other replacement puts its `content` into the editable roles' messages.
    fn apply_edit(&self, edit: u32, messages: Vec<JsValue>) -> StoreResult<Vec<JsValue>> {
        let record = self.record(edit);
        let Payload::ContextEdit(replacement) = record.payload() else {
            return Ok(messages);
        };
        match replacement {
            Replacement::Null => return Ok(Vec::new()),
            // pi 1.6 throws here and cannot build the context at all; say which line.
            Replacement::Absent => {
                return Err(StoreError::at_line(
                    ErrorKind::InvalidEntry,
                    record.line(),
                    format!(
                        "line {}: the context_edit {} has no replacement, so pi 1.6 cannot \
                         build this context (Cannot read properties of undefined (reading \
                         'content'))",
                        record.line(),
                        record.id().unwrap_or("without an id")
                    ),
                ));
            }
            Replacement::Value => {}
        }
        let content = self
            .entry_value(edit)?
            .get("replacement")
            .and_then(|r| r.as_object())
            .and_then(|r| r.get(&JsString::new("content")))
            .cloned();
        Ok(replace_content(messages, content.as_ref()))
    }

    /// Thinking level, model (and for the harness, active tools) in force along `path`.
    fn settings(&self, path: &[u32]) -> StoreResult<Context> {
        // The raw texts of the last setting of each along the path, parsed once at the end.
        let mut level_text = None;
        let mut model_texts = None;
        let mut active_tool_names = None;
        for &position in path {
            let record = self.record(position);
            match record.payload() {
                Payload::ThinkingLevel(level) => level_text = Some(level),
                Payload::ModelChange { provider, model_id } => {
                    model_texts = Some((provider, model_id));
                }
                Payload::Message {
                    role: crate::format::entry::Role::Assistant,
                    provider,
                    model: m,
                } => {
                    model_texts = Some((provider, m));
                }
                _ if record.kind() == Kind::ActiveToolsChange
                    && !self.profile().is_session_manager() =>
                {
                    [active_tool_names] = self.entry_fields(position, ["activeToolNames"])?;
                }
                _ => {}
            }
        }
        let parse = |raw: Option<&str>| raw.and_then(|r| json::parse(r).ok());
        let thinking_level = level_text.map_or_else(|| Some(JsValue::from("off")), parse);
        let model = model_texts.map_or(JsValue::Null, |(provider, model)| {
            model_object(parse(provider), parse(model))
        });
        let active_tool_names = (!self.profile().is_session_manager())
            .then(|| active_tool_names.unwrap_or(JsValue::Null));
        Ok(Context {
            messages: Vec::new(),
            thinking_level,
            model,
            active_tool_names,
        })
    }
}

/// One message of a context as it is handed out.
pub enum ContextMessage<'a> {
    /// Built as pi builds it.
    Value(JsValue),
    /// The part of its entry's line that is exactly the message pi builds.
    Line(LineMessage<'a>),
}

/// A message as the part of its entry's line that holds it.
pub struct LineMessage<'a> {
    span: JsonSpan<'a>,
    line: u64,
}

impl LineMessage<'_> {
    /// The message as `JSON.parse` gives it.
    pub fn to_value(&self) -> StoreResult<JsValue> {
        self.span.to_value().map_err(|e| self.changed(e))
    }

    /// The message as [`JsonSpan::write_sorted_pretty`] writes it.
    pub fn write_sorted_pretty(
        &self,
        out: &mut String,
        indent: usize,
        level: usize,
    ) -> StoreResult<()> {
        self.span
            .write_sorted_pretty(out, indent, level)
            .map_err(|e| self.changed(e))
    }

    fn changed(&self, e: json::JsonError) -> StoreError {
        let line = self.line;
        StoreError::at_line(
            ErrorKind::Io,
            line,
            format!("line {line} changed on disk: {e}"),
        )
    }
}

/// The `message` of a message entry when [`project`] (and, for the LLM, [`convert_to_llm`])
/// hands it out unchanged; `None` when it does not or when that is not certain from the
/// bytes (a role or content to repair, a role with escapes, a role the LLM form rewrites).
fn passed_through(
    profile: Profile,
    format: MessageFormat,
    entry: JsonSpan<'_>,
) -> Option<JsonSpan<'_>> {
    if entry.get("type")?.as_plain_str()? != "message" {
        return None;
    }
    let message = entry.get("message").filter(JsonSpan::is_object)?;
    let role = match message.get("role") {
        Some(role) if role.is_escaped_string() => return None,
        Some(role) => role.as_plain_str(),
        None => None,
    };
    let no_content = message.get("content").is_none_or(|c| c.is_null());
    let repaired = match role {
        Some("system") => profile.rules().pi16_entries && no_content,
        Some("user" | "assistant" | "toolResult") => profile.is_session_manager() && no_content,
        _ => false,
    };
    let converted = format == MessageFormat::Llm
        && !matches!(role, Some("user" | "assistant" | "toolResult"))
        && !(role == Some("system") && profile.rules().pi16_entries);
    (!repaired && !converted).then_some(message)
}

/// `sessionEntryToContextMessages` of the profile's pi (the harness's `buildSessionContext`
/// projection, which also unfolds a compaction's `retainedTail`).
pub(super) fn project(rules: &ContextRules, entry: &JsValue, out: &mut Vec<JsValue>) {
    let repair_null_content = rules.repairs_null_content;
    let kind = entry
        .get("type")
        .and_then(JsValue::as_str)
        .map(|t| Kind::from_type(&t))
        .unwrap_or(Kind::Other);
    let timestamp = || JsValue::Number(date_millis(entry.get("timestamp")));
    let field = |key: &str| entry.get(key).cloned();
    match kind {
        Kind::Message => {
            let Some(message) = entry.get("message") else {
                return;
            };
            let role = message.get("role").and_then(JsValue::as_str);
            if rules.system_messages
                && role.as_deref() == Some("system")
                && matches!(message.get("content"), None | Some(JsValue::Null))
                && let JsValue::Object(map) = message
            {
                let mut copy = map.clone();
                copy.insert(JsString::new("content"), JsValue::from(""));
                out.push(JsValue::Object(copy));
                return;
            }
            let needs_repair = repair_null_content
                && matches!(role.as_deref(), Some("user" | "assistant" | "toolResult"))
                && matches!(message.get("content"), None | Some(JsValue::Null));
            if needs_repair && let JsValue::Object(map) = message {
                let mut copy = map.clone();
                copy.insert(JsString::new("content"), JsValue::Array(Vec::new()));
                out.push(JsValue::Object(copy));
            } else {
                out.push(message.clone());
            }
        }
        Kind::CustomMessage => {
            let content = match field("content") {
                None | Some(JsValue::Null) if repair_null_content => {
                    Some(JsValue::Array(Vec::new()))
                }
                other => other,
            };
            out.push(object([
                ("role", Some(JsValue::from("custom"))),
                ("customType", field("customType")),
                ("content", content),
                ("display", field("display")),
                ("details", field("details")),
                ("timestamp", Some(timestamp())),
            ]));
        }
        Kind::BranchSummary if entry.get("summary").is_some_and(JsValue::is_truthy) => {
            out.push(object([
                ("role", Some(JsValue::from("branchSummary"))),
                ("summary", field("summary")),
                ("fromId", field("fromId")),
                ("timestamp", Some(timestamp())),
            ]));
        }
        Kind::Compaction => {
            if rules.compaction_carries_system_prompt
                && let Some(system) = entry.get("systemMessage").filter(|s| s.is_truthy())
            {
                out.push(system.clone());
            }
            out.push(object([
                ("role", Some(JsValue::from("compactionSummary"))),
                ("summary", field("summary")),
                ("tokensBefore", field("tokensBefore")),
                ("timestamp", Some(timestamp())),
            ]));
            if rules.checkpoint_compactions
                && let Some(JsValue::Array(tail)) = entry.get("retainedTail")
            {
                out.extend(tail.iter().cloned());
            }
        }
        _ => {}
    }
}

/// pi 1.6's `projectContextEntry` with an edit that has a replacement: its `content` (absent:
/// none) goes into the editable roles' messages, as one text block where only blocks are valid.
pub(super) fn replace_content(messages: Vec<JsValue>, content: Option<&JsValue>) -> Vec<JsValue> {
    messages
        .into_iter()
        .map(|message| {
            let role = message.get("role").and_then(JsValue::as_str);
            let blocks_only = match role.as_deref() {
                Some("assistant" | "toolResult") => true,
                Some("user" | "custom") => false,
                _ => return message,
            };
            let content = match content {
                Some(JsValue::String(text)) if blocks_only => Some(JsValue::Array(vec![object([
                    ("type", Some(JsValue::from("text"))),
                    ("text", Some(JsValue::String(text.clone()))),
                ])])),
                other => other.cloned(),
            };
            let JsValue::Object(mut map) = message else {
                return message;
            };
            match content {
                // `{...message, content: undefined}`: the key no longer serializes.
                None => {
                    map.shift_remove(&JsString::new("content"));
                }
                Some(content) => {
                    map.insert(JsString::new("content"), content);
                }
            }
            JsValue::Object(map)
        })
        .collect()
}

/// The entry kinds that project to messages (pi's `sessionEntryToContextMessages`).
fn projects_messages(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Message | Kind::CustomMessage | Kind::BranchSummary | Kind::Compaction
    )
}

fn model_object(provider: Option<JsValue>, model_id: Option<JsValue>) -> JsValue {
    object([("provider", provider), ("modelId", model_id)])
}

/// An object of the present fields (JavaScript drops `undefined` ones when serializing).
pub(super) fn object<const N: usize>(fields: [(&str, Option<JsValue>); N]) -> JsValue {
    let mut map = JsObject::new();
    for (key, value) in fields {
        if let Some(value) = value {
            map.insert(JsString::new(key), value);
        }
    }
    JsValue::Object(map)
}

/// `new Date(value).getTime()`.
pub(super) fn date_millis(value: Option<&JsValue>) -> f64 {
    let millis = match value {
        Some(JsValue::String(s)) => parse_date_millis(&s.to_string_lossy()),
        Some(JsValue::Number(n)) => *n,
        Some(JsValue::Null) => 0.0,
        Some(JsValue::Bool(b)) => f64::from(u8::from(*b)),
        _ => f64::NAN,
    };
    // TimeClip.
    if millis.is_finite() && millis.abs() <= 8.64e15 {
        millis.trunc() + 0.0
    } else {
        f64::NAN
    }
}

pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// `convertToLlm` for one message (spec 6.4); `None` when it is dropped. pi 1.6 passes
/// `system` messages through; 0.82.1 has no case for them and drops them.
pub fn convert_to_llm(message: &JsValue, profile: Profile) -> Option<JsValue> {
    let role = message.get("role").and_then(JsValue::as_str)?;
    let text_of = |key: &str| {
        message
            .get(key)
            .map(JsValue::to_js_string)
            .unwrap_or_else(|| "undefined".into())
    };
    let user_text = |text: String| {
        object([
            ("role", Some(JsValue::from("user"))),
            (
                "content",
                Some(JsValue::Array(vec![object([
                    ("type", Some(JsValue::from("text"))),
                    ("text", Some(JsValue::from(text))),
                ])])),
            ),
            ("timestamp", message.get("timestamp").cloned()),
        ])
    };
    match &*role {
        "user" | "assistant" | "toolResult" => Some(message.clone()),
        "system" if profile.rules().pi16_entries => Some(message.clone()),
        "bashExecution" => {
            if message
                .get("excludeFromContext")
                .is_some_and(JsValue::is_truthy)
            {
                return None;
            }
            let mut text = format!("Ran `{}`\n", text_of("command"));
            match message.get("output") {
                Some(output) if output.is_truthy() => {
                    text.push_str(&format!("```\n{}\n```", JsValue::to_js_string(output)))
                }
                _ => text.push_str("(no output)"),
            }
            if message.get("cancelled").is_some_and(JsValue::is_truthy) {
                text.push_str("\n\n(command cancelled)");
            } else if let Some(code) = message
                .get("exitCode")
                .filter(|c| !matches!(c, JsValue::Null))
                && code != &JsValue::Number(0.0)
            {
                text.push_str(&format!(
                    "\n\nCommand exited with code {}",
                    JsValue::to_js_string(code)
                ));
            }
            if message.get("truncated").is_some_and(JsValue::is_truthy)
                && let Some(path) = message.get("fullOutputPath").filter(|p| p.is_truthy())
            {
                text.push_str(&format!(
                    "\n\n[Output truncated. Full output: {}]",
                    JsValue::to_js_string(path)
                ));
            }
            Some(user_text(text))
        }
        "custom" => {
            let content = match message.get("content") {
                Some(JsValue::String(s)) => Some(JsValue::Array(vec![object([
                    ("type", Some(JsValue::from("text"))),
                    ("text", Some(JsValue::String(s.clone()))),
                ])])),
                // `content: m.content`: a missing content stays missing.
                other => other.cloned(),
            };
            Some(object([
                ("role", Some(JsValue::from("user"))),
                ("content", content),
                ("timestamp", message.get("timestamp").cloned()),
            ]))
        }
        "branchSummary" => Some(user_text(format!(
            "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
            text_of("summary")
        ))),
        "compactionSummary" => Some(user_text(format!(
            "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
            text_of("summary")
        ))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `convertToLlm`'s custom case: `content` a string becomes a text block, anything else
    /// is kept as it is, and a missing one stays missing (`content: m.content`).
    #[test]
    fn custom_messages_keep_their_content_or_its_absence() {
        for (message, expected) in [
            (
                r#"{"role":"custom","content":"x","timestamp":1}"#,
                r#"{"role":"user","content":[{"type":"text","text":"x"}],"timestamp":1}"#,
            ),
            (
                r#"{"role":"custom","content":null,"timestamp":1}"#,
                r#"{"role":"user","content":null,"timestamp":1}"#,
            ),
            (
                r#"{"role":"custom","content":[1],"timestamp":1}"#,
                r#"{"role":"user","content":[1],"timestamp":1}"#,
            ),
            (
                r#"{"role":"custom","timestamp":1}"#,
                r#"{"role":"user","timestamp":1}"#,
            ),
            (r#"{"role":"custom"}"#, r#"{"role":"user"}"#),
        ] {
            for profile in [Profile::PiCli, Profile::Pi16] {
                let converted = convert_to_llm(&json::parse(message).unwrap(), profile);
                assert_eq!(converted.unwrap().stringify(), expected, "{message}");
            }
        }
    }
}
