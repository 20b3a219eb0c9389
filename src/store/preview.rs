//! Short previews of entries, for tree rows and pickers.

use crate::format::entry::{Kind, Payload, Replacement};
use crate::format::json::JsValue;

use super::error::StoreResult;
use super::session::Session;

const PREVIEW_CHARS: usize = 72;

impl Session {
    /// Previews of many entries, computed on every core (each reads its entry's line back).
    pub fn previews(&self, positions: &[u32]) -> StoreResult<Vec<String>> {
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, 8);
        let chunk = positions.len().div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            let parts: Vec<_> = positions
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|&p| self.preview(p))
                            .collect::<StoreResult<Vec<_>>>()
                    })
                })
                .collect();
            let mut out = Vec::with_capacity(positions.len());
            for part in parts {
                let previews = part.join().map_err(|_| {
                    super::error::StoreError::new(
                        super::error::ErrorKind::Io,
                        "a preview thread panicked",
                    )
                })??;
                out.extend(previews);
            }
            Ok(out)
        })
    }

    /// A one-line description of an entry: its kind and a short preview of its text. Only the
    /// fields shown are read from the line (a 50 MB `custom` entry costs its `customType`).
    pub fn preview(&self, position: u32) -> StoreResult<String> {
        let record = self.record(position);
        let one = |key: &str| -> StoreResult<String> {
            let [value] = self.entry_fields(position, [key])?;
            Ok(value.as_ref().map(preview_of).unwrap_or_default())
        };
        let two = |a: &str, b: &str| -> StoreResult<(String, String)> {
            let [x, y] = self.entry_fields(position, [a, b])?;
            let text = |v: Option<JsValue>| v.as_ref().map(preview_of).unwrap_or_default();
            Ok((text(x), text(y)))
        };
        Ok(match record.kind() {
            Kind::Message => {
                let [message] = self.entry_fields(position, ["message"])?;
                let message = message.as_ref();
                let role = message
                    .and_then(|m| m.get("role"))
                    .and_then(JsValue::as_str)
                    .unwrap_or_default()
                    .into_owned();
                let body = match role.as_str() {
                    "bashExecution" => message
                        .and_then(|m| m.get("command"))
                        .map(preview_of)
                        .unwrap_or_default(),
                    _ => message
                        .and_then(|m| m.get("content"))
                        .map(preview_of)
                        .unwrap_or_default(),
                };
                format!("{role}: {}", shorten(&body))
            }
            Kind::Compaction => format!("compaction: {}", shorten(&one("summary")?)),
            Kind::BranchSummary => format!("branch summary: {}", shorten(&one("summary")?)),
            Kind::CustomMessage => {
                let (custom_type, content) = two("customType", "content")?;
                format!("custom message ({custom_type}): {}", shorten(&content))
            }
            Kind::Custom => format!("custom ({})", one("customType")?),
            Kind::ContextEdit => {
                let target = one("targetId")?;
                match record.payload() {
                    Payload::ContextEdit(Replacement::Null) => {
                        format!("context edit: removes {target}")
                    }
                    _ => format!("context edit: replaces {target}"),
                }
            }
            Kind::Usage => {
                let (kind, provider) = two("kind", "provider")?;
                format!("usage ({kind}): {provider}/{}", one("model")?)
            }
            Kind::Label => {
                let (target, label) = two("targetId", "label")?;
                format!("label {target} -> {label}")
            }
            Kind::SessionInfo => format!("name: {}", one("name")?),
            Kind::ModelChange => {
                let (provider, model) = two("provider", "modelId")?;
                format!("model: {provider}/{model}")
            }
            Kind::ThinkingLevelChange => format!("thinking: {}", one("thinkingLevel")?),
            Kind::Leaf => format!("leaf -> {}", one("targetId")?),
            Kind::ActiveToolsChange => "active tools changed".to_string(),
            Kind::Session | Kind::Other => {
                record.type_name().unwrap_or("(not an object)").to_string()
            }
        })
    }
}

/// The text of a value for a preview: strings as they are, content blocks by their text.
fn preview_of(value: &JsValue) -> String {
    match value {
        JsValue::String(s) => s.to_string_lossy().into_owned(),
        JsValue::Array(blocks) => blocks
            .iter()
            .filter_map(
                |b| match b.get("type").and_then(JsValue::as_str).as_deref() {
                    Some("text") => b.get("text").map(preview_of),
                    Some("toolCall") => b.get("name").map(|n| format!("{}(...)", preview_of(n))),
                    Some("image") => Some("[image]".to_string()),
                    _ => None,
                },
            )
            .collect::<Vec<_>>()
            .join(" "),
        JsValue::Null => "null".into(),
        other => other.stringify(),
    }
}

fn shorten(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= PREVIEW_CHARS {
        format!("\"{flat}\"")
    } else {
        let cut: String = flat.chars().take(PREVIEW_CHARS - 1).collect();
        format!("\"{cut}…\"")
    }
}
