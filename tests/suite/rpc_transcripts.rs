//! Scripted exchanges with the server, checked as they play and kept as insta snapshots.
//!
//! Each file in `tests/transcripts/` is one scenario in the transcript format
//! (`protocol/transcripts.md`): the client's messages, raw bytes, pauses, file set-ups, and what
//! the server must answer, as a count of messages or as inline expectations. The player is the
//! library's, the one `pi-session test` uses (`src/transcript/`); here it plays against an
//! in-memory server on a paused clock (timeouts are instant and exact); this file starts the
//! server, fails on a failed expectation with the player's report, and snapshots the whole
//! exchange. A server message the script does not read fails the test, and so does one that
//! `protocol/schema.json` does not describe (`support::schema_check`: each result against its
//! method's, each hook's and notification's params against theirs). (`tests/cli_test_command.rs`
//! plays the same files through the real binary and checks it gives the same exchanges.)
//!
//! A transcript runs against one of two servers (`server.state`): `"sidecar"` (the default) is
//! the real sidecar (`pi-session --stdio`'s state and method table); `"test"` offers test-only
//! methods, registered here through the same seam the session methods use; they are not part of
//! the production table. Only `lifecycle` and `session_initialize` show `initialize`'s result
//! in full.

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use pi_session::jsonrpc::{
    HookOutcome, Methods, Nothing, RequestContext, RpcError, ServerOptions, ServerState,
};
use pi_session::sidecar::session_server;
use pi_session::transcript::{self, Failure, Peer, Places, StateKind, Tmp, Transcript};
use serde::Deserialize;
use serde_json::{Value, json};
use support::memory::TestClient;

/// What the test methods change: named lists of values.
#[derive(Default)]
struct Lists(Mutex<BTreeMap<String, Vec<Value>>>);

impl Lists {
    fn push(&self, key: &str, value: Value) -> Vec<Value> {
        let mut lists = self.0.lock().unwrap();
        let list = lists.entry(key.to_owned()).or_default();
        list.push(value);
        list.clone()
    }

    fn get(&self, key: &str) -> Vec<Value> {
        self.0.lock().unwrap().get(key).cloned().unwrap_or_default()
    }
}

impl ServerState for Lists {
    type Settings = Nothing;
    type Capabilities = Nothing;

    fn capabilities(&self) -> Nothing {
        Nothing {}
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SleepParams {
    ms: u64,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
struct AppendParams {
    key: String,
    value: Value,
    #[serde(default)]
    delay_ms: u64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct KeyParams {
    key: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct HookParams {
    name: String,
    /// An object, as a hook's params always are.
    #[serde(default)]
    params: serde_json::Map<String, Value>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SerialHookParams {
    key: String,
    name: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct NotifyParams {
    method: String,
    params: serde_json::Map<String, Value>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct TypedParams {
    session_id: String,
    count: u32,
}

fn describe(outcome: HookOutcome<Value>) -> Value {
    match outcome {
        HookOutcome::Answered(answer) => json!({ "answered": answer }),
        // Any JSON is a `Value`: never reached.
        HookOutcome::Unfit(why) => json!({ "unfit": why }),
        HookOutcome::Error(error) => {
            json!({ "error": { "code": error.code(), "message": error.message() } })
        }
        HookOutcome::TimedOut => json!("timedOut"),
        HookOutcome::NotDeclared => json!("notDeclared"),
        HookOutcome::Cancelled => json!("cancelled"),
        HookOutcome::InputClosed => json!("inputClosed"),
    }
}

async fn sleep_ms(ms: u64) {
    if ms > 0 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

fn test_methods() -> Methods<Lists> {
    let mut methods = Methods::new();
    methods
        .add("test/echo", |_, params: Value| async move {
            Ok::<_, RpcError>(params)
        })
        .add("test/sleep", |_, p: SleepParams| async move {
            sleep_ms(p.ms).await;
            Ok::<_, RpcError>(json!({ "slept": p.ms }))
        })
        .add_serial(
            "test/append",
            |p: &AppendParams| p.key.clone(),
            |cx: RequestContext<Lists>, p: AppendParams| async move {
                sleep_ms(p.delay_ms).await;
                Ok::<_, RpcError>(cx.state().push(&p.key, p.value))
            },
        )
        .add(
            "test/read",
            |cx: RequestContext<Lists>, p: KeyParams| async move {
                Ok::<_, RpcError>(cx.state().get(&p.key))
            },
        )
        .add(
            "test/hook",
            |cx: RequestContext<Lists>, p: HookParams| async move {
                Ok::<_, RpcError>(describe(cx.hook(&p.name, &p.params).await))
            },
        )
        .add_serial(
            "test/serialHook",
            |p: &SerialHookParams| p.key.clone(),
            |cx: RequestContext<Lists>, p: SerialHookParams| async move {
                let outcome = cx.hook(&p.name, &json!({ "key": p.key })).await;
                if outcome == HookOutcome::Cancelled {
                    // Stop before changing anything, as a real method would.
                    return Err(RpcError::request_cancelled());
                }
                cx.state().push(&p.key, json!("hooked"));
                Ok(describe(outcome))
            },
        )
        .add("test/panic", |_, _: Value| async move {
            if true {
                panic!("boom");
            }
            Ok::<Value, RpcError>(Value::Null)
        })
        .add(
            "test/notify",
            |cx: RequestContext<Lists>, p: NotifyParams| async move {
                cx.notify(&p.method, &p.params);
                Ok::<_, RpcError>("sent")
            },
        )
        .add("test/typed", |_, _: TypedParams| async move {
            Ok::<_, RpcError>("ok")
        })
        .add("test/fail", |_, _: Value| async move {
            Err::<Value, _>(
                RpcError::application(1001, "no session 'x'", "session_not_found")
                    .with_data("sessionId", "x"),
            )
        })
        .add_notification("test/record", |server, p: AppendParams| {
            server.state().push(&p.key, p.value);
        })
        .declare_hook::<Value, Value>("test_hook")
        .declare_notification::<Value>("test/event");
    methods
}

/// Lets the player drive the in-memory client; the clock is tokio's (paused in these tests).
impl Peer for TestClient {
    async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), String> {
        TestClient::send_raw(self, bytes).await;
        Ok(())
    }

    async fn recv(&mut self) -> Result<Value, String> {
        Ok(TestClient::recv(self).await)
    }

    async fn close_input(&mut self) {
        TestClient::close_input(self).await;
    }

    async fn sleep(&mut self, duration: Duration) {
        tokio::time::sleep(duration).await;
    }
}

fn transcript_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/transcripts/{name}.json"))
}

/// Plays a transcript against a fresh in-memory server: the exchange and the player's report of
/// the first failed expectation, if any; the caller finishes the client.
async fn play_file(path: &Path) -> (Transcript, Vec<Value>, Result<(), Failure>, TestClient) {
    let transcript = Transcript::read(path).unwrap_or_else(|e| panic!("{e}"));
    let defaults = ServerOptions::default();
    let options = ServerOptions {
        framing: transcript.server.framing.unwrap_or(defaults.framing),
        max_frame_bytes: transcript
            .server
            .max_frame_bytes
            .unwrap_or(defaults.max_frame_bytes),
        ..defaults
    };
    let mut client = match transcript.server.state {
        StateKind::Test => TestClient::start(
            Lists::default(),
            test_methods(),
            options,
            transcript.framing,
        ),
        StateKind::Sidecar => TestClient::start(
            session_server::Sidecar::default(),
            session_server::methods(),
            options,
            transcript.framing,
        ),
    };
    let places = Places {
        tmp: Tmp::new().unwrap(),
        fixtures: fixtures_dir(),
    };
    let (exchange, outcome) = transcript::play(&transcript, &mut client, &places).await;
    (transcript, exchange, outcome, client)
}

/// Plays `tests/transcripts/{name}.json`, fails on any failed expectation, and checks the
/// whole exchange against its snapshot.
async fn run(name: &str) {
    let path = transcript_path(name);
    let (transcript, mut exchange, outcome, client) = play_file(&path).await;
    if let Err(Failure { line, report, .. }) = outcome {
        let last: Vec<String> = exchange
            .iter()
            .rev()
            .take(4)
            .rev()
            .map(Value::to_string)
            .collect();
        panic!(
            "{}:{line}: {report}\nthe exchange's last messages:\n{}",
            path.display(),
            last.join("\n")
        );
    }
    let sidecar = matches!(transcript.server.state, StateKind::Sidecar);
    let problems = support::schema_check::exchange_problems(&exchange, sidecar);
    assert!(
        problems.is_empty(),
        "{}: messages that protocol/schema.json does not describe:\n{}",
        path.display(),
        problems.join("\n")
    );
    let end = client.finish().await;
    if let Some(wanted) = transcript.exit_code {
        assert_eq!(
            end.exit_code(),
            wanted,
            "{}: the exit status",
            path.display()
        );
    }
    exchange.push(json!({
        "exit": { "code": end.exit_code(), "reason": end.reason.to_string() }
    }));
    insta::with_settings!({
        description => transcript.description,
        omit_expression => true,
    }, {
        insta::assert_json_snapshot!(name, exchange, {
            ".**.serverInfo.version" => "[version]",
        });
    });
}

/// Where the fixtures are (`tests/fixtures`).
fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

macro_rules! transcripts {
    ($($name:ident),* $(,)?) => {
        $(
            #[tokio::main(flavor = "current_thread", start_paused = true)]
            async fn $name() {
                run(stringify!($name)).await;
            }
        )*

        /// One trial per transcript, and the check that every file has one.
        fn transcript_trials() -> Vec<libtest_mimic::Trial> {
            crate::tests!(@vec $($name,)* every_transcript_file_has_a_test)
        }

        fn every_transcript_file_has_a_test() {
            let listed = [$(stringify!($name)),*];
            let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/transcripts");
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_none_or(|e| e != "json") {
                    continue;
                }
                let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
                assert!(listed.contains(&stem.as_str()), "no test runs transcripts/{stem}.json");
            }
        }
    };
}

transcripts!(
    lifecycle,
    before_initialize,
    after_shutdown,
    shutdown_waits_for_running_requests,
    invalid_messages_garbage_lines,
    invalid_messages_invalid_requests,
    invalid_messages_failing_methods,
    invalid_messages_stray_and_duplicates,
    lsp_framing,
    ndjson_framing,
    hooks,
    hook_answer_never_waits_behind_requests,
    cancellation,
    ordering,
    notifications,
    end_of_input,
    lsp_truncated_frame,
    session_initialize,
    session_quick_start,
    session_append_every_kind,
    session_append_harness_kinds,
    session_append_invalid_entries,
    session_append_store_refusals,
    session_close,
    session_continue_recent,
    session_create_fixed_id_and_dir,
    session_create_harness,
    session_create_in_memory,
    session_create_pi_cli_lazy,
    session_create_refusals,
    session_delete,
    session_errors_bad_params,
    session_errors_before_initialize,
    session_errors_malformed_frames,
    session_errors_unknown_session,
    session_fork_and_clone,
    session_fork_bad_targets,
    session_fork_from,
    session_fork_harness,
    session_fork_harness_new_directory,
    session_fork_hook_timeout,
    session_fork_in_memory,
    session_export,
    session_fork_not_saved,
    session_fork_unknown_session,
    session_fork_veto,
    session_list,
    session_list_select,
    session_pi16_profile,
    session_moves_harness,
    session_moves_pi_cli,
    session_navigate_errors,
    session_navigate_hook_client_cancels,
    session_navigate_hook_error,
    session_navigate_hook_harness,
    session_navigate_hook_no_summary,
    session_navigate_hook_overrides,
    session_navigate_hook_queued_change,
    session_navigate_hook_summary,
    session_navigate_hook_timeout,
    session_navigate_hook_unfit_answer,
    session_navigate_hook_veto,
    session_navigate_label_and_no_op,
    session_navigate_model_summary,
    session_navigate_plain_moves,
    session_navigate_prepare,
    session_compaction_plan,
    session_compact_summaries,
    session_compact_hook,
    session_compact_harness,
    session_navigate_summary_required,
    session_navigate_supplied_summary,
    session_open_good_file,
    session_open_invalid,
    session_open_locked,
    session_open_missing_file,
    session_open_v1_fixture,
    session_reads_context,
    session_reads_entries_paging,
    session_reads_tree,
    session_settings_files,
    session_reads_tree_pages,
);

/// The runner checks inline expectations: a transcript whose expectation is deliberately wrong
/// fails, and the report names the step, the message and the member, with both values.
#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn a_wrong_expectation_fails_naming_the_message_and_member() {
    let path = transcript_path("must_fail/wrong_expectation");
    let (_, _, outcome, client) = play_file(&path).await;
    let failure = outcome.expect_err("the wrong expectation must fail the transcript");
    assert_eq!((failure.step, failure.line), (6, 10));
    let report = failure.report;
    client.finish().await;
    let wanted = [
        "step 6 (expect): message 1 of 1 expected here",
        "server message 3, the response to request 3 (session/append)",
        "member `result.entryId`",
        r#"expected: "not-the-id""#,
        r#"actual:   "#,
        "member `result.wrongMember`",
        "actual:   (missing)",
    ];
    for part in wanted {
        assert!(
            report.contains(part),
            "{part:?} not in the report:\n{report}"
        );
    }
    eprintln!("{report}");
}

/// The first example of `protocol/transcripts.md` is `tests/transcripts/session_quick_start.json`
/// (played above), so the page's example cannot rot.
fn the_format_page_shows_a_transcript_that_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("protocol/transcripts.md")).unwrap();
    let start = page.find("```json\n").expect("a JSON example") + "```json\n".len();
    let end = start + page[start..].find("```").unwrap();
    let shown: Value = serde_json::from_str(&page[start..end]).unwrap();
    let file = std::fs::read_to_string(transcript_path("session_quick_start")).unwrap();
    assert_eq!(shown, serde_json::from_str::<Value>(&file).unwrap());
}

crate::tests! {
    [transcript_trials]
    a_wrong_expectation_fails_naming_the_message_and_member,
    the_format_page_shows_a_transcript_that_runs,
}
