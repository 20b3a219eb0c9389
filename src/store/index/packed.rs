//! The fixed-size shapes an index is made of, laid out as they are persisted (little-endian,
//! no padding), so a persisted index is read straight into them.

use bytemuck::{Pod, Zeroable};

use crate::format::entry::{Kind, Role};

/// A text reference that names nothing (`None`, or a missing `parentId`/`targetId`).
pub(crate) const NONE: u32 = u32::MAX;
/// A reference field that is `null`.
pub(crate) const NULL: u32 = u32::MAX - 1;
/// A reference field that is neither a string nor `null`.
pub(crate) const INVALID: u32 = u32::MAX - 2;
/// Every text offset is below this.
pub(crate) const TEXT_LIMIT: u32 = INVALID;
/// An interned provider or model slot that names nothing.
pub(crate) const NO_NAME: u16 = u16::MAX;

/// `flags` bits.
pub(crate) const OBJECT: u8 = 1;
pub(crate) const HAS_TYPE: u8 = 2;
pub(crate) const HAS_TIMESTAMP: u8 = 4;
/// The body is in memory: `offset` is its position in the held bodies.
pub(crate) const HELD: u8 = 8;
/// `more` is the position of the entry's side record.
pub(crate) const EXTRA: u8 = 16;
/// `parent` is the position of the entry whose id it names (an earlier one), not a text.
pub(crate) const PARENT_AT: u8 = 32;
pub(crate) const FLAGS: u8 = OBJECT | HAS_TYPE | HAS_TIMESTAMP | HELD | EXTRA | PARENT_AT;

/// One entry: 40 bytes. What few entries have lives in an [`Extra`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct Packed {
    /// Where the body starts in the file, or which held body it is ([`HELD`]).
    pub(crate) offset: u64,
    /// `Date.parse(timestamp)`.
    pub(crate) timestamp: f64,
    /// 1-based physical line (0 while not written).
    pub(crate) line: u32,
    pub(crate) len: u32,
    /// Text offset of the id, or [`NONE`].
    pub(crate) id: u32,
    /// `parentId`: with [`PARENT_AT`], the position of the entry it named when read (so a
    /// walk to the root needs no lookup); else a text offset, [`NONE`], [`NULL`] or
    /// [`INVALID`].
    pub(crate) parent: u32,
    /// With [`EXTRA`], the side record's position; else for a message, its interned provider
    /// (low half) and model (high half).
    pub(crate) more: u32,
    pub(crate) kind: u8,
    pub(crate) role: u8,
    pub(crate) flags: u8,
    pub(crate) pad: u8,
}

/// The rare fields of one entry: 20 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct Extra {
    /// `targetId`, encoded as [`Packed::parent`] is.
    pub(crate) target: u32,
    /// Text offset: a message's provider, a thinking level, a model change's provider,
    /// `firstKeptEntryId`, a label or a session name.
    pub(crate) first: u32,
    /// Text offset: a message's model or a model change's model id.
    pub(crate) second: u32,
    /// Text offset of an unknown `type` string.
    pub(crate) other_type: u32,
    /// A compaction's `retainedTail` (1) and `systemMessage` (2) truthiness; a context
    /// edit's replacement (0 absent, 1 null, 2 a value).
    pub(crate) bits: u32,
}

impl Extra {
    pub(crate) const EMPTY: Extra = Extra {
        target: NONE,
        first: NONE,
        second: NONE,
        other_type: NONE,
        bits: 0,
    };
}

pub(crate) const KINDS: [Kind; 15] = [
    Kind::Session,
    Kind::Message,
    Kind::ThinkingLevelChange,
    Kind::ModelChange,
    Kind::ActiveToolsChange,
    Kind::Compaction,
    Kind::BranchSummary,
    Kind::Custom,
    Kind::CustomMessage,
    Kind::Label,
    Kind::SessionInfo,
    Kind::Leaf,
    Kind::ContextEdit,
    Kind::Usage,
    Kind::Other,
];

pub(crate) const ROLES: [Role; 5] = [
    Role::User,
    Role::Assistant,
    Role::ToolResult,
    Role::System,
    Role::Other,
];

pub(crate) fn tag_of<T: PartialEq>(table: &[T], value: &T) -> u8 {
    table.iter().position(|v| v == value).unwrap_or(0) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_forty_bytes_and_side_records_twenty() {
        assert_eq!(std::mem::size_of::<Packed>(), 40);
        assert_eq!(std::mem::align_of::<Packed>(), 8);
        assert_eq!(std::mem::size_of::<Extra>(), 20);
    }
}
