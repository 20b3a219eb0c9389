//! What the HTML page embeds: the vendored Markdown and highlighting libraries (pinned by
//! `assets/package-lock.json`, refreshed by `scripts/vendor-export-assets.sh`, recorded with
//! their SHA-256 in `assets/vendor/manifest.json`) and the viewer's own script and styles.

use std::sync::OnceLock;

use base64::Engine;
use sha2::{Digest, Sha256};

pub(crate) const MARKED_JS: &str = include_str!("assets/vendor/marked.umd.js");
pub(crate) const HIGHLIGHT_JS: &str = include_str!("assets/vendor/highlight.min.js");
pub(crate) const HIGHLIGHT_LIGHT_CSS: &str = include_str!("assets/vendor/github.min.css");
pub(crate) const HIGHLIGHT_DARK_CSS: &str = include_str!("assets/vendor/github-dark.min.css");
pub(crate) const VIEWER_JS: &str = include_str!("assets/viewer.js");
pub(crate) const VIEWER_CSS: &str = include_str!("assets/viewer.css");

/// The inline scripts, in page order.
pub(crate) const SCRIPTS: [&str; 3] = [MARKED_JS, HIGHLIGHT_JS, VIEWER_JS];

/// The Content-Security-Policy sources allowing exactly the inline scripts
/// (`'sha256-…' 'sha256-…' …`), computed once per process.
pub(crate) fn script_hashes() -> &'static str {
    static HASHES: OnceLock<String> = OnceLock::new();
    HASHES.get_or_init(|| {
        SCRIPTS
            .iter()
            .map(|script| {
                let digest = Sha256::digest(script.as_bytes());
                format!(
                    "'sha256-{}'",
                    base64::engine::general_purpose::STANDARD.encode(digest)
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// Checks the vendored files against the manifest and the lockfile: each file's SHA-256 is the
/// one recorded, and each was taken from the version the lockfile pins. Returns the problems.
#[cfg(test)]
fn check_vendored(
    lockfile: &serde_json::Value,
    manifest: &serde_json::Value,
    read: impl Fn(&str) -> std::io::Result<Vec<u8>>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(files) = manifest.get("files").and_then(|f| f.as_object()) else {
        return vec!["the manifest has no `files`".into()];
    };
    for (name, facts) in files {
        let package = facts["package"].as_str().unwrap_or_default();
        let pinned = lockfile["packages"][format!("node_modules/{package}")]["version"].as_str();
        if pinned != facts["version"].as_str() {
            problems.push(format!(
                "{name}: vendored from {package} {:?}, the lockfile pins {pinned:?}",
                facts["version"]
            ));
        }
        match read(name) {
            Ok(bytes) => {
                let sha = hex(&Sha256::digest(&bytes));
                if Some(sha.as_str()) != facts["sha256"].as_str() {
                    problems.push(format!("{name}: its SHA-256 is {sha}, not the manifest's"));
                }
            }
            Err(e) => problems.push(format!("{name}: {e}")),
        }
    }
    problems
}

#[cfg(test)]
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/export/assets");

    fn json(path: &str) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(format!("{DIR}/{path}")).unwrap()).unwrap()
    }

    #[test]
    fn export_vendored_files_are_the_lockfiles_versions() {
        let lockfile = json("package-lock.json");
        let manifest = json("vendor/manifest.json");
        let problems = check_vendored(&lockfile, &manifest, |name| {
            std::fs::read(format!("{DIR}/vendor/{name}"))
        });
        assert!(
            problems.is_empty(),
            "run scripts/vendor-export-assets.sh: {problems:#?}"
        );
        // The embedded bytes are those files, and each library names its pinned version.
        let marked = lockfile["packages"]["node_modules/marked"]["version"]
            .as_str()
            .unwrap();
        assert!(MARKED_JS.contains(&format!("marked v{marked}")));
        let hljs = lockfile["packages"]["node_modules/@highlightjs/cdn-assets"]["version"]
            .as_str()
            .unwrap();
        assert!(HIGHLIGHT_JS.contains(&format!("Highlight.js v{hljs}")));
        assert_eq!(manifest["files"].as_object().unwrap().len(), 6);
    }

    #[test]
    fn export_a_tampered_file_is_found() {
        let lockfile = json("package-lock.json");
        let manifest = json("vendor/manifest.json");
        let problems = check_vendored(&lockfile, &manifest, |name| {
            let mut bytes = std::fs::read(format!("{DIR}/vendor/{name}"))?;
            if name == "marked.umd.js" {
                bytes.push(b'\n');
            }
            Ok(bytes)
        });
        assert_eq!(problems.len(), 1, "{problems:?}");
    }

    #[test]
    fn export_inline_scripts_cannot_end_their_element() {
        for (i, text) in SCRIPTS.iter().chain([&VIEWER_CSS]).enumerate() {
            let lower = text.to_ascii_lowercase();
            assert!(!lower.contains("</script"), "asset {i} holds </script");
            assert!(!lower.contains("</style"), "asset {i} holds </style");
            assert!(!lower.contains("<!--"), "asset {i} holds <!--");
        }
        assert_eq!(script_hashes().matches("'sha256-").count(), 3);
    }
}
