// pi's own SessionManager writing while the store's feed is followed (tests/suite/feed.rs):
//
//   node pi-writer.mjs ORACLE_DIR AGENT_DIR SEED STEPS
//
// Makes five sessions (in two projects), then STEPS times appends a turn (a user message and an
// assistant message with usage) to one of them, picked by a seeded generator, sleeping 0-9 ms
// between; at three seeded steps it creates a new session instead, which later steps append to
// too. Prints the session files, one JSON array, when done.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [oracleDir, agentDir, seedText, stepsText] = process.argv.slice(2);
process.env.PI_CODING_AGENT_DIR = agentDir;
const { SessionManager } = await import(
	pathToFileURL(join(oracleDir, "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")).href
);
console.log = (...args) => console.error(...args);

let state = Number(seedText) >>> 0 || 1;
function random() {
	// mulberry32
	state = (state + 0x6d2b79f5) >>> 0;
	let t = state;
	t = Math.imul(t ^ (t >>> 15), t | 1);
	t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
	return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (n) => Math.floor(random() * n);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let clock = Date.UTC(2026, 0, 1, 8, 0, 0);
let turn = 0;
function appendTurn(sm) {
	turn += 1;
	clock += 1000;
	sm.appendMessage({ role: "user", content: `turn ${turn}: résumé ✓`, timestamp: clock });
	sm.appendMessage({
		role: "assistant",
		content: [{ type: "text", text: `answer ${turn}` }],
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-sonnet-4-5",
		usage: {
			input: 10, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 30,
			cost: { input: 0.00003, output: 0.0003, cacheRead: 0, cacheWrite: 0, total: 0.00033 },
		},
		stopReason: "stop",
		timestamp: clock,
	});
}

const cwds = ["/work/feed-a", "/work/feed-b"];
const sessions = [];
function create() {
	const sm = SessionManager.create(cwds[sessions.length % 2]);
	// pi writes the file at the first assistant message.
	appendTurn(sm);
	sessions.push(sm);
}
for (let i = 0; i < 5; i++) create();
const steps = Number(stepsText);
const creations = new Set();
while (creations.size < 3) creations.add(1 + int(steps - 2));
for (let step = 0; step < steps; step++) {
	if (creations.has(step)) create();
	else appendTurn(sessions[int(sessions.length)]);
	await sleep(int(10));
}
process.stdout.write(JSON.stringify(sessions.map((sm) => sm.getSessionFile())));
