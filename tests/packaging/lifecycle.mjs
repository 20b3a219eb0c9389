// A front-end's whole lifecycle through the installed npm package `pi-session` (run by
// tests/packaging.rs in a fresh folder, on the binary of @pi-session/<platform>): hooks,
// navigation with a summary, compaction, fork, listing, errors, a server that dies.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import {
  PiSession,
  PiSessionError,
  assistantMessage,
  customEntry,
  labelEntry,
  locateBinary,
  toolResultMessage,
  userMessage,
} from "pi-session";

const root = mkdtempSync(join(tmpdir(), "pi-session-npm-"));
const cwd = join(root, "project");
console.log("binary from:", locateBinary().source);

const pi = PiSession.spawn();
pi.onHook("session_before_tree", (hook) => ({
  summary: { summary: `${hook.preparation.entriesToSummarize.length} entries left behind` },
}));
pi.onHook("session_before_compact", (hook) => ({
  compaction: {
    summary: "Compacted by the front-end.",
    firstKeptEntryId: hook.preparation.firstKeptEntryId,
    tokensBefore: hook.preparation.tokensBefore,
  },
}));
pi.onHook("session_before_fork", () => ({}));
const events = [];
pi.on("session_tree", (event) => events.push(`tree fromExtension=${event.fromExtension}`));
pi.on("session_compact", (event) => events.push(`compact fromExtension=${event.fromExtension}`));
const init = await pi.initialize({ sessionsRoot: join(root, "sessions"), deterministic: true });
console.log("protocol:", init.protocolVersion);

const { sessionId, path } = await pi.session.create({ cwd });
const model = { provider: "anthropic", model: "claude-sonnet-4-5" };
const append = async (entry) => (await pi.session.append({ sessionId, entry })).entryId;
const question = await append(userMessage("Read notes.txt", { timestamp: 1 }));
await append(
  assistantMessage(
    [{ type: "toolCall", id: "call_1", name: "read", arguments: { path: "notes.txt" } }],
    { ...model, timestamp: 2 },
  ),
);
await append(toolResultMessage("call_1", "read", "buy milk", { timestamp: 3 }));
await append(assistantMessage("One item: milk.", { ...model, timestamp: 4 }));
await append(userMessage("And in French?", { timestamp: 5 }));
await append(assistantMessage("Du lait.", { ...model, timestamp: 6 }));
await append(labelEntry(question, "start"));
await append(customEntry("front-end-state", { tab: 2 }));

const compacted = await pi.session.compact({
  sessionId,
  settings: { compaction: { keepRecentTokens: 8 } },
});
console.log("compacted:", compacted.entry.summary, "fromHook", compacted.entry.fromHook);
const moved = await pi.session.navigateTree({ sessionId, targetId: question, summarize: true });
console.log("navigated:", moved.editorText, "/", moved.summaryEntry.summary);
await append(assistantMessage("Again: milk.", { ...model, timestamp: 7 }));
const fork = await pi.session.fork({ sessionId, entryId: question, position: "at" });
console.log("forked:", fork.cancelled === false && fork.session.header.parentSession === path);
const listed = await pi.session.list({ cwd });
console.log("listed:", listed.sessions.length, "sessions");
console.log("events:", events.join(", "));
try {
  await pi.session.getInfo({ sessionId: "no-such-session" });
} catch (error) {
  console.log("error:", error instanceof PiSessionError, error.kind);
}
await pi[Symbol.asyncDispose]();
console.log("exit:", await pi.exited);

// A server that cannot start says why: its exit status and its own last words.
const broken = PiSession.spawn({ args: ["--no-such-flag"], stderr: "ignore" });
try {
  await broken.initialize();
} catch (error) {
  const [first, ...rest] = error.message.split("\n");
  console.log("died:", first);
  console.log("its stderr quoted:", rest.some((line) => line.includes("--no-such-flag")));
}
await broken.dispose();
rmSync(root, { recursive: true, force: true });
