// Errors arrive as PiSessionError with the server's code and data.kind; a binary that cannot
// start says how to get one; type errors in params are caught by tsc (this file is typechecked).

import { match, ok, rejects, strictEqual } from "node:assert/strict";
import { test } from "node:test";

import { type AgentMessage, ErrorCodes, type NewEntry, PiSession, PiSessionError } from "pi-session";

import { assistant, spawnClient, user } from "./support.ts";

test("application, params and lifecycle errors carry code and data.kind", async () => {
  const pi = spawnClient();
  // Before initialize the server refuses requests.
  await rejects(pi.session.getInfo({ sessionId: "x" }), (error) => {
    ok(error instanceof PiSessionError);
    strictEqual(error.code, ErrorCodes.ServerNotInitialized);
    strictEqual(error.method, "session/getInfo");
    return true;
  });
  await pi.initialize({ deterministic: true });
  await rejects(pi.session.getInfo({ sessionId: "nope" }), (error) => {
    ok(error instanceof PiSessionError);
    strictEqual(error.code, 1004);
    strictEqual(error.kind, "session_not_found");
    strictEqual(error.data?.kind, "session_not_found");
    return true;
  });
  const { sessionId } = await pi.session.create({ cwd: "/tmp/project", inMemory: true });
  await rejects(pi.session.getEntry({ sessionId, entryId: "00000000" }), (error) => {
    ok(error instanceof PiSessionError);
    strictEqual(error.kind, "entry_not_found");
    return true;
  });
  // A value the types allow but the server refuses: the message names the parameter.
  await rejects(pi.session.append({ sessionId, entry: { type: "no_such_kind" } as unknown as NewEntry }), (error) => {
    ok(error instanceof PiSessionError);
    strictEqual(error.code, ErrorCodes.InvalidParams);
    strictEqual(error.kind, undefined);
    match(error.message, /entry/);
    return true;
  });
  // Params the types refuse never get sent (checked by `tsc --noEmit`, not at run time).
  if (process.env.NEVER) {
    // @ts-expect-error: `entry` is required
    await pi.session.append({ sessionId });
    // @ts-expect-error: `targetId` must be a string
    await pi.session.navigateTree({ sessionId, targetId: 5 });
    // @ts-expect-error: no such method
    await pi.session.nothing({});
    // @ts-expect-error: not a hook
    pi.onHook("session_after_tree", () => undefined);
  }
  strictEqual(await pi.dispose(), 0);
});

test("dispose of a client never initialized still ends the server at once", async () => {
  const pi = spawnClient();
  const started = Date.now();
  strictEqual(await pi.dispose(), 1, "exit without a successful shutdown is exit code 1");
  ok(Date.now() - started < 2000, "no wait for the kill timeout");
});

test("hooks are registered before initialize, which declares them", async () => {
  const pi = spawnClient();
  await pi.initialize();
  let thrown: unknown;
  try {
    pi.onHook("session_before_tree", () => undefined);
  } catch (error) {
    thrown = error;
  }
  ok(thrown instanceof Error);
  match(thrown.message, /before it/);
  strictEqual(await pi.dispose(), 0);
});

test("a binary that cannot start names the ways to provide one", async () => {
  const pi = PiSession.spawn({ binary: "/nonexistent/pi-session", stderr: "ignore" });
  await rejects(pi.initialize(), /PI_SESSION_BIN.*|cargo install/s);
  strictEqual(await pi.dispose(), null);
});

test("a server that dies fails waiting and later requests, and this process lives on", async () => {
  const pi = spawnClient();
  let hookCalled!: () => void;
  const hookReached = new Promise<void>((resolve) => (hookCalled = resolve));
  pi.onHook("session_before_tree", () => {
    hookCalled();
    return new Promise(() => {}); // never answers: the server dies first
  });
  // A handler that throws is an error answer: the server goes on as if it had none.
  let forkHooks = 0;
  pi.onHook("session_before_fork", () => {
    forkHooks += 1;
    throw new Error("the extension failed");
  });
  await pi.initialize({ deterministic: true });
  const { sessionId } = await pi.session.create({ cwd: "/tmp/project", inMemory: true });
  const say = (message: AgentMessage) => pi.session.append({ sessionId, entry: { type: "message", message } });
  const question = await say(user("What is 2+2?", 1));
  await say(assistant("4", 2));
  const fork = await pi.session.fork({ sessionId, entryId: question.entryId, position: "at" });
  strictEqual(fork.cancelled, false);
  strictEqual(forkHooks, 1);

  const navigation = pi.session.navigateTree({ sessionId, targetId: question.entryId });
  await hookReached;
  pi.process!.kill("SIGKILL");
  const gone = (error: unknown) => {
    ok(error instanceof PiSessionError);
    strictEqual(error.code, ErrorCodes.ServerGone);
    match(error.message, /SIGKILL/);
    return true;
  };
  await rejects(navigation, gone);
  await rejects(pi.session.getInfo({ sessionId }), gone);
  strictEqual(await pi.dispose(), null);
});
