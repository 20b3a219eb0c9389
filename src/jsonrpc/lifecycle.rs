//! The lifecycle's wire types and the settings `initialize` establishes.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::error::RpcError;
use super::framing::{DEFAULT_MAX_FRAME_BYTES, Framing, WireFraming};
use super::pressure::Limits;

/// The name in `serverInfo`.
pub const SERVER_NAME: &str = "pi-session";

/// The version of the wire protocol in `protocol/protocol.md`, answered by `initialize`.
pub const PROTOCOL_VERSION: &str = "0.9";

/// How long a hook may go unanswered when `initialize` does not say.
pub const DEFAULT_HOOK_TIMEOUT_MS: u64 = 5000;

/// Where the deterministic clock starts when no `startTime` is given.
pub const DEFAULT_DETERMINISTIC_START: &str = "2025-01-01T00:00:00.000Z";

/// How often the parent process named by `processId` is checked.
pub const DEFAULT_PARENT_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// Options of the server itself, from the command line (or a test).
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// How the client frames messages.
    pub framing: Framing,
    /// Frames above this size are rejected without being read into memory.
    pub max_frame_bytes: usize,
    /// Deterministic mode from `--deterministic`; `initialize.deterministic` overrides it.
    pub deterministic: Option<Deterministic>,
    /// How often the parent process is checked for life.
    pub parent_poll_interval: Duration,
    /// When the server stops starting new requests (backpressure).
    pub limits: Limits,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            framing: Framing::Auto,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            deterministic: None,
            parent_poll_interval: DEFAULT_PARENT_POLL_INTERVAL,
            limits: Limits::default(),
        }
    }
}

/// Reproducible ids and timestamps: ids drawn from a generator seeded with `seed`, and a clock
/// that starts at `start_time` and advances 1 ms per use. The store implements both; this is
/// only the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deterministic {
    /// Seed for id generation.
    pub seed: u64,
    /// The clock's first reading.
    pub start_time: DateTime<Utc>,
}

impl Default for Deterministic {
    fn default() -> Self {
        Deterministic {
            seed: 0,
            start_time: DateTime::parse_from_rfc3339(DEFAULT_DETERMINISTIC_START)
                .map(|t| t.with_timezone(&Utc))
                .unwrap_or_default(),
        }
    }
}

/// How [`Deterministic`] travels: `{seed, startTime}` (the schema of its `Serialize`).
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct DeterministicWire {
    /// Seed for id generation.
    seed: u64,
    /// The clock's first reading (RFC 3339, milliseconds, UTC).
    start_time: String,
}

/// `initialize.deterministic` as a client writes it (the schema of
/// `deserialize_deterministic`).
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // a schema only
enum DeterministicParam {
    /// `true`: seed 0, clock from 2025-01-01T00:00:00.000Z; `false`: off.
    Switch(bool),
    /// Either member may be left out.
    Options {
        seed: Option<u64>,
        #[serde(rename = "startTime")]
        start_time: Option<String>,
    },
}

impl Serialize for Deterministic {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        DeterministicWire {
            seed: self.seed,
            start_time: self.start_time.to_rfc3339_opts(SecondsFormat::Millis, true),
        }
        .serialize(serializer)
    }
}

/// Who the client is, as it says in `initialize`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClientInfo {
    /// The client's name.
    pub name: String,
    /// The client's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// `initialize` params. Unknown members are ignored, so newer clients can talk to this server.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// Who the client is.
    #[serde(default)]
    pub client_info: Option<ClientInfo>,
    /// The client's process id: when that process dies, the server exits.
    #[serde(default)]
    pub process_id: Option<i64>,
    /// The hooks (server -> client requests) the client answers; no others are ever sent.
    #[serde(default)]
    pub hooks: Vec<String>,
    /// How long the server waits for a hook answer, in milliseconds.
    #[serde(default = "default_hook_timeout_ms")]
    pub hook_timeout_ms: u64,
    /// `true`, `false`, or `{seed?, startTime?}`; replaces `--deterministic` when present.
    #[serde(default, deserialize_with = "deserialize_deterministic")]
    #[schemars(with = "Option<DeterministicParam>")]
    pub deterministic: Option<DeterministicSwitch>,
}

fn default_hook_timeout_ms() -> u64 {
    DEFAULT_HOOK_TIMEOUT_MS
}

/// What `initialize.deterministic` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeterministicSwitch {
    /// `false`: real ids and clock, whatever the command line said.
    Off,
    /// `true` or an object.
    On(Deterministic),
}

fn deserialize_deterministic<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<DeterministicSwitch>, D::Error> {
    use serde::de::Error;
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Options {
        #[serde(default)]
        seed: Option<u64>,
        #[serde(default)]
        start_time: Option<String>,
    }
    match Value::deserialize(deserializer)? {
        Value::Null => Ok(None),
        Value::Bool(false) => Ok(Some(DeterministicSwitch::Off)),
        Value::Bool(true) => Ok(Some(DeterministicSwitch::On(Deterministic::default()))),
        value @ Value::Object(_) => {
            let options = Options::deserialize(value).map_err(D::Error::custom)?;
            let mut deterministic = Deterministic::default();
            if let Some(seed) = options.seed {
                deterministic.seed = seed;
            }
            if let Some(start) = options.start_time {
                deterministic.start_time = DateTime::parse_from_rfc3339(&start)
                    .map_err(|e| {
                        D::Error::custom(format!(
                            "startTime {start:?} is not an RFC 3339 timestamp: {e}"
                        ))
                    })?
                    .with_timezone(&Utc);
            }
            Ok(Some(DeterministicSwitch::On(deterministic)))
        }
        _ => Err(D::Error::custom(
            "expected true, false or an object {seed, startTime}",
        )),
    }
}

/// What the client and the command line settled on; every method can read it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientSettings {
    /// Who the client is.
    pub client_info: Option<ClientInfo>,
    /// The parent process watched for life, if any.
    pub process_id: Option<i32>,
    /// The hooks the client answers.
    pub hooks: BTreeSet<String>,
    /// How long to wait for a hook answer.
    #[serde(rename = "hookTimeoutMs", serialize_with = "serialize_millis")]
    #[schemars(with = "u64")]
    pub hook_timeout: Duration,
    /// Reproducible ids and timestamps, when on.
    #[schemars(with = "Option<DeterministicWire>")]
    pub deterministic: Option<Deterministic>,
    /// The framing on the wire.
    pub framing: WireFraming,
}

fn serialize_millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl ClientSettings {
    /// Validates `params` and merges them with the command line's options.
    pub fn new(
        params: InitializeParams,
        options: &ServerOptions,
        framing: WireFraming,
    ) -> Result<Self, RpcError> {
        let process_id = match params.process_id {
            None => None,
            // 0 and negative numbers name process groups to kill(2): never accept them.
            Some(pid) => match i32::try_from(pid) {
                Ok(pid) if pid > 0 => Some(pid),
                _ => {
                    return Err(RpcError::invalid_params(format!(
                        "'processId': {pid} is not a process id"
                    )));
                }
            },
        };
        if params.hook_timeout_ms == 0 {
            return Err(RpcError::invalid_params(
                "'hookTimeoutMs': must be at least 1",
            ));
        }
        let deterministic = match params.deterministic {
            None => options.deterministic,
            Some(DeterministicSwitch::Off) => None,
            Some(DeterministicSwitch::On(d)) => Some(d),
        };
        Ok(ClientSettings {
            client_info: params.client_info,
            process_id,
            hooks: params.hooks.into_iter().collect(),
            hook_timeout: Duration::from_millis(params.hook_timeout_ms),
            deterministic,
            framing,
        })
    }
}

// As the schema shows it: `rpc/schema.rs` adds the application's own members of `settings`
// and `capabilities` there; what is sent is this with them in place (`InitializeAnswer`).
/// The `initialize` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// Name and version of this program.
    pub server_info: ServerInfo,
    /// [`PROTOCOL_VERSION`].
    pub protocol_version: &'static str,
    /// Every request method the client may call, sorted.
    pub methods: Vec<String>,
    /// What the server does beyond plain requests.
    pub capabilities: Capabilities,
    /// The settings in force, as the server understood them.
    pub settings: ClientSettings,
}

/// `serverInfo`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ServerInfo {
    /// [`SERVER_NAME`].
    pub name: &'static str,
    /// The package version.
    pub version: &'static str,
}

impl Default for ServerInfo {
    fn default() -> Self {
        ServerInfo {
            name: SERVER_NAME,
            version: env!("CARGO_PKG_VERSION"),
        }
    }
}

/// `capabilities` in the `initialize` result.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// Notifications the client may send, sorted.
    pub client_notifications: Vec<String>,
    /// Hooks the server may send (only those the client declared are ever sent), sorted.
    pub hooks: Vec<String>,
    /// Notifications the server may send, sorted.
    pub notifications: Vec<String>,
    /// `$/cancelRequest` is understood in both directions.
    pub cancel_request: bool,
    /// Batches are refused.
    pub batches: bool,
    /// The frame size limit in bytes.
    pub max_frame_bytes: usize,
    /// Requests read and not yet answered above which no new request starts (backpressure).
    pub max_pending_requests: usize,
    /// Bytes of output not yet read by the client above which no new request starts.
    pub max_unsent_bytes: usize,
}

/// The `initialize` result as sent: [`InitializeResult`] with the application's own settings
/// `A` and capabilities `C` in place, serialized from their types.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeAnswer<'a, A, C> {
    pub server_info: &'a ServerInfo,
    pub protocol_version: &'static str,
    pub methods: &'a [String],
    pub capabilities: WithApplication<&'a Capabilities, &'a C>,
    pub settings: SettingsAnswer<'a, A>,
}

impl<'a, A, C> InitializeAnswer<'a, A, C> {
    pub(crate) fn new(result: &'a InitializeResult, settings: &'a A, capabilities: &'a C) -> Self {
        InitializeAnswer {
            server_info: &result.server_info,
            protocol_version: result.protocol_version,
            methods: &result.methods,
            capabilities: WithApplication {
                server: &result.capabilities,
                application: capabilities,
            },
            settings: SettingsAnswer::new(&result.settings, settings),
        }
    }
}

/// The server's members and then the application's, in one object.
#[derive(Serialize)]
pub(crate) struct WithApplication<S, A> {
    #[serde(flatten)]
    server: S,
    #[serde(flatten)]
    application: A,
}

/// [`ClientSettings`] as sent, with the application's members where they have always been
/// (after `hookTimeoutMs`): the same members, by reference.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SettingsAnswer<'a, A> {
    client_info: &'a Option<ClientInfo>,
    process_id: Option<i32>,
    hooks: &'a BTreeSet<String>,
    #[serde(rename = "hookTimeoutMs", serialize_with = "serialize_millis")]
    hook_timeout: Duration,
    #[serde(flatten)]
    application: &'a A,
    deterministic: Option<Deterministic>,
    framing: WireFraming,
}

impl<'a, A> SettingsAnswer<'a, A> {
    fn new(settings: &'a ClientSettings, application: &'a A) -> Self {
        SettingsAnswer {
            client_info: &settings.client_info,
            process_id: settings.process_id,
            hooks: &settings.hooks,
            hook_timeout: settings.hook_timeout,
            application,
            deterministic: settings.deterministic,
            framing: settings.framing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(params: Value, options: &ServerOptions) -> Result<ClientSettings, String> {
        let params: InitializeParams = serde_json::from_value(params).map_err(|e| e.to_string())?;
        ClientSettings::new(params, options, WireFraming::Ndjson).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults() {
        let s = settings(json!({}), &ServerOptions::default()).unwrap();
        assert_eq!(s.hook_timeout, Duration::from_millis(5000));
        assert_eq!(s.deterministic, None);
        assert!(s.hooks.is_empty());
    }

    #[test]
    fn deterministic_from_flag_and_initialize() {
        let flag = ServerOptions {
            deterministic: Some(Deterministic::default()),
            ..ServerOptions::default()
        };
        let s = settings(json!({}), &flag).unwrap();
        assert_eq!(s.deterministic, Some(Deterministic::default()));
        let s = settings(json!({"deterministic": false}), &flag).unwrap();
        assert_eq!(s.deterministic, None);
        let s = settings(
            json!({"deterministic": {"seed": 7, "startTime": "2024-02-03T04:05:06.007+01:00"}}),
            &ServerOptions::default(),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(s.deterministic).unwrap(),
            json!({"seed": 7, "startTime": "2024-02-03T03:05:06.007Z"})
        );
        let error =
            settings(json!({"deterministic": {"startTime": "yesterday"}}), &flag).unwrap_err();
        assert!(error.contains("startTime"), "{error}");
    }

    #[test]
    fn the_settings_sent_are_the_settings_with_the_applications_members_in_place() {
        let s = settings(
            json!({"clientInfo": {"name": "c"}, "hooks": ["h"], "deterministic": true}),
            &ServerOptions::default(),
        )
        .unwrap();
        let plain = serde_json::to_string(&s).unwrap();
        let sent = serde_json::to_string(&SettingsAnswer::new(&s, &super::super::Nothing {}));
        assert_eq!(sent.unwrap(), plain);
        let mut application = serde_json::Map::new();
        application.insert("sessionsRoot".into(), json!("/s"));
        let sent = serde_json::to_value(SettingsAnswer::new(&s, &application)).unwrap();
        let keys: Vec<&str> = sent
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "clientInfo",
                "processId",
                "hooks",
                "hookTimeoutMs",
                "sessionsRoot",
                "deterministic",
                "framing"
            ]
        );
    }

    #[test]
    fn process_ids_that_kill_would_read_as_groups_are_refused() {
        for pid in [0, -1, i64::from(i32::MAX) + 1] {
            let error = settings(json!({"processId": pid}), &ServerOptions::default());
            assert!(error.unwrap_err().contains("processId"));
        }
        let s = settings(json!({"processId": 42}), &ServerOptions::default()).unwrap();
        assert_eq!(s.process_id, Some(42));
    }
}
