//! A real browser for the HTML export's tests: the system's chromium (Debian's `chromium`
//! package; `.ci/run` installs it), driven from Node by `puppeteer-core` (which downloads no
//! browser), pinned by `tests/browser/package-lock.json` and installed into `target/browser`
//! on first use, as the oracle is. Without chromium, or Node with npm, the tests fail, naming
//! what to install: they never skip.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use super::root;

/// The variable naming a chromium binary to use instead of the one on `PATH`.
pub const CHROMIUM_ENV: &str = "PI_SESSION_CHROMIUM";

pub struct Browser {
    chromium: PathBuf,
    driver_dir: PathBuf,
}

/// The browser and its driver, installed on first use; panics naming what is missing.
pub fn browser() -> &'static Browser {
    static BROWSER: OnceLock<Browser> = OnceLock::new();
    BROWSER.get_or_init(|| {
        let chromium = find_chromium().unwrap_or_else(|| {
            panic!(
                "the HTML export's tests run a real browser and need chromium: install it \
                 (`apt-get install chromium` on Debian, as .ci/run does), or name a \
                 Chromium/Chrome binary in {CHROMIUM_ENV}"
            )
        });
        let driver_dir = root().join("target/browser");
        super::oracle::install(&root().join("tests/browser"), &driver_dir);
        Browser {
            chromium,
            driver_dir,
        }
    })
}

fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(CHROMIUM_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
    .find(|candidate| candidate.is_file())
}

impl Browser {
    pub fn chromium(&self) -> &Path {
        &self.chromium
    }

    /// Opens `html` in headless chromium and reports what a reader sees (see
    /// `tests/browser/check-export.mjs` for `spec` and the report).
    pub fn check(&self, html: &Path, spec: &Value) -> Value {
        let spec_file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(spec_file.path(), spec.to_string()).unwrap();
        let output = Command::new("node")
            .arg(self.driver_dir.join("check-export.mjs"))
            .arg(&self.chromium)
            .arg(html)
            .arg(spec_file.path())
            .output()
            .expect("node runs");
        assert!(
            output.status.success(),
            "check-export.mjs on {} failed: {}",
            html.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!(
                "check-export.mjs printed no JSON ({e}): {}",
                String::from_utf8_lossy(&output.stdout)
            )
        })
    }
}
