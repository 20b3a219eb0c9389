//! Which pi a session reads and writes like, and what that means: [`Profile`] names a pi,
//! [`Rules`] says in one table what each one does differently. A rule is read where it applies
//! (`session.profile().rules().listing`); adding a pi version is one more [`Rules`] value here
//! and its tests, plus a `match` only where a rule cannot be named (a quirk of one pi's code).

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
    /// The profile's name as the command line and the protocol spell it (`pi-cli`, ...).
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
        self.rules().session_manager
    }

    /// The profile that reads what only pi 1.6 writes: the one a warning about such lines
    /// points to.
    pub fn reading_pi16_entries() -> Profile {
        Profile::ALL
            .into_iter()
            .find(|p| p.rules().pi16_entries)
            .unwrap_or_default()
    }

    /// What this profile does differently, in one place.
    pub const fn rules(self) -> &'static Rules {
        match self {
            Profile::PiCli => &PI_CLI,
            Profile::Pi16 => &PI_16,
            Profile::Harness => &HARNESS,
        }
    }
}

/// Every way the profiles differ that a caller can ask about by name. Each member says which
/// pi code it follows; the three tables below are the whole answer to "what is pi-1.6?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// The pi package and version this profile follows (`initialize`'s `compaction` map).
    pub follows: &'static str,
    /// pi's SessionManager (lenient reading, lazy first write, the leaf kept in memory) rather
    /// than pi-agent-core's harness (strict reading, immediate writes, `leaf` entries).
    pub session_manager: bool,
    /// ListingRule: how `list`/`listAll` read a sessions directory and order its rows.
    pub listing: ListingRule,
    /// `findById`: how a session file is found from its id (`None`: this pi has none).
    pub find_by_id: Option<FindById>,
    /// pi's `SessionManager.forkFrom` (the `--fork` flag) exists in this pi.
    pub fork_from: bool,
    /// A fork that drops a label a compaction's `firstKeptEntryId` names moves that id to the
    /// next entry kept after the label (pi 1.6); pi 0.82.1 leaves it dangling.
    pub fork_repoints_first_kept: bool,
    /// Whose compaction code prepares and writes compactions.
    pub compaction: Compaction,
    /// The context usage reports tokens and percent of the window (pi's `getContextUsage`);
    /// the harness has no such call.
    pub context_usage_percent: bool,
    /// The recorded leaf must name an entry of the file (the harness refuses one that does not).
    pub recorded_leaf_must_exist: bool,
    /// `settings.json` is read with a byte-order mark stripped (pi 1.6).
    pub settings_strip_bom: bool,
    /// A `compaction` token setting that is not a non-negative safe integer is an error (pi
    /// 1.6 throws); pi 0.82.1 takes any number.
    pub settings_compaction_integers: bool,
    /// Reads and writes what only pi 1.6 writes (`context_edit` and `usage` entries, `system`
    /// messages); the others warn of such lines (and listed files holding them).
    pub pi16_entries: bool,
    /// When pi's SessionManager writes a new session's file (the harness writes at once).
    pub first_write: FirstWrite,
    /// An open for writing ends a last line that lacks its newline (pi 1.6's repair on load).
    pub repairs_torn_tail: bool,
    /// `--continue` reads file times to the nanosecond and gives up at an unreadable file (pi
    /// 1.6), rather than to the millisecond, skipping it (pi 0.82.1).
    pub recent_exact_times: bool,
    /// An explicit sessions directory is "custom" (filtered by cwd) when it resolves elsewhere
    /// than the default (pi 1.6), rather than when it is spelled differently (pi 0.82.1).
    pub custom_dir_resolved: bool,
    /// The refusal of a fork of a session pi has not written yet.
    pub not_saved_message: &'static str,
    /// A compaction that keeps nothing points at itself (pi 1.6's `firstKeptEntryId ?? id`).
    pub compaction_keeps_itself: bool,
    /// How entries become context messages (`buildSessionContext`).
    pub context: ContextRules,
    /// How a navigation (`navigateTree`) finds and summarizes the abandoned branch.
    pub tree: TreeRules,
}

/// How a path's entries become context messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextRules {
    /// A message or custom message without content reads as one with `[]` (SessionManager's
    /// repair); the harness passes it on as it is.
    pub repairs_null_content: bool,
    /// `system` messages are context messages, a missing content read as `""` (pi 1.6).
    pub system_messages: bool,
    /// A compaction carries the system prompt: its `systemMessage` comes before its summary and
    /// the kept range's own system messages are dropped (pi 1.6).
    pub compaction_carries_system_prompt: bool,
    /// A compaction is a checkpoint (pi-agent-core): its `retainedTail` follows its summary, and
    /// the entries from `firstKeptEntryId` are kept only when it has no tail and names one.
    pub checkpoint_compactions: bool,
}

/// How a navigation finds and summarizes the branch it leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeRules {
    /// The paths compared follow the recorded `leaf` entries, and an entry missing on the
    /// abandoned path is an error (the harness); pi's SessionManager follows parent links and
    /// stops at a missing entry.
    pub checkpoint_paths: bool,
    /// The hook's summary is taken even when no summary was asked for (the harness).
    pub hook_summary_unasked: bool,
    /// The outcome always says whether the summary came from an extension (`false` without
    /// one: the harness); pi's SessionManager says so only when there is a summary.
    pub always_reports_from_extension: bool,
    /// The branch summary's budget keeps the summarizer's default reserve, whatever is asked
    /// (the harness passes none).
    pub summary_default_reserve: bool,
    /// A branch summary's `fromId` is the leaf it leaves (pi 1.6: `this.leafId ?? "root"`, read
    /// before the move); pi 0.82.1 records where the branch goes (`branchFromId ?? "root"`).
    pub summary_from_left_leaf: bool,
}

/// When a new session's file is first written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)] // each names the moment: at the assistant, at the conversation, at once
pub enum FirstWrite {
    /// pi 0.82.1: at the first assistant message.
    AtAssistant,
    /// pi 1.6: at the first user or assistant message (`_hasConversation`).
    AtConversation,
    /// The harness: the header at creation, every entry as it comes.
    AtOnce,
}

/// How a sessions directory is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListingRule {
    /// pi's `SessionInfo` rows, newest activity first; `ties` breaks equal times.
    SessionInfo { ties: ListTies, follow_links: bool },
    /// pi-agent-core's `JsonlSessionRepo.list`: header fields only, newest `createdAt` first.
    HarnessHeaders,
}

/// How equal activity times are ordered in a `SessionInfo` listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListTies {
    /// pi 0.82.1: the order files were read in (a stable sort).
    ReadOrder,
    /// pi 1.6: file name descending; over the sessions root, file time then name.
    NameDescending,
}

/// How `findById` finds a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindById {
    /// pi 1.6's `findById`: the first file in name order whose header has the id.
    HeaderScan,
    /// pi 0.82.1 (no `findById`): the newest listed session with the id.
    NewestListed,
}

/// Whose compaction code a profile follows (one dispatch in `ops::compact`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compaction {
    /// pi-coding-agent 0.82.1's `compaction.ts`.
    PiCli082,
    /// pi 1.6's compaction (entries carry the system prompt).
    Pi16,
    /// pi-agent-core's harness compaction (`retainedTail`).
    Harness,
}

const PI_CLI: Rules = Rules {
    follows: "pi-coding-agent 0.82.1",
    session_manager: true,
    listing: ListingRule::SessionInfo {
        ties: ListTies::ReadOrder,
        follow_links: false,
    },
    find_by_id: Some(FindById::NewestListed),
    fork_from: true,
    fork_repoints_first_kept: false,
    compaction: Compaction::PiCli082,
    context_usage_percent: true,
    recorded_leaf_must_exist: false,
    settings_strip_bom: false,
    settings_compaction_integers: false,
    pi16_entries: false,
    first_write: FirstWrite::AtAssistant,
    repairs_torn_tail: false,
    recent_exact_times: false,
    custom_dir_resolved: false,
    not_saved_message: NOT_SAVED,
    compaction_keeps_itself: false,
    context: ContextRules {
        repairs_null_content: true,
        system_messages: false,
        compaction_carries_system_prompt: false,
        checkpoint_compactions: false,
    },
    tree: TreeRules {
        checkpoint_paths: false,
        hook_summary_unasked: false,
        always_reports_from_extension: false,
        summary_default_reserve: false,
        summary_from_left_leaf: false,
    },
};

/// pi 0.82.1's refusal to fork a session it has not written yet (the harness's here too).
const NOT_SAVED: &str = "This session has not been saved yet. Wait for the first assistant response before cloning or forking it.";

const PI_16: Rules = Rules {
    follows: "pi-coding-agent 1.6.0",
    fork_repoints_first_kept: true,
    listing: ListingRule::SessionInfo {
        ties: ListTies::NameDescending,
        follow_links: true,
    },
    find_by_id: Some(FindById::HeaderScan),
    compaction: Compaction::Pi16,
    settings_strip_bom: true,
    settings_compaction_integers: true,
    pi16_entries: true,
    first_write: FirstWrite::AtConversation,
    repairs_torn_tail: true,
    recent_exact_times: true,
    custom_dir_resolved: true,
    // pi 1.6 writes a session at its first user message.
    not_saved_message: "This session has not been saved yet. Send a message before cloning or forking it.",
    compaction_keeps_itself: true,
    context: ContextRules {
        system_messages: true,
        compaction_carries_system_prompt: true,
        ..PI_CLI.context
    },
    tree: TreeRules {
        summary_from_left_leaf: true,
        ..PI_CLI.tree
    },
    ..PI_CLI
};

const HARNESS: Rules = Rules {
    follows: "pi-agent-core 0.82.1",
    session_manager: false,
    listing: ListingRule::HarnessHeaders,
    find_by_id: None,
    fork_from: false,
    compaction: Compaction::Harness,
    context_usage_percent: false,
    recorded_leaf_must_exist: true,
    first_write: FirstWrite::AtOnce,
    context: ContextRules {
        repairs_null_content: false,
        checkpoint_compactions: true,
        ..PI_CLI.context
    },
    tree: TreeRules {
        checkpoint_paths: true,
        hook_summary_unasked: true,
        always_reports_from_extension: true,
        summary_default_reserve: true,
        summary_from_left_leaf: false,
    },
    ..PI_CLI
};

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

    #[test]
    fn each_profile_is_one_table_of_rules() {
        // The SessionManager profiles and the harness part where the README says they do.
        for profile in Profile::ALL {
            let rules = profile.rules();
            let manager = profile.is_session_manager();
            assert_eq!(rules.fork_from, manager, "{profile:?}");
            assert_eq!(rules.find_by_id.is_some(), manager, "{profile:?}");
            assert_eq!(rules.context_usage_percent, manager, "{profile:?}");
            assert_eq!(rules.recorded_leaf_must_exist, !manager, "{profile:?}");
            assert_eq!(
                rules.listing == ListingRule::HarnessHeaders,
                !manager,
                "{profile:?}"
            );
            assert_eq!(rules.first_write == FirstWrite::AtOnce, !manager);
        }
        // pi 1.6 is pi 0.82.1 with its own format, listing order and findById.
        let (cli, pi16) = (Profile::PiCli.rules(), Profile::Pi16.rules());
        assert!(pi16.pi16_entries && !cli.pi16_entries);
        assert_eq!(pi16.find_by_id, Some(FindById::HeaderScan));
        assert_eq!(cli.find_by_id, Some(FindById::NewestListed));
        assert_ne!(pi16.not_saved_message, cli.not_saved_message);
        assert_eq!(pi16.compaction, Compaction::Pi16);
        assert_eq!(Profile::Harness.rules().compaction, Compaction::Harness);
    }

    #[test]
    fn context_navigation_and_fork_rules_follow_the_pi_that_has_them() {
        for profile in Profile::ALL {
            let rules = profile.rules();
            let manager = profile.is_session_manager();
            // SessionManager repairs content and follows parent links; the harness checkpoints.
            assert_eq!(rules.context.repairs_null_content, manager, "{profile:?}");
            assert_eq!(
                rules.context.checkpoint_compactions, !manager,
                "{profile:?}"
            );
            let tree = rules.tree;
            for harness_only in [
                tree.checkpoint_paths,
                tree.hook_summary_unasked,
                tree.always_reports_from_extension,
                tree.summary_default_reserve,
            ] {
                assert_eq!(harness_only, !manager, "{profile:?}");
            }
            // What pi 1.6 added goes together: its entries, its compaction, its fork and
            // settings rules.
            let pi16 = rules.pi16_entries;
            assert_eq!(rules.context.system_messages, pi16, "{profile:?}");
            assert_eq!(
                rules.context.compaction_carries_system_prompt,
                rules.compaction == Compaction::Pi16,
                "{profile:?}"
            );
            assert_eq!(rules.fork_repoints_first_kept, pi16, "{profile:?}");
            assert_eq!(rules.settings_compaction_integers, pi16, "{profile:?}");
            assert_eq!(rules.compaction_keeps_itself, pi16, "{profile:?}");
            assert_eq!(rules.tree.summary_from_left_leaf, pi16, "{profile:?}");
        }
        assert_eq!(Profile::reading_pi16_entries(), Profile::Pi16);
        // `initialize` names the package each follows; the harness is pi-agent-core's.
        let follows: Vec<&str> = Profile::ALL.iter().map(|p| p.rules().follows).collect();
        assert_eq!(
            follows,
            [
                "pi-coding-agent 0.82.1",
                "pi-coding-agent 1.6.0",
                "pi-agent-core 0.82.1"
            ]
        );
    }
}
