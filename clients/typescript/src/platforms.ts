/**
 * The platforms a release ships a binary for: one npm package each (`@pi-session/NAME`,
 * installed as an optional dependency of `pi-session` only where its `os`/`cpu`/`libc` match),
 * and the Rust target that builds it. `scripts/package.sh` and the release workflow read this
 * table (from `dist/platforms.js`), so the client and the packages agree on the names.
 */
export interface Platform {
  /** The package's name under the `@pi-session` scope. */
  readonly name: string;
  /** npm's `os` (Node's `process.platform`). */
  readonly os: NodeJS.Platform;
  /** npm's `cpu` (Node's `process.arch`). */
  readonly cpu: string;
  /** npm's `libc` (Linux only). */
  readonly libc?: "glibc" | "musl";
  /** The Rust target triple. */
  readonly target: string;
  /** The binary's file name in the package's `bin/`. */
  readonly binary: string;
}

export const PLATFORM_SCOPE = "@pi-session";

export const PLATFORMS: readonly Platform[] = [
  { name: "linux-x64-gnu", os: "linux", cpu: "x64", libc: "glibc", target: "x86_64-unknown-linux-gnu", binary: "pi-session" },
  { name: "linux-x64-musl", os: "linux", cpu: "x64", libc: "musl", target: "x86_64-unknown-linux-musl", binary: "pi-session" },
  { name: "linux-arm64-gnu", os: "linux", cpu: "arm64", libc: "glibc", target: "aarch64-unknown-linux-gnu", binary: "pi-session" },
  { name: "linux-arm64-musl", os: "linux", cpu: "arm64", libc: "musl", target: "aarch64-unknown-linux-musl", binary: "pi-session" },
  { name: "darwin-x64", os: "darwin", cpu: "x64", target: "x86_64-apple-darwin", binary: "pi-session" },
  { name: "darwin-arm64", os: "darwin", cpu: "arm64", target: "aarch64-apple-darwin", binary: "pi-session" },
  { name: "win32-x64-msvc", os: "win32", cpu: "x64", target: "x86_64-pc-windows-msvc", binary: "pi-session.exe" },
];

/** Which libc this Node runs on (Linux only): glibc reports its version, musl does not. */
export function currentLibc(): "glibc" | "musl" | undefined {
  if (process.platform !== "linux") return undefined;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime ? "glibc" : "musl";
}

/** The platform this process runs on, as `os-cpu[-libc]` (for messages). */
export function currentPlatformName(): string {
  const libc = currentLibc();
  return [process.platform, process.arch, libc === "glibc" ? "gnu" : libc].filter(Boolean).join("-");
}

/** The shipped platform matching this process, if any. */
export function currentPlatform(): Platform | undefined {
  const libc = currentLibc();
  return PLATFORMS.find(
    (p) => p.os === process.platform && p.cpu === process.arch && (p.libc === undefined || p.libc === libc),
  );
}
