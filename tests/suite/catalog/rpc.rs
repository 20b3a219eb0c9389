//! `session/search` and `session/stats` over stdio: the same answers as `search --json` and
//! `stats --json` on the same store, `$/progress` under a client's token while the index is
//! built; params that do not fit refused with `-32602` naming the member, values that cannot be
//! used (a query the engine cannot read) with `invalid_argument` naming the position.

use std::process::Stdio;

use serde_json::{Value, json};

use super::Store;
use crate::support::files::{tree, write_file};
use crate::support::pipe::{PipeClient, Wire};

/// Two sessions in two projects; the first has an abandoned branch (`u2` under `u1`, beside
/// `a1`), so hits differ in `onPath`.
fn small_store() -> Store {
    let store = Store::empty();
    let first = [
        tree::header("11111111-0000-4000-8000-000000000001"),
        tree::user("u1", None, 1, "parse the config file"),
        tree::assistant("a1", Some("u1"), 2, "the parser reads the config"),
        tree::user("u2", Some("u1"), 3, "abandoned question about the parser"),
        tree::user("u3", Some("a1"), 4, "and the config again"),
        tree::assistant("a3", Some("u3"), 65, "config read twice"),
    ];
    write_file(
        &store.sessions().join("--work-one--/first.jsonl"),
        tree::file_text(&first),
        1,
    );
    let second = [
        tree::header("22222222-0000-4000-8000-000000000002"),
        tree::user("v1", None, 10, "nothing to parse here"),
        tree::assistant("b1", Some("v1"), 3700, "a different answer"),
    ];
    write_file(
        &store.sessions().join("--work-two--/second.jsonl"),
        tree::file_text(&second),
        2,
    );
    store
}

/// `pi-session --stdio` on `store`, initialized.
fn server(store: &Store) -> PipeClient {
    let mut client = PipeClient::spawn_with(Wire::Ndjson, |command| {
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", store.agent.parent().unwrap())
            .env("PI_CODING_AGENT_DIR", &store.agent)
            .env("PI_SESSION_INDEX_DIR", &store.index)
            .env("PI_SESSION_LOG", "off")
            .stderr(Stdio::null());
    });
    let init = client.call("initialize", json!({"deterministic": true}));
    assert_eq!(
        init["capabilities"]["storeIndex"]["workDoneProgress"],
        json!(true),
        "{init}"
    );
    client
}

/// `shutdown` and `exit`: the server leaves cleanly, its stdout protocol only.
fn finish(mut client: PipeClient) {
    client.call("shutdown", Value::Null);
    assert_eq!(client.exit(), Some(0));
}

/// The error of a request that must fail.
fn refused(client: &mut PipeClient, method: &str, params: Value) -> Value {
    let response = client.call_with(method, params, &mut |name, _| panic!("hook {name}"));
    response
        .get("error")
        .unwrap_or_else(|| panic!("{method} succeeded: {response}"))
        .clone()
}

/// The `$/progress` values sent under `token`, in order.
fn progress_of(client: &PipeClient, token: &Value) -> Vec<Value> {
    client
        .notifications
        .iter()
        .filter(|n| n["method"] == "$/progress" && &n["params"]["token"] == token)
        .map(|n| n["params"]["value"].clone())
        .collect()
}

/// The RPC's structured groups in the CLI's ccusage shape (`daily: [{date, ...}]`).
fn as_report(stats: &Value, array: &str, key: &str) -> Value {
    let groups: Vec<Value> = stats["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|group| {
            let mut group = group.as_object().unwrap().clone();
            let value = group.remove("key").unwrap();
            group.insert(key.to_string(), value);
            Value::Object(group)
        })
        .collect();
    json!({
        array: groups,
        "totals": stats["totals"],
        "perFile": stats["perFile"],
        "countedTwicePerFile": stats["countedTwicePerFile"],
    })
}

fn search_and_stats_over_stdio_answer_as_the_cli() {
    let store = small_store();
    // The CLI first: it builds the index, the server then finds it up to date.
    let searches: [(&[&str], Value); 4] = [
        (&["config"], json!({"query": "config"})),
        (
            &["pars", "--on-path"],
            json!({"query": "pars", "onPath": true}),
        ),
        (
            &[
                "config",
                "--role",
                "assistant",
                "--limit",
                "1",
                "--offset",
                "1",
            ],
            json!({"query": "config", "role": "assistant", "limit": 1, "offset": 1}),
        ),
        (&["\"the config\""], json!({"query": "\"the config\""})),
    ];
    let cli_hits: Vec<Value> = searches
        .iter()
        .map(|(args, _)| {
            let mut all = vec!["search"];
            all.extend_from_slice(args);
            all.extend(["--json", "--quiet"]);
            store.json(&all)["hits"].clone()
        })
        .collect();
    assert!(
        cli_hits[0].as_array().unwrap().len() >= 3,
        "the store holds config hits: {}",
        cli_hits[0]
    );
    assert!(
        cli_hits[1]
            .as_array()
            .unwrap()
            .iter()
            .all(|hit| hit["onPath"] == json!(true)),
        "{}",
        cli_hits[1]
    );
    let stats_args: [(&[&str], Value, &str, &str); 3] = [
        (
            &["--by", "day", "--timezone", "UTC"],
            json!({"by": "day", "timezone": "UTC"}),
            "daily",
            "date",
        ),
        (
            &["--by", "model"],
            json!({"by": "model"}),
            "models",
            "model",
        ),
        (
            &["--by", "session", "--per-file", "--timezone", "UTC"],
            json!({"by": "session", "perFile": true, "timezone": "UTC"}),
            "sessions",
            "sessionId",
        ),
    ];
    let cli_stats: Vec<Value> = stats_args
        .iter()
        .map(|(args, ..)| {
            let mut all = vec!["stats"];
            all.extend_from_slice(args);
            all.extend(["--json", "--quiet"]);
            store.json(&all)
        })
        .collect();
    assert_eq!(cli_stats[0]["totals"]["assistantMessages"], json!(3));

    let mut client = server(&store);
    for ((_, params), cli) in searches.iter().zip(&cli_hits) {
        let found = client.call("session/search", params.clone());
        assert_eq!(&found["hits"], cli, "session/search {params}");
        assert_eq!(found["index"]["new"], json!(0), "the CLI built the index");
    }
    for ((_, params, array, key), cli) in stats_args.iter().zip(&cli_stats) {
        let figures = client.call("session/stats", params.clone());
        assert_eq!(
            &as_report(&figures, array, key),
            cli,
            "session/stats {params}"
        );
    }
    finish(client);
}

fn the_first_index_build_reports_work_done_progress() {
    let store = small_store();
    let mut client = server(&store);
    let token = json!("build-1");
    let figures = client.call(
        "session/stats",
        json!({"by": "month", "timezone": "UTC", "workDoneToken": token}),
    );
    assert_eq!(figures["index"]["new"], json!(2), "{figures}");
    let values = progress_of(&client, &token);
    let kinds: Vec<&str> = values.iter().map(|v| v["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"begin"), "{values:?}");
    assert_eq!(kinds.last(), Some(&"end"), "{values:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "begin").count(), 1);
    let percentages: Vec<u64> = values
        .iter()
        .filter_map(|v| v["percentage"].as_u64())
        .collect();
    assert!(
        percentages.windows(2).all(|w| w[0] <= w[1]) && percentages.iter().all(|p| *p <= 100),
        "{percentages:?}"
    );
    // Up to date now: a search (text is filed on demand) may read again, but a second stats
    // has nothing to do and sends nothing under its token.
    let again = json!(7);
    client.call(
        "session/stats",
        json!({"by": "month", "workDoneToken": again}),
    );
    assert_eq!(progress_of(&client, &again), Vec::<Value>::new());
    // Without a token, no progress at all.
    let before = client.notifications.len();
    let store_file = store.sessions().join("--work-two--/second.jsonl");
    let mut text = std::fs::read_to_string(&store_file).unwrap();
    text.push_str(&tree::user("v2", Some("b1"), 3800, "grown"));
    text.push('\n');
    std::fs::write(&store_file, text).unwrap();
    let grown = client.call("session/stats", json!({}));
    assert_eq!(grown["index"]["grew"], json!(1), "{grown}");
    assert_eq!(client.notifications.len(), before);
    finish(client);
}

fn bad_params_name_the_parameter_or_the_position() {
    let store = small_store();
    let mut client = server(&store);
    // Values that fit the schema but cannot be used: `invalid_argument`, naming the position.
    let error = refused(&mut client, "session/search", json!({"query": "ab \"cd"}));
    assert_eq!(error["code"], json!(1009), "{error}");
    assert_eq!(error["data"]["kind"], json!("invalid_argument"), "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("quote at position 4"), "{message}");
    let error = refused(&mut client, "session/search", json!({"query": "abc\u{0}"}));
    assert_eq!(error["code"], json!(1009), "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("NUL character at position 4"),
        "{error}"
    );
    // Params that do not fit the schema: -32602 naming the member.
    let error = refused(&mut client, "session/search", json!({"limit": 3}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("query"),
        "{error}"
    );
    let error = refused(
        &mut client,
        "session/search",
        json!({"query": "config", "onpath": true}),
    );
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("onpath"),
        "{error}"
    );
    let error = refused(&mut client, "session/stats", json!({"by": "year"}));
    assert_eq!(error["code"], json!(-32602), "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("year"),
        "{error}"
    );
    let error = refused(
        &mut client,
        "session/stats",
        json!({"timezone": "Mars/Olympus"}),
    );
    assert_eq!(error["code"], json!(1009), "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("timezone"),
        "{error}"
    );
    finish(client);
}

crate::tests! {
    search_and_stats_over_stdio_answer_as_the_cli,
    the_first_index_build_reports_work_done_progress,
    bad_params_name_the_parameter_or_the_position,
}
