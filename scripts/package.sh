#!/usr/bin/env bash
# scripts/package.sh OUTDIR: builds every artifact a release publishes for this machine's
# platform into OUTDIR:
#   pi-session-VERSION.tgz                 npm: the typed client and the `pi-session` bin shim
#   pi-session-PLATFORM-VERSION.tgz        npm: @pi-session/PLATFORM, the binary (os/cpu/libc)
#   pi_session-VERSION-py3-none-TAG.whl    PyPI: the binary and the Python client (maturin)
#   pi_session-VERSION.tar.gz              PyPI: the sdist, built from source with cargo
# Set PI_SESSION_TARGET to a Rust target triple to build for it (the release workflow does, with
# that target's toolchain installed). Needs cargo, node >= 20 with npm, python3 >= 3.11 with
# venv (PYTHON names another python); installs maturin from PyPI (pinned with hashes) into
# TARGET/package-tools once, TARGET being cargo's target directory (`cargo metadata` says where:
# CARGO_TARGET_DIR, a config's build.target-dir, else target/ in the checkout).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/package.sh OUTDIR" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$1"
out="$(cd "$1" && pwd)"
target="${PI_SESSION_TARGET:-}"
# Where cargo puts what it builds: asked, never assumed to be $root/target.
target_dir="$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d));
    process.stdin.on("end", () => console.log(JSON.parse(s).target_directory));')"
[ -n "$target_dir" ] || { echo "package.sh: cargo metadata named no target directory" >&2; exit 1; }
work="$target_dir/package-work"
mkdir -p "$work"

version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n1)"
npm_version="$(node -p 'require(process.argv[1]).version' "$root/clients/typescript/package.json")"
if [ "$version" != "$npm_version" ]; then
  echo "package.sh: Cargo.toml says $version but clients/typescript/package.json says $npm_version" >&2
  exit 1
fi

step() { printf '==> %s\n' "$*" >&2; }

# 1. The binary (the release profile: stripped, no debug info).
step "cargo build --release ${target:+--target $target}"
cargo build --release --locked --bin pi-session ${target:+--target "$target"} \
  --manifest-path "$root/Cargo.toml"
release_dir="$target_dir/${target:+$target/}release"

# 2. The npm client package, built from a copy (the checkout's node_modules stay as they are).
step "npm: pi-session $version"
stage="$work/typescript"
rm -rf "$stage"
mkdir -p "$stage"
(cd "$root/clients/typescript" && tar --exclude=./node_modules --exclude=./dist --exclude=./build -cf - .) \
  | tar -xf - -C "$stage"
(cd "$stage" && npm ci --no-audit --no-fund --loglevel=error >&2)
# The platform table (src/platforms.ts) names the packages; the right one is the one of the
# target built (PI_SESSION_TARGET), else this machine's.
platform_json="$(cd "$stage" && node --input-type=module -e '
  const { PLATFORMS, currentPlatform } = await import("./dist/platforms.js");
  const target = process.argv[1];
  const platform = target ? PLATFORMS.find((p) => p.target === target) : currentPlatform();
  if (!platform) { console.error(`no npm platform package for ${target || process.platform + "-" + process.arch}`); process.exit(1); }
  console.log(JSON.stringify(platform));
' "$target")"
# Every platform package is an optional dependency of the same version: npm installs the one
# whose os/cpu/libc match.
(cd "$stage" && node --input-type=module -e '
  import { readFileSync, writeFileSync } from "node:fs";
  const { PLATFORMS, PLATFORM_SCOPE } = await import("./dist/platforms.js");
  const manifest = JSON.parse(readFileSync("package.json", "utf8"));
  // dist/ is built: the published package has nothing to prepare (npm would warn its users).
  delete manifest.scripts.prepare;
  manifest.optionalDependencies = Object.fromEntries(
    PLATFORMS.map((p) => [`${PLATFORM_SCOPE}/${p.name}`, manifest.version]));
  writeFileSync("package.json", JSON.stringify(manifest, null, 2) + "\n");
')
(cd "$stage" && npm pack --pack-destination "$out" --loglevel=error >&2)

# 3. The platform package: the binary alone.
name="$(node -p 'JSON.parse(process.argv[1]).name' "$platform_json")"
step "npm: @pi-session/$name $version"
platform_stage="$work/platform-$name"
rm -rf "$platform_stage"
mkdir -p "$platform_stage/bin"
binary_name="$(node -p 'JSON.parse(process.argv[1]).binary' "$platform_json")"
cp "$release_dir/$binary_name" "$platform_stage/bin/$binary_name"
node --input-type=module -e '
  import { writeFileSync } from "node:fs";
  const [platform, version, dir] = [JSON.parse(process.argv[1]), process.argv[2], process.argv[3]];
  const manifest = {
    name: `@pi-session/${platform.name}`,
    version,
    description: `The pi-session binary for ${platform.name} (installed by the pi-session package)`,
    license: "MIT",
    os: [platform.os],
    cpu: [platform.cpu],
    ...(platform.libc ? { libc: [platform.libc] } : {}),
    files: [`bin/${platform.binary}`],
    preferUnplugged: true,
  };
  writeFileSync(`${dir}/package.json`, JSON.stringify(manifest, null, 2) + "\n");
  writeFileSync(`${dir}/README.md`,
    `# @pi-session/${platform.name}\n\nThe \`pi-session\` binary for ${platform.name}. ` +
    "Install `pi-session` instead: it depends on this package where it fits.\n");
' "$platform_json" "$version" "$platform_stage"
(cd "$platform_stage" && npm pack --pack-destination "$out" --loglevel=error >&2)

# 4. The wheel and the sdist, with maturin from PyPI (pinned with hashes).
tools="$target_dir/package-tools"
requirements="$root/clients/python/requirements-package.txt"
if ! cmp -s "$requirements" "$tools/installed-requirements.txt" 2>/dev/null; then
  step "python3 -m venv $tools/venv; pip install maturin (once)"
  rm -rf "$tools"
  "${PYTHON:-python3}" -m venv "$tools/venv"
  venv_python="$tools/venv/bin/python"
  [ -x "$venv_python" ] || venv_python="$tools/venv/Scripts/python.exe"  # Windows
  "$venv_python" -m pip install --quiet --disable-pip-version-check \
    --require-hashes -r "$requirements"
  cp "$requirements" "$tools/installed-requirements.txt"
fi
maturin="$tools/venv/bin/maturin"
[ -x "$maturin" ] || maturin="$tools/venv/Scripts/maturin.exe"
step "maturin build (wheel) and maturin sdist"
rm -f "$out"/pi_session-*.whl "$out"/pi_session-*.tar.gz
# maturin reads clients/python/pyproject.toml (which points at the crate's Cargo.toml).
(cd "$root/clients/python" &&
  "$maturin" build --release --locked --quiet ${target:+--target "$target"} --out "$out" >&2 &&
  "$maturin" sdist --out "$out" >&2)

step "artifacts in $out"
ls -l "$out" >&2
