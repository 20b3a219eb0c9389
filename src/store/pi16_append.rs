//! What pi 1.6's SessionManager checks or computes when it appends its new kinds: the checks
//! of `appendContextEdit` (in its order, with its messages) and the `systemMessage` snapshot
//! `appendCompaction` stores.

use crate::format::entry::{Kind, Payload, Role};
use crate::format::json::{JsObject, JsString, JsValue};
use crate::format::time::parse_date_millis;

use super::context::MessageFormat;
use super::error::{ErrorKind, StoreError, StoreResult};
use super::index::Leaf;
use super::session::Session;
use super::system_message::current_system_message;

impl Session {
    /// `appendContextEdit`'s checks; returns the replacement as pi 1.6 stores it (a string for
    /// an assistant or toolResult target becomes one text block).
    pub(super) fn checked_context_edit(
        &self,
        target_id: &str,
        replacement: JsValue,
    ) -> StoreResult<JsValue> {
        let invalid = |message: String| StoreError::new(ErrorKind::InvalidArgument, message);
        let content = replacement.as_object().and_then(|r| r.get("content"));
        let valid = matches!(replacement, JsValue::Null)
            || matches!(content, Some(JsValue::String(_) | JsValue::Array(_)));
        if !valid {
            return Err(invalid(
                "Context edit replacement must be null or contain string/array content".into(),
            ));
        }
        let Some(position) = self.position(target_id) else {
            return Err(StoreError::entry_not_found(target_id));
        };
        let branch = match &self.leaf {
            Leaf::Id(id) => self.branch_path(id).positions,
            _ => Vec::new(),
        };
        if !branch
            .iter()
            .any(|&p| self.record(p).id() == Some(target_id))
        {
            return Err(invalid(format!(
                "Entry {target_id} is not on the active branch"
            )));
        }
        let record = self.record(position);
        let role = match (record.payload(), record.kind()) {
            (_, Kind::CustomMessage) => Role::Other,
            (Payload::Message { role, .. }, _)
                if matches!(role, Role::User | Role::Assistant | Role::ToolResult) =>
            {
                role
            }
            _ => {
                return Err(invalid(format!(
                    "Entry {target_id} does not contribute editable model content"
                )));
            }
        };
        Ok(match content {
            Some(JsValue::String(text)) if matches!(role, Role::Assistant | Role::ToolResult) => {
                let block: JsObject = [
                    (JsString::new("type"), JsValue::from("text")),
                    (JsString::new("text"), JsValue::String(text.clone())),
                ]
                .into_iter()
                .collect();
                let normalized: JsObject = [(
                    JsString::new("content"),
                    JsValue::Array(vec![JsValue::Object(block)]),
                )]
                .into_iter()
                .collect();
                JsValue::Object(normalized)
            }
            _ => replacement,
        })
    }

    /// The compaction's `systemMessage`: `getCurrentSystemMessage` over the current leaf's
    /// projection (edits applied), stamped with the compaction's own time in milliseconds.
    pub(super) fn current_system_message(
        &mut self,
        timestamp: &str,
    ) -> StoreResult<Option<JsValue>> {
        let leaf = self.leaf.clone();
        let messages = self.build_context(&leaf, MessageFormat::Agent)?.messages;
        let Some(JsValue::Object(mut message)) = current_system_message(&messages)? else {
            return Ok(None);
        };
        message.insert(
            JsString::new("timestamp"),
            JsValue::Number(parse_date_millis(timestamp)),
        );
        Ok(Some(JsValue::Object(message)))
    }
}
