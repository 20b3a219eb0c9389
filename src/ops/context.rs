//! Which leaf a context is built at, and the context built there.

use crate::store::{Context, ErrorKind, Leaf, MessageFormat, Session, StoreError};

use super::error::OpError;

/// Which leaf to read at: the one way every door chooses it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum LeafChoice {
    /// The session's leaf.
    #[default]
    Current,
    /// Before the first entry (`leafId: null`, `--leaf null`).
    Root,
    /// This entry (it must be in the session).
    Entry(String),
}

impl LeafChoice {
    /// The wire's `leafId`: absent (the session's leaf), `null` (before the first entry), or an
    /// entry id.
    pub(crate) fn from_wire(requested: &Option<Option<String>>) -> LeafChoice {
        match requested {
            None => LeafChoice::Current,
            Some(None) => LeafChoice::Root,
            Some(Some(id)) => LeafChoice::Entry(id.clone()),
        }
    }

    /// The command line's `--leaf`: absent, `null`, or an entry id.
    pub(crate) fn from_flag(flag: Option<&str>) -> LeafChoice {
        match flag {
            None => LeafChoice::Current,
            Some("null") => LeafChoice::Root,
            Some(id) => LeafChoice::Entry(id.to_string()),
        }
    }
}

/// The leaf `choice` names in `session`: an entry that is not there is `entry_not_found`, and a
/// profile that refuses a recorded leaf naming no entry (the harness) refuses it here.
pub(crate) fn leaf(session: &Session, choice: &LeafChoice) -> Result<Leaf, StoreError> {
    let leaf = match choice {
        LeafChoice::Current => session.leaf().clone(),
        LeafChoice::Root => Leaf::Null,
        LeafChoice::Entry(id) => {
            if session.position(id).is_none() {
                return Err(StoreError::entry_not_found(id));
            }
            Leaf::Id(id.as_str().into())
        }
    };
    if choice == &LeafChoice::Current
        && session.profile().rules().recorded_leaf_must_exist
        && let Leaf::Id(id) = &leaf
        && session.position(id).is_none()
    {
        return Err(StoreError::new(
            ErrorKind::InvalidSession,
            format!("Entry {id} not found"),
        ));
    }
    Ok(leaf)
}

/// pi's `buildSessionContext()` at the chosen leaf.
pub(crate) fn build_context(
    session: &mut Session,
    choice: &LeafChoice,
    format: MessageFormat,
) -> Result<Context, OpError> {
    let leaf = leaf(session, choice)?;
    Ok(session.build_context(&leaf, format)?)
}

/// The positions of the entries pi's context is built from at the chosen leaf.
pub(crate) fn context_entries(
    session: &mut Session,
    choice: &LeafChoice,
) -> Result<Vec<u32>, OpError> {
    let leaf = leaf(session, choice)?;
    Ok(session.context_entries(&leaf)?)
}
