#!/usr/bin/env node
// pi-listing: run pi's own listing code (SessionManager from @earendil-works/pi-coding-agent
// 0.82.1) on a directory and print what it returns, for the Rust conformance tests and the
// listing benchmark.
//
//   node target/oracle/pi-listing.mjs list --cwd CWD [--session-dir DIR]
//   node target/oracle/pi-listing.mjs list-all [--session-dir DIR]
//   node target/oracle/pi-listing.mjs recent --cwd CWD [--session-dir DIR]
//   node target/oracle/pi-listing.mjs continue --cwd CWD [--session-dir DIR]
//   node target/oracle/pi-listing.mjs paths --cwd CWD [--session-dir DIR]
//   node target/oracle/pi-listing.mjs dates TEXT...
//   node target/oracle/pi-listing.mjs ids ID...
//   node target/oracle/pi-listing.mjs bench list|list-all [--cwd CWD] [--session-dir DIR] [--runs N]
//   node target/oracle/pi-listing.mjs find-by-id ID --cwd CWD [--session-dir DIR]     (1.6 only)
//   node target/oracle/pi-listing.mjs settings --cwd CWD      (settings.json's sessionDir)
//   node target/oracle/pi-listing.mjs harness-list [--cwd CWD] --session-dir ROOT
//   node target/oracle/pi-listing.mjs search --cwd CWD [--session-dir DIR]  (queries on stdin)
//
// `--version 1.6` runs pi 1.6.0's code (the `pi-coding-agent-1.6` alias in the install) instead
// of 0.82.1's. `harness-list` is pi-agent-core's `JsonlSessionRepo.list` over the sessions root
// ROOT (whose rows are printed as they are, `createdAt` and all).
//
// `search` lists like `list`, then runs pi's /resume search (`filterAndSortSessions` of the
// session selector) once per stdin line, a JSON `{query, sort, nameFilter}`, printing for each
// the paths it keeps, in its order.
//
// `recent` is `findMostRecentSession` called the way `continueRecent` calls it (read-only);
// `continue` really calls `continueRecent` and reports the file it opened, which may migrate
// and rewrite that file. pi reads HOME and PI_CODING_AGENT_DIR from the environment.
//
// Output is one JSON document. Dates are `getTime()` numbers (null when invalid). Strings are
// made well-formed (a lone surrogate becomes U+FFFD): the Rust side keeps text in UTF-8 and does
// the same, a documented difference. The packages are loaded from the oracle install this
// script is copied into (`target/oracle`), or `$PI_ORACLE_DIR`.

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
// The suite runs this script from the oracle install (target/oracle), beside node_modules.
const ORACLE_DIR = process.env.PI_ORACLE_DIR ?? HERE;
const VERSION_AT = process.argv.indexOf("--version");
const VERSION = VERSION_AT > 0 ? process.argv.splice(VERSION_AT, 2)[1] : "0.82.1";
const PACKAGES = { "0.82.1": "@earendil-works/pi-coding-agent", "1.6": "pi-coding-agent-1.6" };
if (!PACKAGES[VERSION]) {
	process.stderr.write(`pi-listing: --version must be 0.82.1 or 1.6\n`);
	process.exit(2);
}
const CORE = join(ORACLE_DIR, "node_modules", PACKAGES[VERSION], "dist/core");

// Anything the library logs must not end up in our stdout document.
console.log = (...args) => console.error(...args);

function usage(message) {
	process.stderr.write(`pi-listing: ${message}\n`);
	process.exit(2);
}

function parseArgs(argv) {
	const options = { positional: [] };
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === "--cwd" || arg === "--session-dir" || arg === "--runs") {
			if (i + 1 >= argv.length) usage(`${arg} needs a value`);
			options[arg.slice(2)] = argv[++i];
		} else if (arg.startsWith("--")) {
			usage(`unknown option ${arg}`);
		} else {
			options.positional.push(arg);
		}
	}
	return options;
}

function wellFormed(value) {
	if (typeof value === "string") return value.toWellFormed();
	if (Array.isArray(value)) return value.map(wellFormed);
	if (value && typeof value === "object") {
		return Object.fromEntries(Object.entries(value).map(([k, v]) => [wellFormed(k), wellFormed(v)]));
	}
	return value;
}

function time(date) {
	const ms = date.getTime();
	return Number.isNaN(ms) ? null : ms;
}

function row(info) {
	return wellFormed({
		path: info.path,
		id: info.id,
		cwd: info.cwd,
		name: info.name,
		parentSessionPath: info.parentSessionPath,
		created: time(info.created),
		modified: time(info.modified),
		messageCount: info.messageCount,
		firstMessage: info.firstMessage,
		allMessagesText: info.allMessagesText,
	});
}

function print(doc) {
	process.stdout.write(`${JSON.stringify(doc)}\n`);
}

if (!existsSync(join(CORE, "session-manager.js"))) {
	process.stderr.write(`pi-listing: no oracle install at ${ORACLE_DIR} (the test suite installs it: see tests/oracle/README.md)\n`);
	process.exit(3);
}
const sm = await import(pathToFileURL(join(CORE, "session-manager.js")).href);
const paths = await import(pathToFileURL(join(CORE, "../utils/paths.js")).href);
const { SessionManager, findMostRecentSession } = sm;

const [command, ...rest] = process.argv.slice(2);
const options = parseArgs(rest);
const cwd = options.cwd ?? process.cwd();
const sessionDir = options["session-dir"];

// continueRecent's choice without opening the file: the same directory and filter rules.
// (getDefaultSessionDirPath is not exported; getDefaultSessionDir returns the same path but
// also creates the directory, which only matters in the throwaway HOME of a test.)
// (pi 1.6 compares the directories with pathsEqual, 0.82.1 with !==, as their own code does.)
function recent() {
	const dir = sessionDir ? paths.normalizePath(sessionDir) : sm.getDefaultSessionDir(cwd);
	const filterCwd =
		sessionDir !== undefined &&
		(VERSION === "1.6" ? !paths.pathsEqual(dir, sm.getDefaultSessionDir(cwd)) : dir !== sm.getDefaultSessionDir(cwd));
	return findMostRecentSession(dir, filterCwd ? cwd : undefined);
}

async function harnessList() {
	const agentCore = join(ORACLE_DIR, "node_modules/@earendil-works/pi-agent-core/dist/harness");
	const { JsonlSessionRepo } = await import(pathToFileURL(join(agentCore, "session/jsonl-repo.js")).href);
	const { NodeExecutionEnv } = await import(pathToFileURL(join(agentCore, "env/nodejs.js")).href);
	const fs = new NodeExecutionEnv({ cwd: process.cwd() });
	const repo = new JsonlSessionRepo({ fs, sessionsRoot: sessionDir });
	try {
		return { sessions: wellFormed(await repo.list(options.cwd ? { cwd: options.cwd } : {})) };
	} catch (error) {
		return { error: String(error?.message ?? error) };
	}
}

switch (command) {
	case "list":
		print({ sessions: (await SessionManager.list(cwd, sessionDir)).map(row) });
		break;
	case "list-all":
		print({ sessions: (await SessionManager.listAll(sessionDir)).map(row) });
		break;
	case "recent":
		print({ recent: recent() });
		break;
	case "continue": {
		const manager = SessionManager.continueRecent(cwd, sessionDir);
		print({ file: manager.getSessionFile() ?? null });
		break;
	}
	case "paths":
		print({
			resolved: paths.resolvePath(cwd),
			defaultSessionDir: sm.getDefaultSessionDir(cwd),
		});
		break;
	case "dates":
		print({ dates: options.positional.map((text) => {
			const ms = Date.parse(text);
			return Number.isNaN(ms) ? null : ms;
		}) });
		break;
	case "ids":
		print({ errors: options.positional.map((id) => {
			try {
				sm.assertValidSessionId(id);
				return null;
			} catch (error) {
				return error.message;
			}
		}) });
		break;
	case "bench": {
		const [what] = options.positional;
		const runs = Number(options.runs ?? 3);
		const call = what === "list-all" ? () => SessionManager.listAll(sessionDir) : () => SessionManager.list(cwd, sessionDir);
		const times = [];
		let count = 0;
		for (let i = 0; i < runs; i++) {
			const start = performance.now();
			count = (await call()).length;
			times.push(performance.now() - start);
		}
		print({ sessions: count, millis: times });
		break;
	}
	case "search": {
		const search = await import(
			pathToFileURL(join(CORE, "../modes/interactive/components/session-selector-search.js")).href
		);
		const sessions = await SessionManager.list(cwd, sessionDir);
		const { readFileSync } = await import("node:fs");
		const results = readFileSync(0, "utf8")
			.split("\n")
			.filter((line) => line.trim())
			.map((line) => {
				const { query, sort, nameFilter } = JSON.parse(line);
				return search.filterAndSortSessions(sessions, query, sort, nameFilter).map((s) => s.path);
			});
		print({ results });
		break;
	}
	case "find-by-id":
		print({ path: SessionManager.findById(cwd, options.positional[0], sessionDir) ?? null });
		break;
	case "settings": {
		const { SettingsManager } = await import(pathToFileURL(join(CORE, "settings-manager.js")).href);
		try {
			const settings = SettingsManager.create(cwd);
			print({ sessionDir: settings.getSessionDir() ?? null });
		} catch (error) {
			print({ error: String(error?.message ?? error) });
		}
		break;
	}
	case "harness-list":
		print(await harnessList());
		break;
	default:
		usage("command must be one of list, list-all, recent, continue, paths, dates, ids, bench, find-by-id, settings, harness-list");
}
