//! The preparation as a document: pi's preparation, where it came from (the entries behind
//! each list, the window start, the previous compaction), the file lists and the requests a
//! front-end sends to its model. `session/prepareCompaction` and `compact-plan` print it.

use crate::format::json::{JsObject, JsString, JsValue};

use super::estimate::{CompactionRules as Rules, estimate_tokens};
use super::prepare::{ModelRequest, Preparation};

/// How much of the messages to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Everything, as pi's hook receives it and as the model is asked.
    Full,
    /// Messages as `{role, tokens}` and request texts as their length: for people.
    Brief,
}

fn ids(list: &[String]) -> JsValue {
    JsValue::Array(list.iter().map(|i| JsValue::from(i.as_str())).collect())
}

fn brief_messages(messages: &[JsValue], rules: Rules) -> JsValue {
    JsValue::Array(
        messages
            .iter()
            .map(|m| {
                let mut map = JsObject::new();
                map.insert(
                    JsString::new("role"),
                    m.get("role").cloned().unwrap_or(JsValue::Null),
                );
                let tokens = estimate_tokens(m, rules).unwrap_or(f64::NAN);
                map.insert(JsString::new("tokens"), JsValue::Number(tokens));
                JsValue::Object(map)
            })
            .collect(),
    )
}

impl Preparation {
    /// The plan document (see protocol.md, `session/prepareCompaction`).
    pub fn plan_value(
        &self,
        requests: &[ModelRequest],
        now_millis: f64,
        detail: Detail,
    ) -> JsValue {
        let mut map = JsObject::new();
        let mut put = |k: &str, v: JsValue| {
            map.insert(JsString::new(k), v);
        };
        let mut preparation = self.to_value();
        if detail == Detail::Brief
            && let Some(p) = preparation.as_object_mut()
        {
            let rules = Rules::of(self.profile);
            for key in ["messagesToSummarize", "turnPrefixMessages", "retainedTail"] {
                if let Some(JsValue::Array(list)) = p.get(key).cloned() {
                    p.insert(JsString::new(key), brief_messages(&list, rules));
                }
            }
        }
        put("preparation", preparation);
        let mut entry_ids = JsObject::new();
        entry_ids.insert(JsString::new("history"), ids(&self.history_entry_ids));
        entry_ids.insert(
            JsString::new("turnPrefix"),
            ids(&self.turn_prefix_entry_ids),
        );
        entry_ids.insert(JsString::new("kept"), ids(&self.kept_entry_ids));
        put("entryIds", JsValue::Object(entry_ids));
        let id_at = |i: Option<usize>| {
            i.and_then(|i| self.path_ids.get(i).cloned().flatten())
                .map_or(JsValue::Null, JsValue::from)
        };
        put("windowStartId", id_at(Some(self.window_start_index)));
        put(
            "previousCompactionId",
            id_at(self.previous_compaction_index),
        );
        put(
            "turnStartId",
            id_at(self.cut.turn_start_index.filter(|_| self.cut.is_split_turn)),
        );
        let (read, modified) = self.file_lists();
        put("readFiles", JsValue::Array(read));
        put("modifiedFiles", JsValue::Array(modified));
        put("fileListsText", JsValue::String(self.file_lists_text()));
        let requests = requests
            .iter()
            .map(|r| {
                let mut v = r.to_value(now_millis);
                if detail == Detail::Brief
                    && let Some(obj) = v.as_object_mut()
                {
                    obj.shift_remove("messages");
                    obj.insert(
                        JsString::new("textLength"),
                        JsValue::Number(super::text::length(&r.text) as f64),
                    );
                }
                v
            })
            .collect();
        put("requests", JsValue::Array(requests));
        JsValue::Object(map)
    }
}
