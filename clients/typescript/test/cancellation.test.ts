// Cancellation through AbortSignal ($/cancelRequest), hooks that time out, and dispose() of a
// server that does not answer.

import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { test } from "node:test";

import { type AgentMessage, ErrorCodes, PiSession, PiSessionError } from "pi-session";

import { assistant, sleep, spawnClient, temporaryDir, user } from "./support.ts";

/** A client with a two-message in-memory session; `hold` decides how the tree hook answers. */
async function sessionWithHook(
  hold: (signal: AbortSignal) => Promise<unknown>,
  hookTimeoutMs = 5000,
) {
  const pi = spawnClient();
  const hookSignals: AbortSignal[] = [];
  pi.onHook("session_before_tree", async (_params, { signal }) => {
    hookSignals.push(signal);
    await hold(signal);
    return { summary: { summary: "too late" } };
  });
  const trees: unknown[] = [];
  pi.on("session_tree", (tree) => trees.push(tree));
  await pi.initialize({ hookTimeoutMs, deterministic: true });
  const { sessionId } = await pi.session.create({ cwd: "/tmp/project", inMemory: true });
  const say = (message: AgentMessage) => pi.session.append({ sessionId, entry: { type: "message", message } });
  const question = await say(user("What is 2+2?", 1));
  const answer = await say(assistant("4", 2));
  return { pi, sessionId, question: question.entryId, answer: answer.entryId, hookSignals, trees };
}

/** Resolves once `signal` is aborted (at once if it is already). */
const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });

test("aborting a navigation that waits for its hook: -32800, nothing moved, the hook cancelled", async () => {
  const s = await sessionWithHook(aborted);
  const controller = new AbortController();
  const navigation = s.pi.session.navigateTree(
    { sessionId: s.sessionId, targetId: s.question, summarize: true },
    { signal: controller.signal },
  );
  while (s.hookSignals.length === 0) await sleep(5);
  controller.abort();
  await rejects(navigation, (error) => {
    ok(error instanceof PiSessionError);
    strictEqual(error.code, ErrorCodes.RequestCancelled);
    return true;
  });
  // The server cancelled its hook in turn, and nothing moved.
  await aborted(s.hookSignals[0]!);
  deepStrictEqual(s.trees, []);
  strictEqual((await s.pi.session.getInfo({ sessionId: s.sessionId })).leafId, s.answer);
  strictEqual(await s.pi.dispose(), 0);
});

test("a signal aborted before the call sends nothing and fails as cancelled", async () => {
  const s = await sessionWithHook(aborted);
  await rejects(
    s.pi.session.navigateTree(
      { sessionId: s.sessionId, targetId: s.question },
      { signal: AbortSignal.abort() },
    ),
    (error) => error instanceof PiSessionError && error.code === ErrorCodes.RequestCancelled,
  );
  deepStrictEqual(s.hookSignals, []);
  strictEqual((await s.pi.session.getInfo({ sessionId: s.sessionId })).leafId, s.answer);
  strictEqual(await s.pi.dispose(), 0);
});

test("a hook that does not answer in hookTimeoutMs is cancelled and the navigation goes on", async () => {
  const s = await sessionWithHook(aborted, 100);
  const started = Date.now();
  const moved = await s.pi.session.navigateTree({ sessionId: s.sessionId, targetId: s.question });
  const took = Date.now() - started;
  ok(took >= 100 && took < 5000, `took ${took} ms`);
  strictEqual(s.hookSignals[0]!.aborted, true, "the handler saw the server's $/cancelRequest");
  strictEqual(moved.cancelled, false);
  strictEqual(moved.editorText, "What is 2+2?");
  strictEqual(moved.summaryEntry, undefined, "the late answer's summary was not used");
  deepStrictEqual(s.trees.length, 1);
  strictEqual(await s.pi.dispose(), 0);
});

test("dispose kills a server that does not answer shutdown in time", async () => {
  const dir = temporaryDir();
  const silent = join(dir, "silent-server");
  writeFileSync(silent, "#!/bin/sh\nexec sleep 60\n");
  chmodSync(silent, 0o755);
  const pi = PiSession.spawn({ binary: silent, stderr: "ignore" });
  const started = Date.now();
  strictEqual(await pi.dispose({ timeoutMs: 300 }), null);
  const took = Date.now() - started;
  ok(took >= 300 && took < 3000, `took ${took} ms`);
  strictEqual(pi.process?.signalCode, "SIGKILL");
});
