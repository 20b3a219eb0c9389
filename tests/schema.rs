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

/// The schema's `Capabilities` and `ClientSettings` list exactly the members the sidecar's
/// `initialize` answers with, its own (`profiles`, `defaultProfile`, ...) included, each required
/// one present: a typed client generated from the schema sees every capability.
#[test]
fn initialize_answers_exactly_what_the_schema_describes() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_pi-session"))
        .arg("--stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"exit"}"#,
        "\n"
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let first = String::from_utf8_lossy(&output.stdout);
    let answer: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    let result = &answer["result"];
    let schema = protocol_schema();
    let definitions = &schema["definitions"];
    for (member, definition) in [
        ("capabilities", "Capabilities"),
        ("settings", "ClientSettings"),
    ] {
        let mut answered: Vec<&String> = result[member].as_object().unwrap().keys().collect();
        answered.sort();
        let properties = definitions[definition]["properties"].as_object().unwrap();
        let mut described: Vec<&String> = properties.keys().collect();
        described.sort();
        assert_eq!(answered, described, "{member} against {definition}");
        for required in definitions[definition]["required"].as_array().unwrap() {
            assert!(
                result[member].get(required.as_str().unwrap()).is_some(),
                "{member} lacks required {required}"
            );
        }
    }
    assert_eq!(
        result["capabilities"]["profiles"],
        serde_json::json!(["pi-cli", "pi-1.6", "harness"])
    );
}
