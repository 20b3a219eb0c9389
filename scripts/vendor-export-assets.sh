#!/usr/bin/env bash
# Refreshes the libraries the HTML export embeds (src/export/assets/vendor/): installs the
# versions pinned by src/export/assets/package-lock.json into a temporary directory and copies
# their browser builds and license texts, then records each file's version and SHA-256 in
# vendor/manifest.json (src/export/assets.rs's test checks both against the lockfile).
# To move to a newer version: edit package.json, run `npm install --package-lock-only` in
# src/export/assets, then this script, and commit all of it.
set -euo pipefail
cd "$(dirname "$0")/.."
assets=src/export/assets
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$assets/package.json" "$assets/package-lock.json" "$work/"
(cd "$work" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
vendor="$assets/vendor"
rm -rf "$vendor"
mkdir -p "$vendor"
modules="$work/node_modules"
# The source map comment is dropped: the export fetches nothing, not even in devtools. A
# `<!--` (in regular expressions of both libraries) is written `\x3C!--`, the same expression,
# so that an inline script cannot change how the HTML parser reads the rest of the page.
sed -e '/^\/\/# sourceMappingURL=/d' -e 's/<!--/\\x3C!--/g' \
  "$modules/marked/lib/marked.umd.js" >"$vendor/marked.umd.js"
cp "$modules/marked/LICENSE.md" "$vendor/marked.LICENSE.md"
hljs="$modules/@highlightjs/cdn-assets"
sed -e 's/<!--/\\x3C!--/g' "$hljs/highlight.min.js" >"$vendor/highlight.min.js"
cp "$hljs/styles/github.min.css" "$vendor/github.min.css"
cp "$hljs/styles/github-dark.min.css" "$vendor/github-dark.min.css"
cp "$hljs/LICENSE" "$vendor/highlight.js.LICENSE"
node - "$work" "$vendor" <<'JS'
const fs = require("fs"), path = require("path"), crypto = require("crypto");
const [work, vendor] = process.argv.slice(2);
const lock = JSON.parse(fs.readFileSync(path.join(work, "package-lock.json"), "utf8"));
const from = {
  "marked.umd.js": "marked", "marked.LICENSE.md": "marked",
  "highlight.min.js": "@highlightjs/cdn-assets", "github.min.css": "@highlightjs/cdn-assets",
  "github-dark.min.css": "@highlightjs/cdn-assets", "highlight.js.LICENSE": "@highlightjs/cdn-assets",
};
const files = {};
for (const [file, pkg] of Object.entries(from)) {
  const bytes = fs.readFileSync(path.join(vendor, file));
  files[file] = {
    package: pkg,
    version: lock.packages[`node_modules/${pkg}`].version,
    sha256: crypto.createHash("sha256").update(bytes).digest("hex"),
  };
}
fs.writeFileSync(path.join(vendor, "manifest.json"), JSON.stringify({ files }, null, 2) + "\n");
JS
echo "vendored into $vendor:"
ls -l "$vendor"
