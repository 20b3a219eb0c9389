// A whole session through the typed client: create, append, a navigation whose hook vetoes and
// then supplies the summary, the session_tree event before the response, a fork with its hook,
// and the context of both sessions.

import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";

import {
  METHOD_NAMES,
  PROTOCOL_VERSION,
  type BeforeCompactAnswer,
  type BeforeTreeAnswer,
  type AgentMessage,
  type NewEntry,
} from "pi-session";

import { assistant, spawnClient, temporaryDir, toolResult, user } from "./support.ts";

test("initialize answers what the generated tables know", async () => {
  const pi = spawnClient();
  pi.onHook("session_before_fork", () => undefined);
  const init = await pi.initialize({ clientInfo: { name: "ts-test" }, processId: process.pid });
  strictEqual(init.serverInfo.name, "pi-session");
  strictEqual(init.protocolVersion, PROTOCOL_VERSION);
  deepStrictEqual(init.methods, [...METHOD_NAMES].sort());
  deepStrictEqual(init.settings.hooks, ["session_before_fork"]);
  deepStrictEqual(init.capabilities.profiles, ["pi-cli", "pi-1.6", "harness"]);
  strictEqual(init.settings.framing, "lsp");
  strictEqual(pi.supports("session/append"), true);
  // Every session/* method is a typed member of client.session.
  deepStrictEqual(
    Object.keys(pi.session).sort(),
    METHOD_NAMES.filter((m) => m.startsWith("session/")).map((m) => m.slice(8)).sort(),
  );
  strictEqual(await pi.dispose(), 0);
  strictEqual(await pi.dispose(), 0, "a second dispose is harmless");
});

test("create, append, navigate with a vetoing then summarizing hook, fork, context", async () => {
  const root = temporaryDir();
  const pi = spawnClient();
  const events: unknown[][] = [];
  const treeAnswers: BeforeTreeAnswer[] = [
    { cancel: true },
    { summary: { summary: "Explored the French version.", details: { readFiles: ["notes.txt"] } } },
  ];
  pi.onHook("session_before_tree", async (params) => {
    const preparation = params.preparation as { entriesToSummarize: unknown[] };
    events.push(["session_before_tree", params.sessionId, preparation.entriesToSummarize.length]);
    return treeAnswers.shift();
  });
  pi.onHook("session_before_fork", (params) => {
    events.push(["session_before_fork", params.position]);
    return {};
  });
  pi.on("session_tree", (tree) => events.push(["session_tree", tree.newLeafId, tree.fromExtension]));
  await pi.initialize({ sessionsRoot: join(root, "sessions") });

  const session = await pi.session.create({ cwd: join(root, "project") });
  const { sessionId } = session;
  strictEqual(session.written, false);
  strictEqual(session.profile, "pi-cli");
  const append = async (entry: NewEntry) => {
    const result = await pi.session.append({ sessionId, entry });
    strictEqual(result.leafId, result.entryId);
    return result.entryId;
  };
  const message = (m: AgentMessage) => append({ type: "message", message: m });
  const user1 = await message(user("Summarize notes.txt", 1));
  const toolTurn = await message(assistant("Reading it.", 2, "call_1"));
  await message(toolResult("call_1", "buy milk", 3));
  await message(assistant("One item: milk.", 4));
  await message(user("Now in French", 5));
  await message(assistant("Une chose : du lait.", 6));
  const label = await append({ type: "label", targetId: user1, label: "start" });

  const navigate = { sessionId, targetId: toolTurn, summarize: true };
  deepStrictEqual(await pi.session.navigateTree(navigate), { cancelled: true, leafId: label });
  const navigated = await pi.session.navigateTree(navigate);
  events.push(["response", navigated.leafId]);
  strictEqual(navigated.cancelled, false);
  const summary = navigated.summaryEntry as { id: string; parentId: string; fromHook: boolean };
  strictEqual(summary.parentId, toolTurn);
  strictEqual(summary.fromHook, true);
  strictEqual(navigated.leafId, summary.id);

  const user3 = await message(user("Read it again", 7));
  await message(assistant("Still milk.", 8));
  const fork = await pi.session.fork({ sessionId, entryId: user3, position: "before" });
  strictEqual(fork.cancelled, false);
  strictEqual(fork.selectedText, "Read it again");
  ok(fork.session);
  strictEqual((fork.session.header as { parentSession: string }).parentSession, session.path);

  const context = await pi.session.buildContext({ sessionId });
  deepStrictEqual(
    context.messages.map((m) => (m as { role: string }).role),
    ["user", "assistant", "branchSummary", "user", "assistant"],
  );
  const forked = await pi.session.buildContext({ sessionId: fork.session.sessionId, format: "llm" });
  deepStrictEqual(
    forked.messages.map((m) => (m as { role: string }).role),
    ["user", "assistant", "user"],
  );

  // The hooks were answered by the handlers; the notification came before the response.
  deepStrictEqual(events, [
    ["session_before_tree", sessionId, 5],
    ["session_before_tree", sessionId, 5],
    ["session_tree", navigated.leafId, true],
    ["response", navigated.leafId],
    ["session_before_fork", "before"],
  ]);
  strictEqual(await pi.dispose(), 0);
});

test("compact with the session_before_compact hook: a veto, then the hook's compaction and its event", async () => {
  const pi = spawnClient();
  const answers: BeforeCompactAnswer[] = [{ cancel: true }];
  const seen: string[] = [];
  pi.onHook("session_before_compact", (params) => {
    const preparation = params.preparation as { firstKeptEntryId: string; tokensBefore: number };
    seen.push(`hook ${params.reason}`);
    return (answers.shift() ?? {
      compaction: {
        summary: "Written by the extension.",
        firstKeptEntryId: preparation.firstKeptEntryId,
        tokensBefore: preparation.tokensBefore,
      },
    });
  });
  pi.on("session_compact", (event) => seen.push(`event ${event.fromExtension}`));
  await pi.initialize({ deterministic: true });
  const { sessionId } = await pi.session.create({ cwd: "/tmp/project", inMemory: true });
  let leaf = "";
  for (const message of [
    user("Summarize notes.txt", 1),
    assistant("Reading it.", 2, "call_1"),
    toolResult("call_1", "buy milk", 3),
    assistant("One item: milk.", 4),
    user("Now in French", 5),
    assistant("Une chose : du lait.", 6),
  ]) {
    leaf = (await pi.session.append({ sessionId, entry: { type: "message", message } })).entryId;
  }
  const settings = { compaction: { keepRecentTokens: 8 } };
  deepStrictEqual(await pi.session.compact({ sessionId, settings }), { cancelled: true, leafId: leaf });
  const compacted = await pi.session.compact({ sessionId, settings, reason: "threshold" });
  seen.push("response");
  strictEqual(compacted.cancelled, false);
  const entry = compacted.entry as { summary: string; fromHook: boolean; id: string };
  strictEqual(entry.summary, "Written by the extension.");
  strictEqual(entry.fromHook, true);
  strictEqual(compacted.leafId, entry.id);
  deepStrictEqual(seen, ["hook manual", "hook threshold", "event true", "response"]);
  strictEqual(await pi.dispose(), 0);
});

test("search and stats across the store, with $/progress under a workDoneToken", async () => {
  const root = temporaryDir();
  // An index of its own: the suite's shared one would hold other tests' sessions.
  const pi = spawnClient({ env: { ...process.env, PI_SESSION_INDEX_DIR: join(root, "index") } });
  const progress: unknown[] = [];
  pi.on("$/progress", (params) => {
    if (params.token === "ts-1") progress.push(params.value.kind);
  });
  const init = await pi.initialize({ sessionsRoot: join(root, "sessions") });
  strictEqual(init.capabilities.storeIndex.workDoneProgress, true);
  const { sessionId } = await pi.session.create({ cwd: join(root, "project") });
  const asked = await pi.session.append({ sessionId, entry: { type: "message", message: user("Where is the parser?", 1) } });
  const answered = await pi.session.append({
    sessionId,
    entry: { type: "message", message: assistant("In src/parser.rs.", 2) },
  });
  const found = await pi.session.search({ query: "pars", onPath: true, workDoneToken: "ts-1" });
  deepStrictEqual(found.hits.map((hit) => hit.entryId).sort(), [asked.entryId, answered.entryId].sort());
  ok(found.hits.every((hit) => hit.sessionId === sessionId && hit.onPath));
  strictEqual(progress[0], "begin");
  strictEqual(progress.at(-1), "end");
  const figures = await pi.session.stats({ by: "model", perFile: true, timezone: "UTC" });
  strictEqual(figures.totals.assistantMessages, 1);
  deepStrictEqual(figures.groups.map((group) => group.key), ["claude-sonnet-4-5"]);
  strictEqual(await pi.dispose(), 0);
});
