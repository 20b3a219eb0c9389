//! Checks what the server sends against `protocol/schema.json`: each response's result against
//! its method's `result`, each hook request's params against the hook's `params`, each
//! notification's params against the notification's. Messages of names the schema does not
//! know (the test-only methods of `server.state: "test"`) are left alone; the envelope of every
//! message is checked.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use serde_json::{Map, Value, json};

/// The committed schema, and a validator per (section, message, part), made when first used.
pub struct ProtocolSchema {
    schema: Value,
    validators: Mutex<HashMap<(String, String, String), Option<jsonschema::Validator>>>,
}

impl ProtocolSchema {
    /// `protocol/schema.json` of this checkout, read once per test process.
    pub fn committed() -> &'static ProtocolSchema {
        static SCHEMA: OnceLock<ProtocolSchema> = OnceLock::new();
        SCHEMA.get_or_init(|| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/schema.json");
            let text = std::fs::read_to_string(&path).expect("protocol/schema.json");
            ProtocolSchema {
                schema: serde_json::from_str(&text).expect("schema.json is JSON"),
                validators: Mutex::new(HashMap::new()),
            }
        })
    }

    /// The errors of `value` against `section.name.part` (`methods`, `session/open`,
    /// `result`); `None` when the schema has no such message.
    pub fn check(
        &self,
        section: &str,
        name: &str,
        part: &str,
        value: &Value,
    ) -> Option<Vec<String>> {
        let key = (section.to_owned(), name.to_owned(), part.to_owned());
        let mut validators = self.validators.lock().unwrap();
        let validator = validators.entry(key).or_insert_with(|| {
            let fragment = self.schema.get(section)?.get(name)?.get(part)?.clone();
            let mut document = match fragment {
                Value::Object(members) => members,
                Value::Bool(true) => Map::new(),
                other => panic!("{section}.{name}.{part}: unexpected schema {other}"),
            };
            document.insert(
                "$schema".into(),
                json!("http://json-schema.org/draft-07/schema#"),
            );
            document.insert("definitions".into(), self.schema["definitions"].clone());
            let document = Value::Object(document);
            Some(
                jsonschema::draft7::new(&document)
                    .unwrap_or_else(|e| panic!("{section}.{name}.{part}: not a valid schema: {e}")),
            )
        });
        let validator = validator.as_ref()?;
        Some(
            validator
                .iter_errors(value)
                .map(|error| {
                    format!(
                        "{error} at '{}' (schema {section}.{name}.{part}{})",
                        error.instance_path(),
                        error.schema_path()
                    )
                })
                .collect(),
        )
    }
}

/// Every problem with the server's messages in `exchange` (the player's record: `{"client":
/// message}`, `{"server": message}` and the other steps), each naming the message.
/// `sidecar`: the exchange is with the real sidecar (a test server's `initialize` answers no
/// sidecar capabilities).
pub fn exchange_problems(exchange: &[Value], sidecar: bool) -> Vec<String> {
    let schema = ProtocolSchema::committed();
    // The method of each client request by id, as the exchange goes (ids may be reused).
    let mut requests: BTreeMap<String, String> = BTreeMap::new();
    let mut problems = Vec::new();
    for (index, step) in exchange.iter().enumerate() {
        if let Some(Value::Object(message)) = step.get("client") {
            if let (Some(id), Some(Value::String(method))) =
                (message.get("id"), message.get("method"))
            {
                requests.insert(id.to_string(), method.clone());
            }
            continue;
        }
        let Some(message) = step.get("server") else {
            continue;
        };
        let mut report = |what: String| {
            let text = message.to_string();
            let shown: String = text.chars().take(300).collect();
            problems.push(format!("message {index} ({what}): {shown}"));
        };
        let Some(object) = message.as_object() else {
            report("not an object".into());
            continue;
        };
        if object.get("jsonrpc") != Some(&json!("2.0")) {
            report("no \"jsonrpc\": \"2.0\"".into());
        }
        let checked = match (object.get("method"), object.get("id")) {
            (Some(Value::String(method)), Some(_)) => {
                let params = object.get("params").cloned().unwrap_or(Value::Null);
                Some((
                    format!("hook {method}"),
                    schema.check("hooks", method, "params", &params),
                ))
            }
            (Some(Value::String(method)), None) => {
                let params = object.get("params").cloned().unwrap_or(Value::Null);
                Some((
                    format!("notification {method}"),
                    schema.check("notifications", method, "params", &params),
                ))
            }
            (Some(_), _) => {
                report("a method that is not a string".into());
                None
            }
            (None, id) => {
                if let Some(error) = object.get("error") {
                    if !error["code"].is_i64()
                        || !error["message"].is_string()
                        || object.contains_key("result")
                    {
                        report("a malformed error response".into());
                    }
                    None
                } else if let Some(result) = object.get("result") {
                    let method = id.and_then(|id| requests.get(&id.to_string()));
                    match method {
                        // Transcripts show `initialize`'s result in full only where it matters;
                        // elsewhere the player puts a placeholder in its place.
                        Some(method)
                            if method == "initialize" && (result.is_string() || !sidecar) =>
                        {
                            None
                        }
                        Some(method) => Some((
                            format!("result of {method}"),
                            schema.check("methods", method, "result", result),
                        )),
                        // Its request was sent as raw bytes (the framing transcripts).
                        None => None,
                    }
                } else {
                    report("neither a result nor an error".into());
                    None
                }
            }
        };
        if let Some((what, Some(errors))) = checked
            && !errors.is_empty()
        {
            report(format!("{what}: {}", errors.join("; ")));
        }
    }
    problems
}
