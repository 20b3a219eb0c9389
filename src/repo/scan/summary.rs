//! pi's `buildSessionInfo` accumulation: entry by entry, what ends up in a `SessionInfo`.

use std::path::PathBuf;

use super::SkipReason;
use super::facts::{ContentFact, EntryFacts, HeaderFacts, ListedKind, MessageFact, Pi16Mark};
use crate::format::js_date::JsDate;
use crate::repo::session_info::SessionInfo;

pub(crate) struct SummaryBuilder {
    header: HeaderFacts,
    message_count: u64,
    first_message: Option<String>,
    all_messages_text: String,
    text_count: usize,
    name: Option<String>,
    last_activity: Option<f64>,
    uses_local_time: bool,
    pi16: Vec<Pi16Mark>,
}

/// A scanned session, and whether its dates were read as local time (which makes the result
/// depend on the machine's time zone, so it is not worth caching).
pub(crate) struct Summary {
    pub(crate) info: SessionInfo,
    pub(crate) uses_local_time: bool,
    /// What only pi 1.6 writes, per feature in order of first appearance.
    pub(crate) pi16: Vec<Pi16Mark>,
}

impl SummaryBuilder {
    pub(crate) fn new(header: HeaderFacts) -> Self {
        SummaryBuilder {
            header,
            message_count: 0,
            first_message: None,
            all_messages_text: String::new(),
            text_count: 0,
            name: None,
            last_activity: None,
            uses_local_time: false,
            pi16: Vec::new(),
        }
    }

    /// Takes one entry. `Err` where pi's code throws, which drops the whole session.
    pub(crate) fn add(&mut self, entry: EntryFacts<'_>, line: u64) -> Result<(), SkipReason> {
        if let Some(feature) = entry.pi16 {
            match self.pi16.iter_mut().find(|m| m.feature == feature) {
                Some(mark) => mark.count += 1,
                None => self.pi16.push(Pi16Mark {
                    feature,
                    line,
                    count: 1,
                }),
            }
        }
        if entry.kind == ListedKind::SessionInfo {
            // Latest wins, including explicit clears.
            self.name = entry
                .name
                .resolve()
                .map_err(|()| SkipReason::NameNotString { line })?;
        }
        if entry.kind != ListedKind::Message {
            return Ok(());
        }
        self.message_count += 1;
        let (user, timestamp, content) = match entry.message {
            MessageFact::Nullish => return Err(SkipReason::MessageWithoutBody { line }),
            MessageFact::Inert => return Ok(()),
            MessageFact::Chat {
                user,
                timestamp,
                content,
            } => (user, timestamp, content),
        };
        // The activity time is taken before the content is looked at, but an invalid content
        // drops the session anyway, so the order does not show.
        let activity = match timestamp {
            Some(ms) => Some(ms),
            None => {
                let parsed = entry.timestamp.to_date();
                self.uses_local_time |= parsed.local;
                parsed.date.millis().map(|ms| ms as f64)
            }
        };
        if let Some(ms) = activity {
            self.last_activity = Some(self.last_activity.unwrap_or(0.0).max(ms));
        }
        let text = match content {
            ContentFact::Text(text) => text,
            ContentFact::Invalid => return Err(SkipReason::ContentNotText { line }),
        };
        if text.is_empty() {
            return Ok(());
        }
        if self.text_count > 0 {
            self.all_messages_text.push(' ');
        }
        self.all_messages_text.push_str(&text);
        self.text_count += 1;
        if user && self.first_message.is_none() {
            self.first_message = Some(text.into_owned());
        }
        Ok(())
    }

    /// The `SessionInfo`; `mtime_ms` is the file's `stat` mtime as Node rounds it.
    pub(crate) fn finish(self, path: PathBuf, mtime_ms: f64) -> Summary {
        let mut uses_local_time = self.uses_local_time;
        let created = self.header.timestamp.to_date();
        uses_local_time |= created.local;
        let header_time = if self.header.timestamp_is_string {
            created.date
        } else {
            JsDate::INVALID
        };
        let modified = match self.last_activity {
            Some(ms) if ms > 0.0 => JsDate::from_millis(ms),
            _ if header_time.is_valid() => header_time,
            _ => JsDate::from_millis(mtime_ms),
        };
        Summary {
            info: SessionInfo {
                path,
                id: self.header.id,
                cwd: self.header.cwd.unwrap_or_default(),
                name: self.name,
                parent_session_path: self.header.parent_session,
                created: created.date,
                modified,
                message_count: self.message_count,
                first_message: self
                    .first_message
                    .unwrap_or_else(|| "(no messages)".to_string()),
                all_messages_text: self.all_messages_text.into(),
            },
            uses_local_time,
            pi16: self.pi16,
        }
    }
}
