//! Forks and clones (spec section 9): which entries a new session copies, and the new session
//! made of them.

use crate::format::entry::{Kind, facts_from_value};
use crate::format::ids::EntryIdStyle;
use crate::format::json::{JsString, JsValue};
use crate::format::profile::FirstWrite;

use super::error::{ErrorKind, StoreError, StoreResult};
use super::index::{Body, Index, Leaf};
use super::options::{NewSession, SessionOptions};
use super::session::Session;

/// `/fork` copies the path before a user message; `/clone` the path up to an entry.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)] // no doc comments: schemars would copy them into protocol/schema.json; protocol.md describes these members
pub enum ForkPosition {
    Before,
    At,
}

/// What a fork copies.
#[derive(Debug, Clone, PartialEq)]
pub struct ForkSelection {
    /// The entry the copy ends at; `None` when forking before a root message (a new, empty
    /// session).
    pub leaf_id: Option<String>,
    /// The forked user message's text, for the editor (`before` only).
    pub selected_text: Option<String>,
}

impl Session {
    /// Which entry a fork from `entry_id` copies up to, with pi's checks and errors.
    pub fn fork_selection(
        &self,
        entry_id: &str,
        position: ForkPosition,
    ) -> StoreResult<ForkSelection> {
        let invalid = |message: String| StoreError::new(ErrorKind::InvalidForkTarget, message);
        let pi_cli = self.profile().is_session_manager();
        let Some(target) = self.position(entry_id) else {
            return Err(invalid(if pi_cli {
                "Invalid entry ID for forking".into()
            } else {
                format!("Entry {entry_id} not found")
            }));
        };
        match position {
            ForkPosition::At => Ok(ForkSelection {
                leaf_id: Some(entry_id.to_string()),
                selected_text: None,
            }),
            ForkPosition::Before => {
                if !self.is_user_message(target) {
                    return Err(invalid(if pi_cli {
                        "Invalid entry ID for forking".into()
                    } else {
                        format!("Entry {entry_id} is not a user message")
                    }));
                }
                let value = self.entry_value(target)?;
                let text = value
                    .get("message")
                    .and_then(|m| m.get("content"))
                    .map(user_message_text)
                    .unwrap_or_default();
                let parent = self
                    .record(target)
                    .parent()
                    .id()
                    .filter(|p| !p.is_empty())
                    .map(str::to_string);
                Ok(ForkSelection {
                    leaf_id: parent,
                    selected_text: Some(text),
                })
            }
        }
    }

    /// The entries of a branched copy ending at `leaf_id`.
    ///
    /// pi-cli (`createBranchedSession`): the full path with label entries dropped and the rest
    /// re-chained, then every label still set on a kept entry re-created at the end with a new
    /// id and its original timestamp. Harness (`repo.fork`): the checkpoint path, verbatim.
    pub fn branched_entries(&mut self, leaf_id: &str) -> StoreResult<Vec<JsValue>> {
        if !self.profile().is_session_manager() {
            let walk = self.checkpoint_path(&Leaf::Id(leaf_id.into()))?;
            return walk
                .positions
                .iter()
                .map(|&p| self.entry_value(p))
                .collect();
        }
        let walk = self.branch_path(leaf_id);
        self.note_cycle(&walk);
        if walk.positions.is_empty() {
            return Err(StoreError::entry_not_found(leaf_id));
        }
        let mut entries = Vec::new();
        let mut kept_ids = std::collections::HashSet::new();
        let mut parent = JsValue::Null;
        // pi 1.6: a compaction's firstKeptEntryId naming a dropped label moves to the next
        // entry kept after that label (which may be the compaction itself).
        let repoint = self.profile().rules().fork_repoints_first_kept;
        let mut pending_labels: Vec<JsValue> = Vec::new();
        let mut replacement: Vec<(JsValue, JsValue)> = Vec::new();
        for &position in &walk.positions {
            if self.record(position).kind() == Kind::Label {
                if repoint {
                    let label = self.entry_value(position)?;
                    pending_labels.push(label.get("id").cloned().unwrap_or(JsValue::Null));
                }
                continue;
            }
            let mut value = self.entry_value(position)?;
            let id = value.get("id").cloned().unwrap_or(JsValue::Null);
            for label in pending_labels.drain(..) {
                replacement.retain(|(from, _)| *from != label);
                replacement.push((label, id.clone()));
            }
            if repoint && self.record(position).kind() == Kind::Compaction {
                repoint_first_kept(&mut value, &id, &replacement);
            }
            if let Some(map) = value.as_object_mut() {
                map.insert(JsString::new("parentId"), parent);
            }
            if let Some(id) = id.as_str() {
                kept_ids.insert(id.into_owned());
            }
            parent = id;
            entries.push(value);
        }
        let mut in_use = kept_ids.clone();
        if !matches!(parent, JsValue::String(ref s) if !s.is_empty()) {
            parent = JsValue::Null;
        }
        let labels: Vec<(String, JsValue, u32)> = self
            .labels()
            .filter(|(target, _, _)| kept_ids.contains(*target))
            .map(|(t, l, p)| (t.to_string(), l, p))
            .collect();
        for (target, label, label_entry) in labels {
            let id = self.ids().entry_id(EntryIdStyle::V4Prefix, |candidate| {
                in_use.contains(candidate)
            });
            in_use.insert(id.clone());
            let timestamp = self.entry_value(label_entry)?.get("timestamp").cloned();
            let mut map = crate::format::json::JsObject::new();
            map.insert(JsString::new("type"), JsValue::from("label"));
            map.insert(JsString::new("id"), JsValue::from(id.as_str()));
            map.insert(JsString::new("parentId"), parent.clone());
            if let Some(timestamp) = timestamp {
                map.insert(JsString::new("timestamp"), timestamp);
            }
            map.insert(JsString::new("targetId"), JsValue::from(target.as_str()));
            map.insert(JsString::new("label"), label);
            parent = JsValue::from(id.as_str());
            entries.push(JsValue::Object(map));
        }
        Ok(entries)
    }

    /// Every entry, as `JSON.stringify(JSON.parse(line))` copies it (`forkFrom`).
    pub(crate) fn all_entries(&self) -> StoreResult<Vec<JsValue>> {
        (0..self.len() as u32)
            .map(|p| self.entry_value(p))
            .collect()
    }

    /// A new session holding `entries` after its header. pi-cli writes the file at once when
    /// `write_now` is set (`forkFrom`) or the entries hold an assistant message (otherwise at
    /// the first one, as usual), pi-1.6 when they hold a user or an assistant message
    /// (`_hasConversation`); harness writes it at once. The leaf is the fold over the entries.
    pub fn from_entries(
        new: NewSession,
        entries: &[JsValue],
        options: SessionOptions,
        write_now: bool,
    ) -> StoreResult<Session> {
        let profile = options.profile;
        let mut session = Session::create(
            NewSession {
                path: None,
                ..new.clone()
            },
            options,
        )?;
        let mut index = Index::default();
        let mut lines = Vec::with_capacity(entries.len());
        for entry in entries {
            let line = entry.stringify();
            index.push(
                facts_from_value(entry),
                Body::Held(line.clone().into_boxed_str()),
                0,
                profile,
            )?;
            lines.push(line);
        }
        session.replace_index(index);
        let has_conversation = || {
            entries.iter().any(|entry| {
                entry.get("type").and_then(JsValue::as_str).as_deref() == Some("message")
                    && matches!(
                        entry
                            .get("message")
                            .and_then(|m| m.get("role"))
                            .and_then(JsValue::as_str)
                            .as_deref(),
                        Some("user" | "assistant")
                    )
            })
        };
        let now = match profile.rules().first_write {
            FirstWrite::AtOnce => true,
            FirstWrite::AtConversation => write_now || has_conversation(),
            FirstWrite::AtAssistant => write_now,
        };
        if let Some(path) = new.path {
            session.persist_at(path, now)?;
        }
        Ok(session)
    }
}

/// pi 1.6's `createBranchedSession` rule for a compaction on the copied path: a
/// `firstKeptEntryId` equal to the compaction's own id stays; one naming a dropped label
/// becomes that label's replacement; anything else stays (the key keeps its place).
fn repoint_first_kept(
    compaction: &mut JsValue,
    own_id: &JsValue,
    replacement: &[(JsValue, JsValue)],
) {
    let Some(first_kept) = compaction.get("firstKeptEntryId").cloned() else {
        return;
    };
    if first_kept == *own_id {
        return;
    }
    let Some((_, to)) = replacement.iter().find(|(from, _)| *from == first_kept) else {
        return;
    };
    if let Some(map) = compaction.as_object_mut() {
        map.insert(JsString::new("firstKeptEntryId"), to.clone());
    }
}

/// The runtime fork's `extractUserMessageText`: string content as it is, else the text blocks
/// whose `text` is a string, joined (unlike navigation's `contentText`, which takes any `text`).
fn user_message_text(content: &JsValue) -> String {
    match content {
        JsValue::String(s) => s.to_string_lossy().into_owned(),
        JsValue::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(JsValue::as_str).as_deref() == Some("text"))
            .filter_map(|b| {
                b.get("text")
                    .and_then(JsValue::as_str)
                    .map(|t| t.into_owned())
            })
            .collect(),
        _ => String::new(),
    }
}
