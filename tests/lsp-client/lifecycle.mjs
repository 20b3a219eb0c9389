// A plain JSON-RPC client over LSP framing (vscode-jsonrpc's Content-Length reader and writer,
// as a language client uses them) driving a whole session: initialize as an LSP client does,
// create, append every common entry kind, navigate with a summary from the hook, pi's plain
// moves, compact with the hook's compaction, context and usage, a watch told of another
// program's append and one ended by a deletion, the three exports, a vetoed fork, continue,
// forkFrom, delete, pi 1.6's and the harness's own entry kinds, listing, errors, then shutdown
// and exit: every method of the protocol.
// Usage: node lifecycle.mjs (the server is $PI_SESSION_BIN). Prints what it saw as JSON;
// exits non-zero (with the reason on stderr) when the server answers otherwise than expected.

import { spawn } from "node:child_process";
import { strict as assert } from "node:assert";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import * as rpc from "vscode-jsonrpc/node.js";

const binary = process.env.PI_SESSION_BIN;
assert.ok(binary, "PI_SESSION_BIN must name the server");
const root = mkdtempSync(join(tmpdir(), "pi-session-lsp-"));
const child = spawn(binary, ["--stdio", "--framing", "lsp"], {
  stdio: ["pipe", "pipe", "inherit"],
  // A store index of its own: the suite's shared one would hold other runs' sessions.
  env: { ...process.env, PI_SESSION_LOG: "off", PI_SESSION_INDEX_DIR: join(root, "index") },
});
const connection = rpc.createMessageConnection(
  new rpc.StreamMessageReader(child.stdout),
  new rpc.StreamMessageWriter(child.stdin),
);

const seen = { notifications: [], hooks: [], errors: [] };
const waiters = [];
connection.onNotification((method, params) => {
  seen.notifications.push(method);
  for (const waiter of waiters.splice(0)) waiter(method, params);
});
/** The next notification of `method`, within 10 s. */
function next(method) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${method} within 10 s`)), 10_000);
    const wait = (name, params) => {
      if (name === method) {
        clearTimeout(timer);
        resolve(params);
      } else waiters.push(wait);
    };
    waiters.push(wait);
  });
}
connection.onRequest("session_before_tree", (params) => {
  seen.hooks.push("session_before_tree");
  assert.ok(params.preparation.entriesToSummarize.length > 0);
  return {
    summary: {
      summary: "The abandoned branch, summarized by the client's model.",
      details: { readFiles: ["notes.txt"], modifiedFiles: [] },
    },
    label: "summarized",
  };
});
connection.onRequest("session_before_compact", (params) => {
  seen.hooks.push("session_before_compact");
  return {
    compaction: {
      summary: "The conversation so far, compacted by the client.",
      firstKeptEntryId: params.preparation.firstKeptEntryId,
      tokensBefore: params.preparation.tokensBefore,
      details: { readFiles: [], modifiedFiles: [] },
    },
  };
});
connection.onRequest("session_before_fork", () => {
  seen.hooks.push("session_before_fork");
  return { cancel: true };
});
connection.listen();

const request = (method, params) => connection.sendRequest(method, params);
/** `method` must fail with `code`; its error is kept for the report. */
async function refused(method, params, code) {
  try {
    await connection.sendRequest(method, params);
  } catch (error) {
    assert.equal(error.code, code, `${method}: ${error.message}`);
    seen.errors.push(`${method} ${error.code}`);
    return;
  }
  assert.fail(`${method} succeeded`);
}

let clock = Date.parse("2025-01-01T00:00:00.000Z");
const user = (text) => ({ type: "message", message: { role: "user", content: text, timestamp: clock++ } });
const usage = {
  input: 120,
  output: 30,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 150,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const assistant = (text, toolCall) => ({
  type: "message",
  message: {
    role: "assistant",
    content: [
      { type: "text", text },
      ...(toolCall ? [{ type: "toolCall", id: toolCall, name: "read", arguments: { path: "notes.txt" } }] : []),
    ],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage,
    stopReason: toolCall ? "toolUse" : "stop",
    timestamp: clock++,
  },
});
const toolResult = (toolCallId, text) => ({
  type: "message",
  message: {
    role: "toolResult",
    toolCallId,
    toolName: "read",
    content: [{ type: "text", text }],
    isError: false,
    timestamp: clock++,
  },
});

try {
  // What a language client sends: its pid, its name, LSP capabilities (ignored), then
  // `initialized` with an empty object.
  const init = await request("initialize", {
    processId: process.pid,
    clientInfo: { name: "vscode-jsonrpc lifecycle", version: "8.2.1" },
    rootUri: null,
    capabilities: {},
    hooks: ["session_before_tree", "session_before_compact", "session_before_fork"],
    hookTimeoutMs: 10_000,
    sessionsRoot: join(root, "sessions"),
    deterministic: true,
  });
  assert.equal(init.settings.framing, "lsp");
  connection.sendNotification("initialized", {});

  const cwd = join(root, "project");
  const session = await request("session/create", { cwd });
  const sessionId = session.sessionId;
  const append = (entry) => request("session/append", { sessionId, entry });
  const first = await append(user("Read notes.txt and tell me what it says."));
  await append({ type: "model_change", provider: "anthropic", modelId: "claude-sonnet-4-5" });
  await append({ type: "thinking_level_change", thinkingLevel: "high" });
  const call = await append(assistant("Reading it.", "call-1"));
  await append(toolResult("call-1", "Buy milk. ".repeat(40)));
  await append(assistant("It says to buy milk."));
  await append({ type: "label", targetId: call.entryId, label: "the read" });
  await append({ type: "session_info", name: "groceries" });
  await append({ type: "custom", customType: "lsp-client", data: { step: 1 } });
  await append({ type: "custom_message", customType: "lsp-client", content: "A note for the model.", display: true });
  await append(user("And what else? ".repeat(30)));
  const last = await append(assistant("Nothing else. ".repeat(30)));

  await request("session/getInfo", { sessionId });
  await request("session/getTree", { sessionId });
  await request("session/getEntries", { sessionId });
  await request("session/getBranch", { sessionId });
  await request("session/getChildren", { sessionId, entryId: first.entryId });
  await request("session/getEntry", { sessionId, entryId: call.entryId });
  await request("session/buildContext", { sessionId });
  await request("session/buildContextEntries", { sessionId });
  await request("session/getContextUsage", { sessionId, contextWindow: 200_000 });

  // Back to the first question: the branch after it is summarized by the hook.
  await request("session/prepareTree", { sessionId, targetId: first.entryId, summarize: true });
  const told = next("session_tree");
  const navigated = await request("session/navigateTree", { sessionId, targetId: first.entryId, summarize: true });
  assert.equal(navigated.cancelled, false);
  assert.equal(navigated.summaryEntry.fromHook, true);
  await told;
  // pi's plain moves: none sends a hook or a notification.
  await request("session/branch", { sessionId, entryId: call.entryId });
  await request("session/resetLeaf", { sessionId });
  await request("session/branchWithSummary", {
    sessionId,
    targetId: first.entryId,
    summary: "Summarized by hand.",
    details: { readFiles: [], modifiedFiles: [] },
  });
  // And forward again, to compact the long branch.
  await request("session/navigateTree", { sessionId, targetId: last.entryId });
  const settings = { compaction: { keepRecentTokens: 8 } };
  await request("session/prepareCompaction", { sessionId, settings });
  const compactTold = next("session_compact");
  const compacted = await request("session/compact", { sessionId, settings });
  assert.equal(compacted.cancelled, false);
  await compactTold;
  await request("session/buildContext", { sessionId });

  // Another program appends to the file: the watch tells it.
  const { path } = await request("session/getInfo", { sessionId });
  assert.ok(path, "the session is written");
  const watch = await request("session/watch", { sessionId });
  assert.equal(watch.started, true);
  const changed = next("session_changed");
  const leafId = compacted.leafId;
  const line = {
    type: "message",
    id: "e0e0e0e0",
    parentId: leafId,
    timestamp: new Date(clock).toISOString(),
    message: { role: "user", content: "Written by another program.", timestamp: clock++ },
  };
  appendFileSync(path, `${JSON.stringify(line)}\n`);
  const change = await changed;
  assert.equal(change.entries[0].id, "e0e0e0e0");
  await request("session/unwatch", { sessionId });

  // The Markdown export is made at the other program's entry.
  for (const format of ["html", "md", "jsonl"]) {
    const at = format === "md" ? { leafId: "e0e0e0e0" } : {};
    await request("session/export", { sessionId, format, path: join(root, `export.${format}`), ...at });
  }
  assert.ok(readFileSync(join(root, "export.md"), "utf8").includes("Written by another program."));
  const fork = await request("session/fork", { sessionId, entryId: first.entryId });
  assert.equal(fork.cancelled, true);

  await request("session/list", { cwd });
  await request("session/listAll", {});
  await request("session/findById", { cwd, id: sessionId.slice(0, 8) });
  await request("session/close", { sessionId });
  const recent = await request("session/continueRecent", { cwd });
  assert.equal(recent.sessionId, sessionId);
  await request("session/close", { sessionId });
  const reopened = await request("session/open", { path });

  // A copy of the whole file, watched until its file is deleted under it.
  const copy = await request("session/forkFrom", { sourcePath: path, cwd });
  await request("session/watch", { sessionId: copy.sessionId });
  const ended = next("session_watch_ended");
  rmSync(copy.path);
  await ended;
  await request("session/close", { sessionId: copy.sessionId });
  const deleted = await request("session/delete", { path: join(root, "export.jsonl") });
  assert.equal(deleted.deleted, true);

  // pi 1.6's kinds: a system message, a context edit, a usage entry.
  const pi16 = await request("session/create", { cwd, profile: "pi-1.6" });
  const on16 = (entry) => request("session/append", { sessionId: pi16.sessionId, entry });
  await on16({ type: "message", message: { role: "system", content: "Be brief.", timestamp: clock++ } });
  const asked = await on16(user("What is 2+2?"));
  await on16(assistant("4."));
  await on16({ type: "context_edit", targetId: asked.entryId, replacement: { content: "What is 2 + 2?" } });
  await on16({ type: "usage", kind: "turn", provider: "anthropic", model: "claude-sonnet-4-5", usage });
  await request("session/buildContext", { sessionId: pi16.sessionId });
  await request("session/getEntries", { sessionId: pi16.sessionId });
  await request("session/close", { sessionId: pi16.sessionId });

  // The harness's: metadata, active tools, a leaf entry for each move.
  const harness = await request("session/create", { cwd, profile: "harness", metadata: { from: "lsp" } });
  const onHarness = (entry) => request("session/append", { sessionId: harness.sessionId, entry });
  await onHarness({ type: "active_tools_change", activeToolNames: ["read", "bash"] });
  const question = await onHarness(user("Hello?"));
  await onHarness(assistant("Hello."));
  await request("session/branch", { sessionId: harness.sessionId, entryId: question.entryId });
  await request("session/getEntries", { sessionId: harness.sessionId });
  await request("session/getTree", { sessionId: harness.sessionId, filter: "all" });
  await request("session/listAll", { profile: "harness" });
  await request("session/close", { sessionId: harness.sessionId });

  // The store index across every session, with LSP's work-done progress while it is built.
  assert.equal(init.capabilities.storeIndex.workDoneProgress, true);
  const progress = [];
  const token = "lsp-search";
  const listening = connection.onProgress(new rpc.ProgressType(), token, (value) => progress.push(value));
  const found = await request("session/search", { query: "buy milk", workDoneToken: token });
  listening.dispose();
  assert.ok(found.hits.some((hit) => hit.sessionId === sessionId), "the search finds the first session");
  assert.equal(progress[0]?.kind, "begin", JSON.stringify(progress));
  assert.equal(progress.at(-1).kind, "end", JSON.stringify(progress));
  const figures = await request("session/stats", { by: "model", timezone: "UTC" });
  assert.ok(figures.totals.assistantMessages > 0, JSON.stringify(figures.totals));
  await refused("session/search", { query: '"buy milk' }, 1009);
  await refused("session/search", { limit: 3 }, -32602);

  // The store's live feed over the session's project folder: an append told as store_changed.
  assert.equal(init.capabilities.watchStore.pollIntervalMs, 500);
  const storeWatch = await request("session/watchStore", { dir: dirname(path) });
  const storeTold = next("store_changed");
  const fed = await request("session/append", { sessionId: reopened.sessionId, entry: user("Told by the feed.") });
  const storeChange = await storeTold;
  assert.equal(storeChange.kind, "appended", JSON.stringify(storeChange));
  assert.equal(storeChange.entries.at(-1).id, fed.entryId);
  assert.equal((await request("session/unwatchStore", { watchId: storeWatch.watchId })).ended, true);
  await refused("session/watchStore", { since: "not-a-cursor" }, 1009);

  // Errors a client meets.
  await refused("session/getEntry", { sessionId }, -32602);
  await refused("session/getInfo", { sessionId: "no-such-session" }, 1004);
  await refused("session/open", { path: join(root, "missing.jsonl"), profile: "harness" }, 1004);
  await refused("session/append", { sessionId: reopened.sessionId, entry: { type: "leaf" } }, -32602);
  await refused("session/rename", { sessionId }, -32601);

  // As a language client sends it: no params at all.
  await connection.sendRequest("shutdown");
  connection.sendNotification("exit");
  const code = await new Promise((resolve) => child.once("exit", (c) => resolve(c)));
  assert.equal(code, 0, "the server exits 0 after shutdown and exit");
  connection.dispose();
  console.log(JSON.stringify(seen));
} catch (error) {
  console.error(error);
  child.kill("SIGKILL");
  process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
