//! `protocol/schema.json` is generated from the Rust types: this test fails when the committed
//! file differs from what the code generates, or when the schema leaves out a method, hook or
//! notification the server offers. Regenerate with `UPDATE_SCHEMA=1 cargo test --test schema`.

use std::path::Path;

use pi_session::internal::rpc::schema::{protocol_schema, schema_method_names};
use pi_session::internal::rpc::sidecar;
use serde_json::Value;

fn keys(schema: &Value, section: &str) -> Vec<String> {
    let mut keys: Vec<String> = schema[section]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

#[test]
fn the_committed_schema_is_what_the_code_generates() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/schema.json");
    let generated = format!(
        "{}\n",
        serde_json::to_string_pretty(&protocol_schema()).unwrap()
    );
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "protocol/schema.json is out of date with the Rust types: run `UPDATE_SCHEMA=1 cargo test --test schema` and commit the result"
    );
}

#[test]
fn the_schema_covers_every_message_the_server_knows() {
    let schema = protocol_schema();
    let methods = sidecar::methods();
    let mut listed = schema_method_names(&schema);
    listed.sort();
    assert_eq!(listed, methods.request_names(), "methods");
    assert_eq!(keys(&schema, "hooks"), methods.hook_names(), "hooks");
    let mut notifications = methods.server_notification_names();
    notifications.push("$/cancelRequest".into());
    notifications.sort();
    assert_eq!(keys(&schema, "notifications"), notifications);
    assert_eq!(
        keys(&schema, "clientNotifications"),
        methods.notification_names()
    );
}

#[test]
fn every_reference_resolves() {
    fn walk(value: &Value, definitions: &serde_json::Map<String, Value>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(target)) = map.get("$ref") {
                    let name = target
                        .strip_prefix("#/definitions/")
                        .unwrap_or_else(|| panic!("unexpected $ref {target}"));
                    assert!(definitions.contains_key(name), "dangling $ref {target}");
                }
                map.values().for_each(|v| walk(v, definitions));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, definitions)),
            _ => {}
        }
    }
    let schema = protocol_schema();
    let definitions = schema["definitions"].as_object().unwrap();
    walk(&schema, definitions);
}

#[test]
fn protocol_md_states_the_current_protocol_version_and_its_history() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/protocol.md"))
            .unwrap();
    let version = pi_session::internal::rpc::PROTOCOL_VERSION;
    assert!(
        text.contains(&format!("\"protocolVersion\": \"{version}\"")),
        "protocol.md's initialize example answers {version}"
    );
    let history = &text[text.find("\n## History").expect("a History section")..];
    assert!(
        history.contains(&format!("**{version}**")),
        "protocol.md's History lists what changed in {version}"
    );
}
