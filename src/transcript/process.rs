//! A server in its own process (`BIN --stdio`), as a front-end meets it: the peer of
//! `pi-session test`.
//!
//! The server runs in the transcript's temporary directory with `HOME` inside it and without
//! pi's directory variables, so a transcript never reads or writes the tester's own sessions
//! and gives the same exchange on every machine.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use super::format::ServerSetup;
use super::player::Peer;
use super::tmp::Tmp;
use crate::jsonrpc::{Frame, FrameReader, Framing, WireFraming};

/// The environment variables of pi's that would point the server at the tester's own files.
const PI_DIRECTORY_VARIABLES: [&str; 2] = ["PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR"];

/// How many unread messages are kept for a failure's report.
const UNREAD_KEPT: usize = 20;

/// How much of the server's stderr is kept for a failure's report.
const STDERR_KEPT_BYTES: usize = 16 * 1024;

/// A server in a child process (`pi-session --stdio`), for `pi-session test`.
pub struct ChildServer {
    child: Child,
    input: Option<ChildStdin>,
    output: FrameReader<ChildStdout>,
    stderr: JoinHandle<Vec<u8>>,
    /// How long to wait for a message, or for the server to exit.
    timeout: Duration,
}

/// How the server ended, after [`ChildServer::finish`].
pub struct Ending {
    /// The first of the messages the transcript never read.
    pub unread: Vec<Value>,
    /// How many messages the transcript never read.
    pub unread_count: usize,
    /// The exit status, or why there is none (killed after the timeout, wait failed).
    pub exit_code: Result<i32, String>,
    /// The end of what the server wrote on stderr.
    pub stderr: String,
}

impl ChildServer {
    /// Starts `program --stdio` (with `--framing` and `--max-frame-bytes` when the transcript's
    /// `server` asks), in `tmp`; the client frames with `framing`.
    pub fn spawn(
        program: &Path,
        setup: &ServerSetup,
        framing: WireFraming,
        tmp: &Tmp,
        timeout: Duration,
    ) -> std::io::Result<Self> {
        let home = tmp.path("home");
        std::fs::create_dir_all(&home)?;
        let mut command = Command::new(program);
        command.arg("--stdio");
        match setup.framing {
            Some(Framing::Lsp) => drop(command.args(["--framing", "lsp"])),
            Some(Framing::Ndjson) => drop(command.args(["--framing", "ndjson"])),
            Some(Framing::Auto) | None => {}
        }
        if let Some(bytes) = setup.max_frame_bytes {
            command.args(["--max-frame-bytes", &bytes.to_string()]);
        }
        for variable in PI_DIRECTORY_VARIABLES {
            command.env_remove(variable);
        }
        command
            .env("HOME", &home)
            .current_dir(tmp.root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let (Some(input), Some(output), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            unreachable!("all three pipes were asked for");
        };
        let stderr = tokio::spawn(async move {
            let mut kept = Vec::new();
            let mut buffer = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut buffer).await {
                kept.extend_from_slice(&buffer[..n]);
                if kept.len() > 2 * STDERR_KEPT_BYTES {
                    kept.drain(..kept.len() - STDERR_KEPT_BYTES);
                }
            }
            kept
        });
        let read_framing = match framing {
            WireFraming::Lsp => Framing::Lsp,
            WireFraming::Ndjson => Framing::Ndjson,
        };
        let (output, _) = FrameReader::new(output, read_framing, usize::MAX);
        Ok(ChildServer {
            child,
            input: Some(input),
            output,
            stderr,
            timeout,
        })
    }

    /// The next message, `None` at the end of the server's output.
    async fn next(&mut self) -> Result<Option<Value>, String> {
        let frame = tokio::time::timeout(self.timeout, self.output.next_frame())
            .await
            .map_err(|_| format!("no server message within {:?}", self.timeout))?
            .map_err(|e| format!("cannot read the server's output: {e}"))?;
        match frame {
            None => Ok(None),
            Some(Frame::Message(bytes)) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
                format!(
                    "the server sent a message that is not JSON ({e}): {}",
                    String::from_utf8_lossy(&bytes)
                )
            }),
            Some(other) => Err(format!("the server sent a bad frame: {other:?}")),
        }
    }

    /// Ends the input, reads what the server still says until it closes its output, and
    /// waits for it to exit (killing it after the timeout).
    pub async fn finish(mut self) -> Ending {
        self.input = None;
        let mut unread = Vec::new();
        let mut unread_count = 0;
        let mut trouble = None;
        // One deadline for the whole drain: a server that never stops talking is bounded too.
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            match tokio::time::timeout_at(deadline, self.next()).await {
                Ok(Ok(Some(message))) => {
                    unread_count += 1;
                    if unread.len() < UNREAD_KEPT {
                        unread.push(message);
                    }
                }
                Ok(Ok(None)) => break,
                Ok(Err(why)) => {
                    trouble = Some(why);
                    break;
                }
                Err(_) => {
                    trouble = Some(format!(
                        "the server kept its output open for {:?} after its input ended",
                        self.timeout
                    ));
                    break;
                }
            }
        }
        let exit_code = match tokio::time::timeout(self.timeout, self.child.wait()).await {
            Ok(Ok(status)) => match (status.code(), trouble) {
                (Some(code), None) => Ok(code),
                (code, trouble) => Err(trouble.unwrap_or_else(|| match code {
                    Some(code) => format!("exit status {code}"),
                    None => format!("the server was killed ({status})"),
                })),
            },
            Ok(Err(e)) => Err(format!("cannot wait for the server: {e}")),
            Err(_) => {
                let _ = self.child.kill().await;
                Err(format!(
                    "the server did not exit within {:?} after its input ended; killed",
                    self.timeout
                ))
            }
        };
        let stderr = tokio::time::timeout(Duration::from_secs(1), self.stderr)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let stderr = String::from_utf8_lossy(&stderr).into_owned();
        Ending {
            unread,
            unread_count,
            exit_code,
            stderr,
        }
    }
}

impl Peer for ChildServer {
    async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), String> {
        let input = self
            .input
            .as_mut()
            .ok_or("the transcript already closed the server's input")?;
        let written = async {
            input.write_all(bytes).await?;
            input.flush().await
        };
        // A server that stops reading would otherwise hold the transcript forever.
        match tokio::time::timeout(self.timeout, written).await {
            Ok(result) => {
                result.map_err(|e| format!("cannot write to the server (did it exit?): {e}"))
            }
            Err(_) => Err(format!(
                "the server read nothing for {:?} (its input is full)",
                self.timeout
            )),
        }
    }

    async fn recv(&mut self) -> Result<Value, String> {
        match self.next().await? {
            Some(message) => Ok(message),
            None => Err("the server closed its output".to_owned()),
        }
    }

    async fn close_input(&mut self) {
        self.input = None;
    }

    async fn sleep(&mut self, duration: Duration) {
        tokio::time::sleep(duration).await;
    }
}
