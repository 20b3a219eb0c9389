//! `replay`: applies an op script (the oracle's `replay` format) to a new session, so that the
//! files this program writes can be compared with the files pi writes for the same script.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::format::entry_input::parse_new_entry;
use crate::format::ids::IdSource;
use crate::format::json::{JsObject, JsString, JsValue};
use crate::format::profile::Profile;
use crate::format::write::NewEntry;
use crate::repo::{PathEnv, Place, SessionRequest, new_session};
use crate::store::{ErrorKind, MessageFormat, Session, SessionOptions, StoreError};

/// How a replay ended.
#[derive(Debug)]
pub(crate) enum ReplayOutcome {
    /// The oracle's result document.
    Done(JsValue),
    /// An op failed without `allowError` (`op` is its index).
    OpFailed { op: usize, error: StoreError },
    /// The script is malformed.
    Usage(String),
}

/// Where `replay --deterministic`'s clock starts: 2026-01-01T00:00:00.000Z.
pub(crate) const REPLAY_EPOCH_MILLIS: i64 = 1_767_225_600_000;

/// The ids and clock of a replay: seeded from [`REPLAY_EPOCH_MILLIS`] when a seed is given
/// (reproducible files), the system's otherwise.
pub(crate) fn replay_ids(seed: Option<u64>) -> IdSource {
    seed.map_or_else(IdSource::system, |seed| {
        IdSource::deterministic(seed, REPLAY_EPOCH_MILLIS)
    })
}

/// Replays `script` into a new session under `out_dir`.
pub(crate) fn replay_ops(
    env: &PathEnv,
    script: &JsValue,
    out_dir: &Path,
    profile: Profile,
    ids: Arc<IdSource>,
) -> ReplayOutcome {
    match replay(env, script, out_dir, profile, ids) {
        Ok(outcome) => outcome,
        Err(message) => ReplayOutcome::Usage(message),
    }
}

fn replay(
    env: &PathEnv,
    script: &JsValue,
    out_dir: &Path,
    profile: Profile,
    ids: Arc<IdSource>,
) -> Result<ReplayOutcome, String> {
    let cwd = script
        .get("cwd")
        .and_then(JsValue::as_str)
        .filter(|c| !c.is_empty())
        .ok_or("\"cwd\" must be a non-empty string")?;
    let ops = script
        .get("ops")
        .and_then(JsValue::as_array)
        .ok_or("\"ops\" must be an array")?;
    let session_id = optional_string(script, "sessionId")?;
    let parent_session = optional_string(script, "parentSession")?;
    let metadata = script.get("metadata").cloned();
    let options = SessionOptions {
        profile,
        ids: ids.clone(),
        ..SessionOptions::default()
    };
    // The oracle's layout: pi-cli writes flat into OUT_DIR, the harness into its cwd's
    // directory with OUT_DIR as the sessions root.
    let out = out_dir.to_string_lossy();
    let env = env.clone().with_sessions_root(&out);
    let place = match profile.is_session_manager() {
        true => Place::Dir(&out),
        false => Place::Default,
    };
    let request = SessionRequest {
        profile,
        cwd: &cwd,
        id: session_id.as_deref(),
        place,
        parent_session,
        metadata,
    };
    let new = match new_session(&env, request, &ids) {
        Ok(new) => new,
        Err(e) if e.kind == ErrorKind::InvalidArgument => return Err(e.message),
        Err(error) => return Ok(ReplayOutcome::OpFailed { op: 0, error }),
    };
    let path: PathBuf = new.path.clone().unwrap_or_default();
    let mut session = match Session::create(new, options) {
        Ok(s) => s,
        Err(error) => return Ok(ReplayOutcome::OpFailed { op: 0, error }),
    };
    let mut refs: Vec<JsValue> = Vec::new();
    let mut errors = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let name = op
            .get("op")
            .and_then(JsValue::as_str)
            .ok_or(format!("op #{i}: must be an object with an \"op\" string"))?;
        let result = apply(&mut session, op, &name, i, &refs)?;
        match result {
            Ok(id) => refs.push(id.map_or(JsValue::Null, JsValue::from)),
            Err(error) if op.get("allowError").is_some_and(JsValue::is_truthy) => {
                refs.push(JsValue::Null);
                let mut e = JsObject::new();
                e.insert(JsString::new("op"), JsValue::Number(i as f64));
                e.insert(
                    JsString::new("error"),
                    JsValue::from(error.message.as_str()),
                );
                // What the oracle reports of the thrown error: the manager throws plain
                // `Error`s, the harness `SessionError`s with a code.
                if !profile.is_session_manager() {
                    e.insert(
                        JsString::new("code"),
                        JsValue::from(harness_code(error.kind)),
                    );
                    e.insert(JsString::new("name"), JsValue::from("SessionError"));
                } else {
                    e.insert(JsString::new("name"), JsValue::from("Error"));
                }
                errors.push(JsValue::Object(e));
            }
            Err(error) => return Ok(ReplayOutcome::OpFailed { op: i, error }),
        }
    }
    let leaf = session.leaf().clone();
    let entries = match session.context_entries(&leaf) {
        Ok(e) => e,
        Err(error) => {
            return Ok(ReplayOutcome::OpFailed {
                op: ops.len(),
                error,
            });
        }
    };
    let context = match session.build_context(&leaf, MessageFormat::Agent) {
        Ok(c) => c,
        Err(error) => {
            return Ok(ReplayOutcome::OpFailed {
                op: ops.len(),
                error,
            });
        }
    };
    let mut doc = JsObject::new();
    let mut put = |k: &str, v: JsValue| {
        doc.insert(JsString::new(k), v);
    };
    put("file", JsValue::from(path.to_string_lossy().as_ref()));
    put("fileWritten", JsValue::Bool(path.exists()));
    put("refs", JsValue::Array(refs));
    put("errors", JsValue::Array(errors));
    match session.leaf().id() {
        Some(id) => put("leafId", JsValue::from(id)),
        None => put("leafId", JsValue::Null),
    }
    put(
        "contextEntryIds",
        JsValue::Array(
            entries
                .iter()
                .map(|&p| session.record(p).id().map_or(JsValue::Null, JsValue::from))
                .collect(),
        ),
    );
    put("context", context.to_value(profile));
    Ok(ReplayOutcome::Done(JsValue::Object(doc)))
}

/// The harness's `SessionError` code for an error kind.
fn harness_code(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::EntryNotFound | ErrorKind::SessionNotFound => "not_found",
        ErrorKind::InvalidEntry => "invalid_entry",
        ErrorKind::InvalidForkTarget => "invalid_fork_target",
        ErrorKind::Io | ErrorKind::Locked | ErrorKind::LineTooLong => "storage",
        ErrorKind::InvalidSession
        | ErrorKind::SummaryRequired
        | ErrorKind::InvalidArgument
        | ErrorKind::NotSaved
        | ErrorKind::LeafMoved => "invalid_session",
        // AgentHarnessError("compaction", "Nothing to compact").
        ErrorKind::AlreadyCompacted | ErrorKind::NothingToCompact => "compaction",
    }
}

fn optional_string(script: &JsValue, key: &str) -> Result<Option<String>, String> {
    match script.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_str()
            .map(|s| Some(s.into_owned()))
            .ok_or(format!("\"{key}\" must be a string")),
    }
}

/// An entry named by `<ref_key>` (the index of an earlier op) or `<id_key>` (a literal id).
fn target(
    op: &JsValue,
    i: usize,
    refs: &[JsValue],
    ref_key: &str,
    id_key: &str,
) -> Result<Option<Option<String>>, String> {
    if let Some(r) = op.get(ref_key) {
        if r == &JsValue::Null {
            return Ok(Some(None));
        }
        let index = r
            .as_f64()
            .filter(|n| n.fract() == 0.0 && *n >= 0.0 && (*n as usize) < i);
        let index = index.ok_or(format!(
            "op #{i}: {ref_key} must be the index of an earlier op"
        ))? as usize;
        let id = refs[index].as_str().ok_or(format!(
            "op #{i}: {ref_key} {index} points at op #{index}, which created no entry"
        ))?;
        return Ok(Some(Some(id.into_owned())));
    }
    match op.get(id_key) {
        None => Ok(None),
        Some(JsValue::Null) => Ok(Some(None)),
        Some(v) => Ok(Some(Some(
            v.as_str()
                .ok_or(format!("op #{i}: {id_key} must be a string"))?
                .into_owned(),
        ))),
    }
}

type OpResult = Result<Option<String>, StoreError>;

/// The append ops: op name, the entry type it appends, the fields it copies as they are.
const APPENDS: &[(&str, &str, &[&str])] = &[
    ("appendMessage", "message", &["message"]),
    (
        "appendModelChange",
        "model_change",
        &["provider", "modelId"],
    ),
    ("appendThinkingLevelChange", "thinking_level_change", &[]),
    (
        "appendCompaction",
        "compaction",
        &[
            "summary",
            "tokensBefore",
            "retainedTail",
            "details",
            "usage",
            "fromHook",
        ],
    ),
    ("appendCustomEntry", "custom", &["customType", "data"]),
    (
        "appendCustomMessageEntry",
        "custom_message",
        &["customType", "content", "display", "details"],
    ),
    ("appendLabelChange", "label", &["label"]),
    ("appendSessionInfo", "session_info", &["name"]),
    (
        "appendActiveToolsChange",
        "active_tools_change",
        &["activeToolNames"],
    ),
    ("appendContextEdit", "context_edit", &["replacement"]),
    (
        "appendUsage",
        "usage",
        &["kind", "provider", "model", "usage", "note"],
    ),
];

/// What only pi 1.6's SessionManager appends: the oracle's other implementations refuse these
/// ops as unsupported, and so does a replay in another profile.
fn pi16_only(op: &JsValue, name: &str) -> Option<&'static str> {
    let role = op
        .get("message")
        .and_then(|m| m.get("role"))
        .and_then(JsValue::as_str);
    match name {
        "appendContextEdit" => Some("appendContextEdit"),
        "appendUsage" => Some("appendUsage"),
        "appendMessage" if role.as_deref() == Some("system") => Some("a system-role message"),
        "appendCompaction"
            if op.get("firstKeptEntryId") == Some(&JsValue::Null)
                || op.get("firstKeptEntryRef") == Some(&JsValue::Null) =>
        {
            Some("a compaction with firstKeptEntryId null")
        }
        _ => None,
    }
}

fn apply(
    session: &mut Session,
    op: &JsValue,
    name: &str,
    i: usize,
    refs: &[JsValue],
) -> Result<OpResult, String> {
    let copy = |key: &str| op.get(key).cloned();
    let needs_target = |ref_key: &str, id_key: &str| -> Result<Option<String>, String> {
        target(op, i, refs, ref_key, id_key)?
            .ok_or(format!("op #{i} ({name}): needs {ref_key} or {id_key}"))
    };
    let target_id = || {
        needs_target("targetRef", "targetId")?.ok_or(format!("op #{i}: targetId must be a string"))
    };
    match name {
        "branch" => return Ok(session.branch(&target_id()?).map(|()| None)),
        "resetLeaf" => return Ok(session.reset_leaf().map(|()| None)),
        "branchWithSummary" => {
            let from = needs_target("targetRef", "targetId")?;
            let summary = copy("summary").ok_or(format!("op #{i} ({name}): needs summary"))?;
            return Ok(session
                .branch_with_summary(
                    from.as_deref(),
                    summary,
                    copy("details"),
                    copy("fromHook"),
                    copy("usage"),
                )
                .map(Some));
        }
        _ => {}
    }
    let Some(&(_, kind, fields)) = APPENDS.iter().find(|(op, ..)| *op == name) else {
        return Err(format!("op #{i}: unknown op \"{name}\""));
    };
    if let Some(what) = pi16_only(op, name)
        && !session.profile().rules().pi16_entries
    {
        return Err(format!(
            "op #{i}: {what} is not supported by the {} implementation",
            match session.profile().is_session_manager() {
                false => "harness",
                true => "manager",
            }
        ));
    }
    // The op in `session/append`'s form, read by the one entry reader.
    let mut entry = JsObject::new();
    entry.insert(JsString::new("type"), JsValue::from(kind));
    let mut put = |key: &str, value: Option<JsValue>| {
        if let Some(value) = value {
            entry.insert(JsString::new(key), value);
        }
    };
    for &key in fields {
        put(key, copy(key));
    }
    match kind {
        "thinking_level_change" => put("thinkingLevel", copy("level").or(copy("thinkingLevel"))),
        "compaction" => match target(op, i, refs, "firstKeptEntryRef", "firstKeptEntryId")? {
            None => {}
            // pi 1.6: null keeps nothing (checked above to be the pi-1.6 profile).
            Some(None) => put("firstKeptEntryId", Some(JsValue::Null)),
            Some(Some(kept)) => put("firstKeptEntryId", Some(JsValue::from(kept))),
        },
        "label" | "context_edit" => put("targetId", Some(JsValue::from(target_id()?))),
        _ => {}
    }
    let entry =
        parse_new_entry(&JsValue::Object(entry)).map_err(|e| format!("op #{i} ({name}): {e}"))?;
    if session.profile().is_session_manager() && matches!(entry, NewEntry::ActiveToolsChange { .. })
    {
        return Err(format!(
            "op #{i}: appendActiveToolsChange is not supported by the manager implementation"
        ));
    }
    Ok(session.append(entry).map(Some))
}
