// Drives pi's tree navigation, for the navigation conformance tests (tests/navigate_conformance.rs).
//
//   node pi-navigate.mjs ORACLE_DIR one FILE TARGET OPTIONS_JSON -> one navigation
//   node pi-navigate.mjs ORACLE_DIR batch JOBS_JSON              -> each job ([FILE, TARGET, OPTIONS]) in this process
//
// OPTIONS: {"summarize": bool, "summary": text, "label": text, "customInstructions": text,
// "replaceInstructions": bool, "modelText": text, "usage": object, "contextWindow": n, "reserveTokens": n};
// `summary` stands in for the summary a `session_before_tree` extension returns (taken only when
// `summarize` is true, marked fromExtension). `modelText` makes pi's own summarizer run
// (`generateBranchSummary`) against a fake model (streamFn) that answers that text with `usage`; the
// model has `contextWindow` and the settings' `branchSummary.reserveTokens` is `reserveTokens`.
//
// Prints {"copy", "oldLeafId", "commonAncestorId", "entriesToSummarize": [ids], "editorText", "newLeafId",
// "summaryEntryId", "cancelled", "requests": [{systemPrompt, text, options}]}; a library error: {"error": message}, exit 1. `batch` prints one array of those.
//
// PI_NAVIGATE_VERSION=1.6 runs pi 1.6.0's (the npm alias pi-coding-agent-1.6) instead of 0.82.1's.
//
// Runs pi's own `AgentSession.navigateTree` (dist/core/agent-session.js, which needs Node >= 22: the suite runs this on
// the oracle's Node 22) on a temporary copy of FILE opened with SessionManager.open (navigation appends to that copy,
// reported as `copy`). A model is assumed to exist; the default summarizer is never needed because the extension
// supplies the summary whenever one is wanted.
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

const [oracleDir, mode, ...rest] = process.argv.slice(2);
const pi16 = process.env.PI_NAVIGATE_VERSION === "1.6";
const packageDir = join(oracleDir, pi16 ? "node_modules/pi-coding-agent-1.6" : "node_modules/@earendil-works/pi-coding-agent");
const load = (path) => import(pathToFileURL(join(packageDir, path)).href);
const { SessionManager } = await load("dist/core/session-manager.js");
const { AgentSession } = await load("dist/core/agent-session.js");

// Anything the library logs must not end up in the JSON document on stdout.
console.log = (...args) => console.error(...args);

/**
 * pi's own `AgentSession.prototype.navigateTree`, run on the smallest host it needs: the session manager of a copy of
 * FILE, a model (assumed to exist), the agent's state, and an extension runner whose one handler is the
 * `session_before_tree` extension answering with the ready summary (if any). A full AgentSession is not built: its
 * constructor wants resource loaders, model runtimes and tools that navigation never touches.
 */
async function navigate(file, targetId, options = {}) {
	const copy = join(mkdtempSync(join(tmpdir(), "pi-navigate-")), basename(file));
	copyFileSync(file, copy);
	const sm = SessionManager.open(copy);
	const oldLeafId = sm.getLeafId();
	let preparation;
	let treeEvent;
	const requests = [];
	// The fake summarizing model: records what pi sends, answers `modelText`.
	const streamFunction = async (model, context, requestOptions) => {
		const { signal, sessionId, ...rest } = requestOptions ?? {};
		requests.push({ systemPrompt: context.systemPrompt, text: context.messages[0].content[0].text, options: rest });
		const message = {
			role: "assistant",
			content: [{ type: "text", text: options.modelText }],
			api: model.api,
			provider: model.provider,
			model: model.id,
			usage: options.usage,
			stopReason: "stop",
			timestamp: 0,
		};
		return { result: async () => message };
	};
	const host = {
		sessionManager: sm,
		model: { provider: "driver", id: "none", api: "fake", contextWindow: options.contextWindow },
		agent: { state: { messages: [] }, streamFunction },
		settingsManager: {
			getBranchSummarySettings: () => ({ reserveTokens: options.reserveTokens ?? 16384, skipPrompt: false }),
			getRetrySettings: () => ({ enabled: false, maxRetries: 0 }),
		},
		_summarizationRetryCallbacks: () => undefined,
		_extensionRunner: {
			hasHandlers: (type) => type === "session_before_tree",
			emit: async (event) => {
				if (event.type === "session_before_tree") {
					preparation = event.preparation;
					return options.summary !== undefined ? { summary: { summary: options.summary } } : undefined;
				}
				if (event.type === "session_tree") treeEvent = event;
				return undefined;
			},
		},
		_getSummarizationRequestAuth: async () => {
			if (options.modelText === undefined)
				throw new Error("driver: a summary is wanted but none was supplied (the driver has no model)");
			return {};
		},
		// pi 1.6 refreshes the agent's context and tools from the session after the move, and
		// wakes idle waiters: nothing of the session file, so no-ops here.
		_refreshFinalizedContext: () => {},
		_restoreToolsFromTranscript: () => {},
		_resolveIdleWaitIfIdle: () => {},
	};
	const outcome = await AgentSession.prototype.navigateTree.call(host, targetId, {
		summarize: options.summarize,
		label: options.label,
		customInstructions: options.customInstructions,
		replaceInstructions: options.replaceInstructions,
	});
	const result = { copy, oldLeafId, cancelled: outcome.cancelled, newLeafId: sm.getLeafId() ?? null };
	if (!preparation) return result;
	return {
		...result,
		commonAncestorId: preparation.commonAncestorId ?? null,
		entriesToSummarize: preparation.entriesToSummarize.map((e) => e.id),
		editorText: outcome.editorText ?? null,
		summaryEntryId: outcome.summaryEntry?.id ?? null,
		fromExtension: treeEvent?.fromExtension ?? null,
		requests,
	};
}

async function attempt(args) {
	try {
		return await navigate(...args);
	} catch (error) {
		return { error: error.message };
	}
}

if (mode === "batch") {
	const jobs = JSON.parse(readFileSync(rest[0], "utf8"));
	const results = [];
	for (const job of jobs) results.push(await attempt(job));
	process.stdout.write(`${JSON.stringify(results)}\n`);
} else if (mode === "one") {
	const [file, target, options] = rest;
	const result = await attempt([file, target, JSON.parse(options ?? "{}")]);
	process.stdout.write(`${JSON.stringify(result)}\n`);
	if ("error" in result) process.exitCode = 1;
} else {
	process.stderr.write(`usage: pi-navigate.mjs ORACLE_DIR one FILE TARGET OPTIONS_JSON | batch JOBS_JSON\n`);
	process.exitCode = 2;
}
