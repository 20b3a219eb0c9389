//! Running pi's forks and normalizing files with the oracle; translating pi's fresh ids into ours.

use super::*;

/// `tests/oracle/pi-fork.mjs batch`: every job in one Node process. Temporary copies go under
/// `scratch`.
pub(crate) fn pi_forks(scratch: &Scratch, name: &str, jobs: &[Vec<String>]) -> Vec<JsValue> {
    if jobs.is_empty() {
        return Vec::new();
    }
    let jobs_file = scratch.write(
        &format!("{name}-pi-jobs.json"),
        &JsValue::Array(
            jobs.iter()
                .map(|args| {
                    JsValue::Array(args.iter().map(|a| JsValue::from(a.as_str())).collect())
                })
                .collect(),
        )
        .stringify(),
    );
    let tmp = scratch.path("node-tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut command = oracle().command("pi-fork.mjs");
    if scratch.profile == Profile::Pi16 {
        command.env("PI_FORK_VERSION", "1.6");
    }
    let output = command
        .arg(oracle().dir())
        .arg("batch")
        .arg(&jobs_file)
        .env("TMPDIR", &tmp)
        .env("HOME", scratch.path("home"))
        .env_remove("PI_CODING_AGENT_DIR")
        .current_dir(scratch.path(""))
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "pi-fork.mjs batch failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results = parse(std::str::from_utf8(&output.stdout).unwrap().trim_end());
    let results = results.as_array().expect("an array").to_vec();
    assert_eq!(results.len(), jobs.len());
    let version = scratch.profile.name();
    support::count(&format!("fork suite, {name} ({version})"), results.len());
    results
}

/// The oracle's commands in one Node process, in a scratch subdirectory named after `name`.
pub(crate) fn oracle_commands(
    scratch: &Scratch,
    name: &str,
    jobs: &[Vec<String>],
) -> Vec<Result<String, String>> {
    let _ = (scratch, name);
    oracle()
        .run(jobs.to_vec())
        .into_iter()
        .map(|outcome| outcome.result())
        .collect()
}

/// The oracle's `normalize FILE --with-map` of each file.
pub(crate) fn normalized(scratch: &Scratch, name: &str, files: &[PathBuf]) -> Vec<Normalized> {
    let jobs: Vec<Vec<String>> = files
        .iter()
        .map(|f| vec!["normalize".into(), path_str(f).into(), "--with-map".into()])
        .collect();
    oracle_commands(scratch, name, &jobs)
        .into_iter()
        .zip(files)
        .map(|(out, file)| {
            let text = out.unwrap_or_else(|e| panic!("normalize {}: {e}", file.display()));
            Normalized::new(&text)
        })
        .collect()
}

/// A `normalize --with-map` document, split into what is compared.
pub(crate) struct Normalized {
    pub(crate) header: JsValue,
    /// The entries, as the oracle printed them.
    pub(crate) entries: String,
    /// Label (`e1`, ...) -> id.
    pub(crate) id_map: Vec<(String, String)>,
}

impl Normalized {
    /// Splits the oracle's output (`JSON.stringify` of `{entries, header, idMap}` with sorted
    /// keys and an indent of 2) at its members: only a member of the document itself starts a
    /// line with two spaces and a quote. The entries are kept as printed.
    pub(crate) fn new(text: &str) -> Normalized {
        // (where the member's line starts, where its value starts)
        let member = |name: &str| {
            let marker = format!("\n  \"{name}\": ");
            let at = text
                .find(&marker)
                .unwrap_or_else(|| panic!("no {name} in the normalized document"));
            (at, at + marker.len())
        };
        let (entries, header, id_map) = (member("entries"), member("header"), member("idMap"));
        assert!(
            entries.0 < header.0 && header.0 < id_map.0,
            "members in sorted order"
        );
        let value = |from: usize, to: usize| text[from..to].trim_end().trim_end_matches(',');
        let last = text.trim_end().strip_suffix('}').expect("a document");
        let ids: Vec<(String, String)> = parse(&last[id_map.1..])
            .as_object()
            .unwrap()
            .iter()
            .map(|(label, id)| {
                (
                    label.to_string_lossy().into_owned(),
                    id.as_str().unwrap().into_owned(),
                )
            })
            .collect();
        Normalized {
            header: parse(value(header.1, id_map.0)),
            entries: value(entries.1, header.0).to_string(),
            id_map: ids,
        }
    }

    pub(crate) fn header_without_parent(&self) -> (JsValue, Option<String>) {
        let mut header = self.header.clone();
        let parent = header
            .as_object_mut()
            .and_then(|h| h.shift_remove("parentSession"))
            .and_then(|p| p.as_str().map(|s| s.into_owned()));
        (header, parent)
    }
}

/// pi's id -> our id, through the two files' normalization labels.
pub(crate) fn id_translation(pi: &Normalized, ours: &Normalized) -> HashMap<String, String> {
    let ours: HashMap<&str, &str> = ours
        .id_map
        .iter()
        .map(|(l, id)| (l.as_str(), id.as_str()))
        .collect();
    pi.id_map
        .iter()
        .filter_map(|(label, id)| {
            ours.get(label.as_str())
                .map(|o| (id.clone(), o.to_string()))
        })
        .collect()
}

pub(crate) const ID_FIELDS: [&str; 5] =
    ["id", "parentId", "targetId", "fromId", "firstKeptEntryId"];

/// An entry line of pi's with its ids replaced by ours, as `JSON.stringify` writes it.
pub(crate) fn translated(line: &str, ids: &HashMap<String, String>) -> String {
    let mut value = parse(line);
    if let Some(map) = value.as_object_mut() {
        for field in ID_FIELDS {
            if let Some(JsValue::String(id)) = map.get(field)
                && let Some(ours) = ids.get(id.to_string_lossy().as_ref())
            {
                let ours = JsValue::from(ours.as_str());
                map.insert(field.into(), ours);
            }
        }
    }
    value.stringify()
}

/// The line `base` with the members `keys` of `donor` (in `base`'s key order), as
/// `JSON.stringify` writes it.
pub(crate) fn with_values_of(base: &str, donor: &str, keys: &[&str]) -> String {
    let mut value = parse(base);
    let donor = parse(donor);
    let map = value.as_object_mut().unwrap();
    for key in keys {
        match donor.get(key) {
            Some(v) => {
                map.insert((*key).into(), v.clone());
            }
            None => {
                map.shift_remove(*key);
            }
        }
    }
    value.stringify()
}
