//! An in-memory client for the rpc server, in the manner of ty's server tests: the test sends
//! scripted bytes, reads every server message, and fails when the server said something the
//! test never read.

use std::time::Duration;

use pi_session::jsonrpc::{
    Frame, FrameReader, Framing, Methods, ServeOutcome, Server, ServerOptions, ServerState,
    StopHandle, WireFraming, encode_frame,
};
use serde_json::Value;
use tokio::io::{AsyncWriteExt, DuplexStream, duplex};
use tokio::task::JoinHandle;

/// How long the client waits for a server message before failing the test. Tests run on a
/// paused clock, so this costs no real time when the server is merely idle.
const RECV_TIMEOUT: Duration = Duration::from_secs(60);

/// Bytes the pipes hold before a writer waits for its reader.
const PIPE_BYTES: usize = 64 * 1024;

pub struct TestClient {
    to_server: Option<DuplexStream>,
    from_server: FrameReader<DuplexStream>,
    framing: WireFraming,
    server: Option<JoinHandle<ServeOutcome>>,
    stop: StopHandle,
    finished: bool,
}

impl TestClient {
    /// Starts a server on in-memory pipes; the client frames its messages with `framing`.
    pub fn start<S: ServerState>(
        state: S,
        methods: Methods<S>,
        options: ServerOptions,
        framing: WireFraming,
    ) -> Self {
        let (to_server, server_input) = duplex(PIPE_BYTES);
        let (server_output, from_server) = duplex(PIPE_BYTES);
        let server = Server::new(state, methods, options);
        let stop = server.stop_handle();
        let server = tokio::spawn(server.serve(server_input, server_output));
        let read_framing = match framing {
            WireFraming::Lsp => Framing::Lsp,
            WireFraming::Ndjson => Framing::Ndjson,
        };
        let (from_server, _) = FrameReader::new(from_server, read_framing, usize::MAX);
        TestClient {
            to_server: Some(to_server),
            from_server,
            framing,
            server: Some(server),
            stop,
            finished: false,
        }
    }

    /// A handle to stop the server as a signal would.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// Sends one message, framed.
    pub async fn send(&mut self, message: &Value) {
        let mut bytes = Vec::new();
        encode_frame(self.framing, message.to_string().as_bytes(), &mut bytes);
        self.send_raw(&bytes).await;
    }

    /// Sends bytes as they are.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let input = self
            .to_server
            .as_mut()
            .expect("the input was already closed");
        input.write_all(bytes).await.expect("server input closed");
        input.flush().await.expect("server input closed");
    }

    /// Ends the server's input.
    pub async fn close_input(&mut self) {
        if let Some(mut input) = self.to_server.take() {
            let _ = input.shutdown().await;
        }
    }

    /// The next server message; fails the test if none comes or it is not JSON.
    pub async fn recv(&mut self) -> Value {
        match self.try_recv().await {
            Some(message) => message,
            None => panic!("the server closed its output while a message was expected"),
        }
    }

    async fn try_recv(&mut self) -> Option<Value> {
        let frame = tokio::time::timeout(RECV_TIMEOUT, self.from_server.next_frame())
            .await
            .expect("no server message in time")
            .expect("reading server output");
        match frame? {
            Frame::Message(bytes) => Some(
                serde_json::from_slice(&bytes)
                    .unwrap_or_else(|e| panic!("server sent invalid JSON ({e}): {bytes:?}")),
            ),
            other => panic!("server sent a bad frame: {other:?}"),
        }
    }

    /// Closes the input, waits for the server to stop, and fails if any server message was
    /// left unread.
    pub async fn finish(mut self) -> ServeOutcome {
        self.finished = true;
        self.close_input().await;
        let mut unread = Vec::new();
        while let Some(message) = self.try_recv().await {
            unread.push(message);
        }
        let outcome = self
            .server
            .take()
            .expect("server task")
            .await
            .expect("the server task panicked");
        assert!(
            unread.is_empty(),
            "server messages left unread:\n{}",
            unread
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
        outcome
    }
}

impl Drop for TestClient {
    fn drop(&mut self) {
        if !self.finished && !std::thread::panicking() {
            panic!("TestClient dropped without finish(): server messages may be left unread");
        }
    }
}
