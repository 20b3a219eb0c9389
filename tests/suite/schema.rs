//! `protocol/schema.json` is generated from the Rust types: this test fails when the committed
//! file differs from what the code generates, or when the schema leaves out a method, hook or
//! notification the server offers. Regenerate with `scripts/regenerate-protocol.sh` (the schema
//! and the clients' types made from it) or `UPDATE_SCHEMA=1 cargo test --test suite -- schema::`.

use crate::support;

use std::path::Path;

use pi_session::jsonrpc::ServerState;
use pi_session::sidecar::schema::{protocol_schema, schema_method_names};
use pi_session::sidecar::session_server;
use serde_json::Value;

fn keys(schema: &Value, section: &str) -> Vec<String> {
    let mut keys: Vec<String> = schema[section]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

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
        "protocol/schema.json is out of date with the Rust types: run `scripts/regenerate-protocol.sh` (the schema, then the clients' types made from it; the schema alone: `UPDATE_SCHEMA=1 cargo test --test suite -- schema::`) and commit the result"
    );
}

fn the_schema_covers_every_message_the_server_knows() {
    let schema = protocol_schema();
    let methods = session_server::methods();
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

fn protocol_md_states_the_current_protocol_version_and_its_history() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/protocol.md"))
            .unwrap();
    let version = pi_session::jsonrpc::PROTOCOL_VERSION;
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

/// The definitions that stay open on purpose: extension payloads, and the passthrough of entry
/// and message kinds pi does not declare (kept by the reader, answered as they are).
const OPEN_DEFINITIONS: [&str; 6] = [
    "ExtensionData",
    "ToolArguments",
    "HarnessMetadata",
    "ToolParameters",
    "UnknownEntry",
    "UnknownMessage",
];

/// Every schema reachable from a method, hook or notification says what it holds: no `true`,
/// no `{}`, no object without members, except in the open definitions above.
fn nothing_reachable_is_untyped_but_the_extension_payloads() {
    fn untyped(node: &serde_json::Map<String, Value>) -> bool {
        let typed = [
            "type", "$ref", "anyOf", "allOf", "oneOf", "enum", "const", "not",
        ];
        if !typed.iter().any(|k| node.contains_key(*k)) {
            return true;
        }
        let is_object = node.get("type") == Some(&Value::String("object".into()));
        let no_members = node
            .get("properties")
            .and_then(Value::as_object)
            .is_none_or(|p| p.is_empty());
        let open_members = match node.get("additionalProperties") {
            None | Some(Value::Bool(true)) => true,
            Some(Value::Object(schema)) => untyped(schema),
            _ => false,
        };
        is_object && no_members && open_members
    }
    fn walk(
        node: &Value,
        path: &str,
        definitions: &serde_json::Map<String, Value>,
        seen: &mut std::collections::BTreeSet<String>,
        found: &mut Vec<String>,
    ) {
        let object = match node {
            Value::Bool(true) => return found.push(format!("{path}: true")),
            Value::Object(object) => object,
            _ => return,
        };
        if untyped(object) {
            found.push(format!("{path}: {node}"));
        }
        if let Some(Value::String(target)) = object.get("$ref") {
            let name = target.trim_start_matches("#/definitions/").to_owned();
            if !OPEN_DEFINITIONS.contains(&name.as_str()) && seen.insert(name.clone()) {
                walk(&definitions[&name], &name, definitions, seen, found);
            }
        }
        for (key, member) in object {
            match (key.as_str(), member) {
                ("properties", Value::Object(properties)) => {
                    for (name, schema) in properties {
                        walk(schema, &format!("{path}.{name}"), definitions, seen, found);
                    }
                }
                ("items" | "additionalProperties" | "not", schema) => {
                    walk(schema, &format!("{path}[{key}]"), definitions, seen, found)
                }
                ("anyOf" | "allOf" | "oneOf", Value::Array(options)) => {
                    for (i, schema) in options.iter().enumerate() {
                        walk(schema, &format!("{path}|{i}"), definitions, seen, found);
                    }
                }
                _ => {}
            }
        }
    }
    let schema = protocol_schema();
    let definitions = schema["definitions"].as_object().unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let mut found = Vec::new();
    for section in ["methods", "hooks", "notifications", "clientNotifications"] {
        for (name, message) in schema[section].as_object().unwrap() {
            for (part, fragment) in message.as_object().unwrap() {
                let path = format!("{section}.{name}.{part}");
                walk(fragment, &path, definitions, &mut seen, &mut found);
            }
        }
    }
    assert!(
        found.is_empty(),
        "untyped schemas reachable from the protocol (type them, or name the definition an extension payload):\n{}",
        found.join("\n")
    );
    for name in OPEN_DEFINITIONS {
        assert!(
            definitions.contains_key(name),
            "{name} is gone: drop it from the list"
        );
    }
}

/// The check the transcripts run (`support::schema_check`) refuses what pi's types do not
/// allow, and lets entries of kinds pi does not declare through.
fn the_validator_refuses_what_pi_does_not_write() {
    use serde_json::json;
    use support::schema_check::ProtocolSchema;
    // The committed file: regenerate it first when this fails with the types changed.
    let schema = ProtocolSchema::committed();
    let entry = |value: Value| {
        schema
            .check("methods", "session/getEntry", "result", &value)
            .unwrap()
    };
    let base = json!({"id": "a", "parentId": null, "timestamp": "2025-01-01T00:00:00.000Z"});
    let with = |members: Value| {
        let mut value = base.clone();
        value
            .as_object_mut()
            .unwrap()
            .extend(members.as_object().unwrap().clone());
        value
    };
    let user = json!({"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1});
    assert_eq!(
        entry(with(json!({"type": "message", "message": user}))),
        Vec::<String>::new()
    );
    assert_eq!(
        entry(with(json!({"type": "pi_2_thing", "anything": [1]}))),
        Vec::<String>::new()
    );
    for bad in [
        json!({"type": "message"}),
        json!({"type": "message", "message": {"role": "user", "content": [{"type": "video"}], "timestamp": 1}}),
        json!({"type": "message", "message": {"role": "assistant", "content": "text", "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 1}}),
        json!({"type": "label", "targetId": 5}),
        json!({"type": "leaf"}),
        json!({"type": "compaction", "summary": "s"}),
    ] {
        assert!(!entry(with(bad.clone())).is_empty(), "accepted {bad}");
    }
}

/// The capability the table names for a method is a member `initialize` answers in
/// `capabilities`, and one that says yes (true, or a non-empty list or map) in what the
/// sidecar sends.
fn a_methods_capability_is_one_initialize_advertises() {
    let schema = protocol_schema();
    let members = &schema["definitions"]["Capabilities"]["properties"];
    let table = session_server::methods();
    let named: Vec<(&str, &str)> = table
        .requests()
        .iter()
        .filter_map(|m| Some((m.name.as_str(), m.capability?)))
        .collect();
    assert!(!named.is_empty(), "the table names no capability");
    let advertised = serde_json::to_value(session_server::Sidecar::default().capabilities())
        .expect("capabilities serialize");
    for (method, capability) in named {
        assert!(
            members.get(capability).is_some(),
            "{method}: capabilities has no member '{capability}' in schema.json"
        );
        let says_yes = match &advertised[capability] {
            Value::Bool(yes) => *yes,
            Value::Array(items) => !items.is_empty(),
            Value::Object(members) => !members.is_empty(),
            _ => false,
        };
        assert!(
            says_yes,
            "{method}: capabilities.{capability} does not advertise it"
        );
    }
}

/// protocol.md's method index is the method table's: every request with its kind, the
/// definitions of its params and result, and the member of `initialize`'s `capabilities` that
/// advertises it.
fn protocol_md_indexes_the_method_table() {
    fn shown(fragment: &Value) -> String {
        if let Some(target) = fragment.get("$ref").and_then(Value::as_str) {
            return format!("`{}`", target.trim_start_matches("#/definitions/"));
        }
        if fragment.get("type") == Some(&Value::String("null".into())) {
            return "`null`".into();
        }
        panic!("a message whose params or result is not a definition: {fragment}")
    }
    let schema = protocol_schema();
    let mut index =
        String::from("| method | kind | params | result | capability |\n|---|---|---|---|---|\n");
    for (name, message) in schema["methods"].as_object().unwrap() {
        let kind = message["x-kind"].as_str().unwrap_or("lifecycle");
        let capability = message["x-capability"]
            .as_str()
            .map_or_else(String::new, |c| format!("`{c}`"));
        index.push_str(&format!(
            "| `{name}` | {kind} | {} | {} | {capability} |\n",
            shown(&message["params"]),
            shown(&message["result"])
        ));
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/protocol.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let (start, end) = ("<!-- method-index:start -->\n", "<!-- method-index:end -->");
    let from = text.find(start).expect("protocol.md has a method index") + start.len();
    let to = text.find(end).expect("the method index ends");
    if std::env::var_os("UPDATE_SCHEMA").is_some_and(|v| v == "1") {
        std::fs::write(&path, format!("{}{index}{}", &text[..from], &text[to..])).unwrap();
        return;
    }
    assert!(
        text[from..to] == index,
        "protocol.md's method index differs from the method table: run `UPDATE_SCHEMA=1 cargo test --test suite -- schema::` and commit the result"
    );
}

crate::tests! {
    the_committed_schema_is_what_the_code_generates,
    the_schema_covers_every_message_the_server_knows,
    every_reference_resolves,
    protocol_md_states_the_current_protocol_version_and_its_history,
    initialize_answers_exactly_what_the_schema_describes,
    nothing_reachable_is_untyped_but_the_extension_payloads,
    the_validator_refuses_what_pi_does_not_write,
    a_methods_capability_is_one_initialize_advertises,
    protocol_md_indexes_the_method_table,
}
