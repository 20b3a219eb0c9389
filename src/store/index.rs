//! The in-memory index over a session file: per line, where its bytes are and what the tree and
//! context building need to know. Line bodies stay on disk until a query reads them back.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use indexmap::IndexMap;

use crate::format::entry::{EntryId, Kind, LineFacts, Payload, Ref, Role};
use crate::format::profile::Profile;

/// Where a line's bytes are.
#[derive(Debug, Clone)]
pub enum Body {
    /// In the session file.
    File { offset: u64, len: u32 },
    /// Only in memory: not written yet (lazy first write, in-memory sessions) or rewritten by a
    /// migration of a file opened read-only.
    Held(Box<str>),
}

/// One entry of the session.
#[derive(Debug, Clone)]
pub struct Record {
    pub facts: LineFacts,
    pub body: Body,
    /// 1-based physical line in the file (0 while not written).
    pub line: u64,
}

impl Record {
    pub fn new(facts: LineFacts, body: Body, line: u64) -> Self {
        Record { facts, body, line }
    }

    /// `Date.parse(timestamp)`, for tree ordering.
    pub fn timestamp_millis(&self) -> f64 {
        self.facts.timestamp_millis
    }

    pub fn kind(&self) -> Kind {
        self.facts.kind
    }

    pub fn id(&self) -> Option<&str> {
        self.facts.id.as_deref()
    }

    /// The `type` string as written (`None` when the line has none).
    pub fn type_name(&self) -> Option<&str> {
        self.facts
            .kind
            .type_name()
            .or(self.facts.other_type.as_deref())
    }

    pub fn is_assistant_message(&self) -> bool {
        matches!(
            self.facts.payload,
            Payload::Message {
                role: Role::Assistant,
                ..
            }
        )
    }
}

/// Where the conversation stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leaf {
    /// Before the first entry: the next append makes a root.
    Null,
    /// pi's `undefined` leaf: the last entry has no string id (a file ending in a non-object
    /// line). Context building then starts from the last entry, as pi does.
    Undefined,
    Id(EntryId),
}

impl Leaf {
    pub fn id(&self) -> Option<&str> {
        match self {
            Leaf::Id(id) => Some(id),
            _ => None,
        }
    }

    /// The leaf after `facts` is appended or read: a `leaf` entry means its target, any other
    /// entry itself.
    pub fn after(facts: &LineFacts) -> Leaf {
        let id = if facts.kind == Kind::Leaf {
            &facts.target
        } else {
            &Ref::from_id(&facts.id)
        };
        match id {
            Ref::Null => Leaf::Null,
            Ref::Id(id) => Leaf::Id(id.clone()),
            Ref::Missing | Ref::Invalid => Leaf::Undefined,
        }
    }
}

impl Ref {
    fn from_id(id: &Option<EntryId>) -> Ref {
        id.as_ref().map_or(Ref::Missing, |id| Ref::Id(id.clone()))
    }
}

/// A label as the cache holds it: the raw JSON value and the label entry's timestamp.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// The label as JSON text (a string for every label pi writes).
    pub value: Arc<str>,
    /// Index of the label entry that set it.
    pub entry: u32,
}

impl Index {
    /// Whether the SessionManager of `profile` writes an unwritten session now: 0.82.1 at the
    /// first assistant message, 1.6 at the first user or assistant message (`_hasConversation`).
    pub fn has_conversation(&self, profile: Profile) -> bool {
        self.has_assistant || (profile == Profile::Pi16 && self.has_user)
    }
}

/// Entries, the id map, the label cache and the leaf: everything derived from the lines.
#[derive(Debug, Default)]
pub struct Index {
    pub records: Vec<Record>,
    /// Id -> position; a duplicate id maps to its last occurrence, as pi's `byId` does.
    pub by_id: HashMap<EntryId, u32>,
    /// Target id -> label, in pi's cache order (where a label was set after its last clear).
    pub labels: IndexMap<EntryId, Label>,
    pub leaf: Option<Leaf>,
    pub has_assistant: bool,
    /// Whether any entry is a user message (pi 1.6 writes the file at the first one).
    pub has_user: bool,
    /// One copy of each provider and model text, shared by every message naming it.
    strings: HashSet<Arc<str>>,
}

impl Index {
    fn share(&mut self, text: &Arc<str>) -> Arc<str> {
        match self.strings.get(text) {
            Some(shared) => shared.clone(),
            None => {
                self.strings.insert(text.clone());
                text.clone()
            }
        }
    }

    pub fn with_capacity(entries: usize) -> Index {
        Index {
            records: Vec::with_capacity(entries),
            by_id: HashMap::with_capacity(entries),
            ..Index::default()
        }
    }

    pub fn get(&self, id: &str) -> Option<u32> {
        self.by_id.get(id).copied()
    }

    pub fn record(&self, index: u32) -> &Record {
        &self.records[index as usize]
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Adds a record, updating the id map, the label cache and the leaf as `profile` does.
    pub fn push(&mut self, mut record: Record, profile: Profile) {
        let position = self.records.len() as u32;
        if let Payload::Message {
            provider, model, ..
        } = &mut record.facts.payload
        {
            for text in [provider, model].into_iter().flatten() {
                *text = self.share(text);
            }
        }
        if let Some(id) = &record.facts.id {
            self.by_id.insert(id.clone(), position);
        }
        if record.facts.kind == Kind::Label
            && let Some(target) = record.facts.target.id()
        {
            match label_value(&record.facts.payload, profile) {
                Some(value) => {
                    let label = Label {
                        value,
                        entry: position,
                    };
                    self.labels.insert(target.into(), label);
                }
                None => {
                    self.labels.shift_remove(target);
                }
            }
        }
        self.has_assistant |= record.is_assistant_message();
        self.has_user |= matches!(
            record.facts.payload,
            Payload::Message {
                role: Role::User,
                ..
            }
        );
        self.leaf = Some(Leaf::after(&record.facts));
        self.records.push(record);
    }
}

/// The label a label entry sets, or `None` when it clears: the SessionManager keeps any truthy
/// value verbatim; the harness trims strings and clears on an empty result.
fn label_value(payload: &Payload, profile: Profile) -> Option<Arc<str>> {
    let Payload::Label(Some(raw)) = payload else {
        return None;
    };
    match profile {
        Profile::PiCli | Profile::Pi16 => {
            crate::format::entry::raw_truthy(raw).then(|| raw.clone())
        }
        Profile::Harness => {
            let value = crate::format::json::parse(raw).ok()?;
            let trimmed = value.as_js_str()?.trim_js();
            (!trimmed.is_empty()).then(|| {
                crate::format::json::JsValue::String(trimmed)
                    .stringify()
                    .into()
            })
        }
    }
}
