import { accessSync, constants, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";

import { PLATFORM_SCOPE, currentPlatform, currentPlatformName } from "./platforms.js";

/** The environment variable naming the pi-session binary. */
export const BINARY_VARIABLE = "PI_SESSION_BIN";

/** How a binary was found. */
export type BinarySource = "given" | "env" | "package" | "path";

export interface FoundBinary {
  path: string;
  source: BinarySource;
}

/** No binary could be found; the message names the platform and the override. */
export class BinaryNotFoundError extends Error {
  override name = "BinaryNotFoundError";
}

/** The binary inside this platform's package (`@pi-session/linux-x64-gnu`, ...), if installed. */
export function packagedBinary(): string | undefined {
  const platform = currentPlatform();
  if (!platform) return undefined;
  const require = createRequire(import.meta.url);
  let manifest: string;
  try {
    manifest = require.resolve(`${PLATFORM_SCOPE}/${platform.name}/package.json`);
  } catch {
    return undefined;
  }
  const binary = join(dirname(manifest), "bin", platform.binary);
  return isExecutable(binary) ? binary : undefined;
}

/** `pi-session` on `PATH` (on Windows also with the `PATHEXT` endings), if any. */
export function binaryOnPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const endings = process.platform === "win32" ? (env.PATHEXT ?? ".EXE").split(";") : [""];
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    for (const ending of endings) {
      const candidate = join(dir, `pi-session${ending.toLowerCase()}`);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The binary to run, and where it came from: the one given, else `$PI_SESSION_BIN`, else the
 * one in this platform's package (an optional dependency of `pi-session`), else `pi-session`
 * on `PATH` (unless `searchPath` is false). Throws {@link BinaryNotFoundError} when none fits.
 */
export function locateBinary(
  given?: string,
  env: NodeJS.ProcessEnv = process.env,
  { searchPath = true }: { searchPath?: boolean } = {},
): FoundBinary {
  if (given) return { path: given, source: "given" };
  const fromEnv = env[BINARY_VARIABLE];
  if (fromEnv) return { path: fromEnv, source: "env" };
  const packaged = packagedBinary();
  if (packaged) return { path: packaged, source: "package" };
  const onPath = searchPath ? binaryOnPath(env) : undefined;
  if (onPath) return { path: onPath, source: "path" };
  throw new BinaryNotFoundError(notInstalledMessage(searchPath));
}

/** The binary's path (see {@link locateBinary}). */
export function findBinary(given?: string, env: NodeJS.ProcessEnv = process.env): string {
  return locateBinary(given, env).path;
}

function notInstalledMessage(searchedPath: boolean): string {
  const platform = currentPlatform();
  const where = platform
    ? `the package ${PLATFORM_SCOPE}/${platform.name} is not installed (npm installs it with ` +
      "pi-session as an optional dependency: an install with --omit=optional or --no-optional, " +
      "or a lockfile made on another platform, leaves it out)"
    : `no pi-session package is built for ${currentPlatformName()}`;
  return (
    `no pi-session binary for ${currentPlatformName()}: ${where}` +
    (searchedPath ? " and there is no pi-session on PATH" : "") +
    `; set ${BINARY_VARIABLE} to a pi-session binary (\`cargo install --path .\` in a ` +
    "checkout builds one)"
  );
}

/** What to tell someone whose binary could not be started. */
export function notFoundMessage(binary: string, cause: string): string {
  return (
    `cannot run the pi-session binary '${binary}' (${cause}): reinstall pi-session, ` +
    `set ${BINARY_VARIABLE} to a pi-session binary, or pass its path as \`binary\``
  );
}
