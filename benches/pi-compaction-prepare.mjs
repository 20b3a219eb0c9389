// Opens a session with pi's own SessionManager, prepares a compaction at the leaf and builds the
// model requests compact() would send (a fake model answers): what the Rust benchmark compares
// against. Usage: node pi-compaction-prepare.mjs ORACLE_DIR FILE
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [oracleDir, file] = process.argv.slice(2);
const dist = join(oracleDir, "node_modules/@earendil-works/pi-coding-agent/dist/core");
const { SessionManager } = await import(pathToFileURL(join(dist, "session-manager.js")).href);
const { prepareCompaction, compact, DEFAULT_COMPACTION_SETTINGS } = await import(
	pathToFileURL(join(dist, "compaction/index.js")).href
);
const sm = SessionManager.open(file);
const preparation = prepareCompaction(sm.getBranch(), DEFAULT_COMPACTION_SETTINGS);
if (!preparation) throw new Error("pi would not compact this session");
let requests = 0;
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const streamFn = async (model) => {
	requests++;
	const message = { role: "assistant", content: [{ type: "text", text: "S" }], api: model.api, provider: model.provider, model: model.id, usage, stopReason: "stop", timestamp: 0 };
	return { result: async () => message };
};
const model = { id: "fake", api: "fake", provider: "fake", reasoning: false, contextWindow: 200000, maxTokens: 0 };
await compact(preparation, model, undefined, undefined, undefined, undefined, sm.buildSessionContext().thinkingLevel, streamFn);
process.stdout.write(`${JSON.stringify({ requests })}\n`);
