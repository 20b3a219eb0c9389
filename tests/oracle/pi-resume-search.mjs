#!/usr/bin/env node
// pi-resume-search: what pi 0.82.1's /resume does when its search box holds QUERY over every
// project ("all" scope): `SessionManager.listAll()` (which reads every session file and builds
// each one's `allMessagesText`), then the selector's own `filterAndSortSessions(sessions,
// QUERY, "relevance")`. Prints how many sessions match and the first 20 paths, as JSON.
// Used by benches/store_index.rs as the counterpart of `pi-session search` (a process each).
//
//   node target/oracle/pi-resume-search.mjs QUERY
//
// pi reads HOME and PI_CODING_AGENT_DIR from the environment.

import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ORACLE_DIR = process.env.PI_ORACLE_DIR ?? HERE;
const PACKAGE = join(ORACLE_DIR, "node_modules", "@earendil-works/pi-coding-agent", "dist");
console.log = (...args) => console.error(...args);

const query = process.argv[2];
if (query === undefined) {
	process.stderr.write("pi-resume-search: usage: pi-resume-search.mjs QUERY\n");
	process.exit(2);
}
const { SessionManager } = await import(pathToFileURL(join(PACKAGE, "core/session-manager.js")).href);
const { filterAndSortSessions } = await import(
	pathToFileURL(join(PACKAGE, "modes/interactive/components/session-selector-search.js")).href
);
const sessions = await SessionManager.listAll();
const found = filterAndSortSessions(sessions, query, "relevance");
process.stdout.write(
	`${JSON.stringify({ sessions: sessions.length, matches: found.length, top: found.slice(0, 20).map((s) => s.path) })}\n`,
);
