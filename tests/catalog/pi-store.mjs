// Writes a seeded store of sessions with pi's own SessionManager, for tests/catalog.rs.
//
//   node pi-store.mjs ORACLE_DIR AGENT_DIR SEED [--assistant-usage-only] [--no-forks] [--pi16]
//
// Under AGENT_DIR/sessions: a few projects, each with sessions holding branches (abandoned
// paths), compactions, branch summaries, labels, names, custom messages, tool calls and
// results, thinking; then forks of them: createBranchedSession (pi's /fork and /clone),
// forkFrom into another project (pi --fork), and a fork of a fork, each continued after the
// copy. With --assistant-usage-only, only assistant messages carry usage (what ccusage reads);
// otherwise compactions and branch summaries carry some too (what getSessionStats also
// counts). --pi16 runs pi 1.6.0's SessionManager. Prints the files written, one JSON array.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [oracleDir, agentDir, seedText, ...flags] = process.argv.slice(2);
const assistantOnly = flags.includes("--assistant-usage-only");
const noForks = flags.includes("--no-forks");
const pkg = flags.includes("--pi16") ? "pi-coding-agent-1.6" : "@earendil-works/pi-coding-agent";
process.env.PI_CODING_AGENT_DIR = agentDir;
const { SessionManager } = await import(
	pathToFileURL(join(oracleDir, "node_modules", pkg, "dist/core/session-manager.js")).href
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
const pick = (list) => list[Math.floor(random() * list.length)];
const int = (n) => Math.floor(random() * n);

const WORDS = [
	"parser", "Parser", "PARSING", "crème", "brûlée", "Éclair", "naïve", "façade", "日本語", "検索",
	"中文", "résumé", "tokenizer", "NEAR", "col:x", "*", "(", "\"quoted\"", "ok", "a", "is",
	"zebra", "yak", "quantum", "flux", "SELECT", "DROP TABLE", "--", "'", "%", "_", "lint",
	"build", "cargo", "branch", "merge", "índice", "Straße", "ﬁle", "émoji😀", "x", "y",
];
const sentence = (n = 3 + int(8)) => Array.from({ length: n }, () => pick(WORDS)).join(" ");
const MODELS = [
	["anthropic", "claude-sonnet-4-5"],
	["openai", "gpt-5"],
	["google", "gemini-2.5-pro"],
];
const TOOLS = ["read", "bash", "edit", "write"];
let clock = Date.UTC(2026, 0, 1, 8, 0, 0);

function usage() {
	const input = 1 + int(5000);
	const output = 1 + int(2000);
	const cacheRead = int(3) === 0 ? 0 : int(20000);
	const cacheWrite = int(4) === 0 ? int(3000) : 0;
	const cost = { input: input * 3e-6, output: output * 15e-6, cacheRead: cacheRead * 3e-7, cacheWrite: cacheWrite * 3.75e-6 };
	cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
	return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
}

function user(sm) {
	clock += 1000 + int(3600_000);
	return sm.appendMessage({ role: "user", content: int(2) ? sentence() : [{ type: "text", text: sentence() }], timestamp: clock });
}

function assistant(sm) {
	clock += 1000 + int(60_000);
	const [provider, model] = pick(MODELS);
	const content = [];
	if (int(3) === 0) content.push({ type: "thinking", thinking: `${sentence()} secretthought` });
	content.push({ type: "text", text: sentence() });
	const calls = [];
	for (let i = int(3); i > 0; i--) {
		const call = { type: "toolCall", id: `call_${int(1e9)}`, name: pick(TOOLS), arguments: { path: `/src/${pick(WORDS)}.rs`, note: sentence(2) } };
		content.push(call);
		calls.push(call);
	}
	const id = sm.appendMessage({
		role: "assistant", content, api: "messages", provider, model, usage: usage(),
		stopReason: calls.length ? "toolUse" : "stop", timestamp: clock,
	});
	for (const call of calls) {
		clock += 500;
		sm.appendMessage({
			role: "toolResult", toolCallId: call.id, toolName: call.name,
			content: [{ type: "text", text: `${sentence()} ${"output ".repeat(int(3) === 0 ? 3000 : 2)}tailmarker` }],
			isError: false, timestamp: clock,
		});
	}
	return id;
}

function turns(sm, n) {
	let last;
	for (let i = 0; i < n; i++) {
		user(sm);
		last = assistant(sm);
	}
	return last;
}

const written = [];
const projects = ["/work/alpha", "/work/beta", "/home/dev/gamma"];
const sources = [];
for (const cwd of projects) {
	for (let s = 0; s < 2 + int(2); s++) {
		const sm = SessionManager.create(cwd);
		const firstUser = user(sm);
		assistant(sm);
		const mid = turns(sm, 2 + int(3));
		// An abandoned branch: back to `mid`'s parent, then on.
		sm.branch(sm.getEntry(mid).parentId);
		turns(sm, 1 + int(2));
		if (int(2)) sm.appendLabelChange(firstUser, `label ${sentence(2)}`);
		if (int(2)) sm.appendSessionInfo(`name ${sentence(2)}`);
		if (int(2)) sm.appendModelChange(...pick(MODELS));
		if (int(2)) sm.appendCustomMessageEntry("note", `custom ${sentence()}`, true);
		if (int(2)) {
			const entries = sm.getEntries();
			const kept = entries[Math.floor(entries.length / 2)].id;
			sm.appendCompaction(`summary ${sentence()}`, kept, 1000 + int(5000), undefined, false, assistantOnly ? undefined : usage());
			turns(sm, 1);
		}
		if (int(2)) {
			sm.branchWithSummary(firstUser, `branch summary ${sentence()}`, undefined, false, assistantOnly ? undefined : usage());
			turns(sm, 1);
		}
		written.push(sm.getSessionFile());
		sources.push(sm);
	}
}
// Forks: /fork and /clone copies continued; forkFrom into another project; a fork of a fork.
for (let i = 0; i < (noForks ? 0 : 3); i++) {
	const sm = sources[int(sources.length)];
	const entries = sm.getEntries().filter((e) => e.type === "message");
	const target = entries[1 + int(entries.length - 1)].id;
	const path = sm.createBranchedSession(target);
	if (!path) continue;
	turns(sm, 1 + int(2));
	written.push(sm.getSessionFile());
	if (i === 0) {
		const again = sm.createBranchedSession(sm.getLeafId());
		if (again) {
			turns(sm, 1);
			written.push(sm.getSessionFile());
		}
	}
}
if (!noForks) {
	const origin = sources[int(sources.length)].getSessionFile();
	const moved = SessionManager.forkFrom(origin, "/work/delta");
	turns(moved, 2);
	written.push(moved.getSessionFile());
}
process.stdout.write(JSON.stringify(written));
