//! pi's session format, typed for the schema: entries discriminated on `type`, messages on
//! `role`, content blocks on `type`, usage, headers, listing rows, and the preparations and
//! summary requests the compaction and tree methods answer.
//!
//! These are mirror types: the server answers entries and messages from their lines' own bytes
//! (the exact-text rule), so they are never built from these structs; they exist so that
//! `protocol/schema.json`, and the clients' types generated from it, say what travels. They follow
//! pi's own declarations (`pi-coding-agent`'s `session-manager.d.ts` and `messages.d.ts`,
//! `pi-ai`'s `types.d.ts`, `pi-agent-core`'s `harness/types.d.ts`, and pi 1.6's additions);
//! `tests/schema.rs` checks every message of the transcripts against them.
//!
//! Two things stay open: extension payloads ([`ExtensionData`], [`ToolArguments`],
//! [`HarnessMetadata`], [`ToolParameters`]), and the passthrough of entries and messages of a
//! kind pi does not declare ([`UnknownEntry`], [`UnknownMessage`]): the reader keeps them and
//! the server answers them as they are. The passthrough definitions carry `x-passthrough`, so
//! the clients' generators leave them out of the unions they type (narrowing on the tag then
//! works), while a validator still accepts them.

// Schema-only types: never built, so neither their size nor their variant names matter.
#![allow(dead_code, clippy::large_enum_variant, clippy::enum_variant_names)]

use schemars::JsonSchema;
use schemars::r#gen::SchemaGenerator;
use schemars::schema::{InstanceType, Metadata, Schema, SchemaObject};
use serde_json::{Value, json};

/// A `type`/`role` member that holds exactly one string.
fn tag(value: &str) -> Schema {
    SchemaObject {
        instance_type: Some(InstanceType::String.into()),
        enum_values: Some(vec![Value::String(value.to_owned())]),
        ..Default::default()
    }
    .into()
}

macro_rules! tags {
    ($($name:ident = $value:literal),* $(,)?) => {
        $(fn $name(_: &mut SchemaGenerator) -> Schema { tag($value) })*
    };
}

tags!(
    session_tag = "session",
    message_tag = "message",
    thinking_level_change_tag = "thinking_level_change",
    model_change_tag = "model_change",
    active_tools_change_tag = "active_tools_change",
    compaction_tag = "compaction",
    branch_summary_tag = "branch_summary",
    custom_tag = "custom",
    custom_message_tag = "custom_message",
    label_tag = "label",
    session_info_tag = "session_info",
    leaf_tag = "leaf",
    context_edit_tag = "context_edit",
    usage_tag = "usage",
    user_role = "user",
    assistant_role = "assistant",
    tool_result_role = "toolResult",
    bash_execution_role = "bashExecution",
    custom_role = "custom",
    branch_summary_role = "branchSummary",
    compaction_summary_role = "compactionSummary",
    system_role = "system",
    text_tag = "text",
    thinking_tag = "thinking",
    image_tag = "image",
    tool_call_tag = "toolCall",
    none_retention = "none",
);

/// `T | null`, and required: pi's members typed `X | null` (never absent).
pub(crate) struct Nullable<T>(pub Option<T>);

impl<T: JsonSchema> JsonSchema for Nullable<T> {
    fn is_referenceable() -> bool {
        false
    }

    fn schema_name() -> String {
        format!("Nullable_{}", T::schema_name())
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<Option<T>>()
    }
}

/// An open definition, with its description and (for the passthroughs) `x-passthrough`.
fn open(description: &str, object: bool, passthrough: Option<(&str, &[&str])>) -> Schema {
    let mut schema = SchemaObject {
        metadata: Some(Box::new(Metadata {
            description: Some(description.to_owned()),
            ..Default::default()
        })),
        ..Default::default()
    };
    if !object && passthrough.is_none() {
        // Any JSON value: json-schema-to-typescript would make an empty schema an object.
        schema
            .extensions
            .insert("tsType".to_owned(), json!("unknown"));
    }
    if object || passthrough.is_some() {
        schema.instance_type = Some(InstanceType::Object.into());
        // Said outright: the clients' generators close objects that do not say.
        schema.object().additional_properties = Some(Box::new(Schema::Bool(true)));
    }
    if let Some((tag_member, known)) = passthrough {
        schema.object().required.insert(tag_member.to_owned());
        // Not one of the known tags: a known kind that lacks a member is not let through here.
        schema.object().properties.insert(
            tag_member.to_owned(),
            json_schema(json!({"type": "string", "not": {"enum": known}})),
        );
        schema
            .extensions
            .insert("x-passthrough".to_owned(), json!(true));
    }
    schema.into()
}

fn json_schema(value: Value) -> Schema {
    serde_json::from_value(value).expect("a literal schema")
}

macro_rules! open_definition {
    ($(#[$doc:meta])* $name:ident, $description:literal, $object:expr, $passthrough:expr) => {
        $(#[$doc])*
        pub(crate) struct $name;

        impl JsonSchema for $name {
            fn schema_name() -> String {
                stringify!($name).to_owned()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                open($description, $object, $passthrough)
            }
        }
    };
}

open_definition!(
    /// Extension data: a custom entry's `data`, the `details` of compactions, branch
    /// summaries, custom messages and tool results. Any JSON value, as the extension wrote it.
    ExtensionData,
    "Extension data (a custom entry's `data`, the `details` of a compaction, branch summary, custom message or tool result): any JSON value, as the extension wrote it.",
    false,
    None
);
open_definition!(
    /// A tool call's `arguments`: the tool's own object.
    ToolArguments,
    "A tool call's `arguments`: an object whose members are the tool's own.",
    true,
    None
);
open_definition!(
    /// The harness header's `metadata`: the application's own object.
    HarnessMetadata,
    "The harness session header's `metadata` (and its listing rows'): an object whose members are the application's own.",
    true,
    None
);
open_definition!(
    /// A tool's `parameters` (a JSON Schema) and `constrainedSampling` (pi 1.6 system messages).
    ToolParameters,
    "A tool's `parameters` (the JSON Schema of its arguments) in a pi 1.6 system message.",
    true,
    None
);
open_definition!(
    /// An entry of a kind pi does not declare: kept by the reader and answered as it is.
    UnknownEntry,
    "An entry whose `type` is none of SessionEntry's (pi's readers keep such lines, and so does this server, which answers them as the file holds them). Passthrough: the clients' generated types leave it out of SessionEntry so that narrowing on `type` works; a client that may meet newer pi files checks `type` against the kinds it knows.",
    true,
    Some((
        "type",
        &[
            "session",
            "message",
            "thinking_level_change",
            "model_change",
            "active_tools_change",
            "compaction",
            "branch_summary",
            "custom",
            "custom_message",
            "label",
            "session_info",
            "leaf",
            "context_edit",
            "usage",
        ]
    ))
);
open_definition!(
    /// A message of a role pi does not declare (an extension's own `CustomAgentMessages`).
    UnknownMessage,
    "A message whose `role` is none of AgentMessage's (an extension may declare its own roles in pi's `CustomAgentMessages`); answered as the file holds it. Passthrough: the clients' generated types leave it out of AgentMessage so that narrowing on `role` works.",
    true,
    Some((
        "role",
        &[
            "user",
            "assistant",
            "toolResult",
            "bashExecution",
            "custom",
            "branchSummary",
            "compactionSummary",
            "system",
        ]
    ))
);

// ---- content blocks ---------------------------------------------------------------------

/// pi-ai's `TextContent`.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TextContent {
    #[serde(rename = "type")]
    #[schemars(schema_with = "text_tag")]
    pub(crate) kind: String,
    pub(crate) text: String,
    pub(crate) text_signature: Option<String>,
}

/// pi-ai's `ThinkingContent`.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThinkingContent {
    #[serde(rename = "type")]
    #[schemars(schema_with = "thinking_tag")]
    pub(crate) kind: String,
    pub(crate) thinking: String,
    pub(crate) thinking_signature: Option<String>,
    /// The thinking was redacted; its encrypted payload is in `thinkingSignature`.
    pub(crate) redacted: Option<bool>,
}

/// pi-ai's `ImageContent`.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ImageContent {
    #[serde(rename = "type")]
    #[schemars(schema_with = "image_tag")]
    pub(crate) kind: String,
    /// Base64.
    pub(crate) data: String,
    pub(crate) mime_type: String,
}

/// pi-ai's `ToolCall`.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolCall {
    #[serde(rename = "type")]
    #[schemars(schema_with = "tool_call_tag")]
    pub(crate) kind: String,
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) arguments: ToolArguments,
    pub(crate) thought_signature: Option<String>,
}

/// A block of a user, custom or tool-result message: text or an image.
#[derive(JsonSchema)]
#[serde(untagged)]
pub(crate) enum UserContentBlock {
    Text(TextContent),
    Image(ImageContent),
}

/// A block of an assistant message: text, thinking or a tool call.
#[derive(JsonSchema)]
#[serde(untagged)]
pub(crate) enum AssistantContentBlock {
    Text(TextContent),
    Thinking(ThinkingContent),
    ToolCall(ToolCall),
}

/// Any content block (a pi 1.6 `context_edit` replacement may hold any message's).
#[derive(JsonSchema)]
#[serde(untagged)]
pub(crate) enum ContentBlock {
    Text(TextContent),
    Thinking(ThinkingContent),
    Image(ImageContent),
    ToolCall(ToolCall),
}

/// A user or custom message's `content`: a string, or text and image blocks.
#[derive(JsonSchema)]
#[serde(untagged)]
pub(crate) enum UserContent {
    Text(String),
    Blocks(Vec<UserContentBlock>),
}

// ---- usage ------------------------------------------------------------------------------

/// pi-ai's `Usage` (token counts and cost), as an assistant message, a compaction or branch
/// summary, or a pi 1.6 `usage` entry carries it.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Usage {
    pub(crate) input: f64,
    pub(crate) output: f64,
    pub(crate) cache_read: f64,
    pub(crate) cache_write: f64,
    /// Part of `cacheWrite` written with 1h retention (Anthropic).
    pub(crate) cache_write1h: Option<f64>,
    /// Reasoning tokens, part of `output`, when the provider reports them.
    pub(crate) reasoning: Option<f64>,
    /// pi writes it; files of older pi versions lack it.
    pub(crate) total_tokens: Option<f64>,
    pub(crate) cost: UsageCost,
}

/// The `usage` of a compaction or branch summary: pi's `Usage` when pi wrote it, but stored
/// as the extension or client gave it (a hook's answer, `summaries`, `modelSummary`), so no
/// member is sure to be there.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SummaryUsage {
    pub(crate) input: Option<f64>,
    pub(crate) output: Option<f64>,
    pub(crate) cache_read: Option<f64>,
    pub(crate) cache_write: Option<f64>,
    pub(crate) cache_write1h: Option<f64>,
    pub(crate) reasoning: Option<f64>,
    pub(crate) total_tokens: Option<f64>,
    pub(crate) cost: Option<UsageCost>,
}

/// `Usage.cost`.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UsageCost {
    pub(crate) input: f64,
    pub(crate) output: f64,
    pub(crate) cache_read: f64,
    pub(crate) cache_write: f64,
    pub(crate) total: f64,
    /// pi 1.6: `total` is the provider's billed cost.
    pub(crate) total_from_provider: Option<bool>,
}

// ---- messages ---------------------------------------------------------------------------

/// pi-ai's `UserMessage`.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UserMessage {
    #[schemars(schema_with = "user_role")]
    pub(crate) role: String,
    pub(crate) content: UserContent,
    /// Milliseconds since the epoch.
    pub(crate) timestamp: f64,
}

/// pi-ai's `StopReason` (`pending` and `deferred`: pi 1.6).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "StopReason")]
pub(crate) enum PiStopReason {
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
    Pending,
    Deferred,
}

/// pi-ai's `AssistantMessage`.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AssistantMessage {
    #[schemars(schema_with = "assistant_role")]
    pub(crate) role: String,
    pub(crate) content: Vec<AssistantContentBlock>,
    /// The provider API (pi writes it; older files may lack it).
    pub(crate) api: Option<String>,
    pub(crate) provider: String,
    pub(crate) model: String,
    pub(crate) response_model: Option<String>,
    pub(crate) response_id: Option<String>,
    /// pi 1.6: the provider's own effort level.
    pub(crate) provider_thinking_level: Option<String>,
    /// pi 1.6: the thinking level the agent loop asked for.
    pub(crate) thinking_level: Option<String>,
    pub(crate) diagnostics: Option<Vec<AssistantMessageDiagnostic>>,
    /// pi writes it always; a line written by hand or another program may lack it, and is
    /// answered as the file holds it.
    pub(crate) usage: Option<Usage>,
    pub(crate) stop_reason: PiStopReason,
    /// pi 1.6: the handle of a deferred response.
    pub(crate) deferred: Option<DeferredHandle>,
    pub(crate) error_message: Option<String>,
    pub(crate) timestamp: f64,
}

/// pi-ai's `AssistantMessageDiagnostic`.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AssistantMessageDiagnostic {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) timestamp: f64,
    pub(crate) error: Option<DiagnosticErrorInfo>,
    pub(crate) details: Option<ExtensionData>,
}

/// pi-ai's `DiagnosticErrorInfo`.
#[derive(JsonSchema)]
pub(crate) struct DiagnosticErrorInfo {
    pub(crate) name: Option<String>,
    pub(crate) message: String,
    pub(crate) stack: Option<String>,
    pub(crate) code: Option<StringOrNumber>,
}

/// A string or a number.
#[derive(JsonSchema)]
#[serde(untagged)]
pub(crate) enum StringOrNumber {
    String(String),
    Number(f64),
}

/// pi 1.6's `DeferredHandle`.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DeferredHandle {
    pub(crate) provider: String,
    pub(crate) model_id: String,
    pub(crate) api: String,
    pub(crate) id: String,
    pub(crate) expires_at: Option<f64>,
    pub(crate) poll_after_ms: Option<f64>,
    pub(crate) data: Option<ExtensionData>,
}

/// pi-ai's `ToolResultMessage`.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolResultMessage {
    #[schemars(schema_with = "tool_result_role")]
    pub(crate) role: String,
    pub(crate) tool_call_id: String,
    pub(crate) tool_name: String,
    pub(crate) content: Vec<UserContentBlock>,
    pub(crate) details: Option<ExtensionData>,
    pub(crate) usage: Option<Usage>,
    /// pi 1.6: tools that became available after this result.
    pub(crate) added_tool_names: Option<Vec<String>>,
    pub(crate) is_error: bool,
    pub(crate) timestamp: f64,
}

/// pi's `BashExecutionMessage` (the `!` command).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BashExecutionMessage {
    #[schemars(schema_with = "bash_execution_role")]
    pub(crate) role: String,
    pub(crate) command: String,
    pub(crate) output: String,
    /// Absent when the command did not exit (cancelled).
    pub(crate) exit_code: Option<f64>,
    pub(crate) cancelled: bool,
    pub(crate) truncated: bool,
    pub(crate) full_output_path: Option<String>,
    pub(crate) timestamp: f64,
    /// `!!`: left out of the model's context.
    pub(crate) exclude_from_context: Option<bool>,
}

/// pi's `CustomMessage` (an extension's `sendMessage`).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CustomMessage {
    #[schemars(schema_with = "custom_role")]
    pub(crate) role: String,
    pub(crate) custom_type: String,
    pub(crate) content: UserContent,
    pub(crate) display: bool,
    pub(crate) details: Option<ExtensionData>,
    pub(crate) timestamp: f64,
}

/// pi's `BranchSummaryMessage` (a `branch_summary` entry in a context).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BranchSummaryMessage {
    #[schemars(schema_with = "branch_summary_role")]
    pub(crate) role: String,
    pub(crate) summary: String,
    pub(crate) from_id: String,
    pub(crate) timestamp: f64,
}

/// pi's `CompactionSummaryMessage` (a `compaction` entry in a context).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompactionSummaryMessage {
    #[schemars(schema_with = "compaction_summary_role")]
    pub(crate) role: String,
    pub(crate) summary: String,
    pub(crate) tokens_before: f64,
    pub(crate) timestamp: f64,
}

/// pi 1.6's `SystemMessage`: the system prompt and tools from this point on.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SystemMessage {
    #[schemars(schema_with = "system_role")]
    pub(crate) role: String,
    pub(crate) content: SystemContent,
    /// Named prompt sections; `null` removes one.
    pub(crate) sections: Option<std::collections::BTreeMap<String, Option<String>>>,
    pub(crate) tools_added: Option<Vec<Tool>>,
    pub(crate) tools_removed: Option<Vec<ToolReference>>,
    pub(crate) timestamp: f64,
}

/// A system message's `content`: a string or text blocks.
#[derive(JsonSchema)]
#[serde(untagged)]
pub(crate) enum SystemContent {
    Text(String),
    Blocks(Vec<TextContent>),
}

/// pi-ai's `Tool`, as a pi 1.6 system message declares it.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Tool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) parameters: ToolParameters,
    /// `false`, or the provider-side constrained sampling configuration.
    pub(crate) constrained_sampling: Option<ToolParameters>,
}

/// pi-ai's `ToolReference`.
#[derive(JsonSchema)]
pub(crate) struct ToolReference {
    pub(crate) name: String,
}

/// pi-agent-core's `AgentMessage` as pi-coding-agent extends it: a model message (user,
/// assistant, toolResult; pi 1.6: system) or one of pi's own (bashExecution, custom,
/// branchSummary, compactionSummary), discriminated on `role`. A role none of these has is
/// answered as it is (see UnknownMessage).
#[derive(JsonSchema)]
#[serde(untagged)]
pub(crate) enum AgentMessage {
    User(UserMessage),
    Assistant(AssistantMessage),
    ToolResult(ToolResultMessage),
    BashExecution(BashExecutionMessage),
    Custom(CustomMessage),
    BranchSummary(BranchSummaryMessage),
    CompactionSummary(CompactionSummaryMessage),
    System(SystemMessage),
}

/// A message as the server answers it: one of `AgentMessage`, or a passthrough.
#[derive(JsonSchema)]
#[serde(untagged)]
pub(crate) enum AnyMessage {
    Known(AgentMessage),
    Unknown(UnknownMessage),
}

// ---- entries ----------------------------------------------------------------------------

/// The members every entry has (pi's `SessionEntryBase`).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EntryBase {
    pub(crate) id: String,
    /// `null` for a root.
    pub(crate) parent_id: Nullable<String>,
    /// ISO 8601.
    pub(crate) timestamp: String,
}

macro_rules! entries {
    ($(
        $(#[$doc:meta])*
        $entry:ident / $new:ident = $tag:literal { $($(#[$field_doc:meta])* $field:ident : $ty:ty),* $(,)? }
    )*) => {
        $(
            $(#[$doc])*
            #[derive(JsonSchema)]
            #[serde(rename_all = "camelCase")]
            pub(crate) struct $new {
                #[serde(rename = "type")]
                #[schemars(schema_with = $tag)]
                pub(crate) entry_type: String,
                $($(#[$field_doc])* pub $field: $ty,)*
            }

            $(#[$doc])*
            #[derive(JsonSchema)]
            pub(crate) struct $entry {
                #[serde(flatten)]
                pub(crate) base: EntryBase,
                #[serde(flatten)]
                pub(crate) fields: $new,
            }
        )*

        /// An entry of a session file, discriminated on `type`: pi 0.82.1's kinds, the harness's
        /// (`active_tools_change`, `leaf`) and pi 1.6's (`context_edit`, `usage`). A kind none of
        /// these has is answered as it is (see UnknownEntry).
        #[derive(JsonSchema)]
        #[serde(untagged)]
        pub(crate) enum SessionEntry {
            $($entry($entry),)*
        }

        /// `session/append`'s `entry`: an entry's own members, without `id`, `parentId` and
        /// `timestamp` (the server gives them), discriminated on `type`.
        #[derive(JsonSchema)]
        #[serde(untagged)]
        #[schemars(rename = "NewEntry")]
        pub(crate) enum PiNewEntry {
            $($new($new),)*
        }
    };
}

entries! {
    /// A message (pi's `SessionMessageEntry`).
    MessageEntry / NewMessageEntry = "message_tag" {
        message: AnyMessage,
    }
    /// pi's `ThinkingLevelChangeEntry`.
    ThinkingLevelChangeEntry / NewThinkingLevelChangeEntry = "thinking_level_change_tag" {
        thinking_level: String,
    }
    /// pi's `ModelChangeEntry`.
    ModelChangeEntry / NewModelChangeEntry = "model_change_tag" {
        provider: String,
        model_id: String,
    }
    /// harness only: the active tools from here on.
    ActiveToolsChangeEntry / NewActiveToolsChangeEntry = "active_tools_change_tag" {
        active_tool_names: Vec<String>,
    }
    /// pi's `CompactionEntry`.
    CompactionEntry / NewCompactionEntry = "compaction_tag" {
        summary: String,
        /// The first entry kept after the summary (pi-cli writes it always; pi 1.6 may
        /// write `null`; the harness may leave it out).
        first_kept_entry_id: Option<String>,
        tokens_before: f64,
        details: Option<ExtensionData>,
        usage: Option<SummaryUsage>,
        /// Written by an extension's `session_before_compact`.
        from_hook: Option<bool>,
        /// harness only: the messages kept after the summary.
        retained_tail: Option<Vec<AnyMessage>>,
        /// pi 1.6: the system prompt and tools at the compaction.
        system_message: Option<SystemMessage>,
    }
    /// pi's `BranchSummaryEntry`.
    BranchSummaryEntry / NewBranchSummaryEntry = "branch_summary_tag" {
        /// The entry navigated away from.
        from_id: String,
        summary: String,
        details: Option<ExtensionData>,
        usage: Option<SummaryUsage>,
        from_hook: Option<bool>,
    }
    /// pi's `CustomEntry`: an extension's state, not part of the context.
    CustomEntry / NewCustomEntry = "custom_tag" {
        custom_type: String,
        data: Option<ExtensionData>,
    }
    /// pi's `CustomMessageEntry`: an extension's message, part of the context.
    CustomMessageEntry / NewCustomMessageEntry = "custom_message_tag" {
        custom_type: String,
        content: UserContent,
        details: Option<ExtensionData>,
        display: bool,
    }
    /// pi's `LabelEntry` (no `label`: the label is removed).
    LabelEntry / NewLabelEntry = "label_tag" {
        target_id: String,
        label: Option<String>,
    }
    /// pi's `SessionInfoEntry` (the session's name).
    SessionInfoEntry / NewSessionInfoEntry = "session_info_tag" {
        name: Option<String>,
    }
    /// harness only: the leaf moved (`null`: before the first entry).
    LeafEntry / NewLeafEntry = "leaf_tag" {
        target_id: Nullable<String>,
    }
    /// pi 1.6 only: an earlier entry's part of the context replaced (`null`: left out).
    ContextEditEntry / NewContextEditEntry = "context_edit_tag" {
        target_id: String,
        replacement: Nullable<ContextReplacement>,
    }
    /// pi 1.6 only: usage outside a message (e.g. `cache_warm`).
    UsageEntry / NewUsageEntry = "usage_tag" {
        kind: String,
        provider: String,
        model: String,
        usage: Usage,
        note: Option<String>,
    }
}

/// A `context_edit`'s replacement content.
#[derive(JsonSchema)]
pub(crate) struct ContextReplacement {
    pub(crate) content: ContextEditableContent,
}

/// What a `context_edit` may put in place of a message's content.
#[derive(JsonSchema)]
#[serde(untagged)]
pub(crate) enum ContextEditableContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

/// An entry as the server answers it: one of `SessionEntry`, or a passthrough.
#[derive(JsonSchema)]
#[serde(untagged)]
pub(crate) enum AnyEntry {
    Known(SessionEntry),
    Unknown(UnknownEntry),
}

/// pi's `SessionHeader`, the file's first line (harness: with `metadata`).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionHeader {
    #[serde(rename = "type")]
    #[schemars(schema_with = "session_tag")]
    pub(crate) kind: String,
    /// The format version (3; absent in version 1 files).
    pub(crate) version: Option<f64>,
    pub(crate) id: String,
    pub(crate) timestamp: String,
    pub(crate) cwd: String,
    /// The session file this one was forked from.
    pub(crate) parent_session: Option<String>,
    /// harness only.
    pub(crate) metadata: Option<HarnessMetadata>,
}

// ---- listing rows -------------------------------------------------------------------------

/// pi's `SessionInfo` as JSON (dates as ISO 8601 strings). Every member is present unless
/// `fields` names fewer; `name` and `parentSessionPath` only when the session has them.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionInfoRow {
    pub(crate) path: Option<String>,
    pub(crate) id: Option<String>,
    /// The header's cwd (`""` for old sessions).
    pub(crate) cwd: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) parent_session_path: Option<String>,
    pub(crate) created: Option<String>,
    pub(crate) modified: Option<String>,
    pub(crate) message_count: Option<f64>,
    pub(crate) first_message: Option<String>,
    pub(crate) all_messages_text: Option<String>,
}

/// The harness's `JsonlSessionMetadata`: a listing row of `profile: harness`.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HarnessSessionRow {
    pub(crate) id: String,
    pub(crate) created_at: String,
    pub(crate) cwd: String,
    pub(crate) path: String,
    pub(crate) parent_session_path: Option<String>,
    pub(crate) metadata: Option<HarnessMetadata>,
}

/// A row of `session/list`/`listAll`: pi's `SessionInfo` (pi-cli, pi-1.6), or the harness's
/// `JsonlSessionMetadata`.
#[derive(JsonSchema)]
#[serde(untagged)]
pub(crate) enum SessionRow {
    Pi(SessionInfoRow),
    Harness(HarnessSessionRow),
}

// ---- preparations and summary requests -------------------------------------------------------

/// pi's `TreePreparation` (`session_before_tree`'s `preparation`).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "TreePreparation")]
pub(crate) struct PiTreePreparation {
    pub(crate) target_id: String,
    pub(crate) old_leaf_id: Nullable<String>,
    pub(crate) common_ancestor_id: Nullable<String>,
    /// The entries of the branch left, oldest first.
    pub(crate) entries_to_summarize: Vec<AnyEntry>,
    pub(crate) user_wants_summary: bool,
    pub(crate) custom_instructions: Option<String>,
    pub(crate) replace_instructions: Option<bool>,
    pub(crate) label: Option<String>,
}

/// pi's `FileOperations`, its sets as arrays in insertion order.
#[derive(JsonSchema)]
pub(crate) struct FileOperations {
    pub(crate) read: Vec<String>,
    pub(crate) written: Vec<String>,
    pub(crate) edited: Vec<String>,
}

/// pi's `CompactionSettings` in force.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "CompactionSettings")]
pub(crate) struct PiCompactionSettings {
    pub(crate) enabled: bool,
    pub(crate) reserve_tokens: f64,
    pub(crate) keep_recent_tokens: f64,
}

/// pi's `CompactionPreparation` (`session_before_compact`'s `preparation`).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompactionPreparation {
    pub(crate) first_kept_entry_id: Option<String>,
    pub(crate) messages_to_summarize: Vec<AnyMessage>,
    pub(crate) turn_prefix_messages: Vec<AnyMessage>,
    /// harness only.
    pub(crate) retained_tail: Option<Vec<AnyMessage>>,
    pub(crate) is_split_turn: bool,
    pub(crate) tokens_before: f64,
    pub(crate) previous_summary: Option<String>,
    pub(crate) file_ops: FileOperations,
    pub(crate) settings: PiCompactionSettings,
}

/// The entries behind each list of a compaction preparation.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompactionEntryIds {
    pub(crate) history: Vec<String>,
    pub(crate) turn_prefix: Vec<String>,
    pub(crate) kept: Vec<String>,
}

/// What a summarizing request is for.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) enum SummaryPurpose {
    /// The history before the kept messages (compaction).
    History,
    /// The start of a split turn (compaction).
    TurnPrefix,
    /// The branch left by a navigation.
    BranchSummary,
}

/// A model request pi's `compact()` or `generateBranchSummary` would make: send it to the
/// model, and give its answer's text back (`summaries`, `modelSummary`).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SummaryRequest {
    pub(crate) purpose: SummaryPurpose,
    /// pi-cli and harness (pi 1.6 sends the system prompt as the first message instead).
    pub(crate) system_prompt: Option<String>,
    /// pi 1.6: a system message, then the user message.
    pub(crate) messages: Vec<AgentMessage>,
    /// pi-cli and harness (pi 1.6 asks for no limit).
    pub(crate) max_tokens: Option<f64>,
    /// The thinking level, when the model reasons and it is not off.
    pub(crate) reasoning: Option<String>,
    #[schemars(schema_with = "none_retention")]
    pub(crate) cache_retention: String,
}

/// What pi's `generateBranchSummary` would be given (`branchSummary` of
/// `session/prepareTree` and `session_before_tree`).
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BranchSummaryPlan {
    pub(crate) context_window: f64,
    pub(crate) reserve_tokens: f64,
    pub(crate) token_budget: f64,
    pub(crate) messages: Vec<AnyMessage>,
    pub(crate) total_tokens: f64,
    pub(crate) file_ops: FileOperations,
    pub(crate) read_files: Vec<String>,
    pub(crate) modified_files: Vec<String>,
    pub(crate) file_lists_text: String,
    /// `null`: nothing to send to a model.
    pub(crate) request: Nullable<SummaryRequest>,
}
