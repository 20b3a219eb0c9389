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
const CORE = join(ORACLE_DIR, "node_modules/@earendil-works/pi-coding-agent/dist/core");

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
function recent() {
	const dir = sessionDir ? paths.normalizePath(sessionDir) : sm.getDefaultSessionDir(cwd);
	const filterCwd = sessionDir !== undefined && dir !== sm.getDefaultSessionDir(cwd);
	return findMostRecentSession(dir, filterCwd ? cwd : undefined);
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
	default:
		usage("command must be one of list, list-all, recent, continue, paths, dates, ids, bench");
}
