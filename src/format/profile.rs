//! Which pi a session reads and writes like: the one switch every layer dispatches on.

/// Which pi implementation a session reads and writes like.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub enum Profile {
    /// pi 0.82.1's SessionManager (the pi CLI): leaf in memory, lazy first write, lenient
    /// reading. The version the specification describes, and the default.
    #[default]
    #[serde(rename = "pi-cli")]
    PiCli,
    /// pi 1.6's SessionManager: 0.82.1's design plus `context_edit`, `usage`, `system` messages
    /// and compactions that carry the system prompt.
    #[serde(rename = "pi-1.6")]
    Pi16,
    /// pi-agent-core 0.82.1's harness: `leaf` entries, immediate writes, strict reading.
    #[serde(rename = "harness")]
    Harness,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::PiCli => "pi-cli",
            Profile::Pi16 => "pi-1.6",
            Profile::Harness => "harness",
        }
    }

    pub fn parse(name: &str) -> Option<Profile> {
        match name {
            "pi-cli" => Some(Profile::PiCli),
            "pi-1.6" => Some(Profile::Pi16),
            "harness" => Some(Profile::Harness),
            _ => None,
        }
    }

    /// pi's SessionManager (either version), as opposed to pi-agent-core's harness: the
    /// distinction most rules follow (lenient reading, lazy first write, the leaf in memory).
    pub fn is_session_manager(self) -> bool {
        matches!(self, Profile::PiCli | Profile::Pi16)
    }
}
