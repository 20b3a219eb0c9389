//! The operations on their own: no JSON-RPC, no process; the client is a fake [`Hooks`].

use std::sync::{Arc, Mutex};

use crate::format::json::{self, JsValue};
use crate::format::profile::Profile;
use crate::format::write::NewEntry;
use crate::repo::SummarySettings;
use crate::store::{ErrorKind, Leaf, Session, SummaryInput, TreeHookAnswer, TreeRequest};

use super::*;

fn run<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}

fn scope(home: &std::path::Path, profile: Profile) -> Scope {
    let home = home.to_string_lossy().into_owned();
    let vars = [("HOME", home.as_str()), ("PI_SESSION_NO_INDEX", "1")];
    let mut scope = Scope::new(Config::from_vars(&vars, &home, None).unwrap());
    scope.default_profile = profile;
    scope
}

fn message(text: &str) -> NewEntry {
    NewEntry::Message {
        message: json::parse_bytes(text.as_bytes()).unwrap(),
    }
}

fn user(text: &str) -> NewEntry {
    message(&format!(
        r#"{{"role":"user","content":[{{"type":"text","text":"{text}"}}],"timestamp":1}}"#
    ))
}

fn assistant(text: &str) -> NewEntry {
    message(&format!(
        r#"{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"api":"a","provider":"p","model":"m","usage":{{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}}},"stopReason":"stop","timestamp":2}}"#
    ))
}

/// A session of `profile` in a file: two exchanges, a fork in the tree at the first answer.
/// Returns the session and the ids `[u1, a1, u2, a2]`.
fn conversation(scope: &Scope, profile: Profile) -> (Session, Vec<String>) {
    let input = CreateInput {
        profile: Some(profile),
        cwd: scope.repo.env().process_cwd().to_string(),
        ..CreateInput::default()
    };
    let mut session = create(scope, input).unwrap();
    let mut ids = Vec::new();
    for entry in [
        user("one"),
        assistant("first"),
        user("two"),
        assistant("second"),
    ] {
        ids.push(session.append(entry).unwrap());
    }
    (session, ids)
}

/// A client whose answers are given, recording what it was asked and whether the session was
/// free to read while it was asked.
#[derive(Default)]
struct Client {
    tree: Option<HookReply<TreeHookAnswer>>,
    fork: Option<HookReply<bool>>,
    compact: Option<HookReply<CompactHookAnswer>>,
    asked_tree: Mutex<Vec<BeforeTree>>,
    asked_compact: Mutex<Vec<BeforeCompact>>,
    /// The session being worked on, to check that it is not held during a hook.
    session: Option<Arc<Local>>,
    free_during_hook: Mutex<Vec<bool>>,
}

impl Client {
    fn note_free(&self) {
        if let Some(local) = &self.session {
            let free = local.0.try_lock().is_ok();
            self.free_during_hook.lock().unwrap().push(free);
        }
    }
}

impl Hooks for Client {
    async fn before_tree(&self, ask: BeforeTree) -> HookReply<TreeHookAnswer> {
        self.note_free();
        self.asked_tree.lock().unwrap().push(ask);
        self.tree.clone().unwrap_or(HookReply::Answer(None))
    }
    async fn before_fork(&self, _: BeforeFork) -> HookReply<bool> {
        self.note_free();
        self.fork.clone().unwrap_or(HookReply::Answer(None))
    }
    async fn before_compact(&self, ask: BeforeCompact) -> HookReply<CompactHookAnswer> {
        self.note_free();
        self.asked_compact.lock().unwrap().push(ask);
        self.compact.clone().unwrap_or(HookReply::Answer(None))
    }
}

/// An access that is `Local` and records each step's turn.
struct Recorded {
    local: Arc<Local>,
    turns: Mutex<Vec<Hold>>,
}

impl SessionAccess for Recorded {
    type Error = OpError;

    async fn with<T: Send + 'static>(
        &self,
        turn: Hold,
        work: impl FnOnce(&mut Session) -> Result<T, OpError> + Send + 'static,
    ) -> Result<T, OpError> {
        self.turns.lock().unwrap().push(turn);
        self.local.with(turn, work).await
    }
}

fn text_of(summary: &JsValue) -> String {
    summary.get("summary").unwrap().to_js_string().to_string()
}

fn navigate_to(target: &str) -> NavigateInput {
    NavigateInput {
        tree: TreeRequest {
            target_id: target.to_string(),
            summarize: true,
            ..TreeRequest::default()
        },
        ..NavigateInput::default()
    }
}

#[test]
fn a_navigation_asks_the_hook_with_the_session_free_and_writes_its_summary() {
    let home = tempfile::tempdir().unwrap();
    let scope = scope(home.path(), Profile::PiCli);
    let (session, ids) = conversation(&scope, Profile::PiCli);
    let local = Arc::new(Local::new(session));
    let client = Client {
        tree: Some(HookReply::Answer(Some(TreeHookAnswer {
            summary: Some(SummaryInput {
                summary: JsValue::from("the hook's"),
                details: None,
                usage: None,
            }),
            ..TreeHookAnswer::default()
        }))),
        session: Some(local.clone()),
        ..Client::default()
    };
    let mut input = navigate_to(&ids[1]);
    input.model_summary = Some(Ok(answer("the model's", None)));
    let outcome = run(navigate(&scope, &*local, &client, input)).unwrap();
    let Navigated::Moved(outcome) = outcome else {
        panic!("not moved: {outcome:?}")
    };
    // The hook's summary wins over the caller's model's.
    let entry = outcome.summary_entry.expect("a summary entry");
    assert_eq!(text_of(&entry), "the hook's");
    assert_eq!(outcome.from_extension, Some(true));
    assert_eq!(*client.free_during_hook.lock().unwrap(), vec![true]);
    let asked = client.asked_tree.lock().unwrap();
    assert!(asked[0].branch_summary.is_some(), "pi would summarize");
}

#[test]
fn without_the_hook_the_request_summary_wins_then_the_model_summary() {
    let home = tempfile::tempdir().unwrap();
    let scope = scope(home.path(), Profile::PiCli);
    for ready in [true, false] {
        let (session, ids) = conversation(&scope, Profile::PiCli);
        let local = Local::new(session);
        let mut input = navigate_to(&ids[1]);
        input.model_summary = Some(Ok(answer("the model's", None)));
        if ready {
            input.summary = Some(SummaryInput {
                summary: JsValue::from("ready"),
                details: None,
                usage: None,
            });
        }
        let Navigated::Moved(outcome) = run(navigate(&scope, &local, &(), input)).unwrap() else {
            panic!("not moved")
        };
        let text = text_of(&outcome.summary_entry.unwrap());
        match ready {
            true => assert_eq!(text, "ready"),
            false => assert!(text.contains("the model's"), "{text}"),
        }
        assert_eq!(outcome.from_extension, Some(false));
    }
}

#[test]
fn a_cancelled_navigation_writes_nothing_and_a_cancelled_request_stops() {
    let home = tempfile::tempdir().unwrap();
    let scope = scope(home.path(), Profile::PiCli);
    let (session, ids) = conversation(&scope, Profile::PiCli);
    let local = Local::new(session);
    let vetoing = Client {
        tree: Some(HookReply::Answer(Some(TreeHookAnswer {
            cancel: true,
            ..TreeHookAnswer::default()
        }))),
        ..Client::default()
    };
    let outcome = run(navigate(&scope, &local, &vetoing, navigate_to(&ids[1]))).unwrap();
    assert!(matches!(&outcome, Navigated::Cancelled { leaf } if leaf.id() == Some(&*ids[3])));
    let gone = Client {
        tree: Some(HookReply::Cancelled),
        ..Client::default()
    };
    let error = run(navigate(&scope, &local, &gone, navigate_to(&ids[1]))).unwrap_err();
    assert_eq!(error, OpError::Cancelled);
    assert_eq!(local.into_inner().len(), 4, "nothing written");
}

#[test]
fn a_summary_nobody_supplied_is_required_and_the_no_op_asks_no_hook() {
    let home = tempfile::tempdir().unwrap();
    let scope = scope(home.path(), Profile::PiCli);
    let (session, ids) = conversation(&scope, Profile::PiCli);
    let local = Local::new(session);
    let error = run(navigate(&scope, &local, &(), navigate_to(&ids[1]))).unwrap_err();
    assert!(
        matches!(&error, OpError::Store(e) if e.kind == ErrorKind::SummaryRequired),
        "{error:?}"
    );
    let client = Client::default();
    let outcome = run(navigate(&scope, &local, &client, navigate_to(&ids[3]))).unwrap();
    assert!(matches!(outcome, Navigated::AlreadyThere { .. }));
    assert!(client.asked_tree.lock().unwrap().is_empty());
}

fn answer(text: &str, stop_reason: Option<&str>) -> crate::store::compaction::SummaryText {
    crate::store::compaction::SummaryText {
        text: text.into(),
        usage: None,
        stop_reason: stop_reason.map(str::to_string),
        error_message: None,
        calls_tool: false,
    }
}

#[test]
fn an_aborted_model_answer_cancels_and_a_refused_or_unread_one_is_an_error() {
    let home = tempfile::tempdir().unwrap();
    let scope = scope(home.path(), Profile::PiCli);
    let (session, ids) = conversation(&scope, Profile::PiCli);
    let local = Local::new(session);
    let with = |model_summary| NavigateInput {
        model_summary: Some(model_summary),
        ..navigate_to(&ids[1])
    };
    let aborted = with(Ok(answer("", Some("aborted"))));
    let outcome = run(navigate(&scope, &local, &(), aborted)).unwrap();
    assert!(matches!(&outcome, Navigated::Cancelled { leaf } if leaf.id() == Some(&*ids[3])));
    let failed = with(Ok(answer("", Some("error"))));
    let error = run(navigate(&scope, &local, &(), failed)).unwrap_err();
    assert!(error.to_string().starts_with("'modelSummary': "), "{error}");
    let unread = OpError::InvalidParams("unreadable".into());
    let error = run(navigate(&scope, &local, &(), with(Err(unread.clone())))).unwrap_err();
    assert_eq!(error, unread);
    assert_eq!(local.into_inner().len(), 4, "nothing written");
}

#[test]
fn changes_commit_in_groups_unless_the_configuration_says_not() {
    let home = tempfile::tempdir().unwrap();
    let mut scope = scope(home.path(), Profile::PiCli);
    for group_commit in [true, false] {
        Arc::make_mut(&mut scope.config).group_commit = group_commit;
        let (session, ids) = conversation(&scope, Profile::PiCli);
        let access = Recorded {
            local: Arc::new(Local::new(session)),
            turns: Mutex::new(Vec::new()),
        };
        let config = &scope.config;
        let appended = run(append(&access, config, user("three"))).unwrap();
        assert_eq!(appended.leaf.id(), appended.entry_id.as_deref());
        let moved = run(branch(&access, config, ids[0].clone())).unwrap();
        assert_eq!(moved.leaf.id(), Some(&*ids[0]));
        assert_eq!(run(reset_leaf(&access, config)).unwrap().leaf, Leaf::Null);
        let expected = match group_commit {
            true => Hold::Commit,
            false => Hold::Change,
        };
        assert_eq!(*access.turns.lock().unwrap(), vec![expected; 3]);
    }
}

fn compact_input() -> CompactInput {
    CompactInput {
        settings: SummarySettings {
            compaction_keep_recent_tokens: Some(1.0),
            ..SummarySettings::default()
        },
        custom_instructions: Some("focus".into()),
        reason: CompactReason::Threshold,
        expected_leaf: None,
        summaries: Ok(Default::default()),
    }
}

#[test]
fn compaction_asks_the_hook_as_each_profile_does_and_writes_its_entry() {
    let home = tempfile::tempdir().unwrap();
    for profile in [Profile::PiCli, Profile::Harness] {
        let scope = scope(home.path(), profile);
        let (session, ids) = conversation(&scope, profile);
        let local = Arc::new(Local::new(session));
        let client = Client {
            compact: Some(HookReply::Answer(Some(CompactHookAnswer {
                cancel: false,
                compaction: Some(HookCompaction {
                    summary: JsValue::from("compacted by the hook"),
                    first_kept_entry_id: Some(ids[2].clone()),
                    tokens_before: 100.0,
                    details: None,
                    usage: None,
                    retained_tail: Some(JsValue::Array(Vec::new())),
                }),
            }))),
            session: Some(local.clone()),
            ..Client::default()
        };
        let outcome = run(compact(&scope, &*local, &client, compact_input())).unwrap();
        let Compacted::Written {
            entry,
            from_extension,
            ..
        } = outcome
        else {
            panic!("{profile:?}: not written")
        };
        assert!(from_extension);
        assert_eq!(text_of(&entry), "compacted by the hook");
        let harness = profile == Profile::Harness;
        assert_eq!(entry.get("retainedTail").is_some(), harness, "{profile:?}");
        let asked = &client.asked_compact.lock().unwrap()[0];
        // pi's AgentSession passes instructions to manual compactions only, and the reason.
        assert_eq!(asked.custom_instructions.is_some(), harness);
        assert_eq!(asked.reason.is_some(), !harness);
        assert_eq!(asked.branch_entries.len(), 4);
        assert_eq!(*client.free_during_hook.lock().unwrap(), vec![true]);
    }
}

#[test]
fn compaction_without_answers_names_the_missing_ones_and_checks_the_leaf() {
    let home = tempfile::tempdir().unwrap();
    let scope = scope(home.path(), Profile::PiCli);
    let (session, ids) = conversation(&scope, Profile::PiCli);
    let local = Local::new(session);
    let error = run(compact(&scope, &local, &(), compact_input())).unwrap_err();
    let OpError::SummaryRequired { missing, .. } = error else {
        panic!("{error:?}")
    };
    assert_eq!(missing[0], "history", "{missing:?}");
    let moved = CompactInput {
        expected_leaf: Some(ids[0].clone()),
        ..compact_input()
    };
    let error = run(compact(&scope, &local, &(), moved)).unwrap_err();
    assert!(matches!(error, OpError::Store(e) if e.kind == ErrorKind::LeafMoved));
}

#[test]
fn the_leaf_is_chosen_one_way() {
    let home = tempfile::tempdir().unwrap();
    let scope = scope(home.path(), Profile::PiCli);
    let (session, ids) = conversation(&scope, Profile::PiCli);
    assert_eq!(
        leaf(&session, &LeafChoice::Current).unwrap().id(),
        Some(&*ids[3])
    );
    assert_eq!(leaf(&session, &LeafChoice::Root).unwrap(), Leaf::Null);
    let at = LeafChoice::from_wire(&Some(Some(ids[1].clone())));
    assert_eq!(leaf(&session, &at).unwrap().id(), Some(&*ids[1]));
    assert_eq!(LeafChoice::from_flag(Some("null")), LeafChoice::Root);
    let missing = leaf(&session, &LeafChoice::Entry("nope".into())).unwrap_err();
    assert_eq!(missing.kind, ErrorKind::EntryNotFound);
}

#[test]
fn context_usage_reports_percent_only_where_the_profile_has_it() {
    let home = tempfile::tempdir().unwrap();
    for profile in Profile::ALL {
        let scope = scope(home.path(), profile);
        let (mut session, _) = conversation(&scope, profile);
        let settings = SummarySettings {
            compaction_reserve_tokens: Some(100.0),
            ..SummarySettings::default()
        };
        let usage = context_usage(
            &scope,
            &mut session,
            &LeafChoice::Current,
            settings,
            Some(1000.0),
        )
        .unwrap();
        assert_eq!(usage.threshold, Some(900.0));
        assert_eq!(usage.should_compact, Some(false));
        assert_eq!(
            usage.percent.is_some(),
            profile.rules().context_usage_percent
        );
        if let Some(p) = usage.percent {
            assert_eq!(p.percent, p.tokens.map(|t| t / 10.0));
        }
        let none = context_usage(&scope, &mut session, &LeafChoice::Root, settings, None).unwrap();
        assert_eq!((none.threshold, none.should_compact), (None, None));
    }
}

#[test]
fn profiles_refuse_what_their_pi_does_not_have() {
    let home = tempfile::tempdir().unwrap();
    let scope = scope(home.path(), Profile::Harness);
    let cwd = scope.repo.env().process_cwd().to_string();
    let from = ForkFromInput {
        profile: Some(Profile::Harness),
        source_path: "/nowhere.jsonl".into(),
        cwd: cwd.clone(),
        ..ForkFromInput::default()
    };
    let error = fork_from(&scope, from).unwrap_err();
    assert!(error.to_string().contains("forkFrom"), "{error}");
    let error = find_by_id(&scope, None, &cwd, "x", None).unwrap_err();
    assert!(error.to_string().contains("findById"), "{error}");
    let refined = ListInput {
        refines_rows: true,
        ..ListInput::default()
    };
    assert!(list(&scope, refined).is_err());
    for profile in [Profile::PiCli, Profile::Pi16] {
        assert_eq!(
            find_by_id(&scope, Some(profile), &cwd, "x", None).unwrap(),
            None
        );
    }
}

#[test]
fn a_fork_asks_first_and_writes_a_durable_file_when_asked() {
    let home = tempfile::tempdir().unwrap();
    let scope = scope(home.path(), Profile::Harness);
    let (session, ids) = conversation(&scope, Profile::Harness);
    let local = Local::new(session);
    let input = ForkInput {
        entry_id: ids[2].clone(),
        position: crate::store::ForkPosition::Before,
        durable: Some(true),
    };
    let vetoing = Client {
        fork: Some(HookReply::Answer(Some(true))),
        ..Client::default()
    };
    let forked = run(fork(&scope, &local, &vetoing, input.clone())).unwrap();
    assert!(matches!(forked, ForkOutcome::Cancelled));
    let ForkOutcome::Made(crate::repo::Forked {
        session,
        selected_text,
    }) = run(fork(&scope, &local, &(), input)).unwrap()
    else {
        panic!("no fork")
    };
    assert_eq!(selected_text.as_deref(), Some("two"));
    assert!(session.is_durable());
    assert!(session.path().unwrap().exists());
    assert_eq!(session.len(), 2);
}
