// A real JSON-RPC client for `pi-session --stdio`: vscode-jsonrpc (the library under VS Code's
// language client) over the child's stdin/stdout in LSP framing. It drives one session through
// create, appends, a label, a navigation whose session_before_tree hook vetoes once and then
// supplies the summary (answered from this client's own onRequest handler), a fork and the
// context, then shuts the server down. Any mismatch exits non-zero.
//
// usage: node client.mjs PATH/TO/pi-session

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node.js";

const binary = process.argv[2];
if (!binary) {
  console.error("usage: node client.mjs PATH/TO/pi-session");
  process.exit(2);
}

const root = mkdtempSync(join(tmpdir(), "pi-session-vscode-"));
const server = spawn(binary, ["--stdio"], { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => server.on("exit", (code) => resolve(code)));
const connection = createMessageConnection(
  new StreamMessageReader(server.stdout),
  new StreamMessageWriter(server.stdin),
);

// Everything that reaches this client, in order.
const events = [];
let treeAnswers = [{ cancel: true }, {
  summary: { summary: "Explored the French version.", details: { readFiles: ["notes.txt"] } },
}];
connection.onRequest("session_before_tree", (params) => {
  events.push(["session_before_tree", params.preparation.entriesToSummarize.length]);
  return treeAnswers.shift();
});
connection.onRequest("session_before_fork", (params) => {
  events.push(["session_before_fork", params.position]);
  return {};
});
connection.onNotification("session_tree", (params) => {
  events.push(["session_tree", params.newLeafId, params.fromExtension]);
});
connection.listen();

const call = (method, params) => connection.sendRequest(method, params);

const assistant = (text, timestamp, toolCall) => ({
  role: "assistant",
  content: [{ type: "text", text }, ...(toolCall
    ? [{ type: "toolCall", id: toolCall, name: "read", arguments: { path: "notes.txt" } }]
    : [])],
  api: "anthropic-messages",
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  usage: { input: 120, output: 30, cacheRead: 0, cacheWrite: 0, totalTokens: 150,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: toolCall ? "toolUse" : "stop",
  timestamp,
});

try {
  const init = await call("initialize", {
    clientInfo: { name: "vscode-jsonrpc-client" },
    processId: process.pid,
    hooks: ["session_before_tree", "session_before_fork"],
    sessionsRoot: join(root, "sessions"),
  });
  strictEqual(init.serverInfo.name, "pi-session");
  strictEqual(init.settings.framing, "lsp");
  await connection.sendNotification("initialized", {});

  const session = await call("session/create", { cwd: join(root, "project") });
  const sessionId = session.sessionId;
  strictEqual(session.written, false);
  const append = async (entry) => {
    const result = await call("session/append", { sessionId, entry });
    strictEqual(result.leafId, result.entryId);
    return result.entryId;
  };
  const message = (m) => append({ type: "message", message: m });

  const user1 = await message({ role: "user", content: "Summarize notes.txt", timestamp: 1 });
  const toolTurn = await message(assistant("Reading it.", 2, "call_1"));
  await message({ role: "toolResult", toolCallId: "call_1", toolName: "read",
    content: [{ type: "text", text: "buy milk" }], isError: false, timestamp: 3 });
  await message(assistant("One item: milk.", 4));
  await message({ role: "user", content: "Now in French", timestamp: 5 });
  await message(assistant("Une chose : du lait.", 6));
  const label = await append({ type: "label", targetId: user1, label: "start" });

  const navigate = { sessionId, targetId: toolTurn, summarize: true };
  const vetoed = await call("session/navigateTree", navigate);
  deepStrictEqual(vetoed, { cancelled: true, leafId: label });
  const navigated = await call("session/navigateTree", navigate);
  events.push(["response", navigated.leafId]);
  strictEqual(navigated.cancelled, false);
  strictEqual(navigated.summaryEntry.parentId, toolTurn);
  strictEqual(navigated.summaryEntry.fromHook, true);
  strictEqual(navigated.leafId, navigated.summaryEntry.id);

  const user3 = await message({ role: "user", content: "Read it again", timestamp: 7 });
  await message(assistant("Still milk.", 8));
  const fork = await call("session/fork", { sessionId, entryId: user3, position: "before" });
  strictEqual(fork.cancelled, false);
  strictEqual(fork.selectedText, "Read it again");
  strictEqual(fork.session.header.parentSession, session.path);

  const context = await call("session/buildContext", { sessionId });
  deepStrictEqual(context.messages.map((m) => m.role),
    ["user", "assistant", "branchSummary", "user", "assistant"]);
  deepStrictEqual(context.model, { provider: "anthropic", modelId: "claude-sonnet-4-5" });
  const forked = await call("session/buildContext", { sessionId: fork.session.sessionId, format: "llm" });
  deepStrictEqual(forked.messages.map((m) => m.role), ["user", "assistant", "user"]);

  // The hooks were answered from this client's handlers; the notification came first.
  deepStrictEqual(events, [
    ["session_before_tree", 5],
    ["session_before_tree", 5],
    ["session_tree", navigated.leafId, true],
    ["response", navigated.leafId],
    ["session_before_fork", "before"],
  ]);

  strictEqual(await call("shutdown"), null);
  await connection.sendNotification("exit");
  const code = await exited;
  strictEqual(code, 0);
  connection.dispose();
  console.log("vscode-jsonrpc client: ok");
} catch (error) {
  console.error("vscode-jsonrpc client: FAILED");
  console.error(error);
  server.kill();
  process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
