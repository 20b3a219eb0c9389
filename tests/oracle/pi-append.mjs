// Appends to a session file in place with pi's own SessionManager, as a pi process resuming the
// session would: for the persisted-index tests (tests/index_conformance.rs), where the file
// grows between two opens by pi's writes.
//
//   node pi-append.mjs ORACLE_DIR FILE TURNS SEED [1.6]
//
// Opens FILE with SessionManager.open (no copy), then appends TURNS turns at its leaf: a user
// message, an assistant message with usage and a tool call, a tool result; every third turn a
// label on the turn's user message, and a session name at the first. SEED varies the texts.
// Prints {"leafId", "entries"} (entries: how many the manager holds afterwards).
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [oracleDir, file, turnsArg, seedArg, version] = process.argv.slice(2);
const packageDir = join(
	oracleDir,
	version === "1.6" ? "node_modules/pi-coding-agent-1.6" : "node_modules/@earendil-works/pi-coding-agent",
);
const { SessionManager } = await import(pathToFileURL(join(packageDir, "dist/core/session-manager.js")).href);
console.log = (...args) => console.error(...args);

const turns = Number(turnsArg);
const seed = Number(seedArg);
const sm = SessionManager.open(file);
for (let t = 0; t < turns; t++) {
	const n = seed * 1000 + t;
	const userId = sm.appendMessage({ role: "user", content: `appended turn ${n}: résumé ✓`, timestamp: 1767225600000 + n });
	if (t === 0) sm.appendSessionInfo(`appended by pi ${seed}`);
	sm.appendMessage({
		role: "assistant",
		content: [
			{ type: "text", text: `answer ${n}` },
			{ type: "toolCall", id: `call-${n}`, name: "read", arguments: { path: `f${n}.txt` } },
		],
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-sonnet-4-5",
		usage: {
			input: 10 + t,
			output: 20 + t,
			cacheRead: 3,
			cacheWrite: 1,
			totalTokens: 34 + 2 * t,
			cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 },
		},
		stopReason: "toolUse",
		timestamp: 1767225600000 + n,
	});
	sm.appendMessage({
		role: "toolResult",
		toolCallId: `call-${n}`,
		toolName: "read",
		content: [{ type: "text", text: `contents of f${n}` }],
		isError: false,
		timestamp: 1767225600000 + n,
	});
	if (t % 3 === 2) sm.appendLabelChange(userId, `seen ${n}`);
}
process.stdout.write(`${JSON.stringify({ leafId: sm.getLeafId(), entries: sm.getEntries().length })}\n`);
