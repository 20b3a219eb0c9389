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

use super::framing::{
    FramingDecision, WireFraming, encode_frame_parts, frame_head, frame_tail, frames_as_is,
};
use super::pressure::Pressure;

/// Bytes gathered from the queue before they are written out in one go.
const WRITE_BATCH_BYTES: usize = 1024 * 1024;

/// A message at least this long is written from its own bytes rather than copied into the
/// batch first (a large listing answer is tens of megabytes).
const DIRECT_WRITE_BYTES: usize = 256 * 1024;

/// One serialized JSON message, in parts that are its bytes one after another (an answer's
/// envelope around a result written as text already, never copied together).
pub(crate) struct Serialized(Vec<Vec<u8>>);

impl Serialized {
    /// A message from its parts, each on character boundaries.
    pub(crate) fn from_parts(parts: Vec<Vec<u8>>) -> Serialized {
        Serialized(parts)
    }

    fn len(&self) -> usize {
        self.0.iter().map(Vec::len).sum()
    }

    fn parts(&self) -> Vec<&[u8]> {
        self.0.iter().map(Vec::as_slice).collect()
    }
}

impl From<Vec<u8>> for Serialized {
    fn from(bytes: Vec<u8>) -> Serialized {
        Serialized(vec![bytes])
    }
}

enum WriterCommand {
    /// One serialized JSON message.
    Message(Serialized),
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
            Ok(bytes) => self.send_serialized(bytes.into()),
            Err(error) => tracing::error!("could not serialize an outgoing message: {error}"),
        }
    }

    /// Queues one message serialized already.
    pub(crate) fn send_serialized(&self, bytes: Serialized) {
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
    output: W,
    decision: FramingDecision,
    mut commands: mpsc::UnboundedReceiver<WriterCommand>,
    pressure: Arc<Pressure>,
) {
    // No decision means the input ended before its first byte: nothing can have been queued
    // that needs answering, so any framing will do.
    let framing = decision.await.unwrap_or(WireFraming::Lsp);
    let mut wire = Wire {
        output,
        framing,
        batch: Vec::new(),
        broken: false,
    };
    while let Some(command) = commands.recv().await {
        let mut close = None;
        let mut next = Some(command);
        // What these messages counted against the output bound (their JSON, unframed).
        let mut counted = 0;
        while let Some(command) = next.take() {
            match command {
                WriterCommand::Message(message) => {
                    counted += message.len();
                    wire.put(&message).await;
                }
                WriterCommand::Close(ack) => {
                    close = Some(ack);
                    break;
                }
            }
            if wire.batch.len() < WRITE_BATCH_BYTES {
                next = commands.try_recv().ok();
            }
        }
        wire.write_batch().await;
        wire.flush().await;
        pressure.output_written(counted);
        if let Some(ack) = close {
            let _ = ack.send(());
            return;
        }
    }
}

/// The output and the batch of framed messages gathered for it.
struct Wire<W> {
    output: W,
    framing: WireFraming,
    batch: Vec<u8>,
    /// The client stopped reading; output is dropped from then on, so senders never notice.
    broken: bool,
}

impl<W: AsyncWrite + Unpin> Wire<W> {
    /// Frames `message`: into the batch, or, when it is large and needs no rewriting, written
    /// out from its own bytes after what the batch holds.
    async fn put(&mut self, message: &Serialized) {
        let parts = message.parts();
        let len = message.len();
        if len < DIRECT_WRITE_BYTES || !parts.iter().all(|p| frames_as_is(self.framing, p)) {
            encode_frame_parts(self.framing, &parts, &mut self.batch);
            return;
        }
        self.write_batch().await;
        let head = frame_head(self.framing, len);
        let pieces = std::iter::once(head.as_slice())
            .chain(parts)
            .chain([frame_tail(self.framing)]);
        for piece in pieces {
            self.write(piece).await;
        }
    }

    async fn write_batch(&mut self) {
        let batch = std::mem::take(&mut self.batch);
        self.write(&batch).await;
        self.batch = batch;
        self.batch.clear();
        // Capacity kept from one large answer would otherwise stay for good.
        if self.batch.capacity() > 4 * WRITE_BATCH_BYTES {
            self.batch = Vec::new();
        }
    }

    async fn write(&mut self, bytes: &[u8]) {
        if self.broken || bytes.is_empty() {
            return;
        }
        if let Err(error) = self.output.write_all(bytes).await {
            self.stop_writing(error);
        }
    }

    async fn flush(&mut self) {
        if !self.broken
            && let Err(error) = self.output.flush().await
        {
            self.stop_writing(error);
        }
    }

    fn stop_writing(&mut self, error: std::io::Error) {
        tracing::warn!("cannot write to the client, dropping further output: {error}");
        self.broken = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::framing::encode_frame;

    /// What the wire carries for `messages`, and what copying each into the batch gives.
    async fn framed(framing: WireFraming, messages: &[Serialized]) -> (Vec<u8>, Vec<u8>) {
        let mut wire = Wire {
            output: Vec::new(),
            framing,
            batch: Vec::new(),
            broken: false,
        };
        let mut expected = Vec::new();
        for message in messages {
            wire.put(message).await;
            encode_frame(framing, &message.parts().concat(), &mut expected);
        }
        wire.write_batch().await;
        (wire.output, expected)
    }

    #[tokio::test]
    async fn large_messages_in_parts_frame_as_one_message_copied() {
        let big = "x".repeat(DIRECT_WRITE_BYTES);
        let separated = format!("{big}\u{2028}é\u{85}");
        let messages = || {
            [
                Serialized::from(b"{\"a\":1}".to_vec()),
                Serialized::from_parts(vec![
                    b"{\"r\":\"".to_vec(),
                    big.clone().into_bytes(),
                    b"\"}".to_vec(),
                ]),
                Serialized::from(b"{}".to_vec()),
                Serialized::from_parts(vec![separated.clone().into_bytes(), b"".to_vec()]),
            ]
        };
        for framing in [WireFraming::Lsp, WireFraming::Ndjson] {
            let (wire, expected) = framed(framing, &messages()).await;
            assert!(wire == expected, "{framing}");
        }
        let (ndjson, _) = framed(WireFraming::Ndjson, &messages()[3..]).await;
        assert!(ndjson.ends_with(b"\\u2028\xC3\xA9\\u0085\n"));
    }
}
