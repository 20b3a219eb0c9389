//! Entry ids, session ids and timestamps, from the system or from a seed.
//!
//! pi makes entry ids from random UUIDs (the SessionManager takes the first 8 hex digits of a
//! v4, the harness the last 8 of a v7) and session ids as UUIDv7. A deterministic source (a
//! seeded generator and a clock that starts at a given instant and advances 1 ms per reading)
//! makes scripted runs reproducible byte for byte.

use std::sync::Mutex;

use rand::{RngCore, SeedableRng, rngs::StdRng};
use uuid::{Builder, Uuid};

use super::time::iso_from_millis;

/// Where randomness and time come from.
#[derive(Debug)]
pub struct IdSource {
    state: Mutex<State>,
}

#[derive(Debug)]
enum State {
    System,
    Seeded { rng: Box<StdRng>, next_millis: i64 },
}

/// Which generator a profile uses for entry ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryIdStyle {
    /// `randomUUID().slice(0, 8)` (SessionManager).
    V4Prefix,
    /// `uuidv7().slice(-8)` (harness).
    V7Suffix,
}

impl Default for IdSource {
    fn default() -> Self {
        IdSource::system()
    }
}

impl IdSource {
    /// Random ids (the OS's generator) and the system clock, as pi has them.
    pub fn system() -> Self {
        IdSource {
            state: Mutex::new(State::System),
        }
    }

    /// Reproducible ids, and a clock starting at `start_millis` that advances 1 ms per reading.
    pub fn deterministic(seed: u64, start_millis: i64) -> Self {
        IdSource {
            state: Mutex::new(State::Seeded {
                rng: Box::new(StdRng::seed_from_u64(seed)),
                next_millis: start_millis,
            }),
        }
    }

    /// Whether ids and times come from a seed (tests and transcripts).
    pub fn is_deterministic(&self) -> bool {
        matches!(*self.lock(), State::Seeded { .. })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state holds no invariant a panic could break.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Milliseconds since the epoch.
    pub fn now_millis(&self) -> i64 {
        match &mut *self.lock() {
            State::System => chrono::Utc::now().timestamp_millis(),
            State::Seeded { next_millis, .. } => {
                let now = *next_millis;
                *next_millis += 1;
                now
            }
        }
    }

    /// `new Date().toISOString()`.
    pub fn now_iso(&self) -> String {
        iso_from_millis(self.now_millis())
    }

    fn random_bytes(&self) -> [u8; 16] {
        let mut bytes = [0u8; 16];
        match &mut *self.lock() {
            State::System => rand::rng().fill_bytes(&mut bytes),
            State::Seeded { rng, .. } => rng.fill_bytes(&mut bytes),
        }
        bytes
    }

    /// A random (version 4) UUID.
    pub fn uuid_v4(&self) -> Uuid {
        Builder::from_random_bytes(self.random_bytes()).into_uuid()
    }

    /// A time-ordered (version 7) UUID, its time from this source's clock.
    pub fn uuid_v7(&self) -> Uuid {
        let millis = self.now_millis().max(0) as u64;
        let random = self.random_bytes();
        let mut tail = [0u8; 10];
        tail.copy_from_slice(&random[..10]);
        Builder::from_unix_timestamp_millis(millis, &tail).into_uuid()
    }

    /// A new session id (UUIDv7, as both pi implementations make them).
    pub fn session_id(&self) -> String {
        self.uuid_v7().hyphenated().to_string()
    }

    /// A new entry id not in use: up to 100 tries of 8 hex digits, then a whole UUID, as pi.
    pub fn entry_id(&self, style: EntryIdStyle, in_use: impl Fn(&str) -> bool) -> String {
        let make = || match style {
            EntryIdStyle::V4Prefix => self.uuid_v4().hyphenated().to_string(),
            EntryIdStyle::V7Suffix => self.uuid_v7().hyphenated().to_string(),
        };
        for _ in 0..100 {
            let full = make();
            let short = match style {
                EntryIdStyle::V4Prefix => &full[..8],
                EntryIdStyle::V7Suffix => &full[full.len() - 8..],
            };
            if !in_use(short) {
                return short.to_string();
            }
        }
        make()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_sources_repeat_themselves() {
        let a = IdSource::deterministic(7, 1_700_000_000_000);
        let b = IdSource::deterministic(7, 1_700_000_000_000);
        for _ in 0..3 {
            assert_eq!(
                a.entry_id(EntryIdStyle::V4Prefix, |_| false),
                b.entry_id(EntryIdStyle::V4Prefix, |_| false)
            );
            assert_eq!(a.session_id(), b.session_id());
        }
        assert_eq!(a.now_iso(), "2023-11-14T22:13:20.003Z");
        assert_eq!(a.now_iso(), "2023-11-14T22:13:20.004Z");
    }

    #[test]
    fn entry_ids_are_short_hex_and_avoid_ids_in_use() {
        let source = IdSource::system();
        let id = source.entry_id(EntryIdStyle::V7Suffix, |_| false);
        assert_eq!(id.len(), 8);
        assert!(
            id.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        let long = source.entry_id(EntryIdStyle::V4Prefix, |_| true);
        assert_eq!(long.len(), 36);
        assert_eq!(&long[14..15], "4");
    }
}
