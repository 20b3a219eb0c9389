//! The in-memory index over a session file: per line, where its bytes are and what the tree and
//! context building need to know. Line bodies stay on disk until a query reads them back.
//!
//! Each entry is one fixed-size [`packed::Packed`] record (40 bytes); its texts live once in
//! one arena (a parent naming an existing entry reuses that entry's id), the rare payloads in
//! a side table, and the id map holds positions only. The same arrays are what a persisted
//! index holds, so reopening reads them back as they are (see `index_file`).

mod packed;
mod texts;

use std::sync::Arc;

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use indexmap::IndexMap;

use crate::format::entry::{EntryId, Kind, LineFacts, Payload, Ref, Replacement, Role};
use crate::format::profile::{FirstWrite, Profile};

use packed::{
    EXTRA, HAS_TIMESTAMP, HAS_TYPE, HELD, INVALID, NO_NAME, NONE, NULL, OBJECT, PARENT_AT,
};
pub(crate) use packed::{Extra, Packed};
use texts::Texts;
pub(crate) use texts::push_var;

/// Where a line's bytes are: owned as an entry is pushed, borrowed (`Body<&str>`) as the index
/// hands it out.
#[derive(Debug, Clone, Copy)]
pub enum Body<T = Box<str>> {
    /// In the session file.
    File { offset: u64, len: u32 },
    /// Only in memory: not written yet (lazy first write, in-memory sessions) or rewritten by a
    /// migration of a file opened read-only.
    Held(T),
}

/// The index cannot take one more entry: a line number, a text offset or the entry count
/// passes what a record holds (only sessions of billions of lines or gigabytes of ids).
#[derive(Debug)]
pub struct IndexFull;

impl From<texts::Full> for IndexFull {
    fn from(_: texts::Full) -> Self {
        IndexFull
    }
}

/// One entry of the session, as the index hands it out.
#[derive(Clone, Copy)]
pub struct Record<'a> {
    index: &'a Index,
    packed: &'a Packed,
}

impl<'a> Record<'a> {
    fn text(&self, at: u32) -> Option<&'a str> {
        (at != NONE).then(|| self.index.texts.get(at)).flatten()
    }

    fn reference(&self, at: u32) -> Ref<&'a str> {
        match at {
            NONE => Ref::Missing,
            NULL => Ref::Null,
            INVALID => Ref::Invalid,
            at => Ref::Id(self.index.texts.get(at).unwrap_or_default()),
        }
    }

    fn extra(&self) -> &'a Extra {
        match self.packed.flags & EXTRA {
            0 => &Extra::EMPTY,
            _ => self
                .index
                .extras
                .get(self.packed.more as usize)
                .unwrap_or(&Extra::EMPTY),
        }
    }

    /// `Date.parse(timestamp)`, for tree ordering.
    pub fn timestamp_millis(&self) -> f64 {
        self.packed.timestamp
    }

    /// The entry's kind (`Other` for a type this index does not know).
    pub(crate) fn kind(&self) -> Kind {
        packed::KINDS
            .get(self.packed.kind as usize)
            .copied()
            .unwrap_or(Kind::Other)
    }

    /// The entry's id, if it has one.
    pub fn id(&self) -> Option<&'a str> {
        self.text(self.packed.id)
    }

    /// The entry's `parentId`.
    pub(crate) fn parent(&self) -> Ref<&'a str> {
        match self.packed.flags & PARENT_AT {
            0 => self.reference(self.packed.parent),
            _ => Ref::Id(
                self.index
                    .record(self.packed.parent)
                    .id()
                    .unwrap_or_default(),
            ),
        }
    }

    /// The entry a `label` or `leaf` entry points at.
    pub(crate) fn target(&self) -> Ref<&'a str> {
        self.reference(self.extra().target)
    }

    /// 1-based physical line in the file (0 while not written).
    pub fn line(&self) -> u64 {
        u64::from(self.packed.line)
    }

    /// Where the entry's text is: in the file, or held in memory.
    pub fn body(&self) -> Body<&'a str> {
        match self.packed.flags & HELD {
            0 => Body::File {
                offset: self.packed.offset,
                len: self.packed.len,
            },
            _ => Body::Held(
                self.index
                    .held
                    .get(self.packed.offset as usize)
                    .map_or("", |text| text),
            ),
        }
    }

    /// Whether the line is a JSON object (pi keeps truthy non-objects as inert entries).
    pub fn is_object(&self) -> bool {
        self.packed.flags & OBJECT != 0
    }

    /// The `type` string as written (`None` when the line has none).
    pub fn type_name(&self) -> Option<&'a str> {
        self.kind()
            .type_name()
            .or_else(|| self.text(self.extra().other_type))
    }

    fn role(&self) -> Role {
        packed::ROLES
            .get(self.packed.role as usize)
            .copied()
            .unwrap_or(Role::Other)
    }

    /// Whether this is a `message` entry of an assistant.
    pub fn is_assistant_message(&self) -> bool {
        self.kind() == Kind::Message && self.role() == Role::Assistant
    }

    /// The kind-specific fields.
    pub(crate) fn payload(&self) -> Payload<&'a str, &'a str> {
        let extra = self.extra();
        let (first, second) = (self.text(extra.first), self.text(extra.second));
        match self.kind() {
            Kind::Message => {
                let (provider, model) = match self.packed.flags & EXTRA {
                    0 => (
                        self.index.interned(self.packed.more as u16),
                        self.index.interned((self.packed.more >> 16) as u16),
                    ),
                    _ => (first, second),
                };
                Payload::Message {
                    role: self.role(),
                    provider,
                    model,
                }
            }
            Kind::ThinkingLevelChange => Payload::ThinkingLevel(first),
            Kind::ModelChange => Payload::ModelChange {
                provider: first,
                model_id: second,
            },
            Kind::Compaction => Payload::Compaction {
                first_kept: first,
                retained_tail: extra.bits & 1 != 0,
                has_system_message: extra.bits & 2 != 0,
            },
            Kind::ContextEdit => Payload::ContextEdit(match extra.bits {
                0 => Replacement::Absent,
                1 => Replacement::Null,
                _ => Replacement::Value,
            }),
            Kind::Label => Payload::Label(first),
            Kind::SessionInfo => Payload::SessionInfo(first),
            _ => Payload::None,
        }
    }
}

impl std::fmt::Debug for Record<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Record")
            .field("kind", &self.kind())
            .field("id", &self.id())
            .field("parent", &self.parent())
            .field("line", &self.line())
            .finish()
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
    /// The entry with this id.
    Id(EntryId),
}

impl Leaf {
    /// The leaf entry's id, if it has one.
    pub fn id(&self) -> Option<&str> {
        match self {
            Leaf::Id(id) => Some(id),
            _ => None,
        }
    }

    fn after_entry(kind: Kind, id: Option<&str>, target: Ref<&str>) -> Leaf {
        let id = match (kind, id) {
            (Kind::Leaf, _) => target,
            (_, Some(id)) => Ref::Id(id),
            (_, None) => Ref::Missing,
        };
        match id {
            Ref::Null => Leaf::Null,
            Ref::Id(id) => Leaf::Id(id.into()),
            Ref::Missing | Ref::Invalid => Leaf::Undefined,
        }
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
        self.has_assistant
            || (profile.rules().first_write == FirstWrite::AtConversation && self.has_user)
    }
}

/// Positions keyed by the id their record names, through the arena: a duplicate id maps to
/// its last occurrence, as pi's `byId` does.
#[derive(Default)]
struct IdMap {
    table: HashTable<u32>,
    hasher: hashbrown::DefaultHashBuilder,
}

impl IdMap {
    fn hash(&self, id: &str) -> u64 {
        std::hash::BuildHasher::hash_one(&self.hasher, id)
    }

    fn get(&self, id: &str, records: &[Packed], texts: &Texts) -> Option<u32> {
        let named = |&p: &u32| texts.get(records[p as usize].id) == Some(id);
        self.table.find(self.hash(id), named).copied()
    }

    /// Maps the id of `records[position]` to it; `true` when the id named an earlier entry.
    fn insert(&mut self, id: &str, position: u32, records: &[Packed], texts: &Texts) -> bool {
        let hasher = &self.hasher;
        let rehash = |&p: &u32| {
            let id = texts.get(records[p as usize].id).unwrap_or_default();
            std::hash::BuildHasher::hash_one(hasher, id)
        };
        let named = |&p: &u32| texts.get(records[p as usize].id) == Some(id);
        match self
            .table
            .entry(std::hash::BuildHasher::hash_one(hasher, id), named, rehash)
        {
            Entry::Occupied(mut slot) => {
                *slot.get_mut() = position;
                true
            }
            Entry::Vacant(slot) => {
                slot.insert(position);
                false
            }
        }
    }
}

/// The arrays a persisted index holds (records up to a checkpoint, and all the rest).
pub struct Parts<'a> {
    pub records: &'a [Packed],
    pub extras: &'a [Extra],
    pub interned: &'a [u32],
    pub texts: &'a [u8],
}

/// Entries, the id map, the label cache and the leaf: everything derived from the lines.
#[derive(Default)]
pub struct Index {
    records: Vec<Packed>,
    /// The rare fields, named by [`Packed::more`].
    extras: Vec<Extra>,
    texts: Texts,
    /// Text offsets of each provider and model name once, named by messages' slots.
    interned: Vec<u32>,
    interned_by_text: HashTable<u16>,
    /// Bodies only in memory, named by [`Packed::offset`].
    held: Vec<Box<str>>,
    /// Entries whose body is held.
    held_entries: usize,
    by_id: IdMap,
    /// Whether an id repeats: a parent's position then is the lookup's, not the one read.
    repeated_ids: bool,
    /// Target id -> label, in pi's cache order (where a label was set after its last clear).
    pub labels: IndexMap<EntryId, Label>,
    pub leaf: Option<Leaf>,
    pub has_assistant: bool,
    /// Whether any entry is a user message (pi 1.6 writes the file at the first one).
    pub has_user: bool,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("entries", &self.records.len())
            .field("leaf", &self.leaf)
            .finish_non_exhaustive()
    }
}

impl Index {
    pub fn with_capacity(entries: usize) -> Index {
        Index {
            records: Vec::with_capacity(entries),
            by_id: IdMap {
                table: HashTable::with_capacity(entries),
                ..IdMap::default()
            },
            ..Index::default()
        }
    }

    pub fn get(&self, id: &str) -> Option<u32> {
        self.by_id.get(id, &self.records, &self.texts)
    }

    pub fn contains(&self, id: &str) -> bool {
        self.get(id).is_some()
    }

    /// Whether some id names more than one entry: an entry's id then may look up another.
    pub fn ids_repeat(&self) -> bool {
        self.repeated_ids
    }

    /// What [`Index::get`] gives for the `parentId` of the entry at `position`, known without
    /// a lookup when that parent was read before it and no id repeats; `None` when unknown.
    pub fn known_parent(&self, position: u32) -> Option<u32> {
        let packed = &self.records[position as usize];
        (packed.flags & PARENT_AT != 0 && !self.repeated_ids).then_some(packed.parent)
    }

    /// The position of the entry `position`'s `parentId` names, when it is a non-empty
    /// string naming one (the last with that id, as [`Index::get`] finds).
    pub fn parent_position(&self, position: u32) -> Option<u32> {
        if let Some(parent) = self.known_parent(position) {
            return self
                .record(parent)
                .id()
                .filter(|id| !id.is_empty())
                .map(|_| parent);
        }
        match self.record(position).parent() {
            Ref::Id(id) if !id.is_empty() => self.get(id),
            _ => None,
        }
    }

    pub fn record(&self, index: u32) -> Record<'_> {
        Record {
            index: self,
            packed: &self.records[index as usize],
        }
    }

    /// Every entry, in file order.
    pub fn records(&self) -> impl DoubleEndedIterator<Item = Record<'_>> + ExactSizeIterator {
        self.records.iter().map(move |packed| Record {
            index: self,
            packed,
        })
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    fn interned(&self, slot: u16) -> Option<&str> {
        let at = *self.interned.get(usize::from(slot))?;
        self.texts.get(at)
    }

    /// The slot of `name` among the interned names, added when new; `None` when every slot
    /// is taken (the entry then keeps its names in a side record).
    fn intern(&mut self, name: Option<&str>) -> Result<Option<u16>, IndexFull> {
        let Some(name) = name else {
            return Ok(Some(NO_NAME));
        };
        let (interned, texts) = (&self.interned, &self.texts);
        let hash = std::hash::BuildHasher::hash_one(&self.by_id.hasher, name);
        let named = |&slot: &u16| texts.get(interned[usize::from(slot)]) == Some(name);
        if let Some(&slot) = self.interned_by_text.find(hash, named) {
            return Ok(Some(slot));
        }
        let Ok(slot) = u16::try_from(self.interned.len()) else {
            return Ok(None);
        };
        if slot == NO_NAME {
            return Ok(None);
        }
        let at = self.texts.push(name)?;
        self.add_interned(hash, slot, at);
        Ok(Some(slot))
    }

    /// Files the name at text offset `at` (whose hash is `hash`) as interned `slot`.
    fn add_interned(&mut self, hash: u64, slot: u16, at: u32) {
        self.interned.push(at);
        let (interned, texts, hasher) = (&self.interned, &self.texts, &self.by_id.hasher);
        let rehash = |&slot: &u16| {
            let name = texts.get(interned[usize::from(slot)]).unwrap_or_default();
            std::hash::BuildHasher::hash_one(hasher, name)
        };
        self.interned_by_text.insert_unique(hash, slot, rehash);
    }

    fn text(&mut self, text: Option<&str>) -> Result<u32, IndexFull> {
        Ok(match text {
            Some(text) => self.texts.push(text)?,
            None => NONE,
        })
    }

    /// A reference as a record holds it: an id naming an entry takes that entry's id slot.
    fn reference(&mut self, reference: &Ref) -> Result<u32, IndexFull> {
        Ok(match reference {
            Ref::Missing => NONE,
            Ref::Null => NULL,
            Ref::Invalid => INVALID,
            Ref::Id(id) => match self.get(id) {
                Some(p) => self.records[p as usize].id,
                None => self.texts.push(id)?,
            },
        })
    }

    /// The side record `facts` need (`None` when every field fits in the record).
    fn extra_of(
        &mut self,
        facts: &LineFacts,
        target: u32,
        inline_names: bool,
    ) -> Result<Option<Extra>, IndexFull> {
        let mut extra = Extra {
            target,
            other_type: self.text(facts.other_type.as_deref())?,
            ..Extra::EMPTY
        };
        match &facts.payload {
            Payload::None => {}
            Payload::Message {
                provider, model, ..
            } => {
                // Names go in the record when nothing else needs a side record.
                if inline_names && target == NONE && extra.other_type == NONE {
                    return Ok(None);
                }
                extra.first = self.text(provider.as_deref())?;
                extra.second = self.text(model.as_deref())?;
            }
            Payload::ThinkingLevel(text) | Payload::Label(text) | Payload::SessionInfo(text) => {
                extra.first = self.text(text.as_deref())?;
            }
            Payload::ModelChange { provider, model_id } => {
                extra.first = self.text(provider.as_deref())?;
                extra.second = self.text(model_id.as_deref())?;
            }
            Payload::Compaction {
                first_kept,
                retained_tail,
                has_system_message,
            } => {
                extra.first = match first_kept {
                    Some(id) => self.reference(&Ref::Id(id.clone()))?,
                    None => NONE,
                };
                extra.bits = u32::from(*retained_tail) | u32::from(*has_system_message) << 1;
            }
            Payload::ContextEdit(replacement) => {
                extra.bits = match replacement {
                    Replacement::Absent => 0,
                    Replacement::Null => 1,
                    Replacement::Value => 2,
                };
            }
        }
        let plain = facts.payload == Payload::None && target == NONE && extra.other_type == NONE;
        Ok((!plain).then_some(extra))
    }

    /// Adds an entry, updating the id map, the label cache and the leaf as `profile` does.
    pub fn push(
        &mut self,
        facts: LineFacts,
        body: Body,
        line: u64,
        profile: Profile,
    ) -> Result<(), IndexFull> {
        let position = u32::try_from(self.records.len())
            .ok()
            .filter(|p| *p < u32::MAX)
            .ok_or(IndexFull)?;
        let line = u32::try_from(line).map_err(|_| IndexFull)?;
        let id = self.text(facts.id.as_deref())?;
        let (parent, parent_at) = match facts.parent.id().and_then(|p| self.get(p)) {
            Some(at) => (at, PARENT_AT),
            None => (self.reference(&facts.parent)?, 0),
        };
        let target = self.reference(&facts.target)?;
        let (role, names) = match &facts.payload {
            Payload::Message {
                role,
                provider,
                model,
            } => {
                let names = match (
                    self.intern(provider.as_deref())?,
                    self.intern(model.as_deref())?,
                ) {
                    (Some(p), Some(m)) => Some(u32::from(p) | u32::from(m) << 16),
                    _ => None,
                };
                (packed::tag_of(&packed::ROLES, role), names)
            }
            _ => (packed::tag_of(&packed::ROLES, &Role::Other), None),
        };
        let bit = |on: bool, flag: u8| if on { flag } else { 0 };
        let mut flags = bit(facts.is_object, OBJECT)
            | bit(facts.has_type, HAS_TYPE)
            | bit(facts.has_timestamp, HAS_TIMESTAMP)
            | parent_at;
        let mut more = names.unwrap_or(NONE);
        if let Some(extra) = self.extra_of(&facts, target, names.is_some())? {
            flags |= EXTRA;
            more = u32::try_from(self.extras.len()).map_err(|_| IndexFull)?;
            self.extras.push(extra);
        }
        let (offset, len) = match body {
            Body::File { offset, len } => (offset, len),
            Body::Held(text) => {
                flags |= HELD;
                self.held.push(text);
                self.held_entries += 1;
                (self.held.len() as u64 - 1, 0)
            }
        };
        self.records.push(Packed {
            offset,
            timestamp: facts.timestamp_millis,
            line,
            len,
            id,
            parent,
            more,
            kind: packed::tag_of(&packed::KINDS, &facts.kind),
            role,
            flags,
            pad: 0,
        });
        self.entered(position, profile);
        Ok(())
    }

    /// What an entry now in the records changes: the id map, the labels, the leaf.
    fn entered(&mut self, position: u32, profile: Profile) {
        let record = self.record(position);
        let (kind, target) = (record.kind(), record.target());
        let label = (kind == Kind::Label)
            .then(|| {
                let value = label_value(record.payload(), profile);
                target.id().map(|t| (EntryId::from(t), value))
            })
            .flatten();
        let message_role = (kind == Kind::Message).then(|| record.role());
        let leaf = Leaf::after_entry(kind, record.id(), target);
        let id = self.records[position as usize].id;
        if let Some(id) = (id != NONE).then(|| self.texts.get(id)).flatten() {
            self.repeated_ids |= self.by_id.insert(id, position, &self.records, &self.texts);
        }
        match label {
            Some((target, Some(value))) => {
                let label = Label {
                    value,
                    entry: position,
                };
                self.labels.insert(target, label);
            }
            Some((target, None)) => {
                self.labels.shift_remove(&target);
            }
            None => {}
        }
        self.has_assistant |= message_role == Some(Role::Assistant);
        self.has_user |= message_role == Some(Role::User);
        self.leaf = Some(leaf);
    }

    /// Records that entry `position`, held in memory, is now on `line` of the file at
    /// `offset`; once no entry is held, the held bodies are freed.
    pub fn set_written(&mut self, position: u32, offset: u64, len: u32, line: u64) {
        let record = &mut self.records[position as usize];
        if record.flags & HELD != 0 {
            self.held_entries -= 1;
        }
        record.flags &= !HELD;
        record.offset = offset;
        record.len = len;
        record.line = u32::try_from(line).unwrap_or(u32::MAX);
        if self.held_entries == 0 {
            self.held = Vec::new();
        }
    }

    /// The arrays a persisted index of the first `records` entries holds; `None` when one of
    /// them is only in memory.
    pub fn parts(&self, records: usize) -> Option<Parts<'_>> {
        let records = self.records.get(..records)?;
        if self.held_entries > 0 && records.iter().any(|r| r.flags & HELD != 0) {
            return None;
        }
        Some(Parts {
            records,
            extras: &self.extras,
            interned: &self.interned,
            texts: self.texts.as_bytes(),
        })
    }

    /// The index a persisted one holds, after checking that every reference in it names
    /// what it must (`Err` says what does not): the id map, labels and leaf are rebuilt.
    pub fn from_parts(
        records: Vec<Packed>,
        extras: Vec<Extra>,
        interned: Vec<u32>,
        texts: Vec<u8>,
        profile: Profile,
    ) -> Result<Index, &'static str> {
        let texts = Texts::from_bytes(texts);
        check_parts(&records, &extras, &interned, &texts)?;
        let mut index = Index {
            extras,
            texts,
            ..Index::with_capacity(records.len())
        };
        index.records = records;
        index.interned_by_text = HashTable::with_capacity(interned.len());
        for at in interned {
            let slot = index.interned.len() as u16;
            let name = index.texts.get(at).unwrap_or_default();
            let hash = std::hash::BuildHasher::hash_one(&index.by_id.hasher, name);
            index.add_interned(hash, slot, at);
        }
        for position in 0..index.records.len() as u32 {
            index.entered(position, profile);
        }
        Ok(index)
    }

    /// Gives back what the arrays' growth reserved beyond their contents (after a full read).
    pub fn shrink_to_fit(&mut self) {
        self.records.shrink_to_fit();
        self.extras.shrink_to_fit();
        self.texts.shrink_to_fit();
    }

    /// Bytes the index holds on the heap (records, side records, texts, the id map, the
    /// interned names, held bodies, labels), for measuring.
    pub fn heap_bytes(&self) -> usize {
        let labels: usize = self
            .labels
            .iter()
            .map(|(_, l)| std::mem::size_of::<(EntryId, Label)>() + l.value.len() + 16)
            .sum();
        self.records.capacity() * std::mem::size_of::<Packed>()
            + self.extras.capacity() * std::mem::size_of::<Extra>()
            + self.texts.allocation_size()
            + self.interned.capacity() * 4
            + self.interned_by_text.allocation_size()
            + self.by_id.table.allocation_size()
            + self.held.capacity() * std::mem::size_of::<Box<str>>()
            + self.held.iter().map(|h| h.len()).sum::<usize>()
            + labels
    }
}

/// Whether the arrays of a persisted index hold together: every text offset names a whole
/// UTF-8 text, every slot and side-record position exists, every parent position is earlier.
fn check_parts(
    records: &[Packed],
    extras: &[Extra],
    interned: &[u32],
    texts: &Texts,
) -> Result<(), &'static str> {
    let text_ok = |at: u32| at == NONE || texts.get(at).is_some();
    let ref_ok = |at: u32| matches!(at, NULL | INVALID) || text_ok(at);
    if interned.len() > usize::from(NO_NAME)
        || !interned.iter().all(|&at| at != NONE && text_ok(at))
    {
        return Err("an interned name");
    }
    if !extras
        .iter()
        .all(|e| ref_ok(e.target) && text_ok(e.first) && text_ok(e.second) && text_ok(e.other_type))
    {
        return Err("a side record");
    }
    let slot_ok = |slot: u32| slot == u32::from(NO_NAME) || (slot as usize) < interned.len();
    for (position, record) in records.iter().enumerate() {
        let more_ok = match (
            record.flags & EXTRA,
            packed::KINDS.get(record.kind as usize),
        ) {
            (_, None) => false,
            (0, Some(Kind::Message)) => slot_ok(record.more & 0xffff) && slot_ok(record.more >> 16),
            (0, _) => record.more == NONE,
            _ => (record.more as usize) < extras.len(),
        };
        let parent_ok = match record.flags & PARENT_AT {
            0 => ref_ok(record.parent),
            _ => (record.parent as usize) < position,
        };
        if !more_ok
            || !text_ok(record.id)
            || !parent_ok
            || record.flags & !packed::FLAGS != 0
            || record.flags & HELD != 0
            || usize::from(record.role) >= packed::ROLES.len()
        {
            return Err("a record");
        }
    }
    Ok(())
}

/// The label a label entry sets, or `None` when it clears: the SessionManager keeps any truthy
/// value verbatim; the harness trims strings and clears on an empty result.
fn label_value(payload: Payload<&str, &str>, profile: Profile) -> Option<Arc<str>> {
    let Payload::Label(Some(raw)) = payload else {
        return None;
    };
    match profile.is_session_manager() {
        true => crate::format::entry::raw_truthy(raw).then(|| raw.into()),
        false => {
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

impl From<IndexFull> for super::error::StoreError {
    fn from(_: IndexFull) -> Self {
        super::error::StoreError::new(
            super::error::ErrorKind::InvalidSession,
            "the session is beyond what the index holds (over 4 billion lines or entries, or \
             4 GiB of ids)",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::entry::{LineRead, read_line};

    const LINES: &[&str] = &[
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"assistant","provider":"p","model":"m"}}"#,
        r#"{"type":"message","id":"b2","parentId":"a1","timestamp":"t","message":{"role":"user"}}"#,
        r#"{"type":"message","id":"c3","parentId":"b2","targetId":"a1","message":{"role":"assistant","provider":"p","model":"m2"}}"#,
        r#"{"type":"label","id":"d4","parentId":"c3","timestamp":"t","targetId":"a1","label":"x"}"#,
        r#"{"type":"compaction","id":"e5","parentId":"gone","retainedTail":[],"firstKeptEntryId":"b2","systemMessage":{}}"#,
        r#"{"type":"compaction","id":"e6","parentId":5,"firstKeptEntryId":"nowhere"}"#,
        r#"{"type":"context_edit","id":"f6","targetId":"b2","replacement":null}"#,
        r#"{"type":"context_edit","id":"f7","targetId":null,"replacement":1}"#,
        r#"{"type":"thinking_level_change","id":"g7","thinkingLevel":"high"}"#,
        r#"{"type":"model_change","id":"h8","provider":"q","modelId":7}"#,
        r#"{"type":"session_info","id":"i9","name":"a name"}"#,
        r#"{"type":"weird","id":"j10","parentId":"a1"}"#,
        r#"{"id":"a1","timestamp":""}"#,
        r#"[1,2]"#,
        r#"{"type":"leaf","id":"k11","targetId":"b2"}"#,
    ];

    fn facts(line: &str) -> LineFacts {
        match read_line(line.as_bytes()) {
            LineRead::Entry(facts) => facts,
            other => panic!("{line}: {other:?}"),
        }
    }

    /// The facts a record gives back, rebuilt from its accessors.
    fn facts_of(record: Record<'_>) -> LineFacts {
        let owned = |text: Option<&str>| text.map(Arc::from);
        let payload = match record.payload() {
            Payload::None => Payload::None,
            Payload::Message {
                role,
                provider,
                model,
            } => Payload::Message {
                role,
                provider: owned(provider),
                model: owned(model),
            },
            Payload::ThinkingLevel(level) => Payload::ThinkingLevel(owned(level)),
            Payload::ModelChange { provider, model_id } => Payload::ModelChange {
                provider: owned(provider),
                model_id: owned(model_id),
            },
            Payload::Compaction {
                first_kept,
                retained_tail,
                has_system_message,
            } => Payload::Compaction {
                first_kept: first_kept.map(EntryId::from),
                retained_tail,
                has_system_message,
            },
            Payload::ContextEdit(replacement) => Payload::ContextEdit(replacement),
            Payload::Label(label) => Payload::Label(owned(label)),
            Payload::SessionInfo(name) => Payload::SessionInfo(owned(name)),
        };
        let flags = record.packed.flags;
        LineFacts {
            kind: record.kind(),
            other_type: (record.kind() == Kind::Other)
                .then(|| record.type_name().map(Box::from))
                .flatten(),
            is_object: record.is_object(),
            has_type: flags & HAS_TYPE != 0,
            id: record.id().map(EntryId::from),
            parent: record.parent().to_owned(),
            has_timestamp: flags & HAS_TIMESTAMP != 0,
            timestamp_millis: record.timestamp_millis(),
            target: record.target().to_owned(),
            payload,
        }
    }

    fn same(a: &LineFacts, b: &LineFacts) -> bool {
        // NaN timestamps (unparsable) compare equal.
        let (mut a, mut b) = (a.clone(), b.clone());
        if a.timestamp_millis.is_nan() && b.timestamp_millis.is_nan() {
            (a.timestamp_millis, b.timestamp_millis) = (0.0, 0.0);
        }
        a == b
    }

    fn indexed() -> Index {
        let mut index = Index::default();
        for (i, line) in LINES.iter().enumerate() {
            let body = Body::File {
                offset: i as u64 * 1000,
                len: line.len() as u32,
            };
            index
                .push(facts(line), body, i as u64 + 2, Profile::PiCli)
                .unwrap();
        }
        index
    }

    fn assert_reads_back(index: &Index) {
        for (i, line) in LINES.iter().enumerate() {
            let record = index.record(i as u32);
            let expected = facts(line);
            let got = facts_of(record);
            assert!(same(&expected, &got), "{line}\n{expected:?}\n{got:?}");
            assert_eq!(record.line(), i as u64 + 2);
            assert!(matches!(record.body(), Body::File { offset, len }
                if offset == i as u64 * 1000 && len == line.len() as u32));
        }
    }

    #[test]
    fn every_field_reads_back_as_parsed() {
        let index = indexed();
        assert_reads_back(&index);
        // A duplicate id maps to its last occurrence; parents naming an entry share its slot.
        assert_eq!(index.get("a1"), Some(12));
        assert_eq!(index.get("b2"), Some(1));
        assert_eq!(index.get("gone"), None);
        assert_eq!(
            index.records[2].parent, 1,
            "c3's parent is b2, read as its position"
        );
        assert_ne!(index.records[2].flags & PARENT_AT, 0);
        assert_eq!(index.parent_position(2), Some(1));
        // b2 named a1 when a1 was entry 0; a1 repeats at 12, which the lookup finds now.
        assert_eq!(index.parent_position(1), Some(12));
        assert_eq!(index.parent_position(4), None, "a parent naming no entry");
        assert_eq!(index.parent_position(0), None, "a null parent");
        assert_eq!(index.labels.get("a1").map(|l| &*l.value), Some("\"x\""));
        assert_eq!(index.leaf, Some(Leaf::Id("b2".into())));
        assert!(index.has_assistant && index.has_user);
        // Two providers and models named by three messages: "p" is kept once.
        assert_eq!(index.interned.len(), 3);
    }

    #[test]
    fn the_persisted_arrays_rebuild_the_same_index() {
        let index = indexed();
        let parts = index.parts(index.len()).unwrap();
        let rebuilt = Index::from_parts(
            parts.records.to_vec(),
            parts.extras.to_vec(),
            parts.interned.to_vec(),
            parts.texts.to_vec(),
            Profile::PiCli,
        )
        .unwrap();
        assert_reads_back(&rebuilt);
        assert_eq!(rebuilt.get("a1"), Some(12));
        assert_eq!(
            rebuilt.parent_position(1),
            Some(12),
            "the repeated id is seen again"
        );
        assert_eq!(rebuilt.labels, index.labels);
        assert_eq!(rebuilt.leaf, index.leaf);
        // Damage is refused, never misread.
        let damaged = |damage: fn(&mut Packed)| {
            let mut records = parts.records.to_vec();
            damage(&mut records[3]);
            let (extras, interned) = (parts.extras.to_vec(), parts.interned.to_vec());
            Index::from_parts(
                records,
                extras,
                interned,
                parts.texts.to_vec(),
                Profile::PiCli,
            )
        };
        assert!(
            damaged(|r| r.id = u32::MAX - 3).is_err(),
            "an id past the texts"
        );
        assert!(
            damaged(|r| r.more = 999).is_err(),
            "a side record that is not there"
        );
        assert!(
            damaged(|r| r.parent = 3).is_err(),
            "a parent that is not earlier"
        );
        assert!(damaged(|r| r.kind = 15).is_err(), "an unknown kind");
        assert!(damaged(|r| r.flags |= HELD).is_err(), "a held body");
    }

    #[test]
    fn held_bodies_are_freed_once_written_and_never_persisted() {
        let mut index = Index::default();
        let line = LINES[1];
        index
            .push(facts(line), Body::Held(line.into()), 0, Profile::PiCli)
            .unwrap();
        assert!(matches!(index.record(0).body(), Body::Held(text) if text == line));
        assert!(index.parts(1).is_none());
        index.set_written(0, 10, line.len() as u32, 2);
        assert!(matches!(
            index.record(0).body(),
            Body::File { offset: 10, .. }
        ));
        assert!(index.held.is_empty());
        assert!(index.parts(1).is_some());
    }

    #[test]
    fn an_entry_costs_under_64_bytes() {
        let mut index = Index::default();
        let entries = 100_000u32;
        for i in 0..entries {
            let parent = match i {
                0 => "null".to_string(),
                _ => format!("\"{:08x}\"", i - 1),
            };
            let line = format!(
                r#"{{"type":"message","id":"{i:08x}","parentId":{parent},"timestamp":"2025-01-01T00:00:00.000Z","message":{{"role":"assistant","provider":"anthropic","model":"claude"}}}}"#
            );
            let body = Body::File {
                offset: u64::from(i) * 200,
                len: 199,
            };
            index
                .push(facts(&line), body, u64::from(i) + 2, Profile::PiCli)
                .unwrap();
        }
        index.shrink_to_fit();
        assert_eq!(index.parent_position(5), Some(4));
        let per_entry = index.heap_bytes() as f64 / f64::from(entries);
        eprintln!("{per_entry:.1} bytes per entry");
        assert!(per_entry <= 64.0, "{per_entry:.1} bytes per entry");
    }
}
