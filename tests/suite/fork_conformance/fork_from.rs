//! `forkFrom` (pi's `--fork`) through `session/forkFrom` over `pi-session --stdio`, against pi's
//! `SessionManager.forkFrom`.

use super::*;

/// `pi-session --stdio` (ndjson) started in `dir` with `dir/home` as its home: `initialize`,
/// then each `(method, params)` once the one before is answered, then `shutdown` and `exit`;
/// the answers to the requests.
pub(crate) fn rpc(dir: &Path, requests: &[(&str, serde_json::Value)]) -> Vec<serde_json::Value> {
    let mut client = PipeClient::spawn_with(Wire::Ndjson, |command| {
        command
            .current_dir(dir)
            .env("HOME", dir.join("home"))
            .env_remove("PI_CODING_AGENT_DIR");
    });
    let mut no_hooks = |hook: &str, _: &serde_json::Value| -> serde_json::Value {
        panic!("unexpected hook {hook}")
    };
    client.call("initialize", serde_json::json!({}));
    let answers = requests
        .iter()
        .map(|(method, params)| client.call_with(method, params.clone(), &mut no_hooks))
        .collect();
    assert_eq!(
        client.call("shutdown", serde_json::Value::Null),
        serde_json::Value::Null
    );
    assert!(
        client.notifications.is_empty(),
        "each answer comes next: {:?}",
        client.notifications
    );
    let status = client.exit();
    assert_eq!(status, Some(0), "pi-session --stdio exited with {status:?}");
    answers
}

pub(crate) fn fork_from_request(
    source: &Path,
    cwd: &str,
    dir: &Path,
    id: Option<&str>,
) -> (&'static str, serde_json::Value) {
    let mut params = serde_json::json!({"sourcePath": path_str(source), "cwd": cwd, "sessionDir": path_str(dir)});
    if let Some(id) = id {
        params["id"] = id.into();
    }
    ("session/forkFrom", params)
}

pub(crate) fn pi_fork_from_args(
    source: &Path,
    cwd: &str,
    dir: &Path,
    id: Option<&str>,
) -> Vec<String> {
    let mut args = vec![
        "forkFrom".into(),
        path_str(source).into(),
        cwd.into(),
        path_str(dir).into(),
    ];
    args.extend(id.map(str::to_string));
    args
}

/// The source's entries as pi's `forkFrom` copies them: every parsed, truthy value but those of
/// type "session", re-serialized.
pub(crate) fn copied_by_pi(source: &Path) -> Vec<String> {
    let bytes = std::fs::read(source).unwrap();
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| json::parse_bytes(line).ok())
        .filter(|v| v.is_truthy() && str_of(v, "type").as_deref() != Some("session"))
        .map(|v| v.stringify())
        .collect()
}

/// Header, a user message, a second `session` line, an assistant message.
pub(crate) fn two_headers_session() -> String {
    file_text(&[
        header("twice"),
        user("t1", None, 1, "before the second header"),
        header("second"),
        assistant("t2", Some("t1"), 2, "after it"),
    ])
}

pub(crate) const TARGET_CWD: &str = "/tmp/fork from/other project";

/// `forkFrom` of every kind of source: v3 (and v4) sources are copied entry for entry as pi
/// copies them; v1 and v2 sources are migrated first here, so the copy has ids (pi copies v1
/// entries without any, and v2 `hookMessage` roles under a v3 header): this program's copy is
/// pi's migration of the source, pi's copy the source's lines as they are.
fn fork_from_matches_pi() {
    if !pi_available("fork_from_matches_pi") {
        return;
    }
    fork_from_matches(Profile::PiCli);
}

fn fork_from_matches_pi_1_6() {
    if !pi_available("fork_from_matches_pi_1_6") {
        return;
    }
    fork_from_matches(Profile::Pi16);
}

/// Every kind of source copied by `session/forkFrom` in `profile` and by that profile's pi.
fn fork_from_matches(profile: Profile) {
    let scratch = Scratch::of(profile);
    let mut sources = hand_made_sources(&scratch);
    sources.push(Source::new(
        "two headers",
        scratch.write("hand/two-headers.jsonl", &two_headers_session()),
    ));
    sources.push(Source::new(
        "empty",
        root()
            .join("tests/files/empty.jsonl")
            .canonicalize()
            .unwrap(),
    ));
    sources.extend(replay_sources(&scratch));
    sources.extend(generated_sources(&scratch, &[5]));
    sources.extend(fixture_sources());
    sources.extend(migrated_fixture_sources(&scratch));
    if profile == Profile::Pi16 {
        // pi 1.6 appends a missing final newline to the file it forks from: give it copies.
        sources = sources
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let name = s.path.file_name().unwrap().to_str().unwrap();
                let copy = scratch.path(&format!("sources/{i}/{name}"));
                std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
                std::fs::copy(&s.path, &copy).unwrap();
                Source::new(&s.name, copy)
            })
            .collect();
    }
    let version = |source: &Source| {
        let header = lines(&source.path).into_iter().find_map(|l| {
            json::parse(&l)
                .ok()
                .filter(|v| str_of(v, "type").as_deref() == Some("session"))
        });
        header.and_then(|h| h.get("version").and_then(JsValue::as_f64))
    };
    let out = |side: &str, i: usize| scratch.path(&format!("fork-from/{side}/{i}"));
    let pi_jobs: Vec<Vec<String>> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| pi_fork_from_args(&s.path, TARGET_CWD, &out("pi", i), None))
        .collect();
    let pi_results = pi_forks(&scratch, "fork-from", &pi_jobs);
    // pi's own migration of the v1 and v2 sources: what this program copies.
    let old: Vec<usize> = (0..sources.len())
        .filter(|&i| version(&sources[i]).is_none_or(|v| v < 3.0))
        .collect();
    let migrate_jobs: Vec<Vec<String>> = old
        .iter()
        .map(|&i| {
            let dir = scratch.path(&format!("fork-from/migrated/{i}"));
            vec![
                "migrated".into(),
                path_str(&sources[i].path).into(),
                path_str(&dir).into(),
            ]
        })
        .collect();
    let migrated: HashMap<usize, PathBuf> = old
        .iter()
        .zip(pi_forks(&scratch, "fork-from-migrated", &migrate_jobs))
        .map(|(&i, result)| (i, PathBuf::from(str_of(&result, "file").unwrap())))
        .collect();
    let requests: Vec<(&str, serde_json::Value)> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (method, mut params) =
                fork_from_request(&s.path, TARGET_CWD, &out("ours", i), None);
            params["profile"] = profile.name().into();
            (method, params)
        })
        .collect();
    let answers = rpc(&scratch.path(""), &requests);
    let (mut same, mut migrated_here) = (0, 0);
    for (i, ((source, pi), answer)) in sources.iter().zip(&pi_results).zip(&answers).enumerate() {
        let what = format!("forkFrom {}", source.name);
        if let Some(message) = str_of(pi, "error") {
            assert_eq!(
                answer["error"]["message"],
                message.as_str(),
                "{what}: the error"
            );
            assert_eq!(
                files_in(&out("ours", i)),
                Vec::<PathBuf>::new(),
                "{what}: nothing written"
            );
            continue;
        }
        let result = &answer["result"];
        assert_eq!(result["written"], true, "{what}: {answer}");
        assert_eq!(
            result["profile"],
            profile.name(),
            "{what}: the new session's profile"
        );
        let file = PathBuf::from(result["path"].as_str().unwrap());
        assert_eq!(
            files_in(&out("ours", i)),
            vec![file.clone()],
            "{what}: the new file"
        );
        let pi_file = PathBuf::from(str_of(pi, "file").unwrap());
        assert_eq!(pi.get("written"), Some(&JsValue::Bool(true)));
        let (ours, pis) = (lines(&file), lines(&pi_file));
        // The header: a new id and timestamp, the target cwd, the source as the parent.
        assert_eq!(
            ours[0],
            with_values_of(&pis[0], &ours[0], &["id", "timestamp"]),
            "{what}: header"
        );
        let header = parse(&ours[0]);
        assert_eq!(str_of(&header, "cwd").as_deref(), Some(TARGET_CWD));
        assert_eq!(
            str_of(&header, "parentSession").as_deref(),
            Some(path_str(&source.path))
        );
        assert_eq!(
            str_of(&header, "id").as_deref(),
            result["sessionId"].as_str()
        );
        assert_eq!(
            pis[1..],
            copied_by_pi(&source.path),
            "{what}: pi copies the lines as they are"
        );
        let our_leaf = result["leafId"].as_str().map(str::to_string);
        match migrated.get(&i) {
            None => {
                same += 1;
                assert_eq!(ours.len(), pis.len(), "{what}: entries");
                for (n, (o, p)) in ours.iter().zip(&pis).enumerate().skip(1) {
                    assert_eq!(o, p, "{what}: line {}", n + 1);
                }
                assert_eq!(
                    our_leaf,
                    source.folded_leaf(str_of(pi, "leafId")),
                    "{what}: leaf"
                );
            }
            Some(migrated) => {
                migrated_here += 1;
                let expected = lines(migrated);
                assert_eq!(ours.len(), expected.len(), "{what}: entries");
                let ids: HashMap<String, String> = ours[1..]
                    .iter()
                    .zip(&expected[1..])
                    .map(|(o, m)| {
                        (
                            str_of(&parse(m), "id").unwrap(),
                            str_of(&parse(o), "id").unwrap(),
                        )
                    })
                    .collect();
                for (n, (o, m)) in ours.iter().zip(&expected).enumerate().skip(1) {
                    assert_eq!(
                        o,
                        &translated(m, &ids),
                        "{what}: line {} is pi's migration",
                        n + 1
                    );
                }
                assert_ne!(ours[1..], pis[1..], "{what}: pi's copy is not migrated");
                if version(source).is_none() {
                    assert!(
                        pis[1..].iter().all(|l| parse(l).get("id").is_none()),
                        "{what}: pi's v1 copy has no ids"
                    );
                    assert_eq!(pi.get("leafId"), Some(&JsValue::Null), "{what}: pi's leaf");
                } else {
                    assert!(
                        pis.iter().any(|l| l.contains(r#""role":"hookMessage""#)),
                        "{what}: pi keeps v2 roles"
                    );
                    assert!(
                        !ours.iter().any(|l| l.contains(r#""role":"hookMessage""#)),
                        "{what}: migrated"
                    );
                }
                assert_eq!(
                    our_leaf,
                    str_of(&parse(ours.last().unwrap()), "id"),
                    "{what}: leaf"
                );
            }
        }
    }
    eprintln!("forkFrom: {same} sources copied as pi copies them, {migrated_here} migrated first");
    assert!(
        same >= 20 && migrated_here >= 4,
        "{same} copied, {migrated_here} migrated"
    );
}

/// Sources pi cannot fork from, and session ids it refuses: the same errors here (without
/// Node, against pi's messages as written in its code).
fn fork_from_errors_are_pis() {
    let scratch = Scratch::new();
    let invalid = |path: &Path| {
        format!(
            "Cannot fork: source session file is empty or invalid: {}",
            path.display()
        )
    };
    let bad_id = "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character";
    let good = scratch.write("good.jsonl", &labels_session());
    let cases: Vec<(PathBuf, Option<&str>, String)> = vec![
        (scratch.path("missing.jsonl"), None, invalid(&scratch.path("missing.jsonl"))),
        (scratch.write("empty.jsonl", ""), None, invalid(&scratch.path("empty.jsonl"))),
        (scratch.write("blank.jsonl", "\n  \n\t\n"), None, invalid(&scratch.path("blank.jsonl"))),
        (scratch.write("garbage.jsonl", "garbage\n{bad\n"), None, invalid(&scratch.path("garbage.jsonl"))),
        (
            scratch.write("no-header.jsonl", &file_text(&[user("m", None, 1, "x"), header("late")])),
            None,
            invalid(&scratch.path("no-header.jsonl")),
        ),
        (
            scratch.write("number-id.jsonl", r#"{"type":"session","version":3,"id":42,"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#),
            None,
            invalid(&scratch.path("number-id.jsonl")),
        ),
        (good.clone(), Some("bad id"), bad_id.into()),
        (good.clone(), Some(""), bad_id.into()),
        (good.clone(), Some("-lead"), bad_id.into()),
        (good.clone(), Some("trail."), bad_id.into()),
    ];
    let out = |side: &str, i: usize| scratch.path(&format!("{side}/{i}"));
    let requests: Vec<_> = cases
        .iter()
        .enumerate()
        .map(|(i, (source, id, _))| fork_from_request(source, TARGET_CWD, &out("ours", i), *id))
        .collect();
    let answers = rpc(&scratch.path(""), &requests);
    for (i, ((source, id, message), answer)) in cases.iter().zip(&answers).enumerate() {
        let what = format!("forkFrom {} (id {id:?})", source.display());
        assert_eq!(
            answer["error"]["message"],
            message.as_str(),
            "{what}: {answer}"
        );
        let kind = if id.is_some() {
            "invalid_argument"
        } else {
            "invalid_session"
        };
        assert_eq!(answer["error"]["data"]["kind"], kind, "{what}");
        assert_eq!(
            files_in(&out("ours", i)),
            Vec::<PathBuf>::new(),
            "{what}: nothing written"
        );
    }
    // A valid id of the caller's names the session and its file.
    let answer = &rpc(
        &scratch.path(""),
        &[fork_from_request(
            &good,
            TARGET_CWD,
            &out("ours", 99),
            Some("a.b_c-9"),
        )],
    )[0];
    assert_eq!(answer["result"]["sessionId"], "a.b_c-9");
    let file = PathBuf::from(answer["result"]["path"].as_str().unwrap());
    assert!(
        file.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with("_a.b_c-9.jsonl")
    );
    assert_eq!(
        str_of(&parse(&lines(&file)[0]), "id").as_deref(),
        Some("a.b_c-9")
    );

    // A directory: pi fails reading it with Node's raw error (below); here an io error names it.
    let dir = scratch.path("dir.jsonl");
    std::fs::create_dir_all(&dir).unwrap();
    let answer = &rpc(
        &scratch.path(""),
        &[fork_from_request(&dir, TARGET_CWD, &out("ours", 100), None)],
    )[0];
    assert_eq!(
        answer["error"]["message"],
        format!("{}: is a directory", dir.display())
    );
    assert_eq!(answer["error"]["data"]["kind"], "io");

    if !pi_available("fork_from_errors_are_pis") {
        return;
    }
    let jobs: Vec<Vec<String>> = cases
        .iter()
        .enumerate()
        .map(|(i, (source, id, _))| pi_fork_from_args(source, TARGET_CWD, &out("pi", i), *id))
        .collect();
    for ((source, id, message), pi) in cases.iter().zip(pi_forks(&scratch, "errors", &jobs)) {
        assert_eq!(
            str_of(&pi, "error").as_deref(),
            Some(message.as_str()),
            "pi: forkFrom {} (id {id:?})",
            source.display()
        );
    }
    let pi = &pi_forks(
        &scratch,
        "directory",
        &[pi_fork_from_args(&dir, TARGET_CWD, &out("pi", 100), None)],
    )[0];
    assert_eq!(
        str_of(pi, "error").as_deref(),
        Some("EISDIR: illegal operation on a directory, read")
    );
}

/// `session/fork` of a pi-cli session: pi re-opens the file to fork it, so the new session's
/// cwd is the header's resolved (against the current directory, `~` against the home), as the
/// command line's fork has it (compared with pi's in `forks_of_hand_made_sessions_match_pi`).
fn an_rpc_fork_resolves_the_header_cwd_as_pi_does() {
    use serde_json::json;
    let scratch = Scratch::new();
    let cases = [
        (
            "relative",
            r#""relative/dir""#,
            path_str(&scratch.path("relative/dir")).to_string(),
        ),
        (
            "home",
            r#""~/proj""#,
            path_str(&scratch.path("home/proj")).to_string(),
        ),
        (
            "dots",
            r#""/work/x/../hand made/./""#,
            "/work/hand made".to_string(),
        ),
        ("missing", "null", path_str(&scratch.path("")).to_string()),
    ];
    let mut requests = Vec::new();
    for (id, cwd, _) in &cases {
        let text = file_text(&[
            format!(
                r#"{{"type":"session","version":3,"id":"{id}","timestamp":"{}","cwd":{cwd}}}"#,
                ts(0)
            ),
            user("c1", None, 1, "where am I"),
            assistant("c2", Some("c1"), 2, "here"),
        ]);
        let path = scratch.write(&format!("sessions/{id}.jsonl"), &text);
        requests.push(("session/open", json!({"path": path_str(&path)})));
        requests.push((
            "session/fork",
            json!({"sessionId": id, "entryId": "c2", "position": "at"}),
        ));
    }
    let answers = rpc(&scratch.path(""), &requests);
    for ((id, _, expected), answers) in cases.iter().zip(answers.chunks(2)) {
        assert_eq!(answers[0]["result"]["sessionId"], *id, "{answers:?}");
        let forked = &answers[1]["result"]["session"];
        assert_eq!(forked["written"], true, "{id}: {answers:?}");
        assert_eq!(forked["header"]["cwd"], expected.as_str(), "{id}");
        let file = PathBuf::from(forked["path"].as_str().unwrap());
        let header = parse(&lines(&file)[0]);
        assert_eq!(
            str_of(&header, "cwd").as_deref(),
            Some(expected.as_str()),
            "{id}"
        );
    }
}

/// Where `forkFrom` puts the copy and what its header says, for relative and `~` spellings
/// of the source, the target cwd and the session directory, and without a session directory
/// (the target cwd's directory under `~/.pi/agent/sessions`).
fn fork_from_resolves_paths_as_pi_does() {
    if !pi_available("fork_from_resolves_paths_as_pi_does") {
        return;
    }
    let scratch = Scratch::new();
    scratch.write("src.jsonl", &labels_session());
    let source = Path::new("./src.jsonl");
    let cases: [(&str, Option<&str>); 5] = [
        ("rel/proj", None),
        ("~/proj", None),
        ("/a/../b/./", None),
        ("/x/y", Some("sd/rel")),
        ("/x/y", Some("~/sd")),
    ];
    let jobs: Vec<Vec<String>> = cases
        .iter()
        .map(|(cwd, dir)| {
            let mut args = vec![
                "forkFrom".to_string(),
                path_str(source).into(),
                cwd.to_string(),
            ];
            args.extend(dir.map(str::to_string));
            args
        })
        .collect();
    let pis = pi_forks(&scratch, "paths", &jobs);
    let requests: Vec<_> = cases
        .iter()
        .map(|(cwd, dir)| {
            let mut params = serde_json::json!({"sourcePath": path_str(source), "cwd": cwd});
            if let Some(dir) = dir {
                params["sessionDir"] = (*dir).into();
            }
            ("session/forkFrom", params)
        })
        .collect();
    let answers = rpc(&scratch.path(""), &requests);
    for (((cwd, dir), pi), answer) in cases.iter().zip(&pis).zip(&answers) {
        let what = format!("forkFrom cwd {cwd} session dir {dir:?}");
        let pi_file = PathBuf::from(str_of(pi, "file").unwrap_or_else(|| panic!("{what}: {pi:?}")));
        let file = PathBuf::from(answer["result"]["path"].as_str().unwrap());
        assert_eq!(file.parent(), pi_file.parent(), "{what}: the directory");
        let (ours, pis) = (lines(&file), lines(&pi_file));
        assert_eq!(
            ours[0],
            with_values_of(&pis[0], &ours[0], &["id", "timestamp"]),
            "{what}: header"
        );
        assert_eq!(ours[1..], pis[1..], "{what}: entries");
    }
    // The expected spellings, for the record.
    let home = scratch.path("home");
    let here = scratch.path("");
    let header =
        |n: usize| parse(&lines(Path::new(answers[n]["result"]["path"].as_str().unwrap()))[0]);
    assert_eq!(
        str_of(&header(0), "cwd"),
        Some(format!("{}/rel/proj", here.display()))
    );
    assert_eq!(
        str_of(&header(1), "cwd"),
        Some(format!("{}/proj", home.display()))
    );
    assert_eq!(str_of(&header(2), "cwd").as_deref(), Some("/b"));
    assert_eq!(
        str_of(&header(3), "parentSession"),
        Some(format!("{}/src.jsonl", here.display()))
    );
}

crate::tests! {
    fork_from_matches_pi,
    fork_from_matches_pi_1_6,
    fork_from_errors_are_pis,
    an_rpc_fork_resolves_the_header_cwd_as_pi_does,
    fork_from_resolves_paths_as_pi_does,
}
