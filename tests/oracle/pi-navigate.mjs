// Drives pi's tree navigation, for the navigation conformance tests (tests/navigate_conformance.rs).
//
//   node pi-navigate.mjs ORACLE_DIR one FILE TARGET OPTIONS_JSON -> one navigation
//   node pi-navigate.mjs ORACLE_DIR batch JOBS_JSON              -> each job ([FILE, TARGET, OPTIONS]) in this process
//
// OPTIONS: {"summarize": bool, "summary": text, "label": text}; `summary` stands in for the summary a
// `session_before_tree` extension returns (taken only when `summarize` is true, marked fromExtension).
//
// Prints {"copy", "oldLeafId", "commonAncestorId", "entriesToSummarize": [ids], "editorText", "newLeafId",
// "summaryEntryId", "cancelled"}; a library error: {"error": message}, exit 1. `batch` prints one array of those.
//
// `AgentSession.navigateTree` (dist/core/agent-session.js) cannot be loaded on this Node (its module graph pulls in
// the TUI and undici), so this runs its steps with pi's own SessionManager, collectEntriesForBranchSummary and
// contentText, on a temporary copy of FILE opened with SessionManager.open (which appends to that copy, reported as
// `copy`). A model is assumed to exist; the default summarizer is never needed because the extension supplies the
// summary whenever one is wanted.
import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

const [oracleDir, mode, ...rest] = process.argv.slice(2);
const piDir = join(oracleDir, "node_modules/@earendil-works");
const load = (path) => import(pathToFileURL(join(piDir, path)).href);
const { SessionManager } = await load("pi-coding-agent/dist/core/session-manager.js");
const { collectEntriesForBranchSummary } = await load("pi-coding-agent/dist/core/compaction/branch-summarization.js");
const { contentText } = await load("pi-ai/dist/index.js");

// Anything the library logs must not end up in the JSON document on stdout.
console.log = (...args) => console.error(...args);

function navigate(file, targetId, options = {}) {
	const copy = join(mkdtempSync(join(tmpdir(), "pi-navigate-")), basename(file));
	copyFileSync(file, copy);
	const sm = SessionManager.open(copy);
	const result = (extra) => ({ copy, oldLeafId, ...extra });

	// navigateTree, step by step.
	const oldLeafId = sm.getLeafId();
	if (targetId === oldLeafId) {
		return result({ cancelled: false, newLeafId: sm.getLeafId() ?? null });
	}
	const targetEntry = sm.getEntry(targetId);
	if (!targetEntry) throw new Error(`Entry ${targetId} not found`);
	const { entries: entriesToSummarize, commonAncestorId } = collectEntriesForBranchSummary(sm, oldLeafId, targetId);
	let label = options.label;
	// The session_before_tree extension: answers with the ready summary (if any).
	let extensionSummary;
	let fromExtension = false;
	const hookResult = options.summary !== undefined ? { summary: { summary: options.summary } } : undefined;
	if (hookResult?.summary && options.summarize) {
		extensionSummary = hookResult.summary;
		fromExtension = true;
	}
	if (options.summarize && entriesToSummarize.length > 0 && !extensionSummary) {
		throw new Error("driver: a summary is wanted but none was supplied (the driver has no model)");
	}
	let summaryText;
	let summaryDetails;
	let summaryUsage;
	if (extensionSummary) {
		summaryText = extensionSummary.summary;
		summaryDetails = extensionSummary.details;
		summaryUsage = extensionSummary.usage;
	}
	let newLeafId;
	let editorText;
	if (targetEntry.type === "message" && targetEntry.message.role === "user") {
		newLeafId = targetEntry.parentId;
		editorText = contentText(targetEntry.message.content, "");
	} else if (targetEntry.type === "custom_message") {
		newLeafId = targetEntry.parentId;
		editorText = contentText(targetEntry.content, "");
	} else {
		newLeafId = targetId;
	}
	let summaryEntry;
	if (summaryText) {
		const summaryId = sm.branchWithSummary(newLeafId, summaryText, summaryDetails, fromExtension, summaryUsage);
		summaryEntry = sm.getEntry(summaryId);
		if (label) sm.appendLabelChange(summaryId, label);
	} else if (newLeafId === null) {
		sm.resetLeaf();
	} else {
		sm.branch(newLeafId);
	}
	if (label && !summaryText) sm.appendLabelChange(targetId, label);
	return result({
		commonAncestorId: commonAncestorId ?? null,
		entriesToSummarize: entriesToSummarize.map((e) => e.id),
		editorText: editorText ?? null,
		newLeafId: sm.getLeafId() ?? null,
		summaryEntryId: summaryEntry?.id ?? null,
		fromExtension: summaryText ? fromExtension : null,
		cancelled: false,
	});
}

function attempt(args) {
	try {
		return navigate(...args);
	} catch (error) {
		return { error: error.message };
	}
}

if (mode === "batch") {
	const jobs = JSON.parse(readFileSync(rest[0], "utf8"));
	process.stdout.write(`${JSON.stringify(jobs.map(attempt))}\n`);
} else if (mode === "one") {
	const [file, target, options] = rest;
	const result = attempt([file, target, JSON.parse(options ?? "{}")]);
	process.stdout.write(`${JSON.stringify(result)}\n`);
	if ("error" in result) process.exitCode = 1;
} else {
	process.stderr.write(`usage: pi-navigate.mjs ORACLE_DIR one FILE TARGET OPTIONS_JSON | batch JOBS_JSON\n`);
	process.exitCode = 2;
}
