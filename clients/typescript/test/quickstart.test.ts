// The TypeScript quick start (examples/quickstart.ts, quoted verbatim by the README; `cargo
// test` checks the quote), as tsc compiled it next to this test, runs against the binary under
// test (on Node 20 too: no type stripping needed).

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { strictEqual } from "node:assert/strict";
import { test } from "node:test";
import { promisify } from "node:util";

import { binary } from "./support.ts";

test("the quick start runs and prints what the README says", async () => {
  const script = fileURLToPath(new URL("../examples/quickstart.js", import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [script], {
    env: { ...process.env, PI_SESSION_BIN: binary, PI_SESSION_LOG: "off" },
  });
  strictEqual(
    stdout,
    "moved to 13790312 summary from hook: true\neditor text: What is 2+2?\n",
  );
});
