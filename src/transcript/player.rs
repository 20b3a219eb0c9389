//! Plays a transcript through a [`Peer`]: sends the client's messages with their
//! placeholders filled, reads the server's, checks the inline expectations, and records the
//! whole exchange.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::expect;
use super::format::{Expected, Step, Transcript};
use super::tmp::Tmp;
use crate::jsonrpc::{WireFraming, encode_frame};

/// The server, as the player sees it: bytes in, messages out, and a clock.
#[allow(async_fn_in_trait)] // Used with concrete types only; no `Send` bound is needed.
pub trait Peer {
    /// Sends bytes as they are (the player frames messages itself).
    async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), String>;
    /// The next server message; an error says why none came (timeout, end of output, a frame
    /// that is not JSON).
    async fn recv(&mut self) -> Result<Value, String>;
    /// Ends the server's input.
    async fn close_input(&mut self);
    /// Lets the clock run for `duration`.
    async fn sleep(&mut self, duration: Duration);
}

/// Where a transcript's files live while it plays.
pub struct Places {
    /// Written `${tmp}` in transcripts and exchanges.
    pub tmp: Tmp,
    /// Where `copyFixture` copies from.
    pub fixtures: PathBuf,
}

/// Why a transcript failed: the step (1-based), its line in the file, and the report (which
/// starts with `step N (kind): `).
#[derive(Debug)]
pub struct Failure {
    /// The step's index.
    pub step: usize,
    /// The step's line in the file.
    pub line: usize,
    /// What differed.
    pub report: String,
}

/// Plays `transcript` through `peer`: returns the exchange so far (client and server messages
/// and the other steps, paths shown as `${tmp}`) and, when an expectation failed or a step
/// could not be played, a report naming the step, the message and the member.
pub async fn play(
    transcript: &Transcript,
    peer: &mut impl Peer,
    places: &Places,
) -> (Vec<Value>, Result<(), Failure>) {
    let mut player = Player {
        places,
        framing: transcript.framing,
        results: BTreeMap::new(),
        methods: BTreeMap::new(),
        locks: Vec::new(),
        exchange: Vec::new(),
        show_initialize_result: transcript.show_initialize_result,
        read: 0,
    };
    for (index, step) in transcript.steps.iter().enumerate() {
        if let Err(failure) = player.step(step, peer).await {
            let failure = Failure {
                step: index + 1,
                line: transcript.step_lines.get(index).copied().unwrap_or(0),
                report: format!("step {} ({}): {failure}", index + 1, step.kind()),
            };
            return (player.exchange, Err(failure));
        }
    }
    (player.exchange, Ok(()))
}

struct Player<'a> {
    places: &'a Places,
    framing: WireFraming,
    /// For `${@ID.path}`: the result of every response by request id, and the params of every
    /// request the server sent (hooks) by its id.
    results: BTreeMap<String, Value>,
    /// The method of every request sent, by id, to name responses in reports.
    methods: BTreeMap<String, String>,
    locks: Vec<File>,
    exchange: Vec<Value>,
    show_initialize_result: bool,
    /// How many server messages were read.
    read: usize,
}

impl Player<'_> {
    async fn step(&mut self, step: &Step, peer: &mut impl Peer) -> Result<(), String> {
        let tmp = &self.places.tmp;
        match step {
            Step::Send(message) => self.send(message, peer).await?,
            Step::Request((id, method, params)) => {
                let message =
                    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
                self.send(&message, peer).await?;
            }
            Step::Notify((method, params)) => {
                let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
                self.send(&message, peer).await?;
            }
            Step::Answer((id, result)) => {
                let message = json!({"jsonrpc": "2.0", "id": id, "result": result});
                self.send(&message, peer).await?;
            }
            Step::SendRaw(text) => {
                peer.send_raw(text.as_bytes()).await?;
                self.exchange.push(json!({ "clientRaw": text }));
            }
            Step::SendHex(hex) => {
                peer.send_raw(&decode_hex(hex)?).await?;
                self.exchange.push(json!({ "clientHex": hex }));
            }
            Step::Expect(Expected::Count(count)) => {
                for index in 0..*count {
                    let message = self.recv(peer, index, *count).await?;
                    self.record(message);
                }
            }
            Step::Expect(Expected::Messages(patterns)) => {
                for (index, pattern) in patterns.iter().enumerate() {
                    let message = self.recv(peer, index, patterns.len()).await?;
                    let pattern = self.fill(pattern)?;
                    let found = expect::differences(&pattern, &message);
                    if !found.is_empty() {
                        let which = format!(
                            "message {} of {} expected here ({})",
                            index + 1,
                            patterns.len(),
                            self.describe(&message)
                        );
                        let report = expect::report(&which, &found, &message);
                        self.record(message);
                        return Err(report);
                    }
                    self.record(message);
                }
            }
            Step::ExpectRedacting { count, members } => {
                for index in 0..*count {
                    let mut message = self.recv(peer, index, *count).await?;
                    if let Some(result) = message.get_mut("result") {
                        *result = redact_members(result.take(), members);
                    }
                    self.exchange.push(json!({ "server": message }));
                }
            }
            Step::ExpectUnordered(count) => {
                let mut messages = Vec::new();
                for index in 0..*count {
                    messages.push(self.recv(peer, index, *count).await?);
                }
                messages.sort_by_key(Value::to_string);
                for message in messages {
                    self.exchange.push(json!({ "server": message }));
                }
            }
            Step::SleepMs(ms) => {
                peer.sleep(Duration::from_millis(*ms)).await;
                self.exchange.push(json!({ "sleepMs": ms }));
            }
            Step::CloseInput => {
                peer.close_input().await;
                self.exchange.push(json!("closeInput"));
            }
            Step::WriteFile { path, text } => {
                let target = tmp.path(path);
                create_parent(&target)
                    .and_then(|()| std::fs::write(&target, text))
                    .map_err(|e| format!("{path}: {e}"))?;
                self.exchange
                    .push(json!({ "writeFile": { "path": path, "text": text } }));
            }
            Step::CopyFixture { from, to } => {
                let source = self.places.fixtures.join(from);
                let target = tmp.path(to);
                create_parent(&target)
                    .and_then(|()| std::fs::copy(&source, &target).map(drop))
                    .map_err(|e| format!("{}: {e}", source.display()))?;
                self.exchange
                    .push(json!({ "copyFixture": { "from": from, "to": to } }));
            }
            Step::LockFile(path) => {
                let file = File::options()
                    .read(true)
                    .append(true)
                    .open(tmp.path(path))
                    .map_err(|e| format!("{path}: {e}"))?;
                file.try_lock()
                    .map_err(|e| format!("{path}: cannot lock: {e}"))?;
                self.locks.push(file);
                self.exchange.push(json!({ "lockFile": path }));
            }
            Step::Files(dir) => {
                let files: BTreeMap<String, Value> = tmp
                    .files(dir)?
                    .into_iter()
                    .map(|(name, text)| {
                        let lines = text
                            .lines()
                            .map(|line| serde_json::from_str(line).unwrap_or_else(|_| json!(line)))
                            .collect();
                        (name, tmp.hide(Value::Array(lines)))
                    })
                    .collect();
                self.exchange.push(json!({ "files": { dir: files } }));
            }
            Step::ListFiles(dir) => {
                let files: BTreeMap<String, usize> = tmp
                    .files(dir)?
                    .into_iter()
                    .map(|(name, text)| (name, text.lines().count()))
                    .collect();
                self.exchange.push(json!({ "listFiles": { dir: files } }));
            }
            Step::SetMtime { path, seconds } => {
                let time = std::time::UNIX_EPOCH + Duration::from_secs(1_767_225_600 + seconds);
                File::options()
                    .write(true)
                    .open(tmp.path(path))
                    .and_then(|file| file.set_modified(time))
                    .map_err(|e| format!("{path}: {e}"))?;
                self.exchange
                    .push(json!({ "setMtime": { "path": path, "seconds": seconds } }));
            }
        }
        Ok(())
    }

    /// Sends a message, framed, with its placeholders filled; records it with the directory
    /// shown as `${tmp}`.
    async fn send(&mut self, message: &Value, peer: &mut impl Peer) -> Result<(), String> {
        let message = self.places.tmp.fill(&self.fill(message)?);
        if let (Some(id), Some(method)) = (message.get("id"), message.get("method")) {
            let method = method.as_str().unwrap_or_default().to_owned();
            self.methods.insert(id_key(id), method);
        }
        let mut bytes = Vec::new();
        encode_frame(self.framing, message.to_string().as_bytes(), &mut bytes);
        peer.send_raw(&bytes).await?;
        self.exchange
            .push(json!({ "client": self.places.tmp.hide(message) }));
        Ok(())
    }

    /// The next server message (number `index` of the `count` the step reads) with the
    /// directory shown as `${tmp}`; its result or params remembered for `${@ID.path}`.
    async fn recv(
        &mut self,
        peer: &mut impl Peer,
        index: usize,
        count: usize,
    ) -> Result<Value, String> {
        let message = peer.recv().await.map_err(|why| {
            format!(
                "message {} of {count} expected here (server message {}): {why}",
                index + 1,
                self.read + 1
            )
        })?;
        let message = self.places.tmp.hide(message);
        self.read += 1;
        let remembered = match (message.get("id"), message.get("method")) {
            (Some(id), None) => message.get("result").map(|result| (id, result)),
            (Some(id), Some(_)) => message.get("params").map(|params| (id, params)),
            _ => None,
        };
        if let Some((id, value)) = remembered {
            self.results.insert(id_key(id), value.clone());
        }
        Ok(message)
    }

    fn record(&mut self, mut message: Value) {
        let is_initialize = message
            .get("id")
            .and_then(|id| self.methods.get(&id_key(id)))
            .is_some_and(|method| method == "initialize");
        if is_initialize
            && !self.show_initialize_result
            && let Some(result) = message.get_mut("result")
        {
            *result = json!("[initialize result]");
        }
        self.exchange.push(json!({ "server": message }));
    }

    /// `${@ID.path}` -> the earlier result it names, everywhere in `value`.
    fn fill(&self, value: &Value) -> Result<Value, String> {
        fill_references(value.clone(), &self.results)
    }

    /// "server message 7, the response to request 3 (session/append)".
    fn describe(&self, message: &Value) -> String {
        let number = format!("server message {}", self.read);
        match (message.get("id"), message.get("method")) {
            (Some(id), None) => {
                let method = self
                    .methods
                    .get(&id_key(id))
                    .map_or(String::new(), |m| format!(" ({m})"));
                format!("{number}, the response to request {id}{method}")
            }
            (Some(id), Some(method)) => format!("{number}, the server's request {id} ({method})"),
            (None, Some(method)) => format!("{number}, a {method} notification"),
            (None, None) => number,
        }
    }
}

fn create_parent(path: &std::path::Path) -> std::io::Result<()> {
    match path.parent() {
        Some(parent) => std::fs::create_dir_all(parent),
        None => Ok(()),
    }
}

/// A request id as a key: a string as it is, a number as JSON.
fn id_key(id: &Value) -> String {
    id.as_str().map_or_else(|| id.to_string(), str::to_owned)
}

/// Fills `${@ID.path}` everywhere in `value`. A string that is one reference and nothing else
/// becomes the value referred to, whatever its type; inside a longer string (or a member name)
/// a reference must name a string or a number, written in.
fn fill_references(value: Value, results: &BTreeMap<String, Value>) -> Result<Value, String> {
    Ok(match value {
        Value::String(s) => match whole_reference(&s) {
            Some(reference) => lookup(reference, results)?.clone(),
            None => Value::String(fill_in_text(&s, results)?),
        },
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| fill_references(v, results))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| Ok((fill_in_text(&k, results)?, fill_references(v, results)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other,
    })
}

/// `ID.path` when `text` is exactly `${@ID.path}`.
fn whole_reference(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("${@")?.strip_suffix('}')?;
    (!inner.contains('}')).then_some(inner)
}

/// The member at `path` (dot-separated names and array indices) of what `ID` left.
fn lookup<'a>(reference: &str, results: &'a BTreeMap<String, Value>) -> Result<&'a Value, String> {
    let mut parts = reference.split('.');
    let id = parts.next().unwrap_or_default();
    let mut value = results
        .get(id)
        .ok_or_else(|| format!("${{@{reference}}}: no result for request {id} yet"))?;
    for part in parts {
        value = match part.parse::<usize>() {
            Ok(index) => value.get(index),
            Err(_) => value.get(part),
        }
        .ok_or_else(|| format!("${{@{reference}}}: no member {part:?} in {value}"))?;
    }
    Ok(value)
}

fn fill_in_text(text: &str, results: &BTreeMap<String, Value>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${@") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .ok_or_else(|| format!("unterminated placeholder in {text:?}"))?
            + start;
        let reference = &rest[start + 3..end];
        match lookup(reference, results)? {
            Value::String(s) => out.push_str(s),
            Value::Number(n) => out.push_str(&n.to_string()),
            other => {
                return Err(format!(
                    "${{@{reference}}} inside a longer string must be a string or a number, not {other}"
                ));
            }
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn redact_members(value: Value, members: &[String]) -> Value {
    match value {
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| redact_members(v, members))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    if members.contains(&k) {
                        (k, json!("[not reproducible]"))
                    } else {
                        (k, redact_members(v, members))
                    }
                })
                .collect(),
        ),
        other => other,
    }
}

fn decode_hex(hex: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = hex.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| format!("not hex: {:?}", String::from_utf8_lossy(pair)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_keep_their_type_when_they_are_the_whole_string() {
        let mut results = BTreeMap::new();
        results.insert(
            "3".to_owned(),
            json!({"entryId": "ab", "n": 7, "rows": [{"id": "x"}]}),
        );
        results.insert("s1".to_owned(), json!({"preparation": {"targetId": "t"}}));
        let filled = fill_references(
            json!({"a": "${@3.entryId}", "n": "${@3.n}", "row": "${@3.rows.0}",
                   "text": "id ${@3.rows.0.id} n=${@3.n}", "hook": "${@s1.preparation.targetId}"}),
            &results,
        )
        .unwrap();
        assert_eq!(
            filled,
            json!({"a": "ab", "n": 7, "row": {"id": "x"}, "text": "id x n=7", "hook": "t"})
        );
        let error = fill_references(json!("${@4.x}"), &results).unwrap_err();
        assert!(error.contains("no result for request 4"), "{error}");
        let error = fill_references(json!("a ${@3.rows}"), &results).unwrap_err();
        assert!(error.contains("must be a string or a number"), "{error}");
    }
}
