#!/usr/bin/env bash
# Installs the oracle (pi 0.82.1's published session code) into target/oracle.
# ../shared is read-only, so the oracle is copied into this ignored scratch folder first.
# Idempotent: skips `npm ci` when the same lock file is already installed.
set -euo pipefail
cd "$(dirname "$0")/.."
shared="${PI_SHARED_DIR:-../shared}"
dest=target/oracle
mkdir -p "$dest"
for f in package.json package-lock.json pi-oracle.mjs; do
  cp "$shared/oracle/$f" "$dest/$f"
done
if [ -d "$dest/node_modules" ] && cmp -s "$dest/package-lock.json" "$dest/.installed-lock"; then
  exit 0
fi
(cd "$dest" && npm ci --no-audit --no-fund --loglevel=error)
cp "$dest/package-lock.json" "$dest/.installed-lock"
