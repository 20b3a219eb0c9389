/** The environment variable naming the pi-session binary. */
export const BINARY_VARIABLE = "PI_SESSION_BIN";

/** The binary to run: the one given, else `$PI_SESSION_BIN`, else `pi-session` on `PATH`. */
export function findBinary(given?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (given) return given;
  const fromEnv = env[BINARY_VARIABLE];
  if (fromEnv) return fromEnv;
  return "pi-session";
}

/** What to tell someone whose binary could not be started. */
export function notFoundMessage(binary: string, cause: string): string {
  return (
    `cannot run the pi-session binary '${binary}' (${cause}): install it with ` +
    "`cargo install --path .` in a pi-session checkout (or `cargo install --git URL pi-session`), " +
    `then put it on PATH, set ${BINARY_VARIABLE}, or pass its path as \`binary\``
  );
}
