// What a front-end leans on beyond the protocol: where the binary comes from, the entry
// builders, Symbol.asyncDispose, and why a dead server died.

import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deepStrictEqual, match, ok, rejects, strictEqual, throws } from "node:assert/strict";
import { test } from "node:test";

import {
  BinaryNotFoundError,
  ErrorCodes,
  PiSessionError,
  assistantMessage,
  currentPlatformName,
  customEntry,
  customMessageEntry,
  labelEntry,
  locateBinary,
  toolResultMessage,
  userMessage,
} from "pi-session";

import { spawnClient, temporaryDir } from "./support.ts";

test("the binary is the given one, then PI_SESSION_BIN, then PATH; else the error names the platform", () => {
  const dir = temporaryDir();
  const onPath = join(dir, "pi-session");
  writeFileSync(onPath, "#!/bin/sh\n");
  chmodSync(onPath, 0o755);
  deepStrictEqual(locateBinary("/given", { PI_SESSION_BIN: "/env" }), { path: "/given", source: "given" });
  deepStrictEqual(locateBinary(undefined, { PI_SESSION_BIN: "/env", PATH: dir }), { path: "/env", source: "env" });
  // No @pi-session/<platform> package in a checkout: PATH is next.
  deepStrictEqual(locateBinary(undefined, { PATH: dir }), { path: onPath, source: "path" });
  throws(
    () => locateBinary(undefined, { PATH: join(dir, "empty") }),
    (error: unknown) =>
      error instanceof BinaryNotFoundError &&
      error.message.includes(`no pi-session binary for ${currentPlatformName()}`) &&
      error.message.includes("set PI_SESSION_BIN"),
  );
});

test("built entries make a session; await using disposes the client", async () => {
  let exited: Promise<number | null>;
  {
    await using pi = spawnClient();
    exited = pi.exited;
    await pi.initialize({ deterministic: true });
    const { sessionId } = await pi.session.create({ cwd: "/tmp/project", inMemory: true });
    const model = { provider: "anthropic", model: "claude-sonnet-4-5" };
    const call = { type: "toolCall" as const, id: "c1", name: "read", arguments: { path: "a.txt" } };
    const first = await pi.session.append({ sessionId, entry: userMessage("Read a.txt", { timestamp: 1 }) });
    const tool = assistantMessage([call], { ...model, timestamp: 2 });
    strictEqual(tool.message.stopReason, "toolUse");
    for (const entry of [
      tool,
      toolResultMessage("c1", "read", "A", { timestamp: 3 }),
      assistantMessage("It says A.", { ...model, timestamp: 4 }),
      customEntry("state", { n: 1 }),
      customMessageEntry("note", "from an extension"),
      labelEntry(first.entryId, "start"),
    ]) {
      await pi.session.append({ sessionId, entry });
    }
    const context = await pi.session.buildContext({ sessionId });
    deepStrictEqual(
      context.messages.map((m) => m.role),
      ["user", "assistant", "toolResult", "assistant", "custom"],
    );
  }
  strictEqual(await exited, 0, "the block's end shut the server down");
});

test("a server that dies is named with its exit status and its last log lines", async () => {
  const pi = spawnClient({ args: ["--no-such-flag"] });
  await rejects(pi.initialize(), (error: unknown) => {
    ok(error instanceof PiSessionError);
    strictEqual(error.code, ErrorCodes.ServerGone);
    match(error.message, /the pi-session server died \(it exited with code 2\) before answering/);
    match(error.message, /--no-such-flag/);
    return true;
  });
});

test("initialize sends this process's id", async () => {
  const dir = temporaryDir();
  // A stand-in server that prints the initialize request it got, then exits.
  const fake = join(dir, "fake-server.mjs");
  writeFileSync(
    fake,
    `#!${process.execPath}\nprocess.stdin.once("data", (d) => { process.stderr.write(String(d)); process.exit(3); });\n`,
  );
  chmodSync(fake, 0o755);
  const pi = spawnClient({ binary: fake });
  await rejects(pi.initialize(), (error: unknown) => {
    ok(error instanceof PiSessionError);
    match(error.message, new RegExp(`"processId":${process.pid}`));
    return true;
  });
});
