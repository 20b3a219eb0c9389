// Drives pi's own SessionManager forks, for the fork conformance tests (tests/fork_conformance/).
//
//   node pi-fork.mjs ORACLE_DIR branched FILE ENTRY OUT_DIR       -> createBranchedSession (pi's /fork, /clone)
//   node pi-fork.mjs ORACLE_DIR fork FILE ENTRY before|at OUT_DIR -> AgentSessionRuntime.fork on a persisted session
//   node pi-fork.mjs ORACLE_DIR forkFrom SOURCE CWD OUT_DIR [ID]  -> SessionManager.forkFrom (pi --fork)
//   node pi-fork.mjs ORACLE_DIR migrated FILE OUT_DIR             -> a copy of FILE in OUT_DIR, opened (so migrated) by pi
//   node pi-fork.mjs ORACLE_DIR batch JOBS_JSON                   -> each job (an argument array) in this process
//
// With PI_FORK_VERSION=1.6 in the environment, pi 1.6.0's code runs instead of 0.82.1's.
//
// Prints {"file", "written", "leafId", ...} on stdout; a library error: {"error": message}, exit 1. `batch` prints
// one array of those and exits 0.
//
// `branched` and `fork` open a temporary copy of FILE: `SessionManager.open` migrates a v1/v2 file and rewrites it in
// place. The copy is reported as `source` (pi names it as the new session's `parentSession`). ENTRY is an entry id,
// or `#N` for the N-th entry (0-based, file order) after pi opened the file: v1 entries get their ids from pi's
// migration, which nobody can know in advance.
//
// `fork` runs the steps of AgentSessionRuntime.fork (dist/core/agent-session-runtime.js) for a persisted session,
// with pi's own SessionManager calls: the runtime module itself cannot be loaded without the whole agent (its
// extension runner imports the TUI and undici, which need a newer Node). Those steps are:
//   getEntry(entryId) or "Invalid entry ID for forking"; "at": the entry itself; "before": the entry must be a user
//   message ("Invalid entry ID for forking"), the target is its parentId and the selected text its text; no target
//   (a root user message): SessionManager.create(cwd, sessionDir).newSession({parentSession: current file}), which
//   writes nothing; else SessionManager.open(current file, sessionDir).createBranchedSession(target).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

const [oracleDir, mode, ...rest] = process.argv.slice(2);
// PI_FORK_VERSION=1.6 runs pi 1.6.0's SessionManager (the npm alias in the oracle install).
const PACKAGE = process.env.PI_FORK_VERSION === "1.6" ? "pi-coding-agent-1.6" : "@earendil-works/pi-coding-agent";
const url = pathToFileURL(join(oracleDir, "node_modules", PACKAGE, "dist/core/session-manager.js"));
const { SessionManager } = await import(url.href);

// Anything the library logs must not end up in the JSON document on stdout.
console.log = (...args) => console.error(...args);

/** open() may migrate and rewrite its file: give it a copy (in `copyDir`, default a new temporary directory). */
function openCopy(file, outDir, copyDir = mkdtempSync(join(tmpdir(), "pi-fork-"))) {
	const copy = join(copyDir, basename(file));
	copyFileSync(file, copy);
	return { sm: SessionManager.open(copy, outDir), copy };
}

function entryId(sm, entry) {
	if (!entry.startsWith("#")) return entry;
	const found = sm.getEntries()[Number(entry.slice(1))];
	if (!found) throw new Error(`driver: no entry ${entry}`);
	return found.id;
}

/** AgentSessionRuntime's extractUserMessageText. */
function userMessageText(content) {
	if (typeof content === "string") return content;
	return content
		.filter((part) => part.type === "text" && typeof part.text === "string")
		.map((part) => part.text)
		.join("");
}

function done(sm, file, extra) {
	return {
		file: file ?? null,
		written: typeof file === "string" && existsSync(file),
		leafId: sm.getLeafId() ?? null,
		...extra,
	};
}

function run([command, ...args]) {
	if (command === "branched") {
		const [file, entry, outDir] = args;
		const { sm, copy } = openCopy(file, outDir);
		const newFile = sm.createBranchedSession(entryId(sm, entry));
		return done(sm, newFile, { source: copy });
	}
	if (command === "fork") {
		const [file, entry, position, outDir] = args;
		const { sm: current, copy } = openCopy(file, outDir);
		const id = entryId(current, entry);
		const selected = current.getEntry(id);
		if (!selected) throw new Error("Invalid entry ID for forking");
		let target;
		let selectedText;
		if (position === "at") {
			target = selected.id;
		} else if (position === "before") {
			if (selected.type !== "message" || selected.message.role !== "user") {
				throw new Error("Invalid entry ID for forking");
			}
			target = selected.parentId;
			selectedText = userMessageText(selected.message.content);
		} else {
			throw new Error(`driver: unknown position ${position}`);
		}
		const sessionFile = current.getSessionFile();
		const sessionDir = current.getSessionDir();
		if (!target) {
			const sm = SessionManager.create(current.getCwd(), sessionDir);
			sm.newSession({ parentSession: sessionFile });
			return done(sm, sm.getSessionFile(), { source: copy, entryId: id, selectedText });
		}
		const sm = SessionManager.open(sessionFile, sessionDir);
		const newFile = sm.createBranchedSession(target);
		if (!newFile) throw new Error("Failed to create forked session");
		return done(sm, newFile, { source: copy, entryId: id, selectedText });
	}
	if (command === "forkFrom") {
		const [source, cwd, outDir, id] = args;
		const sm = SessionManager.forkFrom(source, cwd, outDir, id === undefined ? undefined : { id });
		return done(sm, sm.getSessionFile());
	}
	if (command === "migrated") {
		const [file, outDir] = args;
		mkdirSync(outDir, { recursive: true });
		const { sm, copy } = openCopy(file, outDir, outDir);
		return done(sm, copy);
	}
	throw new Error(`driver: unknown mode ${command}`);
}

function attempt(args) {
	try {
		return run(args);
	} catch (error) {
		return { error: error.message };
	}
}

if (mode === "batch") {
	const jobs = JSON.parse(readFileSync(rest[0], "utf8"));
	process.stdout.write(`${JSON.stringify(jobs.map(attempt))}\n`);
} else {
	const result = attempt([mode, ...rest]);
	process.stdout.write(`${JSON.stringify(result)}\n`);
	if ("error" in result) process.exitCode = 1;
}
