#!/usr/bin/env bash
# Installs the oracle (pi's own JavaScript, tests/oracle/) into target/oracle, as the test suite
# does on first use (tests/support/oracle.rs): the folder's files are copied there and `npm ci`
# runs only when target/oracle was not installed from the current package-lock.json. The same
# lock file as the suite's keeps the two from installing at once.
#
#   scripts/setup-oracle.sh        ($PI_ORACLE_DIR overrides the install folder)
#
# Exit status: 0 installed or already up to date, 3 npm or flock not found, other: the failing step.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source_dir="$root/tests/oracle"
dest="${PI_ORACLE_DIR:-$root/target/oracle}"
stamp="$dest/node_modules/.pi-session-installed-lock.json"

for tool in npm flock; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "setup-oracle: $tool not found (install Node.js with npm)" >&2
		exit 3
	fi
done

mkdir -p "$dest"
exec 9>"$dest/.install.lock"
flock 9
for file in "$source_dir"/*; do
	[ -f "$file" ] || continue
	cmp -s "$file" "$dest/$(basename "$file")" || cp "$file" "$dest/"
done
if [ -f "$stamp" ] && cmp -s "$dest/package-lock.json" "$stamp"; then
	exit 0
fi
echo "setup-oracle: npm ci in $dest" >&2
(cd "$dest" && npm ci --no-audit --no-fund --loglevel=error >&2)
cp "$dest/package-lock.json" "$stamp"
