//! The params and results of the `session/*` methods, hooks and notifications, as they travel.
//! These types are the protocol: `protocol/schema.json` is generated from them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::export::ExportFormat;
use crate::format::profile::Profile;
use crate::jsonrpc::{Hook, ServerNotification};
use crate::repo::ListField;
use crate::repo::search::{NameFilter, SearchSort};
use crate::store::{ForkPosition, SessionStats, Warning};

/// Any JSON value (an entry, a message, extension data).
pub(crate) type Json = Value;

/// Names an open session.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SessionRef {
    pub(crate) session_id: String,
}

/// `session/create`: a new session.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateParams {
    /// The project directory; the header `cwd` (resolved as pi resolves it for pi-cli).
    pub(crate) cwd: String,
    /// Defaults to `initialize.defaultProfile`.
    pub(crate) profile: Option<Profile>,
    /// A fixed session id (validated as pi validates it); a new UUIDv7 otherwise.
    pub(crate) id: Option<String>,
    /// The session file this one continues from (header `parentSession`).
    pub(crate) parent_session: Option<String>,
    /// Keep the session in memory only: no file is ever written.
    #[serde(default)]
    pub(crate) in_memory: bool,
    /// Write into this directory (flat) instead of `<sessionsRoot>/<encoded cwd>/`.
    pub(crate) session_dir: Option<String>,
    /// Header metadata (harness only).
    #[schemars(with = "Option<super::pi_format::HarnessMetadata>")]
    pub(crate) metadata: Option<Json>,
    /// Sync every append to disk before answering it.
    #[serde(default)]
    pub(crate) durable: bool,
}

/// `session/open`: an existing file, for reading and appending.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct OpenParams {
    pub(crate) path: String,
    pub(crate) profile: Option<Profile>,
    /// The cwd of a session started at a path that does not exist yet (pi-cli); defaults to
    /// the server's working directory.
    pub(crate) cwd: Option<String>,
    /// Sync every append to disk before answering it.
    #[serde(default)]
    pub(crate) durable: bool,
}

/// What `session/create`, `session/open`, `session/continueRecent`, `session/forkFrom` and
/// `session/fork` return about the session now open.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct OpenedSession {
    pub(crate) session_id: String,
    /// Where the session is written (`null` in memory).
    pub(crate) path: Option<String>,
    pub(crate) profile: Profile,
    #[schemars(with = "super::pi_format::SessionHeader")]
    pub(crate) header: Json,
    pub(crate) leaf_id: Option<String>,
    /// Whether the file exists yet (pi-cli writes it at the first assistant message).
    pub(crate) written: bool,
    /// Lines the reader skipped or migrated, with their line numbers.
    pub(crate) warnings: Vec<Warning>,
    /// The point after the session's last entry (`getEntries.since` reads what follows).
    pub(crate) cursor: String,
}

/// `session/append`: one new entry, as a child of the leaf.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct AppendParams {
    pub(crate) session_id: String,
    /// `{type, ...fields}` with pi's field names: `message` {message}, `model_change`
    /// {provider, modelId}, `thinking_level_change` {thinkingLevel}, `compaction` {summary,
    /// firstKeptEntryId? (null: pi-1.6), tokensBefore, details?, usage?, fromHook?,
    /// retainedTail? (harness)}, `custom` {customType, data?}, `custom_message` {customType,
    /// content, display?, details?}, `label` {targetId, label?}, `session_info` {name},
    /// `active_tools_change` {activeToolNames} (harness), `context_edit` {targetId,
    /// replacement} (pi-1.6), `usage` {kind, provider, model, usage, note?} (pi-1.6).
    #[schemars(with = "super::pi_format::PiNewEntry")]
    pub(crate) entry: Json,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AppendResult {
    pub(crate) entry_id: String,
    pub(crate) leaf_id: Option<String>,
}

/// `session/branch`: move the leaf to an entry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BranchParams {
    pub(crate) session_id: String,
    pub(crate) entry_id: String,
}

/// `session/branchWithSummary`: move the leaf and attach a branch summary there.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BranchWithSummaryParams {
    pub(crate) session_id: String,
    /// The entry the summary hangs under; `null` for a new root.
    pub(crate) target_id: Option<String>,
    #[schemars(with = "String")]
    pub(crate) summary: Json,
    #[schemars(with = "Option<super::pi_format::ExtensionData>")]
    pub(crate) details: Option<Json>,
    #[schemars(with = "Option<super::pi_format::SummaryUsage>")]
    pub(crate) usage: Option<Json>,
    pub(crate) from_hook: Option<bool>,
}

/// The leaf after a move.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LeafResult {
    pub(crate) leaf_id: Option<String>,
    /// The entry written by the move, if any (a branch summary).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) entry_id: Option<String>,
}

/// `session/prepareTree` and `session/navigateTree`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct TreeParams {
    pub(crate) session_id: String,
    pub(crate) target_id: String,
    #[serde(default)]
    pub(crate) summarize: bool,
    /// A ready summary of the abandoned branch (written by the caller's own model); used when
    /// `summarize` is set and no hook supplies one.
    pub(crate) summary: Option<SummaryParam>,
    pub(crate) custom_instructions: Option<String>,
    pub(crate) replace_instructions: Option<bool>,
    pub(crate) label: Option<String>,
    /// The summarizing model's answer to `branchSummary.request` (`session/prepareTree`):
    /// written as pi's `generateBranchSummary` writes it (preamble, file lists, `details`).
    pub(crate) model_summary: Option<SummaryTextParam>,
    /// The summarizing model's context window (pi's fallback when absent or 0: 128,000).
    pub(crate) context_window: Option<f64>,
    /// `branchSummary.reserveTokens` (default 16384; the harness always uses 16384).
    pub(crate) settings: Option<CompactionSettingsParam>,
    /// pi-1.6: the summarizing model (`reasoning`: the request then carries the thinking level).
    pub(crate) model: Option<SummaryModelParam>,
    /// pi-1.6: the level passed as `reasoning`; defaults to the level in force at the leaf.
    pub(crate) thinking_level: Option<String>,
}

/// A branch summary written by someone with a model.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SummaryParam {
    pub(crate) summary: String,
    #[schemars(with = "Option<super::pi_format::ExtensionData>")]
    pub(crate) details: Option<Json>,
    #[schemars(with = "Option<super::pi_format::SummaryUsage>")]
    pub(crate) usage: Option<Json>,
}

/// `session/prepareTree`: what a navigation would abandon, without moving.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PrepareTreeResult {
    /// The target already is the leaf: navigating would do nothing.
    pub(crate) no_op: bool,
    /// pi's preparation: targetId, oldLeafId, commonAncestorId, entriesToSummarize,
    /// userWantsSummary, customInstructions?, replaceInstructions?, label?.
    #[schemars(with = "Option<super::pi_format::PiTreePreparation>")]
    pub(crate) preparation: Option<Json>,
    /// What pi's `generateBranchSummary` would be given (when a summary is wanted and something
    /// is abandoned): {contextWindow, reserveTokens, tokenBudget, messages, totalTokens,
    /// fileOps, readFiles, modifiedFiles, fileListsText, request (null: no model call)}.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<super::pi_format::BranchSummaryPlan>")]
    pub(crate) branch_summary: Option<Json>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NavigateResult {
    pub(crate) cancelled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) editor_text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(default)] // for the schema: absent, never null
    #[schemars(with = "super::pi_format::BranchSummaryEntry")]
    pub(crate) summary_entry: Option<Json>,
    pub(crate) leaf_id: Option<String>,
}

/// The `session_before_tree` hook's params.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BeforeTreeHook {
    pub(crate) session_id: String,
    #[schemars(with = "super::pi_format::PiTreePreparation")]
    pub(crate) preparation: Json,
    /// As in `session/prepareTree` (an addition beside pi's `preparation`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<super::pi_format::BranchSummaryPlan>")]
    pub(crate) branch_summary: Option<Json>,
}

impl Hook for BeforeTreeHook {
    const NAME: &'static str = "session_before_tree";
    type Answer = BeforeTreeAnswer;
}

/// The `session_before_tree` hook's answer (every member optional).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BeforeTreeAnswer {
    #[serde(default)]
    pub(crate) cancel: bool,
    pub(crate) summary: Option<SummaryParam>,
    pub(crate) custom_instructions: Option<String>,
    pub(crate) replace_instructions: Option<bool>,
    pub(crate) label: Option<String>,
}

/// The `session_tree` notification, sent after a navigation and before its response.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TreeNotification {
    pub(crate) session_id: String,
    pub(crate) new_leaf_id: Option<String>,
    pub(crate) old_leaf_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(default)] // for the schema: absent, never null
    #[schemars(with = "super::pi_format::BranchSummaryEntry")]
    pub(crate) summary_entry: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) from_extension: Option<bool>,
}

impl ServerNotification for TreeNotification {
    const NAME: &'static str = "session_tree";
}

/// `session/fork`: a new session from the path before a user message (`before`, pi's
/// `/fork`) or up to an entry (`at`, pi's `/clone`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ForkParams {
    pub(crate) session_id: String,
    pub(crate) entry_id: String,
    #[serde(default = "before")]
    pub(crate) position: ForkPosition,
    /// Sync the new session's file and every append to it before answering; default: as
    /// the session forked from.
    pub(crate) durable: Option<bool>,
}

fn before() -> ForkPosition {
    ForkPosition::Before
}

/// The `session_before_fork` hook's params.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BeforeForkHook {
    pub(crate) session_id: String,
    pub(crate) entry_id: String,
    pub(crate) position: ForkPosition,
}

impl Hook for BeforeForkHook {
    const NAME: &'static str = "session_before_fork";
    type Answer = BeforeForkAnswer;
}

/// The `session_before_fork` hook's answer.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BeforeForkAnswer {
    #[serde(default)]
    pub(crate) cancel: bool,
}

/// `session/export`: the session as a self-contained HTML page, a Markdown document of one
/// path, or one branch as a new session file (`pi-session export`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ExportParams {
    pub(crate) session_id: String,
    /// The entry shown (html, md) or ended at (jsonl); default: the session's leaf.
    pub(crate) leaf_id: Option<String>,
    #[serde(default = "html")]
    pub(crate) format: ExportFormat,
    /// Where to write (`~`, relative and `file://` paths as pi reads them); a regular file
    /// there is replaced, a symlink refused. Default: `pi-session-<file name>.html|md` beside
    /// the session file; jsonl: a new session file beside it, named as pi names it.
    pub(crate) path: Option<String>,
}

fn html() -> ExportFormat {
    ExportFormat::Html
}

/// What `session/export` wrote.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExportResult {
    /// The file written.
    pub(crate) path: String,
    /// Its size.
    pub(crate) bytes: u64,
    pub(crate) format: ExportFormat,
    /// The entry the export shows or ends at (`null`: no entry there).
    pub(crate) leaf_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ForkResult {
    pub(crate) cancelled: bool,
    /// The new session, now open (absent when cancelled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) session: Option<OpenedSession>,
    /// The forked user message's text, for the editor (`before` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) selected_text: Option<String>,
}

/// Which form of messages `session/buildContext` returns.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ContextFormat {
    /// pi's agent messages (`buildSessionContext`).
    #[default]
    Agent,
    /// What is sent to the model (after pi's `convertToLlm`).
    Llm,
}

/// `session/buildContext` and `session/buildContextEntries`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ContextParams {
    pub(crate) session_id: String,
    /// Another position than the leaf; `null` for before the first entry. Nothing moves.
    #[serde(default, deserialize_with = "present")]
    pub(crate) leaf_id: Option<Option<String>>,
    #[serde(default)]
    pub(crate) format: ContextFormat,
}

/// Keeps `null` apart from absent.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

/// The shape of `session/buildContext`'s answer, `{messages, thinkingLevel, model}`
/// (+ `activeToolNames` for harness), for the schema: the context is built as pi builds it
/// (key order included) and travels as the JSON text `JSON.stringify` would write.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContextDocument {
    /// pi's agent messages (`format: agent`) or the messages sent to the model (`llm`).
    #[schemars(with = "Vec<super::pi_format::AnyMessage>")]
    pub(crate) messages: Vec<Json>,
    pub(crate) thinking_level: String,
    pub(crate) model: Option<ContextModel>,
    /// harness only: the active tools at the leaf (`null` when never set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) active_tool_names: Option<Option<Vec<String>>>,
}

/// The model in a context.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContextModel {
    pub(crate) provider: String,
    pub(crate) model_id: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EntriesResult {
    #[schemars(with = "Vec<super::pi_format::AnyEntry>")]
    pub(crate) entries: Vec<Json>,
    /// With `offset` or `limit` (`getBranch`, `buildContextEntries`): how many entries the
    /// whole answer has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) total: Option<usize>,
    /// With `offset` or `limit`: the index of the first entry here in the whole answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) offset: Option<usize>,
}

/// `session/buildContextEntries`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ContextEntriesParams {
    pub(crate) session_id: String,
    /// Another position than the leaf; `null` for before the first entry. Nothing moves.
    #[serde(default, deserialize_with = "present")]
    pub(crate) leaf_id: Option<Option<String>>,
    /// Skip this many entries of the whole answer (default 0).
    pub(crate) offset: Option<usize>,
    /// At most this many entries (default: all).
    pub(crate) limit: Option<usize>,
}

/// pi 0.82.1's `/tree` selector filter modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum TreeFilterName {
    /// Settings and bookkeeping entries hidden (label, custom, model_change,
    /// thinking_level_change, session_info).
    Default,
    /// The default view without tool results.
    NoTools,
    /// User messages only.
    UserOnly,
    /// Labeled entries only.
    LabeledOnly,
    /// Every entry pi's selector shows.
    All,
}

/// `session/getTree`: the whole tree, or a page or window of it, as pi's selector filters it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct GetTreeParams {
    pub(crate) session_id: String,
    /// Only the rows pi's `/tree` selector shows in this mode (every mode also hides an
    /// assistant message with neither text nor an error, unless it is the leaf); absent:
    /// every row.
    pub(crate) filter: Option<TreeFilterName>,
    /// Skip this many rows of the (filtered) pre-order (default 0). Not with `around`.
    pub(crate) offset: Option<usize>,
    /// At most this many rows (default: all).
    pub(crate) limit: Option<usize>,
    /// A window of `limit` rows around this entry (or its nearest shown ancestor, as pi's
    /// selector places its cursor), placed as pi's selector scrolls: the entry in the middle,
    /// clamped to the ends.
    pub(crate) around: Option<String>,
}

/// One row of `session/getTree`: the tree flattened depth-first in pre-order (children in
/// the profile's pi order), so deep sessions never nest.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "TreeRow")]
pub(crate) struct GetTreeRow<'a> {
    pub(crate) id: Option<&'a str>,
    pub(crate) parent_id: Option<&'a str>,
    #[serde(rename = "type")]
    pub(crate) kind: Option<&'a str>,
    pub(crate) depth: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub(crate) label: Option<Box<serde_json::value::RawValue>>,
    pub(crate) preview: &'a str,
    /// On the path from the root to the leaf.
    pub(crate) on_path: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TreeResult<'a> {
    pub(crate) leaf_id: Option<String>,
    /// How many rows the whole (filtered) tree has.
    pub(crate) total: usize,
    /// The index of the first row here in the whole (filtered) pre-order.
    pub(crate) offset: usize,
    /// With `around`: the index (in the whole pre-order) of the row the window is placed
    /// on; `null` when no row is shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) anchor: Option<Option<usize>>,
    pub(crate) rows: Vec<GetTreeRow<'a>>,
}

/// `session/getEntry` and `session/getChildren`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct EntryParams {
    pub(crate) session_id: String,
    pub(crate) entry_id: String,
}

/// `session/getBranch`: the path to an entry (the leaf by default).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BranchPathParams {
    pub(crate) session_id: String,
    pub(crate) entry_id: Option<String>,
    /// Skip this many entries of the path (default 0).
    pub(crate) offset: Option<usize>,
    /// At most this many entries (default: all).
    pub(crate) limit: Option<usize>,
}

/// `session/getEntries`: entries in file order, a page at a time.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct EntriesParams {
    pub(crate) session_id: String,
    /// Start after this many entries.
    #[serde(default)]
    pub(crate) offset: usize,
    /// Start at this cursor (from any earlier answer of this session: `getEntries`, `open`,
    /// `watch`, `session_changed`; another connection's too, while the file is the same),
    /// instead of `offset`.
    pub(crate) since: Option<String>,
    /// At most this many (default 1000); at least 1, so that `nextOffset` always advances.
    pub(crate) limit: Option<usize>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EntriesPage {
    #[schemars(with = "Vec<super::pi_format::AnyEntry>")]
    pub(crate) entries: Vec<Json>,
    /// The offset of the next page, or `null` at the end.
    pub(crate) next_offset: Option<usize>,
    pub(crate) total: usize,
    /// The point after this page's last entry: `since` resumes there.
    pub(crate) cursor: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InfoResult {
    pub(crate) session_id: String,
    pub(crate) path: Option<String>,
    pub(crate) profile: Profile,
    #[schemars(with = "super::pi_format::SessionHeader")]
    pub(crate) header: Json,
    pub(crate) name: Option<String>,
    pub(crate) leaf_id: Option<String>,
    pub(crate) written: bool,
    pub(crate) entry_count: usize,
    pub(crate) stats: SessionStats,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Empty {}

/// Declares the params of a listing: its own members, then what every listing selects (one
/// list of members, documented once; serde's `flatten` would lose `deny_unknown_fields`), and
/// `selection()`, those members as one value.
macro_rules! listing_params {
    ($(#[$meta:meta])* pub(crate) struct $name:ident { $($(#[$doc:meta])* pub(crate) $member:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        pub(crate) struct $name {
            $($(#[$doc])* pub(crate) $member: $ty,)*
            /// Whose listing: defaults to `initialize.defaultProfile`.
            pub(crate) profile: Option<Profile>,
            /// Only these members of each row (pi's `SessionInfo` names, e.g. `["path", "id",
            /// "name", "modified", "firstMessage"]`); default: every member. pi-cli, pi-1.6 only.
            pub(crate) fields: Option<Vec<ListField>>,
            /// pi's `/resume` search, matched server-side: words matched fuzzily, `"quoted phrases"`,
            /// or `re:PATTERN`, against `id name allMessagesText cwd`. pi-cli, pi-1.6 only.
            pub(crate) query: Option<String>,
            /// With `query`: `relevance` (default: best match first, then newest, as pi's default
            /// view) or `recent` (newest first, as pi's recent view).
            pub(crate) sort: Option<SearchSort>,
            /// `all` (default) or `named` (only sessions with a name, as pi's name filter).
            pub(crate) name_filter: Option<NameFilter>,
            /// Rows to skip (after searching and sorting); default 0.
            pub(crate) offset: Option<u64>,
            /// At most this many rows; default: all.
            pub(crate) limit: Option<u64>,
        }

        impl $name {
            /// What the listing selects, beside where it looks.
            pub(crate) fn selection(&self) -> ListSelectionParams {
                ListSelectionParams {
                    fields: self.fields.clone(),
                    query: self.query.clone(),
                    sort: self.sort,
                    name_filter: self.name_filter,
                    offset: self.offset,
                    limit: self.limit,
                }
            }
        }
    };
}

listing_params! {
    /// `session/list`: the sessions of a cwd, as the profile's pi lists them (pi's `/resume`
    /// list, or the harness's `JsonlSessionRepo.list({cwd})`).
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub(crate) struct ListParams {
        pub(crate) cwd: String,
        /// An explicit sessions directory (flat; filtered by header cwd), as pi's `--session-dir`;
        /// harness: the sessions root instead of the server's.
        pub(crate) session_dir: Option<String>,
    }
}

listing_params! {
    /// `session/listAll`: every project's sessions.
    #[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub(crate) struct ListAllParams {
        /// pi-cli, pi-1.6: one directory listed alone instead of every project under the root;
        /// harness: the sessions root instead of the server's.
        pub(crate) session_dir: Option<String>,
    }
}

/// `session/findById`: pi 1.6's `SessionManager.findById`, the file of an exact session id.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct FindByIdParams {
    pub(crate) cwd: String,
    /// The exact header id (a prefix does not match).
    pub(crate) id: String,
    /// An explicit sessions directory (flat; filtered by header cwd).
    pub(crate) session_dir: Option<String>,
    /// `pi-1.6` (its `findById`) or `pi-cli` (pi 0.82.1's exact match over `list`); defaults
    /// to `initialize.defaultProfile`. The harness has no such lookup (`invalid_argument`).
    pub(crate) profile: Option<Profile>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct FindByIdResult {
    /// The session file, or `null` when no session has that id.
    pub(crate) path: Option<String>,
}

/// A file the listing passed over, and why; or a listed file holding what only pi 1.6 writes,
/// in a profile that does not read it as pi 1.6 does (then `line` and `useProfile` are set).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "ListWarning")]
pub(crate) struct ListResultWarning {
    pub(crate) path: String,
    pub(crate) reason: String,
    /// The first line holding the pi 1.6 feature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) line: Option<u64>,
    /// The profile that reads the file as its pi wrote it (`pi-1.6`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) use_profile: Option<Profile>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ListResult {
    /// pi's `SessionInfo`s (path, id, cwd, name?, parentSessionPath?, created, modified,
    /// messageCount, firstMessage, allMessagesText), newest activity first; harness: its
    /// `SessionMetadata` (id, createdAt, cwd, path, parentSessionPath?, metadata?), newest
    /// `createdAt` first.
    #[schemars(with = "Vec<super::pi_format::SessionRow>")]
    pub(crate) sessions: Vec<Json>,
    pub(crate) warnings: Vec<ListResultWarning>,
    /// How many rows matched before `offset`/`limit` were applied; present when any of
    /// `query`, `nameFilter`, `offset`, `limit` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) total: Option<u64>,
}

/// What `session/list` and `session/listAll` select, beside where they look.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListSelectionParams {
    pub(crate) fields: Option<Vec<ListField>>,
    pub(crate) query: Option<String>,
    pub(crate) sort: Option<SearchSort>,
    pub(crate) name_filter: Option<NameFilter>,
    pub(crate) offset: Option<u64>,
    pub(crate) limit: Option<u64>,
}

impl ListSelectionParams {
    /// Whether `total` is part of the answer.
    pub(crate) fn pages(&self) -> bool {
        self.query.is_some()
            || self.name_filter.is_some()
            || self.offset.is_some()
            || self.limit.is_some()
    }
}

/// `session/continueRecent`: pi's `--continue`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ContinueRecentParams {
    pub(crate) cwd: String,
    pub(crate) session_dir: Option<String>,
    pub(crate) profile: Option<Profile>,
    /// Sync the session (opened or created) and every append to it before answering.
    #[serde(default)]
    pub(crate) durable: bool,
}

/// `session/forkFrom`: pi's `--fork`, a whole session copied into another project.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ForkFromParams {
    pub(crate) source_path: String,
    /// The new session's cwd.
    pub(crate) cwd: String,
    pub(crate) session_dir: Option<String>,
    /// A fixed id for the new session (validated as pi validates it).
    pub(crate) id: Option<String>,
    /// Sync the new file (and its directory) and every append to it before answering.
    #[serde(default)]
    pub(crate) durable: bool,
    /// `pi-cli` or `pi-1.6` (the new session's profile); defaults to
    /// `initialize.defaultProfile`, or `pi-cli` when that is `harness` (`forkFrom` is pi's
    /// SessionManager's).
    pub(crate) profile: Option<Profile>,
}

/// `session/delete`: a session file and its listing cache row.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct DeleteParams {
    pub(crate) path: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct DeleteResult {
    /// `false` when the file was already gone.
    pub(crate) deleted: bool,
}

/// pi's `settings.json` sections the compaction methods read; every member optional, pi's
/// defaults for the rest (`enabled` true, `reserveTokens` 16384, `keepRecentTokens` 20000).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CompactionSettingsParam {
    #[serde(default)]
    pub(crate) compaction: CompactionSection,
    #[serde(default)]
    pub(crate) branch_summary: BranchSummarySection,
}

/// `settings.branchSummary`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BranchSummarySection {
    pub(crate) reserve_tokens: Option<f64>,
    /// Read by pi's interactive `/tree` only (whether to ask); accepted, not used here.
    #[allow(dead_code)]
    pub(crate) skip_prompt: Option<bool>,
}

/// `settings.compaction`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CompactionSection {
    pub(crate) enabled: Option<bool>,
    pub(crate) reserve_tokens: Option<f64>,
    pub(crate) keep_recent_tokens: Option<f64>,
}

/// `session/getContextUsage`: pi's context-size figures at the leaf (or `leafId`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct ContextUsageParams {
    pub(crate) session_id: String,
    /// Another position than the leaf; `null` for before the first entry. Nothing moves.
    #[serde(default, deserialize_with = "present")]
    pub(crate) leaf_id: Option<Option<String>>,
    /// The model's context window: adds `threshold`, `shouldCompact` and `contextUsage`.
    pub(crate) context_window: Option<f64>,
    pub(crate) settings: Option<CompactionSettingsParam>,
}

/// A JavaScript number as `JSON.stringify` writes it (`1108`, not `1108.0`).
fn js_number<S: serde::Serializer>(n: &f64, s: S) -> Result<S::Ok, S::Error> {
    crate::format::json::JsValue::Number(*n)
        .to_serde()
        .serialize(s)
}

fn js_number_opt<S: serde::Serializer>(n: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match n {
        Some(n) => js_number(n, s),
        None => s.serialize_none(),
    }
}

/// `session/getContextUsage`'s result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContextUsageResult {
    pub(crate) leaf_id: Option<String>,
    /// The compaction settings in force (`{enabled, reserveTokens, keepRecentTokens}`).
    #[schemars(with = "super::pi_format::PiCompactionSettings")]
    pub(crate) settings: Json,
    /// `estimateContextTokens(buildSessionContext(path).messages)` plus `lastUsageEntryId`.
    pub(crate) estimate: ContextEstimateDocument,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "js_number_opt"
    )]
    pub(crate) context_window: Option<f64>,
    /// `contextWindow - reserveTokens`.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "js_number_opt"
    )]
    pub(crate) threshold: Option<f64>,
    /// `shouldCompact(tokens, contextWindow, settings)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) should_compact: Option<bool>,
    /// pi-cli, with a window > 0: `AgentSession.getContextUsage()` (`tokens` and `percent`
    /// null after a compaction until an assistant reports usage again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) context_usage: Option<ContextUsageFigures>,
}

/// `estimateContextTokens`'s figures.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContextEstimateDocument {
    #[serde(serialize_with = "js_number")]
    pub(crate) tokens: f64,
    #[serde(serialize_with = "js_number")]
    pub(crate) usage_tokens: f64,
    #[serde(serialize_with = "js_number")]
    pub(crate) trailing_tokens: f64,
    /// Index into the context's messages of the assistant whose usage was taken.
    pub(crate) last_usage_index: Option<u64>,
    /// The entry of that message.
    pub(crate) last_usage_entry_id: Option<String>,
}

/// `AgentSession.getContextUsage()`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContextUsageFigures {
    #[serde(serialize_with = "js_number_opt")]
    pub(crate) tokens: Option<f64>,
    #[serde(serialize_with = "js_number")]
    pub(crate) context_window: f64,
    #[serde(serialize_with = "js_number_opt")]
    pub(crate) percent: Option<f64>,
}

/// The model fields the summarizing requests depend on.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SummaryModelParam {
    /// The model's `maxTokens` (caps each request's `maxTokens` when > 0).
    pub(crate) max_tokens: Option<f64>,
    /// Whether the model reasons (requests then carry `reasoning: thinkingLevel` unless off).
    #[serde(default)]
    pub(crate) reasoning: bool,
}

/// `session/prepareCompaction`: what pi would summarize if it compacted now.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PrepareCompactionParams {
    pub(crate) session_id: String,
    /// Another position than the leaf; `null` for before the first entry. Nothing moves.
    #[serde(default, deserialize_with = "present")]
    pub(crate) leaf_id: Option<Option<String>>,
    pub(crate) settings: Option<CompactionSettingsParam>,
    /// Appended to the history request as pi does (`Additional focus: ...`).
    pub(crate) custom_instructions: Option<String>,
    pub(crate) model: Option<SummaryModelParam>,
    /// Defaults to the level in force at the leaf (pi-cli) or `"off"` (harness).
    pub(crate) thinking_level: Option<String>,
}

/// The shape of `session/prepareCompaction`'s result (it travels as built, pi's key order).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompactionPlanDocument {
    /// pi's preparation: firstKeptEntryId, messagesToSummarize, turnPrefixMessages,
    /// retainedTail (harness), isSplitTurn, tokensBefore, previousSummary?, fileOps {read,
    /// written, edited} (arrays in insertion order), settings.
    #[schemars(with = "super::pi_format::CompactionPreparation")]
    pub(crate) preparation: Json,
    /// The entries behind each list: {history, turnPrefix, kept}.
    #[schemars(with = "super::pi_format::CompactionEntryIds")]
    pub(crate) entry_ids: Json,
    pub(crate) window_start_id: Option<String>,
    pub(crate) previous_compaction_id: Option<String>,
    pub(crate) turn_start_id: Option<String>,
    #[schemars(with = "Vec<String>")]
    pub(crate) read_files: Vec<Json>,
    #[schemars(with = "Vec<String>")]
    pub(crate) modified_files: Vec<Json>,
    /// What pi appends to the summary text (`formatFileOperations`).
    pub(crate) file_lists_text: String,
    /// The requests pi's `compact()` makes, in order: {purpose: "history"|"turnPrefix",
    /// systemPrompt, messages: [{role: "user", content: [{type: "text", text}], timestamp}],
    /// maxTokens, reasoning?, cacheRetention: "none"}.
    #[schemars(with = "Vec<super::pi_format::SummaryRequest>")]
    pub(crate) requests: Vec<Json>,
}

/// A model's answer to one of `session/prepareCompaction`'s requests (or to
/// `branchSummary.request`): `text`, or the response's `content` blocks, and what pi checks
/// before taking it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SummaryTextParam {
    /// The answer's text (pi's `contentText(response.content)`: text blocks joined by "\n").
    /// Give this or `content`.
    pub(crate) text: Option<String>,
    /// The response's content blocks, as pi-ai returns them: the text is taken from them as pi
    /// takes it, and pi 1.6 refuses an answer holding a `toolCall` block.
    #[schemars(with = "Option<Vec<super::pi_format::AssistantContentBlock>>")]
    pub(crate) content: Option<Vec<Json>>,
    /// The response's usage, written as pi writes it (two are added as pi's `combineUsage`).
    #[schemars(with = "Option<super::pi_format::SummaryUsage>")]
    pub(crate) usage: Option<Json>,
    /// The response's `stopReason`: `"error"` is refused (pi 1.6 also refuses `"length"`, a
    /// cut-off summary; an `"aborted"` branch summary cancels the navigation).
    pub(crate) stop_reason: Option<String>,
    /// The response's `errorMessage`, quoted in the refusal of an `"error"` stop.
    pub(crate) error_message: Option<String>,
}

/// The answers to the preparation's requests, by `purpose`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SummariesParam {
    pub(crate) history: Option<SummaryTextParam>,
    pub(crate) turn_prefix: Option<SummaryTextParam>,
}

/// `session/compact`: compact at the leaf as pi does, with the model's answers.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CompactParams {
    pub(crate) session_id: String,
    /// The leaf the caller prepared at: if the leaf has moved since, nothing is written
    /// (`leaf_moved`).
    pub(crate) leaf_id: Option<String>,
    pub(crate) settings: Option<CompactionSettingsParam>,
    pub(crate) custom_instructions: Option<String>,
    /// Sent to the hook: `"manual"` (default), `"threshold"` or `"overflow"`.
    pub(crate) reason: Option<crate::ops::CompactReason>,
    /// The model's answers to the preparation's requests.
    pub(crate) summaries: Option<SummariesParam>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompactResult {
    pub(crate) cancelled: bool,
    /// The compaction entry written, as stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(default)] // for the schema: absent, never null
    #[schemars(with = "super::pi_format::CompactionEntry")]
    pub(crate) entry: Option<Json>,
    pub(crate) leaf_id: Option<String>,
}

/// The `session_before_compact` hook's params (pi's payload).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BeforeCompactHook {
    pub(crate) session_id: String,
    /// pi's preparation, as `session/prepareCompaction` gives it.
    #[schemars(with = "super::pi_format::CompactionPreparation")]
    pub(crate) preparation: Json,
    /// The path to the leaf (pi-cli: the full path; harness: the truncated path).
    #[schemars(with = "Vec<super::pi_format::AnyEntry>")]
    pub(crate) branch_entries: Vec<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) custom_instructions: Option<String>,
    /// pi-cli only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<crate::ops::CompactReason>,
}

impl Hook for BeforeCompactHook {
    const NAME: &'static str = "session_before_compact";
    type Answer = BeforeCompactAnswer;
}

/// The `session_before_compact` hook's answer.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BeforeCompactAnswer {
    #[serde(default)]
    pub(crate) cancel: bool,
    /// A whole compaction, stored as given with `fromHook: true`: `{summary, firstKeptEntryId?,
    /// tokensBefore, details?, usage?, retainedTail? (harness)}`.
    pub(crate) compaction: Option<HookCompactionParam>,
}

/// A compaction an extension wrote.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "HookCompaction")]
pub(crate) struct HookCompactionParam {
    pub(crate) summary: String,
    pub(crate) first_kept_entry_id: Option<String>,
    pub(crate) tokens_before: f64,
    #[schemars(with = "Option<super::pi_format::ExtensionData>")]
    pub(crate) details: Option<Json>,
    #[schemars(with = "Option<super::pi_format::SummaryUsage>")]
    pub(crate) usage: Option<Json>,
    #[schemars(with = "Option<Vec<super::pi_format::AnyMessage>>")]
    pub(crate) retained_tail: Option<Json>,
}

/// The `session_changed` notification: another program appended to an open session's file;
/// sent before the answer of the first request that reads the new entries, or, for a
/// watched session (`session/watch`), as soon as the watch sees them.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ChangedNotification {
    pub(crate) session_id: String,
    /// How many entries other programs appended since the client was last told (the
    /// session's own appends are never counted).
    pub(crate) entries_added: usize,
    /// The session's leaf after them (a session open for writing keeps the client's leaf).
    pub(crate) leaf_id: Option<String>,
    /// Where the new entries start: `session/getEntries {since: from}` answers them (and any
    /// entry after them).
    pub(crate) from: String,
    /// The point after the session's last entry now (resume from it with `getEntries.since`).
    pub(crate) cursor: String,
    /// `false` when `entries` stops before all the new entries (a large burst: at most 1000
    /// entries or about 1 MiB of them): read the rest with `getEntries {since: from}`.
    pub(crate) complete: bool,
    /// The new entries, in file order, as `getEntries` gives them (the last member).
    #[schemars(with = "Vec<super::pi_format::AnyEntry>")]
    pub(crate) entries: Vec<Json>,
}

impl ServerNotification for ChangedNotification {
    const NAME: &'static str = "session_changed";
}

/// `session/watch`'s answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WatchResult {
    /// The point after the session's last entry when the watch began: every later entry
    /// another program appends reaches the client in a `session_changed`.
    pub(crate) cursor: String,
    /// `false` when the session was watched already (one watch per session; this call
    /// changed nothing).
    pub(crate) started: bool,
}

/// `session/unwatch`'s answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UnwatchResult {
    /// Whether a watch was ended (`false`: the session was not watched).
    pub(crate) ended: bool,
}

/// Why a watch ended by itself.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) enum WatchEndReason {
    /// The file was deleted (its name is gone).
    Deleted,
    /// Another file now has its name (renamed over it, or deleted and made anew).
    Replaced,
    /// The file is shorter than what was read (cut by another program).
    Truncated,
    /// Reading the file failed (the message says how).
    Error,
}

/// The `session_watch_ended` notification: a watch ended without `session/unwatch` or
/// `session/close`, because the file can no longer be followed. Sent after the last
/// `session_changed` of the watch; the session stays open (reopen it to read the new file).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WatchEndedNotification {
    pub(crate) session_id: String,
    pub(crate) reason: WatchEndReason,
    /// Names the file and what happened to it.
    pub(crate) message: String,
}

impl ServerNotification for WatchEndedNotification {
    const NAME: &'static str = "session_watch_ended";
}

/// The `session_compact` notification, sent after the entry is written and before the response.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompactNotification {
    pub(crate) session_id: String,
    #[schemars(with = "super::pi_format::CompactionEntry")]
    pub(crate) compaction_entry: Json,
    /// Whether the entry came from the hook.
    pub(crate) from_extension: bool,
}

impl ServerNotification for CompactNotification {
    const NAME: &'static str = "session_compact";
}

// ---------------------------------------------------------------------------------------------
// The store index: `session/search`, `session/stats` and their progress

/// A `$/progress` token, as LSP's `ProgressToken`: chosen by the client (`workDoneToken`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum ProgressToken {
    Number(i64),
    String(String),
}

/// `session/search`: the entries of every session (or one project's) that hold the query,
/// from the store index, brought up to date first. (The `search` command's input, its members
/// spelled out here so that unknown members are refused as in every other method.)
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct SearchParams {
    /// Words that must each appear, anywhere in the entry (case and diacritics ignored);
    /// `"a phrase"` must appear as written; a piece shorter than three characters is found by
    /// a bounded scan.
    pub(crate) query: String,
    /// Whose reading (one index per profile); defaults to `initialize.defaultProfile`.
    pub(crate) profile: Option<Profile>,
    /// Only the sessions of the project in this directory; omitted: every project.
    pub cwd: Option<String>,
    /// A flat sessions directory (pi's `--session-dir`) instead of the sessions root's
    /// project directories (harness: another sessions root); its own index.
    pub session_dir: Option<String>,
    /// `message.role` (user, assistant, toolResult, ...) or the entry type of other entries
    /// (compaction, branch_summary, custom_message, label, session_info).
    pub(crate) role: Option<String>,
    /// Entries at or after this time (milliseconds since the epoch).
    pub(crate) since_ms: Option<f64>,
    /// Entries before this time (milliseconds since the epoch).
    pub(crate) until_ms: Option<f64>,
    /// `model` or `provider/model`.
    pub(crate) model: Option<String>,
    /// Entries that call or answer this tool.
    pub(crate) tool: Option<String>,
    /// Only entries on the path to each session's current leaf.
    #[serde(default)]
    pub(crate) on_path: bool,
    /// Search thinking text too.
    #[serde(default)]
    pub(crate) thinking: bool,
    /// At most this many hits (default 20).
    pub(crate) limit: Option<u64>,
    /// Hits skipped first (default 0).
    #[serde(default)]
    pub(crate) offset: u64,
    /// `$/progress` is sent under this token while the index catches up (LSP's
    /// `WorkDoneProgressParams`).
    pub(crate) work_done_token: Option<ProgressToken>,
}

/// `session/stats`: usage figures across the store, each message counted once (or per file).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct StatsParams {
    /// Whose reading (one index per profile); defaults to `initialize.defaultProfile`.
    pub(crate) profile: Option<Profile>,
    /// Only the sessions of the project in this directory; omitted: every project.
    pub cwd: Option<String>,
    /// A flat sessions directory (pi's `--session-dir`) instead of the sessions root's
    /// project directories (harness: another sessions root); its own index.
    pub session_dir: Option<String>,
    /// The groups (default `day`).
    #[serde(default)]
    pub(crate) by: crate::ops::GroupBy,
    /// First day counted (YYYY-MM-DD or YYYYMMDD, in `timezone`).
    pub(crate) since: Option<String>,
    /// Last day counted.
    pub(crate) until: Option<String>,
    /// IANA name (`UTC`, `Europe/Paris`); omitted: the server machine's local time.
    pub(crate) timezone: Option<String>,
    /// Each file summed as pi's `getSessionStats` counts it (copies counted in each file).
    #[serde(default)]
    pub(crate) per_file: bool,
    /// `$/progress` is sent under this token while the index catches up.
    pub(crate) work_done_token: Option<ProgressToken>,
}

impl SearchParams {
    /// The operation's input and the progress token. (Struct literals: a member added to the
    /// input does not compile until it is mapped here.)
    pub(crate) fn into_input(self) -> (crate::ops::SearchInput, Option<ProgressToken>) {
        let input = crate::ops::SearchInput {
            query: self.query,
            scope: crate::ops::StoreScope {
                profile: self.profile,
                cwd: self.cwd,
                session_dir: self.session_dir,
            },
            role: self.role,
            since_ms: self.since_ms,
            until_ms: self.until_ms,
            model: self.model,
            tool: self.tool,
            on_path: self.on_path,
            thinking: self.thinking,
            limit: self.limit,
            offset: self.offset,
        };
        (input, self.work_done_token)
    }
}

impl StatsParams {
    /// The operation's input and the progress token.
    pub(crate) fn into_input(self) -> (crate::ops::StatsInput, Option<ProgressToken>) {
        let input = crate::ops::StatsInput {
            scope: crate::ops::StoreScope {
                profile: self.profile,
                cwd: self.cwd,
                session_dir: self.session_dir,
            },
            by: self.by,
            since: self.since,
            until: self.until,
            timezone: self.timezone,
            per_file: self.per_file,
        };
        (input, self.work_done_token)
    }
}

/// `$/progress` (LSP's): the work a request with a `workDoneToken` is doing.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct ProgressNotification {
    pub(crate) token: ProgressToken,
    pub(crate) value: WorkDoneProgress,
}

impl ServerNotification for ProgressNotification {
    const NAME: &'static str = "$/progress";
}

/// LSP's `WorkDoneProgressBegin`, `...Report` and `...End`, told apart by `kind`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub(crate) enum WorkDoneProgress {
    Begin {
        title: String,
        /// The client cannot cancel the indexing on its own (`$/cancelRequest` still ends
        /// the request's wait).
        cancellable: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// 0 to 100.
        #[serde(skip_serializing_if = "Option::is_none")]
        percentage: Option<u32>,
    },
    Report {
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        percentage: Option<u32>,
    },
    End {
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
}

// ---------------------------------------------------------------------------------------------
// The store's live feed: `session/watchStore`, `session/unwatchStore`, `store_changed`

/// `session/watchStore`: every file of the store (or of one project) created, appended to,
/// replaced, renamed or deleted, told as `store_changed` notifications, each with a durable
/// cursor.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WatchStoreParams {
    /// Whose reading (one store index per profile); defaults to `initialize.defaultProfile`.
    pub profile: Option<Profile>,
    /// Only the sessions of the project in this directory.
    pub cwd: Option<String>,
    /// The sessions root, or one project folder in it; omitted: the store's sessions root.
    pub dir: Option<std::path::PathBuf>,
    /// Go on after this cursor (the last `store_changed.cursor` the client kept; `"0"`: the
    /// whole store from the start of the index's change log); omitted: from now on.
    pub since: Option<String>,
    /// Look at the files every `capabilities.watchStore.pollIntervalMs` instead of waiting for
    /// the OS's change events (always so on network and FUSE file systems).
    #[serde(default)]
    pub poll: bool,
}

/// `session/watchStore`'s answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WatchStoreResult {
    /// Names this watch in its notifications and in `session/unwatchStore`.
    pub watch_id: String,
    /// Where the notifications begin (`since`, or the end of the change log when none was
    /// given). The first notifications may come before this answer.
    pub cursor: String,
    /// `true` when the files are polled (asked for, or a network or FUSE file system).
    pub polled: bool,
}

/// `session/unwatchStore`: ends a store watch.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UnwatchStoreParams {
    pub watch_id: String,
}

/// `session/unwatchStore`'s answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnwatchStoreResult {
    /// Whether a watch was ended (`false`: no such watch).
    pub ended: bool,
}

/// The `store_changed` notification: one event of a store watch, in order per file; its
/// `cursor` given back as `since` resumes after it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoreChangedNotification {
    pub watch_id: String,
    /// Where this event ends: given back as `since`, a watch goes on after it.
    pub cursor: String,
    pub kind: crate::catalog::feed::FeedKind,
    /// The file (for `renamed`, its new path).
    pub path: std::path::PathBuf,
    /// `renamed`: the former path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<std::path::PathBuf>,
    /// The session id of the file's header.
    pub session_id: String,
    /// The content's generation: a `replaced` file's entries come under a new one (drop what
    /// was held of the older).
    pub generation: u64,
    /// The entries told are the file's entries `from..to` (0-based positions, header not
    /// counted).
    pub from: u64,
    pub to: u64,
    /// The entries, as the file holds them, in file order.
    #[schemars(with = "Vec<super::pi_format::AnyEntry>")]
    pub entries: Vec<Box<serde_json::value::RawValue>>,
}

impl StoreChangedNotification {
    pub fn new(watch_id: String, event: crate::ops::StoreEvent) -> Self {
        let crate::ops::StoreEvent {
            cursor,
            kind,
            path,
            old_path,
            session_id,
            generation,
            from,
            to,
            entries,
        } = event;
        StoreChangedNotification {
            watch_id,
            cursor,
            kind,
            path,
            old_path,
            session_id,
            generation,
            from,
            to,
            entries,
        }
    }
}

impl ServerNotification for StoreChangedNotification {
    const NAME: &'static str = "store_changed";
}
