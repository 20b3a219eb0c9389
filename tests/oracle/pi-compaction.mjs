#!/usr/bin/env node
// pi's compaction machinery, batched: reads one JSON case per stdin line, prints one JSON
// result per line. Every figure comes from pi's own modules (0.82.1):
//   manager: prepareCompaction(sm.getBranch(), settings) and compact() with a fake streamFn
//            (pi-coding-agent core/compaction), the steps of AgentSession.compact();
//   harness: pi-agent-core's prepareCompaction(session.getBranch(), settings) and its compact()
//            with a fake models.completeSimple.
// The fake model records each request (system prompt, user text, options) and answers "S<i>".
//
// Case: {"op":"migrate","file":IN,"out":OUT}  SessionManager.open on a copy (v1/v2 -> v3)
//       {"op":"usage","file","impl","leaf"?,"window"?}
//       {"op":"prepare","file","impl","leaf"?,"settings"?,"customInstructions"?,"model"?,"thinkingLevel"?}
//       {"op":"branch","file","target","contextWindow"?,"customInstructions"?,"replaceInstructions"?}
//            pi-agent-core's harness tree summary: collectEntriesForBranchSummary from the leaf to
//            `target`, generateBranchSummary with the fake model, and the branch_summary entry
//            AgentHarness.navigateTree then writes (moveTo at the target's landing place).
// A leaf of null means before the first entry.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const here = import.meta.dirname;
const CA = join(here, "node_modules/@earendil-works/pi-coding-agent/dist");
const AC = join(here, "node_modules/@earendil-works/pi-agent-core/dist");
const load = (p) => import(pathToFileURL(p).href);

const pi = {
	...(await load(join(CA, "core/compaction/index.js"))),
	...(await load(join(CA, "core/session-manager.js"))),
};
const h = {
	...(await load(join(AC, "harness/compaction/compaction.js"))),
	...(await load(join(AC, "harness/compaction/utils.js"))),
	...(await load(join(AC, "index.js"))),
	NodeExecutionEnv: (await load(join(AC, "node.js"))).NodeExecutionEnv,
};

const tmp = mkdtempSync(join(tmpdir(), "pi-compaction-"));
process.on("exit", () => rmSync(tmp, { recursive: true, force: true }));
let copies = 0;
function copyOf(file) {
	const copy = join(tmp, `s${copies++}.jsonl`);
	copyFileSync(file, copy);
	return copy;
}

function fakeModel(fields) {
	return {
		id: "fake",
		name: "fake",
		api: "fake",
		provider: "fake",
		baseUrl: "http://fake.invalid",
		reasoning: false,
		input: ["text", "image"],
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
		contextWindow: 200000,
		maxTokens: 0,
		...(fields ?? {}),
	};
}

function recorder() {
	const requests = [];
	const answers = [];
	const answer = (model, context, options) => {
		const { signal, sessionId, ...rest } = options ?? {};
		requests.push({ systemPrompt: context.systemPrompt, text: context.messages[0].content[0].text, options: rest });
		const i = requests.length - 1;
		const usage = {
			input: 1000 * (i + 1),
			output: 100 * (i + 1),
			cacheRead: 10 * (i + 1),
			cacheWrite: i,
			totalTokens: 1110 * (i + 1) + i,
			cost: { input: 0.001 * (i + 1), output: 0.002 * (i + 1), cacheRead: 0, cacheWrite: 0, total: 0.003 * (i + 1) },
		};
		answers.push({ text: `## Goal\nS${i} 😀`, usage });
		return {
			role: "assistant",
			content: [{ type: "text", text: `## Goal\nS${i} 😀` }],
			api: model.api,
			provider: model.provider,
			model: model.id,
			usage,
			stopReason: "stop",
			timestamp: 0,
		};
	};
	return {
		requests,
		answers,
		streamFn: async (m, c, o) => {
			const message = answer(m, c, o);
			return { result: async () => message };
		},
		models: { completeSimple: async (m, c, o) => answer(m, c, o) },
	};
}

const sets = (_k, v) => (v instanceof Set ? [...v] : v);

async function openManager(c) {
	const copy = copyOf(c.file);
	const sm = pi.SessionManager.open(copy, tmp);
	if (c.leaf === null) sm.resetLeaf();
	else if (c.leaf !== undefined) sm.branch(c.leaf);
	return sm;
}

async function openHarness(c) {
	const copy = copyOf(c.file);
	const env = new h.NodeExecutionEnv({ cwd: tmp });
	const storage = await h.JsonlSessionStorage.open(env, copy);
	const session = new h.Session(storage);
	if (c.leaf !== undefined) await session.moveTo(c.leaf);
	return session;
}

async function branchSummary(c) {
	const session = await openHarness(c);
	const leafId = await session.getLeafId();
	const { entries } = await h.collectEntriesForBranchSummary(session, leafId, c.target);
	const rec = recorder();
	const model = fakeModel({ contextWindow: c.contextWindow });
	const r = await h.generateBranchSummary(entries, {
		models: rec.models,
		model,
		signal: new AbortController().signal,
		customInstructions: c.customInstructions,
		replaceInstructions: c.replaceInstructions,
	});
	if (!r.ok) return { error: r.error.code ?? "error", message: r.error.message };
	const target = await session.getEntry(c.target);
	const landsOnParent =
		(target.type === "message" && target.message.role === "user") || target.type === "custom_message";
	const newLeafId = landsOnParent ? target.parentId : c.target;
	const details = { readFiles: r.value.readFiles, modifiedFiles: r.value.modifiedFiles };
	const id = await session.moveTo(newLeafId, {
		summary: r.value.summary,
		details,
		usage: r.value.usage,
		fromHook: false,
	});
	return {
		entryIds: entries.map((e) => e.id),
		requests: rec.requests,
		answers: rec.answers,
		line: JSON.stringify(await session.getEntry(id)),
	};
}

async function run(c) {
	if (c.op === "branch") return branchSummary(c);
	if (c.op === "migrate") {
		pi.SessionManager.open(c.out === undefined ? c.file : (copyFileSync(c.file, c.out), c.out), tmp);
		return { done: true };
	}
	const harness = c.impl === "harness";
	const lib = harness ? h : pi;
	let path, messages, leafId, thinkingLevel, session, sm;
	if (harness) {
		session = await openHarness(c);
		path = await session.getBranch();
		messages = (await session.buildContext()).messages;
		leafId = await session.getLeafId();
		thinkingLevel = "off";
	} else {
		sm = await openManager(c);
		path = sm.getBranch();
		const context = sm.buildSessionContext();
		messages = context.messages;
		leafId = sm.getLeafId();
		thinkingLevel = context.thinkingLevel;
	}
	if (c.op === "usage") {
		const estimate = lib.estimateContextTokens(messages);
		const out = { leafId, estimate };
		if (c.window !== undefined) {
			const s = { ...pi.DEFAULT_COMPACTION_SETTINGS, ...(c.settings?.compaction ?? {}) };
			out.shouldCompact = lib.shouldCompact(estimate.tokens, c.window, s);
		}
		return out;
	}
	const settings = { ...pi.DEFAULT_COMPACTION_SETTINGS, ...(c.settings?.compaction ?? {}) };
	let prep;
	if (harness) {
		const r = h.prepareCompaction(path, settings);
		if (!r.ok) return { error: r.error.code ?? "error", message: r.error.message };
		prep = r.value;
	} else prep = pi.prepareCompaction(path, settings);
	if (!prep) {
		const last = path[path.length - 1];
		return { refusal: last?.type === "compaction" ? "already_compacted" : "nothing_to_compact" };
	}
	const lists = lib.computeFileLists(prep.fileOps);
	const rec = recorder();
	const model = fakeModel(c.model);
	const level = c.thinkingLevel ?? thinkingLevel;
	let result;
	if (harness) result = (await h.compact(prep, rec.models, model, c.customInstructions, undefined, level)).value;
	else result = await pi.compact(prep, model, undefined, undefined, c.customInstructions, undefined, level, rec.streamFn);
	let line;
	if (c.append) {
		// What AgentSession.compact() / AgentHarness.compact() append (fromHook false).
		const r = result;
		if (harness) {
			const id = await session.appendCompaction(r.summary, r.firstKeptEntryId, r.tokensBefore, r.details, false, r.usage, r.retainedTail);
			line = JSON.stringify(await session.getEntry(id));
		} else {
			const id = sm.appendCompaction(r.summary, r.firstKeptEntryId, r.tokensBefore, r.details, false, r.usage);
			line = JSON.stringify(sm.getEntry(id));
		}
	}
	return {
		leafId,
		line,
		answers: rec.answers,
		preparation: JSON.stringify(prep, sets),
		readFiles: lists.readFiles,
		modifiedFiles: lists.modifiedFiles,
		fileListsText: lib.formatFileOperations(lists.readFiles, lists.modifiedFiles),
		requests: rec.requests,
		summary: result.summary,
	};
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
	if (!line.trim()) continue;
	let out;
	try {
		out = await run(JSON.parse(line));
	} catch (e) {
		out = { error: "threw", message: String(e?.stack ?? e) };
	}
	process.stdout.write(`${JSON.stringify(out)}\n`);
}
