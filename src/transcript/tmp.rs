//! The transcript's temporary directory, written `${tmp}` in transcripts and exchanges.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A temporary directory a transcript's files live in, removed on drop.
pub struct Tmp {
    dir: tempfile::TempDir,
    text: String,
}

impl Tmp {
    const PLACEHOLDER: &'static str = "${tmp}";

    /// A fresh directory, removed when this is dropped.
    pub fn new() -> std::io::Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("pi-session-test")
            .tempdir()?;
        // The canonical path, as the server resolves paths.
        let text = dir.path().canonicalize()?.to_string_lossy().into_owned();
        Ok(Tmp { dir, text })
    }

    /// The directory itself.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `relative` inside the directory.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// `${tmp}` -> the directory, in every string of a message.
    pub fn fill(&self, message: &Value) -> Value {
        map_strings(message.clone(), &|s| {
            s.replace(Self::PLACEHOLDER, &self.text)
        })
    }

    /// The directory -> `${tmp}`, in every string of a message.
    pub fn hide(&self, message: Value) -> Value {
        map_strings(message, &|s| s.replace(&self.text, Self::PLACEHOLDER))
    }

    /// Every file under `dir`, by path relative to it, with its text (none when `dir` does
    /// not exist).
    pub fn files(&self, dir: &str) -> Result<Vec<(String, String)>, String> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) -> std::io::Result<()> {
            let entries = match std::fs::read_dir(dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(e),
            };
            for entry in entries {
                let path = entry?.path();
                if path.is_dir() {
                    walk(root, &path, out)?;
                } else {
                    let name = path.strip_prefix(root).unwrap_or(&path);
                    let bytes = std::fs::read(&path)?;
                    out.push((
                        name.to_string_lossy().into_owned(),
                        String::from_utf8_lossy(&bytes).into_owned(),
                    ));
                }
            }
            Ok(())
        }
        let root = self.path(dir);
        let mut out = Vec::new();
        walk(&root, &root, &mut out).map_err(|e| format!("{dir}: {e}"))?;
        out.sort();
        Ok(out)
    }
}

fn map_strings(value: Value, f: &dyn Fn(&str) -> String) -> Value {
    match value {
        Value::String(s) => Value::String(f(&s)),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| map_strings(v, f)).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (f(&k), map_strings(v, f)))
                .collect(),
        ),
        other => other,
    }
}
