//! The Markdown export: one path of the session as a document a person reads (headings per
//! message, thinking and tool traffic in collapsible blocks, code in fences longer than any
//! run of backticks inside, images named rather than inlined).

use std::fmt::Write as _;
use std::io::Write;

use crate::format::json::JsValue;
use crate::store::{Session, StoreResult};

use super::output::write_error;

pub(crate) fn write_document(
    session: &Session,
    path: &[u32],
    out: &mut dyn Write,
) -> StoreResult<()> {
    let mut doc = String::new();
    let title = session
        .session_name()
        .unwrap_or_else(|| format!("Session {}", session.session_id()));
    let _ = writeln!(doc, "# {}\n", one_line(&title));
    let header = session.reported_header();
    let _ = writeln!(doc, "- Session: `{}`", session.session_id());
    if let Some(cwd) = header.get("cwd").and_then(JsValue::as_str) {
        let _ = writeln!(doc, "- Working directory: `{}`", one_line(&cwd));
    }
    if let Some(time) = header.get("timestamp").and_then(JsValue::as_str) {
        let _ = writeln!(doc, "- Started: {}", one_line(&time));
    }
    if let Some(parent) = header.get("parentSession").and_then(JsValue::as_str) {
        let _ = writeln!(doc, "- Forked from: `{}`", one_line(&parent));
    }
    let _ = writeln!(doc, "- Entries on this path: {}\n", path.len());
    out.write_all(doc.as_bytes()).map_err(write_error)?;
    for &position in path {
        doc.clear();
        let entry = session.entry_value(position)?;
        let id = session.record(position).id().unwrap_or("?");
        write_entry(&entry, id, &mut doc);
        out.write_all(doc.as_bytes()).map_err(write_error)?;
    }
    Ok(())
}

fn write_entry(entry: &JsValue, id: &str, doc: &mut String) {
    let kind = text_of(entry.get("type"));
    let time = text_of(entry.get("timestamp"));
    let heading = |doc: &mut String, what: &str| {
        let _ = writeln!(
            doc,
            "## {what}\n\n<sub>{} · `{id}`</sub>\n",
            one_line(&time)
        );
    };
    match kind.as_str() {
        "message" => {
            let message = entry.get("message").unwrap_or(&JsValue::Null);
            write_message(message, id, &time, doc);
        }
        "compaction" => {
            let tokens = entry.get("tokensBefore").and_then(JsValue::as_f64);
            heading(doc, "Compaction");
            if let Some(tokens) = tokens {
                let _ = writeln!(
                    doc,
                    "_The context before this point ({tokens} tokens) was summarized:_\n"
                );
            }
            push_block(doc, &text_of(entry.get("summary")));
        }
        "branch_summary" => {
            heading(doc, "Branch summary");
            let _ = writeln!(
                doc,
                "_Summary of the branch left at `{}`:_\n",
                text_of(entry.get("fromId"))
            );
            push_block(doc, &text_of(entry.get("summary")));
        }
        "custom_message" => {
            heading(
                doc,
                &format!(
                    "Message from {}",
                    one_line(&text_of(entry.get("customType")))
                ),
            );
            push_content(doc, entry.get("content"));
        }
        "model_change" => {
            let _ = writeln!(
                doc,
                "> Model: {}/{} <sub>`{id}`</sub>\n",
                one_line(&text_of(entry.get("provider"))),
                one_line(&text_of(entry.get("modelId")))
            );
        }
        "thinking_level_change" => {
            let _ = writeln!(
                doc,
                "> Thinking level: {} <sub>`{id}`</sub>\n",
                one_line(&text_of(entry.get("thinkingLevel")))
            );
        }
        "session_info" => {
            let _ = writeln!(
                doc,
                "> Session name: {} <sub>`{id}`</sub>\n",
                one_line(&text_of(entry.get("name")))
            );
        }
        "label" => {
            let _ = writeln!(
                doc,
                "> Label on `{}`: {} <sub>`{id}`</sub>\n",
                one_line(&text_of(entry.get("targetId"))),
                one_line(&text_of(entry.get("label")))
            );
        }
        other => {
            let what = match (other, entry.get("customType")) {
                ("custom", Some(t)) => format!("Extension data ({})", one_line(&text_of(Some(t)))),
                ("", _) => "Entry".to_string(),
                (other, _) => format!("Entry `{}`", one_line(other)),
            };
            heading(doc, &what);
            push_details(doc, "Data", &entry.stringify_pretty(2), "json");
        }
    }
}

fn write_message(message: &JsValue, id: &str, time: &str, doc: &mut String) {
    let role = text_of(message.get("role"));
    let what = match role.as_str() {
        "user" => "User".to_string(),
        "assistant" => {
            let model = text_of(message.get("model"));
            if model.is_empty() {
                "Assistant".to_string()
            } else {
                format!("Assistant ({})", one_line(&model))
            }
        }
        "toolResult" => format!(
            "Tool result: {}",
            one_line(&text_of(message.get("toolName")))
        ),
        "bashExecution" => "Shell command".to_string(),
        "custom" => format!(
            "Message from {}",
            one_line(&text_of(message.get("customType")))
        ),
        "branchSummary" => "Branch summary".to_string(),
        "compactionSummary" => "Compaction summary".to_string(),
        other => format!("Message ({})", one_line(other)),
    };
    let _ = writeln!(doc, "## {what}\n\n<sub>{} · `{id}`</sub>\n", one_line(time));
    match role.as_str() {
        "toolResult" => {
            let error = message.get("isError").is_some_and(JsValue::is_truthy);
            let mut text = String::new();
            for block in blocks(message.get("content")) {
                match text_of(block.get("type")).as_str() {
                    "text" => text.push_str(&text_of(block.get("text"))),
                    "image" => push_image(&mut text, block),
                    _ => {}
                }
            }
            let label = if error { "Error output" } else { "Output" };
            push_details(doc, label, &text, "");
        }
        "bashExecution" => {
            let command = text_of(message.get("command"));
            let mut shown = format!("$ {command}\n{}", text_of(message.get("output")));
            if let Some(code) = message.get("exitCode").and_then(JsValue::as_f64) {
                let _ = write!(shown, "\n(exit code {code})");
            }
            push_fence(doc, &shown, "console");
        }
        "branchSummary" | "compactionSummary" => push_block(doc, &text_of(message.get("summary"))),
        _ => push_content(doc, message.get("content")),
    }
    if let Some(error) = message.get("errorMessage").and_then(JsValue::as_str) {
        let _ = writeln!(doc, "> **Error:** {}\n", one_line(&error));
    }
}

/// A message's `content`: a string, or blocks (text, thinking, tool calls, images).
fn push_content(doc: &mut String, content: Option<&JsValue>) {
    if let Some(JsValue::String(text)) = content {
        push_block(doc, &text.to_string_lossy());
        return;
    }
    for block in blocks(content) {
        match text_of(block.get("type")).as_str() {
            "text" => push_block(doc, &text_of(block.get("text"))),
            "thinking" => push_details(doc, "Thinking", &text_of(block.get("thinking")), ""),
            "toolCall" => {
                let name = one_line(&text_of(block.get("name")));
                let arguments = block
                    .get("arguments")
                    .map(|a| a.stringify_pretty(2))
                    .unwrap_or_default();
                push_details(doc, &format!("Tool call: {name}"), &arguments, "json");
            }
            "image" => {
                let mut text = String::new();
                push_image(&mut text, block);
                let _ = writeln!(doc, "{text}\n");
            }
            _ => push_details(doc, "Content", &block.stringify_pretty(2), "json"),
        }
    }
}

fn push_image(out: &mut String, block: &JsValue) {
    let data = text_of(block.get("data"));
    let _ = write!(
        out,
        "[image: {}, {} bytes]",
        one_line(&text_of(block.get("mimeType"))),
        data.len() / 4 * 3
    );
}

fn blocks(content: Option<&JsValue>) -> &[JsValue] {
    content.and_then(JsValue::as_array).unwrap_or_default()
}

/// Markdown written by the model or the user, as it is.
fn push_block(doc: &mut String, text: &str) {
    doc.push_str(text.trim_end());
    doc.push_str("\n\n");
}

fn push_details(doc: &mut String, summary: &str, text: &str, lang: &str) {
    let _ = writeln!(
        doc,
        "<details><summary>{}</summary>\n",
        escape_summary(summary)
    );
    push_fence(doc, text, lang);
    doc.push_str("</details>\n\n");
}

/// `text` in a fence longer than any run of backticks in it.
fn push_fence(doc: &mut String, text: &str, lang: &str) {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let _ = writeln!(
        doc,
        "{fence}{lang}\n{}\n{fence}\n",
        text.trim_end_matches('\n')
    );
}

fn escape_summary(text: &str) -> String {
    super::html::escape_html(&one_line(text))
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn text_of(value: Option<&JsValue>) -> String {
    match value {
        Some(JsValue::String(s)) => s.to_string_lossy().into_owned(),
        Some(JsValue::Number(n)) => crate::format::json::number_to_string(*n),
        Some(JsValue::Bool(b)) => b.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_fences_outlast_backticks_inside() {
        let mut doc = String::new();
        push_fence(&mut doc, "a ```` b", "");
        assert!(doc.starts_with("`````\n"), "{doc}");
        assert!(doc.ends_with("\n`````\n\n"), "{doc}");
    }

    #[test]
    fn export_markdown_of_a_message_with_blocks() {
        let entry = crate::format::json::parse(
            r#"{"type":"message","timestamp":"t","message":{"role":"assistant","model":"m","content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":"**Yes**"},{"type":"toolCall","name":"bash","arguments":{"command":"ls"}}]}}"#,
        )
        .unwrap();
        let mut doc = String::new();
        write_entry(&entry, "abc", &mut doc);
        assert!(doc.starts_with("## Assistant (m)\n"), "{doc}");
        assert!(doc.contains("<summary>Thinking</summary>"), "{doc}");
        assert!(doc.contains("**Yes**\n"), "{doc}");
        assert!(doc.contains("<summary>Tool call: bash</summary>"), "{doc}");
        assert!(doc.contains("\"command\": \"ls\""), "{doc}");
    }
}
