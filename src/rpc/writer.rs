//! The single writer.
//!
//! Every outgoing message (responses, notifications, server -> client requests) is serialized
//! by its sender and queued on one channel; one task frames and writes them in queue order, so
//! frames never interleave and a method's notifications always precede its response. The
//! channel is unbounded so that no part of the server ever waits on a slow client while holding
//! something another part needs (the reader in particular must always be free to read); what it
//! holds is counted instead, and past a bound the reader starts no new requests (`pressure.rs`).

use serde::Serialize;
use std::sync::Arc;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::framing::{FramingDecision, WireFraming, encode_frame};
use super::pressure::Pressure;

/// Bytes gathered from the queue before they are written out in one go.
const WRITE_BATCH_BYTES: usize = 1024 * 1024;

enum WriterCommand {
    /// One serialized JSON message.
    Message(Vec<u8>),
    /// Write everything queued before this, flush, acknowledge and stop.
    Close(oneshot::Sender<()>),
}

/// The sending side of the writer; cheap to clone.
#[derive(Clone)]
pub struct Outbox {
    queue: mpsc::UnboundedSender<WriterCommand>,
    pressure: Arc<Pressure>,
}

impl Outbox {
    /// Queues one message. After the writer has stopped, messages are dropped (logged).
    pub(crate) fn send(&self, message: &impl Serialize) {
        match serde_json::to_vec(message) {
            Ok(bytes) => {
                let len = bytes.len();
                self.pressure.output_queued(len);
                if self.queue.send(WriterCommand::Message(bytes)).is_err() {
                    self.pressure.output_written(len);
                    tracing::debug!("writer closed; dropping an outgoing message");
                }
            }
            Err(error) => tracing::error!("could not serialize an outgoing message: {error}"),
        }
    }

    /// Queues one message serialized already (see [`serialize_off_loop`]).
    pub(crate) fn send_serialized(&self, bytes: Vec<u8>) {
        let len = bytes.len();
        self.pressure.output_queued(len);
        if self.queue.send(WriterCommand::Message(bytes)).is_err() {
            self.pressure.output_written(len);
            tracing::debug!("writer closed; dropping an outgoing message");
        }
    }

    /// Writes and flushes everything queued so far, then stops the writer.
    pub(crate) async fn close(&self) {
        let (ack, done) = oneshot::channel();
        if self.queue.send(WriterCommand::Close(ack)).is_ok() {
            let _ = done.await;
        }
    }
}

/// Above this many bytes of strings, an answer is serialized on a blocking thread: turning a
/// large answer into bytes takes long enough to hold up everything else on the event loop.
const LARGE_ANSWER_BYTES: usize = 256 * 1024;

/// A lower bound on the serialized size of `value` (its strings), counted up to `limit`.
fn rough_size(value: &serde_json::Value, limit: usize) -> usize {
    use serde_json::Value;
    let mut total = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) => total += text.len(),
            Value::Array(items) => stack.extend(items),
            Value::Object(members) => {
                for (key, member) in members {
                    total += key.len();
                    stack.push(member);
                }
            }
            _ => total += 1,
        }
        if total > limit {
            break;
        }
    }
    total
}

/// Serializes a response: small ones at once, large ones on a blocking thread so the event
/// loop stays free (hook answers, signals and timers keep their timing).
pub(crate) async fn serialize_off_loop(output: jsonrpc_core::Output) -> Option<Vec<u8>> {
    let result = match &output {
        jsonrpc_core::Output::Success(success) => Some(&success.result),
        jsonrpc_core::Output::Failure(_) => None,
    };
    let large = result.is_some_and(|r| rough_size(r, LARGE_ANSWER_BYTES) > LARGE_ANSWER_BYTES);
    let serialized = if large {
        tokio::task::spawn_blocking(move || serde_json::to_vec(&output))
            .await
            .ok()?
    } else {
        serde_json::to_vec(&output)
    };
    match serialized {
        Ok(bytes) => Some(bytes),
        Err(error) => {
            tracing::error!("could not serialize an outgoing message: {error}");
            None
        }
    }
}

/// Starts the writer over `output`. It waits for the framing decision before writing.
pub(crate) fn spawn_writer<W>(
    output: W,
    decision: FramingDecision,
    pressure: Arc<Pressure>,
) -> (Outbox, JoinHandle<()>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (queue, commands) = mpsc::unbounded_channel();
    let task = tokio::spawn(run_writer(output, decision, commands, pressure.clone()));
    (Outbox { queue, pressure }, task)
}

async fn run_writer<W: AsyncWrite + Unpin>(
    mut output: W,
    decision: FramingDecision,
    mut commands: mpsc::UnboundedReceiver<WriterCommand>,
    pressure: Arc<Pressure>,
) {
    // No decision means the input ended before its first byte: nothing can have been queued
    // that needs answering, so any framing will do.
    let framing = decision.await.unwrap_or(WireFraming::Lsp);
    let mut batch = Vec::new();
    let mut broken = false;
    while let Some(command) = commands.recv().await {
        let mut close = None;
        let mut next = Some(command);
        // What these messages counted against the output bound (their JSON, unframed).
        let mut counted = 0;
        while let Some(command) = next.take() {
            match command {
                WriterCommand::Message(json) => {
                    counted += json.len();
                    encode_frame(framing, &json, &mut batch);
                }
                WriterCommand::Close(ack) => {
                    close = Some(ack);
                    break;
                }
            }
            if batch.len() < WRITE_BATCH_BYTES {
                next = commands.try_recv().ok();
            }
        }
        if !broken
            && !batch.is_empty()
            && let Err(error) = write_batch(&mut output, &batch).await
        {
            // The client stopped reading; keep draining so senders never notice.
            tracing::warn!("cannot write to the client, dropping further output: {error}");
            broken = true;
        }
        batch.clear();
        // Capacity kept from one large answer would otherwise stay for good.
        if batch.capacity() > 4 * WRITE_BATCH_BYTES {
            batch = Vec::new();
        }
        pressure.output_written(counted);
        if let Some(ack) = close {
            let _ = ack.send(());
            return;
        }
    }
}

async fn write_batch<W: AsyncWrite + Unpin>(output: &mut W, batch: &[u8]) -> std::io::Result<()> {
    output.write_all(batch).await?;
    output.flush().await
}
