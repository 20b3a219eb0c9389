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
//       {"op":"gen16","out","seed","turns"}  a session written by pi 1.6's SessionManager, seeded:
//            system prompts and patches, thinking blocks, tool calls (codemode nested calls),
//            aborted and failed turns with pi's recovery omissions, context edits, usage
//            entries, nested and retain-none compactions, branches and branch summaries.
//       {"op":"branch16","file","leaf"?,"target","contextWindow"?,"reserveTokens"?,"model"?,
//            "thinkingLevel"?,"customInstructions"?,"replaceInstructions"?,"answer"?}
//            pi 1.6: collectEntriesForBranchSummary, generateBranchSummary with the fake model,
//            and what AgentSession.navigateTree then writes (branchWithSummary at the landing).
// "impl":"pi16" runs usage/prepare on pi 1.6.0 (pi-coding-agent-1.6): usage is
// estimateProjectedContextTokens(buildSessionProjection(), getBranch()) and
// AgentSession.prototype.getContextUsage; prepare is its prepareCompaction and compact().
// "answer" ({stopReason, errorMessage?, toolCall?}) makes the fake model answer so.
// A leaf of null means before the first entry.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
const N = join(here, "node_modules/pi-coding-agent-1.6/dist");
const pi16 = {
	...(await load(join(N, "core/compaction/index.js"))),
	...(await load(join(N, "core/session-manager.js"))),
	AgentSession: (await load(join(N, "core/agent-session.js"))).AgentSession,
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

function recorder(override) {
	const requests = [];
	const answers = [];
	const answer = (model, context, options) => {
		const { signal, sessionId, ...rest } = options ?? {};
		// pi 1.6 sends a normalized context: the system prompt is a leading system message.
		const user = context.messages[context.messages.length - 1];
		requests.push({
			systemPrompt: context.systemPrompt,
			messages: context.systemPrompt === undefined ? context.messages : undefined,
			text: user.content[0].text,
			options: rest,
		});
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
		const content = [{ type: "text", text: `## Goal\nS${i} 😀` }];
		if (override?.toolCall) content.push({ type: "toolCall", id: "t", name: "read", arguments: { path: "x" } });
		return {
			role: "assistant",
			content,
			api: model.api,
			provider: model.provider,
			model: model.id,
			usage,
			stopReason: override?.stopReason ?? "stop",
			errorMessage: override?.errorMessage,
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

async function openManager(c, lib = pi) {
	const copy = copyOf(c.file);
	const sm = lib.SessionManager.open(copy, tmp);
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
	if (c.op === "gen16") return gen16(c);
	if (c.op === "branch16") return branch16(c);
	if (c.impl === "pi16") return run16(c);
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

// ---------------------------------------------------------------------------------------------
// pi 1.6.0

async function run16(c) {
	const sm = await openManager(c, pi16);
	const path = sm.getBranch();
	const leafId = sm.getLeafId();
	if (c.op === "usage") {
		const projection = sm.buildSessionProjection();
		const estimate = pi16.estimateProjectedContextTokens(projection, path);
		const out = { leafId, estimate };
		const settings = { ...pi16.DEFAULT_COMPACTION_SETTINGS, ...(c.settings?.compaction ?? {}) };
		if (c.window !== undefined) {
			out.shouldCompact = pi16.shouldCompact(estimate.tokens, c.window, settings);
			// AgentSession.getContextUsage() itself, on this session manager.
			out.contextUsage = pi16.AgentSession.prototype.getContextUsage.call({
				_limitsModel: () => ({ contextWindow: c.window }),
				sessionManager: sm,
			});
		}
		return out;
	}
	const settings = { ...pi16.DEFAULT_COMPACTION_SETTINGS, ...(c.settings?.compaction ?? {}) };
	const prep = pi16.prepareCompaction(path, settings);
	if (!prep) {
		const last = path[path.length - 1];
		return { refusal: last?.type === "compaction" ? "already_compacted" : "nothing_to_compact" };
	}
	const lists = pi16.computeFileLists(prep.fileOps);
	const rec = recorder(c.answer);
	const model = fakeModel(c.model);
	const level = c.thinkingLevel ?? sm.buildSessionContext().thinkingLevel;
	let result;
	try {
		result = await pi16.compact(prep, model, undefined, undefined, c.customInstructions, undefined, level, rec.streamFn);
	} catch (e) {
		return { failure: String(e?.message ?? e), requests: rec.requests, preparation: JSON.stringify(prep, sets) };
	}
	let line;
	if (c.append) {
		// What AgentSession.compact() appends (fromHook false); a hook's compaction as given.
		const r = c.hookCompaction ?? result;
		const id = sm.appendCompaction(r.summary, r.firstKeptEntryId, r.tokensBefore, r.details, c.hookCompaction !== undefined, r.usage);
		line = JSON.stringify(sm.getEntry(id));
	}
	return {
		leafId,
		line,
		answers: rec.answers,
		preparation: JSON.stringify(prep, sets),
		readFiles: lists.readFiles,
		modifiedFiles: lists.modifiedFiles,
		fileListsText: pi16.formatFileOperations(lists.readFiles, lists.modifiedFiles),
		requests: rec.requests,
		summary: result.summary,
	};
}

async function branch16(c) {
	const sm = await openManager(c, pi16);
	const oldLeafId = sm.getLeafId();
	const { entries } = pi16.collectEntriesForBranchSummary(sm, oldLeafId, c.target);
	const rec = recorder(c.answer);
	// navigateTree runs the summarizer only when something is abandoned.
	if (entries.length === 0) return { entryIds: [], requests: [], answers: [] };
	const model = fakeModel({ contextWindow: c.contextWindow, ...(c.model ?? {}) });
	const r = await pi16.generateBranchSummary(entries, {
		model,
		thinkingLevel: c.thinkingLevel ?? sm.buildSessionContext().thinkingLevel,
		customInstructions: c.customInstructions,
		replaceInstructions: c.replaceInstructions,
		reserveTokens: c.reserveTokens ?? 16384,
		streamFn: rec.streamFn,
		signal: new AbortController().signal,
	});
	const out = { entryIds: entries.map((e) => e.id), requests: rec.requests, answers: rec.answers };
	if (r.aborted) return { ...out, aborted: true };
	if (r.error) return { ...out, failure: r.error };
	// AgentSession.navigateTree's landing and write.
	const target = sm.getEntry(c.target);
	const landsOnParent =
		(target.type === "message" && target.message.role === "user") || target.type === "custom_message";
	const newLeafId = landsOnParent ? target.parentId : c.target;
	const details = { readFiles: r.readFiles || [], modifiedFiles: r.modifiedFiles || [] };
	const id = sm.branchWithSummary(newLeafId, r.summary, details, false, r.usage);
	return { ...out, line: JSON.stringify(sm.getEntry(id)) };
}

/** A seeded generator (mulberry32). */
function rng(seed) {
	let a = seed >>> 0;
	const next = () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
	return {
		next,
		chance: (p) => next() < p,
		int: (n) => Math.floor(next() * n),
		pick: (items) => items[Math.floor(next() * items.length)],
	};
}

const WORDS = ["alpha", "beta", "gamma", "delta", "fix", "test", "src/lib.rs", "😀", "naïve", "éclair", "x".repeat(40)];

function words(r, n) {
	const out = [];
	for (let i = 0; i < n; i++) out.push(r.pick(WORDS));
	return out.join(" ");
}

function usageOf(r, scale) {
	const input = 100 + r.int(scale);
	const output = 10 + r.int(200);
	const cacheRead = r.int(50);
	return {
		input,
		output,
		cacheRead,
		cacheWrite: 0,
		totalTokens: r.chance(0.1) ? 0 : input + output + cacheRead,
		cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 },
	};
}

function gen16(c) {
	const r = rng(c.seed);
	const sm = pi16.SessionManager.create("/work/project", tmp);
	let clock = Date.UTC(2026, 0, 1);
	const t = () => (clock += 1000);
	const ids = () => sm.getBranch().map((e) => e.id);
	const editable = () =>
		sm.getBranch().filter(
			(e) =>
				e.type === "custom_message" ||
				(e.type === "message" && ["user", "assistant", "toolResult"].includes(e.message.role)),
		);
	const tools = [
		{ name: "read", description: "Read a file", parameters: { type: "object" } },
		{ name: "edit", description: "Edit a file", parameters: { type: "object" } },
	];
	sm.appendMessage({ role: "system", content: "You are pi. " + words(r, 20), sections: { skills: words(r, 8) }, toolsAdded: tools, timestamp: t() });
	sm.appendThinkingLevelChange(r.pick(["off", "high", "medium"]));
	const paths = ["src/a.ts", "src/b.ts", "README.md", "docs/😀.md", "src/c.ts"];
	for (let turn = 0; turn < c.turns; turn++) {
		const content = r.chance(0.1)
			? [{ type: "text", text: words(r, 10) }, { type: "image", data: "aGk=", mimeType: "image/png" }]
			: r.chance(0.5)
				? words(r, 5 + r.int(60))
				: [{ type: "text", text: words(r, 5 + r.int(60)) }];
		sm.appendMessage({ role: "user", content, timestamp: t() });
		const steps = 1 + r.int(3);
		for (let s = 0; s < steps; s++) {
			const blocks = [];
			if (r.chance(0.4)) blocks.push({ type: "thinking", thinking: words(r, 20 + r.int(200)) });
			if (r.chance(0.7)) blocks.push({ type: "text", text: words(r, 5 + r.int(100)) });
			const calls = [];
			if (s < steps - 1 || r.chance(0.3)) {
				const n = 1 + r.int(2);
				for (let k = 0; k < n; k++) {
					const name = r.pick(["read", "write", "edit", "bash", "codemode"]);
					const args = name === "bash" ? { command: "ls -la" } : name === "codemode" ? { script: "await edit()" } : { path: r.pick(paths), n: r.int(5) / 2 };
					calls.push({ type: "toolCall", id: `call${turn}_${s}_${k}`, name, arguments: args });
				}
			}
			blocks.push(...calls);
			const failed = r.chance(0.06);
			const aborted = !failed && r.chance(0.04);
			const stopReason = failed ? r.pick(["error", "length"]) : aborted ? "aborted" : calls.length ? "toolUse" : "stop";
			const assistantId = sm.appendMessage({
				role: "assistant",
				content: blocks,
				api: "fake",
				provider: "fake",
				model: r.pick(["m1", "m2"]),
				usage: usageOf(r, 30000 + turn * 500),
				stopReason,
				errorMessage: failed ? "boom" : undefined,
				timestamp: t(),
			});
			const resultIds = [];
			for (const call of calls) {
				const long = r.chance(0.1);
				const text = long ? "😀".repeat(1) + "y".repeat(1998) + "😀" + words(r, 40) : words(r, 3 + r.int(40));
				const result = {
					role: "toolResult",
					toolCallId: call.id,
					toolName: call.name,
					content: [{ type: "text", text }],
					isError: false,
					timestamp: t(),
				};
				if (call.name === "codemode") result.nestedCalls = { calls: [{ name: r.pick(["edit", "write", "read"]), arguments: { path: r.pick(paths) } }] };
				resultIds.push(sm.appendMessage(result));
			}
			if (failed || aborted) {
				// pi's recovery omission: the failed attempt and its results leave the context.
				if (failed && r.chance(0.7)) for (const id of [assistantId, ...resultIds]) sm.appendContextEdit(id, null);
				break;
			}
		}
		if (r.chance(0.15)) sm.appendMessage({ role: "system", content: r.chance(0.5) ? "" : words(r, 6), sections: { skills: r.chance(0.3) ? null : words(r, 5), extra: words(r, 4) }, timestamp: t() });
		if (r.chance(0.12)) sm.appendUsage("cache_warm", "fake", "m1", usageOf(r, 1000), r.chance(0.5) ? "warm" : undefined);
		if (r.chance(0.15)) {
			const targets = editable();
			const target = r.pick(targets);
			if (target) {
				const replacement = r.chance(0.4) ? null : { content: r.chance(0.5) ? `REDACTED ${words(r, 3)}` : [{ type: "text", text: words(r, 4) }] };
				sm.appendContextEdit(target.id, replacement);
			}
		}
		if (r.chance(0.1)) sm.appendCustomMessageEntry("note", r.chance(0.5) ? words(r, 10) : [{ type: "text", text: words(r, 6) }], true);
		if (r.chance(0.08)) sm.appendModelChange("fake", r.pick(["m1", "m2"]));
		if (r.chance(0.05)) sm.appendThinkingLevelChange(r.pick(["off", "low", "high"]));
		if (r.chance(0.08)) sm.appendLabelChange(r.pick(ids()), `L${turn}`);
		if (r.chance(0.1)) {
			// A compaction as pi writes it: at pi's own cut, or keeping nothing (an extension's).
			const prep = pi16.prepareCompaction(sm.getBranch(), { enabled: true, reserveTokens: 16384, keepRecentTokens: 200 + r.int(3000) });
			const retainNone = r.chance(0.25);
			if (prep || retainNone) {
				const details = { readFiles: [r.pick(paths)], modifiedFiles: [r.pick(paths)] };
				sm.appendCompaction(`## Goal\nC${turn} ${words(r, 20)}`, retainNone ? null : prep.firstKeptEntryId, prep?.tokensBefore ?? 1234, details, retainNone, usageOf(r, 100));
			}
		}
		if (r.chance(0.08)) {
			const branch = ids();
			const to = r.pick(branch);
			if (r.chance(0.5)) sm.branchWithSummary(to, `branch summary ${words(r, 10)}`, { readFiles: [r.pick(paths)], modifiedFiles: [] }, r.chance(0.3), usageOf(r, 100));
			else sm.branch(to);
		}
	}
	const text = readFileSync(sm.getSessionFile(), "utf8");
	writeFileSync(c.out, text);
	return { done: true, entries: sm.getEntries().length };
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
