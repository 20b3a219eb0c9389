#!/usr/bin/env node
// `npx pi-session ...`: runs the binary of this platform's package (or $PI_SESSION_BIN) with the
// same arguments and stdio, and exits as it does. Never falls back to PATH, where it would find
// this very shim.
import { spawnSync } from "node:child_process";

import { BinaryNotFoundError, locateBinary } from "../dist/binary.js";

let binary;
try {
  binary = locateBinary(undefined, process.env, { searchPath: false }).path;
} catch (error) {
  if (!(error instanceof BinaryNotFoundError)) throw error;
  process.stderr.write(`pi-session: ${error.message}\n`);
  process.exit(1);
}
const run = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  process.stderr.write(`pi-session: cannot run ${binary}: ${run.error.message}\n`);
  process.exit(1);
}
if (run.signal) process.kill(process.pid, run.signal);
process.exit(run.status ?? 1);
