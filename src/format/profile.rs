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
    /// reading. The version the specification describes, and the default. Also accepted as
    /// `pi-0.82`.
    #[default]
    #[serde(rename = "pi-cli", alias = "pi-0.82")]
    PiCli,
    /// pi 1.6's SessionManager: 0.82.1's design plus `context_edit`, `usage`, `system` messages
    /// and compactions that carry the system prompt, and 1.6's listing order and discovery.
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

    /// Every profile, the default first.
    pub const ALL: [Profile; 3] = [Profile::PiCli, Profile::Pi16, Profile::Harness];

    /// A profile by name: [`Profile::name`], or the alias `pi-0.82` of `pi-cli` (the pi
    /// version that profile follows, beside `pi-1.6`).
    pub fn parse(name: &str) -> Option<Profile> {
        match name {
            "pi-cli" | "pi-0.82" => Some(Profile::PiCli),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_parse_on_the_wire_and_the_command_line() {
        for profile in Profile::ALL {
            assert_eq!(Profile::parse(profile.name()), Some(profile));
            let wire = serde_json::to_value(profile).unwrap();
            assert_eq!(wire, serde_json::json!(profile.name()));
            assert_eq!(serde_json::from_value::<Profile>(wire).unwrap(), profile);
        }
        assert_eq!(Profile::parse("pi-0.82"), Some(Profile::PiCli));
        let alias: Profile = serde_json::from_value(serde_json::json!("pi-0.82")).unwrap();
        assert_eq!(alias, Profile::PiCli);
        assert_eq!(Profile::parse("pi-1.6.0"), None);
        assert!(serde_json::from_value::<Profile>(serde_json::json!("pi")).is_err());
    }
}
