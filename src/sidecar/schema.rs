//! `protocol/schema.json`: the JSON Schema of every message, generated from the Rust types that
//! (de)serialize them, so the written protocol cannot drift from the code (a test compares the
//! committed file with [`protocol_schema`]; `UPDATE_SCHEMA=1 cargo test --test suite -- schema::`
//! rewrites it).
//!
//! The document is a draft-07 schema whose `definitions` hold every type; the extension
//! members `methods`, `hooks`, `clientNotifications` and `notifications` map each message name
//! to the `$ref`s of its params and result (and, for a method, `x-kind`: `serial` or
//! `concurrent`, and `x-capability`: the member of `initialize`'s `capabilities` that
//! advertises it, if one does). Everything but the lifecycle's own messages comes from the method table
//! ([`super::session_server::methods`]), where each method is declared once.

use schemars::JsonSchema;
use schemars::r#gen::{SchemaGenerator, SchemaSettings};
use schemars::schema::Schema;
use serde_json::{Map, Value, json};

use super::{SidecarCapabilities, SidecarSettings};
use crate::jsonrpc::{InitializeParams, InitializeResult, PROTOCOL_VERSION};
use crate::jsonrpc::{Message, SchemaOf};

/// `$/cancelRequest` params, in both directions.
#[derive(JsonSchema)]
#[allow(dead_code)] // a schema only
struct CancelRequest {
    /// The id of the request to cancel.
    id: RequestId,
}

/// A request id: a string or a non-negative integer.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // a schema only
enum RequestId {
    Number(u64),
    String(String),
}

/// The params of `shutdown`, `initialized` and `exit`: none, `null` or `{}` (what LSP clients
/// send with `initialized`). The server ignores them.
struct NoParams;

impl JsonSchema for NoParams {
    fn schema_name() -> String {
        "NoParams".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        serde_json::from_value(json!({
            "description": "No params: omitted, `null` or `{}` (ignored).",
            "anyOf": [{"type": "null"}, {"type": "object", "additionalProperties": false}]
        }))
        .expect("a schema")
    }
}

struct Document {
    generator: SchemaGenerator,
    sections: Map<String, Value>,
}

impl Document {
    fn new() -> Self {
        let settings = SchemaSettings::draft07().with(|s| s.option_add_null_type = true);
        Document {
            generator: settings.into_generator(),
            sections: Map::new(),
        }
    }

    fn schema<T: JsonSchema>(&mut self) -> Value {
        let schema: Schema = self.generator.subschema_for::<T>();
        serde_json::to_value(schema).expect("a schema serializes")
    }

    fn entry(&mut self, section: &str, name: &str, entry: Value) {
        self.sections
            .entry(section.to_owned())
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .expect("a section is an object")
            .insert(name.to_owned(), entry);
    }

    fn method<P: JsonSchema, R: JsonSchema>(&mut self, name: &str) -> &mut Self {
        let entry = json!({"params": self.schema::<P>(), "result": self.schema::<R>()});
        self.entry("methods", name, entry);
        self
    }

    /// A message of the method table, in `section`.
    fn message(&mut self, section: &str, message: &Message) -> &mut Self {
        let mut entry = Map::new();
        entry.insert("params".into(), self.made(message.params));
        if let Some(result) = message.result {
            entry.insert("result".into(), self.made(result));
        }
        if let Some(kind) = message.kind {
            entry.insert("x-kind".into(), json!(kind.name()));
        }
        if let Some(capability) = message.capability {
            entry.insert("x-capability".into(), json!(capability));
        }
        self.entry(section, &message.name, Value::Object(entry));
        self
    }

    fn made(&mut self, schema_of: SchemaOf) -> Value {
        serde_json::to_value(schema_of(&mut self.generator)).expect("a schema serializes")
    }

    fn notification<P: JsonSchema>(&mut self, section: &str, name: &str) -> &mut Self {
        let entry = json!({"params": self.schema::<P>()});
        self.entry(section, name, entry);
        self
    }
}

/// The whole protocol as one JSON Schema document: the lifecycle's own messages, then the
/// sidecar's method table (`sessions::register`) as it is registered.
pub fn protocol_schema() -> Value {
    let table = super::session_server::methods();
    let mut doc = Document::new();
    doc.method::<InitializeParams, InitializeResult>("initialize")
        .method::<NoParams, ()>("shutdown");
    for message in table.requests() {
        doc.message("methods", message);
    }
    for message in table.hooks() {
        doc.message("hooks", message);
    }
    for message in table.server_notifications() {
        doc.message("notifications", message);
    }
    doc.notification::<CancelRequest>("notifications", "$/cancelRequest")
        .notification::<CancelRequest>("clientNotifications", "$/cancelRequest");
    for message in table.notifications() {
        doc.message("clientNotifications", message);
    }
    doc.notification::<NoParams>("clientNotifications", "initialized")
        .notification::<NoParams>("clientNotifications", "exit");
    doc.schema::<SidecarSettings>();
    doc.schema::<SidecarCapabilities>();
    let Document {
        mut generator,
        sections,
    } = doc;
    let mut definitions =
        serde_json::to_value(generator.take_definitions()).expect("definitions serialize");
    merge_sidecar_members(&mut definitions);
    let mut schema = Map::new();
    schema.insert(
        "$schema".into(),
        json!("http://json-schema.org/draft-07/schema#"),
    );
    schema.insert(
        "title".into(),
        json!(format!("pi-session protocol {PROTOCOL_VERSION}")),
    );
    // The old path below is part of schema.json's bytes, which clients pin; it stays until the
    // protocol's next version.
    schema.insert(
        "description".into(),
        json!(
            "Generated from the Rust types (src/rpc/schema.rs); do not edit. `methods`: client -> server requests; \
             `hooks`: server -> client requests; `notifications`: server -> client; `clientNotifications`: \
             client -> server. See protocol/protocol.md."
        ),
    );
    for (name, section) in sections {
        schema.insert(name, section);
    }
    schema.insert("definitions".into(), definitions);
    Value::Object(schema)
}

/// The generic server knows none of the sidecar's members of `initialize`: the sidecar reads
/// its settings from the params (and echoes them in the result's `settings`) and supplies its
/// capabilities through `ServerState::capabilities`. They are shown where clients write and
/// read them, so those definitions are complete and typed.
fn merge_sidecar_members(definitions: &mut Value) {
    merge_into(
        definitions,
        "SidecarSettings",
        &["InitializeParams", "ClientSettings"],
    );
    merge_into(definitions, "SidecarCapabilities", &["Capabilities"]);
}

/// Moves the properties (and required members) of definition `from` into each of `targets`,
/// sorted by name; a target that gets them is then closed (`additionalProperties` dropped:
/// the Rust side's `flatten` left it open only for these members).
fn merge_into(definitions: &mut Value, from: &str, targets: &[&str]) {
    let Some(source) = definitions
        .as_object_mut()
        .and_then(|d| d.shift_remove(from))
    else {
        return;
    };
    let members = source["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let required: Vec<Value> = source["required"].as_array().cloned().unwrap_or_default();
    for target in targets {
        let Some(definition) = definitions[*target].as_object_mut() else {
            continue;
        };
        if let Some(properties) = definition
            .get_mut("properties")
            .and_then(Value::as_object_mut)
        {
            properties.extend(members.clone());
            let mut sorted: Vec<_> = std::mem::take(properties).into_iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            properties.extend(sorted);
        }
        if !required.is_empty() {
            let list = definition
                .entry("required")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Some(list) = list.as_array_mut() {
                list.extend(required.iter().cloned());
                list.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                list.dedup();
            }
        }
        definition.shift_remove("additionalProperties");
    }
}

/// The method names in the schema (for the test that keeps it in step with the method table).
pub fn schema_method_names(schema: &Value) -> Vec<String> {
    schema["methods"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}
