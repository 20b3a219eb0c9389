// Appends to a session file with pi's own SessionManager while another program watches it:
// for the watch tests (tests/rpc_watch.rs) and the watch_latency bench.
//
//   node pi-watch-append.mjs ORACLE_DIR FILE [1.6]
//
// Opens FILE with SessionManager.open (no copy), then reads one command per stdin line:
//   {"count": K, "seed": S}  appends K messages at the leaf (user and assistant in turn, pi
//                            writing each line as it appends it), then prints
//                            {"ids": [...], "at": MS}: the new ids and the wall-clock time in
//                            milliseconds (fractional) after the last append returned.
// Ends at the end of stdin.
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createInterface } from "node:readline";

const [oracleDir, file, version] = process.argv.slice(2);
const packageDir = join(
	oracleDir,
	version === "1.6" ? "node_modules/pi-coding-agent-1.6" : "node_modules/@earendil-works/pi-coding-agent",
);
const { SessionManager } = await import(pathToFileURL(join(packageDir, "dist/core/session-manager.js")).href);
console.log = (...args) => console.error(...args);

const sm = SessionManager.open(file);
let n = 0;
for await (const line of createInterface({ input: process.stdin })) {
	if (!line.trim()) continue;
	const { count, seed } = JSON.parse(line);
	const ids = [];
	for (let i = 0; i < count; i++, n++) {
		const stamp = 1767225600000 + n;
		if (n % 2 === 0) {
			ids.push(sm.appendMessage({ role: "user", content: `watched ${seed}/${n}: résumé ✓`, timestamp: stamp }));
		} else {
			ids.push(
				sm.appendMessage({
					role: "assistant",
					content: [{ type: "text", text: `answer ${seed}/${n}` }],
					api: "anthropic-messages",
					provider: "anthropic",
					model: "claude-sonnet-4-5",
					usage: {
						input: 10,
						output: 20,
						cacheRead: 0,
						cacheWrite: 0,
						totalTokens: 30,
						cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
					},
					stopReason: "stop",
					timestamp: stamp,
				}),
			);
		}
	}
	process.stdout.write(`${JSON.stringify({ ids, at: performance.timeOrigin + performance.now() })}\n`);
}
