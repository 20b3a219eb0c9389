#!/usr/bin/env bash
# After a change to the protocol's Rust types (a method, a param, a capability): regenerates
# everything made from them, in order: protocol/schema.json from the Rust types, then the
# clients' generated types from the schema. Commit what it changes; `cargo test` fails until
# each generated file matches (tests/suite/schema.rs, tests/suite/clients.rs).
#
#   scripts/regenerate-protocol.sh
#
# Needs Rust, Node.js with npm and python3 (the TypeScript generator's packages are installed into
# clients/typescript/node_modules by `npm ci` when missing or older than the lockfile).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

echo "regenerate: protocol/schema.json and protocol.md's method index (UPDATE_SCHEMA=1 cargo test --test suite -- schema::)"
(cd "$root" && UPDATE_SCHEMA=1 cargo test --quiet --test suite -- schema::)

echo "regenerate: clients/typescript/src/generated/protocol.ts (npm run generate)"
cd "$root/clients/typescript"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	npm ci --no-audit --no-fund --loglevel=error
fi
npm run --silent generate

echo "regenerate: clients/python/src/pi_session/{schema,_tables}.py (UPDATE_PYTHON_CLIENT=1 cargo test --test suite -- python_client::)"
cd "$root"
UPDATE_PYTHON_CLIENT=1 cargo test --quiet --test suite -- python_client::
