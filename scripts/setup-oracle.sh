#!/usr/bin/env bash
# Installs the pi oracle (the shared folder's oracle/) into target/oracle, where the conformance
# tests look for it. Idempotent: `npm ci` runs only when target/oracle/node_modules was not
# installed from the current package-lock.json.
#
#   scripts/setup-oracle.sh          (PI_SHARED_DIR overrides the shared folder, default ../shared)
#
# Exit status: 0 installed or already up to date, 3 node/npm not found, other: the failing step.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="${PI_SHARED_DIR:-$root/../shared}"
source_dir="$shared/oracle"
dest="$root/target/oracle"
stamp="$dest/node_modules/.pi-session-installed-lock.json"

for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "setup-oracle: $tool not found" >&2
		exit 3
	fi
done
if [ ! -f "$source_dir/pi-oracle.mjs" ]; then
	echo "setup-oracle: no oracle at $source_dir (set PI_SHARED_DIR to the shared folder)" >&2
	exit 2
fi

mkdir -p "$dest"
for file in package.json package-lock.json pi-oracle.mjs; do
	cmp -s "$source_dir/$file" "$dest/$file" || cp "$source_dir/$file" "$dest/$file"
done

if [ -f "$stamp" ] && cmp -s "$dest/package-lock.json" "$stamp"; then
	exit 0
fi
echo "setup-oracle: npm ci in $dest" >&2
(cd "$dest" && npm ci --no-audit --no-fund --loglevel=error >&2)
cp "$dest/package-lock.json" "$stamp"
