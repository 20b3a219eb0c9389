//! One fork made by both programs and compared: the cases (which entry, before or at it), this
//! program's fork (command line or library), pi's, and the comparison of what both wrote.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Position {
    Before,
    At,
}

impl Position {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Position::Before => "before",
            Position::At => "at",
        }
    }
}

/// One fork to make with both programs.
#[derive(Debug, Clone)]
pub(crate) struct ForkCase {
    pub(crate) source: usize,
    /// The entry's position among the source's entries.
    pub(crate) index: usize,
    /// An id no entry has (error case), instead of `index`.
    pub(crate) unknown_id: Option<String>,
    pub(crate) position: Position,
}

/// How many forks to make from a source.
#[derive(Clone, Copy)]
pub(crate) enum Spread {
    /// `--at` every entry, `before` every user message and one entry of each other kind.
    Every,
    /// `--at` the first and last entry of each kind and `n` evenly spaced ones; `before` the
    /// first, the last and `n / 2` evenly spaced user messages, and entries of two other kinds.
    Sample(usize),
}

/// The forks worth making from a source (see [`Spread`]); never from an entry whose path
/// loops (pi would hang).
pub(crate) fn spread(sources: &[Source], source: usize, spread: Spread) -> Vec<ForkCase> {
    let entries = &sources[source].entries;
    let usable = |i: usize| {
        let entry = &entries[i];
        let Some(id) = entry.id.as_deref() else {
            return sources[source].v1;
        };
        !path_cycles(entries, id)
    };
    let mut at: Vec<usize> = Vec::new();
    let mut before: Vec<usize> = Vec::new();
    let users: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].is_user_message())
        .collect();
    let refused_kinds = match spread {
        Spread::Every => {
            at.extend(0..entries.len());
            before.extend(users.iter().copied());
            usize::MAX
        }
        Spread::Sample(n) => {
            let mut kinds: Vec<&str> = entries.iter().map(|e| e.kind.as_str()).collect();
            kinds.sort();
            kinds.dedup();
            for kind in kinds {
                let of_kind: Vec<usize> = (0..entries.len())
                    .filter(|&i| entries[i].kind == kind)
                    .collect();
                at.push(of_kind[0]);
                at.push(*of_kind.last().unwrap());
            }
            let count = entries.len();
            at.extend((1..=n).map(|k| k * (count - 1) / n));
            if !users.is_empty() {
                before.push(users[0]);
                before.push(*users.last().unwrap());
                let m = n / 2 + 1;
                before.extend((1..m).map(|k| users[k * (users.len() - 1) / m]));
            }
            2
        }
    };
    let mut kinds_refused = HashSet::new();
    for (i, entry) in entries.iter().enumerate() {
        if !entry.is_user_message()
            && kinds_refused.len() < refused_kinds
            && kinds_refused.insert(entry.kind.clone())
        {
            before.push(i);
        }
    }
    let mut cases = Vec::new();
    for (list, position) in [(at, Position::At), (before, Position::Before)] {
        let mut seen = HashSet::new();
        for index in list {
            // `before` walks up from the parent: it must not loop either.
            let parent_loops = position == Position::Before
                && entries[index]
                    .parent
                    .as_deref()
                    .is_some_and(|p| path_cycles(entries, p));
            if seen.insert(index) && usable(index) && !parent_loops {
                cases.push(ForkCase {
                    source,
                    index,
                    unknown_id: None,
                    position,
                });
            }
        }
    }
    cases
}

/// What one program did for one fork.
#[derive(Debug)]
pub(crate) enum Forked {
    Made {
        file: PathBuf,
        written: bool,
        leaf_id: Option<String>,
        selected_text: Option<JsValue>,
    },
    Refused(String),
}

/// `pi-session fork` on a v2/v3 source (the command line), or the same steps through the
/// library on a v1 source, whose entries only get ids when it is opened (`opened` keeps it
/// open, so that the ids stay the same).
pub(crate) fn our_fork(
    source: &Source,
    case: &ForkCase,
    out: &Path,
    opened: &mut HashMap<usize, Session>,
    workdir: &Path,
    profile: Profile,
) -> Forked {
    if source.v1 && case.unknown_id.is_none() {
        let session = opened.entry(case.source).or_insert_with(|| {
            Session::open_read_only(&source.path, SessionOptions::with_profile(profile)).unwrap()
        });
        return library_fork(session, &source.path, case.index, case.position, out);
    }
    let entry = match &case.unknown_id {
        Some(id) => id.clone(),
        None => source.entries[case.index]
            .id
            .clone()
            .expect("an entry with an id"),
    };
    let mut command = Command::new(BIN);
    command
        .current_dir(workdir)
        .env("HOME", workdir.join("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .arg("fork")
        .arg(&source.path)
        .args(["--profile", profile.name(), "--entry", &entry, "--out"])
        .arg(out);
    if case.position == Position::At {
        command.arg("--at");
    }
    let output = command.output().expect("pi-session runs");
    if !output.status.success() {
        assert!(
            output.stdout.is_empty(),
            "a failed fork prints nothing on stdout"
        );
        return Forked::Refused(String::from_utf8(output.stderr).unwrap());
    }
    let doc = parse(std::str::from_utf8(&output.stdout).unwrap());
    let file = PathBuf::from(str_of(&doc, "file").expect("file"));
    let session_id = str_of(&doc, "sessionId").expect("sessionId");
    assert!(
        file.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with(&format!("_{session_id}.jsonl")),
        "{} is named after session {session_id}",
        file.display()
    );
    Forked::Made {
        file,
        written: doc.get("written") == Some(&JsValue::Bool(true)),
        leaf_id: str_of(&doc, "leafId"),
        selected_text: doc.get("selectedText").cloned(),
    }
}

/// `fork_file`'s steps on the entry at `index` of `session`, opened from `path`.
pub(crate) fn library_fork(
    session: &mut Session,
    path: &Path,
    index: usize,
    position: Position,
    out: &Path,
) -> Forked {
    let ids = Arc::new(IdSource::system());
    let options = SessionOptions {
        ids: ids.clone(),
        ..SessionOptions::with_profile(session.profile())
    };
    let id = str_of(&session.entry_value(index as u32).unwrap(), "id").unwrap();
    let position = match position {
        Position::Before => ForkPosition::Before,
        Position::At => ForkPosition::At,
    };
    let selection = match session.fork_selection(&id, position) {
        Ok(selection) => selection,
        Err(e) => return Forked::Refused(e.message),
    };
    let entries = match &selection.leaf_id {
        Some(leaf) => session.branched_entries(leaf).unwrap(),
        None => Vec::new(),
    };
    std::fs::create_dir_all(out).unwrap();
    let session_id = ids.session_id();
    let timestamp = ids.now_iso();
    let file = out.join(session_file_name(&timestamp, &session_id));
    let new = NewSession {
        path: Some(file.clone()),
        cwd: pi_session::PathEnv::from_process()
            .and_then(|env| env.resolve_path(&session.cwd()))
            .unwrap(),
        id: Some(session_id),
        timestamp: Some(timestamp),
        parent_session: Some(path_str(path).into()),
        metadata: None,
    };
    let forked = Session::from_entries(new, &entries, options, false).unwrap();
    Forked::Made {
        file,
        written: forked.is_written(),
        leaf_id: forked.leaf().id().map(str::to_string),
        selected_text: selection.selected_text.map(|t| JsValue::from(t.as_str())),
    }
}

pub(crate) fn pi_fork_args(source: &Source, case: &ForkCase, out: &Path) -> Vec<String> {
    let entry = match &case.unknown_id {
        Some(id) => id.clone(),
        None if source.v1 => format!("#{}", case.index),
        None => source.entries[case.index].id.clone().unwrap(),
    };
    vec![
        "fork".into(),
        path_str(&source.path).into(),
        entry,
        case.position.name().into(),
        path_str(out).into(),
    ]
}

pub(crate) fn describe(sources: &[Source], case: &ForkCase) -> String {
    let source = &sources[case.source];
    match &case.unknown_id {
        Some(id) => format!(
            "{}: {} unknown entry {id}",
            source.name,
            case.position.name()
        ),
        None => format!(
            "{}: {} entry #{} ({}, {:?})",
            source.name,
            case.position.name(),
            case.index,
            source.entries[case.index].kind,
            source.entries[case.index].id
        ),
    }
}

/// What comparing a batch of forks found.
#[derive(Default)]
pub(crate) struct Report {
    pub(crate) compared: usize,
    pub(crate) written: usize,
    pub(crate) refused: usize,
    /// `--at` forks made, by entry kind.
    pub(crate) kinds_at: HashSet<String>,
    /// The source had a label re-created in the fork.
    pub(crate) labels_recreated: usize,
    pub(crate) root_forks: usize,
    /// Forks at a harness `leaf` entry (where the leaves differ on purpose).
    pub(crate) leaf_entry_forks: usize,
    /// Forks before a user message without text content, where pi throws a TypeError.
    pub(crate) pi_crashes: Vec<String>,
    /// Selected texts with a lone surrogate (U+FFFD here).
    pub(crate) lone_surrogates: usize,
}

impl Report {
    /// Adds what another batch found.
    fn add(&mut self, other: Report) {
        self.compared += other.compared;
        self.written += other.written;
        self.refused += other.refused;
        self.kinds_at.extend(other.kinds_at);
        self.labels_recreated += other.labels_recreated;
        self.root_forks += other.root_forks;
        self.leaf_entry_forks += other.leaf_entry_forks;
        self.pi_crashes.extend(other.pi_crashes);
        self.lone_surrogates += other.lone_surrogates;
    }
}

/// Makes every fork with both programs and compares what they wrote; fails at the first fork
/// that differs.
pub(crate) fn compare_forks(
    scratch: &Scratch,
    name: &str,
    sources: &[Source],
    cases: &[ForkCase],
) -> Report {
    let (report, outcomes) = compare_each_fork(scratch, name, sources, cases);
    let failed: Vec<&String> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    if let Some(first) = failed.first() {
        panic!(
            "{} of {} forks differ; the first: {first}",
            failed.len(),
            cases.len()
        );
    }
    report
}

/// Makes every fork with both programs and compares what they wrote, each fork on its own: the
/// report of those that agreed, and each fork's outcome (`Err`: why it differs).
pub(crate) fn compare_each_fork(
    scratch: &Scratch,
    name: &str,
    sources: &[Source],
    cases: &[ForkCase],
) -> (Report, Vec<Result<(), String>>) {
    let out = |side: &str, i: usize| scratch.path(&format!("{name}-forks/{side}/{i}"));
    let pi_jobs: Vec<Vec<String>> = cases
        .iter()
        .enumerate()
        .map(|(i, case)| pi_fork_args(&sources[case.source], case, &out("pi", i)))
        .collect();
    let pi_results = pi_forks(scratch, name, &pi_jobs);
    let mut opened = HashMap::new();
    let ours: Vec<Forked> = cases
        .iter()
        .enumerate()
        .map(|(i, case)| {
            let workdir = scratch.path("");
            our_fork(
                &sources[case.source],
                case,
                &out("ours", i),
                &mut opened,
                &workdir,
                scratch.profile,
            )
        })
        .collect();
    // Both files of every fork both wrote, normalized by the oracle.
    let mut files = Vec::new();
    for (pi, ours) in pi_results.iter().zip(&ours) {
        if let (
            Some(JsValue::Bool(true)),
            Forked::Made {
                file,
                written: true,
                ..
            },
        ) = (pi.get("written"), ours)
        {
            files.push(PathBuf::from(str_of(pi, "file").unwrap()));
            files.push(file.clone());
        }
    }
    let mut normalized = normalized(scratch, name, &files).into_iter();
    // Each fork's pair of normalized files (those both wrote), in the order they were pushed.
    let mut pairs: Vec<Option<(Normalized, Normalized)>> = pi_results
        .iter()
        .zip(&ours)
        .map(|(pi, ours)| {
            let both = matches!(
                (pi.get("written"), ours),
                (
                    Some(JsValue::Bool(true)),
                    Forked::Made { written: true, .. }
                )
            );
            both.then(|| (normalized.next().unwrap(), normalized.next().unwrap()))
        })
        .collect();
    let mut report = Report::default();
    let mut outcomes = Vec::new();
    for (i, ((case, pi), ours)) in cases.iter().zip(&pi_results).zip(&ours).enumerate() {
        let mut pair = pairs[i].take();
        let mut one = Report::default();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let report = &mut one;
            let what = describe(sources, case);
            let source = &sources[case.source];
            report.compared += 1;
            if let Some(message) = str_of(pi, "error") {
                // pi's runtime reads `message.content.filter` of the user message it forks before;
                // a user message without array or string content makes it throw a TypeError.
                // Here its text is "" and the fork goes on.
                if message.starts_with("Cannot read properties of")
                    && message.ends_with("(reading 'filter')")
                    && case.position == Position::Before
                {
                    report.pi_crashes.push(what.clone());
                    match ours {
                        Forked::Made { selected_text, .. } => {
                            assert_eq!(
                                selected_text,
                                &Some(JsValue::from("")),
                                "{what}: selectedText"
                            )
                        }
                        Forked::Refused(e) => {
                            panic!("{what}: pi crashed ({message}); refused here: {e}")
                        }
                    }
                    return;
                }
                report.refused += 1;
                let expected = format!("pi-session: {}: {message}\n", source.path.display());
                match ours {
                    Forked::Refused(ours) if source.v1 && case.unknown_id.is_none() => {
                        assert_eq!(ours, &message, "{what}: the error")
                    }
                    Forked::Refused(ours) => assert_eq!(ours, &expected, "{what}: the error"),
                    Forked::Made { .. } => {
                        panic!("{what}: pi refused ({message}), this program forked: {ours:?}")
                    }
                }
                assert_eq!(
                    files_in(&out("ours", i)),
                    Vec::<PathBuf>::new(),
                    "{what}: nothing written"
                );
                return;
            }
            let Forked::Made {
                file,
                written,
                leaf_id,
                selected_text,
            } = ours
            else {
                panic!("{what}: pi forked ({pi:?}), this program refused: {ours:?}");
            };
            let pi_written = pi.get("written") == Some(&JsValue::Bool(true));
            assert_eq!(*written, pi_written, "{what}: written");
            // Text is UTF-8 here: a lone surrogate in the forked message becomes U+FFFD.
            let pi_text = pi.get("selectedText").map(|t| {
                let lossy = t.as_str().unwrap();
                if JsValue::from(lossy.as_ref()) != *t {
                    report.lone_surrogates += 1;
                }
                JsValue::from(lossy.as_ref())
            });
            assert_eq!(selected_text, &pi_text, "{what}: selectedText");
            let pi_file = PathBuf::from(str_of(pi, "file").unwrap());
            assert_eq!(
                file.parent(),
                Some(out("ours", i).as_path()),
                "{what}: our file's directory"
            );
            let pi_leaf = str_of(pi, "leafId");
            if pi_leaf.is_none() {
                report.root_forks += 1;
            }
            let folded = source.folded_leaf(pi_leaf.clone());
            if folded != pi_leaf {
                report.leaf_entry_forks += 1;
            }
            let pi_leaf = folded;
            if case.position == Position::At {
                report
                    .kinds_at
                    .insert(source.entries[case.index].kind.clone());
            }
            if !pi_written {
                assert!(
                    !file.exists() && !pi_file.exists(),
                    "{what}: neither writes a file"
                );
                assert_eq!(
                    files_in(&out("ours", i)),
                    Vec::<PathBuf>::new(),
                    "{what}: nothing written"
                );
                let source_ids: HashSet<&str> = source
                    .entries
                    .iter()
                    .filter_map(|e| e.id.as_deref())
                    .collect();
                match (&pi_leaf, leaf_id) {
                    (None, None) => {}
                    (Some(pi_leaf), Some(ours)) if source_ids.contains(pi_leaf.as_str()) => {
                        assert_eq!(ours, pi_leaf, "{what}: leaf")
                    }
                    // A re-created label (or a v1 entry): a fresh id on each side.
                    (Some(_), Some(ours)) => {
                        assert!(
                            !source_ids.contains(ours.as_str()),
                            "{what}: leaf {ours} is fresh too"
                        )
                    }
                    _ => panic!("{what}: leaf {leaf_id:?}, pi's {pi_leaf:?}"),
                }
                return;
            }
            report.written += 1;
            let (pi_norm, our_norm) = pair.take().expect("both wrote, so both were normalized");
            // The header: the same but for the parent, which names each side's source.
            let (pi_header, pi_parent) = pi_norm.header_without_parent();
            let (our_header, our_parent) = our_norm.header_without_parent();
            assert_eq!(our_header, pi_header, "{what}: normalized header");
            assert_eq!(
                pi_parent,
                str_of(pi, "source"),
                "{what}: pi's parentSession names its copy"
            );
            assert_eq!(
                our_parent.as_deref(),
                Some(path_str(&source.path)),
                "{what}: parentSession"
            );
            assert_eq!(
                our_norm.entries, pi_norm.entries,
                "{what}: normalized entries"
            );
            // Byte for byte, once pi's fresh ids are ours.
            let ids = id_translation(&pi_norm, &our_norm);
            let (pi_lines, our_lines) = (lines(&pi_file), lines(file));
            assert_eq!(our_lines.len(), pi_lines.len(), "{what}: line count");
            assert_eq!(
                our_lines[0],
                with_values_of(
                    &pi_lines[0],
                    &our_lines[0],
                    &["id", "timestamp", "parentSession"]
                ),
                "{what}: header line"
            );
            for (n, (ours, pi)) in our_lines.iter().zip(&pi_lines).enumerate().skip(1) {
                if ours != pi {
                    assert_eq!(ours, &translated(pi, &ids), "{what}: line {}", n + 1);
                }
            }
            let leaf = pi_leaf.map(|l| ids.get(&l).cloned().unwrap_or(l));
            assert_eq!(leaf_id, &leaf, "{what}: leaf");
            let source_ids: HashSet<&str> = source
                .entries
                .iter()
                .filter_map(|e| e.id.as_deref())
                .collect();
            report.labels_recreated += our_lines[1..]
                .iter()
                .map(|l| parse(l))
                .filter(|v| str_of(v, "type").as_deref() == Some("label"))
                .filter(|v| source.v1 || !source_ids.contains(str_of(v, "id").unwrap().as_str()))
                .count();
        }));
        outcomes.push(match outcome {
            Ok(()) => {
                report.add(one);
                Ok(())
            }
            Err(payload) => Err(crate::harness::panic_message(&*payload)),
        });
    }
    eprintln!(
        "{name}: {} forks compared, {} written, {} refused by both, {} labels re-created, {} before a root, {} at a leaf entry, {} texts with a lone surrogate, pi crashed on {:?}",
        report.compared,
        report.written,
        report.refused,
        report.labels_recreated,
        report.root_forks,
        report.leaf_entry_forks,
        report.lone_surrogates,
        report.pi_crashes
    );
    (report, outcomes)
}

/// The kinds of entries every `--at` sweep over the hand-made, replayed and generated sources
/// must have covered.
pub(crate) const KINDS: [&str; 15] = [
    "branch_summary",
    "compaction",
    "custom",
    "custom_message",
    "label",
    "message/assistant",
    "message/bashExecution",
    "message/toolResult",
    "message/user",
    "model_change",
    "session_info",
    "thinking_level_change",
    "future_kind",
    "message/custom",
    "message/branchSummary",
];
